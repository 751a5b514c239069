"""Pairs against pairs on mirrored deals: ``python -m engine.arena --a hard --b baseline --games 2000``.

``--population`` plays each machine level (and the baseline, for reference) against each opponent style of
:mod:`engine.ai.population` (tight and loose callers, a bluffer, a passive player, a mixed pair) and prints
one line per pairing: A's game win rate with its 95% interval and A's órdagos proposed, accepted and won.

Player A takes seats 0+2 and player B seats 1+3; every game (``--games N``: single games to the target) or
match (``--matches N``: games, vacas, match) is played twice from the same deal seed, once with A on seats
0+2 and once on seats 1+3, so both sides get the same cards (the deals repeat hand by hand: each hand is
shuffled by its own generator drawn from the deal stream, never by the players' generator). It prints the
game and match win rates of A with 95% Wilson intervals, stones per hand, how often each side opened a bet
in each lance, órdagos proposed, accepted and won. The same seed prints the same figures.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from engine.actions import ActionKind
from engine.ai.policy import POLICIES, Policy
from engine.ai.population import STYLES
from engine.betting import BetStatus
from engine.cards import Card
from engine.evaluation import Lance
from engine.match import Match, MatchConfig
from engine.simulate import opens_bet, play_turn

#: Sides: A and B.
SIDES = ("A", "B")
#: Every player the arena knows: the machine players and the opponent styles.
PLAYERS: dict[str, Callable[[], Policy]] = {**POLICIES, **STYLES}
#: The rows of ``--population``: the levels, and the baseline for reference.
POPULATION_LEVELS = ("baseline", "easy", "normal", "hard")


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); ``(0, 1)`` without trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class ArenaStats:
    """What happened over the arena's games, by side (index 0 = A, 1 = B)."""

    games: int = 0
    game_wins: list[int] = field(default_factory=lambda: [0, 0])
    matches: int = 0
    match_wins: list[int] = field(default_factory=lambda: [0, 0])
    hands: int = 0
    stones: list[int] = field(default_factory=lambda: [0, 0])
    lance_stones: list[Counter[Lance]] = field(default_factory=lambda: [Counter(), Counter()])
    """Stones each side took in each lance (dejes included)."""
    lance_played: Counter[Lance] = field(default_factory=Counter)
    """Lances with betting (both teams taking part)."""
    lance_bet: list[Counter[Lance]] = field(default_factory=lambda: [Counter(), Counter()])
    """Lances in which the side opened a bet or an órdago."""
    ordagos_proposed: list[int] = field(default_factory=lambda: [0, 0])
    ordagos_accepted: list[int] = field(default_factory=lambda: [0, 0])
    """Órdagos proposed by the side and accepted."""
    ordagos_won: list[int] = field(default_factory=lambda: [0, 0])
    """Accepted órdagos that the side proposed and won."""
    decisions: int = 0

    def merge(self, other: ArenaStats) -> None:
        """Add another set of counters into this one."""
        self.games += other.games
        self.matches += other.matches
        self.hands += other.hands
        self.decisions += other.decisions
        self.lance_played.update(other.lance_played)
        for i in range(2):
            self.game_wins[i] += other.game_wins[i]
            self.match_wins[i] += other.match_wins[i]
            self.stones[i] += other.stones[i]
            self.lance_stones[i].update(other.lance_stones[i])
            self.lance_bet[i].update(other.lance_bet[i])
            self.ordagos_proposed[i] += other.ordagos_proposed[i]
            self.ordagos_accepted[i] += other.ordagos_accepted[i]
            self.ordagos_won[i] += other.ordagos_won[i]

    def report(self, a: str, b: str) -> str:
        """The figures, as printed by the command."""
        lines = []
        lo, hi = wilson(self.game_wins[0], self.games)
        share = self.game_wins[0] / max(self.games, 1)
        lines.append(
            f"games        {self.games:>6}   {a} won {self.game_wins[0]} ({100 * share:.1f}%), "
            f"95% CI [{100 * lo:.1f}%, {100 * hi:.1f}%]; {b} won {self.game_wins[1]}"
        )
        if self.matches:
            lo, hi = wilson(self.match_wins[0], self.matches)
            share = self.match_wins[0] / self.matches
            lines.append(
                f"matches      {self.matches:>6}   {a} won {self.match_wins[0]} ({100 * share:.1f}%), "
                f"95% CI [{100 * lo:.1f}%, {100 * hi:.1f}%]; {b} won {self.match_wins[1]}"
            )
        hands = max(self.hands, 1)
        lines.append(f"hands        {self.hands:>6}   ({self.hands / max(self.games, 1):.2f} per game)")
        lines.append(
            f"stones/hand           {a} {self.stones[0] / hands:.2f}, {b} {self.stones[1] / hands:.2f}"
            f" (difference {(self.stones[0] - self.stones[1]) / hands:+.2f})"
        )
        lines.append(
            f"lance      with betting  {a + ' bet':>10} {b + ' bet':>10}   "
            f"{a + ' st/h':>10} {b + ' st/h':>10}   (share of lances each side opened; stones per hand)"
        )
        for lance in Lance:
            played = self.lance_played[lance]
            shares = [
                f"{100 * self.lance_bet[i][lance] / played:9.1f}%" if played else "         -"
                for i in range(2)
            ]
            stones = [f"{self.lance_stones[i][lance] / hands:10.2f}" for i in range(2)]
            lines.append(
                f"  {lance.value:<7} {played:>15}  {shares[0]} {shares[1]}   {stones[0]} {stones[1]}"
            )
        for i, name in enumerate((a, b)):
            lines.append(
                f"órdagos {name:>10}: {self.ordagos_proposed[i]} proposed, "
                f"{self.ordagos_accepted[i]} accepted, {self.ordagos_won[i]} won"
            )
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class DealRecord:
    """One hand's deal as dealt: the mano and the four hands (for checking that mirrored deals repeat)."""

    mano: int
    hands: tuple[tuple[Card, ...], ...]


def _pair_seed(seed: int, index: int) -> int:
    return random.Random(seed * 1_000_003 + index).getrandbits(64)


def play_one(
    policies: Sequence[Policy],
    deal_seed: int,
    config: MatchConfig,
    a_team: int,
    stats: ArenaStats,
    deals: list[DealRecord] | None = None,
) -> int:
    """Play one game or match (as ``config`` says) and return the winning team; count into ``stats``.

    ``policies`` is per seat; ``a_team`` is the team (0 or 1) of side A. Deals come from ``deal_seed`` only;
    the players draw from their own generator (seeded from ``deal_seed`` too, but a separate stream).
    """
    deal_rng = random.Random(deal_seed)
    play_rng = random.Random(deal_seed ^ 0x5EED5EED)
    match = Match(config, first_mano=deal_rng.randrange(4))
    side_of_team = (0, 1) if a_team == 0 else (1, 0)
    clock = 0.0
    while not match.over:
        hand = match.new_hand(random.Random(deal_rng.getrandbits(64)))
        if deals is not None:
            deals.append(DealRecord(hand.mano, tuple(tuple(h) for h in hand.initial_hands)))
        ordago_by: int | None = None
        while not hand.over:
            clock += 1.0
            turn = play_turn(match, policies, play_rng, clock)
            stats.decisions += 1
            side = side_of_team[turn.seat % 2]
            if turn.action.kind is ActionKind.ORDAGO:
                stats.ordagos_proposed[side] += 1
                ordago_by = side
            if opens_bet(turn):
                assert turn.lance is not None
                stats.lance_bet[side][turn.lance] += 1
        stats.hands += 1
        for team in (0, 1):
            stats.stones[side_of_team[team]] += hand.scores[team] - hand.start_scores[team]
        for lance, points in hand.points.items():
            for team in (0, 1):
                stats.lance_stones[side_of_team[team]][lance] += points[team]
        for result in hand.results.values():
            if result.status is not BetStatus.NO_BET:
                stats.lance_played[result.lance] += 1
        if hand.ordago is not None and ordago_by is not None:
            stats.ordagos_accepted[ordago_by] += 1
            if side_of_team[hand.ordago.team] == ordago_by:
                stats.ordagos_won[ordago_by] += 1
        if hand.winner is not None:
            stats.games += 1
            stats.game_wins[side_of_team[hand.winner]] += 1
    assert match.winner is not None
    return match.winner


def play_pairs(
    a: Callable[[], Policy],
    b: Callable[[], Policy],
    seed: int,
    first: int,
    count: int,
    config: MatchConfig,
    matches: bool,
) -> ArenaStats:
    """Play the mirrored pairs ``first .. first + count - 1`` of a run; return their counters."""
    stats = ArenaStats()
    pa, pb = a(), b()
    for index in range(first, first + count):
        deal_seed = _pair_seed(seed, index)
        for a_team in (0, 1):
            policies = [pa, pb, pa, pb] if a_team == 0 else [pb, pa, pb, pa]
            winner = play_one(policies, deal_seed, config, a_team, stats)
            if matches:
                stats.matches += 1
                stats.match_wins[0 if winner == a_team else 1] += 1
    return stats


def _worker(args: tuple[str, str, int, int, int, MatchConfig, bool]) -> ArenaStats:
    a, b, seed, first, count, config, matches = args
    return play_pairs(PLAYERS[a], PLAYERS[b], seed, first, count, config, matches)


def run_arena(
    a: str,
    b: str,
    *,
    seed: int = 1,
    games: int = 0,
    matches: int = 0,
    senas: bool = False,
    target: int = 40,
    jobs: int = 1,
) -> ArenaStats:
    """Play ``games`` single games or ``matches`` matches (rounded up to mirrored pairs) of A against B."""
    if (games > 0) == (matches > 0):
        raise ValueError("give either games or matches")
    pairs = (max(games, matches) + 1) // 2
    if matches:
        config = MatchConfig(target=target, senas=senas)
    else:
        config = MatchConfig(target=target, senas=senas, games_per_vaca=1, vacas_per_match=1)
    jobs = max(1, min(jobs, pairs))
    if jobs == 1:
        return play_pairs(PLAYERS[a], PLAYERS[b], seed, 0, pairs, config, matches > 0)
    chunk = max(1, min(25, pairs // (4 * jobs) or 1))
    tasks = [
        (a, b, seed, first, min(chunk, pairs - first), config, matches > 0)
        for first in range(0, pairs, chunk)
    ]
    total = ArenaStats()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for part in pool.map(_worker, tasks):
            total.merge(part)
    return total


def population_line(a: str, b: str, stats: ArenaStats) -> str:
    """One line of the population table: A's game wins with the 95% interval, A's órdagos."""
    lo, hi = wilson(stats.game_wins[0], stats.games)
    share = stats.game_wins[0] / max(stats.games, 1)
    return (
        f"{a:<9} {b:<9} {stats.games:>6} {100 * share:>6.1f}%  [{100 * lo:5.1f}%, {100 * hi:5.1f}%]  "
        f"{stats.ordagos_proposed[0]:>8} {stats.ordagos_accepted[0]:>8} {stats.ordagos_won[0]:>6}"
    )


def run_population(
    levels: Sequence[str], styles: Sequence[str], *, seed: int, games: int, target: int, jobs: int
) -> list[str]:
    """Play every level against every style (``games`` single games each), printing the table's lines
    as they come; return them."""
    lines = [
        f"{'player':<9} {'rival':<9} {'games':>6} {'won':>7}  {'95% interval':<16}  "
        f"{'órdagos':>8} {'accepted':>8} {'won':>6}"
    ]
    print(lines[0], flush=True)
    for style in styles:
        for level in levels:
            stats = run_arena(level, style, seed=seed, games=games, target=target, jobs=jobs)
            lines.append(population_line(level, style, stats))
            print(lines[-1], flush=True)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m engine.arena``."""
    parser = argparse.ArgumentParser(prog="python -m engine.arena", description=__doc__.splitlines()[0])
    names = sorted(PLAYERS)
    parser.add_argument("--a", default="hard", choices=names, help="player of side A (default hard)")
    parser.add_argument("--b", default="baseline", choices=names, help="player of side B (default baseline)")
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--matches", type=int, help="matches to play (rounded up to mirrored pairs)")
    amount.add_argument("--games", type=int, help="single games to the target (rounded up to mirrored pairs)")
    parser.add_argument("--seed", type=int, default=1, help="deal seed (default 1)")
    parser.add_argument("--senas", action="store_true", help="play with señas")
    parser.add_argument("--target", type=int, default=40, help="stones per game (default 40)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--population",
        action="store_true",
        help="every level (and the baseline) against every opponent style, single games (default 2000)",
    )
    parser.add_argument(
        "--levels", default=",".join(POPULATION_LEVELS), help="rows of --population (comma-separated)"
    )
    parser.add_argument(
        "--styles", default=",".join(STYLES), help="columns of --population (comma-separated)"
    )
    args = parser.parse_args(argv)
    games = args.games or 0
    matches = args.matches or 0
    if games < 0 or matches < 0 or args.target < 1 or args.jobs < 1:
        parser.error("--games, --matches, --target and --jobs must be positive")
    if args.population:
        levels, styles = args.levels.split(","), args.styles.split(",")
        unknown = [n for n in (*levels, *styles) if n not in PLAYERS]
        if unknown or matches:
            parser.error(f"--population plays single games of known players (unknown: {', '.join(unknown)})")
        games = games or 2000
        print(
            f"population seed {args.seed}: {games} games to {args.target} per line, mirrored; "
            "A = player, B = rival; órdagos are the player's (proposed, accepted, won)"
        )
        run_population(levels, styles, seed=args.seed, games=games, target=args.target, jobs=args.jobs)
        return 0
    if not games and not matches:
        matches = 10
    stats = run_arena(
        args.a, args.b, seed=args.seed, games=games, matches=matches, senas=args.senas, target=args.target,
        jobs=args.jobs,
    )  # fmt: skip
    what = f"{stats.matches} matches" if matches else f"{stats.games} games to {args.target}"
    print(
        f"arena seed {args.seed}: A = {args.a}, B = {args.b}; {what}, mirrored "
        f"(each deal played with A on seats 0+2 and on 1+3){', señas on' if args.senas else ''}"
    )
    print(stats.report(args.a, args.b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
