"""The arena: mirrored deals really repeat, the figures add up, the command prints them."""

from __future__ import annotations

import random

import pytest

from engine.ai import BaselinePlayer, RandomPlayer
from engine.ai.policy import Policy
from engine.arena import ArenaStats, DealRecord, main, play_one, run_arena, wilson
from engine.match import MatchConfig

SINGLE = MatchConfig(games_per_vaca=1, vacas_per_match=1)


def test_wilson_interval() -> None:
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and 0.65 < lo < 0.75
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(1900, 2000)
    assert lo < 0.95 < hi


def _deals(policies: list[Policy], a_team: int, seed: int, config: MatchConfig = SINGLE) -> list[DealRecord]:
    deals: list[DealRecord] = []
    play_one(policies, seed, config, a_team, ArenaStats(), deals)
    return deals


def test_mirrored_deals_repeat_with_the_pairs_swapped() -> None:
    a, b = RandomPlayer(), BaselinePlayer()
    for seed in range(5):
        straight = _deals([a, b, a, b], 0, seed)
        swapped = _deals([b, a, b, a], 1, seed)
        common = min(len(straight), len(swapped))
        assert common >= 1
        # hand by hand the same mano and the same cards in the same seats: A now holds what B held
        assert straight[:common] == swapped[:common]
        # and the deals do not depend on the players at all
        assert _deals([b, b, b, b], 0, seed)[:1] == straight[:1]


def test_deals_do_not_depend_on_how_the_players_play() -> None:
    seed = 11
    random_deals = _deals([RandomPlayer()] * 4, 0, seed, MatchConfig())
    baseline_deals = _deals([BaselinePlayer()] * 4, 0, seed, MatchConfig())
    common = min(len(random_deals), len(baseline_deals))
    assert common >= 4
    assert random_deals[:common] == baseline_deals[:common]
    # different deal seeds deal differently
    assert _deals([RandomPlayer()] * 4, 0, seed + 1)[0] != random_deals[0]


def test_identical_players_tie_exactly_on_mirrored_deals() -> None:
    stats = run_arena("baseline", "baseline", seed=3, games=10)
    assert stats.games == 10
    assert stats.game_wins == [5, 5]
    assert stats.stones[0] == stats.stones[1]
    assert stats.ordagos_proposed[0] == stats.ordagos_proposed[1]


def test_counters_add_up() -> None:
    stats = run_arena("random", "baseline", seed=2, games=6)
    assert stats.games == 6 and sum(stats.game_wins) == 6
    assert stats.hands >= stats.games
    for side in range(2):
        assert stats.ordagos_won[side] <= stats.ordagos_accepted[side] <= stats.ordagos_proposed[side]
        assert sum(stats.lance_stones[side].values()) == stats.stones[side]
        for lance, bets in stats.lance_bet[side].items():
            assert bets <= stats.lance_played[lance]
    matches = run_arena("random", "baseline", seed=2, matches=2)
    assert matches.matches == 2 and sum(matches.match_wins) == 2
    assert matches.games >= 4
    with pytest.raises(ValueError):
        run_arena("random", "baseline", games=2, matches=2)


def test_the_command_prints_the_figures_and_repeats_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--a", "easy", "--b", "random", "--games", "4", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "A = easy, B = random; 4 games to 40, mirrored" in out
    for label in ("games", "hands", "stones/hand", "grande", "chica", "pares", "juego", "punto", "órdagos"):
        assert label in out, label
    assert "95% CI [" in out
    assert main(["--a", "easy", "--b", "random", "--games", "4", "--seed", "5"]) == 0
    assert capsys.readouterr().out == out
    assert main(["--a", "random", "--b", "baseline", "--matches", "2", "--seed", "1", "--target", "12"]) == 0
    out = capsys.readouterr().out
    assert "2 matches" in out and "matches" in out.splitlines()[2]


def test_the_command_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--games", "-3"])
    with pytest.raises(SystemExit):
        main(["--a", "nobody"])
    with pytest.raises(SystemExit):
        main(["--games", "2", "--matches", "2"])
    capsys.readouterr()


def test_player_generators_are_separate_from_the_deal_generator() -> None:
    # The deal stream is a function of the seed alone: the first hand is the same whatever rng state.
    random.seed(12345)  # global state must not matter either
    first = _deals([RandomPlayer()] * 4, 0, 99)[0]
    random.seed(54321)
    assert _deals([RandomPlayer()] * 4, 0, 99)[0] == first
