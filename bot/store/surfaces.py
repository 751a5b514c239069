"""Where each view lives on a chat platform, and who can be written to privately.

A table's slots (``lobby``, ``table``, ``hand``…) map to the message that shows them in each chat, so that a
restarted worker edits the same messages. Users who can receive private views are remembered too (those who
opened the bot, or whose direct messages are open: the adapter says which). Both live in Redis (or memory for
tests), never only in a process.

Chats and users are the core's platform keys (``tg:-100123``, ``dc:4567``); message ids are strings, whatever
the platform uses. In Redis every platform has its own namespace: ``{prefix}{platform}:surf:{table}`` (a hash
``{chat}:{slot}`` → message id, expiring with the table) and ``{prefix}{platform}:reachable`` (a set).
"""

from __future__ import annotations

from typing import Protocol

from bot.store.redis_store import AnyRedis, unavailable_errors

#: How long a table's message ids are kept after their last change (a week: longer than any game).
SURFACE_TTL = 7 * 86400


def split_key(key: str) -> tuple[str, str]:
    """``("tg", "-100123")`` for ``"tg:-100123"``: the platform and its own id."""
    platform, _, local = key.partition(":")
    return platform, local


class SurfaceStore(Protocol):
    """Message ids per (table, chat, slot), and the users the bot may write to privately."""

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing ``slot`` of ``table`` in ``chat``."""
        ...

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot."""
        ...

    async def forget(self, table: str, chat: str, slot: str) -> None:
        """That message is gone (deleted): the next view posts a new one."""
        ...

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        ...

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record that the user can (or cannot) be written to privately."""
        ...


class RedisSurfaces:
    """Surfaces in Redis, one namespace per platform (the layout above)."""

    def __init__(self, redis: AnyRedis, prefix: str = "mus:") -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = prefix

    def _hash(self, table: str, chat: str) -> tuple[str, str]:
        platform, local = split_key(chat)
        return f"{self._prefix}{platform}:surf:{table}", local

    def _reachable_set(self, user: str) -> tuple[str, str]:
        platform, local = split_key(user)
        return f"{self._prefix}{platform}:reachable", local

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing ``slot`` of ``table`` in ``chat``."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            value = await self._redis.hget(key, f"{local}:{slot}")
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot (the table's hash expires a week after its last change)."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            await self._redis.hset(key, f"{local}:{slot}", message_id)
            await self._redis.expire(key, SURFACE_TTL)

    async def forget(self, table: str, chat: str, slot: str) -> None:
        """Forget a deleted message."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            await self._redis.hdel(key, f"{local}:{slot}")

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        key, local = self._reachable_set(user)
        with unavailable_errors():
            return bool(await self._redis.sismember(key, local))

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record whether the user can be written to privately."""
        key, local = self._reachable_set(user)
        with unavailable_errors():
            if value:
                await self._redis.sadd(key, local)
            else:
                await self._redis.srem(key, local)


class MemorySurfaces:
    """In-process surfaces, for tests."""

    def __init__(self) -> None:
        """Empty."""
        self.messages: dict[tuple[str, str, str], str] = {}
        self.users: set[str] = set()

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing a slot."""
        return self.messages.get((table, chat, slot))

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot."""
        self.messages[(table, chat, slot)] = message_id

    async def forget(self, table: str, chat: str, slot: str) -> None:
        """Forget a deleted message."""
        self.messages.pop((table, chat, slot), None)

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        return user in self.users

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record whether the user can be written to privately."""
        if value:
            self.users.add(user)
        else:
            self.users.discard(user)
