"""The table as an embed on Discord (issue 21, item 11): the real discord.py client against the fake Discord,
which checks every embed against Discord's limits and refuses an embed-only post without Embed Links.

The lobby, each hand's table and its count are one embed each — the header line as the title, the rest as
the description, a colour per phase — with the buttons as components under it, edited in place as an embed;
a channel where the bot may not embed pauses its table like one where it may not post at all.
"""

from __future__ import annotations

import asyncio

import pytest

from adapters.discord.app import DiscordRuntime
from adapters.discord.embeds import PHASE_COLOURS
from bot.kernel import TableStatus
from bot.table import FlowSettings
from engine.hand_types import Phase

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, audit_no_card_leaks, start_discord_bot
from .fake_discord import PERMISSION_BITS, FakeChannel, FakeDiscord, FakeGuild, MessageVersion

CANNOT_EMBED = "I cannot post in this channel: I am missing Embed Links."


@pytest.fixture
def guild(dc: FakeDiscord) -> FakeGuild:
    return dc.add_guild("Mus club")


@pytest.fixture
def channel(dc: FakeDiscord, guild: FakeGuild) -> FakeChannel:
    return dc.add_channel(guild, "mus")


def colour(phase: str) -> int:
    return PHASE_COLOURS[phase].value


def embed_of(version: MessageVersion) -> dict[str, object]:
    """The one embed a table message's version shows, and nothing else but its buttons."""
    assert version.content == "" and len(version.embeds) == 1, version
    embed = version.embeds[0]
    assert isinstance(embed, dict)
    return embed


async def test_the_lobby_the_table_and_the_count_are_embeds_coloured_by_phase(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    users = [dc.add_user(name, locale="en-US", guilds=[guild]) for name in ("Ane", "Brais")]
    table = await DiscordTable.open(dc, runtime, channel, users)
    lobby = table.lobby_message()
    shown = embed_of(lobby.versions[-1])
    assert (shown["title"], shown["color"]) == ("🂠 Mus · new table", colour("lobby"))
    assert str(shown["description"]).startswith("Team A: Ane · (free)"), shown
    assert f"{table.table_id}.L.start" in lobby.custom_ids()  # the buttons stay components
    await table.seat_everyone()
    await table.press(users[0], lobby, f"{table.table_id}.L.start")
    assert embed_of(lobby.versions[-1])["color"] == colour("started") and lobby.custom_ids() == []

    await table.play(until=lambda t, m: m is not None and m.hand is not None and m.hand.phase is Phase.GRANDE)
    state, _ = await table.state()
    message = table.find_table_message(state.hand_no)
    assert message is not None
    await table.settle()
    first, now = embed_of(message.versions[0]), embed_of(message.versions[-1])
    assert first["title"] == now["title"] and str(now["title"]).startswith("🂠 Mus · Hand 1 · Game 1 of 3")
    assert now["color"] == colour("grande")
    colours = {embed_of(v)["color"] for v in message.versions}
    assert colours <= {colour("mus"), colour("discard"), colour("grande")}, colours
    assert "Lance: GRANDE" in str(now["description"]) and "'s turn (⏱ <t:" in str(now["description"])
    assert f"{table.table_id}.{state.hand_no}.cards" in message.custom_ids()

    await table.play(until=lambda t, m: t.hand_no >= 2 or t.status is not TableStatus.PLAYING)
    await table.settle()
    count = next(m for m in dc.channel_messages(channel) if m.text.startswith("🂡 Hand 1 · count"))
    assert embed_of(count.versions[-1])["color"] == colour("count")
    assert embed_of(message.versions[-1])["color"] == colour("over")
    # Every message of the table was an embed from its first version to its last; the audit read them all.
    for posted in (lobby, message, count):
        assert all(embed_of(v) for v in posted.versions)
    assert audit_no_card_leaks(dc, table) > 0
    assert_interactions_answered(dc)


async def test_a_channel_that_loses_embed_links_plays_on_with_the_table_as_text(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    """Servers deny Embed Links per channel: a game there (begun by an older version, or the permission taken
    away mid-game) goes on with the table written as text — one refused call, then text until the permission
    may be back. Only a new table is refused without it, saying what is missing."""
    flow = FlowSettings(turn_timeout=1.0, machine_delay=0.02, next_hand_delay=0.05, catch_window=0.5)
    runtime = await start_discord_bot(dc, memory_service(flow), guild_ids=[guild.id])
    discord_bots.append(runtime)
    ane, brais = (dc.add_user(name, locale="en-US", guilds=[guild]) for name in ("Ane", "Brais"))
    table = await DiscordTable.open(dc, runtime, channel, [ane, brais])
    await table.seat_everyone()
    await table.press(ane, table.lobby_message(), f"{table.table_id}.L.start")
    await dc.wait_for(lambda: table.find_table_message(1), timeout=5.0)
    since = len(dc.calls)
    channel.bot_permissions &= ~PERMISSION_BITS["embed_links"]  # an admin takes Embed Links away

    # The table plays on: its messages are written as text from the first refusal on.
    before = (await table.service.deps.tables.load(table.table_id)).version  # type: ignore[union-attr]
    await asyncio.sleep(4 * flow.turn_timeout)
    state, _ = await table.state()
    assert state.paused is None
    assert (await table.service.deps.tables.load(table.table_id)).version > before  # type: ignore[union-attr]
    refused = [c for c in dc.calls[since:] if not c.ok]
    assert len(refused) == 1 and refused[0].code == 50013, refused
    written = [
        c for c in dc.calls[since:] if c.ok and c.method in ("POST", "PATCH") and "/messages" in c.path
    ]
    assert all(not (c.json or {}).get("embeds") for c in written), written
    assert any((c.json or {}).get("content") for c in written), written

    # A new table in the channel is refused, to the asker alone, naming what is missing.
    await table.settle()
    await table.slash(ane, "cancel")
    told = await table.slash(brais, "newgame")
    assert told.ephemeral and told.response is not None and "Embed Links" in told.response.text
    assert dc.rejected() == refused  # the only refusal: the one that turned the table to text
