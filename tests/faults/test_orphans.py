"""The embedded Redis does not outlive the ``musbot`` that started it, unless another live one uses it.

``musbot play`` is run as a real process on a temporary data directory and ended by a signal (SIGTERM, or
``kill -9``; a normal exit is every other test's). The ``redis-server`` processes serving the directory are
found by their working directory (:mod:`.redis_processes`), whatever any pidfile says. A server a test may
leave behind when it fails is killed at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store._embedded import PID_NAME, STATE_NAME, EmbeddedRedis

from .redis_processes import kill_all, redis_servers_in, wait_until


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATA_DIR", "LOG_LEVEL")}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "data"
    yield where
    kill_all(redis_servers_in(where))  # only what a failed test left in its own directory


def start_play(data_dir: Path) -> subprocess.Popen[bytes]:
    """``musbot play`` waiting at its prompt (stdin kept open), once its server answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "play", "--data-dir", str(data_dir), "--lang", "en"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=data_dir.parent,
        env=environment(),
    )
    assert wait_until(lambda: (data_dir / STATE_NAME).exists() and redis_servers_in(data_dir), 15)
    return process


def play_auto(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", "play", "--auto", "--quiet", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        cwd=data_dir.parent,
        env=environment(),
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_musbot_play_leaves_no_redis_server_when_killed(data_dir: Path, how: str) -> None:
    play = start_play(data_dir)
    [server] = redis_servers_in(data_dir)
    pidfile = data_dir / PID_NAME
    recorded = pidfile.read_text().strip() if pidfile.exists() else None
    state = json.loads((data_dir / STATE_NAME).read_text())
    play.send_signal(getattr(signal, how))
    play.wait(timeout=15)
    assert play.stderr is not None and b"Traceback" not in play.stderr.read()
    assert wait_until(lambda: not redis_servers_in(data_dir), 5), f"redis-server left running after {how}"

    again = play_auto(data_dir)  # the next start and stop: it starts its own server, and stops it
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    assert redis_servers_in(data_dir) == set()
    assert recorded == str(server)  # the server's own pidfile, while it ran
    assert state["pid"] == server and state["owner"] == play.pid  # and who had to stop it


_OWNER = textwrap.dedent(
    """
    import sys, time
    from bot.store._embedded import EmbeddedRedis
    EmbeddedRedis(sys.argv[1]).start()
    print("ready", flush=True)
    time.sleep(120)
    """
)


def test_a_process_that_reused_the_server_carries_on_when_its_owner_is_killed(data_dir: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER, str(data_dir)], stdout=subprocess.PIPE, env=environment()
    )
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == b"ready"
        user = EmbeddedRedis(data_dir).start()
        assert user.reused and user.pid in redis_servers_in(data_dir)
        first = user.pid
        owner.kill()  # kill -9: its server goes with it ...
        owner.wait()
        assert wait_until(lambda: not user.alive(), 5)
        assert user.revive()  # ... and the process still using it starts it again (what the watchdog does)
        assert not user.reused and user.pid != first and redis_servers_in(data_dir) == {user.pid}
        user.stop()  # now its owner: it stops it
        assert redis_servers_in(data_dir) == set()
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


def test_a_server_whose_owner_is_gone_is_stopped_by_the_next_start(data_dir: Path) -> None:
    # Where the parent-death signal is not available (or a server left by an older version), a killed
    # owner's server keeps running: the state file names an owner that is not alive any more.
    left = EmbeddedRedis(data_dir).start()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    state = json.loads((data_dir / STATE_NAME).read_text())
    state.update(owner=int(dead.stdout), owner_start=None)
    (data_dir / STATE_NAME).write_text(json.dumps(state))
    try:
        fresh = EmbeddedRedis(data_dir).start()
        assert not fresh.reused and fresh.pid != left.pid
        assert wait_until(lambda: not left.alive(), 5) and redis_servers_in(data_dir) == {fresh.pid}
        fresh.stop()
        assert redis_servers_in(data_dir) == set()
    finally:
        left.stop()
