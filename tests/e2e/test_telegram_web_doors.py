"""The chats lead to the web table on Telegram (issue 22, "Who is who"), through the real python-telegram-bot
Application and the fake Bot API server, which refuses a ``web_app`` button outside a private chat and a
link that is not one, as Telegram does.

- The private hand carries a ``web_app`` button, "🃏 Open the table", to the table's page
  (``WEB_PUBLIC_URL/t/<table>``): the Mini App's ``initData`` says who opens it, so the address holds no
  credential.
- The group's table carries a plain link to the Mini App's direct link,
  ``https://t.me/<bot>/<TELEGRAM_MINIAPP_NAME>?startapp=<table>``, only when the app is named (the core draws
  the same view for both: the adapter shows the way into the app as each chat allows).
- Without an HTTPS ``WEB_PUBLIC_URL`` (or without a web table at all) no button leads there.
"""

from __future__ import annotations

from typing import Any

import pytest

from adapters.telegram.mini_app import open_door
from bot.kernel import TableState, WebAccess, WebLinks
from engine.match import Match

from .conftest import (
    BOT_USERNAME,
    RunningBot,
    Table,
    assert_clean,
    memory_service,
    start_bot,
    telegram_settings_for,
)
from .fake_telegram import FakeTelegram, StoredMessage

PUBLIC = "https://mus.example.org"
SECRET = b"telegram-doors-secret-0123456789"
NAMES = ("Ane", "Brais", "Camille", "Dani")


async def doored_bot(
    tg: FakeTelegram, bots: list[RunningBot], *, public: str | None = PUBLIC, app: str | None = "mus"
) -> RunningBot:
    """A bot whose service serves a web table at ``public`` (none: no web table), its Mini App named
    ``app``."""
    service = memory_service()
    service.deps.web = None if public is None else WebAccess(WebLinks(public, SECRET, 12.0))
    open_door(service.deps.web)  # as musbot run does, whichever platforms a worker serves
    extra: dict[str, Any] = {} if app is None else {"miniapp_name": app}
    running = await start_bot(tg, service, settings=telegram_settings_for(tg, **extra))
    bots.append(running)
    return running


async def group_game(tg: FakeTelegram, bot: RunningBot) -> Table:
    """Four people at a group's table, the game started (a single game)."""
    group = tg.add_group("Mus")
    users = {seat: tg.add_user(NAMES[seat], language_code="en") for seat in range(4)}
    table = Table(tg, bot, group, players=users)
    for user in users.values():
        tg.user_starts_bot(user)
    await table.settle()
    await table.command(users[0], "/language en")
    await table.command(users[0], "/newgame")
    lobby = table.lobby_message()
    table.table_id = str(lobby.buttons[0][1]).split(".")[0]
    for seat in range(1, 4):
        await table.press(users[seat], lobby, f"{table.table_id}.L.seat{seat}")
    await table.press(users[0], lobby, f"{table.table_id}.L.o_mode")
    await table.press(users[0], lobby, f"{table.table_id}.L.start")
    return table


def links(message: StoredMessage | None) -> list[dict[str, Any]]:
    """The buttons of a message that open an address (``url`` or ``web_app``), as Telegram keeps them."""
    assert message is not None
    return [b for row in message.keyboard for b in row if "url" in b or "web_app" in b]


async def play_a_hand(table: Table) -> None:
    def first_hand_over(state: TableState, match: Match | None) -> bool:
        return state.hand_no >= 2

    await table.play(lambda *_: None, until=first_hand_over, timeout=15.0)


async def test_the_hand_opens_the_mini_app_and_the_group_links_to_it(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    bot = await doored_bot(tg, bots)
    table = await group_game(tg, bot)
    direct = f"https://t.me/{BOT_USERNAME}/mus?startapp={table.table_id}"
    assert links(table.table_message(1)) == [{"text": "🃏 Open the table", "url": direct}]
    page = f"{PUBLIC}/t/{table.table_id}"
    for seat in range(4):
        hand = table.hand_message(seat, 1)
        assert links(hand) == [{"text": "🃏 Open the table", "web_app": {"url": page}}], hand
    await play_a_hand(table)  # every edit keeps them, and Telegram takes every one
    assert links(table.table_message(2)) == [{"text": "🃏 Open the table", "url": direct}]
    assert all(links(table.hand_message(seat, 2)) for seat in range(4))
    sent = [c for c in tg.calls(ok=True) if "reply_markup" in c.params]
    assert any("web_app" in str(c.params["reply_markup"]) for c in sent)
    assert "#k=" not in str([c.params for c in tg.calls()])  # Telegram's ways in need no signed link
    assert_clean(tg)


async def test_without_a_named_mini_app_only_the_private_hands_open_it(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    bot = await doored_bot(tg, bots, app=None)
    table = await group_game(tg, bot)
    assert links(table.table_message(1)) == []
    assert [b["text"] for b in links(table.hand_message(0, 1))] == ["🃏 Open the table"]
    assert_clean(tg)


@pytest.mark.parametrize("public", [None, "http://192.168.1.20:8080"])
async def test_without_an_https_web_table_no_button_leads_there(
    tg: FakeTelegram, bots: list[RunningBot], public: str | None
) -> None:
    bot = await doored_bot(tg, bots, public=public)
    table = await group_game(tg, bot)
    assert links(table.table_message(1)) == []
    assert all(links(table.hand_message(seat, 1)) == [] for seat in range(4))
    assert_clean(tg)


async def test_a_solo_table_in_a_private_chat_opens_the_mini_app_from_its_table(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    """At a table played in someone's own chat, the table message opens the app (a ``web_app`` button is
    allowed there); the hand under it does not repeat it."""
    bot = await doored_bot(tg, bots)
    ane = tg.add_user("Ane", language_code="en")
    chat = tg.private_chat(ane)
    table = Table(tg, bot, chat, players={0: ane})
    await table.command(ane, "/newgame", chat)
    (options,) = tg.bot_messages(ane.id)
    await table.press(ane, options, options.button_data("▶ Start"))
    tables = [m for m in tg.bot_messages(ane.id) if any(str(d).endswith(".1.cards") for _, d in m.buttons)]
    table.table_id = str(tables[0].buttons[0][1]).split(".")[0]
    page = f"{PUBLIC}/t/{table.table_id}"
    assert links(tables[0]) == [{"text": "🃏 Open the table", "web_app": {"url": page}}]
    assert links(table.hand_message(0, 1)) == []
    assert_clean(tg)
