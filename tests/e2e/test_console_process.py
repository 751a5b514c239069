"""``musbot play`` as a real process: ``python -m adapters.cli play --data-dir TMP`` with stdin piped.

What the unit tests cannot show: the program's own exit codes and stderr (no traceback), a real SIGINT from
outside, and two processes on one data directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from adapters.console import app as console
from adapters.console import saves
from bot.i18n import translator

ROOT = Path(__file__).resolve().parents[2]
EN = translator("en")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATA_DIR", "LOG_LEVEL")}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def command(data_dir: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "adapters.cli",
        "play",
        "--data-dir",
        str(data_dir),
        "--lang",
        "en",
        "--name",
        "Ane",
        *extra,
    ]


def musbot(data_dir: Path, *extra: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``musbot play`` to the end with ``stdin`` piped."""
    return subprocess.run(
        command(data_dir, *extra),
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env=environment(),
        timeout=120,
    )


def clean(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout


class Running:
    """A ``musbot play`` left running at its prompt; its output collected by a thread."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            command(data_dir, *extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=environment(),
        )
        self.chunks: list[bytes] = []
        assert self.process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout.fileno(),), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        while chunk := os.read(fd, 65536):
            self.chunks.append(chunk)

    @property
    def out(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.out:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never came; output:\n{self.out}")
            time.sleep(0.05)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        code = self.process.wait(timeout)
        self._reader.join(5)
        assert self.process.stderr is not None
        return code, self.out, self.process.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_a_scripted_session_of_every_command_ends_cleanly(data_dir: Path) -> None:
    result = musbot(data_dir, stdin="²\n١\nr\nr full\n1\n2 2\n5\n1 2\nd 1\n\nq\n")
    clean(result)
    assert result.returncode == 0
    assert EN.gettext(console.HELP) in result.stdout
    assert "My cards" not in result.stdout
    assert str(data_dir.absolute()) in result.stdout and "musbot play --new" in result.stdout


def test_options_with_a_saved_game_resume_it_and_new_starts_afresh(data_dir: Path) -> None:
    first = musbot(data_dir, "--senas", stdin="q\n")
    clean(first)
    assert first.returncode == 0 and "The game starts!" in first.stdout
    for flags in (["--senas"], ["--target", "30"], ["--single"]):  # each crashed with KeyError
        again = musbot(data_dir, *flags, stdin="q\n")
        clean(again)
        assert again.returncode == 0
        assert EN.gettext(console.RESUMING_NOT_OPTIONS) in again.stdout
    fresh = musbot(data_dir, "--new", "--target", "30", "--single", stdin="y\nq\n")
    clean(fresh)
    assert fresh.returncode == 0 and "The game starts!" in fresh.stdout


def test_new_asks_first_and_a_new_table_cancelled_keeps_the_saved_game(data_dir: Path) -> None:
    first = musbot(data_dir, "--single", stdin="q\n")
    clean(first)
    table_line = next(line for line in first.stdout.splitlines() if line.startswith("🂠 Mus"))
    asked = musbot(data_dir, "--new", stdin="y\n6\n")  # yes, then the new lobby's ✖ Cancel
    clean(asked)
    assert asked.returncode == 0
    assert "Start a new one? The saved game is kept until the new one starts." in asked.stdout
    assert "✖ Cancel" in asked.stdout and EN.gettext(saves.NEW_CANCELLED) in asked.stdout
    kept = musbot(data_dir, stdin="q\n")  # resumed: the same game, not a lobby
    clean(kept)
    assert EN.gettext(console.RESUMING) in kept.stdout and table_line in kept.stdout
    refused = musbot(data_dir, "--new", stdin="")  # no answer (end of input): nothing replaced
    clean(refused)
    assert EN.gettext(saves.KEPT) in refused.stdout and table_line in refused.stdout


def test_a_damaged_save_is_told_in_one_line_and_kept_aside(data_dir: Path) -> None:
    first = musbot(data_dir, "--single", stdin="q\n")
    clean(first)
    aof = data_dir / "appendonly.aof"
    whole = aof.read_bytes()
    aof.write_bytes(whole[:-5])  # cut in the middle of the last write
    cut = musbot(data_dir, stdin="q\n")
    clean(cut)
    [told] = [line for line in cut.stdout.splitlines() if line.startswith("⚠")]
    [aside] = data_dir.glob("appendonly.aof.damaged-*")
    where = data_dir.absolute()
    assert told.startswith(f"⚠ The save in {where} was damaged (it stops in the middle of a write)")
    assert f"of its {len(whole)} bytes, everything before the damage" in told and str(aside) in told
    assert aside.read_bytes() == whole[:-5] and EN.gettext(console.RESUMING) in cut.stdout
    assert "redis-check-aof" not in cut.stdout + cut.stderr

    aof.write_bytes(b"")
    emptied = musbot(data_dir, stdin="q\n")
    clean(emptied)
    assert "was damaged (it is empty): nothing could be recovered, a new game starts" in emptied.stdout
    assert len(list(data_dir.glob("appendonly.aof.damaged-*"))) == 2

    aof.write_bytes(b"\x00 not a save at all")
    garbage = musbot(data_dir, stdin="q\n")
    clean(garbage)
    assert "was damaged (part of it is unreadable)" in garbage.stdout and garbage.returncode == 0


def test_one_sigint_at_the_prompt_leaves_with_130_and_no_traceback(data_dir: Path) -> None:
    running = Running(data_dir, "--single")
    running.wait_for("\n> ")
    running.process.send_signal(signal.SIGINT)
    code, out, err = running.finish()
    assert code == console.INTERRUPTED
    assert "Traceback" not in err, err
    assert str(data_dir.absolute()) in out and "musbot play --new" in out
    resumed = musbot(data_dir, stdin="q\n")  # the game was saved
    clean(resumed)
    assert EN.gettext(console.RESUMING) in resumed.stdout


def test_a_second_terminal_on_the_same_data_directory_exits_with_1(data_dir: Path) -> None:
    first = Running(data_dir)
    try:
        first.wait_for("\n> ")
        second = musbot(data_dir, stdin="1\nq\n")
        clean(second)
        assert second.returncode == 1
        assert "Another terminal" in second.stderr and str(data_dir.absolute()) in second.stderr
        assert second.stdout == ""
    finally:
        assert first.process.stdin is not None
        first.process.stdin.close()  # end of input: it quits
        code, _, err = first.finish()
    assert code == 0 and "Traceback" not in err


def test_auto_with_a_seed_still_plays_a_match(data_dir: Path) -> None:
    result = musbot(data_dir, "--auto", "--seed", "1", "--quiet")
    clean(result)
    assert result.returncode == 0 and result.stdout.startswith("seed 1 ·")
