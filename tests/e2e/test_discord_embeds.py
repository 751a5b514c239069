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
from bot.app._drawn import RESUMED
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


async def test_a_channel_without_embed_links_pauses_the_table_until_it_is_given_back(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
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

    # The next move's table (an embed only) is refused: the table is paused, nothing played meanwhile.
    for _ in range(500):
        if (await table.state())[0].paused is not None:
            break
        await asyncio.sleep(0.01)
    refused = [c for c in dc.calls[since:] if not c.ok]
    assert refused and all(c.code == 50013 for c in refused), refused
    await table.settle()
    frozen = (await table.service.deps.tables.load(table.table_id)).version  # type: ignore[union-attr]
    await asyncio.sleep(3 * flow.turn_timeout)
    assert (await table.service.deps.tables.load(table.table_id)).version == frozen  # type: ignore[union-attr]

    # A command says, to the asker alone, what the bot lacks; given back, the next one resumes the table.
    told = await table.slash(brais, "newgame")
    assert told.ephemeral and told.response is not None and told.response.text.startswith(CANNOT_EMBED)
    channel.bot_permissions |= PERMISSION_BITS["embed_links"]
    await table.slash(brais, "newgame")  # (as the refusal says: a press, or /mus newgame)
    await dc.wait_for(lambda: any(m.text == RESUMED for m in dc.channel_messages(channel)), timeout=5.0)
    await table.settle()
    state, match = await table.state()
    assert state.paused is None and state.status is TableStatus.PLAYING and match is not None
    assert table.find_table_message(state.hand_no) is not None
    assert dc.rejected() == refused  # the only refusals: the ones that paused it
