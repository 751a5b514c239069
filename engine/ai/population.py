"""Opponent styles for the arena and the tests: the kinds of players a real group has.

The machine players are measured against opponents they were not tuned on. Each style is a simple
rule-based player built on the baseline's hand reading (:class:`~engine.ai.baseline.BaselinePlayer`: its
mus, discards and señas, and its strength estimate per lance), with its own way of betting and answering:

- ``tight``: accepts an órdago only with a near-perfect hand and a big bet only with a strong one;
- ``loose``: always says quiero, to any bet and to any órdago;
- ``bluffer``: also bets, raises and now and then goes all in with poor hands;
- ``passive``: rarely bets, never goes all in, answers cautiously;
- ``mixed``: a pair of a tight caller (seats 0 and 1) and a loose one (seats 2 and 3).

These players are for the arena (``python -m engine.arena --population``) and the tests only: the bot
never seats them (they are not in :data:`~engine.ai.policy.POLICIES`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from engine.actions import Action, ActionKind
from engine.ai.baseline import BaselinePlayer, _envido
from engine.ai.policy import Policy
from engine.senas import Sena
from engine.views import SeatView, SenaView


@dataclass(frozen=True, slots=True)
class Style:
    """How a :class:`StylePlayer` bets and answers (strengths are the baseline's, about the side's chance
    to win the lance: a hand's percentile squared, plus señas)."""

    name: str
    call_ordago: float = 0.8
    """Accepts an órdago above this strength (-1: always)."""
    call_big: float = 0.0
    """Extra strength it needs to accept a bet of :data:`BIG` stones or more (-1: always accepts)."""
    call_shift: float = 0.0
    """Shift of the baseline's threshold for accepting a bet (negative: calls more)."""
    always_call: bool = False
    """Says quiero to anything (never refuses, never raises)."""
    open_at: float = 0.55
    """Opens an envido above this strength."""
    raise_at: float = 0.9
    """Raises above this strength (above 1: never)."""
    ordago_rate: float = 0.3
    """Chance of opening with an órdago with a very strong hand (when the score invites it)."""
    bluff: float = 0.05
    """Chance of betting with a poor hand (below ``bluff_below``)."""
    bluff_below: float = 0.2
    bluff_ordago: float = 0.0
    """Chance of an órdago with a poor hand."""
    bluff_raise: float = 0.0
    """Chance of raising a bet with a poor hand."""


#: A bet of this many stones or more is big for the callers.
BIG = 5


class StylePlayer(BaselinePlayer):
    """A rule-based player of one :class:`Style` (the baseline's mus, discards and señas)."""

    def __init__(self, style: Style) -> None:
        """A player of ``style``."""
        super().__init__()
        self.style = style
        self.name = style.name

    def _bet(self, view: SeatView, rng: random.Random) -> Action:
        betting = view.betting
        assert betting is not None
        style = self.style
        s = self._strength(view, betting.lance) + rng.uniform(-0.05, 0.05)
        ours, theirs = view.scores[view.team], view.scores[1 - view.team]
        legal = view.legal
        kinds = {a.kind for a in legal}
        if ActionKind.PASO in kinds:  # opening
            poor = s < style.bluff_below
            if poor and style.bluff_ordago and rng.random() < style.bluff_ordago:
                return Action(ActionKind.ORDAGO)
            invited = theirs >= view.target - 10 or ours <= view.target - 25
            if s > 0.93 and invited and style.ordago_rate and rng.random() < style.ordago_rate:
                return Action(ActionKind.ORDAGO)
            if s > style.open_at:
                amount = 2 if s < 0.75 else (3 if s < 0.85 else 5)
                return _envido(legal, ActionKind.ENVIDO, amount)
            if poor and rng.random() < style.bluff:
                return _envido(legal, ActionKind.ENVIDO, rng.choice((2, 2, 3, 5)))
            return Action(ActionKind.PASO)
        if style.always_call:
            return Action(ActionKind.QUIERO)
        if betting.ordago:
            desperate = theirs >= view.target - 5 and ours < view.target - 15
            call = s > style.call_ordago or (desperate and s > max(0.5, style.call_ordago - 0.3))
            return Action(ActionKind.QUIERO) if call else Action(ActionKind.NO_QUIERO)
        bluff_raise = s < style.bluff_below and rng.random() < style.bluff_raise
        if ActionKind.SUBE in kinds and betting.proposal < 10 and (s > style.raise_at or bluff_raise):
            return _envido(legal, ActionKind.SUBE, 2 if betting.proposal < 8 else 5)
        threshold = 0.45 + min(betting.proposal, 20) / 60 + style.call_shift
        if betting.proposal >= BIG:
            threshold += style.call_big
        return Action(ActionKind.QUIERO) if s > threshold else Action(ActionKind.NO_QUIERO)


class MixedPair:
    """Two styles in one pair: ``first`` plays seats 0 and 1, ``second`` seats 2 and 3 (so each side of a
    mirrored arena has one of each)."""

    def __init__(self, name: str, first: Policy, second: Policy) -> None:
        """A pair of ``first`` and ``second``."""
        self.name = name
        self.first = first
        self.second = second

    def _of(self, view: SeatView) -> Policy:
        return self.first if view.seat < 2 else self.second

    def decide(self, view: SeatView, rng: random.Random) -> Action:
        """The decision of the seat's own style."""
        return self._of(view).decide(view, rng)

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        """The seña of the seat's own style."""
        return self._of(view).choose_sena(view, rng)

    def wants_catch(self, view: SeatView, sena: SenaView, rng: random.Random) -> bool:
        """Whether the seat's own style watches for the seña."""
        return self._of(view).wants_catch(view, sena, rng)


#: The styles by name.
STYLE_DEFS: dict[str, Style] = {
    "tight": Style("tight", call_ordago=0.94, call_big=0.15, raise_at=0.95),
    "loose": Style("loose", always_call=True),
    "bluffer": Style(
        "bluffer", bluff=0.35, bluff_below=0.35, bluff_ordago=0.03, bluff_raise=0.1, ordago_rate=0.4
    ),
    "passive": Style(
        "passive", open_at=0.85, raise_at=1.1, ordago_rate=0.0, bluff=0.0, call_shift=0.05, call_ordago=0.88
    ),
}


def _style(name: str) -> Callable[[], Policy]:
    def make() -> Policy:
        return StylePlayer(STYLE_DEFS[name])

    make.__doc__ = f"A {name} player."
    return make


def _mixed() -> Policy:
    return MixedPair("mixed", StylePlayer(STYLE_DEFS["tight"]), StylePlayer(STYLE_DEFS["loose"]))


#: Every opponent style by name, in the order of the population table.
STYLES: dict[str, Callable[[], Policy]] = {
    "tight": _style("tight"),
    "loose": _style("loose"),
    "bluffer": _style("bluffer"),
    "passive": _style("passive"),
    "mixed": _mixed,
}


__all__ = ["BIG", "STYLES", "STYLE_DEFS", "MixedPair", "Style", "StylePlayer"]
