"""The command line and the run of the adapter benchmarks (bench/telegram.py, bench/discord.py): hands per
phase (throughput, production pacing, solo, and the benchmark's own), a seed, and the phases run in order."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Awaitable, Callable, Sequence

PhaseRun = Callable[[int, int], Awaitable[None]]
"""A phase: played for a number of hands with a seed, it prints its figures."""


def parse_phases(
    description: str, *, solo_default: int, solo_help: str, more: Sequence[tuple[str, int, str]] = ()
) -> argparse.Namespace:
    """``--hands``, ``--paced-hands``, ``--solo-hands`` (``solo_default``), the benchmark's ``more`` (flag,
    default, help), ``--seed``, parsed; warnings and errors logged."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--hands", type=int, default=20, help="hands in the throughput phase (default 20)")
    parser.add_argument("--paced-hands", type=int, default=1, help="hands with production pacing (default 1)")
    parser.add_argument("--solo-hands", type=int, default=solo_default, help=solo_help)
    for flag, default, text in more:
        parser.add_argument(flag, type=int, default=default, help=text)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return args


async def run_phases(header: str, phases: Sequence[tuple[int, PhaseRun]], seed: int) -> None:
    """Print ``header``, then play each phase that has hands to play, in order."""
    print(header)
    for hands, phase in phases:
        if hands > 0:
            await phase(hands, seed)
