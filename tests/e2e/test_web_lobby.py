"""The lobby and a new game on the web table, over real HTTP, as pages meet them: the chat lobby's own
buttons (seats, options, start) for whoever the chat lobby lets press them, nothing for a watcher, every
token checked as a chat press; and after a finished match, "New game" opens the chat's next lobby, as
``/newgame`` does, and hands the page a credential for that table alone."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from service_helpers import ANE, BRAIS, GROUP, OUTSIDER, Harness, english, human_step, users_by_key

from adapters.web.auth import telegram_init_data
from bot.kernel import TableStatus, check_link
from bot.table import FlowSettings

from .web_harness import SECRET, TELEGRAM_TOKEN, PageClient, WebServer, serve

STALE = "That button is no longer valid."


@pytest.fixture
async def h() -> Harness:
    harness = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=0), seed=11)
    await english(harness)
    return harness


@pytest.fixture
async def server(h: Harness) -> AsyncIterator[WebServer]:
    running = await serve(h)
    yield running
    await running.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def page_for(server: WebServer, http: aiohttp.ClientSession, user: object, table: str) -> PageClient:
    client = PageClient(server, http)
    assert await client.open(table, link=server.link(user, table)) == 200  # type: ignore[arg-type]
    return client


async def mini_app(server: WebServer, http: aiohttp.ClientSession, user_id: int, table: str) -> PageClient:
    """A page opened as Telegram opens a Mini App's direct link (``startapp=<table>``)."""
    person = json.dumps({"id": user_id, "first_name": "Zuri", "language_code": "en"})
    fields = {"auth_date": str(int(server.harness.now)), "user": person, "start_param": table}
    client = PageClient(server, http)
    assert await client.open(table, init_data=telegram_init_data(TELEGRAM_TOKEN, fields)) == 200
    return client


def codes(buttons: list[dict[str, Any]]) -> list[str]:
    return [b["code"] for b in buttons]


def token(frame: dict[str, Any], code: str) -> str:
    """The token of the lobby button ``code`` on a page (a seat's, an option's or a control's)."""
    lobby = frame["lobby"]
    for b in [*lobby["options"], *lobby["controls"], *(s["join"] for s in frame["seats"] if "join" in s)]:
        if b["code"] == code:
            return str(b["token"])
    raise AssertionError(f"no {code} on the page: {lobby}")


async def test_seats_options_and_start_from_pages_with_the_chat_lobbys_tokens(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.lobby(GROUP, ANE)
    ane, brais = await page_for(server, http, ANE, tid), await page_for(server, http, BRAIS, tid)
    mine, theirs = await ane.next_frame(), await brais.next_frame()
    # Ane created the table: the options, start and cancel are hers; the free seats offer themselves.
    assert mine["seat"] == 0 and codes(mine["lobby"]["options"]) == [
        "o_senas",
        "o_target",
        "o_mode",
        "o_level",
    ]
    assert codes(mine["lobby"]["controls"]) == ["leave", "start", "cancel"]
    assert [s["name"] for s in mine["seats"]] == ["Ane", "Free seat", "Free seat", "Free seat"]
    assert mine["seats"][1]["free"] == "🤖 a machine plays here if nobody sits"
    chat_tokens = {b.token for b in h.on_screen(tid, "lobby", GROUP.key)}
    assert {token(mine, c) for c in ("o_senas", "start", "seat1")} <= chat_tokens  # the chat's own buttons
    # Brais, not seated, watches: a person takes a seat from the chat (a page's credential does not prove
    # they are in it); his page has nothing to press, and the server refuses the chat's own token from it.
    assert theirs["seat"] is None and theirs["spectator"] and not any("join" in s for s in theirs["seats"])
    assert theirs["lobby"]["options"] == [] and theirs["lobby"]["controls"] == []
    assert theirs["note"] == "You are watching: take a seat from the chat to play."
    status, answer = await brais.act(token(mine, "seat1"))
    assert status == 200 and not answer["ok"] and answer["answer"] == STALE
    assert (await h.press(BRAIS, h.token(tid, "lobby", GROUP.key, "seat1"))).ok  # in the chat
    theirs = await brais.settle()
    assert theirs["seat"] == 1 and "spectator" not in theirs and theirs["seats"][1]["name"] == "Brais"
    assert theirs["note"] == "Waiting for Ane to start the game."
    assert codes(theirs["lobby"]["controls"]) == ["leave"] and theirs["lobby"]["options"] == []
    # Seated, he takes another free seat from the page, as the chat lobby's seat buttons let him.
    assert sorted(s["join"]["code"] for s in theirs["seats"] if "join" in s) == ["seat2", "seat3"]
    status, answer = await brais.act(token(theirs, "seat3"))
    assert status == 200 and answer["ok"] and answer["answer"] == "You joined team B."
    theirs = await brais.settle()
    assert theirs["seat"] == 3 and theirs["seats"][3]["name"] == "Brais"
    # Brais presses Ane's start anyway: refused as in the chat.
    status, answer = await brais.act(token(mine, "start"))
    assert not answer["ok"] and answer["answer"] == "Only the player who created the table can do that."
    mine = await ane.settle()
    assert (await ane.act(token(mine, "o_senas")))[1]["ok"]
    mine = await ane.settle()
    assert "señas on" in mine["lobby"]["options_line"]
    assert "señas on" in (h.shown(tid, "lobby", GROUP.key) or h.log[-1]).text  # the chat's lobby too
    assert (await ane.act(token(mine, "start")))[1]["ok"]
    started = await ane.settle()
    assert len(started["cards"]) == 4 and started["status"] == "playing"
    state = await h.load(tid)
    assert state.table.options.senas and state.table.seats[3].user == BRAIS.key
    # The lobby's tokens are stale now, exactly as the chat's buttons are; a forged one is refused.
    assert (await ane.act(token(mine, "o_senas")))[1]["answer"] == "The game has already started."
    for forged in ("zzzzzzzz.L.start", f"{tid}.L.o_bogus", "", None, 7):
        status, answer = await ane.act(forged)
        assert not answer["ok"] and answer["answer"] == STALE, forged
    assert (await h.load(tid)).version == state.version


async def test_a_watcher_sees_the_lobby_and_presses_nothing(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    """Telegram's initData proves who opens the Mini App, not that they are in the group: they watch until
    they sit from the chat. So does anyone not seated at a solo table."""
    tid = await h.lobby(GROUP, ANE)
    watcher = await mini_app(server, http, 99, tid)
    frame = await watcher.next_frame()
    assert frame["spectator"] and frame["seat"] is None
    assert frame["note"] == "You are watching: take a seat from the chat to play."
    assert not frame["lobby"]["options"] and not frame["lobby"]["controls"] and not frame["lobby"]["hint"]
    assert not any("join" in s for s in frame["seats"]) and "token" not in json.dumps(frame)
    before = (await h.load(tid)).version
    for code in (
        "seat1",
        "o_senas",
        "start",
        "cancel",
    ):  # the chat's tokens, as anyone in the group sees them
        status, answer = await watcher.act(h.token(tid, "lobby", GROUP.key, code))
        assert status == 200 and not answer["ok"] and answer["answer"] == STALE, code
    assert (await h.load(tid)).version == before
    # Seated from the chat, the same Mini App page plays: its presses are its seat's.
    assert (await h.press(OUTSIDER, h.token(tid, "lobby", GROUP.key, "seat2"))).ok
    seated = await watcher.settle()
    assert seated["seat"] == 2 and "spectator" not in seated
    assert (await watcher.act(token(seated, "leave")))[1]["ok"]
    # A solo table: someone with a link who is not seated has nothing to press either.
    solo = await h.lobby(GROUP.__class__("tg:5", True, "Ane"), ANE)
    other = await page_for(server, http, OUTSIDER, solo)
    alone = await other.next_frame()
    assert alone["spectator"] and not alone["lobby"]["options"] and not alone["lobby"]["controls"]
    assert [s["name"] for s in alone["seats"]][1:] == ["🤖 Maite", "🤖 Iker", "🤖 Nerea"]


async def finished(h: Harness) -> str:
    """A single game to 20 stones in the group, Ane and Brais against two machines, played to its end."""
    tid = await h.lobby(GROUP, ANE, (BRAIS, 1))
    for code in ("o_target", "o_target", "o_mode", "start"):
        assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, code))).ok
    users, rng = users_by_key(ANE, BRAIS), random.Random(1)
    for _ in range(3000):
        if not await human_step(h, tid, GROUP, users, rng):
            break
    assert (await h.load(tid)).table.status is TableStatus.FINISHED
    return tid


async def test_new_game_after_a_finished_match_opens_the_chats_next_lobby(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await finished(h)
    ane, brais = await page_for(server, http, ANE, tid), await page_for(server, http, BRAIS, tid)
    watcher = await page_for(server, http, OUTSIDER, tid)
    end = await ane.settle()
    assert end["status"] == "finished" and end["again"]["label"] == "🔁 New game"
    # Who won goes with the button; the chat's "type /newgame" is not the page's to say.
    assert end["again"]["headline"].startswith("🏆 ") and end["again"]["headline"].endswith("win the game!")
    assert not any("/newgame" in line for line in end["results"])
    assert (await watcher.settle())["again"] is None
    status, answer = await watcher.new_game()  # not one of its players: nothing opened
    assert not answer["ok"] and answer["answer"] == STALE
    assert await h.tables.table_for_chat(GROUP.key) is None
    status, answer = await ane.new_game()
    assert status == 200 and answer["ok"], answer
    new = answer["table"]
    assert new != tid and await h.tables.table_for_chat(GROUP.key) == new
    lobby = h.shown(new, "lobby", GROUP.key)  # the chat sees the new lobby, as after /newgame
    assert (
        lobby is not None
        and lobby.chat == GROUP.key
        and any(b.token.endswith(".start") for row in lobby.buttons for b in row)
    )
    # The credential is Ane's, for the new table only, and no longer-lived than the one she came with.
    visitor = check_link(SECRET, answer["link"], new, h.now)
    assert visitor.user.key == ANE.key and visitor.expires <= h.now + 3600
    assert await PageClient(server, http).open(tid, link=answer["link"]) == 403
    follows = PageClient(server, http)
    assert await follows.open(new, link=answer["link"]) == 200
    first = await follows.next_frame()
    assert first["status"] == "lobby" and first["seat"] == 0 and "start" in codes(first["lobby"]["controls"])
    # Brais, who played too, follows the same lobby (no second table): he watches it until he sits from
    # the chat, and then his page is his seat's.
    status, answer = await brais.new_game()
    assert answer["ok"] and answer["table"] == new
    joined = PageClient(server, http)
    assert await joined.open(new, link=answer["link"]) == 200
    frame = await joined.next_frame()
    assert frame["seat"] is None and frame["spectator"] and not any("join" in s for s in frame["seats"])
    assert (await h.press(BRAIS, h.token(new, "lobby", GROUP.key, "seat1"))).ok
    assert (await joined.settle())["seat"] == 1
    # "New game" on a table that is not over: refused, nothing opened.
    status, answer = await follows.new_game()
    assert not answer["ok"] and await h.tables.table_for_chat(GROUP.key) == new


async def test_a_creator_who_leaves_her_seat_from_the_page_then_watches_it(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    """The chat lets a creator who stood up still start the table, but an unseated page presses nothing:
    her page offers her nothing until she sits again (from the chat), and Brais's waits for no one."""
    tid = await h.lobby(GROUP, ANE, (BRAIS, 1))
    ane, brais = await page_for(server, http, ANE, tid), await page_for(server, http, BRAIS, tid)
    assert (await brais.next_frame())["note"] == "Waiting for Ane to start the game."
    assert (await ane.act(token(await ane.next_frame(), "leave")))[1]["answer"] == "You left your seat."
    standing = await ane.settle()
    assert standing["spectator"] and not standing["lobby"]["options"] and not standing["lobby"]["controls"]
    waiting = await brais.settle()
    assert "note" not in waiting and not waiting["lobby"]["options"]  # (the chat gives Ane two minutes)
    assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "seat0"))).ok
    assert codes((await ane.settle())["lobby"]["controls"]) == ["leave", "start", "cancel"]
