"""Each platform's transport deletes a second copy of a message the way its API does (every call checked
against the spec by the fake servers): the message goes, a second delete finds it gone, and a message the
bot may not delete is refused — the delivery then removes its buttons instead."""

from __future__ import annotations

import pytest

from adapters.discord.app import DiscordRuntime
from bot.delivery import MessageGone, Refused, Unreachable
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


async def test_telegram_refusals_that_mean_the_chat_is_out_of_reach(
    tg: FakeTelegram, bot: RunningBot
) -> None:
    """403 from a group the bot was removed from, 400 "not enough rights" (a member forbidden to post: what
    Telegram answers then), and 403 from someone who blocked the bot are ``Unreachable`` — the delivery then
    pauses the chat's table, or invites the player; only the last is remembered as a block."""
    ane = tg.add_user("Ane")
    group, muted = tg.add_group("Mus", members=[ane]), tg.add_group("Muted", members=[ane])
    tg.user_starts_bot(ane)
    transport = bot.sender.transport
    tg.remove_bot_from(group)
    with pytest.raises(Unreachable):
        await transport.send(f"tg:{group.id}", VIEW)
    tg.fail_next(
        "sendMessage", 400, description="Bad Request: not enough rights to send text messages to the chat"
    )
    with pytest.raises(Unreachable):
        await transport.send(f"tg:{muted.id}", VIEW)
    tg.user_blocks_bot(ane)
    with pytest.raises(Unreachable):
        await transport.send(f"tg:{ane.id}", VIEW)
    assert transport.blocked(f"tg:{ane.id}") and not transport.blocked(f"tg:{group.id}")
    tg.user_unblocks_bot(ane)
    await transport.send(f"tg:{ane.id}", VIEW)
    assert not transport.blocked(f"tg:{ane.id}")


async def test_discord_refuses_a_channel_without_send_messages_as_unreachable(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    channel = dc.add_channel(dc.add_guild("Mus club"), "mus")
    runtime = await start_discord_bot(dc, memory_service(FAST))
    discord_bots.append(runtime)
    channel.bot_can_send = False
    with pytest.raises(Unreachable):
        await runtime.sender.transport.send(f"dc:{channel.id}", VIEW)
    assert [(c.method, c.status, c.code) for c in dc.rejected()] == [("POST", 403, 50013)]
