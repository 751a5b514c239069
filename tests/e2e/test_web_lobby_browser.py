"""The lobby and a new game in a real browser (headless Chromium): ``musbot play --web`` opens the solo
lobby on the page, whose options and ▶ Start are pressed there while a watcher's page shows the same lobby
with nothing to press; a group's lobby where a player seated from the chat takes another seat from his
page (unseated, it had nothing to press) and the creator's page chooses an option and starts; and, after a
finished match, "New game" on the page opens the chat's next lobby and the page follows it (and keeps
following it after a reload).

Skipped only where Chromium or its driver is not installed (``.ci/run`` installs them when apt is there).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import pytest
from service_helpers import ANE, BRAIS, GROUP, Harness, english

from adapters.web.auth import telegram_init_data
from bot.kernel import UserRef
from bot.table import FlowSettings

from .test_web_lobby import finished
from .web_browser import browser_missing, chrome, click, page_state, spectator_link, start_solo, wait_for
from .web_harness import TELEGRAM_TOKEN, WebServer, serve

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=f"no browser: {browser_missing()}")
_T = TypeVar("_T")


def lobby_state(driver: Any) -> dict[str, Any]:
    """What the page's lobby shows: its status, seats, options line and the buttons one may press."""
    return driver.execute_script(
        """
        const q = (s) => Array.from(document.querySelectorAll(s));
        return {
          status: document.body.dataset.status, spectator: document.body.dataset.spectator,
          seats: q('.seat .name').map((e) => e.textContent),
          joins: q('.seat button.join').map((e) => e.dataset.code),
          options: q('#actions button.option').map((e) => e.dataset.code),
          controls: q('#actions button.control').map((e) => e.dataset.code),
          buttons: q('button').filter((e) => !e.closest('#replay')).length,
          line: (e => e ? e.textContent : '')(document.querySelector('#actions .options-line')),
          note: (e => e.hidden ? '' : e.textContent)(document.getElementById('note')),
          again: !!document.getElementById('again'), path: location.pathname, cards: q('#hand .slot').length,
        };
        """
    )


def test_the_solo_lobby_is_chosen_and_started_from_the_page_and_a_watcher_presses_nothing(
    tmp_path: Path,
) -> None:
    solo = start_solo(tmp_path, lang="en", lobby=True)
    driver = chrome()
    try:
        driver.get(solo.link)
        lobby = wait_for(lambda: (s := lobby_state(driver))["status"] == "lobby" and s, what="the lobby")
        assert lobby["options"] == ["o_senas", "o_target", "o_mode", "o_level"]
        assert lobby["controls"] == ["start", "cancel"] and lobby["joins"] == []
        assert "no señas" in lobby["line"] and sorted(lobby["seats"])[0] == "Ane"
        player = driver.current_window_handle
        driver.switch_to.new_window("window")
        driver.get(spectator_link(solo))
        watching = wait_for(lambda: (s := lobby_state(driver))["status"] == "lobby" and s, what="a watcher")
        assert watching["spectator"] == "1" and watching["buttons"] == 0, watching
        assert watching["line"] == lobby["line"] and sorted(watching["seats"]) == sorted(lobby["seats"])
        driver.switch_to.window(player)
        click(driver, '#actions button.option[data-code="o_senas"]')
        wait_for(lambda: "señas on" in lobby_state(driver)["line"], what="señas chosen")
        driver.switch_to.window(watching_handle := driver.window_handles[-1])
        wait_for(lambda: "señas on" in lobby_state(driver)["line"], what="the watcher told")
        driver.switch_to.window(player)
        click(driver, '#actions button.control[data-code="start"]')
        wait_for(lambda: len(page_state(driver)["cards"]) == 4, what="the first deal")
        driver.switch_to.window(watching_handle)
        seen = wait_for(lambda: (s := lobby_state(driver))["status"] == "playing" and s, what="the game")
        assert seen["cards"] == 0 and page_state(driver)["art"] == []
    finally:
        driver.quit()
        solo.stop()


@dataclass
class Served:
    """The web table served from an event loop of its own (selenium drives the browser from the test's
    thread)."""

    loop: asyncio.AbstractEventLoop
    harness: Harness
    server: WebServer

    def run(self, work: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(60)

    def link(self, user: UserRef, table: str) -> str:
        return f"{self.server.base}/t/{table}#k={self.server.link(user, table)}"

    def mini_app(self, user_id: int, table: str) -> str:
        """The address Telegram opens for a group member following the table's direct link."""
        person = json.dumps({"id": user_id, "first_name": "Zuri", "language_code": "en"})
        fields = {"auth_date": str(int(self.harness.now)), "user": person, "start_param": table}
        data = quote(telegram_init_data(TELEGRAM_TOKEN, fields), safe="")
        return f"{self.server.base}/t/?tgWebAppStartParam={table}#tgWebAppData={data}"


@pytest.fixture
def served() -> Iterator[Served]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> Served:
        harness = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=0), seed=11)
        await english(harness)
        return Served(loop, harness, await serve(harness))

    running = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    try:
        yield running
    finally:
        running.run(running.server.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_a_group_lobby_seat_option_and_start_from_the_pages(served: Served) -> None:
    h = served.harness
    tid = served.run(h.lobby(GROUP, ANE))
    driver = chrome()
    try:
        driver.get(served.mini_app(99, tid))  # a member by Telegram's word only: watches
        wait_for(lambda: lobby_state(driver)["status"] == "lobby", what="the watcher's lobby")
        watcher = driver.current_window_handle
        driver.switch_to.new_window("window")
        driver.get(served.link(BRAIS, tid))
        brais = driver.current_window_handle
        watching = wait_for(lambda: (s := lobby_state(driver))["status"] == "lobby" and s, what="his lobby")
        assert watching["spectator"] == "1" and watching["buttons"] == 0, watching
        served.run(h.press(BRAIS, h.token(tid, "lobby", GROUP.key, "seat1")))  # he sits in the chat
        offered = wait_for(lambda: (s := lobby_state(driver))["joins"] and s, what="other free seats")
        assert sorted(offered["joins"]) == ["seat2", "seat3"] and offered["options"] == []
        assert offered["note"] == "Waiting for Ane to start the game." and offered["controls"] == ["leave"]
        click(driver, '.seat button.join[data-code="seat3"]')  # and takes another from the page
        wait_for(lambda: sorted(lobby_state(driver)["joins"]) == ["seat1", "seat2"], what="Brais moved")
        driver.switch_to.new_window("window")
        driver.get(served.link(ANE, tid))
        wait_for(lambda: "Brais" in lobby_state(driver)["seats"], what="Ane's lobby")
        click(driver, '#actions button.option[data-code="o_senas"]')
        wait_for(lambda: "señas on" in lobby_state(driver)["line"], what="señas on")
        click(driver, '#actions button.control[data-code="start"]')
        wait_for(lambda: len(page_state(driver)["cards"]) == 4, what="Ane's cards")
        driver.switch_to.window(brais)
        wait_for(lambda: len(page_state(driver)["cards"]) == 4, what="Brais's cards")
        driver.switch_to.window(watcher)
        seen = wait_for(lambda: (s := lobby_state(driver))["status"] == "playing" and s, what="the game")
        assert seen["spectator"] == "1" and seen["cards"] == 0
        state = served.run(h.load(tid))
        assert state.table.options.senas and state.table.seats[3].user == BRAIS.key
    finally:
        driver.quit()


def test_new_game_after_a_finished_match_and_the_page_follows_the_new_lobby(served: Served) -> None:
    h = served.harness
    tid = served.run(finished(h))
    driver = chrome()
    try:
        driver.get(served.link(ANE, tid))
        wait_for(lambda: lobby_state(driver)["again"], what="New game at the end of the match")
        click(driver, "#again")
        new = wait_for(
            lambda: (s := lobby_state(driver))["status"] == "lobby" and s["path"] != f"/t/{tid}" and s,
            what="the new lobby",
        )
        table = new["path"].rsplit("/", 1)[1]
        assert served.run(h.tables.table_for_chat(GROUP.key)) == table
        assert "start" in new["controls"] and "k=" not in driver.current_url
        driver.refresh()  # the page keeps following the new table, with the credential it was given
        again = wait_for(lambda: (s := lobby_state(driver))["status"] == "lobby" and s, what="after a reload")
        assert again["path"] == f"/t/{table}" and "start" in again["controls"]
        click(driver, '#actions button.control[data-code="start"]')
        wait_for(lambda: len(page_state(driver)["cards"]) == 4, what="the new game's first deal")
    finally:
        driver.quit()
