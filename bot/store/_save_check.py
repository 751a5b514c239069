"""A damaged save of the embedded Redis is found before the server loads it, kept aside, and told.

Left to itself, Redis 6.2 loads a cut AOF up to its last whole write and cuts the file there (the game goes
back without a word), starts empty on an emptied AOF (a new game, without a word), and refuses to start on
garbage (and says to run ``redis-check-aof``, a program that is not installed). :func:`check_save` runs
before each start of the embedded server instead:

* the AOF is read write by write (Redis's own protocol: ``*N`` then N ``$len`` strings); it is whole when it
  ends on a write's end outside an open ``MULTI``;
* a size is recorded in ``save.json`` after each check and at each clean stop (:func:`record_save`): an AOF
  that is now shorter or empty lost what was saved, even where what is left reads well;
* a damaged AOF is renamed ``appendonly.aof.damaged-YYYYMMDD-HHMMSS`` (never deleted nor rewritten), and its
  whole writes up to the damage become the new ``appendonly.aof``: the :class:`SaveRepair` says what was
  kept, for the one line that tells the player.

An AOF that begins with an RDB preamble (``REDIS…``; the embedded server is configured never to write one)
cannot be read here: Redis loads it, and if it refuses, :func:`set_aside` keeps it and the server starts
empty (:class:`SaveRepair` with nothing recovered).
"""

from __future__ import annotations

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


def recorded_size(data_dir: Path) -> int:
    """The AOF's size that the last check or clean stop recorded (0 if none)."""
    try:
        value = json.loads((data_dir / SAVE_RECORD_NAME).read_text()).get("aof_bytes", 0)
    except (OSError, ValueError, AttributeError):
        return 0
    return value if isinstance(value, int) and value > 0 else 0


def record_save(data_dir: Path) -> None:
    """Record the AOF's size now (after a check, or once the server stopped and wrote its last writes)."""
    aof = data_dir / AOF_NAME
    size = aof.stat().st_size if aof.is_file() else 0
    record = {"aof_bytes": size, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
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
    recorded = recorded_size(data_dir)
    data = aof.read_bytes() if aof.is_file() else b""
    if data.startswith(b"REDIS"):
        return None  # an RDB preamble: Redis checks it (see the module)
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
