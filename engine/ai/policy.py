"""The machine-player interface and a registry of players by name."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from engine.actions import Action
from engine.hand_types import Phase
from engine.senas import Sena, true_senas
from engine.views import SeatView, SenaView


class Policy(Protocol):
    """A machine player. It sees only a :class:`~engine.views.SeatView`; its randomness is injected."""

    name: str

    def decide(self, view: SeatView, rng: random.Random) -> Action:
        """One of ``view.legal``, for a seat that must act."""
        ...

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        """A true seña to make now, or ``None``."""
        ...

    def wants_catch(self, view: SeatView, sena: SenaView, rng: random.Random) -> bool:
        """Whether to try to catch a rival's seña that was just made."""
        ...


class RandomPlayer:
    """Uniformly random legal play: a floor to measure other players against, and a fuzzer."""

    name = "random"

    def decide(self, view: SeatView, rng: random.Random) -> Action:
        """Any legal action, uniformly (bet amounts collapse to a few so that bets stay plausible)."""
        if not view.legal:
            raise ValueError("decide() needs a view of a seat that must act")
        return rng.choice(view.legal)

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        """Sometimes a random true seña (never once the hand is over)."""
        if not view.senas_enabled or view.senas_left == 0 or len(view.cards) != 4 or rng.random() > 0.1:
            return None
        if view.phase in (Phase.COUNT, Phase.OVER):
            return None
        options = true_senas(view.cards)
        return rng.choice(options) if options else None

    def wants_catch(self, view: SeatView, sena: SenaView, rng: random.Random) -> bool:
        """Half the time."""
        return rng.random() < 0.5


def _baseline() -> Policy:
    from engine.ai.baseline import BaselinePlayer

    return BaselinePlayer()


def _level(name: str) -> Callable[[], Policy]:
    def make() -> Policy:
        from engine.ai.strong import StrongPlayer

        return StrongPlayer(name)

    make.__doc__ = f"The strong player at level {name!r}."
    return make


POLICIES: dict[str, Callable[[], Policy]] = {
    "random": RandomPlayer,
    "baseline": _baseline,
    "easy": _level("easy"),
    "normal": _level("normal"),
    "hard": _level("hard"),
}
"""Every machine player by name."""


def make_policy(name: str) -> Policy:
    """A machine player by name; raise ``KeyError`` listing the known names."""
    try:
        return POLICIES[name]()
    except KeyError:
        raise KeyError(f"unknown player {name!r}; known: {', '.join(sorted(POLICIES))}") from None
