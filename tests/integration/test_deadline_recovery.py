"""Deadlines survive a worker that dies after its claim, and the sweep arms again the ones the store lost.

Workers are services on the Redis stores wired as in production (deadlines change atomically with the table
write), on the session server and on the session cluster with the test's key prefix, or on an
:class:`~bot.store._embedded.EmbeddedRedis` of the test's own when the test stops the server. "Worker A dies
after its claim" is a bare ``claim_due`` on A's store that nothing follows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from service_helpers import ANE, GROUP, GROUP2, Harness, english

from bot.kernel import ChatRef, Outcome, TableStatus
from bot.leaderboard import RedisLeaderboard
from bot.ops._bootstrap import run_deadlines
from bot.ops._sweep import DeadlineSweep, rearm_lost_deadlines
from bot.store import AnyRedis, RedisPreferences
from bot.store._embedded import EmbeddedRedis
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._redis_deadlines import RedisDeadlineStore
from bot.store._redis_store import RedisTableStore
from bot.table import FlowSettings

ClientFactory = Callable[..., Awaitable[AnyRedis]]
PAUSED = FlowSettings(turn_timeout=60, machine_delay=2, next_hand_delay=4, catch_window=3, lobby_timeout=900)
LEASE = 30.0
THIRD = ChatRef("tg:-300", False, "Third group")


def quick_client(url: str) -> Redis:
    """A client that gives up fast when the server is gone (the default retries for seconds)."""
    return Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=2.0,
        socket_connect_timeout=2.0,
        retry=Retry(ExponentialBackoff(cap=0.05, base=0.005), 2),
    )


def worker(client: AnyRedis, prefix: str, **kwargs: Any) -> Harness:
    """A service on Redis wired like ``bot.ops._bootstrap.redis_service`` (fake clock, seeded randomness)."""
    h = Harness(
        tables=RedisTableStore(client, prefix=prefix),
        deadlines=RedisDeadlineStore(client, prefix=prefix, lease_seconds=LEASE),
        prefs=RedisPreferences(client, prefix=prefix),
        leaderboard=RedisLeaderboard(client, prefix=prefix),
        settings=PAUSED,
        **kwargs,
    )
    h.deps.atomic_deadlines = True  # as production: the write and its deadlines in one script
    return h


async def scheduled(client: AnyRedis, prefix: str, key: str) -> float | None:
    """The due time of a deadline key in the store, or ``None`` if it is not scheduled."""
    return await RedisDeadlineStore(client, prefix).scheduled(key)


async def lose(client: AnyRedis, prefix: str, key: str) -> None:
    """Remove a deadline behind the service's back (as an older version's claim, or an outage, lost it)."""
    await client.zrem(RedisDeadlineStore(client, prefix).shard_key(key), key)


async def test_a_deadline_claimed_by_a_worker_that_died_fires_on_another_after_the_lease(
    make_client: ClientFactory, key_prefix: str
) -> None:
    client_b = await make_client()
    a = worker(await make_client(), key_prefix, seed=71)
    b = worker(client_b, key_prefix, seed=72, clock=a.clock)
    await english(a)
    tid = await a.started(GROUP, ANE)
    state = await a.load(tid)
    key, due = state.table.due_key, state.table.due
    assert key is not None and due is not None
    a.set_time(due)

    assert await a.deadlines.claim_due(a.now) == [key]  # worker A claims the deadline... and dies here
    assert await b.fire_due() == []  # B: the key is A's while the lease lasts
    a.set_time(due + LEASE - 0.5)
    assert await b.fire_due() == []
    assert (await b.load(tid)).version == state.version  # nothing happened yet

    a.set_time(due + LEASE)
    fired = await b.fire_due()  # the lease is over: B fires it
    assert len(fired) == 1 and fired[0].ok
    after = await b.load(tid)
    assert after.version > state.version
    assert after.table.due_key != key
    assert after.match is not None and after.match.hand is not None and state.match is not None
    assert after.table.hand_no > state.table.hand_no or len(after.match.hand.log) > len(state.match.hand.log)
    assert await scheduled(client_b, key_prefix, key) is None  # fired once, then gone
    assert after.table.due_key is not None
    assert await scheduled(client_b, key_prefix, after.table.due_key) == after.table.due


async def test_a_stale_deadline_that_fires_is_removed_not_leased_again(
    make_client: ClientFactory, key_prefix: str
) -> None:
    client = await make_client()
    h = worker(client, key_prefix, seed=73)
    await english(h, GROUP)
    tid = await h.lobby(GROUP, ANE)
    await h.deadlines.schedule(f"{tid}|turn|9-9", h.now - 1)  # a key the table no longer waits for
    await h.deadlines.schedule(f"{tid}|flash|3|0", h.now - 1)  # a catch window of a hand long gone
    await h.deadlines.schedule("garbage", h.now - 1)
    version = (await h.load(tid)).version
    assert len(await h.fire_due()) == 3
    assert (await h.load(tid)).version == version
    for key in (f"{tid}|turn|9-9", f"{tid}|flash|3|0", "garbage"):
        assert await scheduled(client, key_prefix, key) is None, key
    h.advance(LEASE + 1)
    assert await h.fire_due() == []


async def test_the_sweep_rearms_a_table_whose_deadline_was_lost(
    make_client: ClientFactory, key_prefix: str
) -> None:
    client = await make_client()
    h = worker(client, key_prefix, seed=74)
    await english(h)
    lost = await h.started(GROUP, ANE)
    leased = await h.lobby(GROUP2, ANE)
    finished = await h.lobby(THIRD, ANE)
    assert (await h.service.cancel(THIRD, ANE)).ok
    state = await h.load(lost)
    key, due = state.table.due_key, state.table.due
    assert key is not None and due is not None
    await lose(client, key_prefix, key)  # lost (as an older version's claim lost it)
    lobby_key = (await h.load(leased)).table.due_key
    assert lobby_key is not None
    await h.deadlines.schedule(lobby_key, h.now - 5)
    assert await h.deadlines.claim_due(h.now) == [lobby_key]  # in flight on some worker: leased
    assert (await h.load(finished)).table.status is TableStatus.CANCELLED

    assert await rearm_lost_deadlines(h.tables, h.deadlines) == [key]
    assert await scheduled(client, key_prefix, key) == due  # back at its own due time
    assert await scheduled(client, key_prefix, lobby_key) == h.now + LEASE  # the lease is left alone
    assert await rearm_lost_deadlines(h.tables, h.deadlines) == []  # nothing else is missing

    h.set_time(due)
    fired = await h.fire_due()
    assert [o.ok for o in fired] == [True]
    assert (await h.load(lost)).version > state.version  # the table moves on again


async def test_the_deadline_loop_sweeps_at_start_up(make_client: ClientFactory, key_prefix: str) -> None:
    client = await make_client()
    h = worker(client, key_prefix, seed=75)
    await english(h)
    tid = await h.lobby(GROUP, ANE)
    key = (await h.load(tid)).table.due_key
    assert key is not None
    await lose(client, key_prefix, key)
    fresh = worker(await make_client(), key_prefix, seed=76, clock=h.clock)  # a worker starting now
    stop = asyncio.Event()

    async def ignore(outcome: Outcome) -> None:
        pass

    loop = asyncio.create_task(
        run_deadlines(fresh.service, ignore, stop, clock=lambda: h.now, max_sleep=0.02)
    )
    try:
        for _ in range(250):
            if await scheduled(client, key_prefix, key) is not None:
                break
            await asyncio.sleep(0.02)
        assert await scheduled(client, key_prefix, key) == (await h.load(tid)).table.due
    finally:
        stop.set()
        await loop


async def test_sweeps_come_every_interval_and_after_an_outage() -> None:
    now = [100.0]
    tables, deadlines = MemoryTableStore(), MemoryDeadlineStore()
    calls: list[float] = []
    original = tables.live_tables

    async def counted() -> list[str]:
        calls.append(now[0])
        return await original()

    tables.live_tables = counted  # type: ignore[method-assign]
    sweep = DeadlineSweep(tables, deadlines, interval=60.0, clock=lambda: now[0])
    await sweep.run_if_due()  # at start-up
    now[0] = 159.0
    await sweep.run_if_due()
    now[0] = 160.0
    await sweep.run_if_due()
    sweep.soon()  # an outage ended
    now[0] = 161.0
    await sweep.run_if_due()
    await sweep.run_if_due()
    assert calls == [100.0, 160.0, 161.0]


async def test_an_outage_is_logged_once_and_the_loop_sweeps_when_the_store_is_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "redis"
    server = EmbeddedRedis(data, appendonly=True, if_running="fail").start()
    client = quick_client(server.url)
    restarted: EmbeddedRedis | None = None
    stop = asyncio.Event()
    loop: asyncio.Task[None] | None = None
    try:
        h = worker(client, "mus:", seed=77)
        await english(h)
        tid = await h.lobby(GROUP, ANE)
        key = (await h.load(tid)).table.due_key
        assert key is not None
        await lose(client, "mus:", key)  # lost while the store was going down
        server.stop()

        async def ignore(outcome: Outcome) -> None:
            pass

        caplog.set_level(logging.DEBUG, logger="bot")
        loop = asyncio.create_task(
            run_deadlines(h.service, ignore, stop, clock=lambda: h.now, max_sleep=0.02)
        )
        await asyncio.sleep(1.0)  # dozens of rounds of the loop against a dead store
        restarted = EmbeddedRedis(data, appendonly=True, if_running="fail").start()
        for _ in range(250):
            if await scheduled(client, "mus:", key) is not None:
                break
            await asyncio.sleep(0.02)
        assert await scheduled(client, "mus:", key) == (await h.load(tid)).table.due  # swept once back
        stop.set()
        await loop
        loop = None
    finally:
        stop.set()
        if loop is not None:
            await loop
        await client.aclose()
        if restarted is not None:
            restarted.stop()
        server.stop()

    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    down = [r for r in loud if "unavailable" in r.getMessage()]
    back = [r for r in loud if "answers again" in r.getMessage()]
    assert len(down) == 1, [r.getMessage() for r in loud]
    assert "Redis is unavailable" in down[0].getMessage()  # the cause
    assert len(back) == 1, [r.getMessage() for r in loud]
    assert not [r for r in loud if r.exc_info], "no traceback"
    assert [r for r in loud if r not in down and r not in back and "re-armed" not in r.getMessage()] == []
