"""Where each view lives on a chat platform, and who can be written to privately.

A table's slots (``lobby``, ``table``, ``hand``…) map to the message that shows them in each chat, so that a
restarted worker edits the same messages. Users who can receive private views are remembered too (those who
opened the bot, or whose direct messages are open: the adapter says which). Both live in Redis (or memory for
tests), never only in a process.

Chats and users are the core's platform keys (``tg:-100123``, ``dc:4567``); message ids are strings, whatever
the platform uses. In Redis every platform has its own namespace: ``{prefix}{platform}:surf:{table}`` (a hash
``{chat}:{slot}`` → message id, expiring with the table) and ``{prefix}{platform}:reachable`` (a set).

Several workers may deliver views of one slot at once (a press on one, a machine's deadline on another), and
their calls may reach the platform in either order. So each slot also keeps, in the same hash, the newest
view offered for it by table version (``{chat}:{slot}:v``, ``…:view``, and ``…:h`` a digest of what it
shows) and the epoch of the message that shows it (``…:p``: the version at which that message's hand, or
cards, began). :meth:`SurfaceStore.offer` takes a view only if no newer one is there (nor the same one, which
its worker shows), :meth:`SurfaceStore.record` takes a posted message only if no message of its epoch or a
newer one was recorded first — each one script on one key — and a worker looks at :meth:`SurfaceStore.newest`
after its call: if a newer view came meanwhile, its own call may have landed last, and it shows the newest
again (:class:`bot.delivery.Delivery`). Workers also share each chat's pacing
(``{prefix}{platform}:pace:{chat}``: the time, on Redis's clock, from which the next call may go), so that
N workers do not write to a chat N times as often as the platform allows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple, Protocol

from bot.store.redis_store import AnyRedis, unavailable_errors

#: How long a table's message ids are kept after their last change (a week: longer than any game).
SURFACE_TTL = 7 * 86400


def split_key(key: str) -> tuple[str, str]:
    """``("tg", "-100123")`` for ``"tg:-100123"``: the platform and its own id."""
    platform, _, local = key.partition(":")
    return platform, local


class Offer(NamedTuple):
    """The answer to :meth:`SurfaceStore.offer`."""

    accepted: bool
    """No newer view of the slot was offered before: this one is now the slot's newest."""
    previous: int
    """The version offered before (0: none)."""
    message_id: str | None = None
    """The message that shows the slot (as :meth:`SurfaceStore.get` would answer)."""
    posted: int = 0
    """The epoch of that message: the ``since`` of the view that posted it (see :meth:`SurfaceStore.set`)."""
    same: bool = False
    """Not taken because the newest view offered shows the same (its ``digest``): its worker shows it."""


class Recorded(NamedTuple):
    """The answer to :meth:`SurfaceStore.record`."""

    taken: bool
    """The message now shows the slot (else another worker's does, and this one is superseded)."""
    replaced: str | None
    """The message that showed the slot until then (taken), or that still shows it (not taken)."""


class Newest(NamedTuple):
    """What a slot must show: its newest view offered, and the message that shows the slot."""

    version: int
    view: str | None
    """The view as :meth:`bot.views.OutMessage.to_json` wrote it."""
    message_id: str | None


class SurfaceStore(Protocol):
    """Message ids per (table, chat, slot), and the users the bot may write to privately."""

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing ``slot`` of ``table`` in ``chat``."""
        ...

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot."""
        ...

    async def record(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, replacing: str | None
    ) -> Recorded:
        """Remember the message just posted for a slot, in place of ``replacing`` (what the slot showed when
        the view was offered), for a view whose slot began at table version ``since`` (its epoch). Taken if
        its epoch is newer than the remembered message's, or the same and that message is still
        ``replacing`` — so of two workers posting at once the first, or the newer epoch's, stays."""
        ...

    async def forget(self, table: str, chat: str, slot: str) -> None:
        """That message is gone (deleted): the next view posts a new one."""
        ...

    async def offer(
        self, table: str, chat: str, slot: str, version: int, view: str, *, digest: str = ""
    ) -> Offer:
        """Make ``view`` (of table ``version``) the slot's newest, unless a newer version was offered — or,
        with a ``digest`` of what it shows, unless the newest offered shows the same (then its worker,
        which shows it, stays responsible for it)."""
        ...

    async def newest(self, table: str, chat: str, slot: str) -> Newest:
        """The slot's newest view offered and the message showing the slot."""
        ...

    async def pace(self, chat: str, interval: float) -> float:
        """Book the chat's next call, ``interval`` seconds after the one booked before: the wait until it."""
        ...

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        ...

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record that the user can (or cannot) be written to privately."""
        ...


# KEYS[1] the table's hash; ARGV: the slot's field, version, view, ttl, digest ('' for none). Returns 1 if
# taken, 0 if a newer version was offered, 2 if the newest shows the same; the version offered before, the
# message id (false: none) and its epoch.
_LUA_OFFER = """
local f = ARGV[1]
local previous = tonumber(redis.call('HGET', KEYS[1], f .. ':v') or '0')
local shown = redis.call('HGET', KEYS[1], f)
local posted = tonumber(redis.call('HGET', KEYS[1], f .. ':p') or '0')
if tonumber(ARGV[2]) < previous then return {0, previous, shown, posted} end
if ARGV[5] ~= '' and redis.call('HGET', KEYS[1], f .. ':h') == ARGV[5] then
  return {2, previous, shown, posted}
end
redis.call('HSET', KEYS[1], f .. ':v', ARGV[2], f .. ':view', ARGV[3], f .. ':h', ARGV[5])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return {1, previous, shown, posted}
"""

# KEYS[1] the table's hash; ARGV: the slot's field, message id, epoch (-1: take it whatever the epoch), ttl,
# the message it replaces ('' for none). Returns 1 if taken (else 0) and the message that showed the slot.
_LUA_RECORD = """
local f = ARGV[1]
local since = tonumber(ARGV[3])
local current = redis.call('HGET', KEYS[1], f)
if since >= 0 then
  local posted = tonumber(redis.call('HGET', KEYS[1], f .. ':p') or '0')
  local same = since == posted and current == ARGV[5]
  if current and since <= posted and not same then return {0, current} end
end
redis.call('HSET', KEYS[1], f, ARGV[2], f .. ':p', math.max(since, 0))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return {1, current}
"""

# KEYS[1] the chat's pacing key; ARGV[1] the interval in ms. Returns the wait in ms (Redis's clock, so every
# worker books on one clock).
_LUA_PACE = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local at = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local interval = tonumber(ARGV[1])
redis.call('SET', KEYS[1], at + interval, 'PX', at + interval - now + 1000)
return at - now
"""


class RedisSurfaces:
    """Surfaces in Redis, one namespace per platform (the layout above)."""

    def __init__(self, redis: AnyRedis, prefix: str = "mus:") -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = prefix
        self._offer = redis.register_script(_LUA_OFFER)
        self._record = redis.register_script(_LUA_RECORD)
        self._pace = redis.register_script(_LUA_PACE)

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
            return _text(await self._redis.hget(key, f"{local}:{slot}"))

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot (the table's hash expires a week after its last change)."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            await self._record(keys=[key], args=[f"{local}:{slot}", message_id, -1, SURFACE_TTL, ""])

    async def record(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, replacing: str | None
    ) -> Recorded:
        """One script: the message shows the slot unless another of its epoch, or a newer one, does."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            taken, current = await self._record(
                keys=[key], args=[f"{local}:{slot}", message_id, since, SURFACE_TTL, replacing or ""]
            )
        return Recorded(bool(taken), _text(current))

    async def forget(self, table: str, chat: str, slot: str) -> None:
        """Forget a deleted message."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            await self._redis.hdel(key, f"{local}:{slot}", f"{local}:{slot}:p")

    async def offer(
        self, table: str, chat: str, slot: str, version: int, view: str, *, digest: str = ""
    ) -> Offer:
        """One script: the view becomes the slot's newest unless a newer version, or the same view, is."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            taken, previous, message_id, posted = await self._offer(
                keys=[key], args=[f"{local}:{slot}", version, view, SURFACE_TTL, digest]
            )
        return Offer(taken == 1, int(previous), _text(message_id), int(posted), same=taken == 2)

    async def newest(self, table: str, chat: str, slot: str) -> Newest:
        """One read of the slot's three fields."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            version, view, message_id = await self._redis.hmget(
                key, [f"{local}:{slot}:v", f"{local}:{slot}:view", f"{local}:{slot}"]
            )
        return Newest(int(version or 0), _text(view), _text(message_id))

    async def pace(self, chat: str, interval: float) -> float:
        """Book the next call on Redis's clock (one script, shared by every worker)."""
        platform, local = split_key(chat)
        with unavailable_errors():
            wait_ms = await self._pace(
                keys=[f"{self._prefix}{platform}:pace:{local}"], args=[round(interval * 1000)]
            )
        return max(0.0, int(wait_ms) / 1000)

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

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Empty; ``clock`` paces the chats."""
        self.messages: dict[tuple[str, str, str], str] = {}
        self.epochs: dict[tuple[str, str, str], int] = {}
        self.views: dict[tuple[str, str, str], tuple[int, str, str]] = {}
        self.users: set[str] = set()
        self.clock = clock
        self._next_call: dict[str, float] = {}

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing a slot."""
        return self.messages.get((table, chat, slot))

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot."""
        self.messages[(table, chat, slot)] = message_id
        self.epochs[(table, chat, slot)] = 0

    async def record(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, replacing: str | None
    ) -> Recorded:
        """The message shows the slot unless another of its epoch, or a newer one, does."""
        key = (table, chat, slot)
        current, posted = self.messages.get(key), self.epochs.get(key, 0)
        same = since == posted and current == replacing
        if current is not None and since <= posted and not same:
            return Recorded(False, current)
        self.messages[key] = message_id
        self.epochs[key] = since
        return Recorded(True, current)

    async def forget(self, table: str, chat: str, slot: str) -> None:
        """Forget a deleted message."""
        self.messages.pop((table, chat, slot), None)
        self.epochs.pop((table, chat, slot), None)

    async def offer(
        self, table: str, chat: str, slot: str, version: int, view: str, *, digest: str = ""
    ) -> Offer:
        """The view becomes the slot's newest unless a newer version (or the same view) is stored."""
        key = (table, chat, slot)
        previous, _, stored_digest = self.views.get(key, (0, "", ""))
        shown, posted = self.messages.get(key), self.epochs.get(key, 0)
        if version < previous:
            return Offer(False, previous, shown, posted)
        if digest and digest == stored_digest:
            return Offer(False, previous, shown, posted, same=True)
        self.views[key] = (version, view, digest)
        return Offer(True, previous, shown, posted)

    async def newest(self, table: str, chat: str, slot: str) -> Newest:
        """The slot's newest view and its message."""
        version, view, _ = self.views.get((table, chat, slot), (0, None, ""))
        return Newest(version, view, self.messages.get((table, chat, slot)))

    async def pace(self, chat: str, interval: float) -> float:
        """Book the chat's next call."""
        now = self.clock()
        at = max(self._next_call.get(chat, now), now)
        self._next_call[chat] = at + interval
        if len(self._next_call) > 50_000:
            self._next_call = {c: t for c, t in self._next_call.items() if t > now}
        return at - now

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        return user in self.users

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record whether the user can be written to privately."""
        if value:
            self.users.add(user)
        else:
            self.users.discard(user)


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)
