"""The strong player's tables as numpy arrays, indexed by the position of a code in :data:`CODES`.

The dict tables of :mod:`engine.ai.tables` stay the reference; these are the same numbers laid out so that
a few hundred sampled deals are evaluated with a few dozen array operations instead of a Python loop:

- :data:`INDEX`: code → position (``-1`` for sums that are not a four-card hand);
- :data:`KEYS`: per position, the row of :data:`~engine.ai.tables.ROW` (lance keys and bonuses);
- :data:`COUNTS`: per position, cards of each effective rank;
- :data:`PCT`, :data:`TEAM_WIN_A`, :data:`HAND_VALUE_A`: percentiles per lance, team win chances per lance,
  hand values;
- :func:`hand_prior`: how many ways each multiset can be drawn from the unseen cards;
- :func:`keep_values`: the expected hand value of every set of cards to keep, over every replacement draw.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from engine.ai.tables import CODES, COMB, DRAWS, HAND_VALUE, P5, PERCENTILE, ROW, ROW_LANCES, TEAM_WIN

#: A float array.
Floats = npt.NDArray[np.float64]
#: An integer array.
Ints = npt.NDArray[np.int64]
#: A boolean array.
Bools = npt.NDArray[np.bool_]

#: Every code, in the order of the arrays' positions.
CODE: Ints = np.array(CODES, dtype=np.int64)
#: Number of distinct four-card multisets (330).
N_CODES = len(CODES)
#: Code → position in the arrays (``-1``: not a four-card multiset).
INDEX: Ints = np.full(4 * P5[7] + 1, -1, dtype=np.int64)
INDEX[CODE] = np.arange(N_CODES)
#: Per position: grande, chica, pares, juego and punto keys, pares bonus, juego bonus.
KEYS: Ints = np.array([ROW[c] for c in CODES], dtype=np.int64)
#: Per position: cards of each of the eight effective ranks.
COUNTS: Ints = (CODE[:, None] // np.array(P5, dtype=np.int64)[None, :]) % 5
#: ``COMB_A[n, k]`` = C(n, k) for n up to 8, k up to 4 (0 when k > n).
COMB_A: Floats = np.array(COMB, dtype=np.float64)
#: Per lance index (0..4) and position: the hand's percentile among all hands.
PCT: Floats = np.array([[PERCENTILE[i][c] for c in CODES] for i in range(5)], dtype=np.float64)
#: Per lance index (0..4) and position: the chance the holder's team wins the lance against random hands.
TEAM_WIN_A: Floats = np.array([[TEAM_WIN[lance][c] for c in CODES] for lance in ROW_LANCES])
#: Per position: :data:`~engine.ai.tables.HAND_VALUE`.
HAND_VALUE_A: Floats = np.array([HAND_VALUE[c] for c in CODES], dtype=np.float64)

_DRAW_CODE: dict[int, Ints] = {m: np.array([c for c, _ in DRAWS[m]], dtype=np.int64) for m in DRAWS}
_DRAW_COUNTS: dict[int, Ints] = {
    m: (codes[:, None] // np.array(P5, dtype=np.int64)[None, :]) % 5 for m, codes in _DRAW_CODE.items()
}


def hand_prior(unseen: tuple[int, ...]) -> Floats:
    """Per position, the number of ways to draw that multiset from ``unseen`` cards per rank."""
    return _hand_prior(unseen)


@lru_cache(maxsize=256)
def _hand_prior(unseen: tuple[int, ...]) -> Floats:
    counts = np.array(unseen, dtype=np.int64)
    prior: Floats = COMB_A[counts[None, :], COUNTS].prod(axis=1)
    prior.flags.writeable = False
    return prior


def _draw_probabilities(unseen: tuple[int, ...], m: int) -> Floats:
    n = sum(unseen)
    if n < m:
        return np.zeros(len(_DRAW_CODE[m]))
    counts = np.array(unseen, dtype=np.int64)
    ways: Floats = COMB_A[counts[None, :], _DRAW_COUNTS[m]].prod(axis=1)
    return ways / math.comb(n, m)


@lru_cache(maxsize=4096)
def keep_values(ranks: tuple[int, ...], unseen: tuple[int, ...]) -> tuple[float, ...]:
    """For each set of cards to keep (bit mask over ``ranks``, every mask but the whole hand, in mask
    order), the expected :data:`~engine.ai.tables.HAND_VALUE` after drawing the rest from ``unseen``."""
    n = len(ranks)
    masks = range((1 << n) - 1)
    by_m: dict[int, list[tuple[int, int]]] = {}
    for mask in masks:
        code = sum(P5[ranks[i]] for i in range(n) if mask >> i & 1)
        by_m.setdefault(4 - bin(mask).count("1"), []).append((mask, code))
    values = [0.0] * len(masks)
    for m, items in by_m.items():
        probabilities = _draw_probabilities(unseen, m)
        keep = np.array([code for _, code in items], dtype=np.int64)
        hands = INDEX[keep[:, None] + _DRAW_CODE[m][None, :]]
        expected = HAND_VALUE_A[hands] @ probabilities
        for (mask, _), value in zip(items, expected.tolist(), strict=True):
            values[mask] = value
    return tuple(values)


__all__ = [
    "CODE",
    "COMB_A",
    "COUNTS",
    "HAND_VALUE_A",
    "INDEX",
    "KEYS",
    "N_CODES",
    "PCT",
    "TEAM_WIN_A",
    "Bools",
    "Floats",
    "Ints",
    "hand_prior",
    "keep_values",
]
