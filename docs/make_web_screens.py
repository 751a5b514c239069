"""Write the web table's screenshots into ``docs/`` (``docs/web-<lang>-<phase>.png``, linked from
``docs/web.md``): ``musbot play --web`` as a process, headless Chromium at phone size (420×860), a person's
page played through the phases (the lobby with its options, the mus, a card picked to discard, a bet waiting
on the stepper, the count)
and a spectator's page beside it, and the replay of a kept match (``musbot play --auto --seed 3``, paused on
its first bet), in Spanish and in English.

    python docs/make_web_screens.py          # needs /usr/bin/chromium and /usr/bin/chromedriver
    python docs/make_web_screens.py replay   # only the replay's pictures

The deal is the machine's chance (the solo game draws its own cards): each run shows other cards, the same
phases.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)
sys.path.insert(1, str(ROOT / "tests"))

from e2e.web_browser import (  # (the browser tests' own driver: the pictures are what they check)
    SoloWeb,
    auto_match,
    browser_missing,
    chrome,
    click,
    page_state,
    replay_link,
    replay_state,
    spectator_link,
    start_solo,
    wait_for,
)

OUT = ROOT / "docs"
PHASES = ("lobby", "mus", "discard", "bet", "count", "spectator")


def shoot(driver: Any, lang: str, phase: str, taken: set[str]) -> None:
    """Save what the page shows now (once it shows the table as it stands) as ``phase``."""
    wait_for(lambda: page_state(driver)["live"] == "1", what="a live frame")
    driver.save_screenshot(str(OUT / f"web-{lang}-{phase}.png"))
    taken.add(phase)
    print(f"wrote docs/web-{lang}-{phase}.png")


def changed(driver: Any, before: dict[str, Any], what: str = "a change") -> None:
    """Wait until the page shows something else than ``before``."""
    wait_for(lambda: page_state(driver) != before, timeout=30, what=what)


def start_from_the_lobby(driver: Any, lang: str, taken: set[str]) -> None:
    """The solo lobby as the page opens it: señas chosen there (its picture), then ▶ Start."""
    lobby = "#actions .options-line"
    wait_for(lambda: driver.execute_script(f"return !!document.querySelector('{lobby}')"), what="the lobby")
    before = driver.execute_script(f"return document.querySelector('{lobby}').textContent")
    click(driver, '#actions button.option[data-code="o_senas"]')
    wait_for(
        lambda: driver.execute_script(f"return document.querySelector('{lobby}').textContent") != before,
        what="señas chosen",
    )
    # (Once the press's answer, "Options updated.", has gone: it covered the title.)
    wait_for(lambda: driver.execute_script("return document.getElementById('toast').hidden"), what="quiet")
    shoot(driver, lang, "lobby", taken)
    click(driver, '#actions button.control[data-code="start"]')


def shoot_replay(driver: Any, solo: SoloWeb, table: str, lang: str) -> None:
    """The replay of ``table``'s kept match, paused on the first move that leaves a bet at stake."""
    driver.get(replay_link(solo, table, lang=lang))
    wait_for(lambda: replay_state(driver)["shown"], what="the replay")
    click(driver, "#replay-play")
    wait_for(lambda: replay_state(driver)["playing"] == "0", what="the replay paused")
    click(driver, "#replay-previous" if replay_state(driver)["hand"] != "1" else "#replay-back")
    wait_for(lambda: replay_state(driver)["hand"] == "1", what="the first hand")
    while True:
        state = replay_state(driver)
        stake = driver.execute_script("return document.getElementById('stake').textContent")
        if stake or state["at"] >= state["total"] - 1:
            break
        click(driver, "#replay-forward")
        wait_for(lambda at=state["at"] + 1: replay_state(driver)["at"] == at, what="a move forward")
    driver.save_screenshot(str(OUT / f"web-{lang}-replay.png"))
    print(f"wrote docs/web-{lang}-replay.png")


def capture(lang: str, only_replay: bool = False) -> None:
    """Play the solo game in ``lang`` from its page until every phase has its picture (unless
    ``only_replay``), then replay a kept match."""
    with tempfile.TemporaryDirectory() as data:
        table = auto_match(Path(data))
        solo = start_solo(Path(data), lang=lang, pause=0.3, lobby=not only_replay)
        driver = chrome(lang=lang)
        try:
            if only_replay:
                shoot_replay(driver, solo, table, lang)
                return
            driver.get(solo.link)
            player = driver.current_window_handle
            taken: set[str] = set()
            start_from_the_lobby(driver, lang, taken)
            wait_for(lambda: len(page_state(driver)["cards"]) == 4, what="the first hand")
            for _ in range(400):
                if taken >= set(PHASES):
                    shoot_replay(driver, solo, table, lang)
                    return
                state = wait_for(lambda: (s := page_state(driver))["live"] == "1" and s, timeout=30)
                if state["over"]:
                    if "count" not in taken:
                        shoot(driver, lang, "count", taken)
                    wait_for(lambda: not page_state(driver)["over"], timeout=30, what="the next deal")
                elif "mus" in state["calls"] and "mus" not in taken:
                    shoot(driver, lang, "mus", taken)
                elif state["pickable"] and not state["picked"]:
                    click(driver, f'#hand .slot[data-card="{state["pickable"][0]}"]')
                    wait_for(lambda: page_state(driver)["picked"])
                    if "discard" not in taken:
                        shoot(driver, lang, "discard", taken)
                elif state["confirm"]:
                    click(driver, "#confirm-discard")
                    wait_for(lambda: not page_state(driver)["confirm"])
                elif state["bet"]:
                    if "bet" not in taken:
                        click(driver, ".stepper .more")
                        shoot(driver, lang, "bet", taken)
                        driver.switch_to.new_window("window")
                        driver.get(spectator_link(solo, lang=lang))
                        wait_for(lambda: page_state(driver)["spectator"] == "1")
                        shoot(driver, lang, "spectator", taken)
                        driver.close()
                        driver.switch_to.window(player)
                    click(driver, "#bet")
                    wait_for(lambda: not page_state(driver)["bet"])
                elif state["calls"]:
                    calls = state["calls"]
                    code = (
                        "mus"
                        if "mus" in calls
                        else next((c for c in ("paso", "quiero", "nomus") if c in calls), calls[0])
                    )
                    click(driver, f'#actions button.call[data-code="{code}"]')
                    changed(driver, state)
                else:
                    changed(driver, state, what="the machines")
            raise SystemExit(f"not every phase came up in {lang}: {sorted(taken)}")
        finally:
            driver.quit()
            solo.stop()


def main(argv: list[str]) -> int:
    """Both languages' pictures (``replay``: the replay's only); 1 where no browser can take them."""
    missing = browser_missing()
    if missing:
        print(f"cannot take the screenshots: {missing}", file=sys.stderr)
        return 1
    for lang in ("es", "en"):
        capture(lang, only_replay=argv == ["replay"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
