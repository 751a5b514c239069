"""A Telegram Mini App opened by its direct link, in a real browser (issue 22, "Who is who").

A group's table links to ``https://t.me/<bot>/<app>?startapp=<table>``. Telegram opens such a link at the
address registered for the app with @BotFather (``WEB_PUBLIC_URL/t/``, or the server's root), the table in
the ``tgWebAppStartParam`` query parameter and in ``initData``'s ``start_param``, and ``initData`` in the
address's fragment (``#tgWebAppData=…``). Headless Chromium opens the page so, as Telegram would: the page
finds its table, the server checks ``initData`` (signed as Telegram signs it) and answers with that
person's seat — their own cards — or, for someone not seated, the public table; forged ``initData`` is
refused on the page. The credential leaves the address bar.

Skipped only where Chromium or its driver is not installed (``.ci/run`` installs them when apt is there).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import pytest
from service_helpers import ANE, BRAIS, GROUP, Harness, english

from adapters.web.auth import telegram_init_data
from bot.table import FlowSettings
from engine.cards import card_name

from .web_browser import browser_missing, chrome, page_state, wait_for
from .web_harness import WebServer, serve

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=f"no browser: {browser_missing()}")

#: The bot token the web harness checks initData with.
BOT_TOKEN = "123456:TEST-token"
_T = TypeVar("_T")


@dataclass
class Served:
    """The web table served from an event loop of its own (selenium drives the browser from the test's
    thread), a group's table started on it."""

    loop: asyncio.AbstractEventLoop
    harness: Harness
    server: WebServer
    table: str

    def run(self, work: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(30)

    def opened_by_telegram(self, path: str, person: dict[str, object], *, bot_token: str = BOT_TOKEN) -> str:
        """The address Telegram opens for ``person`` following the direct link to this table: the app's
        registered ``path``, the table in the query and in ``initData``, ``initData`` in the fragment."""
        fields = {
            "auth_date": str(int(self.harness.now)),
            "user": json.dumps(person),
            "start_param": self.table,
        }
        data = quote(telegram_init_data(bot_token, fields), safe="")
        return (
            f"{self.server.base}{path}?tgWebAppStartParam={self.table}"
            f"#tgWebAppData={data}&tgWebAppVersion=8.0&tgWebAppPlatform=android"
        )


@pytest.fixture
def served() -> Iterator[Served]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> Served:
        harness = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=30))
        await english(harness)
        table = await harness.started(GROUP, ANE, (BRAIS, 1))
        return Served(loop, harness, await serve(harness), table)

    running = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    try:
        yield running
    finally:
        running.run(running.server.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.mark.parametrize("path", ["/t/", "/"])
def test_the_direct_link_opens_a_players_seat_and_a_watchers_public_table(served: Served, path: str) -> None:
    state = served.run(served.harness.load(served.table))
    assert state.match is not None and state.match.hand is not None
    ane_cards = sorted(card_name(c) for c in state.match.hand.hands[0])
    driver = chrome()
    try:
        driver.get(served.opened_by_telegram(path, {"id": 1, "first_name": "Ane", "language_code": "en"}))
        seen = wait_for(lambda: (s := page_state(driver))["cards"] and s, what="Ane's seat drawn")
        assert sorted(seen["cards"]) == ane_cards and seen["spectator"] != "1", seen
        assert "tgWebAppData" not in driver.current_url and "hash=" not in driver.current_url
        # Someone of the group who is not seated watches: the public table, no card of anyone's. (Each opening
        # is a new page, as each is a new Mini App: not a jump within the same address.)
        driver.get("about:blank")
        driver.get(served.opened_by_telegram(path, {"id": 99, "first_name": "Zuri"}))
        watching = wait_for(lambda: (s := page_state(driver))["spectator"] == "1" and s, what="a watcher")
        assert watching["cards"] == [] and watching["art"] == [], watching
        # initData that Telegram did not sign (another bot's token) is refused on the page.
        driver.get("about:blank")
        driver.get(served.opened_by_telegram(path, {"id": 1, "first_name": "Ane"}, bot_token="999:other"))
        refused = wait_for(lambda: (s := page_state(driver))["banner"] and s, what="the refusal")
        assert refused["cards"] == [] and "not valid" in refused["banner"], refused
    finally:
        driver.quit()
