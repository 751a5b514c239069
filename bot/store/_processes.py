"""Child processes that stop with the process that started them, and whether a process still runs.

The embedded Redis server (:mod:`bot.store._embedded`) is such a child. On Linux it is started with a
parent-death signal (``PR_SET_PDEATHSIG``, SIGTERM: :func:`die_with_parent`), so it stops even when its parent
dies without a goodbye (``kill -9``, a crash). The signal follows the *thread* that forked the child, so
children are forked from one thread that lasts as long as the process (:func:`popen`). :func:`pid_alive` tells
a running process from a dead one, a zombie, or a new process that got the pid of a dead one.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = [
    "die_with_parent",
    "owner_alive",
    "pid_alive",
    "popen",
    "process_start_time",
    "same_dir",
    "terminate",
]


def process_start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks after boot; Linux), to tell it from a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rfind(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def pid_alive(pid: int, start_time: int | None = None) -> bool:
    """Whether process ``pid`` runs (a zombie does not; nor a new process that got the pid of a dead one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: os.kill is all we know
    if stat[stat.rfind(")") + 2 :].split()[:1] == ["Z"]:
        return False
    return start_time is None or process_start_time(pid) in (None, start_time)


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGTERM when the thread that forks it dies (Linux), or None.

    Only a pre-resolved C call and ``getppid`` run in the child between fork and exec.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    term = int(signal.SIGTERM)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, term, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed: nobody would send it
            os._exit(1)

    return preexec


_spawner: ThreadPoolExecutor | None = None
_spawner_guard = threading.Lock()


def _forget_spawner() -> None:
    global _spawner
    _spawner = None  # a forked child has the object but not its thread


os.register_at_fork(after_in_child=_forget_spawner)


def popen(args: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` run in one thread that lasts as long as the process.

    The parent-death signal is sent when the *thread* that forked the child ends: forking from a passing
    thread (``asyncio.to_thread``'s) would stop the server when that thread is retired.
    """
    global _spawner
    with _spawner_guard:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedded-redis")
        spawner = _spawner

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(args, **options)

    return spawner.submit(start).result()


def terminate(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM the process and reap it; SIGKILL it if it does not exit within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def owner_alive(state: Mapping[str, Any]) -> bool:
    """Whether the process recorded as the owner of a server still runs."""
    owner, started = state.get("owner"), state.get("owner_start")
    if not isinstance(owner, int):
        return False  # written by a version that did not record owners: nobody will stop it
    return pid_alive(owner, started if isinstance(started, int) else None)


def same_dir(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are the same directory (``False`` if either cannot be looked at)."""
    try:
        return a.samefile(b)
    except OSError:
        return False
