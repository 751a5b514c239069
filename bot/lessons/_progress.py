"""Where each learner is in the lessons, remembered per user: in Redis, or in memory.

A learner's progress is small: the lesson and step on screen, and the lessons finished. It is one value
per user (``{prefix}learn:{user}``, JSON), so every operation touches one key — what a Redis Cluster needs,
with no hash tag. A step moves on with a compare-and-set on that value (:meth:`ProgressStore.replace`):
of two presses of the same right answer (a double tap, or two workers), one moves on and the other is
stale, as with a table's buttons. The value expires after :data:`PROGRESS_TTL` without a lesson.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from bot.store import DEFAULT_PREFIX, AnyRedis, unavailable_errors

#: How long a learner's progress is kept after their last step (a year).
PROGRESS_TTL = 365 * 86400

# Replace the value only if it is still the expected one ("" stands for "no value").
_LUA_REPLACE = """
local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""


@dataclass(frozen=True, slots=True)
class Progress:
    """A learner's place: the lesson (from 1) and its step (from 0) on screen, the lessons finished."""

    lesson: int = 1
    step: int = 0
    done: frozenset[int] = field(default_factory=frozenset)

    def to_json(self) -> str:
        """The stored form (canonical: equal progresses store equal strings)."""
        return json.dumps({"lesson": self.lesson, "step": self.step, "done": sorted(self.done)})

    @classmethod
    def from_json(cls, data: str | bytes) -> Progress:
        """Read a stored progress; anything unreadable is a fresh start (it is only a bookmark)."""
        try:
            raw = json.loads(data)
            done = frozenset(int(n) for n in raw.get("done", []))
            return cls(int(raw["lesson"]), int(raw["step"]), done)
        except (ValueError, TypeError, KeyError, AttributeError):
            return cls()


class ProgressStore(Protocol):
    """Remembers each learner's progress (see the module docstring)."""

    async def get(self, user: str) -> Progress | None:
        """The progress of ``user`` (a user key), or ``None`` if they never opened a lesson."""
        ...

    async def replace(self, user: str, expected: Progress | None, new: Progress) -> bool:
        """Store ``new`` if the stored progress is still ``expected`` (``None``: none stored); whether it
        was stored. Nothing changes otherwise."""
        ...


class RedisProgress:
    """Progress as one key per learner, ``{prefix}learn:{user}``, compare-and-set by a one-key script."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX, ttl: int = PROGRESS_TTL) -> None:
        """Use ``redis`` (not owned) under ``prefix``; a value expires ``ttl`` s after its last write."""
        self._redis = redis
        self._prefix = f"{prefix}learn:"
        self._ttl = ttl
        self._replace = redis.register_script(_LUA_REPLACE)

    async def get(self, user: str) -> Progress | None:
        """The stored progress of ``user``, if any."""
        with unavailable_errors():
            value = await self._redis.get(self._prefix + user)
        return None if value is None else Progress.from_json(value)

    async def raw(self, user: str) -> str | None:
        """The stored value as written (for the compare-and-set: an unreadable value is replaced too)."""
        with unavailable_errors():
            value = await self._redis.get(self._prefix + user)
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    async def replace(self, user: str, expected: Progress | None, new: Progress) -> bool:
        """Compare-and-set on the learner's key (one key: a cluster runs it on that key's node)."""
        if expected is not None and (stored := await self.raw(user)) is not None:
            # Compare with what is stored when it reads as the expected progress (an older encoding, or
            # one that did not parse and was read as a fresh start, is still the same bookmark).
            old = stored if Progress.from_json(stored) == expected else expected.to_json()
        else:
            old = "" if expected is None else expected.to_json()
        with unavailable_errors():
            done = await self._replace(keys=[self._prefix + user], args=[old, new.to_json(), self._ttl])
        return bool(done)


class MemoryProgress:
    """Progress in memory (unit tests; a terminal without Redis)."""

    def __init__(self) -> None:
        """No learner yet."""
        self.values: dict[str, Progress] = {}

    async def get(self, user: str) -> Progress | None:
        """The progress of ``user``, if any."""
        return self.values.get(user)

    async def replace(self, user: str, expected: Progress | None, new: Progress) -> bool:
        """Store ``new`` if the progress of ``user`` is still ``expected``."""
        if self.values.get(user) != expected:
            return False
        self.values[user] = new
        return True
