"""The leaderboard domain and the in-memory leaderboard store."""

from __future__ import annotations

import asyncio
import math

import pytest

from bot.leaderboard import (
    GLOBAL_SCOPE,
    GameResult,
    LeaderboardEntry,
    LeaderboardStore,
    MemoryLeaderboard,
    PlayerRef,
    PlayerStats,
    display_rating,
)
from bot.leaderboard._model import MODEL, apply_result

ANA = PlayerRef("tg:1", "Ana")
BEA = PlayerRef("tg:2", "Bea")
CARLOS = PlayerRef("tg:3", "Carlos")
DANI = PlayerRef("tg:4", "Dani")
MACHINE = PlayerRef("machine:normal", "Máquina")
CHAT = "tg:-100"
OTHER_CHAT = "tg:-200"


def result(
    winner: int = 0,
    kind: str = "game",
    chat: str = CHAT,
    teams: tuple[tuple[PlayerRef, PlayerRef], tuple[PlayerRef, PlayerRef]] = ((ANA, CARLOS), (BEA, DANI)),
) -> GameResult:
    return GameResult(chat, teams, winner, kind)  # type: ignore[arg-type]


@pytest.fixture
def board() -> MemoryLeaderboard:
    return MemoryLeaderboard()


def test_memory_leaderboard_satisfies_the_port(board: MemoryLeaderboard) -> None:
    assert isinstance(board, LeaderboardStore)


# -- domain ------------------------------------------------------------------------------------------------


def test_newcomer_display_rating_is_the_base() -> None:
    assert display_rating(MODEL.mu, MODEL.sigma) == 1000
    assert PlayerStats(name="x").ordinal == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"chat_key": ""}, ValueError),
        ({"chat_key": GLOBAL_SCOPE}, ValueError),
        ({"winner": 2}, ValueError),
        ({"winner": True}, ValueError),
        ({"kind": "hand"}, ValueError),
        ({"teams": ((ANA, BEA),)}, ValueError),
        ({"teams": ((ANA, "Bea"), (CARLOS, DANI))}, TypeError),
    ],
)
def test_invalid_results_are_rejected(kwargs: dict[str, object], error: type[Exception]) -> None:
    args: dict[str, object] = {"chat_key": CHAT, "teams": ((ANA, CARLOS), (BEA, DANI)), "winner": 0}
    args.update(kwargs)
    with pytest.raises(error):
        GameResult(**args)  # type: ignore[arg-type]


def test_player_ref_needs_a_key() -> None:
    with pytest.raises(ValueError):
        PlayerRef("", "nobody")


def test_stats_round_trip_through_fields() -> None:
    stats = PlayerStats("Ana", 27.123456789012345, 7.1, 3, 2, 1, 1, 1, 0, 1700000000.25)
    assert PlayerStats.from_fields(stats.to_fields()) == stats


def test_apply_result_rejects_a_non_finite_time() -> None:
    with pytest.raises(ValueError):
        apply_result(result(), {}, math.nan)


# -- recording -----------------------------------------------------------------------------------------------


async def test_winners_go_up_and_losers_down(board: MemoryLeaderboard) -> None:
    await board.record(result(winner=0), now=100.0)
    for player in (ANA, CARLOS):
        entry = await board.entry(CHAT, player.key)
        assert entry is not None
        assert entry.mu > MODEL.mu
        assert entry.rating > 1000
        assert (entry.games, entry.games_won) == (1, 1)
    for player in (BEA, DANI):
        entry = await board.entry(CHAT, player.key)
        assert entry is not None
        assert entry.mu < MODEL.mu
        assert entry.rating < 1000
        assert (entry.games, entry.games_won) == (1, 0)
    ana, carlos = await board.entry(CHAT, ANA.key), await board.entry(CHAT, CARLOS.key)
    assert ana is not None and carlos is not None
    assert (ana.mu, ana.sigma) == (carlos.mu, carlos.sigma)  # partners rated as a team
    assert ana.sigma < MODEL.sigma


async def test_partners_share_the_credit_of_an_upset(board: MemoryLeaderboard) -> None:
    for _ in range(5):
        await board.record(result(winner=0), now=1.0)
    before = await board.entry(CHAT, BEA.key)
    await board.record(result(winner=1), now=2.0)  # the weaker pair wins
    after = await board.entry(CHAT, BEA.key)
    assert before is not None and after is not None
    assert after.mu > before.mu


async def test_machines_are_rated_but_not_ranked(board: MemoryLeaderboard) -> None:
    """Issue 9: "1. 🤖 Nerea · 1049" on a leaderboard. Machines never appear, nor push people down."""
    nerea = PlayerRef("machine:normal:nerea", "🤖 Nerea")
    await board.record(result(winner=1, teams=((ANA, BEA), (MACHINE, nerea))), now=5.0)
    await board.record(result(winner=0, teams=((CARLOS, MACHINE), (DANI, nerea))), now=6.0)
    for scope in (CHAT, GLOBAL_SCOPE):
        for by in ("rating", "wins"):
            top = await board.top(scope, by=by)  # type: ignore[arg-type]
            assert sorted(e.key for e in top) == sorted(p.key for p in (ANA, BEA, CARLOS, DANI))
            assert top[0].rank == 1
            assert await board.entry(scope, MACHINE.key, by=by) is None  # type: ignore[arg-type]
            assert await board.entry(scope, nerea.key, by=by) is None  # type: ignore[arg-type]
    # Nerea (1 game won) is ahead of everyone by rating, yet Carlos, the only human winner, ranks first.
    carlos = await board.entry(CHAT, CARLOS.key)
    assert carlos is not None and carlos.rank == 1 and (await board.top(CHAT, n=1))[0].key == CARLOS.key


async def test_a_machine_rating_still_weighs_on_its_opponents() -> None:
    """Beating a machine pair that has won a lot moves a rating more than beating newcomer machines."""
    strong, fresh = MemoryLeaderboard(), MemoryLeaderboard()
    for _ in range(5):
        await strong.record(result(winner=1, teams=((ANA, BEA), (MACHINE, MACHINE))), now=1.0)
    for board in (strong, fresh):
        await board.record(result(winner=0, teams=((CARLOS, DANI), (MACHINE, MACHINE))), now=2.0)
    after_strong = await strong.entry(CHAT, CARLOS.key)
    after_fresh = await fresh.entry(CHAT, CARLOS.key)
    assert after_strong is not None and after_fresh is not None
    assert after_strong.mu > after_fresh.mu > MODEL.mu


async def test_a_machine_on_both_sides_is_left_alone(board: MemoryLeaderboard) -> None:
    await board.record(result(winner=0, teams=((ANA, MACHINE), (MACHINE, BEA))), now=5.0)
    assert await board.entry(CHAT, MACHINE.key) is None
    ana = await board.entry(CHAT, ANA.key)
    bea = await board.entry(CHAT, BEA.key)
    assert ana is not None and bea is not None
    assert ana.mu > MODEL.mu > bea.mu
    assert (ana.games, bea.games) == (1, 1)


async def test_chat_and_global_scopes_are_both_updated(board: MemoryLeaderboard) -> None:
    await board.record(result(winner=0, chat=CHAT), now=1.0)
    await board.record(result(winner=0, chat=OTHER_CHAT), now=2.0)
    here, there, everywhere = [
        await board.entry(scope, ANA.key) for scope in (CHAT, OTHER_CHAT, GLOBAL_SCOPE)
    ]
    assert here is not None and there is not None and everywhere is not None
    assert here.games == there.games == 1
    assert everywhere.games == 2
    assert here.mu == there.mu  # each scope rates on its own
    assert everywhere.mu > here.mu
    assert await board.entry("tg:-300", ANA.key) is None
    assert await board.top("tg:-300") == []


async def test_vacas_and_matches_only_count(board: MemoryLeaderboard) -> None:
    await board.record(result(winner=0), now=1.0)
    rated = await board.entry(CHAT, ANA.key)
    await board.record(result(winner=0, kind="vaca"), now=2.0)
    await board.record(result(winner=1, kind="vaca"), now=3.0)
    await board.record(result(winner=0, kind="match"), now=4.0)
    ana = await board.entry(CHAT, ANA.key)
    bea = await board.entry(GLOBAL_SCOPE, BEA.key)
    assert rated is not None and ana is not None and bea is not None
    assert (ana.mu, ana.sigma) == (rated.mu, rated.sigma)
    assert (ana.games, ana.vacas, ana.vacas_won, ana.matches, ana.matches_won) == (1, 2, 1, 1, 1)
    assert (bea.games, bea.vacas, bea.vacas_won, bea.matches, bea.matches_won) == (1, 2, 1, 1, 0)
    assert ana.last_played == 4.0


async def test_a_vaca_for_a_newcomer_creates_an_unrated_entry(board: MemoryLeaderboard) -> None:
    await board.record(result(kind="match"), now=1.0)
    ana = await board.entry(CHAT, ANA.key)
    assert ana is not None
    assert (ana.rating, ana.games, ana.matches, ana.matches_won) == (1000, 0, 1, 1)


async def test_top_orders_by_rating_and_by_wins(board: MemoryLeaderboard) -> None:
    # Ana+Carlos beat Bea+Dani twice; Bea+Carlos beat Ana+Dani three times.
    for _ in range(2):
        await board.record(result(winner=0), now=1.0)
    for _ in range(3):
        await board.record(result(winner=0, teams=((BEA, CARLOS), (ANA, DANI))), now=2.0)
    by_rating = await board.top(CHAT)
    assert by_rating[0].key == CARLOS.key
    assert by_rating[-1].key == DANI.key
    assert [e.rank for e in by_rating] == [1, 2, 3, 4]
    ordinals = [e.mu - 3 * e.sigma for e in by_rating]
    assert ordinals == sorted(ordinals, reverse=True)

    by_wins = await board.top(CHAT, by="wins")
    assert [(e.key, e.games_won, e.rank) for e in by_wins] == [
        (CARLOS.key, 5, 1),
        (BEA.key, 3, 2),
        (ANA.key, 2, 3),
        (DANI.key, 0, 4),
    ]
    assert [e.key for e in await board.top(CHAT, n=2)] == [e.key for e in by_rating[:2]]
    assert await board.top(CHAT, n=0) == []
    with pytest.raises(ValueError):
        await board.top(CHAT, by="losses")  # type: ignore[arg-type]


async def test_ties_share_a_rank_and_list_in_descending_key_order(board: MemoryLeaderboard) -> None:
    await board.record(result(winner=0), now=1.0)
    by_wins = await board.top(CHAT, by="wins")
    assert [(e.key, e.rank) for e in by_wins] == [(CARLOS.key, 1), (ANA.key, 1), (DANI.key, 3), (BEA.key, 3)]
    dani = await board.entry(CHAT, DANI.key, by="wins")
    assert dani is not None and dani.rank == 3


async def test_own_entry_has_its_rank(board: MemoryLeaderboard) -> None:
    await board.record(result(winner=0), now=1.0)
    await board.record(result(winner=0, teams=((ANA, BEA), (CARLOS, DANI))), now=2.0)
    top = await board.top(GLOBAL_SCOPE, n=10)
    for expected in top:
        entry = await board.entry(GLOBAL_SCOPE, expected.key)
        assert entry == expected
    ana = await board.entry(GLOBAL_SCOPE, ANA.key)
    assert isinstance(ana, LeaderboardEntry) and ana.rank == 1
    assert await board.entry(GLOBAL_SCOPE, "tg:999") is None


async def test_names_update_to_the_latest(board: MemoryLeaderboard) -> None:
    await board.record(result(), now=10.0)
    renamed = PlayerRef(ANA.key, "Ana María")
    await board.record(result(teams=((renamed, CARLOS), (BEA, DANI))), now=20.0)
    for scope in (CHAT, GLOBAL_SCOPE):
        entry = await board.entry(scope, ANA.key)
        assert entry is not None
        assert (entry.name, entry.games, entry.last_played) == ("Ana María", 2, 20.0)
    # A late report of an older result counts but does not bring the old name back.
    await board.record(result(), now=15.0)
    entry = await board.entry(CHAT, ANA.key)
    assert entry is not None
    assert (entry.name, entry.games, entry.last_played) == ("Ana María", 3, 20.0)


async def test_concurrent_records_lose_nothing(board: MemoryLeaderboard) -> None:
    await asyncio.gather(*(board.record(result(winner=i % 2), now=float(i)) for i in range(20)))
    for player in (ANA, BEA, CARLOS, DANI):
        entry = await board.entry(GLOBAL_SCOPE, player.key)
        assert entry is not None and entry.games == 20 and entry.games_won == 10


async def test_ping(board: MemoryLeaderboard) -> None:
    await board.ping()
