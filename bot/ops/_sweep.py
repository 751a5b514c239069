"""The deadline loop's housekeeping: arm again the deadlines nothing would fire (the sweep), and report an
outage of the store once instead of at every retry.

A table stores its pending deadline (``TableState.due_key`` and ``due``) and the deadline store holds the same
key until it fires. Normally they agree: the write that arms a deadline schedules it in the same atomic step,
and a claimed key stays in the store, leased, until its firing is saved (see :mod:`bot.store._ports`). They
can disagree after a crash of an older version (whose claims removed keys before the firing was saved), a
manual edit, or a restore of one without the other — and then the table waits forever. The sweep lists the
live tables and schedules each pending key that is not scheduled at all, at its due time (a past one fires at
once). Keys scheduled or leased are left alone. A table read just before a write moved it on may get its old
key back: it fires as a no-op, like any stale key. :func:`bot.ops._bootstrap.run_deadlines` sweeps at
start-up, after an outage and every :data:`SWEEP_INTERVAL` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, ValidationError
from redis.exceptions import RedisError

from bot.kernel import TABLES_LIVE, TableStatus
from bot.store import DeadlineStore, StoreUnavailable, TableStore

__all__ = [
    "OUTAGE_ERRORS",
    "SWEEP_INTERVAL",
    "DeadlineSweep",
    "OutageLog",
    "rearm_lost_deadlines",
]

log = logging.getLogger(__name__)

#: Seconds between two sweeps of one worker.
SWEEP_INTERVAL = 60.0
#: Tables one sweep reads at the same time.
SWEEP_CONCURRENCY = 32
#: Tables one sweep reads per batch (bounds its memory on a large store).
SWEEP_BATCH = 500
#: What an unreachable or failing store raises (the Redis stores translate connection errors; others pass).
OUTAGE_ERRORS: tuple[type[Exception], ...] = (StoreUnavailable, RedisError)


class _Pending(BaseModel):
    """The part of a stored table the sweep reads (the rest of the JSON is skipped, not validated)."""

    model_config = ConfigDict(extra="ignore")

    status: TableStatus
    due: float | None = None
    due_key: str | None = None


async def rearm_lost_deadlines(tables: TableStore, deadlines: DeadlineStore) -> list[str]:
    """Schedule the pending deadline of every live table whose key is not scheduled; return those keys."""
    gate = asyncio.Semaphore(SWEEP_CONCURRENCY)

    async def pending(table_id: str) -> tuple[str, float] | None:
        async with gate:
            stored = await tables.load(table_id)
        if stored is None:
            return None
        try:
            table = _Pending.model_validate_json(stored.data)
        except ValidationError as exc:
            log.error("the deadline sweep cannot read table %s: %s", table_id, exc)
            return None
        if table.status.finished:
            return None
        if table.due_key is None or table.due is None or not math.isfinite(table.due):
            return None
        return table.due_key, table.due

    live = await tables.live_tables()
    TABLES_LIVE.set(len(live))
    added: list[str] = []
    for start in range(0, len(live), SWEEP_BATCH):
        found = await asyncio.gather(*(pending(t) for t in live[start : start + SWEEP_BATCH]))
        entries = [entry for entry in found if entry is not None]
        if entries:
            added += await deadlines.schedule_missing(entries)
    if added:
        shown = ", ".join(added[:10]) + (", …" if len(added) > 10 else "")
        # Usually a table read just before a write moved it on (its old key fires as a no-op), or a worker
        # killed mid-claim: routine, not data loss. Only a repeated run of these is worth a look.
        log.info("re-armed %d deadline(s) not scheduled: %s", len(added), shown)
    return added


class DeadlineSweep:
    """When a worker sweeps: at its first chance, every ``interval`` seconds after that, and again as soon as
    the store answers after an outage (:meth:`soon`)."""

    def __init__(
        self,
        tables: TableStore,
        deadlines: DeadlineStore,
        *,
        interval: float = SWEEP_INTERVAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tables = tables
        self.deadlines = deadlines
        self.interval = interval
        self.clock = clock
        self.next_at = -math.inf

    async def run_if_due(self) -> list[str]:
        """Sweep if it is time (a sweep that fails waits for the next interval, unless :meth:`soon`)."""
        now = self.clock()
        if now < self.next_at:
            return []
        self.next_at = now + self.interval
        return await rearm_lost_deadlines(self.tables, self.deadlines)

    def soon(self) -> None:
        """Sweep at the next chance (after an outage: deadlines may have been lost meanwhile)."""
        self.next_at = -math.inf


class OutageLog:
    """Reports an outage once, with its cause, and once when it ends — not at every retry of a loop."""

    def __init__(
        self, logger: logging.Logger, what: str, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.what = what
        self.clock = clock
        self.since: float | None = None
        """When the current outage began, or ``None`` while the store answers."""

    @property
    def down(self) -> bool:
        """Whether an outage is going on."""
        return self.since is not None

    def failed(self, exc: BaseException) -> None:
        """A call failed because of the store: log it if it starts an outage."""
        if self.since is None:
            self.since = self.clock()
            cause = str(exc) or type(exc).__name__
            self.logger.warning("%s: the store is unavailable (%s); retrying quietly", self.what, cause)

    def succeeded(self) -> None:
        """A round went through: log the end of an outage, if there was one."""
        if self.since is not None:
            lasted = self.clock() - self.since
            self.since = None
            self.logger.warning("%s: the store answers again (after %.1f s)", self.what, lasted)
