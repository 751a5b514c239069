"""Deliveries acted on once: a platform may deliver one update twice (Telegram re-sends a webhook update that
got no 2xx; a gateway may replay an event after a resume), and two deliveries must act once.

:meth:`OnceStore.first` answers whether a delivery id is seen for the first time, and remembers it for a short
while (longer than any platform retries). In Redis it is one ``SET NX EX`` per delivery, shared by every
worker; in memory, a bounded dictionary for tests and the terminal.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from bot.store.ports import DEFAULT_PREFIX
from bot.store.redis_store import AnyRedis, unavailable_errors

#: How long a delivery id is remembered (Telegram retries a webhook update for less than this).
ONCE_TTL = 600.0


class OnceStore(Protocol):
    """Which delivery ids were already acted on."""

    async def first(self, key: str, ttl: float = ONCE_TTL) -> bool:
        """Whether ``key`` is seen for the first time (it is remembered for ``ttl`` seconds)."""
        ...


class RedisOnce:
    """Delivery ids as keys ``{prefix}once:{key}`` with an expiry."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = f"{prefix}once:"

    async def first(self, key: str, ttl: float = ONCE_TTL) -> bool:
        """``SET NX EX``: true for the one worker that set it."""
        with unavailable_errors():
            return bool(await self._redis.set(self._prefix + key, b"1", nx=True, ex=max(1, int(ttl))))


class MemoryOnce:
    """Delivery ids in memory, at most ``capacity`` of them (the oldest forgotten first)."""

    def __init__(self, capacity: int = 50_000, clock: Callable[[], float] = time.monotonic) -> None:
        """An empty record."""
        self.capacity = capacity
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    async def first(self, key: str, ttl: float = ONCE_TTL) -> bool:
        """Whether ``key`` is new (or its memory expired)."""
        now = self.clock()
        expires = self._seen.get(key)
        if expires is not None and expires > now:
            return False
        self._seen.pop(key, None)
        self._seen[key] = now + ttl
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
        return True
