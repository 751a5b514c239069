"""Each platform's transport deletes a second copy of a message the way its API does (every call checked
against the spec by the fake servers): the message goes, a second delete finds it gone, and a message the
bot may not delete is refused — the delivery then removes its buttons instead."""

from __future__ import annotations

import pytest

from adapters.discord.app import DiscordRuntime
from bot.delivery import MessageGone, Refused
from bot.kernel import Button, OutMessage

from .conftest import FAST, RunningBot, memory_service
from .discord_harness import start_discord_bot
from .fake_discord import FakeDiscord
from .fake_telegram import FakeTelegram

VIEW = OutMessage(slot="notice", text="Hand 2", buttons=((Button("Paso", "t0000001.2-0.paso"),),))


async def test_telegram_deletes_a_copy_and_finds_it_gone_after(tg: FakeTelegram, bot: RunningBot) -> None:
    ane = tg.add_user("Ane")
    group = tg.add_group("Mus", members=[ane])
    chat = f"tg:{group.id}"
    transport = bot.sender.transport
    kept = await transport.send(chat, VIEW)
    copy = await transport.send(chat, VIEW)
    await transport.delete(chat, copy)
    assert [str(m.message_id) for m in tg.bot_messages(group)] == [kept]
    with pytest.raises(MessageGone):
        await transport.delete(chat, copy)
    theirs = tg.user_sends(ane, group, "hola")  # the bot is no admin: not its to delete
    with pytest.raises(Refused):
        await transport.delete(chat, str(theirs.message_id))
    # Only the two deletes refused on purpose (a spec violation would be a 400 of another kind).
    refused = [(c.method, (c.response or {}).get("description")) for c in tg.rejected()]
    assert refused == [
        ("deleteMessage", "Bad Request: message to delete not found"),
        ("deleteMessage", "Bad Request: message can't be deleted"),
    ], refused


async def test_discord_deletes_a_copy_and_finds_it_gone_after(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    channel = dc.add_channel(dc.add_guild("Mus club"), "mus")
    runtime = await start_discord_bot(dc, memory_service(FAST))
    discord_bots.append(runtime)
    chat = f"dc:{channel.id}"
    transport = runtime.sender.transport
    kept = await transport.send(chat, VIEW)
    copy = await transport.send(chat, VIEW)
    await transport.delete(chat, copy)
    assert [str(m.id) for m in dc.channel_messages(channel)] == [kept]
    with pytest.raises(MessageGone):
        await transport.delete(chat, copy)
    # Only the delete refused on purpose: Unknown Message (a spec violation would be a 400).
    assert [(c.method, c.status, c.code) for c in dc.rejected()] == [("DELETE", 404, 10008)]
