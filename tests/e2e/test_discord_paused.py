"""A channel that becomes unwritable mid-game (issue 21, item 6): the real discord.py client against the fake
Discord, which refuses a post without permission (403 50013 Missing Permissions) and reports the bot's
permissions in the channel with every interaction (``app_permissions``), as Discord does.

The table is paused (no deadline fires, nothing more is posted), the last presser is told at once by an
ephemeral follow-up, the players at their next press what permission the bot lacks, and once it is given
back, a press resumes the table where it was.
"""

from __future__ import annotations

import asyncio

import pytest

from adapters.discord.app import DiscordRuntime
from bot.app._drawn import RESUMED
from bot.kernel import TableStatus
from bot.table import FlowSettings

from .conftest import memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import FakeChannel, FakeDiscord, FakeGuild

#: A turn runs out after a second: a deadline that fired during the pause would show.
FLOW = FlowSettings(turn_timeout=1.0, machine_delay=0.02, next_hand_delay=0.05, catch_window=0.5)
CANNOT_POST = "I cannot post in this channel: I am missing Send Messages."


@pytest.fixture
def guild(dc: FakeDiscord) -> FakeGuild:
    return dc.add_guild("Mus club")


@pytest.fixture
def channel(dc: FakeDiscord, guild: FakeGuild) -> FakeChannel:
    return dc.add_channel(guild, "mus")


async def two_players(
    dc: FakeDiscord, runtime: DiscordRuntime, channel: FakeChannel, guild: FakeGuild
) -> DiscordTable:
    """Ane and Brais (seats 0 and 1) and two machines, playing a single game in English."""
    ane, brais = (dc.add_user(name, locale="en-US", guilds=[guild]) for name in ("Ane", "Brais"))
    table = await DiscordTable.open(dc, runtime, channel, [ane, brais])
    await table.seat_everyone()
    lobby = table.lobby_message()
    await table.press(ane, lobby, f"{table.table_id}.L.start")
    return table


async def at_turn_of(table: DiscordTable, seat: int) -> None:
    for _ in range(500):
        _, match = await table.state()
        if match is not None and match.hand is not None and match.hand.turn == seat:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"seat {seat} never got the turn")


async def paused_version(table: DiscordTable) -> int:
    for _ in range(500):
        stored = await table.service.deps.tables.load(table.table_id)
        if stored is not None and (await table.state())[0].paused is not None:
            return stored.version
        await asyncio.sleep(0.01)
    raise AssertionError("the table was never paused")


async def test_a_channel_that_refuses_posts_mid_game_pauses_the_table_until_permission_is_back(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FLOW), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await two_players(dc, runtime, channel, guild)
    await at_turn_of(table, 0)
    state, match = await table.state()
    assert match is not None and match.hand is not None
    hand_no, log = state.hand_no, list(match.hand.log)
    since = len(dc.calls)

    channel.bot_can_send = False  # an admin takes Send Messages away from the bot in #mus
    version = await paused_version(table)  # Ane's turn ran out: its notice was refused (50013)
    refused = [c for c in dc.calls[since:] if not c.ok]
    assert refused and all(c.code == 50013 for c in refused), refused

    # Ane pressed last (Start): she is told at once, by an ephemeral follow-up of that press.
    def told_now() -> list[tuple[str, str, bool]]:
        return [
            (i.user.name, m.text, m.ephemeral)
            for i in dc.interactions
            for m in i.followups
            if m.text.startswith("I can no longer post in this channel")
        ]

    assert await dc.wait_for(told_now, timeout=5.0)
    assert [(who, ephemeral) for who, _, ephemeral in told_now()] == [("Ane", True)]
    await table.settle()
    quiet_since = len(dc.calls)
    await asyncio.sleep(3 * FLOW.turn_timeout)
    assert [c for c in dc.calls[quiet_since:] if str(channel.id) in c.path] == []  # nothing retried
    stored = await table.service.deps.tables.load(table.table_id)
    assert stored is not None and stored.version == version  # no deadline fired

    # Brais presses the table: told, to him alone, what the bot lacks; nothing is played.
    message = table.find_table_message(hand_no)
    assert message is not None
    told = await table.press(table.players[1], message, f"{table.table_id}.{hand_no}.cards")
    answer = told.response if told.response is not None else told.followups[-1]
    assert answer.ephemeral and answer.text.startswith(CANNOT_POST), answer.text

    # The permission comes back: the next press resumes the table where it was, posted afresh.
    channel.bot_can_send = True
    await table.press(table.players[1], message, f"{table.table_id}.{hand_no}.cards")
    await dc.wait_for(lambda: any(m.text == RESUMED for m in dc.channel_messages(channel)), timeout=5.0)
    await table.settle()
    state, match = await table.state()
    assert state.paused is None and state.status is TableStatus.PLAYING
    assert match is not None and match.hand is not None
    assert match.hand.log[: len(log) + 1][: len(log)] == log  # the hand where it was (a move may follow)
    posted = dc.channel_messages(channel)
    resumed_at = next(i for i, m in enumerate(posted) if m.text == RESUMED)
    assert [m for m in posted[resumed_at:] if f"{table.table_id}.{hand_no}.cards" in m.custom_ids()]
    assert dc.rejected() == refused  # the only refusals: the ones that paused it


async def test_a_press_where_the_bot_may_not_post_pauses_the_table_at_once(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    """No post needed to find out: the press carries the bot's permissions, and says what is missing."""
    flow = FlowSettings(turn_timeout=3600, machine_delay=0, next_hand_delay=0)
    runtime = await start_discord_bot(dc, memory_service(flow), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await two_players(dc, runtime, channel, guild)
    await at_turn_of(table, 0)
    hand_no = (await table.state())[0].hand_no
    message = table.find_table_message(hand_no)
    assert message is not None
    turn = next(c for c in message.custom_ids() if "-" in c.split(".")[1])
    channel.bot_can_send = False
    since = len(dc.calls)
    told = await table.press(table.players[0], message, turn)
    answer = told.response if told.response is not None else told.followups[-1]
    assert answer.ephemeral and answer.text.startswith(CANNOT_POST), answer.text
    state, _ = await table.state()
    assert state.paused is not None and state.seats[0].timeouts == 0
    assert [c for c in dc.calls[since:] if not c.ok] == []  # no post was even tried

    again = await table.slash(table.players[1], "newgame")  # /mus newgame there: told the same
    assert again.ephemeral and again.response is not None
    assert again.response.text.startswith(CANNOT_POST), again.response.text
