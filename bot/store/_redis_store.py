""":class:`~bot.store._ports.TableStore` on Redis: every write is a Lua script on the keys of one hash slot.

A table is a hash, indexed by its chat and by its users, and listed in the live set while it is not finished;
where each key lives, on one server or on a Redis Cluster, is :mod:`bot.store._redis_layout`, and the scripts
are :mod:`bot.store._redis_table_scripts`. Every script is atomic: a write changes the table, its indexes, the
live set and its deadlines at once (the scripts build the index keys from the prefix, which a single server
allows). On a cluster the chat and user entries are in slots of their own (:mod:`bot.store._redis_index`):
they are written by single-key commands after the table's script, only when the write changes them (the
script tells), and a create, or a table moving to another chat, claims that chat's entry first (see
:meth:`RedisTableStore.create`).

The store does not own the client: whoever created it closes it. Clients may use ``decode_responses`` or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from bot.store._ports import (
    DEFAULT_FINISHED_TTL_SECONDS,
    DEFAULT_PREFIX,
    ChatBusy,
    DeadlineChanges,
    StoredTable,
    StoreUnavailable,
    TableExists,
    VersionConflict,
    check_deadline,
    check_key,
    check_version,
    normalize_user_keys,
)
from bot.store._redis_client import (
    AnyRedis,
    as_text,
    glob_escape,
    is_cluster,
    scan_batches,
    score_arg,
    unavailable_errors,
)
from bot.store._redis_index import ClusterIndex
from bot.store._redis_layout import KeyLayout
from bot.store._redis_table_scripts import (
    LUA_CAS,
    LUA_CREATE,
    LUA_CREATE_DONE,
    LUA_CREATE_PENDING,
    LUA_DELETE,
    LUA_LIVE,
    LUA_MARK_ENTRIES,
)

__all__ = ["RedisTableStore"]

_T = TypeVar("_T")

PENDING_TTL_SECONDS = 60
"""On a cluster, how long a table being created lives before its chat is claimed (see ``create``)."""


class RedisTableStore:
    """:class:`~bot.store._ports.TableStore` on Redis or a Redis Cluster; compare-and-set in Lua scripts."""

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
        self._create = redis.register_script(LUA_CREATE)
        self._create_pending = redis.register_script(LUA_CREATE_PENDING)
        self._create_done = redis.register_script(LUA_CREATE_DONE)
        self.index = ClusterIndex(redis, self.layout)
        """The chat and user entries on a cluster, written after the table's script."""
        self._cas = redis.register_script(LUA_CAS)
        self._delete = redis.register_script(LUA_DELETE)
        self._live = redis.register_script(LUA_LIVE)
        self._mark_entries = redis.register_script(LUA_MARK_ENTRIES)
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
        return StoredTable(table_id, int(version), as_text(data))

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
            raise ChatBusy(table_id, chat_key, as_text(reply[1]))
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
                await self.index.claim(table_id, chat_key)  # unless it names another live table
                if not int(await self._create_done(keys=[table_key, live_key], args=[table_id])):
                    await self.index.drop_if(chat_entry, table_id)
                    raise StoreUnavailable(f"table {table_id!r}: creating it took too long")
            except BaseException:
                with contextlib.suppress(Exception):
                    await self.redis.delete(table_key)  # not created after all: nothing names it
                raise
        await self.index.reindex(table_id, [("set", self.user_key(user)) for user in users], written=1)
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
        """Write ``data`` as version ``expected_version + 1`` or raise ``VersionConflict`` (``ChatBusy`` when
        the table would move to a chat whose entry names another live table).

        ``deadlines`` change in the same script, only if the write succeeds (on a cluster, those of another
        table's shard right after it). On a cluster a table moving to another chat claims that chat's entry
        first, as a create does.
        """
        check_key(table_id, "table id")
        check_version(expected_version)
        if chat_key is not None:
            check_key(chat_key, "chat key")
        users = normalize_user_keys(user_keys)
        changes = deadlines or DeadlineChanges()
        for key, due in changes.schedule:
            check_deadline(key, due)
        # The deadlines of the table's shard change in its script; others (another table's) right after.
        here, after = self._by_shard(table_id, changes)
        args = self._cas_args(table_id, expected_version, data, chat_key, finished, here)
        with unavailable_errors():
            claimed: str | None = None  # the chat whose entry this write claimed (a move on a cluster)
            if self.cluster and chat_key is not None and not finished:
                moving = await self._claim_if_moving(table_id, expected_version, chat_key)
                claimed = chat_key if moving else None
            reply = await self._cas(keys=list(self._keys(table_id)), args=[*args, *users])
            if claimed is not None and int(reply[0]) != 1:
                await self._give_up_claim(table_id, claimed)
        status = int(reply[0])
        if status == -2:
            raise ChatBusy(table_id, chat_key or "", as_text(reply[1]))
        if status == 0:  # (the table as it is now comes with the refusal: a retry needs no read)
            current = StoredTable(table_id, int(reply[1]), as_text(reply[2]))
            raise VersionConflict(table_id, expected_version, current.version, current=current)
        if status != 1:
            raise VersionConflict(table_id, expected_version, None)
        version = int(reply[1])
        if self.cluster and int(reply[5]):  # the entries this write changed, or that may not all be written
            old_chat, old_users, chat = as_text(reply[2]), json.loads(as_text(reply[3])), as_text(reply[4])
            ops = self.layout.index_ops(old_chat, old_users, chat, users, finished=finished)
            await self.index.reindex(table_id, ops, after, written=version)
        elif after:
            await self.index.reindex(table_id, [], after)
        return StoredTable(table_id, version, data)

    async def _give_up_claim(self, table_id: str, chat_key: str) -> None:
        """Cluster: this write did not move the table, so its claim of the chat's entry goes — unless the
        write that won moved the table there too (that write's entry stays). A write landing between the
        check and the removal loses its entry until the table's next write sets it again (the removal marks
        the table's entries pending, so that this next write writes them all)."""
        recorded = await self.redis.hget(self.table_key(table_id), "chat")
        if recorded is None or as_text(recorded) != chat_key:
            await self.index.drop_if(self.chat_key(chat_key), table_id)
            await self._mark_entries(keys=[self.table_key(table_id)])

    async def _claim_if_moving(self, table_id: str, expected_version: int, chat_key: str) -> bool:
        """Cluster: a write that moves the table to another chat claims that chat's entry first (``ChatBusy``
        if it names another live table), unless its version is stale already; whether it claimed. A write
        that then fails gives the claim up; a worker that dies in between leaves the entry naming a live table
        not yet in that chat: the table's next move completes it, and once it is finished readers drop it."""
        version, recorded = await self.redis.hmget(self.table_key(table_id), ["v", "chat"])
        if version is None or int(version) != expected_version:
            return False  # the script answers the conflict
        if recorded is None or as_text(recorded) == chat_key:
            return False
        await self.index.claim(table_id, chat_key)
        return True

    def _by_shard(self, table_id: str, changes: DeadlineChanges) -> tuple[DeadlineChanges, DeadlineChanges]:
        """The deadline changes in the table's shard (its script makes them), and those in other shards."""
        shard = self.layout.table_shard(table_id)
        schedule, schedule_after = _split(
            changes.schedule, lambda e: self.layout.deadline_shard(e[0]) == shard
        )
        cancel, cancel_after = _split(changes.cancel, lambda k: self.layout.deadline_shard(k) == shard)
        return DeadlineChanges(schedule, cancel), DeadlineChanges(schedule_after, cancel_after)

    def _cas_args(
        self,
        table_id: str,
        expected_version: int,
        data: str,
        chat_key: str | None,
        finished: bool,
        deadlines: DeadlineChanges,
    ) -> list[str]:
        """The arguments of ``LUA_CAS`` before the user keys, in its order."""
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
            str(len(deadlines.schedule)),
        ]
        for key, due in deadlines.schedule:
            args += [key, score_arg(due)]
        return [*args, str(len(deadlines.cancel)), *deadlines.cancel]

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
            table_id = as_text(value)
            if self.cluster and not await self.index.is_live(table_id):
                await self.index.drop_if(entry, table_id)
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
            chat, users = as_text(reply[0]), json.loads(as_text(reply[1]))
            ops = [("del_if", self.chat_key(chat))] if chat else []
            await self.index.reindex(table_id, ops + [("del_if", self.user_key(u)) for u in users])

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
        return sorted(as_text(tid) for reply in replies for tid in reply)

    async def _index_unlisted_tables(self) -> None:
        """Add every unfinished table to the live index (tables of an older version were never added).

        A table finished between the read and the add is dropped again by the next ``live_tables``.
        """
        layout = self.layout
        if layout.cluster:
            pattern = glob_escape(self.prefix) + "{*}:table:*"
        else:
            pattern = glob_escape(layout.table_prefix(0)) + "*"
        async for batch in scan_batches(self.redis.scan_iter(match=pattern, count=1000)):
            found = [(key, layout.table_id(key)) for key in map(as_text, batch)]
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


def _split(items: Sequence[_T], here: Callable[[_T], bool]) -> tuple[tuple[_T, ...], tuple[_T, ...]]:
    """``items`` for which ``here`` holds, and the others (each in order)."""
    return tuple(i for i in items if here(i)), tuple(i for i in items if not here(i))
