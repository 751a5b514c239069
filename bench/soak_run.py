"""The run of bench/soak.py: the fake Bot API, Redis and the worker started, the people let loose, the faults
injected on time (the worker killed, Redis frozen then let go, Redis killed and started again), then the grace
and the stop; every process stopped in a ``finally``. What it saw is kept for bench/soak_report.py."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from redis.asyncio import Redis

from bench.machine import rss_kib
from bench.procs import Worker, worker_env
from bench.redis_servers import RedisServer
from bench.soak_people import People
from bench.soak_watch import Watcher
from tests.e2e.fake_telegram import FakeTelegram

TOKEN = "123456:SOAK-token"
BOT_USERNAME = "musbot_soak"
TURN_TIMEOUT = 5.0
MACHINE_DELAY = 0.2
NEXT_HAND_DELAY = 0.5
CATCH_WINDOW = 1.0
REDIS_DOWN = 3.0
REDIS_FROZEN = 10.0
GRACE = 15.0
ANSWER_TARGET = 1.0
#: While Redis is frozen, a press must still be answered ("store unavailable") within this (issue 24's p99).
FROZEN_TARGET = 2.5


@dataclass
class Phase:
    """A span of the run the figures are given for, on the fake server's clock."""

    name: str
    start: float
    end: float


def marker(log: Path, text: str) -> None:
    """A line of this script's in the worker's log, so that what follows is attributed to a phase."""
    with log.open("a", encoding="utf-8") as f:
        f.write(f"--- soak: {text} ---\n")


class Soak:
    """The run: fake server, Redis, worker, people, the poller of stored tables, and what they saw."""

    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.turn_timeout: float = args.turn_timeout
        self.tg = FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME)
        (tmp / "redis").mkdir()
        (tmp / "cwd").mkdir()
        self.redis_server = RedisServer(tmp / "redis")
        self.log = tmp / "worker.log"
        self.workers: list[Worker] = []
        self.people = People(self.tg, random.Random(args.seed))
        self.watch = Watcher(self.tg, self.people.tables, self.turn_timeout)
        self.events: list[tuple[float, str]] = []
        self.phases: list[Phase] = []
        self.play_start = 0.0
        self.play_end = 0.0
        self.baseline_rss: int | None = None
        self.final_rss: int | None = None
        self.worker_ready: list[float] = []
        self.redis_back: float | None = None
        self.exit_status: int | None = None
        self.exit_seconds = 0.0

    async def start_worker(self) -> Worker:
        """A new worker, once it polls; the seconds it took are kept."""
        env = worker_env(
            self.redis_server.url,
            TOKEN,
            self.tg.port,
            TURN_TIMEOUT=str(self.turn_timeout),
            MACHINE_DELAY=str(MACHINE_DELAY),
            NEXT_HAND_DELAY=str(NEXT_HAND_DELAY),
            CATCH_WINDOW=str(CATCH_WINDOW),
        )
        worker = Worker(env, self.log, self.tmp / "cwd")
        self.workers.append(worker)
        worker.start()
        self.worker_ready.append(await worker.ready())
        return worker

    async def run(self) -> None:
        """Set up, play (with the faults unless ``--no-faults``), stop; nothing is left running."""
        people, watch = self.people, self.watch
        await self.tg.start()
        watch.epoch_offset = time.time() - self.tg.now()
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
            poller = asyncio.create_task(watch.poll(client))
            people.make_groups(self.args.chats)
            setup = self.tg.now()
            marker(self.log, "setup")
            opened = await asyncio.gather(*(people.open_table(g) for g in people.groups))
            minutes = self.args.minutes * 60.0
            self.play_start = self.tg.now()
            self.phases.append(Phase("setup", setup, self.play_start))
            marker(self.log, "play")
            players = [
                asyncio.create_task(people.play_group(g, t))
                for g, t in zip(people.groups, opened, strict=True)
            ]
            if self.args.no_faults:
                third = minutes / 3
                for i, name in enumerate(("first third", "second third", "last third")):
                    self.phases.append(
                        Phase(name, self.play_start + i * third, self.play_start + (i + 1) * third)
                    )
                await asyncio.sleep(minutes)
            else:
                worker = await self.faults(worker, minutes)
            self.play_end = self.tg.now()
            people.stopping = True
            marker(self.log, "grace")
            for table in people.tables.values():  # progress up to the end of the play counts
                if table.signature is not None and table.signature[0] == "playing":
                    watch.gap(table, self.play_end)
            await self.grace()
            for task in players:
                task.cancel()
            await asyncio.gather(*players, return_exceptions=True)
            assert worker.pid is not None
            self.final_rss = rss_kib(worker.pid)
            watch.polling = False
            await poller
            poller = None
            marker(self.log, "SIGTERM")
            stopping = time.monotonic()
            self.exit_status = await worker.stop()
            self.exit_seconds = time.monotonic() - stopping
        finally:
            people.stopping, watch.polling = True, False
            for task in players:
                task.cancel()
            if poller is not None:
                poller.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*players, *([poller] if poller else []), return_exceptions=True)
            for worker in self.workers:
                worker.kill()
            self.redis_server.kill(signal.SIGTERM)
            with contextlib.suppress(Exception):
                await client.aclose()
            await self.tg.stop()

    async def faults(self, worker: Worker, minutes: float) -> Worker:
        """The play with its faults: at T/3 the worker killed and a new one started, at T/2 Redis frozen
        (SIGSTOP) for ``REDIS_FROZEN`` seconds, at 2T/3 Redis killed and started again ``REDIS_DOWN`` later
        (each fault after the one before it is over); the worker serving at the end."""
        await asyncio.sleep(minutes / 3)
        killed = self.tg.now()
        marker(self.log, "worker SIGKILL")
        worker.kill()
        self.events.append((killed, "worker SIGKILL"))
        worker = await self.start_worker()
        self.events.append((self.tg.now(), "new worker ready"))
        await asyncio.sleep(max(0.0, self.play_start + minutes / 2 - self.tg.now()))
        frozen = self.tg.now()
        marker(self.log, "Redis SIGSTOP")
        self.redis_server.freeze()
        self.events.append((frozen, "Redis SIGSTOP"))
        await asyncio.sleep(REDIS_FROZEN)
        self.redis_server.thaw()
        thawed = self.tg.now()
        marker(self.log, "Redis SIGCONT")
        self.events.append((thawed, "Redis SIGCONT"))
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
            Phase("after the kill", killed, frozen),
            Phase("Redis frozen", frozen, thawed),
            Phase("after the thaw", thawed, down),
            Phase("Redis down", down, up),
            Phase("after Redis is back", up, self.tg.now()),
        ]
        return worker

    async def grace(self) -> None:
        """Wait until every press is answered (at least 2 s, at most ``GRACE``)."""
        started = time.monotonic()
        await asyncio.sleep(2.0)
        while time.monotonic() - started < GRACE:
            if all(self.tg.callbacks[p.query].answered for p in self.people.presses):
                return
            await asyncio.sleep(0.2)
