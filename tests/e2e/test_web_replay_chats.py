"""``/history``'s replay address as a chat meets it, end to end on the fake Discord (the strictest text limit
of the platforms, 2,000 characters): in the channel's answer, whole, in the language the server reads, and
a link the web table accepts for that match's replay only."""

from __future__ import annotations

import re

from adapters.discord.app import DiscordRuntime
from adapters.discord.ids import channel_key, user_key
from bot.kernel import ChatRef, LinkRefused, UserRef, WebAccess, WebLinks, check_link, replay_place

from .conftest import FAST, memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import FakeDiscord

SECRET = b"replay-in-the-chats-0123456789abcdef"
#: A long public address, as behind a proxy with a path of its own.
BASE = "https://mus-table.an-association-with-a-long-name.example.org/mus"


async def test_history_in_a_channel_carries_the_whole_replay_address(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST))
    discord_bots.append(runtime)
    service = runtime.client.handlers.service
    service.deps.web = WebAccess(WebLinks(BASE, SECRET, hours=12))
    guild = dc.add_guild("Mus club", locale="fr", community=True)
    channel = dc.add_channel(guild, "a-channel-whose-name-is-as-long-as-discord-allows-" + "x" * 50)
    ane = dc.add_user("Ane", locale="en-US", guilds=[guild])
    chat = ChatRef(channel_key(channel.id), title=channel.name)
    played = await service.new_machine_table(chat, UserRef(user_key(ane.id), "Ane", "en"), senas=True)
    assert played.ok and played.table is not None
    shown = await DiscordTable(dc, runtime, service, channel).slash(ane, "history")
    reply = shown.response
    assert reply is not None and not shown.ephemeral  # the channel's answer, for everyone in it
    (address,) = re.findall(rf"{re.escape(BASE)}/r/\S+", reply.content)
    link = address.split("#k=")[1]
    visitor = check_link(SECRET, link, replay_place(played.table), service.deps.clock())
    assert visitor.user.key == chat.key and visitor.user.lang == "fr"  # the channel's, not Ane's
    assert "Revois la partie donne par donne" in reply.content
    for elsewhere in (played.table, replay_place("other123")):
        try:
            check_link(SECRET, link, elsewhere, service.deps.clock())
        except LinkRefused:
            continue
        raise AssertionError(f"a replay's link opened {elsewhere}")
