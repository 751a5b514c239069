"""Tables the strong player looks up instead of computing: everything is indexed by the multiset code.

A four-card hand is one of 330 rank multisets (:data:`engine.evaluation.TABLE`); its *code* is the sum of
``5 ** rank``. Built once at import (a few milliseconds):

- :data:`ROW`: per code, the lance keys (grande, chica, pares, juego, punto) and the pares/juego bonuses;
- :data:`TEAM_WIN`: per lance and code, the chance that the holder's team wins the lance against two random
  rival hands (the partner's hand random too), ties counted half;
- :data:`HAND_VALUE`: per code, a rough expected net stones of holding it (the mus and discard currency);
- :data:`DRAWS` and :func:`draw_probabilities`: every multiset of 1–4 replacement cards, for exact
  expectations over the replacement draws;
- :data:`SENA_CODES`: per seña, the codes of which it is true;
- :func:`game_value`: the chance of winning a game from a score, used to turn stones into wins (built lazily
  per target).
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations_with_replacement

from engine.evaluation import JUEGO_BONUS_31, JUEGO_BONUS_OTHER, TABLE, Lance, ParesKind
from engine.senas import Sena

#: ``5 ** rank`` for the eight effective ranks: a card's contribution to a hand code.
P5: tuple[int, ...] = tuple(5**r for r in range(8))
#: Cards of each effective rank in the deck (8 ases, 8 reyes, 4 of every other rank).
RANK_CARDS: tuple[int, ...] = (8, 4, 4, 4, 4, 4, 4, 8)
#: The lances in the order of a row of :data:`ROW` (and of the count).
ROW_LANCES: tuple[Lance, ...] = (Lance.GRANDE, Lance.CHICA, Lance.PARES, Lance.JUEGO, Lance.PUNTO)
#: Index of each lance in a row of :data:`ROW`.
LANCE_INDEX: dict[Lance, int] = {lance: i for i, lance in enumerate(ROW_LANCES)}

#: ``COMB[n][k]``: binomial coefficients for n up to 8.
COMB: tuple[tuple[int, ...], ...] = tuple(tuple(math.comb(n, k) for k in range(5)) for n in range(9))

#: Every code, in a fixed order.
CODES: tuple[int, ...] = tuple(sorted(TABLE))


def _parts(code: int) -> tuple[tuple[int, int], ...]:
    """The (rank, count) pairs of a code."""
    return tuple((r, (code // P5[r]) % 5) for r in range(8) if (code // P5[r]) % 5)


#: Per code, its (rank, count) pairs.
PARTS: dict[int, tuple[tuple[int, int], ...]] = {code: _parts(code) for code in CODES}
#: Per code, how many four-card hands of a full deck have that multiset.
DEAL_WEIGHT: dict[int, int] = {
    code: math.prod(COMB[RANK_CARDS[r]][k] for r, k in parts) for code, parts in PARTS.items()
}


def _juego_bonus(total: int) -> int:
    if total == 31:
        return JUEGO_BONUS_31
    return JUEGO_BONUS_OTHER if total > 31 else 0


#: Per code: grande, chica, pares, juego and punto keys (0 = does not hold), pares bonus, juego bonus.
ROW: dict[int, tuple[int, int, int, int, int, int, int]] = {
    code: (ev.grande, ev.chica, ev.pares, ev.juego, ev.total, int(ev.pares_kind), _juego_bonus(ev.total))
    for code, ev in TABLE.items()
}


def _team_win(lance: Lance) -> dict[int, float]:
    """P(the holder's team has the best hand) against random hands, ties half; non-holders key 0."""
    idx = LANCE_INDEX[lance]
    if lance is Lance.PUNTO:  # punto is played only when nobody holds juego
        pool = {c: w for c, w in DEAL_WEIGHT.items() if ROW[c][4] < 31}
    else:
        pool = dict(DEAL_WEIGHT)
    total = sum(pool.values())
    mass: dict[int, float] = {}
    for code, weight in pool.items():
        key = ROW[code][idx]
        mass[key] = mass.get(key, 0.0) + weight / total
    keys = sorted(mass)
    below = 0.0
    f: dict[int, float] = {}  # a rival hand is worse than key (ties half)
    at_most: dict[int, float] = {}  # the partner's key is at most key
    for key in keys:
        f[key] = below + mass[key] / 2
        below += mass[key]
        at_most[key] = below
    # above[key] = sum over partner keys p > key of P(p) F(p)^2
    above: dict[int, float] = {}
    running = 0.0
    for key in reversed(keys):
        above[key] = running
        running += mass[key] * f[key] ** 2
    result: dict[int, float] = {}
    for code in CODES:
        key = ROW[code][idx]
        if lance is Lance.PUNTO and ROW[code][4] >= 31:
            result[code] = 0.0
            continue
        if key not in f:  # cannot happen: every key is in the pool
            result[code] = 0.0
            continue
        own = at_most[key] * f[key] ** 2 if key > 0 else 0.0
        result[code] = own + above[key]
    return result


#: Per lance and code: the chance that the holder's team wins the lance against random hands.
TEAM_WIN: dict[Lance, dict[int, float]] = {lance: _team_win(lance) for lance in ROW_LANCES}


def _percentile(idx: int) -> dict[int, float]:
    """P(a random hand is worse), ties half (as :mod:`engine.ai.strength`)."""
    total = sum(DEAL_WEIGHT.values())
    by_key: dict[int, int] = {}
    for code, weight in DEAL_WEIGHT.items():
        by_key[ROW[code][idx]] = by_key.get(ROW[code][idx], 0) + weight
    below = 0
    cumulative: dict[int, float] = {}
    for key in sorted(by_key):
        cumulative[key] = (below + by_key[key] / 2) / total
        below += by_key[key]
    return {code: cumulative[ROW[code][idx]] for code in CODES}


#: Per lance index (0..4 as in :data:`ROW`) and code: the percentile of the hand among all hands.
PERCENTILE: tuple[dict[int, float], ...] = tuple(_percentile(i) for i in range(5))


def _hand_value(code: int) -> float:
    """Rough expected net stones for the holder's team: lance equities times typical stakes, bonuses."""
    g, c, p, j, pu = (TEAM_WIN[lance][code] for lance in ROW_LANCES)
    _, _, _, _, total, pares_bonus, juego_bonus = ROW[code]
    value = 2.0 * (2 * g - 1) + 1.6 * (2 * c - 1)
    value += p * (pares_bonus + 2.1) - max(0.0, 0.9 - p) * 3.1
    if total >= 31:
        value += j * (juego_bonus + 2.5) - max(0.0, 1.0 - j) * 4.0
    else:
        value += j * 4.5 - max(0.0, 0.75 - j) * 4.0 + 0.5 * (2 * pu - 1)
    return value


#: Per code: a rough expected net stones of holding the hand (what mus and discards maximise).
HAND_VALUE: dict[int, float] = {code: _hand_value(code) for code in CODES}


def _draws(m: int) -> tuple[tuple[int, tuple[tuple[int, int], ...]], ...]:
    out = []
    for combo in combinations_with_replacement(range(8), m):
        code = sum(P5[r] for r in combo)
        out.append((code, tuple((r, combo.count(r)) for r in sorted(set(combo)))))
    return tuple(out)


#: For m = 1..4 cards drawn: every rank multiset as (partial code, (rank, count) pairs).
DRAWS: dict[int, tuple[tuple[int, tuple[tuple[int, int], ...]], ...]] = {m: _draws(m) for m in range(1, 5)}


def draw_probabilities(unseen: list[int], m: int) -> list[tuple[int, float]]:
    """Exact (partial code, probability) of drawing ``m`` cards from ``unseen`` cards per rank."""
    n = sum(unseen)
    if m == 0:
        return [(0, 1.0)]
    if n < m:
        return []
    denominator = math.comb(n, m)
    out: list[tuple[int, float]] = []
    for code, parts in DRAWS[m]:
        ways = 1
        for r, k in parts:
            have = unseen[r]
            if have < k:
                ways = 0
                break
            ways *= COMB[have][k]
        if ways:
            out.append((code, ways / denominator))
    return out


def _sena_true(sena: Sena, code: int) -> bool:
    counts = [(code // P5[r]) % 5 for r in range(8)]
    kind = TABLE[code].pares_kind
    total = ROW[code][4]
    if sena is Sena.DOS_REYES:
        return counts[7] == 2
    if sena is Sena.TRES_REYES:
        return counts[7] == 3
    if sena is Sena.DOS_ASES:
        return counts[0] == 2
    if sena is Sena.TRES_ASES:
        return counts[0] == 3
    if sena is Sena.MEDIAS:
        return kind is ParesKind.MEDIAS
    if sena is Sena.DUPLES:
        return kind is ParesKind.DUPLES
    if sena is Sena.TREINTA_Y_UNA:
        return total == 31
    return kind is ParesKind.NONE and total < 31


#: Per seña, the codes of which it is true (the same truth as :func:`engine.senas.sena_is_true`).
SENA_CODES: dict[Sena, frozenset[int]] = {
    sena: frozenset(c for c in CODES if _sena_true(sena, c)) for sena in Sena
}

# Stones one team takes in one hand, measured over 20,000 baseline hands (gains 0..29, then 30 or more).
_GAIN_COUNTS = (
    1994, 3665, 1724, 1624, 1611, 1853, 1651, 1305, 1137, 935, 620, 467, 358, 273, 170, 120, 86, 88, 93, 53,
    45, 24, 28, 26, 15, 14, 8, 13, 5, 6, 10,
)  # fmt: skip


def _gains(tilt: float) -> list[float]:
    weights = [n * math.exp(tilt * x) for x, n in enumerate(_GAIN_COUNTS)]
    total = sum(weights)
    return [w / total for w in weights]


def _reach(target: int, gains: list[float], hands: int) -> list[list[float]]:
    """``reach[n][a]``: chance that a team at ``a`` stones has reached the target within ``n`` hands."""
    reach = [[0.0] * target + [1.0]]
    for _ in range(hands):
        prev = reach[-1]
        row = []
        for a in range(target):
            acc = 0.0
            for x, p in enumerate(gains):
                acc += p * prev[min(a + x, target)]
            row.append(acc)
        row.append(1.0)
        reach.append(row)
    return reach


@lru_cache(maxsize=16)
def game_value(target: int, tilt: float = 0.0) -> tuple[tuple[float, ...], ...]:
    """``value[a][b]``: the chance that a team at ``a`` stones wins the game against a team at ``b``.

    Each team's stones per hand follow the measured distribution, independently; ``tilt`` skews ours up and
    theirs down (a player that expects to be the stronger side takes fewer coin flips). Indices run
    ``0..target``: a team at the target has won (both there: half).
    """
    hands = 8 + target
    ours = _reach(target, _gains(tilt), hands)
    theirs = _reach(target, _gains(-tilt), hands)
    table: list[tuple[float, ...]] = []
    for a in range(target + 1):
        row = []
        for b in range(target + 1):
            if a >= target or b >= target:
                row.append(0.5 if a >= target and b >= target else (1.0 if a >= target else 0.0))
                continue
            win = 0.0
            for n in range(1, hands + 1):
                first = ours[n][a] - ours[n - 1][a]
                if first:
                    win += first * ((1.0 - theirs[n][b]) + 0.5 * (theirs[n][b] - theirs[n - 1][b]))
            row.append(win)
        table.append(tuple(row))
    return tuple(table)


# Logistic fit of the hard player's game wins against erratic (random) rivals, from the score at each hand's
# start: features 1, x, y, x², y², x·y, x³, y³ (x ours, y theirs, as fractions of the target). Refit from
# 10,256 hand starts of 4,000 games of hard against random (seed 11).
_ERRATIC_FIT = (2.966, 2.971, -2.311, -4.912, -0.889, -2.021, 5.66, 0.778)


@lru_cache(maxsize=16)
def erratic_value(target: int) -> tuple[tuple[float, ...], ...]:
    """Like :func:`game_value`, against rivals that bet erratically: measured, not modelled.

    Against such rivals the game is decided by a few all-in coin flips rather than by stones, so the chance
    of winning depends much less on the score; this table is a logistic fit of measured games.
    """
    c = _ERRATIC_FIT
    grid = [[0.0] * (target + 1) for _ in range(target + 1)]
    for a in range(target + 1):
        for b in range(target + 1):
            if a >= target or b >= target:
                grid[a][b] = 0.5 if a >= target and b >= target else (1.0 if a >= target else 0.0)
                continue
            x, y = a / target, b / target
            z = c[0] + c[1] * x + c[2] * y + c[3] * x * x + c[4] * y * y + c[5] * x * y
            z += c[6] * x**3 + c[7] * y**3
            grid[a][b] = 1.0 / (1.0 + math.exp(-z))
    # The fit is thin where few games go (far behind, rivals near the target): keep it monotone there, so
    # that more stones of ours never look worse.
    for b in range(target):
        for a in range(1, target):
            grid[a][b] = max(grid[a][b], grid[a - 1][b])
    return tuple(tuple(row) for row in grid)


__all__ = [
    "CODES",
    "COMB",
    "DEAL_WEIGHT",
    "DRAWS",
    "HAND_VALUE",
    "LANCE_INDEX",
    "P5",
    "PARTS",
    "PERCENTILE",
    "RANK_CARDS",
    "ROW",
    "ROW_LANCES",
    "SENA_CODES",
    "TEAM_WIN",
    "draw_probabilities",
    "erratic_value",
    "game_value",
]
