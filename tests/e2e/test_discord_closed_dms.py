"""Closed direct messages told once, whichever worker finds them closed (issue 21, item 9): two workers of
one bot (one shard each, one store), the real discord.py client against the fake Discord.

A person who asked for their cards by DM but whose DMs are closed is told so once, ephemerally: the store's
mark remembers it for every worker and every restart — not for ten minutes in one worker's memory — until
they ask for DMs again.
"""

from __future__ import annotations

from dataclasses import replace

from adapters.discord.app import DiscordRuntime
from bot.app import Service
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.store import MemoryMarks, MemoryOnce

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import FakeDiscord, FakeGuild, FakeUser

TOLD = "I cannot send you direct messages"


def guild_on_shard(dc: FakeDiscord, shard: int, name: str) -> FakeGuild:
    """A server whose interactions Discord sends to ``shard`` of two."""
    while True:
        guild = dc.add_guild(name)
        if (guild.id >> 22) % 2 == shard:
            return guild


def told(dc: FakeDiscord, user: FakeUser) -> int:
    """How many times ``user`` was told that their direct messages are closed."""
    return sum(
        1
        for i in dc.interactions
        if i.user is user
        for m in (i.response, *i.followups)
        if m is not None and m.text.startswith(TOLD)
    )


async def play_alone(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, uxue: FakeUser
) -> DiscordTable:
    """Uxue opens a table in ``guild`` against the machines and looks at her cards (her next interaction
    after the deal, whose DM was refused)."""
    table = await DiscordTable.open(dc, runtime, dc.add_channel(guild, "mus"), [uxue])
    await table.press(uxue, table.lobby_message(), f"{table.table_id}.L.start")
    await dc.wait_for(lambda: table.find_table_message(1), timeout=5.0)
    await table.settle()
    await table.my_cards(uxue, 1)
    return table


async def test_closed_dms_are_told_once_across_workers_until_asked_for_again(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    now = [1_000.0]
    base = memory_service(FAST)
    deps = replace(base.deps, once=MemoryOnce(clock=lambda: now[0]))  # act-once memory: ten minutes
    marks, surfaces = MemoryMarks(), MemorySurfaces()  # (Redis, between real processes)
    first, second = [
        await start_discord_bot(dc, Service(deps), surfaces, marks=marks, shard_count=2, shard_ids=[s])
        for s in (0, 1)
    ]
    discord_bots.extend([first, second])
    here, there = guild_on_shard(dc, 0, "Mus club"), guild_on_shard(dc, 1, "Mus taldea")
    uxue = dc.add_user("Uxue", locale="en-US", guilds=[here, there])
    uxue.dms_open = False
    asked = await DiscordTable(dc, first, first.client.handlers.service, dc.add_channel(here, "x")).slash(
        uxue, "dms", {"on": True}
    )
    assert asked.ephemeral and told(dc, uxue) == 0  # (nobody tried her DMs yet)

    await play_alone(dc, first, here, uxue)  # the first worker finds her DMs closed, and tells her
    assert told(dc, uxue) == 1 and dc.dm_messages(uxue) == []
    now[0] += 3600  # long past what the act-once store remembers
    table = await play_alone(dc, second, there, uxue)  # the second worker finds them closed too
    assert second.client.transport.inner.closed(f"dc:u{uxue.id}")
    await table.my_cards(uxue, 1)
    assert told(dc, uxue) == 1  # once, whichever worker found out

    await table.slash(uxue, "dms", {"on": True})  # she asks again (her DMs still closed): told again
    assert told(dc, uxue) == 2
    await table.my_cards(uxue, 1)
    assert told(dc, uxue) == 2
    assert_interactions_answered(dc)
