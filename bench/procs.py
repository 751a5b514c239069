"""Helpers the process-level benchmarks share (bench/soak.py, bench/scale.py): children that die with the
bench, free ports, percentiles, the group chats they play in."""

from __future__ import annotations

import ctypes
import random
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.e2e.fake_telegram import FakeChat, FakeUser


def die_with_me() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes a child get SIGKILL when this process dies (Linux), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

    return preexec


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@dataclass
class Group:
    """A group chat of the load and the people who play in it."""

    chat: FakeChat
    users: dict[int, FakeUser]
    """Seat -> person."""
    rng: random.Random
    tables: list[str] = field(default_factory=list)
    """The tables opened in it, oldest first."""
