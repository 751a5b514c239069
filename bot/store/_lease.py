"""Leases: one holder at a time for something only one process may do (poll a bot token's updates).

Telegram answers a second ``getUpdates`` on the same token with ``409 Conflict``: two workers that both long
poll fight, each one's polls cutting the other's. A lease names who polls: :meth:`LeaseStore.acquire` takes
it for ``ttl`` seconds if nobody holds it (or renews it for its holder); :meth:`LeaseStore.release` gives it
up. A holder renews it every third of its ``ttl``; one that dies stops renewing, and another takes it within
``ttl`` seconds. In Redis: ``SET NX PX`` to take, one Lua script to renew or release only one's own lease
(a holder that was too slow to renew must not extend or delete the next holder's).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from bot.store._ports import DEFAULT_PREFIX
from bot.store._redis_client import AnyRedis, unavailable_errors

#: Renew the lease if it is ours (KEYS[1] the lease, ARGV[1] the holder, ARGV[2] the ttl in ms).
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
#: Delete the lease if it is ours (KEYS[1] the lease, ARGV[1] the holder).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class LeaseStore(Protocol):
    """Named leases, each held by one holder at a time."""

    async def acquire(self, name: str, holder: str, ttl: float) -> bool:
        """Take ``name`` for ``holder`` for ``ttl`` seconds (or renew it if ``holder`` has it); whether
        ``holder`` holds it now."""
        ...

    async def release(self, name: str, holder: str) -> None:
        """Give ``name`` up if ``holder`` holds it."""
        ...


class RedisLeases:
    """Leases as keys ``{prefix}lease:{name}`` holding the holder's id, with an expiry."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = f"{prefix}lease:"
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    async def acquire(self, name: str, holder: str, ttl: float) -> bool:
        """Renew our lease, or take a free one (``SET NX PX``)."""
        key, ms = self._prefix + name, max(1, int(ttl * 1000))
        with unavailable_errors():
            if await self._renew(keys=[key], args=[holder, ms]):
                return True
            return bool(await self._redis.set(key, holder, nx=True, px=ms))

    async def release(self, name: str, holder: str) -> None:
        """Delete the lease if it is ours."""
        with unavailable_errors():
            await self._release(keys=[self._prefix + name], args=[holder])


class MemoryLeases:
    """Leases in memory, with the same semantics (tests, one process)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Expire leases by ``clock``."""
        self.clock = clock
        self._held: dict[str, tuple[str, float]] = {}

    async def acquire(self, name: str, holder: str, ttl: float) -> bool:
        """Renew ours, or take a free or expired one."""
        now = self.clock()
        current = self._held.get(name)
        if current is not None and current[0] != holder and current[1] > now:
            return False
        self._held[name] = (holder, now + ttl)
        return True

    async def release(self, name: str, holder: str) -> None:
        """Drop ours."""
        if self._held.get(name, ("", 0.0))[0] == holder:
            del self._held[name]
