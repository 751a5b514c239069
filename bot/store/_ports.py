"""Storage ports of the bot core: the tables store and the deadlines store.

The bot serializes a table to an opaque JSON string; the store keeps it next to an integer version and a few
small indexes, and every write is a compare-and-set on that version. Implementations live in
:mod:`bot.store._redis_store` and :mod:`bot.store._redis_deadlines` (production and integration tests) and
:mod:`bot.store._memory` (unit tests of the service); both follow exactly the semantics documented here.

Semantics shared by every :class:`TableStore`:

* ``create`` writes version 1 and indexes ``chat_key → table_id`` and each ``user_key → table_id``. It fails
  with :class:`TableExists` if the id is taken, and with :class:`ChatBusy` (a :class:`TableExists`) if the
  chat's index already points at another live table: one active table per chat, enforced atomically.
* ``compare_and_set`` writes version ``expected_version + 1`` only if the stored version is still
  ``expected_version``; otherwise it raises :class:`VersionConflict` and changes nothing (also when the table
  does not exist any more: ``actual`` is then ``None``). With ``finished=False``, a write that changes the
  table's chat or its people (or reopens a finished table) points the chat index (``chat_key``, or the chat
  recorded on the table when ``chat_key`` is ``None``) and every given user key at the table, and removes the
  user keys that pointed at this table but are no longer listed; most writes (a bet, a discard) change
  neither and touch no entry. A ``chat_key``
  other than the recorded chat moves the table to that chat (a group upgraded to a supergroup): the old
  chat's entry goes, and if the new chat's entry names another live table the write raises :class:`ChatBusy`
  and changes nothing. With
  ``finished=True`` it removes the chat index and every user index entry that points at this table and the
  table value expires after ``finished_ttl_seconds``. A later non-finished write makes the value persistent
  and indexes it again (the bot decides whether a finished table may be written at all).
* An index entry is only ever removed if it still points at the table being written, so finishing an old
  table never clobbers the index of a newer one. A user key points at the table whose write listed it last
  among the writes that changed their table's entries (a person listed since by another table stays with it
  until this table's people or chat change).
* ``live_tables`` lists every table that is stored and not finished (created, or last written with
  ``finished=False``, and not deleted), so that a sweep can check that each one's pending deadline is armed.
* Failures to reach the backend raise :class:`StoreUnavailable`, never a driver exception.

Semantics shared by every :class:`DeadlineStore` (a deadline is an opaque key with a due time):

* ``claim_due`` hands each due key to one caller and *leases* it: the key stays scheduled, moved to
  ``now + lease_seconds`` (the store's lease), so that no other caller gets it before the lease ends. Whoever
  handles the firing removes the key: the table write that acts on it cancels it (``DeadlineChanges``), and a
  firing that writes nothing (a stale key, a catch window) cancels it. If the claimer dies in between, the key
  falls due again when the lease ends and another worker fires it: a deadline is never lost, and one whose
  firing outlived its lease may fire twice (the second firing finds the table moved on and does nothing).
* ``schedule_missing`` schedules only the keys not scheduled at all, leaving leased and pending ones alone.

On a Redis Cluster (``REDIS_URL=redis+cluster://…``, the layout in :mod:`bot.store._redis_layout`) a Lua
script
reaches the keys of one hash slot only. The stores keep every guarantee above, with these differences:

* A table, its shard of the live set and its shard of the deadlines share a slot (16 shards; a table's is
  chosen from its id, a deadline key's from the table id before its first ``|``), so a compare-and-set and
  the deadlines of its own table that it schedules and cancels are still one atomic step. Deadlines of
  another table given to a write are changed right after it (the bot never gives any).
* The chat and user indexes live in slots of their own and are written by single-key commands right after
  the table's script, and only by the writes that change them (a create, a table's first write, a write that
  changes its chat or its people, finishes or reopens it): most writes touch no entry. A crash in between
  can leave an entry unset (the write marked the table's entries pending, so the table's next write sets
  them all again) or naming a finished or vanished table (``table_for_chat`` and ``table_for_user`` check
  the table, answer ``None`` and remove the entry). "One
  active table per chat" stays exact: ``create`` writes the table (expiring), claims the chat's entry with a
  compare-and-set unless it names another live table, then makes the table persistent and live. A crash
  during a create leaves at most a table that expires within a minute. Of two concurrent writes of different
  tables listing one user, either may be the one the user's entry names. A table moving to another chat
  claims that chat's entry the same way before its script (a write that then fails leaves the entry naming a
  live table not yet in that chat: its next move completes it; once it is finished, readers drop the entry).
* ``claim_due`` leases shard by shard: it looks at the due keys of every shard, keeps the earliest
  ``limit``, and leases those still due, one script per shard. No key is ever handed to two callers during
  its lease; a caller may get fewer than ``limit`` keys when another leased some of them in between.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = [
    "DEFAULT_DEADLINE_LEASE_SECONDS",
    "DEFAULT_FINISHED_TTL_SECONDS",
    "DEFAULT_PREFIX",
    "ChatBusy",
    "DeadlineChanges",
    "DeadlineStore",
    "StoreError",
    "StoreUnavailable",
    "StoredTable",
    "TableExists",
    "TableNotFound",
    "TableStore",
    "VersionConflict",
    "check_deadline",
    "check_key",
    "check_lease",
    "check_version",
    "normalize_user_keys",
]

DEFAULT_PREFIX = "mus:"
"""Default namespace of every key the Redis stores write."""

DEFAULT_FINISHED_TTL_SECONDS = 7 * 86400
"""How long a finished table stays readable (for stale buttons and late showdown edits): 7 days."""

DEFAULT_DEADLINE_LEASE_SECONDS = 30.0
"""How long a claimed deadline stays with its claimer before it falls due again (a firing takes milliseconds;
a worker that dies after its claim delays the deadline by this much, never loses it)."""


@dataclass(frozen=True, slots=True)
class DeadlineChanges:
    """Deadlines to schedule and to cancel together with a table write."""

    schedule: tuple[tuple[str, float], ...] = ()
    cancel: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.schedule or self.cancel)


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as stored: its id, its version (1 on creation, +1 per write) and the opaque serialized data."""

    table_id: str
    version: int
    data: str


class StoreError(Exception):
    """Base class of every error raised by a store."""


class StoreUnavailable(StoreError):
    """The backend could not be reached or did not answer in time (connection refused, timeout, loading)."""


class TableExists(StoreError):
    """``create`` was called with the id of a table that already exists."""

    def __init__(self, table_id: str, message: str | None = None) -> None:
        super().__init__(message or f"table {table_id!r} already exists")
        self.table_id = table_id


class ChatBusy(TableExists):
    """``create`` was called for a chat whose index already points at another live (unfinished) table, or
    ``compare_and_set`` would move a table to such a chat."""

    def __init__(self, table_id: str, chat_key: str, existing_table_id: str) -> None:
        super().__init__(table_id, f"chat {chat_key!r} already has the active table {existing_table_id!r}")
        self.chat_key = chat_key
        self.existing_table_id = existing_table_id


class VersionConflict(StoreError):
    """A compare-and-set found another version than expected (``actual`` is ``None`` if the table is gone).

    Nothing was written. The bot answers the presser "already played" (or refreshes the screen).
    """

    def __init__(
        self,
        table_id: str,
        expected: int | None,
        actual: int | None,
        message: str | None = None,
        *,
        current: StoredTable | None = None,
    ) -> None:
        found = "no table" if actual is None else f"version {actual}"
        super().__init__(message or f"table {table_id!r}: expected version {expected}, found {found}")
        self.table_id = table_id
        self.expected = expected
        self.actual = actual
        self.current = current
        """The table as stored when the write was refused, if the store read it then (a retry of the step
        runs on it without a read of its own: with several workers, one worker's copy is often stale)."""


class TableNotFound(StoreError, LookupError):
    """An operation that needs an existing table (``update_with_retries``) found none."""

    def __init__(self, table_id: str) -> None:
        super().__init__(f"table {table_id!r} does not exist")
        self.table_id = table_id


@runtime_checkable
class TableStore(Protocol):
    """Versioned storage of serialized tables, with ``chat → table`` and ``user → table`` indexes."""

    async def load(self, table_id: str) -> StoredTable | None:
        """Return the stored table, or ``None`` if there is none (never created, deleted or expired)."""
        ...

    async def create(
        self, table_id: str, data: str, *, chat_key: str, user_keys: Sequence[str]
    ) -> StoredTable:
        """Store a new table at version 1 and index it; raise :class:`TableExists` / :class:`ChatBusy`."""
        ...

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
        """Write ``data`` as version ``expected_version + 1`` or raise :class:`VersionConflict`.

        ``deadlines`` are applied to the deadline store of the same prefix in the same atomic step, and only
        if the write succeeds (a store built without access to deadlines raises ``ValueError``).
        """
        ...

    async def table_for_chat(self, chat_key: str) -> str | None:
        """Return the id of the chat's active table, if any."""
        ...

    async def table_for_user(self, user_key: str) -> str | None:
        """Return the id of the active table that listed this user last, if any."""
        ...

    async def delete(self, table_id: str) -> None:
        """Remove the table and the index entries pointing at it (no error if it does not exist)."""
        ...

    async def live_tables(self) -> list[str]:
        """Return the ids of every stored table that is not finished, sorted."""
        ...

    async def ping(self) -> None:
        """Health check: return if the backend answers, raise :class:`StoreUnavailable` otherwise."""
        ...


@runtime_checkable
class DeadlineStore(Protocol):
    """Deadlines shared by every worker: opaque members (e.g. ``"table_id:version:kind"``) with a due time."""

    async def schedule(self, key: str, due: float) -> None:
        """Schedule ``key`` at ``due`` (epoch seconds); scheduling an existing key moves it."""
        ...

    async def cancel(self, key: str) -> None:
        """Forget ``key`` (no error if it is not scheduled)."""
        ...

    async def claim_due(self, now: float, limit: int = 100) -> list[str]:
        """Atomically lease and return up to ``limit`` keys due at or before ``now``, earliest first.

        Each key returned is moved to ``now + lease_seconds`` (not removed): the firing's write, or a
        ``cancel`` after a firing that wrote nothing, removes it; if nobody does, it is due again then. Two
        workers calling this concurrently never both receive the same key while its lease lasts.
        """
        ...

    async def schedule_missing(self, entries: Sequence[tuple[str, float]]) -> list[str]:
        """Schedule each ``(key, due)`` whose key is not scheduled at all; return those keys, in order.

        A key already scheduled (pending or leased) keeps its due time.
        """
        ...

    async def next_due(self) -> float | None:
        """Return the earliest due time, or ``None`` if nothing is scheduled."""
        ...

    async def ping(self) -> None:
        """Health check: return if the backend answers, raise :class:`StoreUnavailable` otherwise."""
        ...


def check_key(value: str, what: str) -> str:
    """Return ``value`` if it is a non-empty string, raise ``TypeError``/``ValueError`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    return value


def check_deadline(key: str, due: float) -> None:
    """Raise ``TypeError``/``ValueError`` unless ``key`` is a deadline key and ``due`` a finite time."""
    check_key(key, "deadline key")
    if not math.isfinite(due):
        raise ValueError(f"due must be a finite number, not {due!r}")


def normalize_user_keys(user_keys: Sequence[str]) -> tuple[str, ...]:
    """Validate user keys and drop duplicates, keeping the first occurrence's order.

    A bare string is rejected: it is a ``Sequence[str]`` too, but would be indexed one character at a time.
    """
    if isinstance(user_keys, str | bytes):
        raise TypeError("user_keys must be a sequence of keys, not a single string")
    return tuple(dict.fromkeys(check_key(key, "user key") for key in user_keys))


def check_version(version: int) -> int:
    """Return ``version`` if it is a positive int (not a bool), raise otherwise."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise TypeError(f"version must be an int, not {type(version).__name__}")
    if version < 1:
        raise ValueError(f"version must be >= 1, not {version}")
    return version


def check_lease(lease_seconds: float) -> float:
    """Return ``lease_seconds`` as a float if it is positive and finite, raise ``ValueError`` otherwise."""
    lease = float(lease_seconds)
    if not (math.isfinite(lease) and lease > 0):
        raise ValueError(f"lease_seconds must be a positive number, not {lease_seconds!r}")
    return lease
