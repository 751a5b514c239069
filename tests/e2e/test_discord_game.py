"""End to end on Discord: the real discord.py client against the fake Discord, as members meet the bot.

Every test ends with :func:`assert_clean`: no request refused by the spec or Discord's limits, every
interaction answered once within 3 s, no channel-visible message showing a card.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adapters.discord.app import DiscordRuntime
from bot.model import TableState, TableStatus
from engine.hand import Phase
from engine.match import Match

from .conftest import FAST, memory_service
from .discord_harness import DiscordTable, audit_no_card_leaks, has_card, start_discord_bot
from .fake_discord import FakeChannel, FakeDiscord, FakeGuild

TOKEN = "fake.discord.token"


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    """The fake Discord on 127.0.0.1, discord.py pointed at it (restored after the test)."""
    async with FakeDiscord(token=TOKEN) as fake:
        with fake.point_discord_py():
            yield fake


@pytest.fixture
async def discord_bots(dc: FakeDiscord) -> AsyncIterator[list[DiscordRuntime]]:
    """Clients started by a test; all are stopped (before the fake server) after it."""
    running: list[DiscordRuntime] = []
    yield running
    for runtime in reversed(running):
        await runtime.stop()


@pytest.fixture
def guild(dc: FakeDiscord) -> FakeGuild:
    return dc.add_guild("Mus club", locale="es-ES")


@pytest.fixture
def channel(dc: FakeDiscord, guild: FakeGuild) -> FakeChannel:
    return dc.add_channel(guild, "mus")


def assert_clean(dc: FakeDiscord, table: DiscordTable | None = None) -> None:
    """Nothing refused, every interaction answered once within 3 s, no hidden card where others see it."""
    assert dc.rejected() == [], dc.rejected()
    late = [i for i in dc.interactions if not i.answered or (i.answered_after or 0) > 3.0 or i.late_callbacks]
    assert late == [], late
    if table is not None:
        assert audit_no_card_leaks(dc, table) > 0


async def new_table(
    dc: FakeDiscord, runtime: DiscordRuntime, channel: FakeChannel, guild: FakeGuild, humans: int
) -> DiscordTable:
    users = [dc.add_user(name, locale="es-ES", guilds=[guild]) for name in ("Ane", "Brais", "Iker", "Uxue")]
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel)
    table.players = {seat: users[seat] for seat in range(humans)}
    created = await table.slash(users[0], "newgame")
    assert created.callback_type == 4 and not created.ephemeral
    assert created.response is not None
    ids = created.response.custom_ids()
    table.table_id = ids[0].split(".")[0]
    return table


async def test_commands_are_registered_translated_and_the_lobby_is_the_reply(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    (mus,) = dc.commands(guild)
    assert mus["name"] == "mus"
    subs = {o["name"] for o in mus["options"]}
    assert subs == {"newgame", "leaderboard", "stats", "rules", "language", "cancel", "help"}
    assert mus["description_localizations"]["es-ES"] == "Juega al mus a 8 reyes, por parejas"
    table = await new_table(dc, runtime, channel, guild, humans=1)
    lobby = table.lobby_message()
    assert lobby.id == table.interactions[0].response.id  # type: ignore[union-attr]
    assert "Ane" in lobby.content and any(c.endswith(".L.seat1") for c in lobby.custom_ids())
    # The lobby is then edited in place: a seat press changes the reply itself.
    brais = dc.add_user("Brais", guilds=[guild])
    pressed = await table.press(brais, lobby, f"{table.table_id}.L.seat1")
    assert pressed.callback_type in (4, 6)
    assert "Brais" in lobby.content and len(dc.channel_messages(channel)) == 1
    assert_clean(dc)


async def test_a_whole_hand_by_four_members_from_newgame_to_the_count(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await new_table(dc, runtime, channel, guild, humans=4)
    table.players[3].dms_open = False  # Uxue plays from "My cards" alone
    await table.seat_everyone()
    await table.press(table.players[0], table.lobby_message(), f"{table.table_id}.L.start")
    stored, _ = await table.state()
    assert stored.status is TableStatus.PLAYING

    def mus_then_cut(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
        hand = match.hand
        assert hand is not None
        return "mus" if hand.phase is Phase.MUS and hand.mus_round == 0 and "mus" in codes else None

    await table.play(mus_then_cut, until=lambda t, m: t.hand_no >= 2 or t.status is not TableStatus.PLAYING)
    # The hand's story and its count stayed on the table message.
    first = table.find_table_message(1)
    assert first is not None and any("GRANDE" in v.content.upper() for v in first.versions)
    # Cards went by DM to the three with open DMs, and to Uxue only ephemerally.
    for seat in range(3):
        assert any(has_card(m.content) for m in dc.dm_messages(table.players[seat]))
    assert dc.dm_messages(table.players[3]) == []
    assert any(has_card(m.content) for m in dc.ephemerals(table.players[3]))
    assert_clean(dc, table)
    await asyncio.sleep(0)
