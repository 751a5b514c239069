"""The unit of work of every table command: load, run one synchronous step, render, compare-and-set.

A command's step (:mod:`bot.table._steps`, :mod:`bot.table._lobby`, :mod:`bot.table._flow`,
:mod:`bot.table._timers`, or one of the service's) works on one loaded
:class:`~bot.table._context.TableContext` and records what happened in it; :meth:`TableWork.run` loads the
table (or takes this worker's newest parsed copy), runs the step, arms the pending deadline, draws what its
events say (:func:`bot.app._drawn.drawn`), and writes with a compare-and-set — again on a conflict, never
raising. A refusal or a no-change answer given from a cached copy is confirmed
against the store before it is sent. Results of finished games are rated off the command path when a queue is
wired.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from pydantic import ValidationError

from bot.app._deps import ServiceDeps
from bot.app._drawn import Drawn, as_found, drawn
from bot.app._history_commands import keep_hands
from bot.i18n import DEFAULT_LANGUAGE, normalize_language
from bot.i18n import common as msg
from bot.kernel import Outcome, OutMessage, TableState, TableStatus, UserRef
from bot.leaderboard import GameResult
from bot.store import DeadlineChanges, StoreError, StoreUnavailable, VersionConflict
from bot.table import (
    NOT_NOW,
    Answer,
    Refusal,
    TableContext,
    arm_deadline,
    catch_windows,
    lang_for,
    load_context,
    say,
)
from engine.ai.policy import Policy, make_policy
from engine.errors import MusError
from engine.match import Match

log = logging.getLogger(__name__)


class TableWork:
    """Runs table commands as units of work on the service's stores, with a cache of parsed tables."""

    def __init__(self, deps: ServiceDeps) -> None:
        """Use the given stores, clock, randomness and machine players."""
        self.deps = deps
        self._policies: dict[str, Policy] = {}
        self._cache: OrderedDict[tuple[str, int], tuple[TableState, Match | None]] = OrderedDict()
        """Parsed tables by (id, version); taken out while a command uses them (so never shared)."""
        self.deadline_added = asyncio.Event()
        """Set when a command schedules a deadline (the deadline loop waits on it)."""
        self._newest: dict[str, int] = {}
        """The newest version of each cached table that this worker has seen."""

    async def load_table(self, table_id: str) -> TableState | None:
        """The stored table, read-only (for adapters and summaries)."""
        stored = await self.deps.tables.load(table_id)
        return None if stored is None else TableState.model_validate_json(stored.data)

    def _policy(self, name: str) -> Policy:
        if name not in self._policies:
            try:
                self._policies[name] = self.deps.policy(name)
            except KeyError:
                self._policies[name] = make_policy("baseline")
        return self._policies[name]

    async def run(
        self,
        table_id: str,
        user: UserRef | None,
        step: Callable[[TableContext], Answer],
    ) -> Outcome:
        """Load, run ``step``, render, compare-and-set; retry on a concurrent write; never raise.

        The first attempt trusts this worker's newest copy of the table (no read): the compare-and-set
        finds out if another worker wrote since, and then the step runs again on what the store holds. A
        refusal or a no-change answer given from that copy is confirmed against the store before it is sent.
        """
        lang = normalize_language(user.lang) if user is not None and user.lang else DEFAULT_LANGUAGE
        try:
            for attempt in range(self.deps.cas_attempts):
                version = self._newest.get(table_id) if attempt == 0 else None
                cached = None if version is None else self._cache.pop((table_id, version), None)
                verified = cached is None
                data = ""
                if cached is None:
                    stored = await self.deps.tables.load(table_id)
                    if stored is None:
                        return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
                    version, data = stored.version, stored.data
                    cached = self._cache.pop((table_id, version), None)
                assert version is not None
                try:
                    table = cached[0] if cached else TableState.model_validate_json(data)
                    ctx = load_context(
                        table,
                        self.deps.clock(),
                        self.deps.settings,
                        self.deps.rng_factory(),
                        self._policy,
                        match=cached[1] if cached else None,
                    )
                except (ValidationError, ValueError) as exc:
                    log.error("table %s cannot be loaded: %s", table_id, exc, extra={"table": table_id})
                    return Outcome(answer=say(lang, msg.INTERNAL_ERROR), ok=False)
                if user is not None:
                    lang = lang_for(user, table)
                found = as_found(ctx)
                old_due = table.due_key
                try:
                    answer = step(ctx)
                except Refusal as refusal:
                    # A refusal changes nothing (the flow refuses before it touches anything): keep the table.
                    self._keep(table_id, version, ctx)
                    if not verified and not await self._still_current(table_id, version):
                        continue
                    return Outcome(
                        answer=say(lang, (refusal.msgid, dict(refusal.kwargs))),
                        ok=False,
                        table=table_id,
                    )
                except MusError as exc:
                    # The engine refused what the flow let through (a check it alone makes): a clear answer,
                    # nothing written, and this copy dropped (the flow may have touched it before the engine).
                    log.info(
                        "engine refused a command on table %s: %s", table_id, exc, extra={"table": table_id}
                    )
                    self._newest.pop(table_id, None)
                    return Outcome(answer=say(lang, NOT_NOW), ok=False, table=table_id)
                if not ctx.changed:
                    self._keep(table_id, version, ctx)
                    if not verified and not await self._still_current(table_id, version):
                        continue
                    shown = drawn(ctx, found)
                    return Outcome(
                        answer=say(lang, shown.answer_or(answer)),
                        messages=_stamped(shown.views, version, table, begin=False),
                        alert=shown.alert,
                        table=table_id,
                    )
                arm_deadline(ctx)
                ctx.sync_match()
                # Stamped before the write, which makes it version + 1 (or fails and the step runs again).
                shown = drawn(ctx, found)
                stamped = _stamped(shown.views, version + 1, table, begin=True)
                schedule = catch_windows(ctx)
                if table.due_key is not None and table.due is not None and table.due_key != old_due:
                    schedule.append((table.due_key, table.due))
                stale = (old_due,) if old_due is not None and old_due != table.due_key else ()
                changes = DeadlineChanges(tuple(schedule), stale)
                if not self.deps.atomic_deadlines:
                    # Deadlines go in before the write: if we die in between, a stale key fires as a no-op.
                    for key, due in schedule:
                        await self.deps.deadlines.schedule(key, due)
                finished = table.status in (TableStatus.FINISHED, TableStatus.CANCELLED)
                try:
                    written = await self.deps.tables.compare_and_set(
                        table_id,
                        version,
                        table.model_dump_json(),
                        chat_key=None,
                        user_keys=table.humans(),
                        finished=finished,
                        deadlines=changes if self.deps.atomic_deadlines else None,
                    )
                except VersionConflict:
                    self._newest.pop(table_id, None)
                    continue
                if finished:
                    self._newest.pop(table_id, None)
                else:
                    self._keep(table_id, written.version, ctx)
                if schedule:
                    self.deadline_added.set()  # wake this worker's deadline loop: a machine may be due soon
                await self._after_write(shown, ctx.now, () if self.deps.atomic_deadlines else stale)
                return Outcome(
                    answer=say(lang, shown.answer_or(answer)),
                    messages=stamped,
                    alert=shown.alert,
                    table=table_id,
                )
            return Outcome(answer=say(lang, msg.ALREADY_PLAYED), ok=False, table=table_id)
        except StoreUnavailable:
            log.warning("store unavailable while handling table %s", table_id, extra={"table": table_id})
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False, table=table_id, failed=True)
        except Exception:
            log.exception(
                "unexpected error on table %s; nothing was written", table_id, extra={"table": table_id}
            )
            return Outcome(answer=say(lang, msg.INTERNAL_ERROR), ok=False, table=table_id, failed=True)

    async def _still_current(self, table_id: str, version: int) -> bool:
        """Whether the store still holds ``version`` of the table (else forget our copy)."""
        stored = await self.deps.tables.load(table_id)
        if stored is not None and stored.version == version:
            return True
        self._cache.pop((table_id, version), None)
        self._newest.pop(table_id, None)
        return False

    def _keep(self, table_id: str, version: int, ctx: TableContext) -> None:
        """Remember a parsed table (and its live match) for the next command on this version."""
        if self.deps.cache_size <= 0:
            return
        self._cache[(table_id, version)] = (ctx.table, ctx.match)
        if self._newest.get(table_id, 0) <= version:
            self._newest[table_id] = version
        while len(self._cache) > self.deps.cache_size:
            (old_id, old_version), _ = self._cache.popitem(last=False)
            if self._newest.get(old_id) == old_version:
                del self._newest[old_id]

    async def _after_write(self, shown: Drawn, now: float, stale: Sequence[str]) -> None:
        """Housekeeping once a change is stored (stale deadlines cancelled, finished hands kept, results
        queued or rated); a failure here must not turn the success into an error."""
        for key in stale:
            try:
                await self.deps.deadlines.cancel(key)
            except StoreError:
                log.warning("could not cancel a stale deadline (it will fire as a no-op)")
        if shown.kept_hands:
            await keep_hands(self.deps.history, shown.kept_hands)
        if not shown.results:
            return
        if self.deps.results is not None:
            try:
                await self.deps.results.push(shown.results)
                return
            except StoreError:
                log.warning("could not queue results; rating them now")
        await self._rate(shown.results, now)

    async def _rate(self, results: Sequence[GameResult], now: float) -> None:
        board = self.deps.leaderboard
        if board is None:
            return
        for result in results:
            try:
                await board.record(result, now)
            except StoreError:
                log.warning("could not record a result on the leaderboard", exc_info=True)

    async def drain_results(self, limit: int = 50) -> int:
        """Rate queued results (the deadline loop calls this); return how many were taken."""
        if self.deps.results is None:
            return 0
        try:
            results = await self.deps.results.pop(limit)
        except StoreError:
            return 0
        await self._rate(results, self.deps.clock())
        return len(results)


#: Slots a table remembers the beginning of (more are dropped, oldest first: players who left long ago).
_SLOTS_KEPT_PER_TABLE = 16


def _stamped(
    messages: Iterable[OutMessage], version: int, table: TableState, *, begin: bool
) -> tuple[OutMessage, ...]:
    """The views, each marked with the table version it shows and the version its slot's message began at
    (its epoch), so that workers delivering them at once keep the newest on screen. With ``begin`` — a
    change, about to be written as ``version`` — a fresh view (a new hand, new cards) begins a new epoch at
    ``version``, for the views after it, and the table remembers it for later commands. Without (nothing
    changed), a fresh view is the same state posted again (``again``: ``/newgame`` during a game): its
    epoch's message moves to the bottom of the chat, and later views edit that one."""
    since = dict(table.since)
    stamped = []
    for message in messages:
        if not message.kept:  # answers, notices, showdowns: new messages, drawn as they come
            stamped.append(message)
            continue
        if begin and message.fresh:
            since.pop(message.slot_key, None)
            since[message.slot_key] = version
        again = message.fresh and not begin  # the same state posted again: its epoch began earlier
        stamped.append(replace(message, version=version, since=since.get(message.slot_key, 0), again=again))
    if begin:
        while len(since) > _SLOTS_KEPT_PER_TABLE:
            del since[next(iter(since))]
        table.since = since
    return tuple(stamped)
