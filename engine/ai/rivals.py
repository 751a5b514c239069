"""How each other seat answers a bet or an órdago, learned from what it did earlier in the match.

A typical player accepts a stake when its hand's percentile in the lance is above a threshold that grows
with the stake (:func:`accept_threshold`). Real tables also have *tight callers* (big bets and órdagos only
with near-perfect hands), *loose callers* (quiero to anything) and everything between, so the model is a
mixture of caller types, each a shift of that threshold (one shift for small bets, one for big bets and
órdagos). Each seat starts from :data:`PRIOR`; every public answer of the earlier hands of the match whose
hand was then shown (:attr:`engine.views.SeatView.answers`) updates that seat's weights by Bayes' rule.
The answer model used for a seat is the mixture under its weights: a seat seen refusing good hands stops
being paid by órdagos that only beat typical callers, and a seat seen accepting poor ones is bet into.

Only public information is read: the answers, and the hands shown at the end of those hands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.ai.arrays import INDEX, N_CODES, PCT, Floats, Ints
from engine.ai.tables import LANCE_INDEX
from engine.views import PublicAnswer, SeatView

#: A stake of this many stones or more (or an órdago) is a big bet for the caller types.
BIG_STAKE = 5
#: A side this close to the target, against one at least :data:`PRESSED_FAR` short of it, presses the other:
#: its órdagos are accepted with weaker hands (by :data:`PRESSED_SHIFT` percentile points).
PRESSED_NEAR = 5
PRESSED_FAR = 15
PRESSED_SHIFT = 0.15


@dataclass(frozen=True, slots=True)
class CallerType:
    """A way of answering: the typical threshold shifted by ``small`` (bets below :data:`BIG_STAKE`) and
    ``big`` (big bets and órdagos) percentile points; a shift of -1 accepts everything."""

    name: str
    small: float
    big: float


#: The caller types of the mixture.
TYPES: tuple[CallerType, ...] = (
    CallerType("loose", -1.0, -1.0),
    CallerType("easy", -0.15, -0.15),
    CallerType("typical", 0.0, 0.0),
    CallerType("tight", 0.0, 0.07),
    CallerType("rock", 0.05, 0.1),
)
#: The weight of each type before a seat has shown how it answers.
PRIOR: tuple[float, ...] = (0.06, 0.12, 0.5, 0.2, 0.12)
# Mistakes and bluff-catching: no type accepts or refuses with certainty.
_FLOOR = 0.02
_WIDTH = 0.05


def accept_threshold(bet: int) -> float:
    """The hand percentile above which a typical player accepts a bet of ``bet`` stones (0 = órdago)."""
    if bet <= 0:
        return 0.89
    return math.sqrt(0.45 + min(bet, 20) / 60)


def _sigmoid(x: Floats) -> Floats:
    result: Floats = 1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0)))
    return result


@lru_cache(maxsize=1024)
def type_table(
    kind: int, lance_index: int, bet: int, committed: bool = False, pressed: bool = False
) -> Floats:
    """Per code position, how likely a caller of type ``TYPES[kind]`` accepts ``bet`` (0: an órdago) in a
    lance; ``committed``: its side proposed the bet now raised (it accepts a little more readily);
    ``pressed``: the proposing side is about to win the game and its own is far from it (an órdago is then
    accepted much more readily: refusing loses the game slowly anyway)."""
    caller = TYPES[kind]
    shift = caller.big if bet <= 0 or bet >= BIG_STAKE else caller.small
    t = accept_threshold(bet) + shift - (0.04 if committed else 0.0)
    if pressed and bet <= 0:
        t -= PRESSED_SHIFT
    table: Floats = _FLOOR + (1.0 - 2 * _FLOOR) * _sigmoid((PCT[lance_index] - t) / _WIDTH)
    table.flags.writeable = False
    return table


_STAKES = 21  # stakes 0 (órdago) to 20 (the thresholds are flat above)


@lru_cache(maxsize=1)
def _log_answers() -> tuple[Floats, Floats]:
    """log P(accept) and log P(refuse) for every type, lance, stake and code position, flattened in the
    order (lance, stake, position) per type: shape ``(types, 5 * 21 * codes)``."""
    accept = np.array(
        [
            [[type_table(kind, li, stake) for stake in range(_STAKES)] for li in range(5)]
            for kind in range(len(TYPES))
        ]
    ).reshape(len(TYPES), -1)
    return np.log(accept), np.log1p(-accept)


_LOG_PRIOR: Floats = np.log(np.array(PRIOR))
_SEATS: Ints = np.arange(4)


def _posteriors(answers: tuple[PublicAnswer, ...]) -> dict[int, tuple[float, ...]]:
    """Per seat, the type weights after its answers whose hands were shown (Bayes' rule over
    :data:`TYPES`, from :data:`PRIOR`); seats that showed nothing keep the prior."""
    rows = tuple(
        (a.seat, LANCE_INDEX[a.lance] * _STAKES + min(a.stake, _STAKES - 1), a.shown_code, a.accepted)
        for a in answers
        if a.shown_code >= 0
    )
    if not rows:
        return _PRIORS
    return _weigh(rows)


_PRIORS: dict[int, tuple[float, ...]] = dict.fromkeys(range(4), PRIOR)


@lru_cache(maxsize=4096)
def _weigh(rows: tuple[tuple[int, int, int, bool], ...]) -> dict[int, tuple[float, ...]]:
    """:func:`_posteriors` of ``(seat, lance and stake cell, shown code, accepted)`` rows (cached: every
    decision of a hand reads the same record). Callers must not change the result."""
    seats, bases, codes, accepted = zip(*rows, strict=True)
    shown = np.array(codes, dtype=np.int64)
    # a code that is no four-card hand (a damaged save) teaches nothing
    positions = np.where(shown < len(INDEX), INDEX[np.minimum(shown, len(INDEX) - 1)], -1)
    cells = np.array(bases, dtype=np.int64) * N_CODES + np.maximum(positions, 0)
    log_accept, log_refuse = _log_answers()
    log = np.where(np.array(accepted, dtype=bool), log_accept[:, cells], log_refuse[:, cells])
    owner = (np.array(seats, dtype=np.int64)[:, None] == _SEATS) & (positions >= 0)[:, None]
    log = _LOG_PRIOR[:, None] + log @ owner  # (types, seats)
    weights = np.exp(log - log.max(axis=0))
    weights /= weights.sum(axis=0)
    seen = owner.any(axis=0).tolist()
    return {seat: tuple(weights[:, seat].tolist()) if seen[seat] else PRIOR for seat in range(4)}


@lru_cache(maxsize=512)
def _stack(lance_index: int, bet: int, committed: bool, pressed: bool) -> Floats:
    """Every type's table for one stake, stacked: shape ``(types, codes)``."""
    stack: Floats = np.stack(
        [type_table(kind, lance_index, bet, committed, pressed) for kind in range(len(TYPES))]
    )
    stack.flags.writeable = False
    return stack


@lru_cache(maxsize=64)  # up to 5 x 13 KB each: the few stake sets of openings and answers are hot
def _stacks(lance_index: int, bets: tuple[int, ...], committed: bool, pressed: bool) -> Floats:
    """:func:`_stack` for several stakes: shape ``(stakes, types, codes)``."""
    stacks: Floats = np.stack([_stack(lance_index, bet, committed, pressed) for bet in bets])
    stacks.flags.writeable = False
    return stacks


class Callers:
    """The answer model of every other seat, as one seat sees it (built from its view only)."""

    def __init__(self, view: SeatView, *, learn: bool = True) -> None:
        """Each seat's type weights: the prior, updated by its shown answers when ``learn``."""
        self.weights: dict[int, tuple[float, ...]] = _posteriors(view.answers) if learn else _PRIORS
        self._weights = {seat: np.array(w) for seat, w in self.weights.items()}
        needed = [view.target - view.scores[0], view.target - view.scores[1]]
        self.pressed = {
            seat: needed[1 - seat % 2] <= PRESSED_NEAR and needed[seat % 2] >= PRESSED_FAR
            for seat in range(4)
        }
        """Per seat: whether the other side presses it (:data:`PRESSED_NEAR`)."""

    def acceptance(self, seat: int, lance_index: int, bet: int, committed: bool = False) -> Floats:
        """Per code position, how likely ``seat`` accepts ``bet`` stones (0: an órdago) in a lance."""
        result: Floats = self._weights[seat] @ _stack(
            lance_index, min(bet, 20), committed, self.pressed[seat]
        )
        return result

    def acceptances(self, seat: int, lance_index: int, bets: list[int], committed: bool = False) -> Floats:
        """:meth:`acceptance` for several stakes at once: shape ``(len(bets), codes)``."""
        stakes = tuple(min(b, 20) for b in bets)
        result: Floats = self._weights[seat] @ _stacks(lance_index, stakes, committed, self.pressed[seat])
        return result

    def type_weight(self, seat: int, name: str) -> float:
        """The weight of the caller type called ``name`` for ``seat``."""
        return self.weights[seat][[t.name for t in TYPES].index(name)]


__all__ = ["BIG_STAKE", "PRIOR", "TYPES", "CallerType", "Callers", "accept_threshold", "type_table"]
