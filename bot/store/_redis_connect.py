"""Connecting the bot to Redis at start-up: ``REDIS_URL``, or the embedded server (:func:`connect`).

:func:`connect` makes the client (:mod:`bot.store._redis_client`: a ``RedisCluster`` for a
``redis+cluster://`` URL), starts an :class:`~bot.store._embedded.EmbeddedRedis` when there is no URL, and
returns once Redis answered PING, or says in one line where and why not (the URL printed without its
password).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis.exceptions
from redis.asyncio import Redis as AsyncRedis

from bot.store._embedded import EmbeddedRedis
from bot.store._ports import StoreUnavailable
from bot.store._redis_client import AnyRedis, BudgetedRedis, client_for_url, client_options

__all__ = ["connect"]

#: Seconds :func:`connect` waits for a Redis that is still loading its data at start-up.
LOADING_TIMEOUT = 60.0


def _shown(url: str) -> str:
    """``url`` without its password, to print."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:" if parts.username else ":"
    return urlunsplit(parts._replace(netloc=f"{user}***@{host}"))


async def _check(client: AnyRedis, url: str) -> None:
    """PING ``url`` (waiting while it loads its data); raise :class:`StoreUnavailable` with one line why.

    A ``redis://`` URL naming a node of a Redis Cluster is refused too: that client would only reach the
    node's own slots.
    """
    deadline = time.monotonic() + LOADING_TIMEOUT
    while True:
        try:
            await client.ping()
            if isinstance(client, AsyncRedis) and await _cluster_node(client):
                raise StoreUnavailable(
                    f"the Redis at {_shown(url)} is a node of a Redis Cluster: "
                    "write the URL as redis+cluster://host:port/0"
                )
            return
        except redis.exceptions.BusyLoadingError:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"the Redis at {_shown(url)} is still loading its data") from None
            await asyncio.sleep(0.1)
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException, OSError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreUnavailable(f"cannot reach Redis at {_shown(url)}: {reason}") from exc


async def _cluster_node(client: AsyncRedis) -> bool:
    """Whether the server has cluster mode on (a server that refuses INFO counts as not)."""
    try:
        info = await client.info("cluster")
    except redis.exceptions.ResponseError:
        return False
    return str(info.get("cluster_enabled", "0")) == "1"


async def connect(
    redis_url: str | None, data_dir: Path, **options: Any
) -> tuple[AnyRedis, EmbeddedRedis | None]:
    """Return an asyncio Redis client for ``redis_url``, or for an embedded server started on ``data_dir``.

    A ``redis+cluster://`` (or ``rediss+cluster://``) URL gives a ``RedisCluster`` client, which learns
    the cluster's nodes from the one named (:data:`~bot.store._redis_client.CLUSTER_SCHEMES`). The Redis
    (every master of a cluster) answered PING before this returns: :class:`StoreUnavailable` (one line:
    where and why) otherwise, and :class:`~bot.store._redis_server.EmbeddedRedisError` or :class:`OSError` if
    the embedded server cannot start. An empty ``redis_url`` counts as none. The client uses
    :func:`~bot.store._redis_client.client_options` unless ``options`` say otherwise. The caller owns both
    results: ``await client.aclose()``, then ``server.stop()`` if a server was returned. Starting the server
    runs in a thread, so the event loop is not blocked.
    """
    settings: dict[str, Any] = {**client_options(), **options}
    server: EmbeddedRedis | None = None
    client: AnyRedis
    if redis_url:
        try:
            client = client_for_url(redis_url, **settings)
        except ValueError as exc:
            raise StoreUnavailable(f"REDIS_URL is not a Redis URL: {exc}") from exc
        url = redis_url
    else:
        server = EmbeddedRedis(data_dir)
        await asyncio.to_thread(server.start)
        url = server.url
        try:
            client = BudgetedRedis.from_url(url, **settings)
        except BaseException:
            await asyncio.to_thread(server.stop)
            raise
    try:
        await _check(client, url)
    except BaseException:
        await client.aclose()
        if server is not None:
            await asyncio.to_thread(server.stop)
        raise
    return client, server
