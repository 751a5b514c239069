"""When a worker's deadline loop looks at the store again: :class:`LoopWakes`.

The loop (``bot.ops._bootstrap.run_deadlines``) claims what is due, then sleeps until the next deadline it
found, ``max_sleep`` at most. A write of this worker that schedules a deadline due sooner (a machine's move,
the next deal) wakes it; one due after the deadline it waits for already (every turn's timeout, every
lobby's) does not — on a Redis Cluster each round looks at every shard of the deadlines. A write that lands
while the loop runs its round, after it read the next due time, makes it look again at once.
"""

from __future__ import annotations

import asyncio
import math

__all__ = ["LoopWakes"]


class LoopWakes:
    """What this worker's writes scheduled, as the deadline loop needs to know it."""

    def __init__(self) -> None:
        """A loop that has not slept yet."""
        self._woken = asyncio.Event()
        self._wake_before = -math.inf
        """While the loop sleeps: the deadline it wakes up for at the latest; minus infinity while it runs."""
        self._soonest = math.inf
        """The soonest deadline scheduled since the loop began its round."""

    def scheduled(self, due: float) -> None:
        """A write of this worker scheduled a deadline due at ``due`` (epoch seconds, as stored)."""
        self._soonest = min(self._soonest, due)
        if due < self._wake_before:
            self._woken.set()

    def round_begins(self) -> None:
        """The loop begins a round (claims what is due, then reads the next due time)."""
        self._soonest = math.inf

    async def sleep(self, upcoming: float | None, seconds: float, stop: asyncio.Event) -> None:
        """After a round that found ``upcoming`` next (``None``: nothing), sleep ``seconds`` at most: until
        then, the stop, or a write that schedules a deadline due sooner. No sleep if one was scheduled during
        the round, due before ``upcoming`` (the write may have landed after the loop looked)."""
        wake_before = math.inf if upcoming is None else upcoming
        if self._soonest < wake_before:
            self._woken.set()
        if not self._woken.is_set():
            waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self._woken.wait())]
            self._wake_before = wake_before
            try:
                await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._wake_before = -math.inf
                for waiter in waiters:
                    waiter.cancel()
        self._woken.clear()
