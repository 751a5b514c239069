"""One configuration of bench/scale.py: N webhook workers on a Redis backend, the load generator and the
fake Bot API started, the warm-up, the measured window (CPU and Redis commands sampled at both ends), the
stop; every worker stopped in a ``finally``. Its figures come out as a :class:`bench.scale_report.Result`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from redis.asyncio.cluster import RedisCluster

from bench.machine import cpu_seconds, machine_busy
from bench.procs import Worker, free_port, is_error, is_traceback, is_warning, unstamped, worker_env
from bench.redis_servers import Backend
from bench.scale_load import ANSWER_WAIT, TOKEN, Load, ScaleTelegram
from bench.scale_report import Result
from bench.scale_screens import hands_shown_twice, quiet, screens_behind
from bot.store import AnyRedis
from bot.store._redis_client import client_for_url
from bot.store._redis_store import RedisTableStore

PREFIX = "mus:"
TURN_TIMEOUT = 3600


@dataclass
class Window:
    """The measured window, on the fake server's clock, and what was sampled at its ends."""

    start: float = 0.0
    end: float = 0.0
    cpu_before: dict[int, float] = field(default_factory=dict)
    cpu_after: dict[int, float] = field(default_factory=dict)
    machine: float = 0.0
    """CPU seconds the whole machine was busy during the window."""
    commands: Counter[str] = field(default_factory=Counter)
    """Redis commands run during the window, by name (the generator's reads included)."""
    reads: int = 0


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
        self.load = Load(self.tg, self.workers, self.secret, args.in_flight)
        self.client: AnyRedis | None = None
        self.window = Window()
        self.ready: list[float] = []
        self.setup_seconds = 0.0
        self.drain_seconds = 0.0
        self.behind = 0
        self.checked = 0
        self.behind_examples: list[str] = []
        self.repeated = 0

    async def start_workers(self) -> None:
        """The workers, each on its own webhook port, once they serve."""
        (self.tmp / "cwd").mkdir(exist_ok=True)
        for i in range(self.n_workers):
            port = free_port()
            env = worker_env(
                self.backend.url,
                TOKEN,
                self.tg.port,
                TELEGRAM_WEBHOOK_URL=f"https://bench.invalid/tg-{self.secret}",
                TELEGRAM_WEBHOOK_LISTEN="127.0.0.1",
                TELEGRAM_WEBHOOK_PORT=str(port),
                TELEGRAM_WEBHOOK_SECRET=self.secret,
                TURN_TIMEOUT=str(TURN_TIMEOUT),
                MACHINE_DELAY="0",
                NEXT_HAND_DELAY="0",
            )
            log = self.tmp / f"{self.backend.name}-{self.n_workers}w-worker{i}.log"
            url = f"http://127.0.0.1:{port}/tg-{self.secret}"
            profile = None
            if self.args.profile is not None:
                self.args.profile.mkdir(parents=True, exist_ok=True)
                profile = self.args.profile / f"{self.backend.name}-{self.n_workers}w-worker{i}.prof"
            worker = Worker(env, log, self.tmp / "cwd", url, profile)
            self.workers.append(worker)
            worker.start()
        self.ready = list(await asyncio.gather(*(w.ready() for w in self.workers)))

    def pids(self) -> dict[int, str]:
        """The processes whose CPU is measured: pid -> generator, redis or worker<i>."""
        out = {os.getpid(): "generator"}
        out.update({pid: "redis" for pid in self.backend.pids})
        out.update({w.pid: f"worker{i}" for i, w in enumerate(self.workers) if w.pid is not None})
        return out

    def sample_cpu(self) -> dict[int, float]:
        """CPU seconds of each of :meth:`pids` so far."""
        return {pid: s for pid in self.pids() if (s := cpu_seconds(pid)) is not None}

    async def run(self) -> Result:
        """Set up, warm up, measure, stop: the configuration's figures."""
        load = self.load
        self.backend.flush()
        await self.tg.start()
        players: list[asyncio.Task[None]] = []
        try:
            await self.start_workers()
            load.session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.args.in_flight + 32),
                timeout=aiohttp.ClientTimeout(total=30),
            )
            self.client = client_for_url(self.backend.url, decode_responses=True)
            if isinstance(self.client, RedisCluster):
                await self.client.initialize()
            load.store = RedisTableStore(self.client, prefix=PREFIX)
            setup = time.monotonic()
            load.make_groups(self.args.tables, self.rng)
            await asyncio.gather(
                *(load.send(u, None, "/start") for g in load.groups for u in g.users.values())
            )
            opened = await asyncio.gather(*(load.open_table(g) for g in load.groups))
            self.setup_seconds = time.monotonic() - setup
            players = [asyncio.create_task(load.play(g, t)) for g, t in zip(load.groups, opened, strict=True)]
            await asyncio.sleep(self.args.warmup)
            window = self.window
            window.start, window.cpu_before, machine = self.tg.now(), self.sample_cpu(), machine_busy()
            commands_before, reads_before = await asyncio.to_thread(self.backend.commands), load.reads
            await asyncio.sleep(self.args.duration)
            window.end, window.cpu_after = self.tg.now(), self.sample_cpu()
            window.machine = machine_busy() - machine
            window.reads = load.reads - reads_before
            window.commands = await asyncio.to_thread(self.backend.commands)
            window.commands.subtract(commands_before)
            hands = await load.hands_dealt()
            load.stopping = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*players, return_exceptions=True), ANSWER_WAIT + 2)
            if self.args.check_screens:
                self.drain_seconds = await quiet(self.tg, self.args.drain)
                if self.drain_seconds < self.args.drain:  # (still sending: the screens are not final yet)
                    self.behind, self.checked = await screens_behind(load, self.behind_examples)
                self.repeated = hands_shown_twice(self.tg, load.groups)
            await asyncio.gather(*(worker.stop() for worker in self.workers))
            return self.result(hands)
        finally:
            load.stopping = True
            for task in players:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*players, return_exceptions=True)
            for worker in self.workers:
                worker.kill()
            if load.session is not None:
                with contextlib.suppress(Exception):
                    await load.session.close()
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.aclose()
            await self.tg.stop()

    def logs(self) -> tuple[int, Counter[str], int]:
        """The workers' logs: Traceback lines, ERROR lines by text, WARNING lines."""
        tracebacks, warnings, errors = 0, 0, Counter[str]()
        for worker in self.workers:
            for line in worker.log.read_text(encoding="utf-8", errors="replace").splitlines():
                if is_traceback(line):
                    tracebacks += 1
                elif is_error(line):
                    errors[unstamped(line)[:120]] += 1
                elif is_warning(line):
                    warnings += 1
        return tracebacks, errors, warnings

    def result(self, hands: int) -> Result:
        """The figures of the window (``hands``: dealt in all by its end)."""
        w, tg, load = self.window, self.tg, self.load
        in_window = [
            p
            for p in load.presses
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
        unanswered = sum(1 for p in load.presses if not p.record.answered and w.start <= p.sent < w.end)
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
            for c in tg.calls()
            if w.start <= c.time < w.end and c.method != "getUpdates"
        )
        calls["rejected"] = sum(
            1 for c in tg.rejected() if w.start <= c.time < w.end and "not modified" in (c.description or "")
        )
        limited = [c for c in tg.limited() if w.start <= c.time < w.end]
        calls["limited"] = len(limited)
        calls["limited_bot"] = sum(1 for c in limited if not _group_post(c.method, c.params.get("chat_id")))
        calls["busiest"] = _busiest_second(
            sorted(c.time for c in tg.calls() if c.params.get("chat_id") is not None and c.status == 200)
        )
        rejected = Counter(f"{c.method}: {c.description}"[:90] for c in tg.rejected())
        tracebacks, errors, warnings = self.logs()
        return Result(
            backend=self.backend.name,
            workers=self.n_workers,
            actions=len(in_window),
            seconds=w.end - w.start,
            latencies=latencies,
            texts=texts,
            unanswered=unanswered,
            post_errors=load.post_errors,
            rejected=rejected,
            worker_cores=[cores.get(k.pid, float("nan")) for k in self.workers if k.pid is not None],
            redis_cores=sum(c for pid, c in cores.items() if names.get(pid) == "redis"),
            generator_cores=cores.get(os.getpid(), float("nan")),
            redis_commands=w.commands.total() - w.reads,
            redis_by_command=_workers_commands(w.commands, w.reads),
            generator_reads=w.reads,
            tracebacks=tracebacks,
            errors=errors,
            warnings=warnings,
            exit_statuses=[worker.exit_status for worker in self.workers],
            ready=self.ready,
            setup_seconds=self.setup_seconds,
            stuck=load.stuck,
            matches_over=load.matches_over,
            hands=hands,
            calls=calls,
            drain_seconds=self.drain_seconds,
            behind=self.behind,
            checked=self.checked,
            behind_examples=list(self.behind_examples),
            repeated=self.repeated,
            deleted=sum(1 for c in tg.calls() if c.method == "deleteMessage"),
            machine_cores=w.machine / (w.end - w.start),
        )


def _workers_commands(commands: Counter[str], reads: int) -> Counter[str]:
    """The workers' Redis commands by name: the generator's reads (one ``HMGET`` each) taken out."""
    out = Counter(commands)
    out["hmget"] -= reads
    return +out


def _group_post(method: str, chat_id: object) -> bool:
    """Whether a call posts a new message in a group (a 429 for it may be the group's 20 a minute)."""
    return method.startswith("send") and str(chat_id).startswith("-")


def _busiest_second(times: list[float]) -> int:
    """The most calls (``times`` sorted) in any one-second window."""
    busiest, first = 0, 0
    for last, at in enumerate(times):
        while times[first] <= at - 1.0:
            first += 1
        busiest = max(busiest, last - first + 1)
    return busiest
