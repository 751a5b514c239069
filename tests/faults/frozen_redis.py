"""Helpers for the frozen-Redis tests of the adapters: a core on an embedded Redis of its own, the freeze, and
the figures (p50/p99) the tests report.

A Redis is frozen with ``SIGSTOP``: the process is there and its socket accepts connections, but nothing
answers — the worst kind of outage, since no call fails before its timeout. ``SIGCONT`` thaws it; Redis then
runs whatever commands were still waiting in its sockets (a write a client gave up on may land after all: the
tests check the table is consistent either way).
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.ops import App, Settings, build_app
from bot.table import FlowSettings

from .redis_processes import redis_servers_in

#: Humans only, nothing ever times out by itself during a test.
STILL = FlowSettings(turn_timeout=3600, machine_delay=0, next_hand_delay=0, lobby_timeout=3600)


@contextlib.asynccontextmanager
async def core_on_embedded_redis(data_dir: Path, **build: object) -> AsyncIterator[App]:
    """The bot core as ``musbot`` builds it, on an embedded Redis in ``data_dir`` (stopped afterwards)."""
    settings = Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]
    app = await build_app(settings, flow=STILL, **build)  # type: ignore[arg-type]
    try:
        yield app
    finally:
        await app.close()
    assert redis_servers_in(data_dir) == set()


@contextlib.contextmanager
def frozen(app: App) -> Iterator[None]:
    """Redis stopped (``SIGSTOP``) inside the block, and continued (``SIGCONT``) whatever happens."""
    assert app.server is not None and app.server.pid is not None
    pid = app.server.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@dataclass(frozen=True)
class Latencies:
    """Seconds from arrival to answer of a set of updates; ``None`` for one never answered."""

    what: str
    seconds: Sequence[float | None]

    @property
    def answered(self) -> list[float]:
        """The latencies of the answered ones."""
        return [s for s in self.seconds if s is not None]

    @property
    def unanswered(self) -> int:
        """How many were never answered."""
        return sum(1 for s in self.seconds if s is None)

    def quantile(self, q: float) -> float:
        """The ``q`` quantile of the answered ones (nearest rank; the highest for a single one)."""
        values = sorted(self.answered)
        if not values:
            return float("nan")
        return values[min(len(values) - 1, max(0, round(q * len(values) + 0.5) - 1))]

    def __str__(self) -> str:
        values = self.answered
        if not values:
            return f"{self.what}: {len(self.seconds)} sent, none answered"
        return (
            f"{self.what}: {len(values)}/{len(self.seconds)} answered, "
            f"p50 {statistics.median(values):.2f} s, p99 {self.quantile(0.99):.2f} s, max {max(values):.2f} s"
        )
