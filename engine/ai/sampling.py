"""Hidden hands consistent with what one seat sees, sampled and weighted.

A :class:`Beliefs` is built from a :class:`~engine.views.SeatView` only. It knows:

- the *unseen* cards, per effective rank: the deck minus this seat's cards (and minus its own discards while
  no reshuffle can have brought them back);
- hard constraints per other seat: the public pares/juego declarations, and the señas this seat knows (the
  partner's, and the rivals' it caught), each as a set of allowed hand codes;
- soft evidence: how each other seat spoke (cut the mus, said mus, passed, bet, accepted, refused, raised,
  órdago). Each word has a likelihood given that seat's hand, a smooth threshold on the hand's percentile
  in the lance (a seat that bets grande is likely strong there), with a floor for bluffs and mistakes.

:meth:`Beliefs.sample` draws the three hidden hands as rank multisets (only ranks matter to the lances):
constrained seats first, by rejection when the constraint is common and by exact weighted choice over the
allowed codes when it is rare, then the others; each sample carries the product of its likelihoods.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from functools import lru_cache

from engine.actions import ActionKind
from engine.ai.tables import (
    CODES,
    COMB,
    DEAL_WEIGHT,
    LANCE_INDEX,
    P5,
    PARTS,
    PERCENTILE,
    RANK_CARDS,
    ROW,
    SENA_CODES,
)
from engine.cards import CARD_RANK
from engine.evaluation import Lance
from engine.hand import LANCE_OF_PHASE, Phase
from engine.match import BIG_BET, is_big_bet
from engine.views import SeatView

#: A sample: the hand code of each seat 0..3 (this seat's own code included).
Codes = tuple[int, int, int, int]

_TOTAL_WEIGHT = sum(DEAL_WEIGHT.values())
_HAS_PARES = frozenset(c for c in CODES if ROW[c][2] > 0)
_NO_PARES = frozenset(CODES) - _HAS_PARES
_HAS_JUEGO = frozenset(c for c in CODES if ROW[c][4] >= 31)
_NO_JUEGO = frozenset(CODES) - _HAS_JUEGO
# Below this prior share of hands a constraint is sampled exactly rather than by rejection.
_RARE = 0.3
_MAX_REJECTIONS = 30
_INITIAL_DECK = 24


def sigmoid(x: float) -> float:
    """The logistic function, clamped far out (no overflow)."""
    if x < -30:
        return 0.0
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def accept_threshold(bet: int) -> float:
    """The hand percentile above which a typical player accepts a bet of ``bet`` stones (0 = órdago)."""
    if bet <= 0:
        return 0.89
    return math.sqrt(0.45 + min(bet, 20) / 60)


@lru_cache(maxsize=512)
def accept_table(lance_index: int, bet: int, committed: bool = False) -> dict[int, float]:
    """Per code, how likely a typical player accepts a bet (``0`` = an órdago) in a lance.

    ``committed``: the player's side proposed the bet now raised, so it accepts a little more readily.
    """
    t = accept_threshold(bet) - (0.04 if committed else 0.0)
    pct = PERCENTILE[lance_index]
    return {c: 0.02 + 0.96 * sigmoid((pct[c] - t) / 0.05) for c in CODES}


def open_threshold(bet: int) -> float:
    """The hand percentile above which a typical player opens with a bet of ``bet`` stones (0 = órdago)."""
    if bet <= 0:
        return 0.92
    return min(0.95, 0.74 + 0.2 * math.log2(max(bet, 2) / 2))


@lru_cache(maxsize=128)
def _likelihood(lance_index: int, kind: ActionKind, bet: int) -> dict[int, float]:
    """Per code, the likelihood of a betting word.

    ``bet`` is the envido's amount for an opening bet, the standing proposal answered for ``quiero`` and
    ``no_quiero`` (0: an órdago), -1 for an opening órdago.
    """
    pct = PERCENTILE[lance_index]
    if kind is ActionKind.PASO:
        t = open_threshold(2)
        return {c: 0.9 - 0.85 * sigmoid((pct[c] - t) / 0.05) for c in CODES}
    if kind is ActionKind.ENVIDO or (kind is ActionKind.ORDAGO and bet < 0):
        t = open_threshold(bet if kind is ActionKind.ENVIDO else 0)
        return {c: 0.06 + 0.9 * sigmoid((pct[c] - t) / 0.04) for c in CODES}
    if kind in (ActionKind.QUIERO, ActionKind.NO_QUIERO):
        accepts = accept_table(lance_index, bet)
        if kind is ActionKind.QUIERO:
            return {c: 0.08 + 0.9 * p for c, p in accepts.items()}
        return {c: 1.0 - 0.9 * p for c, p in accepts.items()}
    # A raise, or an órdago answering a bet.
    t = 0.93 if kind is ActionKind.ORDAGO else 0.9
    return {c: 0.06 + 0.9 * sigmoid((pct[c] - t) / 0.04) for c in CODES}


def _cut_score(code: int) -> float:
    return max(PERCENTILE[0][code], PERCENTILE[1][code], PERCENTILE[2][code], PERCENTILE[3][code])


_CUT = {c: 0.15 + 0.85 * sigmoid((_cut_score(c) - 0.9) / 0.04) for c in CODES}
_MUS = {c: 1.0 - 0.5 * sigmoid((_cut_score(c) - 0.9) / 0.04) for c in CODES}


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
    """What one seat may infer about the other three hands; sample them with :meth:`sample`."""

    def __init__(self, view: SeatView, *, evidence: bool = True) -> None:
        """Read the constraints (and, if ``evidence``, the likelihood of every word spoken) from ``view``."""
        self.seat = view.seat
        self.own_code = 0
        if len(view.cards) == 4:
            self.own_code = sum(P5[CARD_RANK[c]] for c in view.cards)
        self.unseen = unseen_ranks(view)
        self.allowed: dict[int, frozenset[int]] = {}
        for seat in range(4):
            if seat == view.seat:
                continue
            allowed = self._constraints(view, seat)
            if allowed is not None:
                self.allowed[seat] = allowed
        self.erratic = erratic_rivals(view)
        """Whether the rivals bet like no sensible player (their words then say nothing of their cards)."""
        terms = _evidence(view) if evidence else ()
        self.terms: list[tuple[int, dict[int, float]]] = [
            (seat, table) for seat, table in terms if not (self.erratic and seat % 2 != view.team)
        ]
        share = {
            seat: sum(DEAL_WEIGHT[c] for c in allowed) / _TOTAL_WEIGHT
            for seat, allowed in self.allowed.items()
        }
        others = [s for s in range(4) if s != view.seat]
        # Constrained seats first (rarest first): the free ones take whatever is left.
        self.order = sorted(others, key=lambda s: share.get(s, 2.0))
        self.rare = {s for s, f in share.items() if f < _RARE}
        self._rare_lists = {s: tuple(sorted(self.allowed[s])) for s in self.rare}

    @staticmethod
    def _constraints(view: SeatView, seat: int) -> frozenset[int] | None:
        allowed: frozenset[int] | None = None
        if view.pares_declared is not None:
            allowed = _HAS_PARES if view.pares_declared[seat] else _NO_PARES
        if view.juego_declared is not None:
            juego = _HAS_JUEGO if view.juego_declared[seat] else _NO_JUEGO
            allowed = juego if allowed is None else allowed & juego
        for sena in view.senas:
            if sena.seat != seat or sena.sena is None:
                continue
            narrowed = SENA_CODES[sena.sena] if allowed is None else allowed & SENA_CODES[sena.sena]
            if narrowed:  # a seña that contradicts the declarations predates a discard: ignore it
                allowed = narrowed
        return allowed

    def sample(self, rng: random.Random, n: int) -> tuple[list[Codes], list[float]]:
        """``n`` joint samples of the four codes, with their (unnormalised) weights."""
        samples: list[Codes] = []
        weights: list[float] = []
        base = self.unseen
        base_total = sum(base)
        allowed = self.allowed
        rare = self.rare
        order = self.order
        terms = self.terms
        for _ in range(n):
            counts = list(base)
            total = base_total
            codes = [0, 0, 0, 0]
            codes[self.seat] = self.own_code
            for seat in order:
                ok = allowed.get(seat)
                if seat in rare:
                    code = self._exact(counts, self._rare_lists[seat], rng)
                    if code < 0:
                        code = _draw(counts, total, rng)
                    else:
                        for r, k in PARTS[code]:
                            counts[r] -= k
                else:
                    code = _draw(counts, total, rng)
                    tries = 1
                    while ok is not None and code not in ok and tries < _MAX_REJECTIONS:
                        for r, k in PARTS[code]:
                            counts[r] += k
                        code = _draw(counts, total, rng)
                        tries += 1
                total -= 4
                codes[seat] = code
            weight = 1.0
            for seat, table in terms:
                weight *= table[codes[seat]]
            samples.append((codes[0], codes[1], codes[2], codes[3]))
            weights.append(weight)
        return samples, weights

    @staticmethod
    def _exact(counts: list[int], options: Sequence[int], rng: random.Random) -> int:
        """One allowed code with its exact probability given the cards left; -1 if none is possible."""
        cumulative: list[float] = []
        acc = 0.0
        for code in options:
            ways = 1
            for r, k in PARTS[code]:
                have = counts[r]
                if have < k:
                    ways = 0
                    break
                ways *= COMB[have][k]
            acc += ways
            cumulative.append(acc)
        if acc <= 0:
            return -1
        x = rng.random() * acc
        lo, hi = 0, len(cumulative) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cumulative[mid] > x:
                hi = mid
            else:
                lo = mid + 1
        return options[lo]


def _draw(counts: list[int], total: int, rng: random.Random) -> int:
    """Draw four cards from ``counts`` (ranks, mutated) and return their code."""
    code = 0
    rand = rng.random
    for left in range(total, total - 4, -1):
        x = int(rand() * left)
        r = 0
        while x >= counts[r]:
            x -= counts[r]
            r += 1
        counts[r] -= 1
        code += P5[r]
    return code


def _evidence(view: SeatView) -> Iterable[tuple[int, dict[int, float]]]:
    """Likelihood terms ``(seat, code → likelihood)`` for every informative word of the other seats."""
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
                yield action.seat, _likelihood(index, kind, _bucket(proposal))
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
    "accept_table",
    "accept_threshold",
    "erratic_rivals",
    "lance_index",
    "open_threshold",
    "sigmoid",
    "unseen_ranks",
]
