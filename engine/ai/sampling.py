"""Hidden hands consistent with what one seat sees, sampled and weighted.

A :class:`Beliefs` is built from a :class:`~engine.views.SeatView` only. It knows:

- the *unseen* cards, per effective rank: the deck minus this seat's cards (and minus its own discards while
  no reshuffle can have brought them back);
- hard constraints per other seat: the public pares/juego declarations, and the señas this seat knows (the
  partner's, and the rivals' it caught), each as a mask over the 330 hand codes;
- soft evidence: how each other seat spoke (cut the mus, said mus, passed, bet, accepted, refused, raised,
  órdago). Each word has a likelihood given that seat's hand, a smooth threshold on the hand's percentile
  in the lance (a seat that bets grande is likely strong there), with a floor for bluffs and mistakes; an
  answer is read with that seat's own answer model (:class:`~engine.ai.rivals.Callers`).

:meth:`Beliefs.draw` samples the three hidden hands as code positions (only ranks matter to the lances),
vectorized: each seat's hand from its exact distribution given the unseen cards, its constraints and its
words (so no sample is wasted on a contradiction), the three independently; each joint sample then carries
the exact correction for the cards the three hands cannot share (zero when they would need more cards of a
rank than are unseen). Random numbers come from a numpy generator seeded from the injected
``random.Random``: the same view and seed draw the same samples.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

import numpy as np

from engine.actions import ActionKind
from engine.ai.arrays import CODE, COUNTS, INDEX, KEYS, PCT, Bools, Floats, Ints, hand_prior
from engine.ai.rivals import Callers, accept_threshold
from engine.ai.tables import LANCE_INDEX, P5, RANK_CARDS, SENA_CODES
from engine.cards import CARD_RANK
from engine.evaluation import Lance
from engine.hand_types import LANCE_OF_PHASE, Phase
from engine.match import BIG_BET, is_big_bet
from engine.senas import Sena
from engine.views import SeatView

#: A sample: the hand code of each seat 0..3 (this seat's own code included).
Codes = tuple[int, int, int, int]

_HAS_PARES: Bools = KEYS[:, 2] > 0
_HAS_JUEGO: Bools = KEYS[:, 4] >= 31
_SENA_MASK: dict[Sena, Bools] = {sena: np.isin(CODE, sorted(codes)) for sena, codes in SENA_CODES.items()}
_INITIAL_DECK = 24


def _log_share() -> Floats:
    """log(C(u - a, k) / C(u, k)), flat at ``u * 45 + a * 5 + k`` (u unseen cards of a rank, a of them
    already in other hands, k more wanted); ``-inf`` where the cards are not there."""
    table = np.full((9, 9, 5), -np.inf)
    for u in range(9):
        for a in range(9):
            for k in range(5):
                if a + k <= u:
                    table[u, a, k] = math.log(math.comb(u - a, k) / math.comb(u, k))
    return table.ravel()


_LOG_SHARE: Floats = _log_share()
_ONES8: Floats = np.ones(8)
_ROW_OFFSETS: Floats = np.arange(3.0)[:, None]
_ROW_STARTS: Ints = np.arange(3)[:, None] * len(CODE)
_COUNTS5: Ints = COUNTS * 5


def sigmoid(x: float) -> float:
    """The logistic function, clamped far out (no overflow)."""
    if x < -30:
        return 0.0
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def _sig(x: Floats) -> Floats:
    result: Floats = 1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0)))
    return result


def open_threshold(bet: int) -> float:
    """The hand percentile above which a typical player opens with a bet of ``bet`` stones (0 = órdago)."""
    if bet <= 0:
        return 0.92
    return min(0.95, 0.74 + 0.2 * math.log2(max(bet, 2) / 2))


_LIKELIHOODS: dict[tuple[int, ActionKind, int], Floats] = {}


def _likelihood(lance_index: int, kind: ActionKind, bet: int) -> Floats:
    """Per code position, the likelihood of an opening word or a raise.

    ``bet`` is the envido's amount for an opening bet, -1 for an opening órdago, 0 otherwise.
    """
    key = (lance_index, kind, bet)
    table = _LIKELIHOODS.get(key)
    if table is not None:
        return table
    pct = PCT[lance_index]
    if kind is ActionKind.PASO:
        t = open_threshold(2)
        table = 0.9 - 0.85 * _sig((pct - t) / 0.05)
    elif kind is ActionKind.ENVIDO or (kind is ActionKind.ORDAGO and bet < 0):
        t = open_threshold(bet if kind is ActionKind.ENVIDO else 0)
        table = 0.06 + 0.9 * _sig((pct - t) / 0.04)
    else:  # a raise, or an órdago answering a bet
        t = 0.93 if kind is ActionKind.ORDAGO else 0.9
        table = 0.06 + 0.9 * _sig((pct - t) / 0.04)
    table.flags.writeable = False
    _LIKELIHOODS[key] = table
    return table


_CUT_SCORE = PCT[:4].max(axis=0)
_CUT: Floats = 0.15 + 0.85 * _sig((_CUT_SCORE - 0.9) / 0.04)
_MUS: Floats = 1.0 - 0.5 * _sig((_CUT_SCORE - 0.9) / 0.04)


def unseen_ranks(view: SeatView) -> list[int]:
    """Cards per effective rank that this seat has not seen (its hand and, while they stay out, discards)."""
    counts = list(RANK_CARDS)
    for card in view.cards:
        counts[CARD_RANK[card]] -= 1
    # Replacements dealt so far (completed rounds only) tell whether the deck ever ran out.
    drawn = 0
    pending = 0
    for action in view.actions:
        if action.kind is ActionKind.DISCARD:
            pending += action.count
        elif action.phase is Phase.MUS and pending:
            drawn += pending
            pending = 0
    if view.phase is not Phase.DISCARD:
        drawn += pending
    if drawn <= _INITIAL_DECK and view.deck_size == _INITIAL_DECK - drawn:
        for action in view.actions:
            if action.seat == view.seat and action.kind is ActionKind.DISCARD:
                for card in action.cards:
                    counts[CARD_RANK[card]] -= 1
    return [max(0, n) for n in counts]


class Beliefs:
    """What one seat may infer about the other three hands; sample them with :meth:`draw`."""

    def __init__(self, view: SeatView, *, evidence: bool = True, callers: Callers | None = None) -> None:
        """Read the constraints (and, if ``evidence``, the likelihood of every word spoken) from ``view``.

        ``callers`` reads the answers (by default each seat's answer model learned from the view).
        """
        self.seat = view.seat
        self.own = -1
        if len(view.cards) == 4:
            self.own = int(INDEX[sum(P5[CARD_RANK[c]] for c in view.cards)])
        self.unseen = unseen_ranks(view)
        self.allowed: dict[int, Floats] = {}
        for seat in range(4):
            if seat == view.seat:
                continue
            allowed = self._constraints(view, seat)
            if allowed is not None:
                self.allowed[seat] = allowed.astype(np.float64)
        self.erratic = erratic_rivals(view)
        """Whether the rivals bet like no sensible player (their words then say nothing of their cards)."""
        self.callers = callers if callers is not None else Callers(view)
        terms = _evidence(view, self.callers) if evidence else ()
        self.terms: list[tuple[int, Floats]] = [
            (seat, table) for seat, table in terms if not (self.erratic and seat % 2 != view.team)
        ]
        self.others = tuple(s for s in range(4) if s != view.seat)
        self._unseen_rows: Ints = np.array(self.unseen, dtype=np.int64) * 45

    @staticmethod
    def _constraints(view: SeatView, seat: int) -> Bools | None:
        allowed: Bools | None = None
        if view.pares_declared is not None:
            allowed = _HAS_PARES if view.pares_declared[seat] else ~_HAS_PARES
        if view.juego_declared is not None:
            juego = _HAS_JUEGO if view.juego_declared[seat] else ~_HAS_JUEGO
            allowed = juego if allowed is None else allowed & juego
        for sena in view.senas:
            if sena.seat != seat or sena.sena is None:
                continue
            narrowed = _SENA_MASK[sena.sena] if allowed is None else allowed & _SENA_MASK[sena.sena]
            if narrowed.any():  # a seña that contradicts the declarations predates a discard: ignore it
                allowed = narrowed
        return allowed

    def distribution(self, seat: int) -> Floats:
        """Per code position, the (unnormalised) chance of ``seat``'s hand on its own: the ways to draw it
        from the unseen cards, its constraints and the likelihood of its words."""
        return self._distribution(seat, hand_prior(tuple(self.unseen)))

    def _distribution(self, seat: int, prior: Floats) -> Floats:
        weights = prior
        allowed = self.allowed.get(seat)
        if allowed is not None:
            weights = weights * allowed
        for term_seat, table in self.terms:
            if term_seat == seat:
                weights = weights * table
        if not weights.any():  # contradictory evidence: the constraints alone, else the cards alone
            weights = prior * allowed if allowed is not None and (prior * allowed).any() else prior
        return weights

    def draw(self, rng: random.Random, n: int) -> tuple[Ints, Floats]:
        """``n`` joint samples as code positions ``(n, 4)`` (this seat's own included) and their weights
        (zero for the samples that would need more cards of a rank than are unseen)."""
        generator = np.random.default_rng(rng.getrandbits(64))
        positions = np.empty((n, 4), dtype=np.int64)
        positions[:, self.seat] = max(self.own, 0)
        prior = hand_prior(tuple(self.unseen))
        # The three seats' distributions as one cumulative table, seat i's share spanning [i, i + 1]: one
        # search draws every hand.
        cdf = np.array([self._distribution(seat, prior) for seat in self.others]).cumsum(axis=1)
        cdf = cdf / cdf[:, -1:] + _ROW_OFFSETS
        found = cdf.ravel().searchsorted((generator.random((3, n)) + _ROW_OFFSETS).ravel(), side="right")
        found = np.minimum(found.reshape(3, n) - _ROW_STARTS, len(CODE) - 1)
        positions[:, self.others] = found.T
        # The three hands were drawn independently: weigh each joint draw by the ways the cards really
        # split among them, relative to the independent draws: per rank C(u - a, b) / C(u, b) for the
        # second hand and C(u - a - b, c) / C(u, c) for the third (zero when the cards are not there).
        a5 = _COUNTS5[found[0]] + self._unseen_rows
        b, c = COUNTS[found[1]], COUNTS[found[2]]
        log = _LOG_SHARE[a5 + b] + _LOG_SHARE[a5 + _COUNTS5[found[1]] + c]
        weights: Floats = np.exp(log @ _ONES8)
        return positions, weights

    def sample(self, rng: random.Random, n: int) -> tuple[list[Codes], list[float]]:
        """Up to ``n`` joint samples of the four codes with positive weight, and their weights."""
        positions, weights = self.draw(rng, n)
        codes = CODE[positions].tolist()
        return (
            [(c[0], c[1], c[2], c[3]) for c, w in zip(codes, weights.tolist(), strict=True) if w > 0],
            [w for w in weights.tolist() if w > 0],
        )


def _evidence(view: SeatView, callers: Callers) -> Iterable[tuple[int, Floats]]:
    """Likelihood terms ``(seat, code position → likelihood)`` for every informative word of the others."""
    me = view.seat
    actions = view.actions
    # The last mus round speaks about the hands as they are now.
    start = 0
    for i, action in enumerate(actions):
        if action.kind is ActionKind.DISCARD:
            start = i + 1
    for action in actions[start:]:
        if action.phase is not Phase.MUS or action.seat == me:
            continue
        yield action.seat, (_CUT if action.kind is ActionKind.NO_MUS else _MUS)
    # Betting words, lance by lance, each read against the proposal it answered.
    phase: Phase | None = None
    proposal = 0
    standing = False
    for action in actions:
        lance = LANCE_OF_PHASE.get(action.phase)
        if lance is None:
            continue
        if action.phase is not phase:
            phase, proposal, standing = action.phase, 0, False
        kind = action.kind
        index = LANCE_INDEX[lance]
        if action.seat != me:
            if kind in (ActionKind.QUIERO, ActionKind.NO_QUIERO):
                accepts = callers.acceptance(action.seat, index, _bucket(proposal))
                yield (
                    action.seat,
                    (0.08 + 0.9 * accepts if kind is ActionKind.QUIERO else 1.0 - 0.9 * accepts),
                )
            elif kind is ActionKind.ORDAGO and not standing:
                yield action.seat, _likelihood(index, kind, -1)
            elif kind is ActionKind.ENVIDO:
                yield action.seat, _likelihood(index, kind, _bucket(action.amount))
            elif kind is not ActionKind.DISCARD:
                yield action.seat, _likelihood(index, kind, 0)
        if kind is ActionKind.ENVIDO:
            proposal, standing = action.amount, True
        elif kind is ActionKind.SUBE:
            proposal += action.amount
        elif kind is ActionKind.ORDAGO:
            proposal, standing = 0, True


#: A single envido or raise of this many stones, far from the target, marks an erratic bettor.
ERRATIC_BET = BIG_BET
#: Big bets in earlier hands of the match after which the rivals are read as erratic from the first word.
ERRATIC_HISTORY = 2


def erratic_rivals(view: SeatView) -> bool:
    """Whether the rivals bet like no sensible player: in this hand a single bet of ``ERRATIC_BET`` stones
    or more while that far from the target (or that much beyond what they needed), or at least
    ``ERRATIC_HISTORY`` such bets in the earlier hands of the match (a random player makes several a hand)."""
    if view.big_bets[1 - view.team] >= ERRATIC_HISTORY:
        return True
    for action in view.actions:
        if action.seat % 2 == view.team or action.kind not in (ActionKind.ENVIDO, ActionKind.SUBE):
            continue
        needed = view.target - view.scores[action.seat % 2]
        if is_big_bet(action.amount, needed) or action.amount >= needed + ERRATIC_BET:
            return True
    return False


def _bucket(bet: int) -> int:
    """Bets grouped for the likelihood cache (the thresholds are flat above 20)."""
    return min(bet, 20)


def lance_index(lance: Lance) -> int:
    """The index of a lance in the tables' rows."""
    return LANCE_INDEX[lance]


__all__ = [
    "Beliefs",
    "Codes",
    "accept_threshold",
    "erratic_rivals",
    "lance_index",
    "open_threshold",
    "sigmoid",
    "unseen_ranks",
]
