"""Where each view lives on Telegram, and who can be written to privately.

A table's slots (``lobby``, ``table``, ``hand``…) map to the message that shows them in each chat, so a
restarted worker edits the same messages. Users who opened the bot (``/start``) can receive private hands;
others get a deep link first. Both live in Redis (or memory for tests), never only in a process.
"""

from __future__ import annotations

from typing import Protocol

from redis.asyncio import Redis

from bot.store.redis_store import unavailable_errors

_TTL = 7 * 86400


class Surfaces(Protocol):
    """Message ids per (table, chat, slot), and the set of users the bot may write to."""

    async def get(self, table: str, chat_id: int, slot: str) -> int | None:
        """The message showing ``slot`` of ``table`` in ``chat_id``."""
        ...

    async def set(self, table: str, chat_id: int, slot: str, message_id: int) -> None:
        """Remember the message showing a slot."""
        ...

    async def forget(self, table: str, chat_id: int, slot: str) -> None:
        """That message is gone (deleted): the next render posts a new one."""
        ...

    async def reachable(self, user_id: int) -> bool:
        """Whether the user opened the bot (and did not block it since)."""
        ...

    async def set_reachable(self, user_id: int, value: bool) -> None:
        """Record that the user can (or cannot) be written to privately."""
        ...


class RedisSurfaces:
    """Surfaces in Redis: a hash per table (expiring with it) and a set of reachable users."""

    def __init__(self, redis: Redis, prefix: str = "mus:") -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = f"{prefix}tg:"

    def _key(self, table: str) -> str:
        return f"{self._prefix}surf:{table}"

    async def get(self, table: str, chat_id: int, slot: str) -> int | None:
        """The message showing ``slot`` of ``table`` in ``chat_id``."""
        with unavailable_errors():
            value = await self._redis.hget(self._key(table), f"{chat_id}:{slot}")
        return None if value is None else int(value)

    async def set(self, table: str, chat_id: int, slot: str, message_id: int) -> None:
        """Remember the message showing a slot."""
        key = self._key(table)
        with unavailable_errors():
            await self._redis.hset(key, f"{chat_id}:{slot}", message_id)
            await self._redis.expire(key, _TTL)

    async def forget(self, table: str, chat_id: int, slot: str) -> None:
        """Forget a deleted message."""
        with unavailable_errors():
            await self._redis.hdel(self._key(table), f"{chat_id}:{slot}")

    async def reachable(self, user_id: int) -> bool:
        """Whether the user opened the bot."""
        with unavailable_errors():
            return bool(await self._redis.sismember(f"{self._prefix}reachable", str(user_id)))

    async def set_reachable(self, user_id: int, value: bool) -> None:
        """Record whether the user can be written to privately."""
        key = f"{self._prefix}reachable"
        with unavailable_errors():
            if value:
                await self._redis.sadd(key, str(user_id))
            else:
                await self._redis.srem(key, str(user_id))


class MemorySurfaces:
    """In-process surfaces, for unit tests."""

    def __init__(self) -> None:
        """Empty."""
        self.messages: dict[tuple[str, int, str], int] = {}
        self.users: set[int] = set()

    async def get(self, table: str, chat_id: int, slot: str) -> int | None:
        """The message showing a slot."""
        return self.messages.get((table, chat_id, slot))

    async def set(self, table: str, chat_id: int, slot: str, message_id: int) -> None:
        """Remember the message showing a slot."""
        self.messages[(table, chat_id, slot)] = message_id

    async def forget(self, table: str, chat_id: int, slot: str) -> None:
        """Forget a deleted message."""
        self.messages.pop((table, chat_id, slot), None)

    async def reachable(self, user_id: int) -> bool:
        """Whether the user opened the bot."""
        return user_id in self.users

    async def set_reachable(self, user_id: int, value: bool) -> None:
        """Record whether the user can be written to privately."""
        if value:
            self.users.add(user_id)
        else:
            self.users.discard(user_id)
