"""Small per-chat and per-user preferences (the chat's language), in Redis or in memory."""

from __future__ import annotations

from typing import Protocol

from bot.store._ports import DEFAULT_PREFIX
from bot.store._redis_client import AnyRedis, unavailable_errors


class PreferencesStore(Protocol):
    """Remembers a language per chat (or per user for private chats)."""

    async def get_language(self, key: str) -> str | None:
        """The language chosen for a chat or user key, if any."""
        ...

    async def set_language(self, key: str, lang: str) -> None:
        """Remember a language for a chat or user key."""
        ...


class RedisPreferences:
    """Preferences as one Redis hash ``{prefix}prefs:lang`` (key → language)."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._key = f"{prefix}prefs:lang"

    async def get_language(self, key: str) -> str | None:
        """The language chosen for ``key``, if any."""
        with unavailable_errors():
            value = await self._redis.hget(self._key, key)
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    async def set_language(self, key: str, lang: str) -> None:
        """Remember ``lang`` for ``key``."""
        with unavailable_errors():
            await self._redis.hset(self._key, key, lang)


class MemoryPreferences:
    """In-process preferences, for unit tests."""

    def __init__(self) -> None:
        """Empty preferences."""
        self.languages: dict[str, str] = {}

    async def get_language(self, key: str) -> str | None:
        """The language chosen for ``key``, if any."""
        return self.languages.get(key)

    async def set_language(self, key: str, lang: str) -> None:
        """Remember ``lang`` for ``key``."""
        self.languages[key] = lang
