"""Deliveries acted on once: a platform may deliver one update twice (Telegram re-sends a webhook update that
got no 2xx; a gateway may replay an event after a resume), and two deliveries must act once.

:meth:`OnceStore.first` claims a delivery id for the worker about to handle it, for a short lease
(:data:`HANDLING_TTL`); :meth:`OnceStore.done` then remembers it as handled for longer than any platform
retries (:data:`ONCE_TTL`). A second delivery while the first is handled, or after, is ignored; one that
comes after the lease of a worker that died while handling it is handled (a retried webhook update). In
Redis each step is one ``SET`` (``NX`` for the claim), shared by every worker; in memory, a bounded
dictionary for tests and the terminal.

What no store can save: an update a worker had taken from the platform (acknowledged) when it was killed.
The platform will not send it again; its sender sees no answer and presses again, and that press — a new
update — also redraws what the crash left stale.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from bot.store._ports import DEFAULT_PREFIX
from bot.store._redis_client import AnyRedis, unavailable_errors

#: How long a handled delivery id is remembered (Telegram retries a webhook update for less than this).
ONCE_TTL = 600.0
#: How long a worker holds a delivery it is handling (ms normally; a store timeout is 2 s).
HANDLING_TTL = 10.0


class OnceStore(Protocol):
    """Which delivery ids were already acted on."""

    async def first(self, key: str, ttl: float = HANDLING_TTL) -> bool:
        """Whether ``key`` is new: then it is held for this worker for ``ttl`` seconds."""
        ...

    async def done(self, key: str, ttl: float = ONCE_TTL) -> None:
        """``key`` was handled: remember it for ``ttl`` seconds."""
        ...


class RedisOnce:
    """Delivery ids as keys ``{prefix}once:{key}`` with an expiry."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = f"{prefix}once:"

    async def first(self, key: str, ttl: float = HANDLING_TTL) -> bool:
        """``SET NX EX``: true for the one worker that set it."""
        with unavailable_errors():
            return bool(await self._redis.set(self._prefix + key, b"1", nx=True, ex=max(1, int(ttl))))

    async def done(self, key: str, ttl: float = ONCE_TTL) -> None:
        """``SET EX``: handled, remembered longer."""
        with unavailable_errors():
            await self._redis.set(self._prefix + key, b"2", ex=max(1, int(ttl)))


class MemoryOnce:
    """Delivery ids in memory, at most ``capacity`` of them (the oldest forgotten first)."""

    def __init__(self, capacity: int = 50_000, clock: Callable[[], float] = time.monotonic) -> None:
        """An empty record."""
        self.capacity = capacity
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    async def first(self, key: str, ttl: float = HANDLING_TTL) -> bool:
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

    async def done(self, key: str, ttl: float = ONCE_TTL) -> None:
        """Remember ``key`` as handled."""
        self._seen.pop(key, None)
        self._seen[key] = self.clock() + ttl
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
