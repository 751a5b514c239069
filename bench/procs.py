"""The worker processes of the process-level benchmarks (bench/soak.py, bench/scale.py) and their logs: a real
``python -m adapters.cli run`` configured by environment variables, started, awaited, stopped or killed; the
kinds of line its log holds. Children die with the bench (``PR_SET_PDEATHSIG``) and listen on free ports."""

from __future__ import annotations

import asyncio
import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The project's root: the workers' ``PYTHONPATH``."""


def die_with_me() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes a child get SIGKILL when this process dies (Linux), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

    return preexec


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def worker_env(redis_url: str, token: str, api_port: int, **extra: str) -> dict[str, str]:
    """A worker's environment: this one without the bot's own settings, then Redis, the token, the fake Bot
    API on 127.0.0.1:``api_port``, ``LOG_LEVEL=INFO``, and ``extra``."""
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
            "REDIS_URL": redis_url,
            "LOG_LEVEL": "INFO",
            "TELEGRAM_TOKEN": token,
            "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{api_port}",
            **extra,
        }
    )
    return env


class Worker:
    """One ``python -m adapters.cli run`` process, its stdout and stderr appended to ``log`` (which earlier
    workers may have written to: this one's part starts where the file ended when it started)."""

    def __init__(
        self, env: dict[str, str], log: Path, cwd: Path, url: str = "", profile: Path | None = None
    ) -> None:
        self.env, self.log, self.cwd = env, log, cwd
        self.profile = profile
        """Where cProfile writes the process's profile once it stopped (``None``: not profiled)."""
        self.url = url
        """Its webhook listener (webhook mode), where updates are POSTed."""
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.exit_status: int | None = None
        """After :meth:`stop`: its exit status (``None``: it had to be killed)."""
        self._offset = 0

    def start(self) -> None:
        """Start it (returns at once: :meth:`ready` waits until it serves)."""
        self._offset = self.log.stat().st_size if self.log.exists() else 0
        profiled = [] if self.profile is None else ["-m", "cProfile", "-o", str(self.profile)]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, *profiled, "-m", "adapters.cli", "run"],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                preexec_fn=die_with_me(),
            )
        self.started_at = time.monotonic()

    async def ready(self, timeout: float = 60.0) -> float:
        """Wait for "telegram adapter running" in its part of the log; the seconds it took to start."""
        deadline = time.monotonic() + timeout
        assert self.process is not None
        while time.monotonic() < deadline:
            with self.log.open("rb") as f:
                f.seek(self._offset)
                if b"telegram adapter running" in f.read():
                    return time.monotonic() - self.started_at
            if self.process.poll() is not None:
                raise RuntimeError(f"a worker exited with {self.process.returncode} (see {self.log})")
            await asyncio.sleep(0.05)
        raise RuntimeError(f"a worker did not start within {timeout} s (see {self.log})")

    @property
    def pid(self) -> int | None:
        """Its process id (``None`` before :meth:`start`)."""
        return None if self.process is None else self.process.pid

    async def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM and wait; SIGKILL if it does not stop in time. Its exit status (``None``: killed)."""
        process = self.process
        if process is None or process.poll() is not None:
            self.exit_status = None if process is None else process.returncode
            return self.exit_status
        process.send_signal(signal.SIGTERM)
        try:
            self.exit_status = await asyncio.to_thread(process.wait, timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.exit_status = None
        return self.exit_status

    def kill(self) -> None:
        """SIGKILL now and reap it (synchronous: safe in any ``finally``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# --- what a worker's log says -------------------------------------------------------------------------------


def is_traceback(line: str) -> bool:
    """The first line of a traceback."""
    return line.startswith("Traceback")


def is_error(line: str) -> bool:
    """A log record at ERROR or CRITICAL."""
    return " ERROR " in line or " CRITICAL " in line


def is_warning(line: str) -> bool:
    """A log record at WARNING."""
    return " WARNING " in line


def unstamped(line: str) -> str:
    """A log record without its date and time (so that equal records count together)."""
    return re.sub(r"^\S+ \S+ ", "", line)
