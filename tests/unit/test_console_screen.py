"""The full-screen terminal table, driven headless by Textual's pilot against the real service (in-process
stores, a fake clock): every move shown in turn with a pause, a seña caught 1.2 s after it was shown, the
header kept at 80x24, a bet amount typed; and when ``musbot play`` opens it."""

from __future__ import annotations

import argparse
import io
import itertools
import random
import re
import time
from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from adapters.console.screen import entry
from adapters.console.screen.panels import screen_text
from adapters.console.screen.table import TableScreen
from bot.kernel import ChatRef, TableStatus, UserRef
from bot.screens import action_label, labelled, seat_name
from engine.actions import ActionKind
from engine.ai.baseline import BaselinePlayer
from engine.ai.policy import Policy, make_policy
from engine.hand_types import Phase
from engine.senas import Sena, true_senas
from engine.views import SeatView
from tests.service_helpers import Harness, code_of

ME = UserRef("console:you", "Root", "en")
CHAT = ChatRef("console:local", private=True, title="Terminal")
PACE = 0.05
"""Seconds between two moves of the feed in these tests (0.7 at a real table)."""


class Feed(TableScreen):
    """The table, noting when each line of the feed was shown (real time) and, if asked, moving the fake
    clock on by ``step_seconds`` per move shown, as the real pace would."""

    def __init__(self, h: Harness, *, step_seconds: float = 0.0) -> None:
        super().__init__(h.service, ME, CHAT, "", lang="en", pace=PACE, clock=lambda: h.now)
        self.h = h
        self.step_seconds = step_seconds
        self.times: list[float] = []

    def _feed(self, lines: list[str] | tuple[str, ...]) -> None:
        self.h.advance(self.step_seconds)
        now = time.monotonic()
        self.times.extend(now for _ in lines)
        super()._feed(lines)


async def opened(h: Harness, *, senas: bool = False) -> str:
    """A solo table's lobby (señas on if asked): its id."""
    outcome = await h.service.new_table(CHAT, ME)
    assert outcome.table is not None
    if senas:
        lobby = next(m for m in outcome.messages if m.slot == "lobby")
        toggle = next(b.token for row in lobby.buttons for b in row if code_of(b.token) == "o_senas")
        assert (await h.service.press(ME, toggle)).ok
    return outcome.table


async def settled(pilot: Pilot[int], app: TableScreen, timeout: float = 20.0) -> None:
    """Wait until the feed has caught up with the service and the buttons are back."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.02)
        if app.caught_up and not app._syncing.locked():
            return
    raise AssertionError("the table never caught up")


def key_of(app: TableScreen, code: str | Callable[[str], bool]) -> str | None:
    """The key (1–9) of the button whose code is ``code`` (or passes it), if on screen."""
    wanted = code if callable(code) else (lambda c: c == code)
    for n, button in enumerate(app.buttons[:9], 1):
        if wanted(code_of(button.token)):
            return str(n)
    return None


async def play_on(pilot: Pilot[int], app: TableScreen) -> None:
    """One sensible key: start, next hand after the count, discard the first card, else the first button."""
    for code in ("start", "discard"):
        key = key_of(app, code)
        if key is not None:
            await pilot.press(key)
            return
    if app.counted:
        await pilot.press("enter")
        return
    await pilot.press("1")


def said(app: TableScreen, view: SeatView) -> list[str]:
    """The feed lines of every word said in the hand of ``view`` (discards aside), in order."""
    assert app.table is not None
    t = app.t
    return [
        labelled(t, seat_name(app.table, a.seat), action_label(t, a.kind, a.amount, a.total))
        for a in view.actions
        if a.kind is not ActionKind.DISCARD
    ]


async def test_every_move_is_shown_in_turn_with_a_pause_the_last_answer_before_the_count() -> None:
    h = Harness(settings=entry.flow_for_screen(), seed=3)
    app = Feed(h)
    app.table_id = await opened(h)
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot, app)
        lobby = screen_text(app)  # the options first, the keys, what the suit symbols are
        assert "▶\u00a0Start" in lobby and "q quit" in lobby  # (a label does not break)
        legend = "🪙 oros · 🍷 copas · 🗡️ espadas · 🪵 bastos: suits never matter in Mus."
        assert legend in str(app.query_one("#story", Static).content) and "suits never matter" in lobby
        runs = []
        while not app.counted:
            before = len(app.feed_lines)
            await play_on(pilot, app)
            await settled(pilot, app)
            runs.append(app.times[before:])
        assert app.match is not None and app.match.hand is not None and app.match.hand.over
        view = app.match.hand.view_for(0)
        words = said(app, view)
        count = app.feed_lines.index("🂡 Hand 1 · count")
        shown = [line for line in app.feed_lines[:count] if line in words]
        assert shown == words  # each word, once, in order: nothing skipped, nothing shown twice
        last = max(i for i, line in enumerate(app.feed_lines[:count]) if line in words)
        assert app.feed_lines[last] == words[-1]  # the last answer is shown before the count...
        assert app.times[count] - app.times[last] >= PACE * 0.9  # ...a pause before the count comes
        longest = max(runs, key=len)
        assert len(longest) >= 3  # a run of machine moves after one key
        gaps = [b - a for a, b in itertools.pairwise(longest) if b > a]  # (a step's lines come together)
        assert gaps and min(gaps) >= PACE * 0.9
        text = screen_text(app)
        assert "Root and 🤖 Iker" in text and "🤖 Maite and 🤖 Nerea" in text  # scores named by pair
        assert "⏎: next hand" in text and "/newgame" not in text


class Signalling:
    """A machine player that makes a true seña at its first chance (and plays as the baseline)."""

    name = "signalling"

    def __init__(self) -> None:
        self.inner = BaselinePlayer()

    def decide(self, view: SeatView, rng: random.Random) -> object:
        return self.inner.decide(view, rng)

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        if not view.senas_enabled or view.senas_left == 0 or len(view.cards) != 4:
            return None
        if view.phase in (Phase.COUNT, Phase.OVER):
            return None
        options = true_senas(view.cards)
        return options[0] if options else None

    def wants_catch(self, view: SeatView, sena: object, rng: random.Random) -> bool:
        return False


def signalling_policy(level: str) -> Policy:
    make_policy(level)  # (a level the lobby offers)
    return Signalling()  # type: ignore[return-value]


async def test_a_sena_shown_late_is_caught_1_2_s_after_it_was_shown() -> None:
    """The feed shows a move a second (on the fake clock); a rival's seña gets a button that names whose
    seña it catches, and a press 1.2 s after it appeared catches it, more than 3 s after it was made."""
    h = Harness(settings=entry.flow_for_screen(), seed=5)
    h.deps.policy = signalling_policy
    app = Feed(h, step_seconds=1.0)
    app.table_id = await opened(h, senas=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot, app)
        for _ in range(60):
            late = [c for c in app.catchable if made_at(app, c.token) <= c.shown_at - 2.0]
            if late:
                break
            await play_on(pilot, app)
            deadline = time.monotonic() + 10
            while not (app.catchable or app.caught_up) and time.monotonic() < deadline:
                await pilot.pause(0.01)
            await pilot.pause(0.01)
        else:
            raise AssertionError("no rival seña was shown late")
        chosen = late[0]
        maker = seat_of_catch(app, chosen.token)
        assert re.fullmatch(rf"{chosen.key} ⚡ Catch 🤖 \w+'s (second )?seña", chosen.label)
        assert seat_name(app.table, maker) in chosen.label  # type: ignore[arg-type]
        assert [c.token for c in app.catchable].count(chosen.token) == 1  # one button per seña
        h.set_time(chosen.shown_at + 1.2)
        assert h.now - made_at(app, chosen.token) > 3.0  # too late on the maker's clock
        await pilot.press(chosen.key)
        await settled(pilot, app)
        assert "Caught!" in screen_text(app)
        table = await h.service.load_table(app.table_id)
        assert table is not None
        index = int(code_of(chosen.token).removeprefix("catch"))
        assert any(line.startswith("You caught") for line in app.feed_lines)
        state = app.match
        assert state is not None and state.hand is not None
        assert state.hand.view_for(0).senas[index].sena is not None


def made_at(app: TableScreen, token: str) -> float:
    assert app.match is not None and app.match.hand is not None
    return app.match.hand.senas[int(code_of(token).removeprefix("catch"))].made_at


def seat_of_catch(app: TableScreen, token: str) -> int:
    assert app.match is not None and app.match.hand is not None
    return app.match.hand.senas[int(code_of(token).removeprefix("catch"))].seat


def words_on_screen(app: TableScreen) -> set[str]:
    """Every word the screen's texts hold (a word cut by a wrap would not be one of them)."""
    texts = [*app.feed_lines, *(b.label for b in app.buttons), app.query_one(Input).placeholder]
    for widget in app.query(Static):
        texts.append(str(widget.content))
    return {w for text in texts for w in text.split()}


async def test_at_80x24_the_header_stays_and_long_lines_wrap_at_words() -> None:
    h = Harness(settings=entry.flow_for_screen(), seed=3)
    app = Feed(h)
    app.table_id = await opened(h)
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot, app)
        await play_on(pilot, app)  # start
        await settled(pilot, app)
        for _ in range(4):
            await play_on(pilot, app)
            await settled(pilot, app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        header = app.query_one("#header")
        assert header.region.y == 0 and header.region.height >= 2 and header.region.width == 80
        rows = screen_text(app).splitlines()
        assert len(rows) == 24 and rows[0].lstrip().startswith("🂠 Mus · Hand 1")
        assert "Root and 🤖 Iker" in rows[1] + rows[2]
        assert "q quit" in "\n".join(rows[-3:])  # the keys stay too
        words = words_on_screen(app)
        on_screen = {w for row in rows for w in re.split(r"[\s│▏▕▎▍▌▋▊▉█▁▂▃▄▅▆▇▔]+", row) if w}
        assert on_screen - words == set()  # every word whole: wrapped at words, never cut


async def test_a_bet_amount_is_typed_and_checked() -> None:
    h = Harness(settings=entry.flow_for_screen(), seed=3)
    app = Feed(h)
    app.table_id = await opened(h)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)
        for _ in range(40):
            if app.legal_amounts:
                break
            await play_on(pilot, app)
            await settled(pilot, app)
        assert app.legal_amounts, "never a turn to bet"
        low, high = min(app.legal_amounts), max(app.legal_amounts)
        await pilot.press("a")
        await pilot.press(*str(high + 1), "enter")
        assert f"Type a whole number from {low} to {high}." in screen_text(app)
        before = list(app.feed_lines)
        amount = 7 if 7 in app.legal_amounts else low
        await pilot.press("backspace", "backspace", "backspace", *str(amount), "enter")
        await settled(pilot, app)
        mine = [line for line in app.feed_lines[len(before) :] if line.startswith("Root:")]
        assert mine and (mine[0] == f"Root: envido {amount}" or mine[0].startswith(f"Root: {amount} more"))
        await pilot.press("r")  # the rules in place of the table, then back
        assert "r or Esc: back to the table" in screen_text(app) and "🪙 oros" in app.rules_text
        assert app.rules_text in str(app.query_one("#count", Static).content)
        await pilot.press("escape")
        assert "q quit" in screen_text(app) and app.query_one("#seats", Static).display
        await pilot.press("q")
    assert app.return_value == 0


async def test_a_click_on_a_button_does_what_its_key_does() -> None:
    h = Harness(settings=entry.flow_for_screen(), seed=3)
    app = Feed(h)
    app.table_id = await opened(h)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)
        keys = str(app.query_one("#buttons", Static).content)
        assert (await h.service.load_table(app.table_id)).status is TableStatus.LOBBY  # type: ignore[union-attr]
        await pilot.click("#buttons", offset=(1 + keys.index("▶") + 1, 0))  # (1: the row's padding)
        await settled(pilot, app)
        assert (await h.service.load_table(app.table_id)).status is TableStatus.PLAYING  # type: ignore[union-attr]
        assert app.feed_lines[0] == "— Hand 1 —"


@pytest.mark.parametrize(
    ("flags", "ttys", "full"),
    [
        ([], (True, True, True), True),
        (["--plain"], (True, True, True), False),
        (["--auto"], (True, True, True), False),
        ([], (True, False, True), False),  # output piped
        ([], (False, True, True), False),  # input piped
        ([], (True, True, False), False),  # errors to a file: Textual would draw there
    ],
)
def test_the_full_screen_opens_on_a_terminal_unless_plain(
    flags: list[str], ttys: tuple[bool, bool, bool], full: bool
) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--auto", action="store_true")
    entry.add_arguments(parser)
    args = parser.parse_args(flags)

    class End(io.StringIO):
        def __init__(self, tty: bool) -> None:
            super().__init__()
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    assert entry.wanted(args, *(End(tty) for tty in ttys)) is full
