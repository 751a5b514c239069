"""Redis implementation of :class:`~bot.store._ports.DeadlineStore`: the due times of the tables' deadlines.

The deadlines are a sorted set, ``P deadlines`` (``P`` is the prefix): member = the opaque deadline key, score
= the due time in epoch seconds. A claimed key stays in it, leased: its score is moved to the end of the lease
until the firing removes it. On a Redis Cluster there is one such set per shard, in the slot of the tables of
that shard, so that a table's write can change its deadlines in the same script (see
:mod:`bot.store._redis_layout`). Claiming is a Lua script per set.

The store does not own the client: whoever created it closes it. Clients may use ``decode_responses`` or not.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

from bot.store._ports import DEFAULT_DEADLINE_LEASE_SECONDS, DEFAULT_PREFIX, check_deadline, check_lease
from bot.store._redis_client import AnyRedis, as_text, is_cluster, score_arg, unavailable_errors
from bot.store._redis_layout import KeyLayout

__all__ = ["RedisDeadlineStore"]

# Single server. KEYS[1] deadlines zset; ARGV: now, limit, lease end. Leases and returns the due members,
# earliest first: each one's score becomes the lease end (the firing removes it; if nobody does, it is due
# again then).
_LUA_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #due, 1000 do
  local args = {}
  for j = i, math.min(i + 999, #due) do args[#args + 1] = ARGV[3]; args[#args + 1] = due[j] end
  redis.call('ZADD', KEYS[1], 'XX', unpack(args))
end
return due
"""

# Cluster. KEYS[1] a deadlines shard; ARGV: now, lease end, members... Leases the members still due (another
# worker may have leased some since they were looked at) and returns them.
_LUA_CLAIM_LISTED = """
local now, until_ = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i = 3, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) <= now then
    redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i])
    out[#out + 1] = ARGV[i]
  end
end
return out
"""


class RedisDeadlineStore:
    """:class:`~bot.store._ports.DeadlineStore` on Redis sorted sets: one (``{prefix}deadlines``) on a single
    server, :data:`~bot.store._redis_layout.CLUSTER_SHARDS` on a cluster (see :class:`KeyLayout`)."""

    def __init__(
        self,
        redis: AnyRedis,
        prefix: str = DEFAULT_PREFIX,
        *,
        lease_seconds: float = DEFAULT_DEADLINE_LEASE_SECONDS,
    ) -> None:
        """``lease_seconds``: how long a claimed key stays with its claimer before it is due again."""
        self.redis = redis
        self.prefix = prefix
        self.layout = KeyLayout(prefix, is_cluster(redis))
        self.keys = tuple(self.layout.deadlines(shard) for shard in range(self.layout.shards))
        """The sorted sets' keys: one on a single server, one per shard on a cluster."""
        self.lease_seconds = check_lease(lease_seconds)
        self._claim = redis.register_script(_LUA_CLAIM)
        self._claim_listed = redis.register_script(_LUA_CLAIM_LISTED)

    @property
    def key(self) -> str:
        """The sorted set's key on a single server (a cluster has one per shard: :meth:`shard_key`)."""
        if self.layout.cluster:
            raise AttributeError("a Redis Cluster splits the deadlines in shards: see shard_key")
        return self.keys[0]

    def shard_key(self, key: str) -> str:
        """The sorted set that holds (or would hold) the deadline ``key``."""
        return self.layout.deadlines(self.layout.deadline_shard(key))

    async def schedule(self, key: str, due: float) -> None:
        """Schedule ``key`` at ``due`` (epoch seconds); scheduling an existing key moves it."""
        check_deadline(key, due)
        with unavailable_errors():
            await self.redis.zadd(self.shard_key(key), {key: float(due)})

    async def cancel(self, key: str) -> None:
        """Forget ``key``."""
        with unavailable_errors():
            await self.redis.zrem(self.shard_key(key), key)

    async def scheduled(self, key: str) -> float | None:
        """When ``key`` is due (the end of its lease, if claimed), or ``None`` if it is not scheduled."""
        with unavailable_errors():
            score = await self.redis.zscore(self.shard_key(key), key)
        return None if score is None else float(score)

    async def claim_due(self, now: float, limit: int = 100) -> list[str]:
        """Atomically lease and return up to ``limit`` keys due at or before ``now``, earliest first (each is
        moved to ``now + lease_seconds``).

        On a cluster each shard is leased by its own script: the due keys of every shard are looked at,
        the earliest ``limit`` of them chosen, and each shard leases those that are still due (a key another
        worker leased in between is left to it; if it took all of them, the shards are looked at again).
        """
        if limit <= 0:
            return []
        if math.isnan(now):
            raise ValueError("now must be a number, not NaN")
        until = score_arg(float(now) + self.lease_seconds)
        if len(self.keys) == 1:
            with unavailable_errors():
                reply = await self._claim(keys=[self.keys[0]], args=[score_arg(now), limit, until])
            return [as_text(member) for member in reply]
        for _attempt in range(5):
            with unavailable_errors():  # (one pipeline: a round trip per master, not one per shard)
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key in self.keys:
                        pipe.zrangebyscore(key, "-inf", score_arg(now), start=0, num=limit, withscores=True)
                    peeks: list[Any] = await pipe.execute()
            due = sorted(
                (float(score), as_text(member), shard)
                for shard, rows in enumerate(peeks)
                for member, score in rows
            )[:limit]
            if not due:
                return []
            chosen: dict[int, list[str]] = {}
            for _, member, shard in due:
                chosen.setdefault(shard, []).append(member)
            with unavailable_errors():
                leased = await asyncio.gather(
                    *(
                        self._claim_listed(keys=[self.keys[shard]], args=[score_arg(now), until, *members])
                        for shard, members in chosen.items()
                    )
                )
            got = {as_text(member) for reply in leased for member in reply}
            if got:
                return [member for _, member, _ in due if member in got]
        return []

    async def schedule_missing(self, entries: Sequence[tuple[str, float]]) -> list[str]:
        """Schedule each ``(key, due)`` whose key is not scheduled at all (``ZADD NX``); return those keys."""
        for key, due in entries:
            check_deadline(key, due)
        if not entries:
            return []
        with unavailable_errors():
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, due in entries:
                    pipe.zadd(self.shard_key(key), {key: float(due)}, nx=True)
                added = await pipe.execute()
        return [key for (key, _), count in zip(entries, added, strict=True) if int(count)]

    async def next_due(self) -> float | None:
        """Return the earliest due time, or ``None``."""
        with unavailable_errors():
            if len(self.keys) == 1:
                firsts: list[Any] = [await self.redis.zrange(self.keys[0], 0, 0, withscores=True)]
            else:  # (one pipeline: a round trip per master of the cluster, not one per shard)
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key in self.keys:
                        pipe.zrange(key, 0, 0, withscores=True)
                    firsts = await pipe.execute()
        return min((float(first[0][1]) for first in firsts if first), default=None)

    async def ping(self) -> None:
        """Health check: return if Redis (every master of a cluster) answers PING, raise otherwise."""
        with unavailable_errors():
            await self.redis.ping()
