"""Reading the player's lines without blocking the event loop.

``input()`` blocks the event loop's thread, and with it asyncio's Ctrl-C handling: the first Ctrl-C only
cancels the main task, which cannot notice while ``input()`` waits, so a second Ctrl-C ends in a traceback.
:class:`StdinLines` waits for standard input through the event loop instead, so one Ctrl-C cancels the
wait like any other ``await``; it also drops keys typed ahead while the machines were playing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import Protocol, TextIO

try:  # POSIX only; without termios there is nothing to flush
    import termios
except ImportError:  # pragma: no cover - not on the platforms musbot supports
    termios = None  # type: ignore[assignment]


class LineSource(Protocol):
    """Where the terminal table reads the player's lines (standard input, or a script in the tests)."""

    async def readline(self, prompt: str) -> str | None:
        """Show ``prompt`` and return the next line without its newline; ``None`` at end of input."""
        ...

    def drop_typed_ahead(self) -> None:
        """Forget whatever was typed before the prompt appeared (a no-op when that is not a person)."""
        ...


class StdinLines:
    """Lines from a file descriptor (standard input by default), awaited through the event loop."""

    def __init__(self, out: TextIO = sys.stdout, fd: int | None = None) -> None:
        """Read from ``fd`` (standard input's); prompts are written to ``out``."""
        self.out = out
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._buffer = bytearray()
        self._eof = False

    async def readline(self, prompt: str) -> str | None:
        """Show ``prompt`` and return the next line (``None`` at end of input)."""
        self.out.write(prompt)
        self.out.flush()
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                return line.decode("utf-8", "replace").rstrip("\r")
            if self._eof:
                if not self._buffer:
                    return None
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest.decode("utf-8", "replace")
            chunk = await self._read_chunk()
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True

    async def _read_chunk(self) -> bytes:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        try:
            loop.add_reader(self.fd, readable)
        except (OSError, NotImplementedError, ValueError):
            # A regular file or /dev/null cannot be watched (epoll refuses it), but reading it never blocks.
            return os.read(self.fd, 65536)
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)
        try:
            return os.read(self.fd, 65536)
        except BlockingIOError:  # woken spuriously: nothing yet, try again on the next wait
            return await self._read_chunk()

    def drop_typed_ahead(self) -> None:
        """On a terminal, discard pending input (keys pressed while the machines played)."""
        if termios is None or not os.isatty(self.fd):
            return  # piped or scripted input is meant to be read, all of it
        self._buffer.clear()
        with contextlib.suppress(OSError, termios.error):
            termios.tcflush(self.fd, termios.TCIFLUSH)


class CtrlC:
    """Whether Ctrl-C was pressed since this was made; asyncio's own handling is kept as it was."""

    def __init__(self) -> None:
        self._seen = False
        self._previous = signal.getsignal(signal.SIGINT)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self._seen = True
        if callable(self._previous):
            self._previous(signum, frame)  # asyncio cancels the main task (or, a second time, interrupts)

    def is_set(self) -> bool:
        """Whether Ctrl-C was pressed."""
        return self._seen

    def restore(self) -> None:
        """Put the previous handler back."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._previous)
