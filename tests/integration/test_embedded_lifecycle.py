"""The embedded server's life: durability settings, a restart on the same address, start-up checks of
:func:`bot.store.connect` (against this session's server, or a closed port)."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import pytest
from aof import aof_written

from bot.store import EmbeddedRedis, EmbeddedRedisError, RedisTableStore, StoreUnavailable, connect
from bot.store._embedded import PID_NAME
from bot.store._redis_client import client_options


def test_the_server_fsyncs_every_second_and_writes_a_pidfile(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path / "data") as server:
        config = (tmp_path / "data" / "redis.conf").read_text()
        assert "appendonly yes" in config and "appendfsync everysec" in config
        assert int((tmp_path / "data" / PID_NAME).read_text()) == server.pid
    assert not (tmp_path / "data" / PID_NAME).exists()  # removed by Redis on its way out


@pytest.mark.parametrize("transport", ["unix", "tcp"])
async def test_a_dead_server_is_revived_at_the_same_address(tmp_path: Path, transport: str) -> None:
    server = EmbeddedRedis(tmp_path / "data", transport=transport).start()  # type: ignore[arg-type]
    client, _ = await connect(server.url, tmp_path / "unused")
    try:
        store = RedisTableStore(client)
        await store.create("t1", "v1", chat_key="c1", user_keys=[])
        await aof_written(client)  # (a kill -9 can lose the last 2 s when fsyncs are slow: see tests/aof.py)
        assert not server.revive()  # alive: nothing to do
        url, pid = server.url, server.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while server.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.revive()
        assert server.url == url and server.pid != pid and server.running and not server.reused
        await client.connection_pool.disconnect()
        loaded = await store.load("t1")
        assert loaded is not None and loaded.data == "v1"
    finally:
        await client.aclose()
        server.stop()


async def test_connect_refuses_an_unreachable_redis_at_once(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as info:
        await connect(f"redis://user:hunter2@127.0.0.1:{port}/0", tmp_path / "unused")
    message = str(info.value)
    assert message.startswith(f"cannot reach Redis at redis://user:***@127.0.0.1:{port}/0: ")
    assert "hunter2" not in message and "\n" not in message
    assert time.monotonic() - started < 3
    assert not (tmp_path / "unused").exists()


async def test_connect_gives_clients_short_timeouts(tmp_path: Path, redis_url: str) -> None:
    client, server = await connect(redis_url, tmp_path / "unused")
    try:
        assert server is None
        kwargs = client.get_connection_kwargs()  # the pool's, or (a cluster) every node's
        assert (
            kwargs["socket_timeout"] == kwargs["socket_connect_timeout"] == client_options()["socket_timeout"]
        )
        assert client_options()["socket_timeout"] <= 2.5
    finally:
        await client.aclose()


def test_a_failed_start_is_told_in_one_line(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "data", extra_config={"no-such-directive": "1"})
    with pytest.raises(EmbeddedRedisError) as info:
        server.start()
    message = str(info.value)
    assert "\n" not in message and "Bad directive" in message and "redis.log" in message
