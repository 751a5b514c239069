"""Firing deadlines: machine moves, deals, turn timeouts, lobby expiry and catch windows, claimed from the
store with a lease and acted on through the same unit of work as every command (:class:`DeadlineWork`, a
member of :class:`bot.app.Service`: ``service.deadlines``)."""

from __future__ import annotations

import asyncio
import logging

from bot.app._deps import ServiceDeps
from bot.app._unit_of_work import TableWork
from bot.kernel import DEADLINE_LAG, DeadlineKey, Outcome
from bot.store import StoreUnavailable
from bot.table import Answer, TableContext, fire_deadline

log = logging.getLogger(__name__)

#: Tables whose deadlines one worker fires at the same time. Firing is CPU-bound (machine decisions, the
#: service's work) with a few Redis round trips: a few at once keep the core busy, and more only make every
#: press that arrives meanwhile wait behind all of them (bench/service.py: a press's p99 was 28 ms with 32,
#: 12 ms with 4, at the same throughput).
FIRE_CONCURRENCY = 4
#: Seconds before a deadline whose firing failed (the store was down) is tried again.
RETRY_FAILED_DEADLINE = 2.0


class DeadlineWork:
    """Claim due deadlines and fire them, each through :meth:`TableWork.run`."""

    def __init__(self, deps: ServiceDeps, work: TableWork) -> None:
        """Claim from the service's deadline store; fire through ``work``."""
        self.deps = deps
        self.work = work
        self._failed: dict[str, float] = {}
        """Deadlines whose firing failed, to schedule again once the store answers."""

    async def fire(self, key: str) -> Outcome:
        """Act on one claimed deadline (a stale one changes nothing)."""
        deadline = DeadlineKey.parse(key)
        if deadline is None or len(deadline.table) != 8:
            return Outcome(ok=False)
        table_id = deadline.table

        def step(ctx: TableContext) -> Answer:
            if ctx.table.due_key == key and ctx.table.due is not None:
                DEADLINE_LAG.observe(max(0.0, ctx.now - ctx.table.due))
            fire_deadline(ctx, key)  # (it records what happened: a deal, a timeout, a catch window closed…)
            return None

        return await self.work.run(table_id, None, step)

    async def fire_due(self, now: float | None = None, limit: int = 100) -> list[Outcome]:
        """Claim the deadlines due at ``now`` (atomically: each fires on one worker only) and fire them.

        A claim leases each key (it stays scheduled until the lease ends): a firing that wrote the table
        removed its key in that write, and one that did not (a stale key, a catch window) is cancelled here,
        so a worker that dies before either only delays the deadline by the lease. A deadline whose firing
        failed (the store was down) is scheduled again a little later, so a table never stays stuck waiting
        for a machine or a deal. An unavailable store returns ``[]`` (the deadline loop reports the outage).
        """
        moment = self.deps.clock() if now is None else now
        await self._reschedule_failed()
        try:
            keys = await self.deps.deadlines.claim_due(moment, limit)
        except StoreUnavailable:
            log.debug("deadline store unavailable")
            return []
        # Deadlines of different tables fire concurrently (bounded); one table's fire in claim order.
        by_table: dict[str, list[str]] = {}
        for key in keys:
            by_table.setdefault(key.split("|", 1)[0], []).append(key)
        gate = asyncio.Semaphore(FIRE_CONCURRENCY)

        async def fire_table(table_keys: list[str]) -> list[Outcome]:
            async with gate:
                done = []
                for key in table_keys:
                    outcome = await self.fire(key)
                    if outcome.failed:
                        self._failed[key] = moment + RETRY_FAILED_DEADLINE
                    else:
                        await self._release(key)
                    done.append(outcome)
                return done

        groups = await asyncio.gather(*(fire_table(k) for k in by_table.values()))
        await self._reschedule_failed()
        return [outcome for group in groups for outcome in group]

    async def _reschedule_failed(self) -> None:
        for key, due in list(self._failed.items()):
            try:
                await self.deps.deadlines.schedule(key, due)
            except StoreUnavailable:
                return
            del self._failed[key]

    async def next_due(self) -> float | None:
        """When the next deadline is due, if any."""
        return await self.deps.deadlines.next_due()

    async def _release(self, key: str) -> None:
        """Drop a fired deadline's lease (already gone if the firing's write cancelled it)."""
        try:
            await self.deps.deadlines.cancel(key)
        except StoreUnavailable:
            log.debug("could not drop a fired deadline (it fires again as a no-op after its lease)")
