"""Hand history: every finished hand kept for a while, per match and per chat, in Redis or in memory.

The store keeps opaque entries (a finished hand as JSON, see :mod:`bot.history._model`): it knows where they
are kept and for how long, not what they say. Everything expires: a match's hands ``retention`` seconds after
its last hand was kept, a chat's list of matches the same, and the list forgets matches older than that.

Redis layout (``P`` is the prefix, ``mus:`` by default; on a Redis Cluster the table id and the chat key are
hash tags — ``hist:m:{T}``, ``hist:c:{C}`` — so that every script touches one slot):

``P hist:m:T``
    A hash per match (``T``, the table that played it): field = hand number, value = the hand's entry.
``P hist:c:C``
    A sorted set per chat (``C``): member = table id, score = when its last hand was kept; at most
    :data:`MATCHES_PER_CHAT` members, the newest.

Keeping a hand is one script on one server (the match's hash and the chat's list together); on a cluster
those two keys live in different slots, so it is two scripts, the match first: a worker that dies between
them leaves a match kept but not listed in its chat (the next hand of that match lists it).

A chat's list follows the chat to a new key (:meth:`HistoryStore.move_chat`: a group upgraded to a
supergroup) in one script on one server; on a cluster the new list takes the old one's matches, then the old
list goes: a worker that dies in between leaves both, and moving again finishes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.store import DEFAULT_PREFIX, AnyRedis, check_key, is_cluster, unavailable_errors

#: How long a finished hand is kept by default (the host's ``HISTORY_DAYS``, 30).
DEFAULT_RETENTION_SECONDS = 30 * 86400.0
#: Matches a chat's list remembers (the newest); older ones are forgotten before they expire.
MATCHES_PER_CHAT = 50


class HistoryStore(Protocol):
    """Where finished hands are kept, for :attr:`retention` seconds."""

    retention: float
    """Seconds a hand is kept after the last hand of its match."""

    async def keep(self, table: str, chat: str, hand_no: int, at: float, entry: str) -> None:
        """Keep hand ``hand_no`` of the match played at ``table`` in ``chat``, finished at ``at``."""
        ...

    async def matches(self, chat: str, now: float, limit: int = 10) -> list[str]:
        """The tables whose matches ``chat`` still keeps, newest first (at most ``limit``)."""
        ...

    async def hands(self, table: str, last: int = 0) -> list[tuple[int, str]]:
        """The kept hands of a match by hand number (the ``last`` ones only, when given)."""
        ...

    async def hand(self, table: str, hand_no: int) -> str | None:
        """One kept hand, or ``None`` (never kept, or expired)."""
        ...

    async def move_chat(self, old: str, new: str) -> None:
        """The chat ``old`` is now ``new``: ``new`` lists the matches ``old`` listed (a match in both keeps
        its latest time; still the newest :data:`MATCHES_PER_CHAT`, kept as long as the longer-kept list)
        and ``old`` lists none. Doing it again changes nothing."""
        ...


# KEYS: the match's hash and/or the chat's sorted set, as ARGV[1] says ("m", "c" or "mc").
# ARGV: what, retention (ms), hand number, entry, table id, at (s), oldest score kept, matches per chat.
_LUA_KEEP = """
local what = ARGV[1]
local ttl = tonumber(ARGV[2])
local k = 1
if string.find(what, 'm', 1, true) then
  redis.call('HSET', KEYS[k], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[k], ttl)
  k = k + 1
end
if string.find(what, 'c', 1, true) then
  redis.call('ZADD', KEYS[k], ARGV[6], ARGV[5])
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', '(' .. ARGV[7])
  redis.call('ZREMRANGEBYRANK', KEYS[k], 0, -(tonumber(ARGV[8]) + 1))
  redis.call('PEXPIRE', KEYS[k], ttl)
end
return 1
"""

# KEYS[1]: a match's hash. ARGV[1]: how many of the last hands (0: all). Returns [n1, entry1, n2, …].
_LUA_HANDS = """
local fields = redis.call('HKEYS', KEYS[1])
local numbers = {}
for i, f in ipairs(fields) do numbers[i] = tonumber(f) end
table.sort(numbers)
local last = tonumber(ARGV[1])
local first = 1
if last > 0 and #numbers > last then first = #numbers - last + 1 end
local out = {}
for i = first, #numbers do
  local n = tostring(numbers[i])
  out[#out + 1] = n
  out[#out + 1] = redis.call('HGET', KEYS[1], n)
end
return out
"""


# adopt: add each (member, score) of a flat list to a chat's list unless it has the match at a later time;
# keep the newest `most`; make the list live at least `ttl` ms more (a negative ttl: no change).
_LUA_ADOPT_FN = """
local function adopt(list, flat, first, most, ttl)
  for i = first, #flat, 2 do
    local mine = redis.call('ZSCORE', list, flat[i])
    if not mine or tonumber(mine) < tonumber(flat[i + 1]) then
      redis.call('ZADD', list, flat[i + 1], flat[i])
    end
  end
  if #flat >= first then
    redis.call('ZREMRANGEBYRANK', list, 0, -(most + 1))
    if ttl > redis.call('PTTL', list) then redis.call('PEXPIRE', list, ttl) end
  end
end
"""

# Cluster. KEYS[1]: the new chat's list. ARGV: matches per chat, the old list's remaining life (ms), then
# member and score pairs read from the old list.
_LUA_ADOPT = (
    _LUA_ADOPT_FN
    + """
adopt(KEYS[1], ARGV, 3, tonumber(ARGV[1]), tonumber(ARGV[2]))
return 1
"""
)

# One server. KEYS[1]: the old chat's list, KEYS[2]: the new one's; ARGV[1]: matches per chat. The old list's
# matches go to the new one, then the old list is deleted.
_LUA_MOVE = (
    _LUA_ADOPT_FN
    + """
local old = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
adopt(KEYS[2], old, 1, tonumber(ARGV[1]), redis.call('PTTL', KEYS[1]))
redis.call('DEL', KEYS[1])
return 1
"""
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisHistory:
    """Finished hands in Redis, with expiry (see the module's layout)."""

    def __init__(
        self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX, retention: float = DEFAULT_RETENTION_SECONDS
    ) -> None:
        """Use ``redis`` (not owned) under ``prefix``, keeping hands ``retention`` seconds."""
        if not retention > 0:
            raise ValueError(f"retention must be positive, not {retention!r}")
        self._redis = redis
        self.prefix = prefix
        self.retention = retention
        self.cluster = is_cluster(redis)
        self._keep = redis.register_script(_LUA_KEEP)
        self._hands = redis.register_script(_LUA_HANDS)
        self._move = redis.register_script(_LUA_MOVE)
        self._adopt = redis.register_script(_LUA_ADOPT)

    def _tag(self, value: str) -> str:
        return f"{{{value}}}" if self.cluster else value

    def match_key(self, table: str) -> str:
        """The Redis key of a match's hands."""
        return f"{self.prefix}hist:m:{self._tag(check_key(table, 'table'))}"

    def chat_key(self, chat: str) -> str:
        """The Redis key of a chat's list of matches."""
        return f"{self.prefix}hist:c:{self._tag(check_key(chat, 'chat'))}"

    async def keep(self, table: str, chat: str, hand_no: int, at: float, entry: str) -> None:
        """Keep a hand and list its match in its chat (one script on one server, two on a cluster)."""
        ttl = max(1, int(self.retention * 1000))
        oldest = float(at) - self.retention

        def args(what: str) -> list[str | int]:
            # what: which keys the script is given ("m" the match, "c" the chat's list, "mc" both).
            return [what, ttl, hand_no, entry, table, repr(float(at)), repr(oldest), MATCHES_PER_CHAT]

        match, listing = self.match_key(table), self.chat_key(chat)
        with unavailable_errors():
            if self.cluster:
                await self._keep(keys=[match], args=args("m"))
                await self._keep(keys=[listing], args=args("c"))
            else:
                await self._keep(keys=[match, listing], args=args("mc"))

    async def matches(self, chat: str, now: float, limit: int = 10) -> list[str]:
        """The chat's matches kept since ``now - retention``, newest first."""
        if limit <= 0:
            return []
        with unavailable_errors():
            found = await self._redis.zrevrangebyscore(
                self.chat_key(chat), "+inf", repr(now - self.retention), start=0, num=limit
            )
        return [_text(t) for t in found]

    async def hands(self, table: str, last: int = 0) -> list[tuple[int, str]]:
        """A match's kept hands by hand number (one consistent read)."""
        with unavailable_errors():
            flat = await self._hands(keys=[self.match_key(table)], args=[max(0, last)])
        return [(int(_text(flat[i])), _text(flat[i + 1])) for i in range(0, len(flat), 2)]

    async def hand(self, table: str, hand_no: int) -> str | None:
        """One kept hand."""
        with unavailable_errors():
            value = await self._redis.hget(self.match_key(table), str(hand_no))
        return None if value is None else _text(value)

    async def move_chat(self, old: str, new: str) -> None:
        """The chat's list follows it to its new key (one script on one server; on a cluster, the new list
        takes the old one's matches, then the old list goes)."""
        source, target = self.chat_key(old), self.chat_key(new)
        if source == target:
            return
        with unavailable_errors():
            if not self.cluster:
                await self._move(keys=[source, target], args=[MATCHES_PER_CHAT])
                return
            listed: list[Any] = await self._redis.zrange(source, 0, -1, withscores=True)
            if listed:
                ttl = int(await self._redis.pttl(source))
                pairs = [item for row in listed for item in (_text(row[0]), repr(float(row[1])))]
                await self._adopt(keys=[target], args=[MATCHES_PER_CHAT, ttl, *pairs])
            await self._redis.delete(source)


@dataclass
class _Match:
    hands: dict[int, str] = field(default_factory=dict)
    expires: float = 0.0


class MemoryHistory:
    """Finished hands in memory, with the same expiry as Redis (for unit tests and the terminal's tests)."""

    def __init__(
        self, retention: float = DEFAULT_RETENTION_SECONDS, clock: Callable[[], float] = time.time
    ) -> None:
        """Keep hands ``retention`` seconds by ``clock``."""
        if not retention > 0:
            raise ValueError(f"retention must be positive, not {retention!r}")
        self.retention = retention
        self.clock = clock
        self._matches: dict[str, _Match] = {}
        self._chats: dict[str, dict[str, float]] = {}

    def _live(self, table: str) -> _Match | None:
        match = self._matches.get(table)
        if match is not None and match.expires <= self.clock():
            del self._matches[table]
            return None
        return match

    async def keep(self, table: str, chat: str, hand_no: int, at: float, entry: str) -> None:
        """Keep a hand and list its match in its chat."""
        check_key(table, "table")
        check_key(chat, "chat")
        match = self._live(table) or self._matches.setdefault(table, _Match())
        match.hands[hand_no] = entry
        match.expires = self.clock() + self.retention
        listing = self._chats.setdefault(chat, {})
        listing[table] = at
        for old in [t for t, when in listing.items() if when < at - self.retention]:
            del listing[old]
        for old in sorted(listing, key=lambda t: listing[t])[: max(0, len(listing) - MATCHES_PER_CHAT)]:
            del listing[old]

    async def matches(self, chat: str, now: float, limit: int = 10) -> list[str]:
        """The chat's matches kept since ``now - retention``, newest first."""
        listing = self._chats.get(chat, {})
        kept = [t for t, when in listing.items() if when >= now - self.retention]
        return sorted(kept, key=lambda t: listing[t], reverse=True)[: max(0, limit)]

    async def hands(self, table: str, last: int = 0) -> list[tuple[int, str]]:
        """A match's kept hands by hand number."""
        match = self._live(table)
        if match is None:
            return []
        numbers = sorted(match.hands)
        if last > 0:
            numbers = numbers[-last:]
        return [(n, match.hands[n]) for n in numbers]

    async def hand(self, table: str, hand_no: int) -> str | None:
        """One kept hand."""
        match = self._live(table)
        return None if match is None else match.hands.get(hand_no)

    async def move_chat(self, old: str, new: str) -> None:
        """``new`` lists ``old``'s matches (the latest time of each), the newest ones; ``old`` none."""
        check_key(old, "chat")
        check_key(new, "chat")
        if old == new:
            return
        listed = self._chats.pop(old, {})
        if not listed:
            return
        target = self._chats.setdefault(new, {})
        for table, when in listed.items():
            target[table] = max(when, target.get(table, when))
        for gone in sorted(target, key=lambda t: target[t])[: max(0, len(target) - MATCHES_PER_CHAT)]:
            del target[gone]
