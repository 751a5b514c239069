"""Tests of the fake Bot API server: raw HTTP requests, a real ``telegram.Bot`` and a PTB ``Application``."""

from __future__ import annotations

import asyncio
import datetime as dtm
import json
import time
import warnings
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import telegram
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest, EndPointNotFound, Forbidden, RetryAfter
from telegram.ext import ApplicationBuilder, CommandHandler, ContextTypes
from telegram.warnings import PTBDeprecationWarning

from .fake_telegram import (
    MESSAGE_NOT_MODIFIED,
    QUERY_TOO_OLD,
    ApiError,
    ApiSpec,
    FakeTelegram,
    FakeUser,
    parse_formatted_text,
)

TOKEN = "123:ABC"

JSON = dict[str, Any]


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, bot_username="musbot_test") as fake:
        yield fake
    leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert leftover == [], leftover


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def api(
    http: aiohttp.ClientSession, tg: FakeTelegram, method: str, *, as_json: bool = False, **params: Any
) -> tuple[int, JSON]:
    """POST like PTB does: form-urlencoded, complex values as JSON strings (or a JSON body)."""
    url = f"{tg.api_url}{method}"
    if as_json:
        async with http.post(url, json=params) as resp:
            return resp.status, await resp.json()
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    async with http.post(url, data=form) as resp:
        return resp.status, await resp.json()


def keyboard(*rows: list[tuple[str, str]]) -> JSON:
    return {"inline_keyboard": [[{"text": t, "callback_data": d} for t, d in row] for row in rows]}


def assert_results_follow_spec(tg: FakeTelegram) -> None:
    """Every successful answer of the fake has the shape the spec documents for the method's result."""
    spec = ApiSpec.load()
    for call in tg.calls(ok=True):
        method = spec.method(call.method)
        assert method is not None
        spec.check(call.result, method.returns, f"{call.method} result")
    for update in tg.updates:
        spec.check(update, ["Update"], "update")


def seconds(value: int | float | dtm.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


# ---------------------------------------------------------------------------------------------------------
# Raw HTTP: routing, parsing, validation
# ---------------------------------------------------------------------------------------------------------


async def test_get_me_and_base_url(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    assert tg.base_url == f"http://127.0.0.1:{tg.port}/bot"
    status, body = await api(http, tg, "getMe")
    assert status == 200 and body["ok"] is True
    assert body["result"]["username"] == "musbot_test" and body["result"]["is_bot"] is True
    assert body["result"]["id"] == 123
    async with http.get(f"{tg.api_url}getme") as resp:  # method names are case-insensitive; GET works
        assert resp.status == 200
    assert [c.method for c in tg.calls()] == ["getMe", "getMe"]
    assert tg.rejected() == []


async def test_wrong_token_is_401(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    async with http.post(f"{tg.base_url}999:WRONG/getMe") as resp:
        assert resp.status == 401
        assert await resp.json() == {"ok": False, "error_code": 401, "description": "Unauthorized"}
    assert [c.status for c in tg.rejected()] == [401]


async def test_unknown_method_and_path_are_404(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    status, body = await api(http, tg, "sendTelepathy", chat_id=1)
    assert status == 404 and body == {"ok": False, "error_code": 404, "description": "Not Found"}
    async with http.get(f"http://127.0.0.1:{tg.port}/elsewhere") as resp:
        assert resp.status == 404
    assert len(tg.rejected()) == 2


async def test_missing_and_unknown_fields_are_400(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    status, body = await api(http, tg, "sendMessage", chat_id=group.id)
    assert status == 400 and body["description"] == "Bad Request: text is required"
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="hi", colour="red")
    assert status == 400 and "colour" in body["description"]
    # conditional requirements from the spec wording ("Required if inline_message_id is not specified")
    status, body = await api(http, tg, "editMessageText", chat_id=group.id, text="x")
    assert status == 400 and body["description"] == "Bad Request: message_id is required"
    assert len(tg.rejected()) == 3
    assert tg.messages_in(group) == []


async def test_scalar_types_are_checked(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    status, body = await api(http, tg, "deleteMessage", chat_id=group.id, message_id="seven")
    assert status == 400 and "message_id" in body["description"]
    status, body = await api(
        http, tg, "sendMessage", chat_id=group.id, text="x", disable_notification="maybe"
    )
    assert status == 400 and "disable_notification" in body["description"]
    status, body = await api(http, tg, "getUpdates", limit=101)
    assert status == 400 and "limit" in body["description"]
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="x", reply_markup="{not json")
    assert status == 400 and "reply_markup" in body["description"]
    status, body = await api(
        http, tg, "sendMessage", chat_id=group.id, text="x", reply_markup={"inline_keyboard": [[{"text": 5}]]}
    )
    assert status == 400 and "inline_keyboard[0][0]" in body["description"]
    assert len(tg.rejected()) == 5


async def test_plain_text_fields_are_never_json_decoded(
    tg: FakeTelegram, http: aiohttp.ClientSession
) -> None:
    group = tg.add_group("Mus")
    for text in ('[1, 2, "x"]', "123", "true", "null", '{"a": 1}'):
        status, body = await api(http, tg, "sendMessage", chat_id=group.id, text=text)
        assert status == 200, body
        assert body["result"]["text"] == text
    assert tg.group_texts(group) == ['[1, 2, "x"]', "123", "true", "null", '{"a": 1}']


async def test_json_and_multipart_bodies(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    status, body = await api(
        http,
        tg,
        "sendMessage",
        as_json=True,
        chat_id=group.id,
        text="[json]",
        reply_markup=keyboard([("A", "a")]),
    )
    assert status == 200, body
    assert body["result"]["reply_markup"] == keyboard([("A", "a")])
    form = aiohttp.FormData()
    form.add_field("chat_id", str(group.id))
    form.add_field("text", "[multipart]")
    form.add_field("reply_markup", json.dumps(keyboard([("B", "b")])))
    async with http.post(f"{tg.api_url}sendMessage", data=form()) as resp:
        assert resp.status == 200, await resp.text()
    assert [(m.text, m.buttons) for m in tg.messages_in(group)] == [
        ("[json]", [("A", "a")]),
        ("[multipart]", [("B", "b")]),
    ]


async def test_send_document_takes_an_upload_and_keeps_it(
    tg: FakeTelegram, http: aiohttp.ClientSession
) -> None:
    group = tg.add_group("Mus")

    async def send(document: bytes | str, caption: str) -> tuple[int, JSON]:
        form = aiohttp.FormData()
        form.add_field("chat_id", str(group.id))
        form.add_field("caption", caption)
        if isinstance(document, bytes):
            form.add_field("document", document, filename="match.json", content_type="application/json")
        else:
            form.add_field("document", document)
        async with http.post(f"{tg.api_url}sendDocument", data=form()) as resp:
            return resp.status, await resp.json()

    status, body = await send(b'{"format": "mus-conformance/1"}', "the match")
    assert status == 200, body
    result = body["result"]
    assert result["caption"] == "the match" and "text" not in result
    assert result["document"]["file_name"] == "match.json" and result["document"]["file_size"] == 31
    (kept,) = tg.documents(group)
    assert kept.document is not None and kept.document.content == b'{"format": "mus-conformance/1"}'
    assert (await send("AgADBAAD-some-file-id", "by id"))[0] == 400  # this fake keeps no files to name
    assert (await send(b"x", "c" * 1025))[0] == 400  # a caption is 0-1024 characters
    assert len(tg.documents(group)) == 1
    assert_results_follow_spec(tg)


async def test_message_text_limits(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    ok_texts = ["🂠" * 4096, "<b>" + "a" * 4096 + "</b>", "x"]
    for text in ok_texts:
        status, body = await api(http, tg, "sendMessage", chat_id=group.id, text=text, parse_mode="HTML")
        assert status == 200, body
    assert tg.group_texts(group)[1] == "a" * 4096  # markup is not counted, nor stored
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="a" * 4097)
    assert (status, body["description"]) == (400, "Bad Request: message is too long")
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="  \n ")
    assert (status, body["description"]) == (400, "Bad Request: message text is empty")
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="a < b", parse_mode="HTML")
    assert status == 400 and body["description"].startswith("Bad Request: can't parse entities")
    msg = tg.messages_in(group)[0]
    status, body = await api(
        http, tg, "editMessageText", chat_id=group.id, message_id=msg.message_id, text="b" * 4097
    )
    assert (status, body["description"]) == (400, "Bad Request: message is too long")
    assert len(tg.rejected()) == 4


async def test_inline_keyboard_limits(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")

    async def send(markup: JSON) -> tuple[int, JSON]:
        return await api(http, tg, "sendMessage", chat_id=group.id, text="table", reply_markup=markup)

    assert (await send(keyboard([("ok", "x" * 64)])))[0] == 200
    status, body = await send(keyboard([("long", "x" * 65)]))
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_DATA_INVALID")
    status, body = await send(keyboard([("bytes", "ñ" * 33)]))  # 33 characters, 66 bytes
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_DATA_INVALID")
    status, body = await send(keyboard([("empty data", "")]))
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_DATA_INVALID")
    status, body = await send(keyboard([("", "data")]))
    assert status == 400 and "BUTTON_TEXT_EMPTY" in body["description"]
    status, body = await send({"inline_keyboard": [[{"text": "no action"}]]})
    assert status == 400 and "Text buttons are unallowed" in body["description"]
    assert len(tg.rejected()) == 5
    assert "64 bytes, got 65" in (tg.rejected()[0].detail or "")


async def test_set_my_commands_limits_and_scopes(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    commands = [
        {"command": "newgame", "description": "Nueva partida"},
        {"command": "help", "description": "Ayuda"},
    ]
    assert (await api(http, tg, "setMyCommands", commands=commands))[0] == 200
    scope = {"type": "chat", "chat_id": group.id}
    assert (await api(http, tg, "setMyCommands", commands=commands[:1], scope=scope, language_code="eu"))[
        0
    ] == 200
    assert tg.commands_for() == commands
    assert tg.commands_for(scope, "eu") == commands[:1]
    status, body = await api(http, tg, "getMyCommands", scope=scope, language_code="eu")
    assert body["result"] == commands[:1]
    assert (await api(http, tg, "deleteMyCommands", scope=scope, language_code="eu"))[0] == 200
    assert tg.commands_for(scope, "eu") == []

    bad_lists = [
        [{"command": "NewGame", "description": "x"}],
        [{"command": "c" * 33, "description": "x"}],
        [{"command": "newgame", "description": ""}],
        [{"command": "newgame", "description": "d" * 257}],
        [{"command": "newgame"}],
        [{"command": f"c{i}", "description": "x"} for i in range(101)],
    ]
    for bad in bad_lists:
        status, body = await api(http, tg, "setMyCommands", commands=bad)
        assert status == 400, bad
    status, _ = await api(http, tg, "setMyCommands", commands=commands, scope={"type": "nonsense"})
    assert status == 400
    assert (await api(http, tg, "setMyCommands", commands=[{"command": "c" * 32, "description": "d" * 256}]))[
        0
    ] == 200
    assert len(tg.rejected()) == len(bad_lists) + 1


async def test_edit_and_delete_state(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    ane = tg.add_user("Ane")
    markup = keyboard([("Quiero", "q"), ("No quiero", "n")])
    _, body = await api(http, tg, "sendMessage", chat_id=group.id, text="Mano: Ane", reply_markup=markup)
    mid = body["result"]["message_id"]

    async def edit(**params: Any) -> tuple[int, JSON]:
        return await api(http, tg, "editMessageText", chat_id=group.id, message_id=mid, **params)

    assert await edit(text="Mano: Ane", reply_markup=markup) == (
        400,
        {"ok": False, "error_code": 400, "description": MESSAGE_NOT_MODIFIED},
    )
    # the same text through HTML markup that adds nothing is still "not modified"
    assert (await edit(text="Mano: <i></i>Ane", parse_mode="HTML", reply_markup=markup))[0] == 400
    status, body = await edit(text="Mano: Ane · envido", reply_markup=markup)
    assert status == 200 and body["result"]["edit_date"] > 0
    status, body = await edit(text="Mano: Ane · envido")  # no reply_markup: the keyboard goes away
    assert status == 200 and "reply_markup" not in body["result"]
    status, body = await api(
        http, tg, "editMessageReplyMarkup", chat_id=group.id, message_id=mid, reply_markup=markup
    )
    assert status == 200 and body["result"]["reply_markup"] == markup
    status, body = await api(
        http, tg, "editMessageReplyMarkup", chat_id=group.id, message_id=mid, reply_markup=markup
    )
    assert (status, body["description"]) == (400, MESSAGE_NOT_MODIFIED)
    message = tg.messages_in(group)[0]
    assert [v.text for v in message.history] == [
        "Mano: Ane",
        "Mano: Ane · envido",
        "Mano: Ane · envido",
        "Mano: Ane · envido",
    ]

    status, body = await api(http, tg, "editMessageText", chat_id=group.id, message_id=999, text="x")
    assert (status, body["description"]) == (400, "Bad Request: message to edit not found")
    user_message = tg.user_sends(ane, group, "/newgame")
    status, body = await api(
        http, tg, "editMessageText", chat_id=group.id, message_id=user_message.message_id, text="x"
    )
    assert (status, body["description"]) == (400, "Bad Request: message can't be edited")
    assert user_message.message_id == mid + 1  # one id sequence per chat

    tg.delete_message_as_user(group, mid)
    assert (await edit(text="after delete"))[1]["description"] == "Bad Request: message to edit not found"
    assert tg.messages_in(group, from_bot=True) == []
    _, body = await api(http, tg, "sendMessage", chat_id=group.id, text="new table")
    new_mid = body["result"]["message_id"]
    assert (await api(http, tg, "deleteMessage", chat_id=group.id, message_id=new_mid))[0] == 200
    status, body = await api(http, tg, "deleteMessage", chat_id=group.id, message_id=new_mid)
    assert (status, body["description"]) == (400, "Bad Request: message to delete not found")
    status, body = await api(http, tg, "deleteMessage", chat_id=group.id, message_id=user_message.message_id)
    assert (status, body["description"]) == (400, "Bad Request: message can't be deleted")
    assert_results_follow_spec(tg)


async def test_reply_parameters(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group, ane = tg.add_group("Mus"), tg.add_user("Ane")
    command = tg.user_sends(ane, group, "/newgame")
    status, body = await api(
        http,
        tg,
        "sendMessage",
        chat_id=group.id,
        text="ok",
        reply_parameters={"message_id": command.message_id},
    )
    assert status == 200 and body["result"]["reply_to_message"]["text"] == "/newgame"
    assert tg.bot_messages(group)[0].reply_to is command
    status, body = await api(
        http, tg, "sendMessage", chat_id=group.id, text="?", reply_parameters={"message_id": 99}
    )
    assert (status, body["description"]) == (400, "Bad Request: message to be replied not found")
    missing_ok = {"message_id": 99, "allow_sending_without_reply": True}
    assert (await api(http, tg, "sendMessage", chat_id=group.id, text="!", reply_parameters=missing_ok))[
        0
    ] == 200


async def test_link_buttons_as_telegram_takes_them(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    """A url button opens an HTTP(S) or tg:// address; a web_app button an HTTPS one, in private chats only
    (Telegram refuses it in a group, and on an edit that would put it there)."""
    group, ane = tg.add_group("Mus"), tg.add_user("Ane")
    tg.user_starts_bot(ane)

    async def send(chat: int, button: JSON) -> tuple[int, JSON]:
        markup = {"inline_keyboard": [[{"text": "🃏", **button}]]}
        return await api(http, tg, "sendMessage", chat_id=chat, text="table", reply_markup=markup)

    app = {"web_app": {"url": "https://mus.example.org/t/abcdefgh"}}
    assert (await send(group.id, {"url": "https://t.me/musbot/mus?startapp=abcdefgh"}))[0] == 200
    assert (await send(ane.id, app))[0] == 200
    status, body = await send(group.id, app)
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_TYPE_INVALID")
    status, body = await send(ane.id, {"web_app": {"url": "http://mus.example.org/t/abcdefgh"}})
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_URL_INVALID")
    status, body = await send(group.id, {"url": "javascript:alert(1)"})
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_URL_INVALID")
    status, sent = await api(http, tg, "sendMessage", chat_id=group.id, text="table")
    status, body = await api(
        http,
        tg,
        "editMessageReplyMarkup",
        chat_id=group.id,
        message_id=sent["result"]["message_id"],
        reply_markup={"inline_keyboard": [[{"text": "🃏", **app}]]},
    )
    assert (status, body["description"]) == (400, "Bad Request: BUTTON_TYPE_INVALID")
    assert len(tg.rejected()) == 4
    assert_results_follow_spec(tg)


async def test_private_chat_reachability(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    ane, brais = tg.add_user("Ane"), tg.add_user("Brais")
    status, body = await api(http, tg, "sendMessage", chat_id=ane.id, text="tus cartas")
    assert (status, body["description"]) == (403, "Forbidden: bot can't initiate conversation with a user")
    status, body = await api(http, tg, "sendMessage", chat_id=424242, text="?")
    assert (status, body["description"]) == (400, "Bad Request: chat not found")
    tg.user_starts_bot(ane)
    status, body = await api(http, tg, "sendMessage", chat_id=ane.id, text="tus cartas")
    assert status == 200 and body["result"]["chat"] == {"id": ane.id, "type": "private", "first_name": "Ane"}
    tg.user_blocks_bot(ane)
    status, body = await api(http, tg, "sendMessage", chat_id=ane.id, text="again")
    assert (status, body["description"]) == (403, "Forbidden: bot was blocked by the user")
    tg.user_starts_bot(ane)  # unblocking = restarting the bot
    assert (await api(http, tg, "sendMessage", chat_id=ane.id, text="again"))[0] == 200
    assert tg.private_texts(ane) == ["tus cartas", "again"]
    assert tg.private_texts(brais) == []
    assert_results_follow_spec(tg)


async def test_the_bots_membership_as_telegram_tells_it(
    tg: FakeTelegram, http: aiohttp.ClientSession
) -> None:
    """``my_chat_member`` when the bot is removed from a group, added back, blocked and unblocked (each
    update checked against the Bot API spec), and the refusals in between, with Telegram's descriptions."""
    ane = tg.add_user("Ane")
    group = tg.add_group("Mus", members=[ane], admins=[ane])
    basic = tg.add_group("Old", supergroup=False, members=[ane], admins=[ane])
    assert (await api(http, tg, "sendMessage", chat_id=group.id, text="hola"))[0] == 200
    tg.remove_bot_from(group)
    tg.remove_bot_from(basic, banned=True)
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="?")
    assert (status, body["description"]) == (403, "Forbidden: bot is not a member of the supergroup chat")
    status, body = await api(http, tg, "sendMessage", chat_id=basic.id, text="?")
    assert (status, body["description"]) == (403, "Forbidden: bot was kicked from the group chat")
    message_id = tg.bot_messages(group)[0].message_id
    status, _ = await api(http, tg, "editMessageText", chat_id=group.id, message_id=message_id, text="x")
    assert status == 403  # its old messages cannot be edited either
    tg.add_bot_back(group, by=ane)
    assert (await api(http, tg, "sendMessage", chat_id=group.id, text="de vuelta"))[0] == 200
    tg.restrict_bot(group, can_post=False)
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="?")
    assert (status, body["description"]) == (
        400,
        "Bad Request: not enough rights to send text messages to the chat",
    )
    message_id = tg.bot_messages(group)[-1].message_id
    assert (await api(http, tg, "editMessageText", chat_id=group.id, message_id=message_id, text="y"))[
        0
    ] == 200
    tg.restrict_bot(group, can_post=True)
    tg.user_starts_bot(ane)
    tg.user_blocks_bot(ane)
    tg.user_unblocks_bot(ane)
    assert (await api(http, tg, "sendMessage", chat_id=ane.id, text="hola"))[0] == 200
    _, body = await api(http, tg, "getUpdates", allowed_updates=["message", "my_chat_member"])
    changes = [
        (
            u["my_chat_member"]["chat"]["id"],
            u["my_chat_member"]["old_chat_member"]["status"],
            u["my_chat_member"]["new_chat_member"]["status"],
        )
        for u in body["result"]
        if "my_chat_member" in u
    ]
    assert changes == [
        (group.id, "member", "left"),
        (basic.id, "member", "kicked"),
        (group.id, "left", "member"),
        (group.id, "member", "restricted"),
        (group.id, "restricted", "member"),
        (ane.id, "member", "kicked"),
        (ane.id, "kicked", "member"),
    ]
    assert all(u["my_chat_member"]["from"]["id"] == ane.id for u in body["result"] if "my_chat_member" in u)
    assert_results_follow_spec(tg)


async def test_callback_queries(http: aiohttp.ClientSession) -> None:
    async with FakeTelegram(TOKEN, "musbot_test", callback_timeout=0.2) as tg:
        group = tg.add_group("Mus")
        ane = tg.add_user("Ane")
        _, body = await api(
            http,
            tg,
            "sendMessage",
            chat_id=group.id,
            text="t",
            reply_markup=keyboard([("Sentarse", "sit:1")]),
        )
        table = tg.messages_in(group)[0]
        assert table.button_data("Sentarse") == "sit:1"
        with pytest.raises(ValueError, match="no button"):
            tg.user_presses(ane, table, "sit:2")
        first = tg.user_presses(ane, table, "sit:1")
        second = tg.user_presses(ane, table, "sit:1")
        assert first != second
        assert {c.id for c in tg.unanswered_callbacks()} == {first, second}

        status, _ = await api(http, tg, "answerCallbackQuery", callback_query_id=first, text="Sentado")
        assert status == 200
        status, body = await api(http, tg, "answerCallbackQuery", callback_query_id=first)
        assert (status, body["description"]) == (400, QUERY_TOO_OLD)
        status, body = await api(http, tg, "answerCallbackQuery", callback_query_id="nope")
        assert (status, body["description"]) == (400, QUERY_TOO_OLD)
        status, body = await api(http, tg, "answerCallbackQuery", callback_query_id=second, text="x" * 201)
        assert status == 400
        status, _ = await api(http, tg, "answerCallbackQuery", callback_query_id=second, text="x" * 200)
        assert status == 200
        assert tg.unanswered_callbacks() == []
        assert tg.callbacks[first].answer == {"callback_query_id": first, "text": "Sentado"}

        late = tg.user_presses(ane, table, "sit:1")
        await asyncio.sleep(0.25)
        status, body = await api(http, tg, "answerCallbackQuery", callback_query_id=late)
        assert (status, body["description"]) == (400, QUERY_TOO_OLD)
        assert [u["callback_query"]["id"] for u in tg.updates] == [first, second, late]
        assert len(tg.rejected()) == 4
        assert_results_follow_spec(tg)


async def test_answer_callback_deep_link(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group, ane = tg.add_group("Mus"), tg.add_user("Ane")
    await api(
        http, tg, "sendMessage", chat_id=group.id, text="t", reply_markup=keyboard([("Sentarse", "sit")])
    )
    table = tg.messages_in(group)[0]
    good = ["https://t.me/musbot_test?start=join_abc-1", "t.me/MusBot_Test?start=x"]
    for url in good:
        qid = tg.user_presses(ane, table, "sit")
        assert (await api(http, tg, "answerCallbackQuery", callback_query_id=qid, url=url))[0] == 200
    for url in ["https://example.com", "https://t.me/otherbot?start=x", "https://t.me/musbot_test?start=a b"]:
        qid = tg.user_presses(ane, table, "sit")
        status, body = await api(http, tg, "answerCallbackQuery", callback_query_id=qid, url=url)
        assert (status, body["description"]) == (400, "Bad Request: URL_INVALID")
    assert len(tg.unanswered_callbacks()) == 3  # a rejected answer does not count


async def test_fail_next_injection(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group = tg.add_group("Mus")
    tg.fail_next("sendMessage", 429, retry_after=7)
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="x")
    assert status == 429
    assert body == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 7",
        "parameters": {"retry_after": 7},
    }
    assert (await api(http, tg, "sendMessage", chat_id=group.id, text="x"))[0] == 200
    tg.fail_next("editMessageText", 403, times=2)
    tg.fail_next("sendMessage", 400, description="Bad Request: not enough rights", chat_id=group.id)
    status, body = await api(http, tg, "sendMessage", chat_id=group.id, text="y")
    assert (status, body["description"]) == (400, "Bad Request: not enough rights")
    assert tg.messages_in(group)[-1].text == "x"  # a failed call changes nothing
    for _ in range(2):
        status, _ = await api(http, tg, "editMessageText", chat_id=group.id, message_id=1, text="z")
        assert status == 403
    assert (await api(http, tg, "editMessageText", chat_id=group.id, message_id=1, text="z"))[0] == 200
    assert tg.rejected() == []
    assert [c.status for c in tg.rejected(include_injected=True)] == [429, 400, 403, 403]
    with pytest.raises(ValueError):
        tg.fail_next("sendCarrierPigeon")


# ---------------------------------------------------------------------------------------------------------
# Updates and long polling
# ---------------------------------------------------------------------------------------------------------


async def test_user_messages_and_commands(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    group, ane = tg.add_group("Mus"), tg.add_user("Ane", username="ane")
    tg.user_sends(ane, group, "/newgame")
    tg.user_sends(ane, group, "just chatting")  # privacy mode: the bot does not see it
    tg.user_sends(ane, group, "/newgame@otherbot")  # for another bot
    tg.user_sends(ane, group, "/score@musbot_test please")
    tg.user_starts_bot(ane, payload="join_42")
    _, body = await api(http, tg, "getUpdates")
    messages = [u["message"] for u in body["result"]]
    assert [m["text"] for m in messages] == ["/newgame", "/score@musbot_test please", "/start join_42"]
    assert messages[0]["entities"] == [{"type": "bot_command", "offset": 0, "length": 8}]
    assert messages[1]["entities"] == [{"type": "bot_command", "offset": 0, "length": 18}]
    assert messages[2]["chat"]["type"] == "private" and messages[2]["from"]["username"] == "ane"
    assert len(tg.messages_in(group)) == 4
    assert_results_follow_spec(tg)


async def test_get_updates_offset_and_long_poll(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    ane = tg.add_user("Ane")
    tg.user_starts_bot(ane)
    _, body = await api(http, tg, "getUpdates", timeout=5)
    [first] = body["result"]
    _, body = await api(http, tg, "getUpdates", timeout=0)
    assert [u["update_id"] for u in body["result"]] == [first["update_id"]]  # not confirmed yet
    _, body = await api(http, tg, "getUpdates", offset=first["update_id"] + 1, timeout=0)
    assert body["result"] == []

    async def later() -> None:
        await asyncio.sleep(0.1)
        tg.user_sends(ane, None, "hola")

    started = time.monotonic()
    task = asyncio.create_task(later())
    _, body = await api(http, tg, "getUpdates", offset=first["update_id"] + 1, timeout=5)
    await task
    assert 0.05 < time.monotonic() - started < 1.0
    assert [u["message"]["text"] for u in body["result"]] == ["hola"]

    started = time.monotonic()
    _, body = await api(http, tg, "getUpdates", offset=body["result"][0]["update_id"] + 1, timeout=1)
    assert body["result"] == [] and 0.9 < time.monotonic() - started < 1.5

    tg.user_blocks_bot(ane)
    _, body = await api(http, tg, "getUpdates", allowed_updates=["message"])
    assert body["result"] == []  # my_chat_member filtered out (and dropped)
    assert tg.rejected() == []


async def test_get_updates_conflicts(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    first = asyncio.create_task(api(http, tg, "getUpdates", timeout=5))
    await tg.wait_for(lambda: tg.calls("getUpdates"))
    status, body = await api(http, tg, "getUpdates", timeout=0)
    assert (status, body["result"]) == (200, [])
    status, body = await first
    assert status == 409 and body["description"].startswith("Conflict: terminated by other getUpdates")
    assert (await api(http, tg, "setWebhook", url="http://insecure"))[0] == 400
    assert (await api(http, tg, "setWebhook", url="https://example.com/hook", secret_token="s3cret"))[
        0
    ] == 200
    status, body = await api(http, tg, "getUpdates")
    assert status == 409 and "webhook is active" in body["description"]
    assert (await api(http, tg, "getWebhookInfo"))[1]["result"]["url"] == "https://example.com/hook"
    assert (await api(http, tg, "deleteWebhook", drop_pending_updates=True))[0] == 200
    assert (await api(http, tg, "getUpdates"))[0] == 200


async def test_client_gone_cancels_the_long_poll(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    poll = asyncio.create_task(api(http, tg, "getUpdates", timeout=30))
    await tg.wait_for(lambda: tg.calls("getUpdates"))
    poll.cancel()
    with pytest.raises(asyncio.CancelledError):
        await poll
    await tg.wait_for(lambda: tg.calls("getUpdates")[0].cancelled, timeout=2)
    assert tg.rejected() == []


async def test_stop_wakes_pending_long_polls(http: aiohttp.ClientSession) -> None:
    tg = FakeTelegram(TOKEN)
    await tg.start()
    poll = asyncio.create_task(api(http, tg, "getUpdates", timeout=30))
    await tg.wait_for(lambda: tg.calls("getUpdates"))
    started = time.monotonic()
    await tg.stop()
    status, body = await poll
    assert (status, body) == (200, {"ok": True, "result": []})
    assert time.monotonic() - started < 0.5


async def test_get_chat_and_member(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    ane, brais = tg.add_user("Ane"), tg.add_user("Brais")
    group = tg.add_group("Mus", members=[ane], admins=[brais])
    _, body = await api(http, tg, "getChat", chat_id=group.id)
    assert body["result"]["title"] == "Mus" and body["result"]["type"] == "supergroup"
    statuses = []
    for user_id in (ane.id, brais.id, tg.bot_user.id):
        _, body = await api(http, tg, "getChatMember", chat_id=group.id, user_id=user_id)
        statuses.append(body["result"]["status"])
    assert statuses == ["member", "administrator", "member"]
    assert_results_follow_spec(tg)
    assert (await api(http, tg, "getChat", chat_id=-5))[0] == 400
    assert (await api(http, tg, "getChatMember", chat_id=group.id, user_id=777))[0] == 400


def test_spec_checker_rejects_malformed_objects() -> None:
    spec = ApiSpec.load()
    assert spec.method("SENDMESSAGE") is spec.method("sendMessage") is not None
    spec.check({"message_id": 1, "date": 0, "chat": {"id": 1, "type": "private"}}, ["Message"], "m")
    bad_objects: list[tuple[Any, list[str]]] = [
        ({"message_id": 1, "date": 0}, ["Message"]),  # chat missing
        ({"message_id": "1", "date": 0, "chat": {"id": 1, "type": "private"}}, ["Message"]),
        ({"status": "member"}, ["ChatMember"]),  # user missing
        ({"type": "chat"}, ["BotCommandScope"]),  # chat_id missing
        ([{"command": "ok", "description": 3}], ["Array of BotCommand"]),
        (True, ["Array of Update"]),
    ]
    for value, types in bad_objects:
        with pytest.raises(ApiError):
            spec.check(value, types, "value")


def test_formatted_text_parsing() -> None:
    assert parse_formatted_text("<b>Ane</b> &amp; Brais", "HTML") == (
        "Ane & Brais",
        [{"type": "bold", "offset": 0, "length": 3}],
    )
    assert parse_formatted_text("🂠 *Mus*", "MarkdownV2")[1] == [{"type": "bold", "offset": 3, "length": 3}]
    assert parse_formatted_text("  [x]  ") == ("[x]", [])
    for text, mode in [("1.5", "MarkdownV2"), ("<b>x", "HTML"), ("<br>", "HTML"), ("*x", "Markdown")]:
        with pytest.raises(ApiError, match="can't parse entities"):
            parse_formatted_text(text, mode)
    limits = ApiSpec.load().enforced_limits()
    assert "sendMessage.text: 1-4096 characters after entities parsing" in limits
    assert "InlineKeyboardButton.callback_data: 1-64 bytes" in limits
    assert "answerCallbackQuery.text: 0-200 characters" in limits


# ---------------------------------------------------------------------------------------------------------
# A real telegram.Bot and Application against the fake
# ---------------------------------------------------------------------------------------------------------


async def test_ptb_bot_round_trip(tg: FakeTelegram) -> None:
    group = tg.add_group("Mus")
    ane = tg.add_user("Ane")
    async with telegram.Bot(TOKEN, base_url=tg.base_url) as bot:
        me = await bot.get_me()
        assert me.username == "musbot_test"
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("Sentarse", callback_data="sit:1")]])
        sent = await bot.send_message(group.id, "[Mesa] Mano: Ane", reply_markup=markup)
        assert sent.text == "[Mesa] Mano: Ane" and sent.reply_markup == markup
        assert sent.chat.type == "supergroup" and sent.from_user is not None and sent.from_user.is_bot

        with pytest.raises(BadRequest, match="not modified"):
            await bot.edit_message_text("[Mesa] Mano: Ane", group.id, sent.message_id, reply_markup=markup)
        edited = await bot.edit_message_text(
            "[Mesa] Turno de Ane", group.id, sent.message_id, reply_markup=markup
        )
        assert isinstance(edited, telegram.Message) and edited.text == "[Mesa] Turno de Ane"

        # PTB does not check callback_data length itself: the fake rejects it like Telegram
        too_long = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
        with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
            await bot.send_message(group.id, "t", reply_markup=too_long)

        with pytest.raises(EndPointNotFound):
            await bot.do_api_request("sendTelepathy", api_kwargs={"chat_id": group.id})
        with pytest.raises(BadRequest, match=r"(?i)text is required"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PTB suggests Bot.send_message, which cannot omit the text
            await bot.do_api_request("sendMessage", api_kwargs={"chat_id": group.id})

        tg.fail_next("sendMessage", 429, retry_after=7)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTBDeprecationWarning)  # retry_after: int now, timedelta later
            with pytest.raises(RetryAfter) as flood:
                await bot.send_message(group.id, "x")
            assert seconds(flood.value.retry_after) == 7

        with pytest.raises(Forbidden, match="can't initiate conversation"):
            await bot.send_message(ane.id, "tus cartas")

        await bot.set_my_commands([("newgame", "Nueva partida")], language_code="es")
        assert [c.command for c in await bot.get_my_commands(language_code="es")] == ["newgame"]

        qid = tg.user_presses(ane, tg.messages_in(group)[0], "sit:1")
        assert await bot.answer_callback_query(qid, text="Sentado", url="https://t.me/musbot_test?start=s1")
        chat = await bot.get_chat(group.id)
        assert chat.title == "Mus"

    assert tg.unanswered_callbacks() == []
    assert [c.method for c in tg.rejected()] == [
        "editMessageText",
        "sendMessage",
        "sendTelepathy",
        "sendMessage",
        "sendMessage",
    ]
    assert [c.status for c in tg.rejected(include_injected=True)] == [400, 400, 404, 400, 429, 403]
    assert_results_follow_spec(tg)


async def test_ptb_application_polls_replies_and_stops_promptly(tg: FakeTelegram) -> None:
    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        payload = " ".join(context.args or [])
        await update.effective_message.reply_text(f"[hola] {payload}".strip())

    app = ApplicationBuilder().token(TOKEN).base_url(tg.base_url).build()
    app.add_handler(CommandHandler("start", start))
    ane = tg.add_user("Ane")
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0, timeout=1)
        tg.user_starts_bot(ane, payload="join_7")
        await tg.wait_for(lambda: tg.private_texts(ane), timeout=3)
        # a second update while the poll is pending: the long poll wakes at once
        started = time.monotonic()
        tg.user_sends(ane, None, "/start")
        await tg.wait_for(lambda: len(tg.private_texts(ane)) == 2, timeout=3)
        assert time.monotonic() - started < 0.5

        stopping = time.monotonic()
        await app.updater.stop()
        await app.stop()
    assert time.monotonic() - stopping < 2.0
    assert tg.private_texts(ane) == ["[hola] join_7", "[hola]"]
    assert [m.text for m in tg.messages_in(ane.id)] == ["/start join_7", "[hola] join_7", "/start", "[hola]"]
    assert tg.rejected() == []
    # the last getUpdates (timeout 0) confirmed every update
    last = tg.calls("getUpdates")[-1]
    assert last.params["timeout"] == 0 and last.params["offset"] == tg.updates[-1]["update_id"] + 1
    assert {c.method for c in tg.calls()} >= {"getMe", "deleteWebhook", "getUpdates", "sendMessage"}
    assert_results_follow_spec(tg)


def test_fake_user_repr_is_usable() -> None:
    user = FakeUser(1, "Ane")
    assert user.to_api() == {"id": 1, "is_bot": False, "first_name": "Ane"}
