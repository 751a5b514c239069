"""What the benchmarks read about the machine and its processes: the header line every report starts with
(Python, cores, load average), CPU seconds of a process and of the whole machine, a process's memory."""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
"""Ticks per second of the CPU times in ``/proc``."""


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, ``"0.12, 0.34, 0.56"`` (``"n/a"`` where there are none)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def about_machine(*between: str) -> str:
    """``python 3.x.y · [between ·] N cores · load average … before the run``."""
    parts = [f"python {platform.python_version()}", *between, f"{os.cpu_count()} cores"]
    return " · ".join([*parts, f"load average {load_average()} before the run"])


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


def rss_kib(pid: int) -> int | None:
    """``VmRSS`` of a process, in KiB."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None
