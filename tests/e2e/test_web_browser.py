"""The web table in a real browser (issue 22): headless Chromium plays the solo game of ``musbot play --web``
from the page — discards by tapping cards, a bet with the stepper — while a spectator's page, open beside it,
never holds a card; a forged link is refused on the page; after a ``kill -9`` of the server and a restart,
the page reconnects by itself and plays on.

Skipped only where Chromium or its driver is not installed (``.ci/run`` installs them when apt is there).
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from .web_browser import (
    SoloWeb,
    browser_missing,
    chrome,
    click,
    page_state,
    spectator_link,
    start_solo,
    wait_for,
)

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=f"no browser: {browser_missing()}")

CALM = ("paso", "quiero", "nomus")


def act_once(driver: Any, done: dict[str, bool]) -> None:
    """One move of the page's player, as a person taps: a card to discard, the confirmation, a bet with the
    stepper (once), mus while no discard was made, else a calm word."""
    state = wait_for(lambda: (s := page_state(driver))["live"] == "1" and s, what="a live frame")
    if state["pickable"] and not state["picked"]:
        click(driver, f'#hand .slot[data-card="{state["pickable"][0]}"]')
        wait_for(lambda: page_state(driver)["picked"], what="the card picked")
    elif state["confirm"]:
        click(driver, "#confirm-discard")
        wait_for(lambda: not page_state(driver)["confirm"], what="the discard confirmed")
        done["discard"] = True
    elif state["bet"] and not done["bet"]:
        click(driver, ".stepper .more")
        click(driver, "#bet")
        wait_for(lambda: not page_state(driver)["bet"], what="the bet taken")
        done["bet"] = True
    elif "mus" in state["calls"] and not done["discard"]:
        click(driver, '#actions button.call[data-code="mus"]')
        wait_for(lambda: "mus" not in page_state(driver)["calls"], what="mus said")
    elif state["calls"]:
        code = next((c for c in CALM if c in state["calls"]), state["calls"][0])
        click(driver, f'#actions button.call[data-code="{code}"]')
        wait_for(
            lambda: page_state(driver)["calls"] != state["calls"] or page_state(driver)["k"] != state["k"]
        )
    else:
        wait_for(lambda: page_state(driver) != state, timeout=30, what="the machines' moves")


#: A hostile name, as in the chat tests: markup that must stay text on the page.
HOSTILE = '<img src=x onerror="document.title=1"><b>Ane</b>'


@pytest.fixture
def solo(tmp_path: Path) -> Any:
    running = start_solo(tmp_path / "data", name=HOSTILE)
    yield running
    running.stop()


def test_a_hand_played_from_the_page_while_a_spectator_sees_no_card(solo: SoloWeb, tmp_path: Path) -> None:
    driver = chrome()
    try:
        driver.get(solo.link)
        first = wait_for(lambda: (s := page_state(driver))["live"] == "1" and len(s["cards"]) == 4 and s)
        assert first["spectator"] == "0" and len(first["art"]) == 4  # her four cards, drawn
        # Her name is text, never markup: no element made of it, no script run by it.
        assert not driver.find_elements("css selector", "#app img, #app b")
        assert driver.find_element("css selector", "#seat-bottom .name").text == HOSTILE[:32]
        assert driver.title == "Mus"
        player = driver.current_window_handle
        driver.switch_to.new_window("window")
        driver.get(spectator_link(solo))
        watcher = driver.current_window_handle
        seen = wait_for(lambda: (s := page_state(driver))["spectator"] == "1" and s)
        assert seen["cards"] == [] and seen["art"] == []
        driver.switch_to.window(player)

        done = {"discard": False, "bet": False}
        for _ in range(300):
            if done["discard"] and done["bet"]:
                break
            act_once(driver, done)
            driver.switch_to.window(watcher)
            watched = page_state(driver)
            assert watched["cards"] == [] and watched["art"] == [], watched  # never a card outside the count
            driver.switch_to.window(player)
        assert done == {"discard": True, "bet": True}

        # A forged link: the page says it is refused, and shows no table.
        driver.switch_to.window(watcher)
        driver.get("about:blank")  # (the same address with another fragment would not load the page again)
        driver.get(solo.link[:-4] + "AAAA")
        refused = wait_for(lambda: page_state(driver)["banner"], what="the refusal")
        assert "not valid" in refused and page_state(driver)["cards"] == []

        # kill -9 and a restart on the same data directory and port: the page reconnects and plays on.
        driver.switch_to.window(player)
        before = page_state(driver)
        solo.stop(signal.SIGKILL)
        wait_for(lambda: page_state(driver)["banner"], what="the page noticing the server is gone")
        again = start_solo(tmp_path / "data", port=solo.port)
        solo.process, solo.link = again.process, again.link
        back = wait_for(
            lambda: (s := page_state(driver))["live"] == "1" and not s["banner"] and s, timeout=40
        )
        # The same game goes on (the next deal may have come meanwhile, if the hand was over).
        assert int(back["hand"]) in (int(before["hand"]), int(before["hand"]) + 1) and len(back["cards"]) in (
            0,
            4,
        )
        done["bet"] = True
        act_once(driver, done)  # and it still plays
    finally:
        driver.quit()
