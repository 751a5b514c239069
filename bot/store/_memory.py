"""In-process stores with the same semantics as the Redis ones, for unit tests of the service.

They hold nothing across processes and never raise :class:`~bot.store._ports.StoreUnavailable`. An
``asyncio.Lock`` makes every operation atomic with respect to other tasks, like a Lua script in Redis.
Finished tables expire after ``finished_ttl_seconds`` measured on an injectable ``clock``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.store._ports import (
    DEFAULT_DEADLINE_LEASE_SECONDS,
    DEFAULT_FINISHED_TTL_SECONDS,
    ChatBusy,
    DeadlineChanges,
    StoredTable,
    TableExists,
    VersionConflict,
    check_deadline,
    check_key,
    check_lease,
    check_version,
    normalize_user_keys,
)

__all__ = ["MemoryDeadlineStore", "MemoryTableStore"]


@dataclass(slots=True)
class _Entry:
    version: int
    data: str
    chat_key: str | None
    user_keys: tuple[str, ...]
    finished: bool
    expires_at: float | None


class MemoryTableStore:
    """In-memory :class:`~bot.store._ports.TableStore`."""

    def __init__(
        self,
        *,
        finished_ttl_seconds: float = DEFAULT_FINISHED_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        deadlines: MemoryDeadlineStore | None = None,
    ) -> None:
        """``deadlines``: the deadline store that ``compare_and_set(deadlines=…)`` changes with a write."""
        self.deadlines = deadlines
        if finished_ttl_seconds <= 0:
            raise ValueError("finished_ttl_seconds must be positive")
        self.finished_ttl_seconds = finished_ttl_seconds
        self._clock = clock
        self._lock = asyncio.Lock()
        self._tables: dict[str, _Entry] = {}
        self._chats: dict[str, str] = {}
        self._users: dict[str, str] = {}

    def _get(self, table_id: str) -> _Entry | None:
        entry = self._tables.get(table_id)
        if entry is not None and entry.expires_at is not None and self._clock() >= entry.expires_at:
            del self._tables[table_id]
            return None
        return entry

    def _drop(self, index: dict[str, str], key: str | None, table_id: str) -> None:
        if key is not None and index.get(key) == table_id:
            del index[key]

    async def load(self, table_id: str) -> StoredTable | None:
        """Return the stored table, or ``None``."""
        check_key(table_id, "table id")
        async with self._lock:
            entry = self._get(table_id)
            return None if entry is None else StoredTable(table_id, entry.version, entry.data)

    async def create(
        self, table_id: str, data: str, *, chat_key: str, user_keys: Sequence[str]
    ) -> StoredTable:
        """Store a new table at version 1 and index it; raise ``TableExists`` / ``ChatBusy``."""
        check_key(table_id, "table id")
        check_key(chat_key, "chat key")
        users = normalize_user_keys(user_keys)
        async with self._lock:
            if self._get(table_id) is not None:
                raise TableExists(table_id)
            self._check_chat_free(table_id, chat_key)
            self._tables[table_id] = _Entry(1, data, chat_key, users, False, None)
            self._chats[chat_key] = table_id
            for user in users:
                self._users[user] = table_id
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
        """Write ``data`` as version ``expected_version + 1`` or raise ``VersionConflict``."""
        check_key(table_id, "table id")
        check_version(expected_version)
        if chat_key is not None:
            check_key(chat_key, "chat key")
        if deadlines and self.deadlines is None:
            raise ValueError("this table store was built without a deadline store")
        users = normalize_user_keys(user_keys)
        async with self._lock:
            entry = self._get(table_id)
            if entry is None:
                raise VersionConflict(table_id, expected_version, None)
            if entry.version != expected_version:
                current = StoredTable(table_id, entry.version, entry.data)
                raise VersionConflict(table_id, expected_version, entry.version, current=current)
            old_chat, old_users = entry.chat_key, entry.user_keys
            chat = chat_key if chat_key is not None else old_chat
            if not finished and chat is not None and chat != old_chat:
                self._check_chat_free(table_id, chat)
            if finished:
                self._drop(self._chats, old_chat, table_id)
                self._drop(self._chats, chat, table_id)
                for user in (*old_users, *users):
                    self._drop(self._users, user, table_id)
                expires_at: float | None = self._clock() + self.finished_ttl_seconds
            else:
                if chat != old_chat or users != old_users or entry.finished:  # else no entry changes
                    self._point(table_id, chat, users, old_chat, old_users)
                expires_at = None
            version = expected_version + 1
            self._tables[table_id] = _Entry(version, data, chat, users, finished, expires_at)
            if deadlines and self.deadlines is not None:
                self.deadlines.apply(deadlines)
            return StoredTable(table_id, version, data)

    def _point(
        self,
        table_id: str,
        chat: str | None,
        users: tuple[str, ...],
        old_chat: str | None,
        old_users: tuple[str, ...],
    ) -> None:
        """Point the chat's and the users' entries at the table; drop those it no longer has."""
        if old_chat != chat:
            self._drop(self._chats, old_chat, table_id)
        if chat is not None:
            self._chats[chat] = table_id
        for user in users:
            self._users[user] = table_id
        for user in old_users:
            if user not in users:
                self._drop(self._users, user, table_id)

    def _check_chat_free(self, table_id: str, chat_key: str) -> None:
        """Raise ``ChatBusy`` if the chat's index names another live table (a table may not move there)."""
        other_id = self._chats.get(chat_key)
        if other_id is not None and other_id != table_id:
            other = self._get(other_id)
            if other is not None and not other.finished:
                raise ChatBusy(table_id, chat_key, other_id)

    async def table_for_chat(self, chat_key: str) -> str | None:
        """Return the id of the chat's active table, if any."""
        check_key(chat_key, "chat key")
        async with self._lock:
            return self._chats.get(chat_key)

    async def table_for_user(self, user_key: str) -> str | None:
        """Return the id of the active table that listed this user last, if any."""
        check_key(user_key, "user key")
        async with self._lock:
            return self._users.get(user_key)

    async def delete(self, table_id: str) -> None:
        """Remove the table and the index entries pointing at it."""
        check_key(table_id, "table id")
        async with self._lock:
            entry = self._tables.pop(table_id, None)
            if entry is not None:
                self._drop(self._chats, entry.chat_key, table_id)
                for user in entry.user_keys:
                    self._drop(self._users, user, table_id)

    async def live_tables(self) -> list[str]:
        """Return the ids of every stored table that is not finished, sorted."""
        async with self._lock:
            entries = [(tid, self._get(tid)) for tid in list(self._tables)]
            return sorted(tid for tid, entry in entries if entry is not None and not entry.finished)

    async def ping(self) -> None:
        """Always healthy."""

    def expires_in(self, table_id: str) -> float | None:
        """Seconds until a finished table expires (``None`` if it is persistent or absent); for tests."""
        entry = self._get(table_id)
        if entry is None or entry.expires_at is None:
            return None
        return entry.expires_at - self._clock()


class MemoryDeadlineStore:
    """In-memory :class:`~bot.store._ports.DeadlineStore` (ties on the due time are claimed in key order)."""

    def __init__(self, *, lease_seconds: float = DEFAULT_DEADLINE_LEASE_SECONDS) -> None:
        """``lease_seconds``: how long a claimed key stays with its claimer before it is due again."""
        self.lease_seconds = check_lease(lease_seconds)
        self._lock = asyncio.Lock()
        self._due: dict[str, float] = {}

    async def schedule(self, key: str, due: float) -> None:
        """Schedule ``key`` at ``due``; scheduling an existing key moves it."""
        check_deadline(key, due)
        async with self._lock:
            self._due[key] = float(due)

    async def cancel(self, key: str) -> None:
        """Forget ``key``."""
        async with self._lock:
            self._due.pop(key, None)

    def apply(self, changes: DeadlineChanges) -> None:
        """Apply the deadline changes of a table write (synchronously: nothing can interleave)."""
        for key in changes.cancel:
            self._due.pop(key, None)
        for key, due in changes.schedule:
            self._due[key] = float(due)

    async def claim_due(self, now: float, limit: int = 100) -> list[str]:
        """Lease and return up to ``limit`` keys due at or before ``now``, earliest first (each is moved to
        ``now + lease_seconds``)."""
        if limit <= 0:
            return []
        if math.isnan(now):
            raise ValueError("now must be a number, not NaN")
        async with self._lock:
            due = sorted((score, key) for key, score in self._due.items() if score <= now)[:limit]
            until = float(now) + self.lease_seconds
            for _, key in due:
                self._due[key] = until
            return [key for _, key in due]

    async def schedule_missing(self, entries: Sequence[tuple[str, float]]) -> list[str]:
        """Schedule each ``(key, due)`` whose key is not scheduled at all; return those keys."""
        for key, due in entries:
            check_deadline(key, due)
        added: list[str] = []
        async with self._lock:
            for key, due in entries:
                if key not in self._due:
                    self._due[key] = float(due)
                    added.append(key)
        return added

    async def next_due(self) -> float | None:
        """Return the earliest due time, or ``None``."""
        async with self._lock:
            return min(self._due.values(), default=None)

    async def ping(self) -> None:
        """Always healthy."""

    def __len__(self) -> int:
        return len(self._due)
