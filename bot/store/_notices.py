"""Table notices: every worker that writes a table says so (its id and new version), and whoever shows that
table live (the web table's pages) hears it at once instead of polling the store.

A notice carries no state: the listener reads the table from the store when it hears of a version newer
than the one it holds. Notices are best effort — one can be lost (a listener's connection broke, a publish
failed after the write): a listener is told when its subscription was interrupted (``on_gap``) and re-reads
every table it follows then, and it keeps a slow safety poll for the rest.

Semantics shared by every :class:`TableNotices`:

* ``publish(table_id, version)`` reaches every subscription that follows ``table_id`` at the time; one
  table's notices arrive in the order published (two tables' may cross);
  :class:`~bot.store._ports.StoreUnavailable` if the backend cannot be reached (the write it announces is
  stored all the same; the caller logs and goes on).
* ``follow(table_id)`` returns once the subscription hears that table's notices: a notice published after it
  returns is heard (a subscription cut meanwhile reports a gap instead). ``unfollow`` stops them soon.
* ``on_notice`` is called for each notice heard, ``on_gap`` after the subscription was interrupted and is
  back (notices may have been lost meanwhile). Both are plain functions, called in the event loop: they must
  not block (they schedule work, they do not read).

Implementations: :class:`MemoryTableNotices` (in process, for tests and a process alone) and
:class:`~bot.store._redis_notices.RedisTableNotices` (Redis pub/sub, shared by every worker).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot.store._ports import check_key, check_version

__all__ = [
    "MemoryNoticeSubscription",
    "MemoryTableNotices",
    "NoticeSubscription",
    "OnGap",
    "OnNotice",
    "TableNotice",
    "TableNotices",
]


@dataclass(frozen=True, slots=True)
class TableNotice:
    """A table was written: its id and the version it now has."""

    table_id: str
    version: int


#: Called with each notice a subscription hears.
OnNotice = Callable[[TableNotice], None]
#: Called when a subscription was interrupted and is back: notices may have been lost meanwhile.
OnGap = Callable[[], None]


class NoticeSubscription(Protocol):
    """The notices of the tables one listener follows."""

    async def follow(self, table_id: str) -> None:
        """Hear ``table_id``'s notices from now on (returns once they are heard)."""
        ...

    def unfollow(self, table_id: str) -> None:
        """Stop hearing ``table_id``'s notices (soon: one already on its way may still come)."""
        ...

    async def close(self) -> None:
        """Stop hearing anything."""
        ...


class TableNotices(Protocol):
    """Where table writes are announced and heard (see the module docstring)."""

    async def publish(self, table_id: str, version: int) -> None:
        """Announce that ``table_id`` was written as ``version``."""
        ...

    def subscribe(self, on_notice: OnNotice, on_gap: OnGap) -> NoticeSubscription:
        """A new subscription, following no table yet."""
        ...


class MemoryNoticeSubscription:
    """A subscription to :class:`MemoryTableNotices`."""

    def __init__(self, hub: MemoryTableNotices, on_notice: OnNotice, on_gap: OnGap) -> None:
        """Hear ``hub``'s notices through ``on_notice`` (``on_gap`` never: nothing is lost in process)."""
        self._hub = hub
        self.on_notice = on_notice
        self.on_gap = on_gap
        self.tables: set[str] = set()

    async def follow(self, table_id: str) -> None:
        """Hear ``table_id``'s notices (at once)."""
        self.tables.add(check_key(table_id, "table id"))
        self._hub.subscriptions.add(self)

    def unfollow(self, table_id: str) -> None:
        """Stop hearing ``table_id``'s notices."""
        self.tables.discard(table_id)

    async def close(self) -> None:
        """Stop hearing anything."""
        self.tables.clear()
        self._hub.subscriptions.discard(self)


class MemoryTableNotices:
    """Notices within one process: a publish calls every subscription that follows the table, at once."""

    def __init__(self) -> None:
        """No subscription yet."""
        self.subscriptions: set[MemoryNoticeSubscription] = set()
        self.published = 0
        """How many notices were published (tests count the writes announced)."""

    async def publish(self, table_id: str, version: int) -> None:
        """Tell every subscription that follows ``table_id``."""
        notice = TableNotice(check_key(table_id, "table id"), check_version(version))
        self.published += 1
        for subscription in list(self.subscriptions):
            if table_id in subscription.tables:
                subscription.on_notice(notice)

    def subscribe(self, on_notice: OnNotice, on_gap: OnGap) -> MemoryNoticeSubscription:
        """A new subscription, following no table yet."""
        return MemoryNoticeSubscription(self, on_notice, on_gap)

    def interrupt(self) -> None:
        """As a Redis restart does to its subscriptions (tests): each one that follows a table reports a gap,
        its listener re-reads what it shows."""
        for subscription in list(self.subscriptions):
            if subscription.tables:
                subscription.on_gap()
