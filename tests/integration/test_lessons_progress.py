"""Learners' progress in the lessons: one contract for Redis (one server and a cluster) and memory.

Every Redis test runs twice (``[single]``, ``[cluster]``: see ``conftest.py``); each operation touches the
learner's one key, so a cluster runs it wherever that key lives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bot.app import Service, ServiceDeps
from bot.kernel import ChatRef, UserRef
from bot.lessons import MemoryProgress, Progress, ProgressStore, RedisProgress
from bot.store import AnyRedis
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._prefs import MemoryPreferences

StoreFactory = Callable[[], Awaitable[ProgressStore]]


async def nothing_stored_until_a_first_write(stores: StoreFactory) -> None:
    store = await stores()
    assert await store.get("tg:1") is None
    assert not await store.replace("tg:1", Progress(1, 0), Progress(1, 1))  # expected one, none stored
    assert await store.get("tg:1") is None
    assert await store.replace("tg:1", None, Progress(1, 0))
    assert await store.get("tg:1") == Progress(1, 0)


async def a_step_moves_on_only_from_the_expected_progress(stores: StoreFactory) -> None:
    store = await stores()
    await store.replace("tg:1", None, Progress(2, 0))
    assert not await store.replace("tg:1", None, Progress(9, 9))  # something is stored
    assert not await store.replace("tg:1", Progress(2, 1), Progress(2, 2))  # not where the learner is
    assert await store.replace("tg:1", Progress(2, 0), Progress(2, 1, frozenset({1})))
    assert await store.get("tg:1") == Progress(2, 1, frozenset({1}))
    assert await store.get("tg:2") is None  # one learner's progress is theirs alone


async def of_two_workers_pressing_the_same_step_one_moves_on(stores: StoreFactory) -> None:
    first, second = await stores(), await stores()
    await first.replace("tg:1", None, Progress(3, 0))
    results = await asyncio.gather(
        *(store.replace("tg:1", Progress(3, 0), Progress(3, 1)) for store in (first, second, first, second))
    )
    assert sorted(results) == [False, False, False, True]
    assert await second.get("tg:1") == Progress(3, 1)


#: The contract every store keeps (each takes a factory of stores sharing their data, as workers do).
CONTRACT = (
    nothing_stored_until_a_first_write,
    a_step_moves_on_only_from_the_expected_progress,
    of_two_workers_pressing_the_same_step_one_moves_on,
)


@pytest.mark.parametrize("check", CONTRACT, ids=lambda f: f.__name__)
async def test_memory_progress(check: Callable[[StoreFactory], Awaitable[None]]) -> None:
    shared = MemoryProgress()

    async def memory() -> ProgressStore:
        return shared

    await check(memory)


@pytest.mark.parametrize("check", CONTRACT, ids=lambda f: f.__name__)
async def test_redis_progress(
    check: Callable[[StoreFactory], Awaitable[None]],
    make_client: Callable[[], Awaitable[AnyRedis]],
    key_prefix: str,
) -> None:
    async def redis() -> ProgressStore:  # a client of its own per store: separate workers
        return RedisProgress(await make_client(), prefix=key_prefix)

    await check(redis)


async def test_redis_progress_is_one_key_that_expires(
    make_client: Callable[[], Awaitable[AnyRedis]], key_prefix: str
) -> None:
    client = await make_client()
    store = RedisProgress(client, prefix=key_prefix, ttl=1000)
    await store.replace("tg:7", None, Progress(4, 1, frozenset({1, 2, 3})))
    key = f"{key_prefix}learn:tg:7"
    assert 0 < await client.ttl(key) <= 1000
    assert await client.get(key) == Progress(4, 1, frozenset({1, 2, 3})).to_json()
    # A value this version cannot read is a fresh start, and the next step replaces it.
    await client.set(key, "garbage")
    assert await store.get("tg:7") == Progress()
    assert await store.replace("tg:7", Progress(), Progress(1, 1))
    assert await store.get("tg:7") == Progress(1, 1)


async def test_a_learner_goes_on_on_another_worker(
    make_client: Callable[[], Awaitable[AnyRedis]], key_prefix: str
) -> None:
    """Two services on one Redis (or cluster): a lesson begun on one goes on on the other."""

    async def worker() -> Service:
        store = RedisProgress(await make_client(), prefix=key_prefix)
        return Service(
            ServiceDeps(
                tables=MemoryTableStore(),
                deadlines=MemoryDeadlineStore(),
                prefs=MemoryPreferences(),
                lessons=store,
            )
        )

    ane = UserRef("tg:1", "Ane", "en")
    chat = ChatRef(ane.key, private=True)
    one, two = await worker(), await worker()
    step = (await one.lessons.learn(chat, ane, 6)).messages[0]
    right = step.buttons[0][1].token  # "31": the right total
    moved = await two.press(ane, right)
    assert moved.ok and "2/3" in moved.messages[0].text
    stale = await one.press(ane, right)  # the same button again, on the other worker: already behind
    assert not stale.ok and not stale.messages
