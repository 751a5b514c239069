"""Machine-only matches: ``python -m engine.simulate --matches N --seed S``.

Plays whole matches with machine players in every seat and prints what happened: matches, games, hands,
average hands per game, órdagos, how often each lance was bet, señas made and caught. The same seed gives
the same matches.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.actions import Action, ActionKind
from engine.ai.policy import POLICIES, Policy, make_policy
from engine.betting import BetStatus
from engine.errors import MusError
from engine.evaluation import Lance
from engine.match import Match, MatchConfig
from engine.views import SeatView


@dataclass
class SimulationStats:
    """Counters of what happened over simulated matches."""

    matches: int = 0
    games: int = 0
    hands: int = 0
    actions: int = 0
    match_wins: list[int] = field(default_factory=lambda: [0, 0])
    ordagos_proposed: int = 0
    ordagos_accepted: int = 0
    senas_made: int = 0
    senas_caught: int = 0
    mus_rounds: int = 0
    lance_played: Counter[Lance] = field(default_factory=Counter)
    """Lances that had betting (both teams taking part)."""
    lance_bet: Counter[Lance] = field(default_factory=Counter)
    """Lances in which someone proposed a bet or an órdago."""
    lance_outcome: Counter[tuple[Lance, BetStatus]] = field(default_factory=Counter)

    def report(self) -> str:
        """A human-readable summary."""
        lines = [
            f"matches            {self.matches}  "
            f"(team 0 won {self.match_wins[0]}, team 1 won {self.match_wins[1]})",
            f"games              {self.games}",
            f"hands              {self.hands}",
            f"hands per game     {self.hands / max(self.games, 1):.2f}",
            f"actions            {self.actions}",
            f"mus rounds         {self.mus_rounds} ({self.mus_rounds / max(self.hands, 1):.2f} per hand)",
            f"órdagos            {self.ordagos_proposed} proposed, {self.ordagos_accepted} accepted",
            f"señas              {self.senas_made} made, {self.senas_caught} caught",
            "lance   with betting   bet in   paso  accepted  refused  órdago",
        ]
        for lance in Lance:
            played = self.lance_played[lance]
            bet = self.lance_bet[lance]
            share = f"{100 * bet / played:5.1f}%" if played else "    -"
            outcomes = [
                self.lance_outcome[(lance, s)]
                for s in (BetStatus.PASO, BetStatus.ACCEPTED, BetStatus.REFUSED, BetStatus.ORDAGO)
            ]
            lines.append(
                f"{lance.value:<7} {played:>12}   {share:>6} {outcomes[0]:>6} {outcomes[1]:>9} "
                f"{outcomes[2]:>8} {outcomes[3]:>7}"
            )
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Turn:
    """One seat's turn as :func:`play_turn` played it."""

    seat: int
    view: SeatView
    """What the seat saw when it decided (after its own seña, if it made one)."""
    action: Action
    lance: Lance | None
    """The lance being bet when the seat acted (``None`` in mus and discards)."""
    senas_made: int
    senas_caught: int


def play_turn(match: Match, policies: Sequence[Policy], rng: random.Random, clock: float) -> Turn:
    """Let the seat on turn make a seña (and its rivals try to catch it), then decide and act.

    ``clock`` is the time of the seña in seconds; catches happen half a second later, inside the window.
    """
    hand = match.hand
    assert hand is not None and hand.turn is not None
    seat = hand.turn
    view = match.view_for(seat)
    made_count = caught = 0
    sena = policies[seat].choose_sena(view, rng)
    if sena is not None:
        try:
            made = match.make_sena(seat, sena, clock)
        except MusError:
            made = None
        if made is not None:
            made_count = 1
            for rival in ((seat + 1) % 4, (seat + 3) % 4):
                rival_view = match.view_for(rival)
                if policies[rival].wants_catch(rival_view, rival_view.senas[made.index], rng):
                    match.catch_sena(rival, made.index, clock + 0.5)
                    caught += 1
            view = match.view_for(seat)
    action = policies[seat].decide(view, rng)
    lance = hand.lance
    match.act(seat, action)
    return Turn(seat, view, action, lance, made_count, caught)


def opens_bet(turn: Turn) -> bool:
    """Whether the turn opened the betting of its lance (an envido or an órdago with no bet standing)."""
    betting = turn.view.betting
    return (
        turn.lance is not None
        and betting is not None
        and betting.proposer is None
        and turn.action.kind in (ActionKind.ENVIDO, ActionKind.ORDAGO)
    )


def play_hand(match: Match, policies: Sequence[Policy], rng: random.Random, stats: SimulationStats) -> None:
    """Deal and play one hand of ``match`` with a policy per seat, counting into ``stats``."""
    hand = match.new_hand(rng)
    clock = 0.0
    while not hand.over:
        clock += 1.0
        turn = play_turn(match, policies, rng, clock)
        stats.actions += 1
        stats.senas_made += turn.senas_made
        stats.senas_caught += turn.senas_caught
        if turn.action.kind is ActionKind.ORDAGO:
            stats.ordagos_proposed += 1
        if opens_bet(turn):
            assert turn.lance is not None
            stats.lance_bet[turn.lance] += 1
    stats.hands += 1
    stats.mus_rounds += hand.mus_round
    for result in hand.results.values():
        if result.status is not BetStatus.NO_BET:
            stats.lance_played[result.lance] += 1
            stats.lance_outcome[(result.lance, result.status)] += 1
    if hand.ordago is not None:
        stats.ordagos_accepted += 1
    if hand.winner is not None:
        stats.games += 1


def play_match(
    policies: Sequence[Policy],
    rng: random.Random,
    config: MatchConfig | None = None,
    stats: SimulationStats | None = None,
) -> Match:
    """Play a whole match with one policy per seat (0..3); return the finished match."""
    stats = stats if stats is not None else SimulationStats()
    match = Match(config, first_mano=rng.randrange(4))
    while not match.over:
        play_hand(match, policies, rng, stats)
    stats.matches += 1
    assert match.winner is not None
    stats.match_wins[match.winner] += 1
    return match


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m engine.simulate``."""
    parser = argparse.ArgumentParser(prog="python -m engine.simulate", description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10, help="matches to play (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--a", default="baseline", choices=sorted(POLICIES), help="player of seats 0 and 2")
    parser.add_argument("--b", default="baseline", choices=sorted(POLICIES), help="player of seats 1 and 3")
    parser.add_argument("--senas", action="store_true", help="play with señas")
    parser.add_argument("--target", type=int, default=40, help="stones per game (default 40)")
    args = parser.parse_args(argv)
    if args.matches < 1 or args.target < 1:
        parser.error("--matches and --target must be at least 1")
    rng = random.Random(args.seed)
    a, b = make_policy(args.a), make_policy(args.b)
    policies = [a, b, a, b]
    config = MatchConfig(target=args.target, senas=args.senas)
    stats = SimulationStats()
    for _ in range(args.matches):
        play_match(policies, rng, config, stats)
    print(f"seed {args.seed}: {args.a} (seats 0+2) vs {args.b} (seats 1+3)")
    print(stats.report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
