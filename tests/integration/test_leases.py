"""Leases on Redis (one server and a cluster) and in memory, with one contract: one holder at a time, renewed
and released only by its holder, free again once it expires."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from bot.store import AnyRedis, LeaseStore, MemoryLeases, RedisLeases

ClientFactory = Callable[..., Awaitable[AnyRedis]]


async def contract(leases: LeaseStore, wait: float) -> None:
    assert await leases.acquire("poller", "a", wait)
    assert not await leases.acquire("poller", "b", wait)  # held
    assert await leases.acquire("poller", "a", wait)  # renewed by its holder
    await leases.release("poller", "b")  # not b's: nothing happens
    assert not await leases.acquire("poller", "b", wait)
    await leases.release("poller", "a")
    assert await leases.acquire("poller", "b", wait)  # free again
    await asyncio.sleep(wait + 0.1)
    assert await leases.acquire("poller", "a", wait)  # b's expired
    assert await leases.acquire("other", "b", wait)  # names are separate


async def test_the_lease_contract_in_memory() -> None:
    await contract(MemoryLeases(clock=time.monotonic), 0.2)


async def test_the_lease_contract_on_redis(make_client: ClientFactory, key_prefix: str) -> None:
    await contract(RedisLeases(await make_client(), prefix=key_prefix), 0.3)


@pytest.mark.parametrize("holders", [5])
async def test_of_many_takers_at_once_exactly_one_holds(
    make_client: ClientFactory, key_prefix: str, holders: int
) -> None:
    leases = RedisLeases(await make_client(), prefix=key_prefix)
    taken = await asyncio.gather(*(leases.acquire("poller", f"h{i}", 5.0) for i in range(holders)))
    assert sum(taken) == 1
