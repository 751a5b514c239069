"""The update's store budget on a real Redis, one server and a cluster (issue 24): a command that outlasts
the budget ends with it as "store unavailable", the client goes on with the next command, and a task the
update started (a delivery lane) keeps the client's own timeout.

A slow Redis is played by ``BLPOP`` on an empty list: the server holds the reply for its timeout (the frozen
server itself is in ``tests/faults``).
"""

from __future__ import annotations

import asyncio

import pytest

from bot.store import AnyRedis, StoreUnavailable, store_budget, unavailable_errors


def now() -> float:
    return asyncio.get_running_loop().time()


async def test_a_command_ends_with_the_budget_and_the_client_goes_on(
    redis_client: AnyRedis, key_prefix: str
) -> None:
    key = f"{key_prefix}budget:empty"
    began = now()
    with store_budget(now() + 0.2), pytest.raises(StoreUnavailable), unavailable_errors():
        await redis_client.blpop([key], timeout=1)
    assert now() - began < 0.8
    await redis_client.rpush(key, "x")  # the interrupted connection was dropped; a fresh one serves
    assert await redis_client.lpop(key) == "x"


async def test_a_spent_budget_sends_nothing(redis_client: AnyRedis, key_prefix: str) -> None:
    key = f"{key_prefix}budget:untouched"
    with store_budget(now() - 0.01), pytest.raises(StoreUnavailable), unavailable_errors():
        await redis_client.set(key, "written")
    assert await redis_client.get(key) is None


async def test_a_task_started_under_a_budget_keeps_the_client_timeout(
    redis_client: AnyRedis, key_prefix: str
) -> None:
    key = f"{key_prefix}budget:lane"
    with store_budget(now() + 0.1):
        waited = asyncio.create_task(redis_client.blpop([key], timeout=1))
        assert await waited is None  # the server's own 1 s went by: not cut at 0.1 s
