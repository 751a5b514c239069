"""A finished match replayed on the web table over real HTTP (issue 22, item 6), as people meet it:
``/history`` in the chat carries the address; the page it opens is sent every hand of the match move by
move with its count, in the viewer's language; nothing else opens it — a forged, expired, another match's
or a live table's link is refused, and a replay's link opens no table. No seña's meaning ever reaches it."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from service_helpers import ANE, BRAIS, GROUP, GROUP2, Harness, english

from adapters.web.frames import page
from adapters.web.replay import REPLAY_REFUSED, match_before
from bot.app import parse_kept
from bot.history import KeptHand
from bot.i18n import LANGUAGES, translator
from bot.kernel import UserRef, WebAccess, WebLinks, replay_place, sign_link
from bot.screens import SENA_NAMES
from engine.record import hand_after
from engine.senas import Sena

from .web_harness import SECRET, PageClient, WebServer, serve

#: Señas whose names say nothing else on a table (``medias``, ``duples`` and ``31`` are count words too).
TELLING = (Sena.DOS_REYES, Sena.TRES_REYES, Sena.DOS_ASES, Sena.TRES_ASES, Sena.CIEGO)
#: The lines that would tell a seña's meaning (a partner's, a caught one, a seña button).
MEANING_LINES = (
    "Your partner {name} made you a seña: {sena}",
    "You caught {name}'s seña: {sena}",
    "Seña: {sena}",
)


@pytest.fixture
async def h() -> Harness:
    harness = Harness()  # (machine tables play their whole match at once)
    await english(harness)
    harness.deps.web = WebAccess(WebLinks("http://mus.test", SECRET, hours=12))
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


async def played(h: Harness) -> str:
    """A machine-only match with señas in the group, every hand of it kept."""
    outcome = await h.service.new_machine_table(GROUP, ANE, senas=True, single_game=True, target=20)
    assert outcome.ok and outcome.table is not None
    return outcome.table


async def kept_hands(h: Harness, table: str) -> list[KeptHand]:
    return [k for _, entry in await h.deps.history.hands(table) if (k := parse_kept(entry)) is not None]


async def replay(
    server: WebServer, http: aiohttp.ClientSession, table: str, link: str, **more: object
) -> tuple[int, dict[str, Any]]:
    body = {"table": table, "link": link, **more}
    async with http.post(f"{server.base}/api/replay", json=body) as response:
        return response.status, await response.json()


def replay_link(h: Harness, table: str, *, ttl: float = 3600.0, lang: str | None = "en") -> str:
    return sign_link(SECRET, UserRef(GROUP.key, GROUP.title, lang), replay_place(table), h.now + ttl)


async def test_history_links_the_replay_which_plays_every_hand_move_by_move_with_its_count(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    table = await played(h)
    kept = await kept_hands(h, table)
    assert len(kept) >= 2
    (view,) = (await h.service.history.recent(GROUP, BRAIS)).messages
    assert view.chat == GROUP.key  # the chat's answer: the link is the chat's, not Brais's
    (address,) = re.findall(r"▶️ Replay the match hand by hand, with the cards: (\S+)", view.text)
    assert address.startswith(f"http://mus.test/r/{table}#k=")
    link = address.split("#k=")[1]
    async with http.get(f"{server.base}/r/{table}") as response:  # the live table's own page
        assert response.status == 200 and "/static/replay.js" in await response.text()
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    status, first = await replay(server, http, table, link, lang="en-GB")
    assert status == 200 and first["hands"] == [k.hand_no for k in kept] and first["hand"] == kept[0].hand_no
    assert first["shared"]["lang"] == "en" and first["shared"]["texts"]["next"] == "Next hand"
    for i, (number, hand) in enumerate(zip(first["hands"], kept, strict=True), 1):
        status, answer = await replay(server, http, table, link, lang="en", hand=number)
        assert status == 200 and answer["hand"] == number
        frames = answer["frames"]
        # One frame as dealt, then one per entry of the record: every word, seña and catch in turn.
        assert [f["k"] for f in frames] == list(range(len(hand.record.actions) + 1))
        dealt = [seat["cards"] for seat in frames[0]["hands"]]
        assert dealt == [hand.record.hands[seat] for seat in range(4)]  # every card of a finished hand
        assert not any(f["over"] for f in frames[:-1]) and frames[-1]["over"]
        assert frames[-1]["count"] and all(line.strip() for line in frames[-1]["count"])  # with its reasons
        assert [len(f["story"]) for f in frames] == sorted(len(f["story"]) for f in frames)
        assert all(f["cards"] == [] and "moves" not in f and "discard" not in f for f in frames)
        assert answer["position"] == f"Hand {number} · {i} of {len(kept)}"
    last = kept[-1]
    assert last.game_winner is not None and any("win the game" in line for line in frames[-1]["results"])
    # Sent compressed (a hand's frames repeat themselves), and a match that gains a hand is seen to.
    async with http.post(f"{server.base}/api/replay", json={"table": table, "link": link}) as response:
        assert response.status == 200 and response.headers["Content-Encoding"] in ("gzip", "deflate")
    more = last.model_copy(update={"hand_no": last.hand_no + 1})
    await h.deps.history.keep(table, GROUP.key, more.hand_no, h.now, more.model_dump_json())
    _, grown = await replay(server, http, table, link, lang="en")
    assert grown["hands"] == [*first["hands"], more.hand_no]
    h.deps.web = None  # no web table served: /history has no address to give
    (plain,) = (await h.service.history.recent(GROUP, BRAIS)).messages
    assert "▶️" not in plain.text and "http" not in plain.text


async def test_the_replay_speaks_the_viewers_language_else_the_chats(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    table = await played(h)
    link = replay_link(h, table, lang="eu")
    _, french = await replay(server, http, table, link, lang="fr-FR")
    assert french["shared"]["lang"] == "fr" and french["shared"]["texts"]["next"] == "Donne suivante"
    _, german = await replay(server, http, table, link, lang="de-DE")  # not one of ours: the chat's
    assert german["shared"]["lang"] == "eu" and german["position"].startswith("1. banaketa")


async def test_forged_expired_other_places_links_are_refused(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    table = await played(h)
    other = await h.service.new_machine_table(GROUP2, BRAIS, single_game=True, target=5)
    assert other.table is not None
    good = replay_link(h, table)
    assert (await replay(server, http, table, good))[0] == 200
    refused = {
        "forged": good[:-3] + "abc",
        "expired": replay_link(h, table, ttl=-1),
        "another match's": replay_link(h, other.table),
        "the live table's": sign_link(SECRET, ANE, table, h.now + 3600),
        "signed with another key": sign_link(b"x" * 32, ANE, replay_place(table), h.now + 3600),
        "none": "",
    }
    for why, link in refused.items():
        status, answer = await replay(server, http, table, link, lang="en")
        assert status == 403, why
        assert answer == {"error": translator("en").gettext(REPLAY_REFUSED)}
    # ...and a replay's link opens no table: the places differ.
    assert await PageClient(server, http).open(table, link=good) == 403
    assert await PageClient(server, http).open(replay_place(table), link=good) == 403
    async with http.post(f"{server.base}/api/replay", data=b"[1, 2]") as response:
        assert response.status == 400


async def test_no_senas_meaning_ever_reaches_a_replay(
    h: Harness, server: WebServer, http: aiohttp.ClientSession
) -> None:
    table = await played(h)
    kept = await kept_hands(h, table)
    made = {
        Sena(word.split()[1])
        for k in kept
        for entry in k.record.actions
        if (word := entry[1]).startswith("sena ")
    }
    telling = [s for s in made if s in TELLING]
    assert telling, "the seeded match made no seña to hide"
    # What the partner's page showed while the hand was live (the test would see it if the replay did).
    partner_saw = _partner_lines(kept)
    assert partner_saw
    link = replay_link(h, table)
    for lang in LANGUAGES:
        t = translator(lang)
        forbidden = [t.gettext(SENA_NAMES[s]) for s in telling] + [
            s.value for s in made if s not in (Sena.MEDIAS, Sena.DUPLES)
        ]
        forbidden += [max(re.split(r"\{\w+\}", t.gettext(line)), key=len) for line in MEANING_LINES]
        for k in kept:
            status, answer = await replay(server, http, table, link, lang=lang, hand=k.hand_no)
            assert status == 200
            text = json.dumps(answer, ensure_ascii=False)
            for word in forbidden:
                assert word not in text, (lang, k.hand_no, word)
            assert all(f["known"] == [] for f in answer["frames"])
            assert all(
                set(flash) == {"index", "seat", "name"} for f in answer["frames"] for flash in f["flashes"]
            )
        if lang == "en":
            assert not any(line in text for line in partner_saw)


def _partner_lines(kept: list[KeptHand]) -> list[str]:
    """The lines a seated partner's page read of the señas (in English), for a hand that had one."""
    lines: list[str] = []
    for k in kept:
        hand = hand_after(k.record, len(k.record.actions))
        table = k.table_state("en")
        for seat in range(4):
            seen = page(table, match_before(k, []), hand, seat, lang="en", version=0, live=False, now=0)
            lines.extend(seen["known"])
    return lines


async def test_hands_not_kept_are_the_first_one_and_built_once(
    h: Harness, server: WebServer, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand number that is not kept answers the first hand, from the one cache entry: a link's holder
    cannot make the server replay and draw a hand again for every number they make up."""
    import adapters.web.replay as replay_module

    built = replay_module._built
    builds: list[object] = []

    def counted(*args: Any) -> bytes | None:
        builds.append(args[1])
        return built(*args)

    monkeypatch.setattr(replay_module, "_built", counted)
    table = await played(h)
    link = replay_link(h, table)
    first = (await kept_hands(h, table))[0].hand_no
    answers = [await replay(server, http, table, link, hand=10**6 + i) for i in range(5)]
    assert all(status == 200 and answer["hand"] == first for status, answer in answers)
    assert builds == [first]
