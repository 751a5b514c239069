"""Redis implementation of the storage ports: every write is a Lua script on the keys of one hash slot.

Two layouts, chosen from the client (:class:`KeyLayout`): a single Redis server (``redis.asyncio.Redis``: the
embedded one or a real one) keeps the layout of earlier versions, so an upgrade finds every table where it
was; a Redis Cluster (``redis.asyncio.cluster.RedisCluster``, ``REDIS_URL=redis+cluster://…``) tags its keys
so that each script call touches one slot.

Single Redis (``P`` is the configurable prefix, ``"mus:"`` by default):

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

Every script is atomic: a write changes the table, its indexes, the live set and its deadlines at once (the
scripts build the index keys from the prefix, which a single server allows).

Redis Cluster: tables, the live set and the deadlines are split in :data:`CLUSTER_SHARDS` shards. A table's
shard is ``crc32(table_id) % 16``; a deadline key's shard is that of its table (the part of the key before
its first ``|``: ``{table}|turn|3-7``). Every key of shard ``s`` carries the hash tag ``{T}`` with
``T = shard_tags()[s]`` (``d0.12``, ``d1.11``…: the tags fall in the 16 sixteenths of the slot space, so the
shards spread evenly over masters that hold equal slot ranges):

``P{T}:table:{table_id}``, ``P{T}:tables:live``, ``P{T}:deadlines``
    As above, one of each per shard: a table, its shard of the live set and its shard of the deadlines share
    a slot, so the compare-and-set, the live set and the deadlines it schedules or cancels stay one atomic
    script. A deadline of another table (another shard) given to a write is changed right after it.
``P chat:{chat_key}``, ``P user:{user_key}``
    The same strings, each in its own slot, so no script can reach them. They are written by single-key
    commands after the table's script (``create`` claims the chat before it finishes: see
    :meth:`RedisTableStore.create`); an entry is removed only if it still names the table (a one-key
    script). A crash between the table's script and these commands can leave an entry naming a finished or
    vanished table: ``table_for_chat`` / ``table_for_user`` check the table and ignore (and remove) such an
    entry; a missing or stale entry of a live table is set again by the table's next write.

The stores do not own the client: whoever created it closes it. Clients may use ``decode_responses`` or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import redis.exceptions
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

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

__all__ = [
    "CLUSTER_SHARDS",
    "AnyRedis",
    "KeyLayout",
    "RedisDeadlineStore",
    "RedisTableStore",
    "is_cluster",
    "shard_tags",
    "unavailable_errors",
]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

AnyRedis: TypeAlias = Redis | RedisCluster
"""The clients the Redis stores accept: one server, or a Redis Cluster."""

CLUSTER_SHARDS = 16
"""Shards of the tables, the live set and the deadlines on a Redis Cluster (one hash tag each)."""

PENDING_TTL_SECONDS = 60
"""On a cluster, how long a table being created lives before its chat is claimed (see ``create``)."""

_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,  # refused, reset, unix socket missing, LOADING, auth failures
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,  # talking to a replica after a failover
    redis.exceptions.ClusterError,  # CLUSTERDOWN, MASTERDOWN, redirections that never settled
    redis.exceptions.SlotNotCoveredError,  # a cluster whose slots are not all served (a master is gone)
    OSError,  # includes the builtin TimeoutError / ConnectionError, should a raw one slip through
)

# What redis-py's cluster client says when it cannot learn the cluster's layout (no node answers, or the
# slots are not all covered). Other RedisClusterExceptions are programming errors (keys of several slots).
_CLUSTER_UNREACHABLE = ("Redis Cluster cannot be connected", "All slots are not covered")


def _cluster_unreachable(exc: redis.exceptions.RedisClusterException) -> bool:
    return isinstance(exc.__cause__, _UNAVAILABLE) or str(exc).startswith(_CLUSTER_UNREACHABLE)


@contextmanager
def unavailable_errors() -> Iterator[None]:
    """Translate connection-level Redis errors raised inside the block into :class:`StoreUnavailable`.

    On a cluster that includes a cluster that is down, a slot no master serves, and a cluster no node of
    which answers.
    """
    try:
        yield
    except _UNAVAILABLE as exc:
        STORE_ERRORS.inc()
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc
    except redis.exceptions.RedisClusterException as exc:
        if not _cluster_unreachable(exc):
            raise
        STORE_ERRORS.inc()
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc


def is_cluster(client: AnyRedis) -> bool:
    """Whether ``client`` talks to a Redis Cluster (the stores then use the cluster layout)."""
    return isinstance(client, RedisCluster)


@functools.cache
def shard_tags(count: int = CLUSTER_SHARDS) -> tuple[str, ...]:
    """The hash tag of each shard: the first ``d<i>.<n>`` (n = 0, 1, …) whose slot lies in the i-th of
    ``count`` equal parts of the slot space, so the shards spread evenly over equal slot ranges."""
    tags: list[str] = []
    for i in range(count):
        low, high = i * REDIS_CLUSTER_HASH_SLOTS // count, (i + 1) * REDIS_CLUSTER_HASH_SLOTS // count
        n = 0
        while not low <= key_slot(f"d{i}.{n}".encode()) < high:
            n += 1
        tags.append(f"d{i}.{n}")
    return tuple(tags)


@dataclass(frozen=True, slots=True)
class KeyLayout:
    """Where the table and deadline stores keep their keys: the single-server layout, or the cluster's."""

    prefix: str
    cluster: bool

    @property
    def shards(self) -> int:
        """How many shards the tables, the live set and the deadlines are split in (1 on a single server)."""
        return CLUSTER_SHARDS if self.cluster else 1

    def table_shard(self, table_id: str) -> int:
        """The shard of a table."""
        return zlib.crc32(table_id.encode()) % CLUSTER_SHARDS if self.cluster else 0

    def deadline_shard(self, key: str) -> int:
        """The shard of a deadline key: its table's (the part before the first ``|``)."""
        return self.table_shard(key.partition("|")[0])

    def _base(self, shard: int) -> str:
        return f"{self.prefix}{{{shard_tags()[shard]}}}:" if self.cluster else self.prefix

    def table(self, table_id: str) -> str:
        """The key of a table's hash."""
        return f"{self._base(self.table_shard(table_id))}table:{table_id}"

    def table_prefix(self, shard: int) -> str:
        """What the keys of the tables of ``shard`` start with (the table id follows)."""
        return f"{self._base(shard)}table:"

    def live(self, shard: int) -> str:
        """The key of a shard of the live set."""
        return f"{self._base(shard)}tables:live"

    def deadlines(self, shard: int) -> str:
        """The key of a shard of the deadlines."""
        return f"{self._base(shard)}deadlines"

    def chat(self, chat_key: str) -> str:
        """The key of a chat's index entry."""
        return f"{self.prefix}chat:{chat_key}"

    def user(self, user_key: str) -> str:
        """The key of a user's index entry."""
        return f"{self.prefix}user:{user_key}"


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

# Single server. KEYS[1] table key, KEYS[2] live set; ARGV: prefix, table id, data, chat key, user keys...
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
redis.call('SADD', KEYS[2], tid)
return {1}
"""
)

# Cluster, first step of a create. KEYS[1] table key; ARGV: data, chat key, ttl, user keys... Writes the
# table, expiring (it is not in the live set yet). Returns 1, or -1 if the table exists.
_LUA_CREATE_PENDING = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
if redis.call('EXISTS', tkey) == 1 then return -1 end
local users = {}
for i = 4, #ARGV do users[#users + 1] = ARGV[i] end
redis.call('HSET', tkey, 'v', 1, 'data', ARGV[1], 'chat', ARGV[2], 'users', json_array(users), 'fin', '0')
redis.call('EXPIRE', tkey, ARGV[3])
return 1
"""
)

# Cluster, last step of a create. KEYS[1] table key, KEYS[2] live set shard; ARGV[1] table id.
# Returns 1, or 0 if the table expired before the chat was claimed.
_LUA_CREATE_DONE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('PERSIST', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""

# Cluster. KEYS[1] an index entry; ARGV: table id, the id it must hold now ('' for none).
# Points the entry at the table if it still holds what the caller saw. Returns 1, or 0 if it changed.
_LUA_CLAIM_INDEX = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

# Cluster. KEYS[1] an index entry; ARGV[1] table id. Removes the entry if it still names the table.
_LUA_DEL_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS[1] table key, KEYS[2] its deadlines (shard), KEYS[3] its live set (shard); ARGV: inline indexes
# ('1': single server, the script keeps the chat and user indexes; '0': cluster, the caller does), prefix,
# table id, expected version, data, has chat ('1'/'0'), chat key, finished ('1'/'0'), ttl seconds,
# n (deadlines to schedule), n × (key, due), m (to cancel), m × key, user keys... Deadlines change only if
# the write does. Returns {1, new version, old chat, old users (JSON), chat} ('' for no chat),
# {0, current version} on conflict, {-1} if the table does not exist.
_LUA_CAS = (
    _LUA_HELPERS
    + """
local tkey, dkey, lkey = KEYS[1], KEYS[2], KEYS[3]
local inline, prefix, tid, expected, data = ARGV[1] == '1', ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local has_chat, finished, ttl = ARGV[6] == '1', ARGV[8] == '1', ARGV[9]
local cur = redis.call('HGET', tkey, 'v')
if not cur then return {-1} end
if cur ~= expected then return {0, tonumber(cur)} end
local newv = tonumber(cur) + 1
local old_chat = redis.call('HGET', tkey, 'chat')
local old_users_json = redis.call('HGET', tkey, 'users')
local old_users = {}
if old_users_json then old_users = cjson.decode(old_users_json) end
local chat = old_chat
if has_chat then chat = ARGV[7] end
local n_sched = tonumber(ARGV[10])
local i = 11
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
  if inline then
    if old_chat then del_if(prefix .. 'chat:' .. old_chat, tid) end
    if chat then del_if(prefix .. 'chat:' .. chat, tid) end
    for _, u in ipairs(old_users) do del_if(prefix .. 'user:' .. u, tid) end
    for _, u in ipairs(users) do del_if(prefix .. 'user:' .. u, tid) end
  end
  redis.call('EXPIRE', tkey, ttl)
  redis.call('SREM', lkey, tid)
else
  if inline then
    if old_chat and old_chat ~= chat then del_if(prefix .. 'chat:' .. old_chat, tid) end
    if chat then redis.call('SET', prefix .. 'chat:' .. chat, tid) end
    for _, u in ipairs(users) do redis.call('SET', prefix .. 'user:' .. u, tid) end
    for _, u in ipairs(old_users) do
      if not listed[u] then del_if(prefix .. 'user:' .. u, tid) end
    end
  end
  redis.call('PERSIST', tkey)
  redis.call('SADD', lkey, tid)
end
if #cancel > 0 then redis.call('ZREM', dkey, unpack(cancel)) end
if #sched > 0 then redis.call('ZADD', dkey, unpack(sched)) end
return {1, newv, old_chat or '', old_users_json or '[]', chat or ''}
"""
)

# KEYS[1] table key, KEYS[2] its live set (shard); ARGV: inline indexes ('1'/'0', as above), prefix, table id.
# Returns {chat, users (JSON)} of the table deleted ('' and '[]' if there was none).
_LUA_DELETE = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
local inline, prefix, tid = ARGV[1] == '1', ARGV[2], ARGV[3]
local chat = redis.call('HGET', tkey, 'chat')
local users_json = redis.call('HGET', tkey, 'users')
if inline then
  if chat then del_if(prefix .. 'chat:' .. chat, tid) end
  if users_json then
    for _, u in ipairs(cjson.decode(users_json)) do del_if(prefix .. 'user:' .. u, tid) end
  end
end
redis.call('DEL', tkey)
redis.call('SREM', KEYS[2], tid)
return {chat or '', users_json or '[]'}
"""
)

# KEYS[1] live set (shard); ARGV[1] what the keys of its tables start with. Returns the ids of the live
# tables, dropping from the set those whose table is finished or gone (a finished table has already left it;
# this only tidies what a crash or a manual deletion left behind).
_LUA_LIVE = """
local live = {}
for _, tid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('HGET', ARGV[1] .. tid, 'fin') == '0' then
    live[#live + 1] = tid
  else
    redis.call('SREM', KEYS[1], tid)
  end
end
return live
"""

# Single server. KEYS[1] deadlines zset; ARGV: now, limit, lease end. Leases and returns the due members,
# earliest first: each one's score becomes the lease end (the firing removes it; if nobody does, it is due
# again then).
_LUA_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #due, 1000 do
  local args = {}
  for j = i, math.min(i + 999, #due) do args[#args + 1] = ARGV[3]; args[#args + 1] = due[j] end
  redis.call('ZADD', KEYS[1], 'XX', unpack(args))
end
return due
"""

# Cluster. KEYS[1] a deadlines shard; ARGV: now, lease end, members... Leases the members still due (another
# worker may have leased some since they were looked at) and returns them.
_LUA_CLAIM_LISTED = """
local now, until_ = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i = 3, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) <= now then
    redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i])
    out[#out + 1] = ARGV[i]
  end
end
return out
"""


class RedisTableStore:
    """:class:`~bot.store.ports.TableStore` on Redis or a Redis Cluster; compare-and-set in Lua scripts."""

    def __init__(
        self,
        redis: AnyRedis,
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
        self.layout = KeyLayout(prefix, is_cluster(redis))
        self.cluster = self.layout.cluster
        self._create = redis.register_script(_LUA_CREATE)
        self._create_pending = redis.register_script(_LUA_CREATE_PENDING)
        self._create_done = redis.register_script(_LUA_CREATE_DONE)
        self._claim_index = redis.register_script(_LUA_CLAIM_INDEX)
        self._del_if = redis.register_script(_LUA_DEL_IF)
        self._cas = redis.register_script(_LUA_CAS)
        self._delete = redis.register_script(_LUA_DELETE)
        self._live = redis.register_script(_LUA_LIVE)
        self.live_keys = tuple(self.layout.live(shard) for shard in range(self.layout.shards))
        """The live set's keys: one on a single server, one per shard on a cluster."""
        self._live_indexed = False
        """Whether this store has added the tables stored before the live index existed (once per process)."""

    @property
    def live_key(self) -> str:
        """The live set's key on a single server (a cluster has one per shard: :attr:`live_keys`)."""
        if self.cluster:
            raise AttributeError("a Redis Cluster splits the live set in shards: see live_keys")
        return self.live_keys[0]

    def table_key(self, table_id: str) -> str:
        """Return the Redis key of a table's hash."""
        return self.layout.table(table_id)

    def chat_key(self, chat_key: str) -> str:
        """Return the Redis key of a chat's index entry."""
        return self.layout.chat(chat_key)

    def user_key(self, user_key: str) -> str:
        """Return the Redis key of a user's index entry."""
        return self.layout.user(user_key)

    def _keys(self, table_id: str) -> tuple[str, str, str]:
        """A table's key, and its shards of the deadlines and of the live set (one slot on a cluster)."""
        shard = self.layout.table_shard(table_id)
        return self.layout.table(table_id), self.layout.deadlines(shard), self.layout.live(shard)

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
        """Store a new table at version 1 and index it; raise ``TableExists`` / ``ChatBusy``.

        On a single server: one script. On a cluster the chat's entry is in another slot than the table, so
        a create takes steps that keep "one active table per chat" exact: (1) the table is written with a
        short TTL (:data:`PENDING_TTL_SECONDS`) and outside the live set; (2) the chat's entry is claimed
        with a compare-and-set, unless it names another table that is live (``ChatBusy``: the new table is
        deleted); (3) the table is made persistent and added to the live set; (4) the user entries are set.
        A table written in (1) is live for whoever reads the chat's entry, so of two creates in one chat
        one always sees the other. A crash after (1) leaves a table that nothing names and that expires; a
        crash after (2) leaves the chat's table pending, until its first write (which makes it a table like
        any other) or its expiry (which frees the chat).
        """
        check_key(table_id, "table id")
        check_key(chat_key, "chat key")
        users = normalize_user_keys(user_keys)
        if self.cluster:
            return await self._create_on_cluster(table_id, data, chat_key, users)
        table_key, _, live_key = self._keys(table_id)
        with unavailable_errors():
            reply = await self._create(
                keys=[table_key, live_key], args=[self.prefix, table_id, data, chat_key, *users]
            )
        status = int(reply[0])
        if status == -1:
            raise TableExists(table_id)
        if status == -2:
            raise ChatBusy(table_id, chat_key, _text(reply[1]))
        return StoredTable(table_id, 1, data)

    async def _create_on_cluster(
        self, table_id: str, data: str, chat_key: str, users: tuple[str, ...]
    ) -> StoredTable:
        table_key, _, live_key = self._keys(table_id)
        chat_entry = self.chat_key(chat_key)
        with unavailable_errors():
            created = await self._create_pending(
                keys=[table_key], args=[data, chat_key, PENDING_TTL_SECONDS, *users]
            )
            if int(created) == -1:
                raise TableExists(table_id)
            try:
                for _attempt in range(10):  # claim the chat's entry, unless it names another live table
                    seen = await self.redis.get(chat_entry)
                    other = None if seen is None else _text(seen)
                    if other is not None and other != table_id and await self._is_live(other):
                        raise ChatBusy(table_id, chat_key, other)
                    if int(await self._claim_index(keys=[chat_entry], args=[table_id, other or ""])):
                        break
                else:
                    raise StoreUnavailable(f"chat {chat_key!r}: its entry kept changing")
                if not int(await self._create_done(keys=[table_key, live_key], args=[table_id])):
                    await self._del_if(keys=[chat_entry], args=[table_id])
                    raise StoreUnavailable(f"table {table_id!r}: creating it took too long")
            except BaseException:
                with contextlib.suppress(Exception):
                    await self.redis.delete(table_key)  # not created after all: nothing names it
                raise
        await self._reindex(table_id, [("set", self.user_key(user)) for user in users])
        return StoredTable(table_id, 1, data)

    async def _is_live(self, table_id: str) -> bool:
        """Whether a table is stored and not finished (on a cluster: before trusting an index entry)."""
        fin = await self.redis.hget(self.table_key(table_id), "fin")
        return fin is not None and _text(fin) == "0"

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

        ``deadlines`` change in the same script, only if the write succeeds (on a cluster, those of another
        table's shard right after it).
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
        # The deadlines of the table's shard change in its script; others (another table's) right after.
        shard = self.layout.table_shard(table_id)
        schedule, schedule_after = _split(
            changes.schedule, lambda e: self.layout.deadline_shard(e[0]) == shard
        )
        cancel, cancel_after = _split(changes.cancel, lambda k: self.layout.deadline_shard(k) == shard)
        deadline_args: list[str] = [str(len(schedule))]
        for key, due in schedule:
            deadline_args += [key, _score(due)]
        deadline_args += [str(len(cancel)), *cancel]
        args = [
            "0" if self.cluster else "1",
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
            reply = await self._cas(keys=list(self._keys(table_id)), args=args)
        status = int(reply[0])
        if status != 1:
            raise VersionConflict(table_id, expected_version, int(reply[1]) if status == 0 else None)
        if self.cluster:
            old_chat, old_users, chat = _text(reply[2]), json.loads(_text(reply[3])), _text(reply[4])
            ops: list[tuple[str, str]] = []
            if finished:
                ops += [("del_if", self.chat_key(c)) for c in dict.fromkeys((old_chat, chat)) if c]
                ops += [("del_if", self.user_key(u)) for u in dict.fromkeys([*old_users, *users])]
            else:
                if old_chat and old_chat != chat:
                    ops.append(("del_if", self.chat_key(old_chat)))
                if chat:
                    ops.append(("set", self.chat_key(chat)))
                ops += [("set", self.user_key(u)) for u in users]
                ops += [("del_if", self.user_key(u)) for u in old_users if u not in users]
            await self._reindex(table_id, ops, DeadlineChanges(schedule_after, cancel_after))
        return StoredTable(table_id, int(reply[1]), data)

    async def _reindex(
        self, table_id: str, ops: Sequence[tuple[str, str]], deadlines: DeadlineChanges | None = None
    ) -> None:
        """Cluster: after a table's script, set (``"set"``) or remove if it still names the table
        (``"del_if"``) index entries, and change the deadlines of other shards, in one pipeline.

        The table is written already: if Redis fails now, the entries are left for the next write to set
        and for the readers to ignore (``table_for_chat`` checks the table), and the failure is logged.
        """
        changes = deadlines or DeadlineChanges()
        if not ops and not changes:
            return
        layout = self.layout
        try:
            with unavailable_errors():
                async with self.redis.pipeline(transaction=False) as pipe:
                    for op, key in ops:
                        if op == "set":
                            pipe.set(key, table_id)
                        else:
                            pipe.eval(_LUA_DEL_IF, 1, key, table_id)
                    for key in changes.cancel:
                        pipe.zrem(layout.deadlines(layout.deadline_shard(key)), key)
                    for key, due in changes.schedule:
                        pipe.zadd(layout.deadlines(layout.deadline_shard(key)), {key: float(due)})
                    await pipe.execute()
        except StoreUnavailable as exc:
            log.warning("table %s is written, but its indexes could not follow: %s", table_id, exc)

    async def table_for_chat(self, chat_key: str) -> str | None:
        """Return the id of the chat's active table, if any."""
        check_key(chat_key, "chat key")
        return await self._indexed(self.chat_key(chat_key))

    async def table_for_user(self, user_key: str) -> str | None:
        """Return the id of the active table that listed this user last, if any."""
        check_key(user_key, "user key")
        return await self._indexed(self.user_key(user_key))

    async def _indexed(self, entry: str) -> str | None:
        """The table an index entry names; on a cluster only if that table is live (a stale entry, left by a
        crash between a write and its index update, is removed)."""
        with unavailable_errors():
            value = await self.redis.get(entry)
            if value is None:
                return None
            table_id = _text(value)
            if self.cluster and not await self._is_live(table_id):
                await self._del_if(keys=[entry], args=[table_id])
                return None
        return table_id

    async def delete(self, table_id: str) -> None:
        """Remove the table and the index entries pointing at it."""
        check_key(table_id, "table id")
        table_key, _, live_key = self._keys(table_id)
        inline = "0" if self.cluster else "1"
        with unavailable_errors():
            reply = await self._delete(keys=[table_key, live_key], args=[inline, self.prefix, table_id])
        if self.cluster:
            chat, users = _text(reply[0]), json.loads(_text(reply[1]))
            ops = [("del_if", self.chat_key(chat))] if chat else []
            await self._reindex(table_id, ops + [("del_if", self.user_key(u)) for u in users])

    async def live_tables(self) -> list[str]:
        """Return the ids of every stored table that is not finished, sorted.

        The first call of a store also indexes the unfinished tables written before the index existed (one
        SCAN over the table keys, node by node on a cluster); later calls read the index only (every shard
        of it on a cluster).
        """
        layout = self.layout
        with unavailable_errors():
            if not self._live_indexed:
                await self._index_unlisted_tables()
                self._live_indexed = True
            replies = await asyncio.gather(
                *(
                    self._live(keys=[layout.live(shard)], args=[layout.table_prefix(shard)])
                    for shard in range(layout.shards)
                )
            )
        return sorted(_text(tid) for reply in replies for tid in reply)

    async def _index_unlisted_tables(self) -> None:
        """Add every unfinished table to the live index (tables of an older version were never added).

        A table finished between the read and the add is dropped again by the next ``live_tables``.
        """
        layout = self.layout
        if layout.cluster:
            pattern = _glob_escape(self.prefix) + "{*}:table:*"
        else:
            pattern = _glob_escape(layout.table_prefix(0)) + "*"
        async for batch in _batches(self.redis.scan_iter(match=pattern, count=1000)):
            found = [(key, _table_id(layout, key)) for key in map(_text, batch)]
            tables = [(key, tid) for key, tid in found if tid is not None]
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, _ in tables:
                    pipe.hget(key, "fin")
                    pipe.ttl(key)
                flags = await pipe.execute()
            live: dict[int, list[str]] = {}
            for (_, tid), fin, ttl in zip(tables, flags[::2], flags[1::2], strict=True):
                if fin in ("0", b"0") and int(ttl) == -1:  # (a table being created expires until it is done)
                    live.setdefault(layout.table_shard(tid), []).append(tid)
            if live:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for shard, ids in live.items():
                        pipe.sadd(layout.live(shard), *ids)
                    await pipe.execute()

    async def ping(self) -> None:
        """Health check: return if Redis (every master of a cluster) answers PING, raise otherwise."""
        with unavailable_errors():
            await self.redis.ping()


def _table_id(layout: KeyLayout, key: str) -> str | None:
    """The table id in a table's key, or ``None`` if ``key`` is not where that table would be."""
    if layout.cluster:
        _, found, table_id = key.partition("}:table:")
        if not found:
            return None
    else:
        table_id = key[len(layout.table_prefix(0)) :]
    return table_id if table_id and layout.table(table_id) == key else None


def _split(items: Sequence[_T], here: Callable[[_T], bool]) -> tuple[tuple[_T, ...], tuple[_T, ...]]:
    """``items`` for which ``here`` holds, and the others (each in order)."""
    return tuple(i for i in items if here(i)), tuple(i for i in items if not here(i))


class RedisDeadlineStore:
    """:class:`~bot.store.ports.DeadlineStore` on Redis sorted sets: one (``{prefix}deadlines``) on a single
    server, :data:`CLUSTER_SHARDS` on a cluster (see :class:`KeyLayout`)."""

    def __init__(
        self,
        redis: AnyRedis,
        prefix: str = DEFAULT_PREFIX,
        *,
        lease_seconds: float = DEFAULT_DEADLINE_LEASE_SECONDS,
    ) -> None:
        """``lease_seconds``: how long a claimed key stays with its claimer before it is due again."""
        self.redis = redis
        self.prefix = prefix
        self.layout = KeyLayout(prefix, is_cluster(redis))
        self.keys = tuple(self.layout.deadlines(shard) for shard in range(self.layout.shards))
        """The sorted sets' keys: one on a single server, one per shard on a cluster."""
        self.lease_seconds = check_lease(lease_seconds)
        self._claim = redis.register_script(_LUA_CLAIM)
        self._claim_listed = redis.register_script(_LUA_CLAIM_LISTED)

    @property
    def key(self) -> str:
        """The sorted set's key on a single server (a cluster has one per shard: :meth:`shard_key`)."""
        if self.layout.cluster:
            raise AttributeError("a Redis Cluster splits the deadlines in shards: see shard_key")
        return self.keys[0]

    def shard_key(self, key: str) -> str:
        """The sorted set that holds (or would hold) the deadline ``key``."""
        return self.layout.deadlines(self.layout.deadline_shard(key))

    async def schedule(self, key: str, due: float) -> None:
        """Schedule ``key`` at ``due`` (epoch seconds); scheduling an existing key moves it."""
        check_key(key, "deadline key")
        if not math.isfinite(due):
            raise ValueError(f"due must be a finite number, not {due!r}")
        with unavailable_errors():
            await self.redis.zadd(self.shard_key(key), {key: float(due)})

    async def cancel(self, key: str) -> None:
        """Forget ``key``."""
        with unavailable_errors():
            await self.redis.zrem(self.shard_key(key), key)

    async def scheduled(self, key: str) -> float | None:
        """When ``key`` is due (the end of its lease, if claimed), or ``None`` if it is not scheduled."""
        with unavailable_errors():
            score = await self.redis.zscore(self.shard_key(key), key)
        return None if score is None else float(score)

    async def claim_due(self, now: float, limit: int = 100) -> list[str]:
        """Atomically lease and return up to ``limit`` keys due at or before ``now``, earliest first (each is
        moved to ``now + lease_seconds``).

        On a cluster each shard is leased by its own script: the due keys of every shard are looked at,
        the earliest ``limit`` of them chosen, and each shard leases those that are still due (a key another
        worker leased in between is left to it; if it took all of them, the shards are looked at again).
        """
        if limit <= 0:
            return []
        if math.isnan(now):
            raise ValueError("now must be a number, not NaN")
        until = _score(float(now) + self.lease_seconds)
        if len(self.keys) == 1:
            with unavailable_errors():
                reply = await self._claim(keys=[self.keys[0]], args=[_score(now), limit, until])
            return [_text(member) for member in reply]
        for _attempt in range(5):
            with unavailable_errors():
                peeks: list[Any] = await asyncio.gather(
                    *(
                        self.redis.zrangebyscore(
                            key, "-inf", _score(now), start=0, num=limit, withscores=True
                        )
                        for key in self.keys
                    )
                )
            due = sorted(
                (float(score), _text(member), shard)
                for shard, rows in enumerate(peeks)
                for member, score in rows
            )[:limit]
            if not due:
                return []
            chosen: dict[int, list[str]] = {}
            for _, member, shard in due:
                chosen.setdefault(shard, []).append(member)
            with unavailable_errors():
                leased = await asyncio.gather(
                    *(
                        self._claim_listed(keys=[self.keys[shard]], args=[_score(now), until, *members])
                        for shard, members in chosen.items()
                    )
                )
            got = {_text(member) for reply in leased for member in reply}
            if got:
                return [member for _, member, _ in due if member in got]
        return []

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
                    pipe.zadd(self.shard_key(key), {key: float(due)}, nx=True)
                added = await pipe.execute()
        return [key for (key, _), count in zip(entries, added, strict=True) if int(count)]

    async def next_due(self) -> float | None:
        """Return the earliest due time, or ``None``."""
        with unavailable_errors():
            firsts = await asyncio.gather(
                *(self.redis.zrange(key, 0, 0, withscores=True) for key in self.keys)
            )
        return min((float(first[0][1]) for first in firsts if first), default=None)

    async def ping(self) -> None:
        """Health check: return if Redis (every master of a cluster) answers PING, raise otherwise."""
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
