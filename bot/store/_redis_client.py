"""The bot's Redis client, as every Redis store uses it: what a client is, how one is made, how it fails.

* :data:`AnyRedis` — one server (``redis.asyncio.Redis``: the embedded one or a real one) or a Redis Cluster
  (``redis.asyncio.cluster.RedisCluster``); :func:`is_cluster` tells them apart.
* :class:`BudgetedRedis` and :class:`BudgetedRedisCluster` — the clients the bot makes: each command also
  ends by the budget of the update that sends it (:mod:`bot.store._budget`).
* :func:`client_for_url` and :func:`client_options` — a client for ``REDIS_URL`` (a cluster for the
  :data:`CLUSTER_SCHEMES`), with short timeouts (:data:`CLIENT_TIMEOUT`) and no retry.
* :func:`unavailable_errors` — connection-level failures become :class:`~bot.store._ports.StoreUnavailable`.
* :func:`as_text` and :func:`score_arg` — a reply as text whether the client decodes or not, and a sorted
  set's score as an argument; :func:`glob_escape` and :func:`scan_batches` — for ``SCAN``.

The stores do not own the client: whoever created it closes it.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, TypeAlias

import redis.exceptions
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from bot.kernel import STORE_ERRORS
from bot.store._budget import within_budget
from bot.store._ports import StoreUnavailable

__all__ = [
    "CLIENT_TIMEOUT",
    "CLUSTER_SCHEMES",
    "AnyRedis",
    "BudgetedRedis",
    "BudgetedRedisCluster",
    "as_text",
    "client_for_url",
    "client_options",
    "glob_escape",
    "is_cluster",
    "scan_batches",
    "score_arg",
    "unavailable_errors",
]

AnyRedis: TypeAlias = Redis | RedisCluster
"""The clients the Redis stores accept: one server, or a Redis Cluster."""

#: Seconds a command (or a connection attempt) may take before the store counts as unavailable, when no
#: update's budget bounds it sooner (:mod:`bot.store._budget`): background work (deadlines, delivery lanes).
CLIENT_TIMEOUT = 2.0

#: ``REDIS_URL`` schemes that name a Redis Cluster (any node of it): ``redis+cluster://host:port/0``, and
#: ``rediss+cluster://`` for TLS. :func:`~bot.store._redis_connect.connect` then returns a ``RedisCluster``
#: client.
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")

_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,  # refused, reset, unix socket missing, LOADING, auth failures
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,  # talking to a replica after a failover
    redis.exceptions.ClusterError,  # CLUSTERDOWN, MASTERDOWN, redirections that never settled
    redis.exceptions.SlotNotCoveredError,  # a cluster whose slots are not all served (a master is gone)
    OSError,  # includes the builtin TimeoutError / ConnectionError, should a raw one slip through
)

# What redis-py's cluster client says when it cannot learn the cluster's layout (no node answers, or the
# slots are not all covered). Other RedisClusterExceptions are programming errors (keys of several slots).
_CLUSTER_UNREACHABLE = ("Redis Cluster cannot be connected", "All slots are not covered")


def _cluster_unreachable(exc: redis.exceptions.RedisClusterException) -> bool:
    return isinstance(exc.__cause__, _UNAVAILABLE) or str(exc).startswith(_CLUSTER_UNREACHABLE)


@contextmanager
def unavailable_errors() -> Iterator[None]:
    """Translate connection-level Redis errors raised inside the block into :class:`StoreUnavailable`.

    On a cluster that includes a cluster that is down, a slot no master serves, and a cluster no node of
    which answers.
    """
    try:
        yield
    except _UNAVAILABLE as exc:
        STORE_ERRORS.inc()
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc
    except redis.exceptions.RedisClusterException as exc:
        if not _cluster_unreachable(exc):
            raise
        STORE_ERRORS.inc()
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc


class BudgetedRedis(Redis):
    """A client of one server whose commands end by the budget of the update sending them, if any."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command (every command method and script comes here), within the update's budget."""
        command = super().execute_command(*args, **options)  # type: ignore[no-untyped-call,unused-ignore]  # (redis-py < 8.2)
        return await within_budget(command)


class BudgetedRedisCluster(RedisCluster):
    """A Redis Cluster client whose commands end by the budget of the update sending them, if any."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Run one command on its node, within the update's budget."""
        return await within_budget(super().execute_command(*args, **kwargs))


def is_cluster(client: AnyRedis) -> bool:
    """Whether ``client`` talks to a Redis Cluster (the stores then use the cluster layout)."""
    return isinstance(client, RedisCluster)


def client_options() -> dict[str, Any]:
    """How the bot's Redis clients talk to Redis: short timeouts and no retry, so that a frozen Redis costs a
    command :data:`CLIENT_TIMEOUT`, not a multiple of it (redis-py retries a timed-out handshake as a broken
    connection). After a restart, a pooled connection fails once, then reconnects; the watchdog of
    ``bot.ops._bootstrap`` drops the pool when it restarts the embedded server, so that not even that
    happens."""
    return {
        "decode_responses": True,
        "socket_timeout": CLIENT_TIMEOUT,
        "socket_connect_timeout": CLIENT_TIMEOUT,
        "retry": AsyncRetry(NoBackoff(), 0),
    }


def client_for_url(url: str, **options: Any) -> AnyRedis:
    """A client for ``url`` (not connected yet): a :class:`BudgetedRedisCluster` for the
    :data:`CLUSTER_SCHEMES`, else a :class:`BudgetedRedis`. ``ValueError`` if the URL cannot be used."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() in CLUSTER_SCHEMES:
        try:
            return BudgetedRedisCluster.from_url(
                f"{scheme.lower().removesuffix('+cluster')}://{rest}", **options
            )
        except redis.exceptions.RedisClusterException as exc:  # a database other than 0, a unix socket
            raise ValueError(str(exc)) from exc
    return BudgetedRedis.from_url(url, **options)


def as_text(value: Any) -> str:
    """A value Redis returned, as text (clients may use ``decode_responses`` or not)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def score_arg(value: float) -> str:
    """Render a score for Redis: ``repr`` round-trips a float exactly; infinities become ``±inf``."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return repr(float(value))


def glob_escape(text: str) -> str:
    """Escape the characters that are special in a Redis ``MATCH`` pattern."""
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)


async def scan_batches(keys: AsyncIterator[Any], size: int = 1000) -> AsyncIterator[list[Any]]:
    """Group an async iterator's items in lists of up to ``size``."""
    batch: list[Any] = []
    async for key in keys:
        batch.append(key)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
