"""The web table over real HTTP (issue 22), as pages meet it: what each page is sent (its seat's view, each
move in turn), what it may do (the chat buttons' tokens, checked the same way) and who may open it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import replace

import aiohttp
import pytest
from service_helpers import ANE, BRAIS, GROUP, OUTSIDER, Harness, english

from adapters.web.auth import telegram_init_data
from adapters.web.feed import PAGES_PER_USER
from bot.app import Service
from bot.kernel import TableStatus, lobby_stamp, make_token
from bot.store import MemoryTableNotices
from bot.table import FlowSettings
from engine.cards import FULL_DECK, card_name

from .web_harness import PageClient, WebServer, sena_table, serve

STALE = "That button is no longer valid."


@pytest.fixture
async def h() -> Harness:
    harness = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=30))
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


async def test_a_seat_sees_its_cards_a_spectator_none_and_both_see_the_same_story(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    ane, watcher = await page_for(server, http, ANE, tid), await page_for(server, http, OUTSIDER, tid)
    mine, public = await ane.next_frame(), await watcher.next_frame()
    state = await h.load(tid)
    assert state.match is not None and state.match.hand is not None
    assert mine["cards"] == [card_name(c) for c in state.match.hand.hands[0]] and mine["seat"] == 0
    assert public["cards"] == [] and public["seat"] is None and public["spectator"]
    assert "moves" not in public and "discard" not in public
    assert mine["story"] == public["story"] and mine["teams"] == public["teams"]
    names = [s["name"] for s in public["seats"]]
    assert names[:2] == ["Ane", "Brais"] and all(n.startswith("🤖") for n in names[2:])
    every = {card_name(c) for c in FULL_DECK}
    assert not every & set(str(public).replace("'", " ").split())


async def test_pages_opened_at_once_all_follow_the_table(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    load = h.tables.load

    async def slow_load(table_id: str):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.02)  # as a real Redis does, a read yields: the four opens interleave
        return await load(table_id)

    h.tables.load = slow_load  # type: ignore[method-assign]
    clients = [PageClient(server, http) for _ in range(4)]
    users = [ANE, BRAIS, OUTSIDER, ANE]
    opened = await asyncio.gather(
        *(c.open(tid, link=server.link(u, tid)) for c, u in zip(clients, users, strict=True))
    )
    assert opened == [200] * 4
    firsts = [await c.next_frame() for c in clients]
    state = await h.wait_for_human(tid)
    user = ANE if state.user_on_turn() == ANE.key else BRAIS
    token = next(b.token for b in h.on_screen(tid, "table", GROUP.key) if "-" in b.token.split(".")[1])
    assert (await h.press(user, token)).ok
    for client, first in zip(clients, firsts, strict=True):
        newest = await client.settle()
        assert newest["k"] > first["k"], "every page is sent the move, not only the last one opened"


async def calm_press(h: Harness, tid: str, service: Service) -> None:
    """Whoever of Ane and Brais is on turn presses a calm button of the group's table, in the chat."""
    state = await h.wait_for_human(tid)
    user = ANE if state.user_on_turn() == ANE.key else BRAIS
    tokens = h.turn_tokens(tid, GROUP.key)
    calm = [t for t in tokens if t.endswith((".paso", ".nomus", ".noquiero", ".quiero", ".mus"))] or tokens
    assert h.record(await service.press(user, sorted(calm)[0])).ok  # (its new buttons kept, as a chat)


async def test_a_chat_press_reaches_an_open_page_pushed_not_polled(
    h: Harness, http: aiohttp.ClientSession
) -> None:
    """The hub's safety poll is a minute: a frame that comes within seconds was pushed by the write's notice
    — a press in the group's chat on this worker, then one on another worker (its own service and cache,
    the same stores and notices)."""
    server = await serve(h, poll=60.0)
    try:
        tid = await h.started(GROUP, ANE, (BRAIS, 1))
        await h.wait_for_human(tid)
        watcher = await page_for(server, http, OUTSIDER, tid)
        shown = await watcher.settle()
        other_worker = Service(replace(h.deps))
        for service in (h.service, other_worker):
            await calm_press(h, tid, service)
            written = (await h.load(tid)).version
            while not (shown["v"] == written and shown["live"]):  # each move in turn, then the newest
                shown = await watcher.next_frame(timeout=5.0)
    finally:
        await server.close()


async def test_a_lost_notice_is_made_up_for_after_a_gap_and_by_the_safety_poll(
    h: Harness, http: aiohttp.ClientSession
) -> None:
    """A worker whose notices are lost (another notifier: nobody hears it) writes; the page is told nothing,
    until its subscription reports a gap (as after a Redis restart) — or, on a server whose safety poll is
    short, at the next poll."""
    assert isinstance(h.deps.notices, MemoryTableNotices)
    deaf_worker = Service(replace(h.deps, notices=MemoryTableNotices()))
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    await h.wait_for_human(tid)
    for poll in (60.0, 0.3):
        server = await serve(h, poll=poll)
        try:
            watcher = await page_for(server, http, OUTSIDER, tid)
            shown = await watcher.settle()
            await calm_press(h, tid, deaf_worker)
            written = (await h.load(tid)).version
            if poll > 1:
                with pytest.raises(TimeoutError):
                    await watcher.next_frame(timeout=0.5)  # nothing heard, nothing polled
                h.deps.notices.interrupt()
            while not (shown["v"] == written and shown["live"]):
                shown = await watcher.next_frame(timeout=5.0)
        finally:
            await server.close()


async def test_a_pages_own_press_reads_the_table_once(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE)  # Ane and three machines: her word and theirs are one write
    await h.wait_for_human(tid)
    client = await page_for(server, http, ANE, tid)
    first = await client.settle()
    reads = server.hub.reads
    assert (await client.act(first["moves"]["calls"][0]["token"]))[1]["ok"]
    newest = await client.settle(0.6)
    assert newest["v"] == (await h.load(tid)).version == first["v"] + 1
    assert server.hub.reads == reads + 1


async def test_a_forged_a_stale_and_another_tables_token_are_refused_as_a_stale_button_is(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    state = await h.wait_for_human(tid)
    user = ANE if state.user_on_turn() == ANE.key else BRAIS
    client = await page_for(server, http, user, tid)
    frame = await client.settle()
    token = frame["moves"]["calls"][0]["token"]
    before = (await h.load(tid)).version
    for forged in ("not a token", f"{tid}.1-99.paso", f"zzzz9999.{token.split('.', 1)[1]}", 42):
        status, answer = await client.act(forged)
        assert (status, answer["ok"]) == (200, False), forged
        chat = await h.service.press(user, forged)  # the same press from a chat button
        assert answer["answer"] == chat.answer
    assert (await h.load(tid)).version == before  # nothing changed
    status, answer = await client.act(token)
    assert (status, answer["ok"]) == (200, True)
    status, again = await client.act(token)  # the same button twice: already played, as in a chat
    assert again["ok"] is False and again["answer"] in ("Already played.", STALE, "Not your turn.")
    assert again["answer"] == (await h.service.press(user, token)).answer


async def test_each_move_is_a_frame_of_its_own(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE)  # Ane and three machines: after her word, theirs come in one write
    await h.wait_for_human(tid)
    client = await page_for(server, http, ANE, tid)
    first = await client.settle()
    call = first["moves"]["calls"][0]
    assert (await client.act(call["token"]))[1]["ok"]
    await client.settle(0.6)
    after = (await h.load(tid)).match
    assert after is not None and after.hand is not None
    frames = [f for f in client.frames[1:] if f["hand"] == first["hand"]]
    assert len(frames) >= 3, "her word and the machines' after it"
    # One frame per record entry, in order, the last one live; earlier ones are replays without buttons.
    assert [f["k"] for f in frames] == list(range(first["k"] + 1, frames[-1]["k"] + 1))
    assert frames[-1]["live"] and not any(f["live"] for f in frames[:-1])
    assert all("moves" not in f for f in frames[:-1])
    # ...each shown at least a pause after the one before (server.hub.pause: 0.05 s in these tests).
    times = [client.arrived[client.frames.index(f)] for f in frames]
    assert all(b - a >= 0.045 for a, b in itertools.pairwise(times)), times


async def test_the_last_answer_and_the_count_are_shown(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    client = await page_for(server, http, ANE, tid)
    await client.settle()
    for _ in range(200):  # Ane says paso (or no hay mus, quiero…) whenever it is her turn; Brais too
        state = await h.load(tid)
        assert state.match is not None and state.match.hand is not None
        if state.match.hand.over:
            break
        await h.wait_for_human(tid)
        state = await h.load(tid)
        user = ANE if state.user_on_turn() == ANE.key else BRAIS
        tokens = h.turn_tokens(tid, GROUP.key)
        hand = None if state.match is None else state.match.hand
        if hand is not None and hand.phase.value == "discard":
            await h.press(user, h.token(tid, "hand", user.key, "pick0"))
            await h.press(user, h.token(tid, "hand", user.key, "discard"))
            continue
        calm = [t for t in tokens if t.endswith((".paso", ".nomus", ".noquiero", ".quiero"))] or tokens
        await h.press(user, sorted(calm)[0])
    last = await client.settle(0.8)
    assert last["over"] and last["count"], last
    hand = (await h.load(tid)).match.hand  # type: ignore[union-attr]
    assert last["k"] == len(hand.journal)
    # The frame before the count shows the last answer: one entry earlier, not over.
    before = next(f for f in reversed(client.frames) if f["k"] == last["k"] - 1 and f["hand"] == last["hand"])
    assert not before["over"]


async def test_a_person_catches_a_sena_counted_from_when_their_page_showed_it(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid, players, maker, token = await sena_table(h)
    made_at = h.now
    assert (await h.press(players[maker], token)).ok
    rival = players[(maker + 1) % 4]
    h.set_time(made_at + 2.5)  # the page shows the seña 2.5 s after it was made (moves paced before it)
    client = await page_for(server, http, rival, tid)
    frame = await client.next_frame()
    flash = next(f for f in frame["flashes"] if f["seat"] == maker)
    h.set_time(made_at + 3.7)  # a person reacting in 1.2 s: after the chats' 3 s, inside the page's
    status, answer = await client.act(flash["token"])
    assert status == 200 and answer["ok"] and answer["answer"].startswith("Caught!") and answer["alert"]
    spectator = await page_for(server, http, OUTSIDER, tid)
    public = await spectator.next_frame()
    assert all("token" not in f for f in public["flashes"])  # a spectator sees the ⚡, has nothing to tap


async def test_forged_expired_and_other_tables_credentials_are_refused(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    refused = PageClient(server, http)
    assert await refused.open(tid, link=server.link(ANE, tid)[:-3] + "abc") == 403
    assert await refused.open(tid, link=server.link(ANE, tid, ttl=-1)) == 403
    assert await refused.open(tid, link=server.link(ANE, "other123")) == 403
    assert await refused.open(tid) == 403
    fields = {"auth_date": str(int(h.now)), "user": '{"id": 1, "first_name": "Ane"}', "start_param": tid}
    assert await refused.open(tid, init_data=telegram_init_data("999:another-bot", fields)) == 403
    old = {**fields, "auth_date": str(int(h.now) - 10 * 86400)}
    assert await refused.open(tid, init_data=telegram_init_data("123456:TEST-token", old)) == 403
    # A Mini App opened by the seated user (tg:1 is Ane) gets her seat; events and actions need a page.
    mini = PageClient(server, http)
    assert await mini.open("", init_data=telegram_init_data("123456:TEST-token", fields)) == 200
    assert (await mini.next_frame())["seat"] == 0
    async with http.get(f"{server.base}/api/events", params={"page": "made-up"}) as response:
        assert response.status == 401
    async with http.post(f"{server.base}/api/act", json={"page": "made-up", "token": "x"}) as response:
        assert response.status == 401


async def test_every_response_forbids_inline_script_and_other_sites(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    for path in (f"/t/{tid}", "/static/table.js", "/static/cards.js", "/static/table.css", "/rules/fr"):
        async with http.get(server.base + path) as response:
            assert response.status == 200
            csp = response.headers["Content-Security-Policy"]
            assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe" not in csp
            body = await response.text()
            assert "http://" not in body and "https://" not in body  # nothing loaded from another site
            if path.startswith("/rules/"):  # the chats' rules, reachable from the page
                assert "<h2>" in body and "<strong>" in body and "**" not in body and "<script" not in body
            if path.startswith("/t/"):
                assert "<script>" not in body and "onclick" not in body and "innerHTML" not in body


async def test_a_visitor_opens_a_bounded_number_of_pages(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    first = await page_for(server, http, ANE, tid)
    await first.next_frame()
    others = [await page_for(server, http, ANE, tid) for _ in range(PAGES_PER_USER)]
    with pytest.raises(EOFError):  # the oldest page's stream ends: a credential opens no unbounded sessions
        while True:
            await first.next_frame()
    assert (await first.act("anything"))[0] == 401
    assert all(o.page in server.hub.pages for o in others)
    assert len([p for p in server.hub.pages.values() if p.visitor.user == ANE]) == PAGES_PER_USER


async def test_a_visitor_pressing_too_fast_is_slowed_down(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    client = await page_for(server, http, ANE, tid)
    statuses = [(await client.act("forged"))[0] for _ in range(20)]
    assert statuses[:12] == [200] * 12 and 429 in statuses


async def test_a_mini_app_opened_without_a_table_is_refused_and_leaves_nothing_behind(
    h: Harness, http: aiohttp.ClientSession
) -> None:
    """Opened from the bot's profile (no ``startapp``), a Mini App names no table: refused, no feed kept,
    and the safety poll goes on for every other page."""
    server = await serve(h, poll=0.05)
    try:
        fields = {"auth_date": str(int(h.now)), "user": '{"id": 1, "first_name": "Ane"}'}
        init_data = telegram_init_data("123456:TEST-token", fields)
        for table in ("", "../x", "ABCDEFGH"):
            assert await PageClient(server, http).open(table, init_data=init_data) == 403
        assert server.hub.feeds == {}
        await asyncio.sleep(0.2)
        tid = await h.started(GROUP, ANE, (BRAIS, 1))
        page = await page_for(server, http, ANE, tid)
        await page.next_frame()
        assert server.hub._task is not None and not server.hub._task.done()
    finally:
        await server.close()


async def test_only_a_seated_players_page_acts(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    """Being in the chat is what lets a person sit; a page's credential does not prove it (a Mini App's
    initData names no chat): a page that is not a seat's presses nothing, in the lobby or in play."""
    lobby = (await h.service.new_table(GROUP, ANE)).table
    assert lobby is not None
    outsider = await page_for(server, http, OUTSIDER, lobby)
    for code in ("seat1", "start", "cancel"):
        status, answer = await outsider.act(make_token(lobby, lobby_stamp(), code))
        assert (status, answer["ok"]) == (200, False), code
    state = await h.load(lobby)
    assert state.table.seat_of(OUTSIDER.key) is None and state.table.status is TableStatus.LOBBY
    assert (await h.press(ANE, make_token(lobby, lobby_stamp(), "cancel"))).ok  # (from the chat: Ane may)
    tid = await h.started(GROUP, BRAIS, (ANE, 1))
    await h.wait_for_human(tid)
    watcher = await page_for(server, http, OUTSIDER, tid)
    await watcher.settle()
    before = (await h.load(tid)).version
    for token in h.turn_tokens(tid, GROUP.key):
        assert (await watcher.act(token))[1]["ok"] is False
    assert (await h.load(tid)).version == before


async def test_a_page_whose_credential_expired_acts_no_more_and_its_stream_ends(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    state = await h.wait_for_human(tid)
    user = ANE if state.user_on_turn() == ANE.key else BRAIS
    client = PageClient(server, http)
    assert await client.open(tid, link=server.link(user, tid, ttl=60)) == 200
    frame = await client.settle()
    h.advance(61)
    before = (await h.load(tid)).version
    assert (await client.act(frame["moves"]["calls"][0]["token"]))[0] == 401
    assert (await h.load(tid)).version == before
    with pytest.raises(EOFError):
        while True:
            await client.next_frame()


async def test_a_page_closed_twice_leaves_its_tables_new_feed_alone(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    """A page dropped (too many pages of one visitor, or abandoned) is closed again when its stream ends:
    by then its table's feed may be another page's, which must keep it."""
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    first = await page_for(server, http, ANE, tid)
    await first.next_frame()
    dropped = server.hub.pages[first.page]
    server.hub.close_page(dropped)
    second = await page_for(server, http, BRAIS, tid)
    await second.next_frame()
    server.hub.close_page(dropped)
    assert tid in server.hub.feeds and second.page in server.hub.pages
    await calm_press(h, tid, h.service)
    assert (await second.settle())["v"] > 0
