""" "🃏 Table" on Discord (issue 22, "Who is who"): the real discord.py client against the fake Discord, which
checks every component against Discord's spec.

The table message carries "🃏 Table" only when the web table is served at a public address (``WEB_SECRET``
and ``WEB_PUBLIC_URL``). Its press goes through the core like every button and is answered **ephemerally**
with a link button to the presser's own signed link (a player's seat, a spectator's public table), which
the web adapter accepts for that person and that table alone; the link is never posted in the channel,
never sent by direct message and never logged. A stale, foreign or forged press is refused and gets no
link.
"""

from __future__ import annotations

import logging
import time

import pytest

from adapters.discord.app import DiscordRuntime
from adapters.discord.web_links import open_door
from bot.kernel import LinkRefused, WebAccess, WebLinks, check_link

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import FakeChannel, FakeDiscord, FakeGuild, FakeInteraction, FakeUser, StoredMessage

PUBLIC = "https://mus.example.org"
SECRET = b"discord-link-secret-0123456789ab"


@pytest.fixture
def guild(dc: FakeDiscord) -> FakeGuild:
    return dc.add_guild("Mus club", locale="en-US")


@pytest.fixture
def channel(dc: FakeDiscord, guild: FakeGuild) -> FakeChannel:
    return dc.add_channel(guild, "mus")


async def started(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel, *, web: bool
) -> DiscordTable:
    """Four members at a started table, on a bot whose core serves a web table (``web``) or none."""
    service = memory_service(FAST)
    service.deps.web = WebAccess(WebLinks(PUBLIC, SECRET, 12.0)) if web else None
    open_door(service.deps.web)  # as musbot run does, whichever platforms a worker serves
    runtime = await start_discord_bot(dc, service, guild_ids=[guild.id])
    discord_bots.append(runtime)
    users = [dc.add_user(name, locale="en-US", guilds=[guild]) for name in ("Ane", "Brais", "Iker", "Uxue")]
    table = await DiscordTable.open(dc, runtime, channel, users)
    await table.seat_everyone()
    await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.start")
    return table


def link_buttons(message: StoredMessage | None) -> list[dict[str, object]]:
    """The link buttons (style 5) a message shows."""
    assert message is not None
    found: list[dict[str, object]] = []

    def walk(items: object) -> None:
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                if item.get("type") == 2 and item.get("style") == 5:
                    found.append(item)
                walk(item.get("components"))

    walk(message.components)
    return found


def credential_of(interaction: FakeInteraction) -> str:
    """The signed credential in the link an answer shows (``…/t/<table>#k=<credential>``)."""
    assert interaction.ephemeral and interaction.response is not None, interaction
    (button,) = link_buttons(interaction.response)
    url = str(button["url"])
    assert url.startswith(f"{PUBLIC}/t/") and "#k=" in url, url
    return url.split("#k=", 1)[1]


async def press_table(table: DiscordTable, user: FakeUser, hand_no: int = 1) -> FakeInteraction:
    message = table.find_table_message(hand_no)
    assert message is not None
    return await table.press(user, message, f"{table.table_id}.{hand_no}.web")


async def test_the_table_button_answers_each_presser_alone_with_their_own_link(
    dc: FakeDiscord,
    discord_bots: list[DiscordRuntime],
    guild: FakeGuild,
    channel: FakeChannel,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    table = await started(dc, discord_bots, guild, channel, web=True)
    message = table.find_table_message(1)
    assert message is not None
    assert ("🃏 Table", f"{table.table_id}.1.web") in [(label, cid) for label, cid, _ in message.buttons()]
    ane, zuri = table.players[0], dc.add_user("Zuri", locale="en-US", guilds=[guild])
    seated = await press_table(table, ane)
    watching = await press_table(table, zuri)
    assert seated.response is not None and "keep it to yourself" in seated.response.content
    assert watching.response is not None and "watch this table" in watching.response.content
    now = time.time()
    mine, theirs = credential_of(seated), credential_of(watching)
    visitor = check_link(SECRET, mine, table.table_id, now)
    assert visitor.user.key == f"dc:u{ane.id}" and visitor.expires > now + 11 * 3600
    assert check_link(SECRET, theirs, table.table_id, now).user.key == f"dc:u{zuri.id}"
    with pytest.raises(LinkRefused):
        check_link(SECRET, mine, "zzzzzzzz", now)  # for that table only
    # Never where others see it, never by DM, never in the log.
    shown = [m.content + str(m.components) for m in dc.channel_messages(channel)]
    shown += [m.content + str(m.components) for user in table.players.values() for m in dc.dm_messages(user)]
    assert not any(mine in s or theirs in s or "#k=" in s for s in shown)
    assert mine not in caplog.text and theirs not in caplog.text and "#k=" not in caplog.text
    assert_interactions_answered(dc)


async def test_a_stale_a_foreign_and_a_forged_table_button_get_no_link(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    table = await started(dc, discord_bots, guild, channel, web=True)
    message = table.find_table_message(1)
    assert message is not None
    ane = table.players[0]
    elsewhere = dc.add_channel(guild, "elsewhere")
    other = await DiscordTable.open(dc, table.bot, elsewhere, [dc.add_user("Olatz", guilds=[guild])])
    refused = [
        await table.press(ane, message, f"{table.table_id}.7.web"),  # a hand this table has not dealt
        await table.press(ane, message, f"{table.table_id}.L.web"),  # not a stamp this button carries
        await other.press(ane, other.lobby_message(), f"{table.table_id}.1.web"),  # another channel's table
        await table.press(ane, message, "zzzzzzzz.1.web"),  # no such table
    ]
    for interaction in refused:
        assert interaction.ephemeral and interaction.response is not None, interaction
        assert link_buttons(interaction.response) == [] and "#k=" not in str(interaction.response.components)
    assert_interactions_answered(dc)


async def test_without_a_public_web_table_there_is_no_table_button(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    table = await started(dc, discord_bots, guild, channel, web=False)
    message = table.find_table_message(1)
    assert message is not None
    assert not any(cid.endswith(".web") for cid in message.custom_ids())
    forged = await table.press(table.players[0], message, f"{table.table_id}.1.web")
    assert forged.ephemeral and forged.response is not None and link_buttons(forged.response) == []
    assert_interactions_answered(dc)
