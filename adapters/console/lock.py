"""One terminal table per data directory.

The terminal's game lives in one chat (``console:local``) of the store under the data directory: two
terminals on the same directory would both drive that one table and overwrite each other's screens. The
first ``musbot play`` takes an exclusive lock on ``console.lock`` there; another one finds it taken and
stops. The lock is the kernel's (``flock``): it goes away with the process, even a killed one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

LOCK_NAME = "console.lock"


class TableBusy(Exception):
    """Another process holds the terminal table's lock on this data directory."""


class TableLock:
    """An exclusive, non-blocking lock on ``data_dir/console.lock``, held until :meth:`release`."""

    def __init__(self, data_dir: Path) -> None:
        """Lock the terminal table of ``data_dir`` (created if missing); raise :class:`TableBusy` if taken."""
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / LOCK_NAME
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as taken:
            os.close(self._fd)
            self._fd = None
            raise TableBusy(str(self.path)) from taken
        # Who holds it, for a curious reader of the file; the lock itself is the flock, not this text.
        os.ftruncate(self._fd, 0)
        os.write(self._fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Let another terminal play here (closing the descriptor drops the flock)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
