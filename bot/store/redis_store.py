"""Redis implementation of the storage ports: every write is one Lua script, i.e. one atomic round trip.

Key layout (``P`` is the configurable prefix, ``"mus:"`` by default):

``P table:{table_id}``
    A hash: ``v`` (the version, an integer), ``data`` (exactly the string given by the bot), ``chat`` (the
    chat key last given), ``users`` (the JSON array of user keys last given) and ``fin`` (``"1"`` once
    finished, else ``"0"``). A finished table's hash carries a TTL (``finished_ttl_seconds``).
``P chat:{chat_key}``
    A string: the id of the chat's active table.
``P user:{user_key}``
    A string: the id of the active table that listed the user last.
``P tables:live``
    A set: the ids of the tables not finished (added by create and by every unfinished write, removed when a
    table is finished or deleted), so that the deadline sweep finds them without scanning the keyspace.
    Tables stored before this index existed are added by the first ``live_tables`` of a process (one SCAN).
``P deadlines``
    A sorted set: member = the opaque deadline key, score = the due time in epoch seconds. A claimed key
    stays in it, leased: its score is moved to the end of the lease until the firing removes it.

The scripts build the index keys from the prefix themselves (they are not all declared in ``KEYS``), which is
fine on a standalone Redis (the embedded one or a real one) but not on Redis Cluster.

The stores do not own the client: whoever created it closes it. Clients may use ``decode_responses`` or not.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import redis.exceptions
from redis.asyncio import Redis

from bot.metrics import STORE_ERRORS
from bot.store.ports import (
    DEFAULT_DEADLINE_LEASE_SECONDS,
    DEFAULT_FINISHED_TTL_SECONDS,
    DEFAULT_PREFIX,
    ChatBusy,
    DeadlineChanges,
    StoredTable,
    StoreUnavailable,
    TableExists,
    VersionConflict,
    check_key,
    check_lease,
    check_version,
    normalize_user_keys,
)

__all__ = ["RedisDeadlineStore", "RedisTableStore", "unavailable_errors"]

_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,  # refused, reset, unix socket missing, LOADING, auth failures
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,  # talking to a replica after a failover
    OSError,  # includes the builtin TimeoutError / ConnectionError, should a raw one slip through
)


@contextmanager
def unavailable_errors() -> Iterator[None]:
    """Translate connection-level Redis errors raised inside the block into :class:`StoreUnavailable`."""
    try:
        yield
    except _UNAVAILABLE as exc:
        STORE_ERRORS.inc()
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# Shared Lua helpers. del_if: delete KEY only if it still points at TID (never clobber a newer table's index).
# json_array: cjson encodes an empty table as {} (an object); the users field is always an array.
_LUA_HELPERS = """
local function del_if(key, tid)
  if redis.call('GET', key) == tid then redis.call('DEL', key) end
end
local function json_array(list)
  if #list == 0 then return '[]' end
  return cjson.encode(list)
end
"""

# KEYS[1] table key; ARGV: prefix, table id, data, chat key, user keys...
# Returns {1} created, {-1} table exists, {-2, other_id} chat busy.
_LUA_CREATE = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
local prefix, tid, data, chat = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', tkey) == 1 then return {-1} end
local ckey = prefix .. 'chat:' .. chat
local other = redis.call('GET', ckey)
if other and other ~= tid then
  local okey = prefix .. 'table:' .. other
  if redis.call('EXISTS', okey) == 1 and redis.call('HGET', okey, 'fin') ~= '1' then return {-2, other} end
end
local users = {}
for i = 5, #ARGV do users[#users + 1] = ARGV[i] end
redis.call('HSET', tkey, 'v', 1, 'data', data, 'chat', chat, 'users', json_array(users), 'fin', '0')
redis.call('SET', ckey, tid)
for _, u in ipairs(users) do redis.call('SET', prefix .. 'user:' .. u, tid) end
redis.call('SADD', prefix .. 'tables:live', tid)
return {1}
"""
)

# KEYS[1] table key; ARGV: prefix, table id, expected version, data, has chat ('1'/'0'), chat key,
# finished ('1'/'0'), ttl seconds, n (deadlines to schedule), n × (key, due), m (to cancel), m × key,
# user keys... Deadlines live in the sorted set prefix .. 'deadlines' and change only if the write does.
# Returns {1, new version}, {0, current version} on conflict, {-1} if the table does not exist.
_LUA_CAS = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
local prefix, tid, expected, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local has_chat, finished, ttl = ARGV[5] == '1', ARGV[7] == '1', ARGV[8]
local cur = redis.call('HGET', tkey, 'v')
if not cur then return {-1} end
if cur ~= expected then return {0, tonumber(cur)} end
local newv = tonumber(cur) + 1
local old_chat = redis.call('HGET', tkey, 'chat')
local old_users_json = redis.call('HGET', tkey, 'users')
local old_users = {}
if old_users_json then old_users = cjson.decode(old_users_json) end
local chat = old_chat
if has_chat then chat = ARGV[6] end
local n_sched = tonumber(ARGV[9])
local i = 10
local sched = {}
for _ = 1, n_sched do sched[#sched + 1] = ARGV[i + 1]; sched[#sched + 1] = ARGV[i]; i = i + 2 end
local n_cancel = tonumber(ARGV[i])
local cancel = {}
for j = i + 1, i + n_cancel do cancel[#cancel + 1] = ARGV[j] end
i = i + n_cancel + 1
local users, listed = {}, {}
for j = i, #ARGV do users[#users + 1] = ARGV[j]; listed[ARGV[j]] = true end
local fields = {'v', newv, 'data', data, 'users', json_array(users), 'fin', finished and '1' or '0'}
if chat then fields[#fields + 1] = 'chat'; fields[#fields + 1] = chat end
redis.call('HSET', tkey, unpack(fields))
if finished then
  if old_chat then del_if(prefix .. 'chat:' .. old_chat, tid) end
  if chat then del_if(prefix .. 'chat:' .. chat, tid) end
  for _, u in ipairs(old_users) do del_if(prefix .. 'user:' .. u, tid) end
  for _, u in ipairs(users) do del_if(prefix .. 'user:' .. u, tid) end
  redis.call('EXPIRE', tkey, ttl)
  redis.call('SREM', prefix .. 'tables:live', tid)
else
  if old_chat and old_chat ~= chat then del_if(prefix .. 'chat:' .. old_chat, tid) end
  if chat then redis.call('SET', prefix .. 'chat:' .. chat, tid) end
  for _, u in ipairs(users) do redis.call('SET', prefix .. 'user:' .. u, tid) end
  for _, u in ipairs(old_users) do
    if not listed[u] then del_if(prefix .. 'user:' .. u, tid) end
  end
  redis.call('PERSIST', tkey)
  redis.call('SADD', prefix .. 'tables:live', tid)
end
local dkey = prefix .. 'deadlines'
if #cancel > 0 then redis.call('ZREM', dkey, unpack(cancel)) end
if #sched > 0 then redis.call('ZADD', dkey, unpack(sched)) end
return {1, newv}
"""
)

# KEYS[1] table key; ARGV: prefix, table id.
_LUA_DELETE = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
local prefix, tid = ARGV[1], ARGV[2]
local chat = redis.call('HGET', tkey, 'chat')
local users_json = redis.call('HGET', tkey, 'users')
if chat then del_if(prefix .. 'chat:' .. chat, tid) end
if users_json then
  for _, u in ipairs(cjson.decode(users_json)) do del_if(prefix .. 'user:' .. u, tid) end
end
redis.call('DEL', tkey)
redis.call('SREM', prefix .. 'tables:live', tid)
return 1
"""
)

# KEYS[1] live tables set; ARGV: prefix. Returns the ids of the live tables, dropping from the set those whose
# table is finished or gone (a finished table has already left it; this only tidies what a crash or a manual
# deletion left behind).
_LUA_LIVE = """
local live = {}
for _, tid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('HGET', ARGV[1] .. 'table:' .. tid, 'fin') == '0' then
    live[#live + 1] = tid
  else
    redis.call('SREM', KEYS[1], tid)
  end
end
return live
"""

# KEYS[1] deadlines zset; ARGV: now, limit, lease end. Leases and returns the due members, earliest first:
# each one's score becomes the lease end (the firing removes it; if nobody does, it is due again then).
_LUA_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #due, 1000 do
  local args = {}
  for j = i, math.min(i + 999, #due) do args[#args + 1] = ARGV[3]; args[#args + 1] = due[j] end
  redis.call('ZADD', KEYS[1], 'XX', unpack(args))
end
return due
"""


class RedisTableStore:
    """:class:`~bot.store.ports.TableStore` on Redis; compare-and-set and index upkeep in Lua scripts."""

    def __init__(
        self,
        redis: Redis,
        prefix: str = DEFAULT_PREFIX,
        finished_ttl_seconds: int = DEFAULT_FINISHED_TTL_SECONDS,
    ) -> None:
        if isinstance(finished_ttl_seconds, bool) or not isinstance(finished_ttl_seconds, int):
            raise TypeError("finished_ttl_seconds must be an int (Redis EXPIRE takes whole seconds)")
        if finished_ttl_seconds <= 0:
            raise ValueError("finished_ttl_seconds must be positive")
        self.redis = redis
        self.prefix = prefix
        self.finished_ttl_seconds = finished_ttl_seconds
        self._create = redis.register_script(_LUA_CREATE)
        self._cas = redis.register_script(_LUA_CAS)
        self._delete = redis.register_script(_LUA_DELETE)
        self._live = redis.register_script(_LUA_LIVE)
        self.live_key = f"{prefix}tables:live"
        self._live_indexed = False
        """Whether this store has added the tables stored before the live index existed (once per process)."""

    def table_key(self, table_id: str) -> str:
        """Return the Redis key of a table's hash."""
        return f"{self.prefix}table:{table_id}"

    def chat_key(self, chat_key: str) -> str:
        """Return the Redis key of a chat's index entry."""
        return f"{self.prefix}chat:{chat_key}"

    def user_key(self, user_key: str) -> str:
        """Return the Redis key of a user's index entry."""
        return f"{self.prefix}user:{user_key}"

    async def load(self, table_id: str) -> StoredTable | None:
        """Return the stored table, or ``None``."""
        check_key(table_id, "table id")
        with unavailable_errors():
            version, data = await self.redis.hmget(self.table_key(table_id), ["v", "data"])
        if version is None or data is None:
            return None
        return StoredTable(table_id, int(version), _text(data))

    async def create(
        self, table_id: str, data: str, *, chat_key: str, user_keys: Sequence[str]
    ) -> StoredTable:
        """Store a new table at version 1 and index it; raise ``TableExists`` / ``ChatBusy``."""
        check_key(table_id, "table id")
        check_key(chat_key, "chat key")
        users = normalize_user_keys(user_keys)
        with unavailable_errors():
            reply = await self._create(
                keys=[self.table_key(table_id)], args=[self.prefix, table_id, data, chat_key, *users]
            )
        status = int(reply[0])
        if status == -1:
            raise TableExists(table_id)
        if status == -2:
            raise ChatBusy(table_id, chat_key, _text(reply[1]))
        return StoredTable(table_id, 1, data)

    async def compare_and_set(
        self,
        table_id: str,
        expected_version: int,
        data: str,
        *,
        chat_key: str | None,
        user_keys: Sequence[str],
        finished: bool,
        deadlines: DeadlineChanges | None = None,
    ) -> StoredTable:
        """Write ``data`` as version ``expected_version + 1`` or raise ``VersionConflict``.

        ``deadlines`` change in the same script, only if the write succeeds.
        """
        check_key(table_id, "table id")
        check_version(expected_version)
        if chat_key is not None:
            check_key(chat_key, "chat key")
        users = normalize_user_keys(user_keys)
        changes = deadlines or DeadlineChanges()
        for key, due in changes.schedule:
            check_key(key, "deadline key")
            if not math.isfinite(due):
                raise ValueError(f"due must be a finite number, not {due!r}")
        deadline_args: list[str] = [str(len(changes.schedule))]
        for key, due in changes.schedule:
            deadline_args += [key, _score(due)]
        deadline_args += [str(len(changes.cancel)), *changes.cancel]
        args = [
            self.prefix,
            table_id,
            str(expected_version),
            data,
            "0" if chat_key is None else "1",
            chat_key or "",
            "1" if finished else "0",
            str(self.finished_ttl_seconds),
            *deadline_args,
            *users,
        ]
        with unavailable_errors():
            reply = await self._cas(keys=[self.table_key(table_id)], args=args)
        status = int(reply[0])
        if status == 1:
            return StoredTable(table_id, int(reply[1]), data)
        raise VersionConflict(table_id, expected_version, int(reply[1]) if status == 0 else None)

    async def table_for_chat(self, chat_key: str) -> str | None:
        """Return the id of the chat's active table, if any."""
        check_key(chat_key, "chat key")
        with unavailable_errors():
            value = await self.redis.get(self.chat_key(chat_key))
        return None if value is None else _text(value)

    async def table_for_user(self, user_key: str) -> str | None:
        """Return the id of the active table that listed this user last, if any."""
        check_key(user_key, "user key")
        with unavailable_errors():
            value = await self.redis.get(self.user_key(user_key))
        return None if value is None else _text(value)

    async def delete(self, table_id: str) -> None:
        """Remove the table and the index entries pointing at it."""
        check_key(table_id, "table id")
        with unavailable_errors():
            await self._delete(keys=[self.table_key(table_id)], args=[self.prefix, table_id])

    async def live_tables(self) -> list[str]:
        """Return the ids of every stored table that is not finished, sorted.

        The first call of a store also indexes the unfinished tables written before the index existed (one
        SCAN over the table keys); later calls read the index only.
        """
        with unavailable_errors():
            if not self._live_indexed:
                await self._index_unlisted_tables()
                self._live_indexed = True
            reply = await self._live(keys=[self.live_key], args=[self.prefix])
        return sorted(_text(tid) for tid in reply)

    async def _index_unlisted_tables(self) -> None:
        """Add every unfinished table to the live index (tables of an older version were never added).

        A table finished between the read and the add is dropped again by the next ``live_tables``.
        """
        start = len(self.table_key(""))
        pattern = _glob_escape(self.table_key("")) + "*"
        async for batch in _batches(self.redis.scan_iter(match=pattern, count=1000)):
            keys = [_text(key) for key in batch]
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.hget(key, "fin")
                flags = await pipe.execute()
            live = [key[start:] for key, fin in zip(keys, flags, strict=True) if fin in ("0", b"0")]
            if live:
                await self.redis.sadd(self.live_key, *live)

    async def ping(self) -> None:
        """Health check: return if Redis answers PING, raise ``StoreUnavailable`` otherwise."""
        with unavailable_errors():
            await self.redis.ping()


class RedisDeadlineStore:
    """:class:`~bot.store.ports.DeadlineStore` on one Redis sorted set (``{prefix}deadlines``)."""

    def __init__(
        self,
        redis: Redis,
        prefix: str = DEFAULT_PREFIX,
        *,
        lease_seconds: float = DEFAULT_DEADLINE_LEASE_SECONDS,
    ) -> None:
        """``lease_seconds``: how long a claimed key stays with its claimer before it is due again."""
        self.redis = redis
        self.prefix = prefix
        self.key = f"{prefix}deadlines"
        self.lease_seconds = check_lease(lease_seconds)
        self._claim = redis.register_script(_LUA_CLAIM)

    async def schedule(self, key: str, due: float) -> None:
        """Schedule ``key`` at ``due`` (epoch seconds); scheduling an existing key moves it."""
        check_key(key, "deadline key")
        if not math.isfinite(due):
            raise ValueError(f"due must be a finite number, not {due!r}")
        with unavailable_errors():
            await self.redis.zadd(self.key, {key: float(due)})

    async def cancel(self, key: str) -> None:
        """Forget ``key``."""
        with unavailable_errors():
            await self.redis.zrem(self.key, key)

    async def claim_due(self, now: float, limit: int = 100) -> list[str]:
        """Atomically lease and return up to ``limit`` keys due at or before ``now``, earliest first (each is
        moved to ``now + lease_seconds``)."""
        if limit <= 0:
            return []
        if math.isnan(now):
            raise ValueError("now must be a number, not NaN")
        until = _score(float(now) + self.lease_seconds)
        with unavailable_errors():
            reply = await self._claim(keys=[self.key], args=[_score(now), limit, until])
        return [_text(member) for member in reply]

    async def schedule_missing(self, entries: Sequence[tuple[str, float]]) -> list[str]:
        """Schedule each ``(key, due)`` whose key is not scheduled at all (``ZADD NX``); return those keys."""
        for key, due in entries:
            check_key(key, "deadline key")
            if not math.isfinite(due):
                raise ValueError(f"due must be a finite number, not {due!r}")
        if not entries:
            return []
        with unavailable_errors():
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, due in entries:
                    pipe.zadd(self.key, {key: float(due)}, nx=True)
                added = await pipe.execute()
        return [key for (key, _), count in zip(entries, added, strict=True) if int(count)]

    async def next_due(self) -> float | None:
        """Return the earliest due time, or ``None``."""
        with unavailable_errors():
            first = await self.redis.zrange(self.key, 0, 0, withscores=True)
        return float(first[0][1]) if first else None

    async def ping(self) -> None:
        """Health check: return if Redis answers PING, raise ``StoreUnavailable`` otherwise."""
        with unavailable_errors():
            await self.redis.ping()


def _glob_escape(text: str) -> str:
    """Escape the characters that are special in a Redis ``MATCH`` pattern."""
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)


async def _batches(keys: AsyncIterator[Any], size: int = 1000) -> AsyncIterator[list[Any]]:
    """Group an async iterator's items in lists of up to ``size``."""
    batch: list[Any] = []
    async for key in keys:
        batch.append(key)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _score(value: float) -> str:
    """Render a score for Redis: ``repr`` round-trips a float exactly; infinities become ``±inf``."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return repr(float(value))
