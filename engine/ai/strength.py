"""Hand strength from the evaluation tables: how a hand ranks against a random four-card hand.

For each of the 330 rank multisets and each lance, the *percentile* is the probability that a random hand
from a full deck is worse, counting ties as half. Multiset weights follow the deck: eight ases (1 and 2) and
eight reyes (12 and 3), four of every other rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

from engine.cards import Card
from engine.evaluation import TABLE, Lance, hand_code

_CARDS_PER_RANK = (8, 4, 4, 4, 4, 4, 4, 8)


def _weight(ranks: Sequence[int]) -> int:
    weight = 1
    for rank in set(ranks):
        weight *= comb(_CARDS_PER_RANK[rank], ranks.count(rank))
    return weight


_WEIGHTS: dict[int, int] = {code: _weight(ev.ranks) for code, ev in TABLE.items()}
_TOTAL = sum(_WEIGHTS.values())


def _percentiles(lance: Lance) -> dict[int, float]:
    keys = {code: ev.key(lance) for code, ev in TABLE.items()}
    by_key: dict[int, int] = {}
    for code, key in keys.items():
        by_key[key] = by_key.get(key, 0) + _WEIGHTS[code]
    below = 0
    cumulative: dict[int, float] = {}
    for key in sorted(by_key):
        cumulative[key] = (below + by_key[key] / 2) / _TOTAL
        below += by_key[key]
    return {code: cumulative[key] for code, key in keys.items()}


#: Per lance, the percentile of each multiset code.
PERCENTILE: dict[Lance, dict[int, float]] = {lance: _percentiles(lance) for lance in Lance}


def percentile(lance: Lance, cards: Sequence[Card]) -> float:
    """How likely a random hand is worse than these four cards in ``lance`` (ties count half)."""
    return PERCENTILE[lance][hand_code(cards)]
