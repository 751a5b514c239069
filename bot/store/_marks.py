"""Marks: what a platform was last told, so that it is told again only when it changed.

A chat platform keeps some of the bot's definition on its side — Discord the slash commands (a sync is a
bulk overwrite, rate limited per day, and global commands take a while to reach every client), Telegram the
command menu. Telling it again at every start of every worker costs calls and, on Discord, can make clients
show the commands afresh for nothing. A mark remembers what was told last (a fingerprint of it, and what
the platform answered that is worth keeping, such as the commands' ids), shared by every worker through
Redis: ``P marks`` is one hash, name → value (a string the caller writes, JSON in practice).
"""

from __future__ import annotations

from typing import Protocol

from bot.store._ports import DEFAULT_PREFIX
from bot.store._redis_client import AnyRedis, unavailable_errors


class MarkStore(Protocol):
    """Named strings: what was last told to a platform (see the module docstring)."""

    async def get_mark(self, name: str) -> str | None:
        """The value kept under ``name``, if any."""
        ...

    async def set_mark(self, name: str, value: str) -> None:
        """Keep ``value`` under ``name`` (replacing what was there)."""
        ...


class RedisMarks:
    """Marks as one Redis hash ``{prefix}marks``."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._key = f"{prefix}marks"

    async def get_mark(self, name: str) -> str | None:
        """The value kept under ``name``, if any."""
        with unavailable_errors():
            value = await self._redis.hget(self._key, name)
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    async def set_mark(self, name: str, value: str) -> None:
        """Keep ``value`` under ``name``."""
        with unavailable_errors():
            await self._redis.hset(self._key, name, value)


class MemoryMarks:
    """Marks in process memory (tests; a process alone)."""

    def __init__(self) -> None:
        """No mark yet."""
        self.marks: dict[str, str] = {}

    async def get_mark(self, name: str) -> str | None:
        """The value kept under ``name``, if any."""
        return self.marks.get(name)

    async def set_mark(self, name: str, value: str) -> None:
        """Keep ``value`` under ``name``."""
        self.marks[name] = value
