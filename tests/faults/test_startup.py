"""``musbot run`` / ``musbot play`` as real processes, started with settings or a Redis they cannot use.

Each must say what is wrong in one line per problem (the variable first), with no traceback, and exit with a
non-zero status instead of starting: status 2 for settings, 1 for a Redis that does not answer. The order
of the checks: the settings (all at once), then a token (``musbot run``), then Redis (``adapters/runner.py``).
Nothing here needs a network: the unreachable Redis is a closed local port and no chat platform is contacted.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SETTING_PREFIXES = ("REDIS_", "TELEGRAM_", "DISCORD_")
CORE_SETTINGS = ("DATA_DIR", "LOG_LEVEL", "TURN_TIMEOUT", "MACHINE_DELAY", "NEXT_HAND_DELAY", "CATCH_WINDOW")


def environment(**values: str) -> dict[str, str]:
    """This process's environment without any musbot setting, plus ``values``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(SETTING_PREFIXES) and k not in (*CORE_SETTINGS, "LOBBY_TIMEOUT")
    }
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(values)
    return env


def musbot(cwd: Path, *args: str, **values: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m adapters.cli ARGS`` in ``cwd`` (no ``.env`` there) to its end."""
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=environment(**values),
        timeout=20,
        stdin=subprocess.DEVNULL,
    )


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_an_unreachable_redis_url_stops_musbot_run_with_one_line(tmp_path: Path) -> None:
    url = f"redis://:s3cret@127.0.0.1:{closed_port()}/0"
    started = time.monotonic()
    result = musbot(
        tmp_path,
        "run",
        REDIS_URL=url,
        TELEGRAM_TOKEN="123456:fake-token",  # a token, so that Redis is what stops it
        TELEGRAM_API_BASE_URL=f"http://127.0.0.1:{closed_port()}",  # never reached: Redis comes first
        LOG_LEVEL="INFO",
    )
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr + result.stdout
    [line] = lines(result.stderr)
    assert "cannot reach Redis at redis://:***@127.0.0.1:" in line and "s3cret" not in line
    assert "fake-token" not in result.stderr
    assert time.monotonic() - started < 15


def test_an_unreachable_redis_url_stops_musbot_play_with_one_line(tmp_path: Path) -> None:
    result = musbot(
        tmp_path,
        "play",
        "--auto",
        "--data-dir",
        str(tmp_path / "data"),
        REDIS_URL=f"redis://127.0.0.1:{closed_port()}",
    )
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr + result.stdout
    [line] = lines(result.stderr)
    assert "cannot reach Redis" in line


def test_bad_settings_stop_musbot_run_with_one_line_each(tmp_path: Path) -> None:
    bad = {
        "TURN_TIMEOUT": "inf",
        "MACHINE_DELAY": "nan",
        "NEXT_HAND_DELAY": "-1",
        "CATCH_WINDOW": "soon",
        "LOBBY_TIMEOUT": "1e12",
        "REDIS_URL": "garbage",
        "TELEGRAM_TOKEN": "not a token",
        "TELEGRAM_WEBHOOK_URL": "http://mus.example.org/hook",
        "TELEGRAM_WEBHOOK_PORT": "99999",
        "DISCORD_MIN_INTERVAL": "inf",
    }
    result = musbot(tmp_path, "run", **bad)
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr + result.stdout
    told = lines(result.stderr)
    assert sorted(line.split(":", 1)[0] for line in told) == sorted(bad), told
    assert "TURN_TIMEOUT: must be a finite number of seconds between 1 and 86400" in told
    assert "not a token" not in result.stderr and "garbage" not in result.stderr  # values are never echoed
    assert not (tmp_path / "data").exists()  # nothing was started


def test_bad_settings_stop_musbot_play(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = musbot(tmp_path, "play", TURN_TIMEOUT="nan", DATA_DIR=str(blocker / "data"))
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr + result.stdout
    assert sorted(lines(result.stderr)) == [
        f"DATA_DIR: cannot keep data in {blocker / 'data'}: {blocker} is not a directory",
        "TURN_TIMEOUT: must be a finite number of seconds between 1 and 86400",
    ]


@pytest.mark.parametrize("option", [["--data-dir", "{blocker}/data"], []])
def test_an_unusable_data_dir_stops_musbot_play(tmp_path: Path, option: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    args = [part.format(blocker=blocker) for part in option]
    result = musbot(tmp_path, "play", "--auto", *args, **({} if args else {"DATA_DIR": f"{blocker}/data"}))
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr + result.stdout
    [line] = lines(result.stderr)
    assert line.startswith("--data-dir: " if args else "DATA_DIR: ") and "is not a directory" in line
