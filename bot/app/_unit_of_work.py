"""The unit of work of every table command: load, run one synchronous step, draw, compare-and-set.

A command's step (:mod:`bot.table._steps`, :mod:`bot.table._lobby`, :mod:`bot.table._flow`,
:mod:`bot.table._timers`, or one of the service's) works on one loaded
:class:`~bot.table._context.TableContext` and records what happened in it. :meth:`TableWork.run` loads the
table (or takes this worker's newest parsed copy: :mod:`bot.app._copies` says when), runs the step, and
sorts what came of it: a refusal, an engine's refusal, nothing changed, or a change. A change arms the
pending deadline, is drawn (:func:`bot.app._drawn.drawn`, from the step's events), stamped and written with
a compare-and-set — again on a conflict, never raising; the hands it finished are kept and its results rated
after the write. A refusal or a no-change answer given from a cached copy is confirmed against the store
before it is sent. Results of finished games are rated off the command path when a queue is wired.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from pydantic import ValidationError

from bot.app._copies import TableCopies
from bot.app._deps import ServiceDeps
from bot.app._drawn import Before, Drawn, as_found, drawn
from bot.app._history_commands import keep_hands
from bot.app._wakes import LoopWakes
from bot.i18n import DEFAULT_LANGUAGE, normalize_language
from bot.i18n import common as msg
from bot.kernel import Outcome, OutMessage, TableState, UserRef
from bot.leaderboard import GameResult
from bot.store import (
    DeadlineChanges,
    StoredTable,
    StoreError,
    StoreUnavailable,
    TableNotices,
    VersionConflict,
)
from bot.table import (
    NOT_NOW,
    Answer,
    Refusal,
    TableContext,
    TablePaused,
    arm_deadline,
    catch_windows,
    lang_for,
    load_context,
    say,
)
from engine.ai.policy import Policy, make_policy
from engine.errors import MusError

log = logging.getLogger(__name__)

#: One step of a command: it changes the loaded table and records what happened; it answers (or refuses).
Step = Callable[[TableContext], Answer]
#: Deadlines to schedule: (key, due).
Deadlines = tuple[tuple[str, float], ...]


@dataclass
class _Command:
    """One table command while it runs."""

    table_id: str
    user: UserRef | None
    step: Step
    lang: str
    """The language of its answers: the asker's seat's once the table is loaded, else their client's."""
    current: StoredTable | None = None
    """The table as stored when this command's write was refused: the next try runs on it, unread."""

    def outcome(
        self,
        answer: Answer,
        views: tuple[OutMessage, ...] = (),
        *,
        ok: bool = True,
        alert: bool = False,
        failed: bool = False,
        paused: bool = False,
    ) -> Outcome:
        """The outcome at this command's table: ``answer`` in the command's language, and ``views``."""
        return Outcome(
            answer=say(self.lang, answer),
            alert=alert,
            messages=views,
            ok=ok,
            table=self.table_id,
            failed=failed,
            paused=paused,
        )


@dataclass(frozen=True, slots=True)
class _Loaded:
    """The table a try runs its step on."""

    ctx: TableContext
    version: int
    verified: bool
    """Read from the store for this try (not this worker's cached copy, which another may have overtaken)."""
    due: str | None
    """The deadline the table waited for when loaded."""


class TableWork:
    """Runs table commands as units of work on the service's stores, with a cache of parsed tables."""

    def __init__(self, deps: ServiceDeps) -> None:
        """Use the given stores, clock, randomness and machine players."""
        self.deps = deps
        self._policies: dict[str, Policy] = {}
        self._copies = TableCopies(deps.cache_size)
        """This worker's parsed tables, and when a first try may run on one without reading the store."""
        self.wakes = LoopWakes()
        """Told every deadline a command schedules (this worker's deadline loop sleeps on it)."""

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

    async def run(self, table_id: str, user: UserRef | None, step: Step) -> Outcome:
        """Load, run ``step``, draw, compare-and-set; retry on a concurrent write; never raise.

        The first try trusts this worker's newest copy of the table (no read): the compare-and-set finds out
        if another worker wrote since, and then the step runs again on what the store holds. A refusal or a
        no-change answer given from that copy is confirmed against the store before it is sent.
        """
        lang = normalize_language(user.lang) if user is not None and user.lang else DEFAULT_LANGUAGE
        command = _Command(table_id, user, step, lang)
        try:
            for attempt in range(self.deps.cas_attempts):
                outcome = await self._try(command, trust_cache=attempt == 0)
                if outcome is not None:
                    return outcome
            return command.outcome(msg.ALREADY_PLAYED, ok=False)
        except StoreUnavailable:
            log.warning("store unavailable while handling table %s", table_id, extra={"table": table_id})
            return command.outcome(msg.STORE_UNAVAILABLE, ok=False, failed=True)
        except Exception:
            # The last-resort guard, at the boundary: whatever a step, a view or a store client does wrong,
            # a press still gets an answer (a button left spinning is worse), and nothing is half-written —
            # the write is one compare-and-set, and whatever raised before it left the store as it was.
            log.exception(
                "unexpected error on table %s; nothing was written", table_id, extra={"table": table_id}
            )
            return command.outcome(msg.INTERNAL_ERROR, ok=False, failed=True)

    async def _try(self, command: _Command, *, trust_cache: bool) -> Outcome | None:
        """One try of ``command``: its outcome, or ``None`` when the store moved on meanwhile (the step runs
        again on what it holds)."""
        loaded = await self._load(command, trust_cache=trust_cache)
        if isinstance(loaded, Outcome):
            return loaded
        ctx = loaded.ctx
        found = as_found(ctx)
        try:
            answer = command.step(ctx)
        except Refusal as refusal:
            # A refusal changes nothing (the flow refuses before it touches anything): keep the table.
            if not await self._confirmed(command, loaded):
                return None
            paused = isinstance(refusal, TablePaused)
            return command.outcome((refusal.msgid, dict(refusal.kwargs)), ok=False, paused=paused)
        except MusError as exc:
            # The engine refused what the flow let through (a check it alone makes): a clear answer,
            # nothing written, and this copy dropped (the flow may have touched it before the engine).
            log.info(
                "engine refused a command on table %s: %s",
                command.table_id,
                exc,
                extra={"table": command.table_id},
            )
            self._copies.drop(command.table_id)
            return command.outcome(NOT_NOW, ok=False)
        if not ctx.changed:
            if not await self._confirmed(command, loaded):
                return None
            shown = drawn(ctx, found, self.deps.web)
            views = _stamped(shown.views, loaded.version, ctx.table, begin=False)
            return command.outcome(shown.answer_or(answer), views, alert=shown.alert)
        return await self._write(command, loaded, found, answer)

    async def _load(self, command: _Command, *, trust_cache: bool) -> _Loaded | Outcome:
        """The table to run the step on — this worker's newest parsed copy when ``trust_cache`` and it has
        one, else the store's — or the outcome when there is none (gone, or unreadable)."""
        table_id = command.table_id
        version = self._copies.trusted(table_id) if trust_cache else None
        cached = None if version is None else self._copies.take(table_id, version)
        verified = cached is None
        data = ""
        if cached is None:
            stored, command.current = command.current or await self.deps.tables.load(table_id), None
            if stored is None:
                return Outcome(answer=say(command.lang, msg.STALE_BUTTON), ok=False)
            version, data = stored.version, stored.data
            self._copies.read(table_id, version)
            cached = self._copies.take(table_id, version)
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
            return Outcome(answer=say(command.lang, msg.INTERNAL_ERROR), ok=False)
        if command.user is not None:
            command.lang = lang_for(command.user, table)
        return _Loaded(ctx, version, verified, table.due_key)

    async def _confirmed(self, command: _Command, loaded: _Loaded) -> bool:
        """Keep an unchanged table for the next command; whether the store still holds it (a copy just read
        from it does), so that an answer given from it may be sent."""
        self._keep(command.table_id, loaded.version, loaded.ctx)
        return loaded.verified or await self._still_current(command.table_id, loaded.version)

    async def _write(
        self, command: _Command, loaded: _Loaded, found: Before, answer: Answer
    ) -> Outcome | None:
        """A change: armed, drawn, stamped and written with a compare-and-set (``None``: another worker
        wrote first, and the step runs again); then the housekeeping of a stored change."""
        ctx = loaded.ctx
        arm_deadline(ctx)
        ctx.sync_match()
        shown = drawn(ctx, found, self.deps.web)
        # Stamped before the write, which makes it version + 1 (or fails and the step runs again).
        views = _stamped(shown.views, loaded.version + 1, ctx.table, begin=True)
        schedule, stale = _deadline_changes(ctx, loaded.due)
        if not await self._compare_and_set(command, loaded, schedule, stale):
            return None
        if schedule:  # (a machine's move may be due soon: the deadline loop wakes if it sleeps past it)
            self.wakes.scheduled(min(due for _, due in schedule))
        await self._after_write(shown, ctx.now, () if self.deps.atomic_deadlines else stale)
        return command.outcome(shown.answer_or(answer), views, alert=shown.alert)

    async def _compare_and_set(
        self, command: _Command, loaded: _Loaded, schedule: Deadlines, stale: tuple[str, ...]
    ) -> bool:
        """Write the changed table, with its deadlines, if the store still holds the version it was loaded
        at; whether it did. This worker keeps the written copy for the next command (while it plays on)."""
        table_id, table, atomic = command.table_id, loaded.ctx.table, self.deps.atomic_deadlines
        if not atomic:
            # Deadlines go in before the write: if we die in between, a stale key fires as a no-op.
            for key, due in schedule:
                await self.deps.deadlines.schedule(key, due)
        finished = table.finished
        try:
            written = await self.deps.tables.compare_and_set(
                table_id,
                loaded.version,
                table.model_dump_json(),
                chat_key=None,
                user_keys=table.humans(),
                finished=finished,
                deadlines=DeadlineChanges(schedule, stale) if atomic else None,
            )
        except VersionConflict as conflict:
            self._copies.overtaken(table_id)
            command.current = conflict.current
            return False
        if finished:
            self._copies.drop(table_id)
        else:
            self._keep(table_id, written.version, loaded.ctx)
        await announce(self.deps.notices, table_id, written.version)
        return True

    async def _still_current(self, table_id: str, version: int) -> bool:
        """Whether the store still holds ``version`` of the table (else forget our copy)."""
        stored = await self.deps.tables.load(table_id)
        if stored is not None and stored.version == version:
            return True
        self._copies.drop(table_id, version)
        if stored is not None:
            self._copies.overtaken(table_id)
        return False

    def _keep(self, table_id: str, version: int, ctx: TableContext) -> None:
        """Remember a parsed table (and its live match) for the next command on this version."""
        self._copies.keep(table_id, version, (ctx.table, ctx.match))

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
            except StoreError as exc:  # an outage: one line (the result is lost to the board, not the game)
                log.warning("could not record a result on the leaderboard: %s", exc)

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


async def announce(notices: TableNotices, table_id: str, version: int) -> None:
    """Tell whoever shows ``table_id`` live that it was written as ``version`` (right after the write, before
    its housekeeping: a web page is that much sooner). A notice that cannot be sent is only logged: the write
    is stored, and a listener's safety poll finds it."""
    try:
        await notices.publish(table_id, version)
    except StoreError as exc:
        log.warning("could not announce table %s v%d: %s", table_id, version, exc, extra={"table": table_id})


def _deadline_changes(ctx: TableContext, old_due: str | None) -> tuple[Deadlines, tuple[str, ...]]:
    """Deadlines a change schedules (the catch windows it opened, and the pending one if it is new) and the
    one it makes stale (the pending one it replaced)."""
    table = ctx.table
    schedule = catch_windows(ctx)
    if table.due_key is not None and table.due is not None and table.due_key != old_due:
        schedule.append((table.due_key, table.due))
    stale = (old_due,) if old_due is not None and old_due != table.due_key else ()
    return tuple(schedule), stale


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
