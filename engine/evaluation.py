"""Hand evaluation from precomputed tables.

With 8 effective ranks there are only 330 distinct four-card rank multisets. Each one is evaluated once, at
import, into integer *keys* per lance where a higher key is a better hand and ``0`` means "does not hold"
(no pares, no juego). A hand is looked up by its multiset code: the sum of ``5 ** rank`` over its cards
(a rank appears at most four times, so base 5 is unambiguous).

Ties between equal keys go to the seat nearest the mano in speaking order (:func:`best_seat`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from itertools import combinations_with_replacement

from engine.cards import CARD_RANK, EFFECTIVE_RANK_VALUES, Card


class Lance(StrEnum):
    """The four lances (punto replaces juego when nobody holds juego)."""

    GRANDE = "grande"
    CHICA = "chica"
    PARES = "pares"
    JUEGO = "juego"
    PUNTO = "punto"


class ParesKind(IntEnum):
    """What a hand holds for the pares lance, worst to best."""

    NONE = 0
    PAR = 1
    MEDIAS = 2
    DUPLES = 3

    @property
    def label(self) -> str:
        """The lower-case name used in records and conformance results."""
        return self.name.lower()


#: Juego totals, best first (31 is the best juego, 33 the worst).
JUEGO_ORDER: tuple[int, ...] = (31, 32, 40, 37, 36, 35, 34, 33)
_JUEGO_KEY: dict[int, int] = {total: len(JUEGO_ORDER) - i for i, total in enumerate(JUEGO_ORDER)}

#: Stones a juego earns its holder at the count when its team wins the lance.
JUEGO_BONUS_31 = 3
JUEGO_BONUS_OTHER = 2


@dataclass(frozen=True, slots=True)
class HandEval:
    """Everything the lances need to know about one four-card hand (by effective ranks)."""

    ranks: tuple[int, ...]
    """Effective ranks, high to low."""
    grande: int
    chica: int
    pares_kind: ParesKind
    pares: int
    total: int
    juego: int

    @property
    def pares_ranks(self) -> tuple[int, int]:
        """The effective ranks of the pares, high then low (the same twice for duples of one rank; 0 for a
        part there is none of), as :attr:`pares` packs them."""
        return (self.pares >> 3) & 7, self.pares & 7

    @property
    def has_pares(self) -> bool:
        """Whether the hand holds par, medias or duples."""
        return self.pares_kind is not ParesKind.NONE

    @property
    def has_juego(self) -> bool:
        """Whether the total is 31 or more."""
        return self.total >= 31

    @property
    def pares_bonus(self) -> int:
        """Stones for the pares bonus: par 1, medias 2, duples 3."""
        return int(self.pares_kind)

    @property
    def juego_bonus(self) -> int:
        """Stones for the juego bonus: 31 pays 3, any other juego 2, no juego 0."""
        if self.total == 31:
            return JUEGO_BONUS_31
        return JUEGO_BONUS_OTHER if self.total > 31 else 0

    def key(self, lance: Lance) -> int:
        """The comparison key of this hand for a lance (higher is better, 0 = does not hold)."""
        if lance is Lance.GRANDE:
            return self.grande
        if lance is Lance.CHICA:
            return self.chica
        if lance is Lance.PARES:
            return self.pares
        if lance is Lance.JUEGO:
            return self.juego
        return self.total


def _evaluate_ranks(ranks: Sequence[int]) -> HandEval:
    high_to_low = tuple(sorted(ranks, reverse=True))
    low_to_high = high_to_low[::-1]
    # Base-8 digits, most significant first; the +1 keeps every key positive (0 means "does not hold").
    grande = 1 + sum(r << (3 * (3 - i)) for i, r in enumerate(high_to_low))
    chica = 1 + sum((7 - r) << (3 * (3 - i)) for i, r in enumerate(low_to_high))
    counts = {r: high_to_low.count(r) for r in set(high_to_low)}
    groups = sorted(((n, r) for r, n in counts.items() if n >= 2), reverse=True)
    if not groups:
        kind, hi, lo = ParesKind.NONE, 0, 0
    elif groups[0][0] == 4:
        kind, hi, lo = ParesKind.DUPLES, groups[0][1], groups[0][1]
    elif len(groups) == 2:
        kind = ParesKind.DUPLES
        hi, lo = max(groups[0][1], groups[1][1]), min(groups[0][1], groups[1][1])
    elif groups[0][0] == 3:
        kind, hi, lo = ParesKind.MEDIAS, groups[0][1], 0
    else:
        kind, hi, lo = ParesKind.PAR, groups[0][1], 0
    pares = 0 if kind is ParesKind.NONE else (int(kind) << 6) | (hi << 3) | lo
    total = sum(EFFECTIVE_RANK_VALUES[r] for r in high_to_low)
    return HandEval(high_to_low, grande, chica, kind, pares, total, _JUEGO_KEY.get(total, 0))


def _multiset_code(ranks: Iterable[int]) -> int:
    return sum(5**r for r in ranks)


#: Every four-card rank multiset, by code (330 entries).
TABLE: dict[int, HandEval] = {
    _multiset_code(combo): _evaluate_ranks(combo) for combo in combinations_with_replacement(range(8), 4)
}
_CARD_CODE: tuple[int, ...] = tuple(5**r for r in CARD_RANK)

#: Per lance, the key of each multiset code: the hot path of comparisons.
LANCE_KEYS: dict[Lance, dict[int, int]] = {
    lance: {code: ev.key(lance) for code, ev in TABLE.items()} for lance in Lance
}


def hand_code(cards: Sequence[Card]) -> int:
    """The multiset code of four cards, the index into :data:`TABLE`."""
    w = _CARD_CODE
    return w[cards[0]] + w[cards[1]] + w[cards[2]] + w[cards[3]]


def evaluate(cards: Sequence[Card]) -> HandEval:
    """Evaluate four cards (a table look-up)."""
    if len(cards) != 4:
        raise ValueError(f"a hand has four cards, not {len(cards)}")
    return TABLE[hand_code(cards)]


def best_seat(keys: Sequence[int], mano: int, seats: Iterable[int] | None = None) -> int | None:
    """The seat with the highest key, ties to the seat nearest the mano; ``None`` if every key is 0.

    ``keys`` is indexed by seat (0..3). ``seats`` restricts the choice (e.g. to one team's participants).
    """
    allowed = None if seats is None else set(seats)
    best = 0
    winner: int | None = None
    for i in range(4):
        seat = (mano + i) & 3
        if allowed is not None and seat not in allowed:
            continue
        if keys[seat] > best:
            best = keys[seat]
            winner = seat
    return winner


def compare(lance: Lance, hands: Mapping[int, Sequence[Card]], mano: int) -> int | None:
    """The seat that wins ``lance`` with these four hands; for pares and juego, only among holders."""
    table = LANCE_KEYS[lance]
    keys = [table[hand_code(hands[seat])] for seat in range(4)]
    return best_seat(keys, mano)
