"""Small per-chat and per-user preferences (the chat's language, a person's yes/no choices), in Redis or in
memory."""

from __future__ import annotations

from typing import Protocol

from bot.store._ports import DEFAULT_PREFIX
from bot.store._redis_client import AnyRedis, unavailable_errors


class PreferencesStore(Protocol):
    """Remembers a language per chat (or per user for private chats), and yes/no choices per key."""

    async def get_language(self, key: str) -> str | None:
        """The language chosen for a chat or user key, if any."""
        ...

    async def set_language(self, key: str, lang: str) -> None:
        """Remember a language for a chat or user key."""
        ...

    async def move_language(self, old: str, new: str) -> None:
        """A chat moved from key ``old`` to ``new`` (a group upgraded to a supergroup): the language chosen
        for ``old`` becomes ``new``'s, unless ``new`` has one of its own already (kept), and ``old`` forgets
        it. Atomic; doing it again changes nothing."""
        ...

    async def get_flag(self, key: str, flag: str) -> bool:
        """Whether ``key`` (a user, a chat) said yes to ``flag`` (e.g. ``dms``: private views by direct
        message); no by default."""
        ...

    async def set_flag(self, key: str, flag: str, on: bool) -> None:
        """Remember ``key``'s yes or no to ``flag``."""
        ...


# KEYS[1] the languages' hash; ARGV: the old key, the new key. The old key's language goes to the new key
# unless it has one; the old key forgets it.
_LUA_MOVE = """
local lang = redis.call('HGET', KEYS[1], ARGV[1])
if lang then
  redis.call('HSETNX', KEYS[1], ARGV[2], lang)
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
"""


class RedisPreferences:
    """Preferences as one Redis hash ``{prefix}prefs:lang`` (key → language), and a set
    ``{prefix}prefs:flag:{flag}`` per yes/no choice (the keys that said yes)."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._key = f"{prefix}prefs:lang"
        self._prefix = prefix
        self._move = redis.register_script(_LUA_MOVE)

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

    async def move_language(self, old: str, new: str) -> None:
        """One script on the hash: ``old``'s language becomes ``new``'s unless it has one."""
        with unavailable_errors():
            await self._move(keys=[self._key], args=[old, new])

    async def get_flag(self, key: str, flag: str) -> bool:
        """Whether ``key`` is in ``flag``'s set."""
        with unavailable_errors():
            return bool(await self._redis.sismember(f"{self._prefix}prefs:flag:{flag}", key))

    async def set_flag(self, key: str, flag: str, on: bool) -> None:
        """Add ``key`` to ``flag``'s set, or remove it."""
        name = f"{self._prefix}prefs:flag:{flag}"
        with unavailable_errors():
            if on:
                await self._redis.sadd(name, key)
            else:
                await self._redis.srem(name, key)


class MemoryPreferences:
    """In-process preferences, for unit tests."""

    def __init__(self) -> None:
        """Empty preferences."""
        self.languages: dict[str, str] = {}
        self.flags: dict[str, set[str]] = {}

    async def get_language(self, key: str) -> str | None:
        """The language chosen for ``key``, if any."""
        return self.languages.get(key)

    async def set_language(self, key: str, lang: str) -> None:
        """Remember ``lang`` for ``key``."""
        self.languages[key] = lang

    async def move_language(self, old: str, new: str) -> None:
        """``old``'s language becomes ``new``'s unless it has one; ``old`` forgets it."""
        lang = self.languages.pop(old, None)
        if lang is not None:
            self.languages.setdefault(new, lang)

    async def get_flag(self, key: str, flag: str) -> bool:
        """Whether ``key`` said yes to ``flag``."""
        return key in self.flags.get(flag, set())

    async def set_flag(self, key: str, flag: str, on: bool) -> None:
        """Remember ``key``'s yes or no to ``flag``."""
        keys = self.flags.setdefault(flag, set())
        if on:
            keys.add(key)
        else:
            keys.discard(key)
