"""Machine players: the :class:`Policy` interface, a random player, the baseline and the strong player."""

from engine.ai.baseline import BaselinePlayer
from engine.ai.policy import POLICIES, Policy, RandomPlayer, make_policy
from engine.ai.strong import LEVELS, Level, StrongPlayer

__all__ = [
    "LEVELS",
    "POLICIES",
    "BaselinePlayer",
    "Level",
    "Policy",
    "RandomPlayer",
    "StrongPlayer",
    "make_policy",
]
