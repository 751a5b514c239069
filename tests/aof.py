"""Waiting until a Redis server's append-only file holds what it acknowledged (what a ``kill -9`` keeps).

With ``appendfsync everysec`` Redis answers before its write to the AOF when an earlier fsync is still running
(on a slow disk): it holds the new writes back for up to two seconds. A test that kills the server to show
that restarting it keeps the data waits here first; without it, that test fails where fsyncs are slow.
"""

from __future__ import annotations

import asyncio
import time

from bot.store import AnyRedis


async def aof_written(client: AnyRedis, timeout: float = 5.0) -> None:
    """Return once the server's AOF buffer is empty (every acknowledged write is in the kernel's hands)."""
    deadline = time.monotonic() + timeout
    while True:
        info = await client.info("persistence")
        if int(info["aof_enabled"]) != 1:
            raise AssertionError("the server does not write an AOF")
        if int(info["aof_buffer_length"]) == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the AOF buffer still holds {info['aof_buffer_length']} bytes")
        await asyncio.sleep(0.05)
