"""The full-screen terminal table's own work: prints figures, asserts nothing.

    python bench/terminal.py [--hands N]

- replaying a hand for the move feed: the player's view after every entry of the journal of a finished
  hand (what the feed does when a press brings a whole run of moves), per hand and per entry;
- the lines of each step (what changed between two consecutive views), per step;
- breaking the feed's last 300 lines into lines of the feed's width (30 columns at 80x24), never at a
  no-break space (:mod:`adapters.console.screen.wrap`): done once per move shown, and per resize.

Machine-only hands with baseline players, on one core. The pause between two moves is 0.7 s: any figure
here far below that leaves the feed's pace to the pause, not to the work.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

from textual.content import Content

from adapters.console.screen.feed import step_lines, view_before, views_after
from adapters.console.screen.table import FEED_KEPT
from adapters.console.screen.wrap import broken
from bot.i18n import translator
from bot.kernel import Seat, TableState
from engine.ai import BaselinePlayer
from engine.hand import Hand
from engine.hand_types import HandConfig


def finished_hands(n: int, seed: int) -> list[Hand]:
    """``n`` hands played to the count by baseline players (señas on)."""
    rng, player = random.Random(seed), BaselinePlayer()
    hands = []
    for i in range(n):
        hand = Hand.deal(rng, mano=i % 4, config=HandConfig(senas=True))
        clock = 0.0
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            view = hand.view_for(seat)
            sena = player.choose_sena(view, rng)
            if sena is not None:
                hand.make_sena(seat, sena, clock)
            hand.act(seat, player.decide(hand.view_for(seat), rng))
            clock += 1.0
        hands.append(hand)
    return hands


def main() -> None:
    """Replay finished hands as the feed does and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    hands = finished_hands(args.hands, args.seed)
    table = TableState(id="benchtab", chat="bench", creator="console:you", lang="es")
    table.seats = [Seat(user="console:you", name="Ane", lang="es"), *(Seat(machine=True) for _ in range(3))]
    t = translator("es")
    per_hand, per_step, entries, feed = [], [], [], []
    for hand in hands:
        started = time.perf_counter()
        views = views_after(hand, 0, 1)
        per_hand.append(time.perf_counter() - started)
        entries.append(len(views))
        before = view_before(hand, 0, 0)
        for view in views:
            started = time.perf_counter()
            feed.extend(step_lines(t, table, before, view).lines)
            per_step.append(time.perf_counter() - started)
            before = view
    total_entries = sum(entries)
    mean = statistics.mean(entries)
    print(f"hands: {len(hands)}, journal entries per hand: mean {mean:.1f}, max {max(entries)}")
    print(
        f"replay of a whole hand for the feed: mean {statistics.mean(per_hand) * 1e3:.2f} ms, "
        f"p99 {sorted(per_hand)[int(len(per_hand) * 0.99) - 1] * 1e3:.2f} ms, "
        f"{sum(per_hand) / total_entries * 1e6:.0f} µs per entry"
    )
    print(
        f"lines of one step: mean {statistics.mean(per_step) * 1e6:.0f} µs, "
        f"p99 {sorted(per_step)[int(len(per_step) * 0.99) - 1] * 1e6:.0f} µs"
    )
    shown = Content("\n".join(feed[-FEED_KEPT:]))
    runs = []
    for _ in range(50):
        started = time.perf_counter()
        broken(shown, 30)
        runs.append(time.perf_counter() - started)
    print(
        f"the feed's last {FEED_KEPT} lines broken at 30 columns (once per move shown): "
        f"mean {statistics.mean(runs) * 1e3:.2f} ms, max {max(runs) * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
