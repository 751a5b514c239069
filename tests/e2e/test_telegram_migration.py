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
import re
from typing import Any

import aiohttp
import pytest
import telegram
from telegram.error import ChatMigrated

from bot.app._chat_commands import LEADERBOARD_TITLE
from bot.i18n import translator
from bot.kernel import TableState, TableStatus
from engine.hand_types import Phase
from engine.match import Match

from .conftest import RunningBot, Table, assert_clean, assert_one_live_keyboard_per_slot
from .fake_telegram import ApiSpec, Call, FakeTelegram
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


# ---------------------------------------------------------------------------------------------------------
# The bot: python-telegram-bot against the fake server
# ---------------------------------------------------------------------------------------------------------

NAMES = ("Ane", "Brais", "Camille", "Dani")


def upgraded(call: Call) -> bool:
    """A call Telegram refused because its group became a supergroup."""
    return call.description == UPGRADED


async def table_in_a_basic_group(
    tg: FakeTelegram, bot: RunningBot, *, lang: str, options: tuple[str, ...]
) -> Table:
    """Four people in a basic group, its language chosen, a game started (``options``: lobby codes)."""
    group = tg.add_group("Mus", supergroup=False)
    players = {seat: tg.add_user(NAMES[seat], language_code="es") for seat in range(4)}
    table = Table(tg, bot, group, players=players)
    for user in players.values():
        tg.user_starts_bot(user)
    await table.settle()
    await table.command(players[0], f"/language {lang}")
    await table.command(players[0], "/newgame")
    lobby = table.lobby_message()
    table.table_id = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]
    for seat in (1, 2, 3):
        await table.press(players[seat], lobby, f"{table.table_id}.L.seat{seat}")
    for code in (*options, "start"):
        await table.press(players[0], lobby, f"{table.table_id}.L.{code}")
    return table


def no_mus(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
    return "nomus" if "nomus" in codes else None


def ordago_wanted(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
    if "ordago" in codes and "quiero" not in codes:
        return "ordago"
    return "quiero" if "quiero" in codes else no_mus(state, match, seat, codes)


def in_grande(state: TableState, match: Match | None) -> bool:
    return match is not None and match.hand is not None and match.hand.phase is Phase.GRANDE


async def test_a_group_upgraded_mid_hand_plays_on_in_the_supergroup(
    tg: FakeTelegram, bot: RunningBot
) -> None:
    """Mid-hand the group becomes a supergroup: the table is posted there in the chat's language, the hand
    goes on to the end with presses on the new message, and the supergroup's leaderboard has the game."""
    table = await table_in_a_basic_group(tg, bot, lang="gl", options=("o_mode",))
    group = table.chat
    await table.play(no_mus, until=in_grande)
    old_table = table.table_message(1)
    assert old_table.buttons

    supergroup = tg.migrate_to_supergroup(group, by=table.players[0])
    table.chat = supergroup
    moved = await tg.wait_for(lambda: table.find_table_message(1), timeout=5.0)
    state, _ = await table.state()
    assert state.chat == f"tg:{supergroup.id}" and state.lang == "gl"
    assert moved.text.splitlines()[0] == old_table.history[-2].text.splitlines()[0]  # the same table, in gl
    await tg.wait_for(lambda: not old_table.buttons)  # the old group's message keeps no live button
    assert_one_live_keyboard_per_slot(tg)

    await table.play(ordago_wanted, until=lambda s, m: s.status is not TableStatus.PLAYING)
    state, _ = await table.state()
    assert state.status is TableStatus.FINISHED and state.hand_no == 1
    gl = translator("gl")
    assert any(t.startswith("🂡 ") for t in tg.group_texts(supergroup))  # the showdown, in the supergroup
    assert not [t for t in tg.group_texts(group) if t.startswith("🂡 ")]
    await table.command(table.players[1], "/leaderboard")
    board = tg.bot_messages(supergroup)[-1].text
    assert board.startswith(gl.gettext(LEADERBOARD_TITLE)), board
    for seat in range(4):
        assert re.search(rf"\d+\. {NAMES[seat]} · [\d.]+ · [01]/1 ", board), board

    # Telegram told it twice; the bot believed it once Telegram confirmed the new id, and posted nothing
    # to the old group after that check (it only took the buttons off its message there).
    refused = [c for c in tg.rejected() if upgraded(c)]
    assert refused and {c.method for c in refused} == {"sendChatAction"}, refused
    assert_clean(tg, allowed=upgraded)


async def test_an_upgrade_the_bot_missed_is_learnt_from_a_refused_post(
    tg: FakeTelegram, bot: RunningBot
) -> None:
    """No service message reached the bot: play goes on on the old messages (Telegram lets the bot edit them)
    until its next post is refused with the new id; then the showdown and the next hand's table appear in the
    supergroup, and play goes on there."""
    table = await table_in_a_basic_group(tg, bot, lang="fr", options=())
    group = table.chat
    await table.play(no_mus, until=in_grande)
    supergroup = tg.migrate_to_supergroup(group, service_messages=False)
    await table.play(until=lambda s, m: s.hand_no == 2)  # hand 1 on its old message
    state, _ = await table.state()
    assert state.chat == f"tg:{supergroup.id}" and state.lang == "fr"
    table.chat = supergroup
    await tg.wait_for(lambda: table.find_table_message(2))
    showdowns = [t for t in tg.group_texts(supergroup) if t.startswith("🂡 ")]  # hand 1's, sent again there
    assert len(showdowns) == 1 and not [t for t in tg.group_texts(group) if t.startswith("🂡 ")]
    await table.play(until=lambda s, m: s.hand_no == 3 or s.status is not TableStatus.PLAYING, timeout=15.0)
    assert table.find_table_message(2) is not None and not tg.bot_messages(group)[-1].buttons
    assert_one_live_keyboard_per_slot(tg)
    # The posts queued for the old group were refused (the showdown, hand 2's table): nothing else.
    assert {c.method for c in tg.rejected() if upgraded(c)} == {"sendMessage"}
    assert_clean(tg, allowed=upgraded)


async def test_an_upgrade_telegram_does_not_confirm_moves_nothing(tg: FakeTelegram, bot: RunningBot) -> None:
    """An update claiming that a group became some supergroup (forged, or of another group) moves nothing:
    Telegram does not refuse the old id with that new one. The table plays on where it is."""
    table = await table_in_a_basic_group(tg, bot, lang="en", options=("o_mode",))
    group = table.chat
    other = tg.add_group("Elsewhere")  # a supergroup that no group became
    before = len(tg.calls())
    tg._queue_update(
        "message",
        {
            "message_id": tg.take_message_id(other),
            "from": ANONYMOUS_ADMIN,
            "sender_chat": other.to_api(),
            "chat": other.to_api(),
            "date": 0,
            "migrate_from_chat_id": group.id,
        },
    )
    await table.settle(before)
    assert [c.method for c in tg.calls()[before:] if c.method != "getUpdates"] == ["sendChatAction"]
    state, _ = await table.state()
    assert state.chat == f"tg:{group.id}"
    await table.play(ordago_wanted, until=lambda s, m: s.status is not TableStatus.PLAYING)
    assert tg.bot_messages(other) == [] and any(t.startswith("🂡 ") for t in tg.group_texts(group))
    assert_clean(tg)
