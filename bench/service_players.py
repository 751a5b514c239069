"""The players of bench/service.py and what they count: one fake human per solo table pressing the buttons
of the views the service returns, the deadline and results loops of a worker, and the service, machine
players and leaderboard wrapped to time and count every call."""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from bot.app import DeadlineWork, Service, ServiceDeps, TableWork
from bot.kernel import ChatRef, Outcome, OutMessage, UserRef
from bot.leaderboard import GameResult, LeaderboardEntry, RankBy, RedisLeaderboard
from bot.store import StoreError
from engine.actions import Action
from engine.ai.policy import Policy
from engine.senas import Sena
from engine.views import SeatView, SenaView

# --- counters ----------------------------------------------------------------------------------------


@dataclass
class Stats:
    """Everything the run counts."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    """Seconds per service call, by kind: ``press``, ``machine``, ``deal``, ``other`` (fired), ``newgame``."""
    refused: int = 0
    machine_decisions: int = 0
    hands: int = 0
    matches: int = 0
    stuck: int = 0
    board_seconds: list[float] = field(default_factory=list)
    """Seconds per leaderboard ``record`` (part of the command that ended a game)."""
    board_failures: int = 0

    def record(self, kind: str, seconds: float) -> None:
        """One service call of ``kind`` took ``seconds``."""
        self.latencies.setdefault(kind, []).append(seconds)

    def count(self, *kinds: str) -> int:
        """Service calls of these kinds."""
        return sum(len(self.latencies.get(k, ())) for k in kinds)


class CountingPolicy:
    """A machine player that counts its decisions (the machine moves made inline)."""

    def __init__(self, inner: Policy, stats: Stats) -> None:
        self.inner = inner
        self.stats = stats
        self.name = inner.name

    def decide(self, view: SeatView, rng: random.Random) -> Action:
        """The inner player's decision, counted."""
        self.stats.machine_decisions += 1
        return self.inner.decide(view, rng)

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        """The inner player's choice."""
        return self.inner.choose_sena(view, rng)

    def wants_catch(self, view: SeatView, sena: SenaView, rng: random.Random) -> bool:
        """The inner player's choice."""
        return self.inner.wants_catch(view, sena, rng)


class TimedLeaderboard:
    """The production leaderboard; each ``record`` (run inside a table command) is timed, failures counted."""

    def __init__(self, inner: RedisLeaderboard, stats: Stats) -> None:
        self.inner = inner
        self.stats = stats

    async def record(self, result: GameResult, now: float) -> None:
        """The production ``record``, timed."""
        start = time.perf_counter()
        try:
            await self.inner.record(result, now)
        except StoreError:
            self.stats.board_failures += 1
            raise
        finally:
            self.stats.board_seconds.append(time.perf_counter() - start)

    async def top(self, scope: str, n: int = 10, by: RankBy = "rating") -> list[LeaderboardEntry]:
        """The production ``top``."""
        return await self.inner.top(scope, n, by)

    async def entry(self, scope: str, player_key: str, by: RankBy = "rating") -> LeaderboardEntry | None:
        """The production ``entry``."""
        return await self.inner.entry(scope, player_key, by)

    async def move_scope(self, old: str, new: str) -> int:
        """The production ``move_scope``."""
        return await self.inner.move_scope(old, new)

    async def ping(self) -> None:
        """The production ``ping``."""
        await self.inner.ping()


class CountingHandler(logging.Handler):
    """Counts the service's warnings and errors by message (instead of printing every traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        """Count a record."""
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__})"
        self.counts[f"{record.levelname} {record.name}: {text}"] += 1


LOG = CountingHandler()


class TimedDeadlines(DeadlineWork):
    """The service's deadlines, each one fired timed (``fire_due`` calls ``fire`` once per claimed key)."""

    def __init__(self, deps: ServiceDeps, work: TableWork, stats: Stats) -> None:
        super().__init__(deps, work)
        self.bench_stats = stats
        self.drivers: dict[str | None, Driver] = {}
        """Table -> its driver (the key of a start the service refused: ``None``)."""

    async def fire(self, key: str) -> Outcome:
        """Fire ``key``, timed; its views go to the table's driver."""
        start = time.perf_counter()
        outcome = await super().fire(key)
        elapsed = time.perf_counter() - start
        kind = key.split("|")[1] if "|" in key else "other"
        if outcome.ok and outcome.messages:
            self.bench_stats.record(kind if kind in ("machine", "deal") else "other", elapsed)
        driver = self.drivers.get(outcome.table or "")
        if driver is not None:
            driver.deliver(outcome)
        return outcome


class TimedService(Service):
    """The service with its deadlines timed (:class:`TimedDeadlines`, a member like the production one)."""

    def __init__(self, deps: ServiceDeps, stats: Stats) -> None:
        super().__init__(deps)
        self.deadlines = self.timed = TimedDeadlines(deps, self.tables, stats)

    @property
    def drivers(self) -> dict[str | None, Driver]:
        """Table -> its driver."""
        return self.timed.drivers


# --- one fake human per table ------------------------------------------------------------------------


@dataclass
class Driver:
    """A table's human: remembers the latest table and private-hand views and picks a button from them."""

    index: int
    user: UserRef
    chat: ChatRef
    rng: random.Random
    table_id: str | None = None
    table_msg: OutMessage | None = None
    hand_msg: OutMessage | None = None
    last_discard: tuple[str, tuple[str, ...]] | None = None
    hand_over: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def deliver(self, outcome: Outcome) -> None:
        """Take the views of an outcome (a press, a new game or a fired deadline)."""
        for m in outcome.messages:
            if m.slot == "table":
                self.table_msg = m
                self.hand_over = False
            elif m.slot == "hand" and m.user == self.user.key:
                self.hand_msg = m
            elif m.slot == "showdown":
                self.hand_over = True
        self.wake.set()

    def choose(self) -> str | None:
        """A token to press now: a turn button when it is our turn, else a discard pick or confirmation."""
        tm = self.table_msg
        if tm is not None and self.user.name in tm.text.rsplit("\n", 1)[-1]:  # "Turn of <name>" line
            turn = [b.token for row in tm.buttons for b in row if "-" in b.token.split(".")[1]]
            if turn:
                return self.rng.choice(turn)
        hm = self.hand_msg
        if hm is None:
            return None
        picks = [b for row in hm.buttons for b in row if b.token.rsplit(".", 1)[-1].startswith("pick")]
        if not picks:
            return None
        confirm = [b.token for row in hm.buttons for b in row if b.token.endswith(".discard")]
        if confirm:  # something is picked: confirm once for these very cards
            key = (confirm[0], tuple(b.label.removeprefix("✓ ") for b in picks))
            if key == self.last_discard:
                return None
            self.last_discard = key
            return confirm[0]
        return self.rng.choice(picks).token


# --- the run -----------------------------------------------------------------------------------------


@dataclass
class Run:
    """The shared state of one benchmark run."""

    service: TimedService
    stats: Stats
    args: argparse.Namespace
    sem: asyncio.Semaphore
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    started: float = 0.0

    def actions(self) -> int:
        """Actions so far (presses and fired deadlines)."""
        return self.stats.count("press", "machine", "deal", "other")

    def check_stop(self) -> None:
        """Stop once ``--actions`` or ``--seconds`` is reached."""
        if self.actions() >= self.args.actions or time.perf_counter() - self.started >= self.args.seconds:
            self.stop.set()


async def new_game(run: Run, d: Driver) -> None:
    """``/newgame`` in the driver's private chat, then ▶ Start on its solo lobby."""
    async with run.sem:
        start = time.perf_counter()
        outcome = await run.service.new_table(d.chat, d.user)
        run.stats.record("newgame", time.perf_counter() - start)
    if not outcome.ok or outcome.table is None:
        raise RuntimeError(f"could not open a table for {d.chat.key}: {outcome.answer}")
    # The solo lobby offers its options first: start with the defaults.
    (start_token,) = [
        b.token for m in outcome.messages for row in m.buttons for b in row if b.token.endswith(".start")
    ]
    async with run.sem:
        begin = time.perf_counter()
        outcome = await run.service.press(d.user, start_token)
        run.stats.record("start", time.perf_counter() - begin)
    d.table_id = outcome.table
    d.table_msg = d.hand_msg = None
    d.last_discard = None
    run.service.drivers[outcome.table] = d
    d.deliver(outcome)


async def drive(run: Run, d: Driver) -> None:
    """Press buttons at one table until the run stops; open a new table when a match ends."""
    deadlines = run.args.mode == "deadlines"
    while not run.stop.is_set():
        d.wake.clear()
        token = d.choose()
        if token is None:
            if d.hand_over and d.table_id is not None:
                table = await run.service.load_table(d.table_id)
                if table is not None and table.status.value in ("finished", "cancelled"):
                    run.stats.matches += 1
                    run.service.drivers.pop(d.table_id, None)
                    await new_game(run, d)
                    continue
            if not deadlines:
                run.stats.stuck += 1  # inline play always leaves a human decision: should not happen
                return
            await wait_for_news(run, d)  # a machine or a deal is due first
            continue
        async with run.sem:
            if run.stop.is_set():
                return
            start = time.perf_counter()
            outcome = await run.service.press(d.user, token)
            elapsed = time.perf_counter() - start
        if outcome.ok:
            run.stats.record("press", elapsed)
            run.stats.hands += sum(1 for m in outcome.messages if m.slot == "showdown")
            d.deliver(outcome)
        else:
            run.stats.refused += 1
            if not deadlines:
                run.stats.stuck += 1  # inline play never races with anything: should not happen
                return
            await wait_for_news(run, d)
        run.check_stop()
        await asyncio.sleep(0)  # let the other tables have a turn


async def wait_for_news(run: Run, d: Driver) -> None:
    """Sleep until a fired deadline brings this table new views, or the run stops."""
    d.wake.clear()
    stopper = asyncio.ensure_future(run.stop.wait())
    waker = asyncio.ensure_future(d.wake.wait())
    await asyncio.wait((stopper, waker), return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    waker.cancel()


async def fire_loop(run: Run) -> None:
    """A worker's deadline loop: claim what is due, fire it (timed in ``TimedService.fire``)."""
    while not run.stop.is_set():
        async with run.sem:
            outcomes = await run.service.deadlines.fire_due(time.time(), limit=run.args.fire_batch)
        run.stats.hands += sum(1 for o in outcomes for m in o.messages if m.slot == "showdown")
        run.check_stop()
        if not outcomes:
            await asyncio.sleep(0.001)


async def drain_loop(run: Run) -> None:
    """A worker's results loop: rate queued results off the command path (as run_deadlines does)."""
    while not run.stop.is_set():
        if not await run.service.tables.drain_results():
            await asyncio.sleep(0.005)


async def stop_after(run: Run) -> None:
    """Stop on time even if every table is waiting."""
    await asyncio.sleep(run.args.seconds)
    run.stop.set()
