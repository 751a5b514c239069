"""Finding the ``redis-server`` processes that serve a data directory, whoever started them (Linux /proc).

The embedded server runs with the data directory as its working directory, so a process is found by its
``cwd`` and its name, not by what any state file says.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def redis_servers_in(data_dir: Path) -> set[int]:
    """PIDs of the live (not zombie) ``redis-server`` processes whose working directory is ``data_dir``."""
    target = data_dir.resolve()
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if not stat[stat.find("(") + 1 : stat.rfind(")")].startswith("redis-server"):
                continue
            if stat[stat.rfind(")") + 2 :].split()[0] == "Z":
                continue
            if Path(os.readlink(entry / "cwd")) == target:
                found.add(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def wait_until(condition: object, timeout: float, interval: float = 0.05) -> bool:
    """Poll ``condition()`` until it is true or ``timeout`` seconds passed; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():  # type: ignore[operator]
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)


def kill_all(pids: set[int]) -> None:
    """SIGKILL these processes (a test's own leftovers), ignoring the ones already gone."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
