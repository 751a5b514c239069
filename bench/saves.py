"""What checking a save costs at start-up: prints figures, asserts nothing.

    python bench/saves.py [--mb 48]

The embedded Redis's AOF is read write by write before each start (``bot.store._save_check``) so that a
damaged save is kept aside and told instead of silently rolled back. This times that read on an AOF of
``--mb`` megabytes of table-sized writes (Redis rewrites an AOF once it passes 64 MB), and a whole start of
a real embedded server on a smaller one, checked, against the same start with the check skipped.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

from bot.store import EmbeddedRedis
from bot.store._save_check import read_aof

#: One table-sized write: a HSET of a table's JSON (about 2 KB), as the store writes them.
WRITE = b"*4\r\n$4\r\nHSET\r\n$14\r\nmus:t:abcd1234\r\n$4\r\ndata\r\n$2000\r\n" + b"x" * 2000 + b"\r\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=48.0, help="size of the AOF read (MB)")
    args = parser.parse_args()
    data = WRITE * max(1, int(args.mb * 1e6 / len(WRITE)))
    start = time.perf_counter()
    reading = read_aof(data)
    took = time.perf_counter() - start
    assert reading.damage is None
    print(f"read_aof: {len(data) / 1e6:.1f} MB in {took:.2f} s ({len(data) / 1e6 / took:.0f} MB/s)")

    with tempfile.TemporaryDirectory() as folder:
        aof = Path(folder) / "appendonly.aof"
        small = WRITE * 5000  # ~10 MB
        for checked in (True, False):
            aof.write_bytes(small)
            server = EmbeddedRedis(folder)
            if not checked:
                server._spawn_checked = server._spawn  # type: ignore[method-assign]
            begun = time.perf_counter()
            server.start()
            elapsed = time.perf_counter() - begun
            server.stop()
            label = "checked" if checked else "unchecked"
            print(f"embedded start on {len(small) / 1e6:.1f} MB, {label}: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
