"""Machine-player benchmark: decision latency per level. Prints figures, asserts nothing.

    python bench/ai.py [--decisions N] [--seed S] [--levels easy,normal,hard] [--rivals baseline,random]
                       [--matches]

Each level plays whole games (``--matches``: whole matches of two vacas of two games, as the bot's tables
by default, so the players carry a longer record of the rivals' answers) against each rival (both sides of
the table) until it has made N decisions;
every ``decide`` call of the measured player is timed (mus, discards and every betting lance), and the
mean, median, p99 and maximum are printed, overall and per phase. Targets on the project's 2-core machine
(issue 14): ``normal`` mean <= 0.3 ms, ``hard`` mean <= 2 ms, p99 <= 10 ms for both.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

# bench/engine.py would shadow the engine package: put the project root, not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from engine.ai.policy import Policy, make_policy
from engine.hand_types import Phase
from engine.match import Match, MatchConfig


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(
    player: Policy, rival: Policy, decisions: int, seed: int, matches: bool = False
) -> dict[Phase, list[float]]:
    """Time ``decisions`` calls of ``player.decide`` in games (or whole matches) against ``rival``; seconds
    per phase."""
    rng = random.Random(seed)
    times: dict[Phase, list[float]] = defaultdict(list)
    done = 0
    game = 0
    while done < decisions:
        policies: list[Policy] = (
            [player, rival, player, rival] if game % 2 == 0 else [rival, player, rival, player]
        )
        config = MatchConfig() if matches else MatchConfig(games_per_vaca=1, vacas_per_match=1)
        match = Match(config, first_mano=game % 4)
        game += 1
        while not match.over and done < decisions:
            hand = match.new_hand(rng)
            while not hand.over:
                seat = hand.turn
                assert seat is not None
                view = match.view_for(seat)
                policy = policies[seat]
                if policy is player:
                    start = time.perf_counter()
                    action = policy.decide(view, rng)
                    times[view.phase].append(time.perf_counter() - start)
                    done += 1
                else:
                    action = policy.decide(view, rng)
                match.act(seat, action)
    return times


def main() -> None:
    """Measure every level and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--decisions", type=int, default=3000, help="decisions timed per level (default 3000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--levels", default="easy,normal,hard", help="comma-separated player names")
    parser.add_argument("--rivals", default="baseline,random", help="comma-separated rival names")
    parser.add_argument("--matches", action="store_true", help="whole matches instead of single games")
    args = parser.parse_args()
    what = "whole matches" if args.matches else "single games"
    print(
        f"python {sys.version.split()[0]}, one core; {args.decisions} decisions per player and rival, {what}"
    )
    head = f"{'player':<9} {'rival':<9} {'decisions':>9} {'mean ms':>8} {'p50 ms':>7} {'p99 ms':>7}"
    head += f" {'max ms':>7}"
    print(f"{head}   mean ms by phase")
    for name in args.levels.split(","):
        for rival in args.rivals.split(","):
            times = measure(make_policy(name), make_policy(rival), args.decisions, args.seed, args.matches)
            every = [t * 1000 for ts in times.values() for t in ts]
            by_phase = "  ".join(
                f"{phase.value} {statistics.fmean(ts) * 1000:.1f}"
                for phase in Phase
                if (ts := times.get(phase))
            )
            print(
                f"{name:<9} {rival:<9} {len(every):>9} {statistics.fmean(every):>8.2f} "
                f"{_p(every, 0.5):>7.2f} {_p(every, 0.99):>7.2f} {max(every):>7.2f}   {by_phase}"
            )
    print("targets: normal mean <= 0.3 ms, hard mean <= 2 ms, p99 <= 10 ms")


if __name__ == "__main__":
    main()
