"""What the simulated players of the benchmarks share: the group chats they play in and their weighted pick
among the turn buttons they are shown."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tests.e2e.fake_telegram import FakeChat, FakeUser

MIX = {"nomus": 4.0, "paso": 10.0, "env2": 2.0, "env5": 1.0, "quiero": 3.0, "noquiero": 4.0, "sube2": 1.0}
"""The weights of the turn buttons every benchmark's players press: mostly paso, some envidos and answers.
Each adds its own weights of mus and órdago."""


@dataclass
class Group:
    """A group chat of the load and the people who play in it."""

    chat: FakeChat
    users: dict[int, FakeUser]
    """Seat -> person."""
    rng: random.Random
    tables: list[str] = field(default_factory=list)
    """The tables opened in it, oldest first."""


def weighted(rng: random.Random, codes: Iterable[str], weights: Mapping[str, float]) -> str | None:
    """One of the action ``codes`` that ``weights`` names, drawn by its weight; ``None`` if it names none."""
    options = [c for c in codes if c in weights]
    if not options:
        return None
    return rng.choices(options, [weights[c] for c in options])[0]
