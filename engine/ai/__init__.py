"""Machine players: the :class:`Policy` interface, a random player and the baseline player."""

from engine.ai.baseline import BaselinePlayer
from engine.ai.policy import POLICIES, Policy, RandomPlayer, make_policy

__all__ = ["POLICIES", "BaselinePlayer", "Policy", "RandomPlayer", "make_policy"]
