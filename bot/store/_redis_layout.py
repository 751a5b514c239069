"""Where the Redis table and deadline stores keep their keys: :class:`KeyLayout`, for one server or a cluster.

Two layouts, chosen from the client: a single Redis server (``redis.asyncio.Redis``: the embedded one or a
real one) keeps the layout of earlier versions, so an upgrade finds every table where it was; a Redis Cluster
(``redis.asyncio.cluster.RedisCluster``, ``REDIS_URL=redis+cluster://…``) tags its keys so that each script
call touches one slot.

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
    commands after the table's script, by the writes that change them only (``create`` claims the chat
    before it finishes: see :meth:`~bot.store._redis_store.RedisTableStore.create`); an entry is removed only
    if it still names the table (a one-key script). A crash between the table's script and these commands
    can leave an entry naming a finished or vanished table: ``table_for_chat`` / ``table_for_user`` check
    the table and ignore (and remove) such an entry; a missing or stale entry of a live table is set again
    by the table's next write, which the table's field ``ix`` tells to (the version whose entries are being
    written: set by the script, cleared once they are).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

__all__ = ["CLUSTER_SHARDS", "KeyLayout", "shard_tags"]

CLUSTER_SHARDS = 16
"""Shards of the tables, the live set and the deadlines on a Redis Cluster (one hash tag each)."""


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

    def table_id(self, key: str) -> str | None:
        """The table id in a table's key, or ``None`` if ``key`` is not where that table would be."""
        if self.cluster:
            _, found, table_id = key.partition("}:table:")
            if not found:
                return None
        else:
            table_id = key[len(self.table_prefix(0)) :]
        return table_id if table_id and self.table(table_id) == key else None

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

    def index_ops(
        self, old_chat: str, old_users: Sequence[str], chat: str, users: Sequence[str], *, finished: bool
    ) -> list[tuple[str, str]]:
        """Cluster: the index entries a table's write sets (``"set"``) or removes if they still name the table
        (``"del_if"``), from the chat and users it had before the write and has now (a finished table's
        entries all go)."""
        if finished:
            chats = [("del_if", self.chat(c)) for c in dict.fromkeys((old_chat, chat)) if c]
            return chats + [("del_if", self.user(u)) for u in dict.fromkeys([*old_users, *users])]
        ops = [("del_if", self.chat(old_chat))] if old_chat and old_chat != chat else []
        if chat:
            ops.append(("set", self.chat(chat)))
        ops += [("set", self.user(u)) for u in users]
        return ops + [("del_if", self.user(u)) for u in old_users if u not in users]
