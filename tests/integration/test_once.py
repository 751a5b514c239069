"""Deliveries acted on once: the same contract for Redis (shared by workers) and memory."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.store import MemoryOnce, RedisOnce


async def test_redis_once_lets_one_of_many_workers_act(redis_client: Redis, key_prefix: str) -> None:
    workers = [RedisOnce(redis_client, key_prefix) for _ in range(5)]
    firsts = await asyncio.gather(*(w.first("tg:1:update:42") for w in workers))
    assert sorted(firsts) == [False] * 4 + [True]
    assert await workers[0].first("tg:1:update:43")
    ttl = await redis_client.ttl(f"{key_prefix}once:tg:1:update:42")
    assert 0 < ttl <= 600


async def test_memory_once_forgets_after_its_ttl_and_stays_bounded() -> None:
    now = [0.0]
    once = MemoryOnce(capacity=10, clock=lambda: now[0])
    assert await once.first("a", ttl=5) and not await once.first("a", ttl=5)
    now[0] = 6.0
    assert await once.first("a", ttl=5)
    for i in range(100):
        await once.first(f"k{i}")
    assert len(once._seen) == 10


async def test_redis_outbox_keeps_order_pops_once_and_is_capped(redis_client: Redis, key_prefix: str) -> None:
    from bot.delivery import RedisOutbox
    from bot.delivery import _outbox as outbox_module
    from bot.kernel import OutMessage

    box = RedisOutbox(redis_client, key_prefix)
    views = [OutMessage(slot="notice", text=f"n{i}", chat="tg:-1", fresh=True) for i in range(5)]
    await box.push("tg", views[:3])
    await box.push("tg", views[3:])
    assert await box.pop("tg", 2) == views[:2]
    assert await box.pop("tg") == views[2:]
    assert await box.pop("tg") == [] and await box.pop("dc") == []
    outbox_module.OUTBOX_CAP = 3
    try:
        await box.push("dc", views)
        assert await box.pop("dc") == views[-3:]  # the oldest dropped
    finally:
        outbox_module.OUTBOX_CAP = 10_000


async def test_a_delivery_held_by_a_worker_that_died_is_handled_after_the_lease(
    redis_client: Redis, key_prefix: str
) -> None:
    dead, alive = RedisOnce(redis_client, key_prefix), RedisOnce(redis_client, key_prefix)
    assert await dead.first("tg:1:update:7", ttl=1)  # claimed, then the worker is killed: never done
    assert not await alive.first("tg:1:update:7", ttl=1)  # while it may still be handled: left alone
    await asyncio.sleep(1.1)
    assert await alive.first("tg:1:update:7", ttl=1)  # the retry is handled
    await alive.done("tg:1:update:7")
    await asyncio.sleep(1.1)
    assert not await dead.first("tg:1:update:7", ttl=1)  # handled: remembered long after the lease


async def test_memory_once_holds_briefly_and_remembers_what_was_handled() -> None:
    now = [0.0]
    once = MemoryOnce(clock=lambda: now[0])
    assert await once.first("a", ttl=5) and not await once.first("a", ttl=5)
    now[0] = 6.0
    assert await once.first("a", ttl=5)  # the first holder never said it was done
    await once.done("a", ttl=600)
    now[0] = 100.0
    assert not await once.first("a", ttl=5)
