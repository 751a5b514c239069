"""Discord start-up and readiness benchmark: what syncing on demand saves, how fast an outage is seen.

    python bench/discord_start.py [--starts N] [--outages N]

The production client (``adapters.discord.app.start_client``) against the fake Discord of the end-to-end
tests, on an in-process service, its commands' marks shared by every start (as Redis shares them between
workers and restarts):

1. **Starts** (``--starts``, default 5 of each): a first start (no mark: the commands are synced), a restart
   of the same version (the mark matches: no sync) and a start of a changed version (each start a new one:
   each syncs): REST calls per start, command syncs, and the time from ``start_client`` to ready (p50, max).
2. **Outages** (``--outages``, default 3): a shard's connection cut with the gateway refusing new ones for
   1 s, then let in again: how long readiness took to turn false after the cut, and true after the gateway
   came back (discord.py's backoff decides most of the second).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from discord import app_commands

from adapters.discord.app import DiscordRuntime, MusClient
from bench.machine import about_machine
from bot.store import MemoryMarks
from tests.e2e.conftest import FAST, memory_service
from tests.e2e.discord_harness import QuickStartClient, start_discord_bot
from tests.e2e.fake_discord import FakeDiscord

TOKEN = "bench.discord.start-token"
COMMANDS = "/applications/{application_id}/guilds/{guild_id}/commands"


class ChangedClient(QuickStartClient):
    """Another version of the bot: one more sub-command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        group = self.tree.get_command("mus")
        assert isinstance(group, app_commands.Group)

        async def ping(interaction: Any) -> None:
            await interaction.response.send_message("pong", ephemeral=True)

        group.add_command(app_commands.Command(name=f"ping{id(self) % 1000}", description="?", callback=ping))


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> float:
    """Seconds until ``check()`` holds (polled every 10 ms)."""
    started = time.perf_counter()
    while not await check():
        if time.perf_counter() - started > timeout:
            raise TimeoutError
        await asyncio.sleep(0.01)
    return time.perf_counter() - started


async def starts(dc: FakeDiscord, guild_id: int, n: int) -> None:
    """Phase 1 (see the module docstring)."""
    marks = MemoryMarks()
    service = memory_service(FAST)
    kinds: list[tuple[str, type[MusClient], bool]] = [
        ("first start (no mark)", QuickStartClient, True),
        ("restart, same version", QuickStartClient, False),
        ("start of a new version", ChangedClient, False),
    ]
    print(f"phase 1 — starts: {n} of each, one guild's commands, marks shared by every start")
    for label, client_class, fresh in kinds:
        seconds: list[float] = []
        calls: list[int] = []
        syncs = 0
        for _ in range(n):
            if fresh:
                marks = MemoryMarks()
            before, synced = len(dc.calls), len(dc.find_calls("PUT", COMMANDS, ok=True))
            started = time.perf_counter()
            runtime = await start_discord_bot(
                dc, service, marks=marks, client_class=client_class, guild_ids=[guild_id]
            )
            seconds.append(time.perf_counter() - started)
            await runtime.stop()
            calls.append(len(dc.calls) - before)
            syncs += len(dc.find_calls("PUT", COMMANDS, ok=True)) - synced
        print(
            f"  {label:28} REST calls per start {statistics.mean(calls):4.1f} · command syncs {syncs}/{n} · "
            f"to ready p50 {1000 * statistics.median(seconds):6.1f} ms, max {1000 * max(seconds):6.1f} ms"
        )


async def outages(dc: FakeDiscord, n: int) -> None:
    """Phase 2 (see the module docstring)."""
    runtime: DiscordRuntime = await start_discord_bot(dc, memory_service(FAST))
    down: list[float] = []
    back: list[float] = []
    try:
        for _ in range(n):
            (session,) = dc.live_sessions()
            await dc.drop_shard(session)
            down.append(await until(lambda: _not(runtime.ready)))
            await asyncio.sleep(1.0)
            dc.gateway_down = False
            back.append(await until(runtime.ready))
    finally:
        await runtime.stop()
    print(f"phase 2 — outages: {n} cuts of the only shard, the gateway refusing connections for 1 s")
    print(
        f"  readiness false after the cut: p50 {1000 * statistics.median(down):.1f} ms, "
        f"max {1000 * max(down):.1f} ms"
    )
    print(
        f"  readiness true after the gateway is back: p50 {statistics.median(back):.2f} s, "
        f"max {max(back):.2f} s (discord.py's reconnect backoff)"
    )


async def _not(check: Callable[[], Awaitable[bool]]) -> bool:
    return not await check()


async def main(args: argparse.Namespace) -> None:
    """Both phases against one fake Discord."""
    async with FakeDiscord(token=TOKEN) as dc:
        with dc.point_discord_py():
            guild = dc.add_guild("Mus bench")
            await starts(dc, guild.id, args.starts)
            await outages(dc, args.outages)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--outages", type=int, default=3)
    logging.basicConfig(level=logging.CRITICAL)
    print(about_machine())
    asyncio.run(main(parser.parse_args()))
