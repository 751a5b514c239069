"""``musbot play`` on a real terminal (a pseudo-terminal of 80x24): the full-screen table opens, a key starts
the game, the machines' moves and the player's buttons come, ``q`` leaves with the game saved; the same
command with ``--plain`` keeps the line mode on that very terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.console import app as console
from bot.i18n import translator
from tests.e2e.test_console_process import ROOT, command, environment

EN = translator("en")
_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x1b\][^\x07]*\x07")


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pseudo-terminal (standard
    input), as a shell gives a program it starts."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """A process on a pseudo-terminal of 80 columns by 24 rows: keys in, the screen's text out (Textual
    draws on standard error, which a terminal shows as it shows standard output)."""

    def __init__(self, args: list[str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = environment() | {"TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
        self.process = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env, preexec_fn=_own_terminal
        )
        os.close(slave)
        self.seen = ""

    def read_until(self, text: str, timeout: float = 60.0) -> str:
        """Everything shown (escape sequences removed) until ``text`` appears."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared; the screen showed:\n{self.seen[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process ended and closed its end
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"the process ended before {text!r}:\n{self.seen[-3000:]}")
                self.seen += _ESCAPES.sub(" ", chunk.decode("utf-8", "replace"))
        return self.seen

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self, timeout: float = 30.0) -> int:
        """Wait for the process to end, reading what it writes meanwhile."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.seen += _ESCAPES.sub(" ", os.read(self.master, 65536).decode("utf-8", "replace"))
                except OSError:
                    break
        code = self.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        self.close()
        return code

    def close(self) -> None:
        """Hang up (closing the terminal, as a window closed): a process still running is stopped."""
        if self.master >= 0:
            os.close(self.master)
            self.master = -1
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    """Terminals opened by a test; each one hung up after it, pass or fail (no process outlives a test)."""
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def test_on_a_terminal_the_full_screen_opens_plays_and_quits_saved(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    terminal = Terminal(command(tmp_path, "--pace", "0.05"))
    terminals.append(terminal)
    terminal.read_until("q quit")  # the keys, at the bottom of the first screen
    terminal.read_until("Start")
    terminal.press("5")  # ▶ Start (the fifth of the solo lobby's buttons)
    terminal.read_until("Hand 1")
    terminal.read_until("Mus")  # the player's first decision: Mus / No hay mus
    terminal.press("q")
    assert terminal.finish() == 0
    assert "Traceback" not in terminal.seen
    saved = EN.format(console.SAVED, where=str(tmp_path.absolute()))
    assert saved.split(":")[0] in terminal.seen.replace("\r\n", " ").replace("\n", " ").replace("  ", " ")


def test_plain_keeps_the_line_mode_on_a_terminal(tmp_path: Path, terminals: list[Terminal]) -> None:
    terminal = Terminal(command(tmp_path, "--plain"))
    terminals.append(terminal)
    terminal.read_until("[5]")  # numbered buttons, printed as lines
    terminal.read_until("> ")
    terminal.press("q\n")
    assert terminal.finish() == 0
    assert "1–9 press a button" not in terminal.seen
