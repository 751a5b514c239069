"""A group that becomes a supergroup keeps its table (issue 21).

First the fake Bot API server: :meth:`FakeTelegram.migrate_to_supergroup` makes the new chat, queues both
service messages (and the bot's membership of the supergroup) as Telegram does, and answers every call that
writes to the old id ``400`` with ``parameters.migrate_to_chat_id`` — edits of the bot's old messages still
pass, as on Telegram (see :mod:`e2e.fake_telegram_migration`). Then the real python-telegram-bot Application
against it: four people play in a basic group, the group is upgraded mid-hand, and the game goes on in the
supergroup with its language and its leaderboard.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
import telegram
from telegram.error import ChatMigrated

from .fake_telegram import ApiSpec, FakeTelegram
from .fake_telegram_migration import ANONYMOUS_ADMIN, UPGRADED

TOKEN = "123:MIGRATE"
JSON = dict[str, Any]


async def post(tg: FakeTelegram, method: str, **params: Any) -> tuple[int, JSON]:
    """A raw Bot API call (form-encoded, as PTB sends them)."""
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    async with aiohttp.ClientSession() as http, http.post(f"{tg.api_url}{method}", data=form) as resp:
        return resp.status, await resp.json()


@pytest.fixture
async def fake() -> Any:
    async with FakeTelegram(token=TOKEN) as server:
        yield server


# ---------------------------------------------------------------------------------------------------------
# The fake server
# ---------------------------------------------------------------------------------------------------------


async def test_an_upgrade_makes_a_supergroup_and_tells_the_bot_twice(fake: FakeTelegram) -> None:
    tg = fake
    ane, brais = tg.add_user("Ane"), tg.add_user("Brais")
    group = tg.add_group("Mus", supergroup=False, members=[ane, brais])
    assert group.type == "group" and -1_000_000_000_000 < group.id < 0
    tg.user_sends(ane, group, "/newgame")
    _, body = await post(tg, "getUpdates")
    offset = body["result"][-1]["update_id"] + 1

    supergroup = tg.migrate_to_supergroup(group, by=brais)
    assert supergroup.type == "supergroup" and str(supergroup.id).startswith("-100")
    assert (supergroup.title, supergroup.members) == ("Mus", group.members)
    assert tg.chats[supergroup.id] is supergroup and tg.chats[group.id] is group  # the old group stays
    _, body = await post(tg, "getUpdates", offset=offset)
    to_old, from_new, membership = body["result"]
    assert to_old["message"]["chat"] == {"id": group.id, "type": "group", "title": "Mus"}
    assert to_old["message"]["migrate_to_chat_id"] == supergroup.id
    assert to_old["message"]["from"]["id"] == brais.id and to_old["message"]["message_id"] == 2
    message = from_new["message"]
    assert message["migrate_from_chat_id"] == group.id and message["message_id"] == 1
    assert message["chat"]["id"] == supergroup.id and message["sender_chat"]["id"] == supergroup.id
    assert message["from"] == ANONYMOUS_ADMIN
    assert membership["my_chat_member"]["chat"]["id"] == supergroup.id
    assert membership["my_chat_member"]["new_chat_member"]["status"] == "member"
    spec = ApiSpec.load()
    for update in tg.updates:
        spec.check(update, ["Update"], "update")
    # Nobody writes in the old group any more; an upgraded group is not upgraded again.
    with pytest.raises(ValueError, match="upgraded"):
        tg.user_sends(ane, group, "/newgame")
    with pytest.raises(ValueError, match="upgraded already"):
        tg.migrate_to_supergroup(group)
    with pytest.raises(ValueError, match="only a basic group"):
        tg.migrate_to_supergroup(supergroup)


async def test_the_old_id_refuses_writes_and_names_the_new_one(fake: FakeTelegram) -> None:
    tg = fake
    group = tg.add_group("Mus", supergroup=False)
    _, body = await post(tg, "sendMessage", chat_id=group.id, text="table")
    old_message = body["result"]["message_id"]
    supergroup = tg.migrate_to_supergroup(group)

    upgraded = {
        "ok": False,
        "error_code": 400,
        "description": UPGRADED,
        "parameters": {"migrate_to_chat_id": supergroup.id},
    }
    assert await post(tg, "sendMessage", chat_id=group.id, text="x") == (400, upgraded)
    assert await post(tg, "sendChatAction", chat_id=group.id, action="typing") == (400, upgraded)
    assert await post(tg, "deleteMessage", chat_id=group.id, message_id=old_message) == (400, upgraded)
    # Edits and reads need no write access: the bot's old messages can still be edited.
    status, _ = await post(tg, "editMessageText", chat_id=group.id, message_id=old_message, text="edited")
    assert status == 200 and tg.messages_in(group)[0].text == "edited"
    status, body = await post(tg, "getChat", chat_id=group.id)
    assert status == 200 and body["result"]["type"] == "group"
    # The supergroup is a chat like any other; its messages are numbered from the service message's.
    status, body = await post(tg, "sendMessage", chat_id=supergroup.id, text="table again")
    assert status == 200 and body["result"]["message_id"] == 2
    assert [c.method for c in tg.rejected()] == ["sendMessage", "sendChatAction", "deleteMessage"]

    async with telegram.Bot(TOKEN, base_url=tg.base_url) as bot:
        with pytest.raises(ChatMigrated) as moved:
            await bot.send_message(group.id, "x")
        assert moved.value.new_chat_id == supergroup.id


async def test_service_messages_follow_allowed_updates_or_never_come(fake: FakeTelegram) -> None:
    tg = fake
    first, second = tg.add_group("A", supergroup=False), tg.add_group("B", supergroup=False)
    tg.migrate_to_supergroup(first)
    _, body = await post(tg, "getUpdates", allowed_updates=["message", "callback_query"])
    assert [sorted(u) for u in body["result"]] == [["message", "update_id"]] * 2  # not my_chat_member
    offset = body["result"][-1]["update_id"] + 1
    # A bot that was away longer than Telegram keeps updates: nothing tells it, but the old id refuses.
    supergroup = tg.migrate_to_supergroup(second, service_messages=False)
    _, body = await post(tg, "getUpdates", offset=offset)
    assert body["result"] == []
    status, body = await post(tg, "sendMessage", chat_id=second.id, text="x")
    assert status == 400 and body["parameters"] == {"migrate_to_chat_id": supergroup.id}
