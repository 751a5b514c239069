"""Where saved games live: the user's data folder by default, and the ``./data`` older versions used.

Older versions kept the embedded Redis's data in ``./data`` of wherever ``musbot`` ran, so a game saved from
one folder seemed lost from another. The default is now the user's data folder (platformdirs:
``~/.local/share/musbot`` on Linux, ``~/Library/Application Support/musbot`` on macOS,
``%LOCALAPPDATA%\\musbot`` on Windows); ``DATA_DIR`` or ``--data-dir`` still choose another.

A game saved in ``./data`` by an older version is not left behind: :func:`older_save` finds it whenever the
default is in use; while the default holds no save of its own the command uses ``./data`` (and says how to
move it), else it says that ``--data-dir data`` plays the older save.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

__all__ = ["OLDER_DATA_DIR", "default_data_dir", "holds_save", "older_save"]

#: Where versions before the user's data folder kept their data (relative to where ``musbot`` ran).
OLDER_DATA_DIR = Path("data")
_SAVES = ("appendonly.aof", "dump.rdb")


def default_data_dir() -> Path:
    """The user's data folder for musbot (created when first needed, not here)."""
    return platformdirs.user_data_path("musbot", appauthor=False)


def holds_save(data_dir: Path) -> bool:
    """Whether ``data_dir`` holds a saved store (a non-empty AOF or RDB file of the embedded Redis)."""
    for name in _SAVES:
        path = data_dir / name
        try:
            if path.is_file() and path.stat().st_size > 0:
                return True
        except OSError:
            continue
    return False


def older_save(data_dir: Path, *, chosen: bool) -> Path | None:
    """``./data``, if it holds a save that ``data_dir`` (the default) would leave behind; else ``None``.

    ``chosen``: whether ``data_dir`` was chosen (``DATA_DIR``, ``--data-dir``): then nothing is left behind.
    """
    older = OLDER_DATA_DIR.absolute()
    if chosen or not holds_save(older):
        return None
    try:
        if older.samefile(data_dir):
            return None
    except OSError:
        pass
    return older
