"""Engine benchmark: prints figures, asserts nothing.

    python bench/engine.py [--seconds S]

- lance comparisons per second through the evaluation tables (two hands by key; four seats from cards);
- full hands per second with random legal play, deal to count, on one core;
- whole machine-only matches per second (baseline players);
- the size of the serialized match state mid-hand (JSON bytes).

Targets on the project's 2-core machine: >= 1,000,000 comparisons/s, >= 5,000 hands/s, <= 4 KB of JSON.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

# This file is itself named engine.py: put the project root, not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from engine.ai import BaselinePlayer
from engine.cards import FULL_DECK
from engine.evaluation import LANCE_KEYS, Lance, best_seat, compare, hand_code
from engine.hand import Hand
from engine.match import Match
from engine.simulate import SimulationStats, play_match
from engine.state import dump_match


def _deals(n: int, rng: random.Random) -> list[list[list[int]]]:
    deals = []
    for _ in range(n):
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        deals.append([deck[i * 4 : i * 4 + 4] for i in range(4)])
    return deals


def bench_pairwise(seconds: float) -> float:
    """Two-hand comparisons per second: one table look-up per hand, then a key comparison."""
    rng = random.Random(1)
    codes = [hand_code(h) for d in _deals(2000, rng) for h in d]
    lances = list(LANCE_KEYS.values())
    pairs = [(lances[i % 5], codes[i], codes[-i - 1]) for i in range(len(codes))]
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        wins = 0
        for table, a, b in pairs:
            if table[a] >= table[b]:
                wins += 1
        done += len(pairs)
    return done / (time.perf_counter() - start)


def bench_four_seats(seconds: float) -> float:
    """Four-seat lance resolutions per second, from cards (codes, look-ups, tie to the mano)."""
    rng = random.Random(2)
    deals = [dict(enumerate(d)) for d in _deals(2000, rng)]
    lances = list(Lance)
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i, hands in enumerate(deals):
            compare(lances[i % 5], hands, i & 3)
        done += len(deals)
    return done / (time.perf_counter() - start)


def bench_four_seats_keys(seconds: float) -> float:
    """Four-seat resolutions per second when the hands' codes are known (as during a hand)."""
    rng = random.Random(3)
    rows = [[hand_code(h) for h in d] for d in _deals(2000, rng)]
    tables = list(LANCE_KEYS.values())
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i, codes in enumerate(rows):
            table = tables[i % 5]
            best_seat([table[c] for c in codes], i & 3)
        done += len(rows)
    return done / (time.perf_counter() - start)


def bench_hands(seconds: float) -> tuple[float, float]:
    """Full hands per second, random legal play from deal to count; also actions per hand."""
    rng = random.Random(4)
    hands = actions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            hand = Hand.deal(rng, mano=hands & 3)
            while not hand.over:
                seat = hand.turn
                assert seat is not None
                hand.act(seat, rng.choice(hand.legal_actions(seat)))
                actions += 1
            hands += 1
    elapsed = time.perf_counter() - start
    return hands / elapsed, actions / max(hands, 1)


def bench_matches(seconds: float) -> tuple[float, float]:
    """Whole baseline-vs-baseline matches per second; also hands per match."""
    rng = random.Random(5)
    players = [BaselinePlayer() for _ in range(4)]
    stats = SimulationStats()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        play_match(players, rng, stats=stats)
    elapsed = time.perf_counter() - start
    return stats.matches / elapsed, stats.hands / max(stats.matches, 1)


def state_sizes() -> tuple[int, float, int]:
    """Sizes of the saved match (JSON bytes) at every step of baseline matches: max, mean, and count."""
    rng = random.Random(6)
    player = BaselinePlayer()
    sizes = []
    for _ in range(5):
        match = Match()
        while not match.over:
            hand = match.new_hand(rng)
            while not hand.over:
                seat = hand.turn
                assert seat is not None
                match.act(seat, player.decide(match.view_for(seat), rng))
                sizes.append(len(dump_match(match).encode()))
    return max(sizes), statistics.fmean(sizes), len(sizes)


def main() -> None:
    """Run every benchmark and print its figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    s = parser.parse_args().seconds
    print(f"python {sys.version.split()[0]}, one core, {s:.1f} s per figure")
    pairwise = bench_pairwise(s)
    print(f"two-hand lance comparisons/s (table keys):   {pairwise:>12,.0f}   target >= 1,000,000")
    print(f"four-seat lance resolutions/s (known codes): {bench_four_seats_keys(s):>12,.0f}")
    print(f"four-seat lance resolutions/s (from cards):  {bench_four_seats(s):>12,.0f}")
    rate, per_hand = bench_hands(s)
    print(f"full hands/s, random legal play:             {rate:>12,.0f}   target >= 5,000", end="")
    print(f" ({per_hand:.1f} actions/hand)")
    mrate, hands_per_match = bench_matches(s)
    print(f"whole matches/s, baseline players:           {mrate:>12,.1f}", end="")
    print(f"   ({hands_per_match:.1f} hands/match)")
    biggest, mean, n = state_sizes()
    print(f"saved match JSON mid-hand, bytes:            {biggest:>12,}   max", end="")
    print(f" (mean {mean:,.0f} over {n} states); target <= 4,096")


if __name__ == "__main__":
    main()
