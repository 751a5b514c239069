"""A finished match replayed in a real browser (issue 22, item 6): a machine-only match with señas is played
and kept by ``musbot play --auto``, the web table of ``musbot play --web`` serves its replay at ``/r/<table>``
(the address ``/history`` gives), and headless Chromium plays it: every seat's cards drawn, the moves one by
one, the count with its reasons at the hand's end, then the next hand by itself; pause, a move back and
forth, the previous and next hand; the viewer's language; a forged link and a table's link refused on the
page. Skipped only where Chromium or its driver is not installed (``.ci/run`` installs them when apt is).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from .web_browser import (
    SoloWeb,
    auto_match,
    browser_missing,
    chrome,
    click,
    replay_link,
    replay_state,
    start_solo,
    wait_for,
)

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=f"no browser: {browser_missing()}")


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SoloWeb, str]]:
    """A kept match (its table id) and a web table serving its data directory."""
    data = tmp_path_factory.mktemp("replay") / "data"
    table = auto_match(data)
    solo = start_solo(data, pause=0.15)
    yield solo, table
    solo.stop()


def test_a_kept_match_plays_hand_by_hand_in_the_browser(kept: tuple[SoloWeb, str]) -> None:
    solo, table = kept
    driver = chrome()
    try:
        driver.get(replay_link(solo, table))
        first = wait_for(
            lambda: (s := replay_state(driver))["shown"] and s["hand"] == "1" and s, what="hand 1"
        )
        assert first["playing"] == "1" and first["position"].startswith("Hand 1 · 1 of ")
        assert first["rows"] == [4, 4, 4, 4]  # every seat's cards, drawn
        assert first["next"] == "Next hand" and first["known"] == 0
        assert "#k=" not in driver.current_url  # the credential left the address bar
        # It plays by itself, a move at a time, to the count with its reasons...
        moving = wait_for(lambda: (s := replay_state(driver))["at"] >= 3 and s, what="moves played")
        assert moving["story"] >= 1
        counted = wait_for(lambda: (s := replay_state(driver))["over"] and s, what="the count", timeout=40)
        assert counted["at"] == counted["total"] and counted["count"] and all(counted["count"])
        # ...then to the next hand.
        second = wait_for(lambda: (s := replay_state(driver))["hand"] == "2" and s, what="hand 2", timeout=20)
        assert second["position"].startswith("Hand 2 · 2 of ") and not second["over"]

        # Paused, it stays where it is; a move forward and back, by hand.
        click(driver, "#replay-play")
        held = wait_for(lambda: (s := replay_state(driver))["playing"] == "0" and s, what="paused")
        time.sleep(1.0)
        assert replay_state(driver)["at"] == held["at"]
        click(driver, "#replay-forward")
        assert wait_for(lambda: replay_state(driver)["at"] == held["at"] + 1, what="a move forward")
        click(driver, "#replay-back")
        click(driver, "#replay-back")
        assert wait_for(lambda: replay_state(driver)["at"] == max(0, held["at"] - 1), what="two moves back")
        # The next and the previous hand.
        click(driver, "#replay-next")
        assert wait_for(lambda: (s := replay_state(driver))["hand"] == "3" and s["at"] == 0, what="hand 3")
        click(driver, "#replay-previous")
        assert wait_for(lambda: (s := replay_state(driver))["hand"] == "2" and s["at"] == 0, what="hand 2")
        assert replay_state(driver)["playing"] == "0"  # still paused: nothing moves until played
        click(driver, "#replay-play")
        assert wait_for(lambda: replay_state(driver)["at"] >= 2, what="playing again")
    finally:
        driver.quit()


def test_the_replay_reads_in_the_viewers_language_and_refuses_other_links(kept: tuple[SoloWeb, str]) -> None:
    solo, table = kept
    driver = chrome(lang="es")
    try:
        driver.get(replay_link(solo, table, lang="en"))  # the chat reads English, the viewer Spanish
        spanish: dict[str, Any] = wait_for(
            lambda: (s := replay_state(driver))["shown"] and s, what="the replay"
        )
        assert spanish["next"] == "Mano siguiente" and spanish["position"].startswith("Mano 1 · 1 de ")
        refused = {
            "forged": replay_link(solo, table)[:-4] + "AAAA",
            "expired": replay_link(solo, table, ttl=-60),
            "a table's own link": solo.link.replace("/t/", "/r/"),
        }
        for why, address in refused.items():
            driver.get("about:blank")
            driver.get(address)
            shown = wait_for(lambda: (s := replay_state(driver))["banner"] and s, what=f"the {why} refused")
            assert "no vale" in shown["banner"] and not shown["shown"] and shown["rows"] == [], why
    finally:
        driver.quit()
