"""The full-screen table never breaks a line at a no-break space: a button's key and label, a French colon
(``GRANDE : en paso``) stay on one line at 80x24 — Textual, as Rich, counts U+00A0 as a space to break at
(``5 ▶`` ended one line and ``Start`` began the next). Driven headless by Textual's pilot against the real
service, in Spanish, English and French; and the breaking rule itself."""

from __future__ import annotations

import itertools
import re

import pytest
from rich.cells import cell_len
from textual.content import Content
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Static

from adapters.console.screen import entry
from adapters.console.screen.table import TableScreen
from adapters.console.screen.wrap import NO_BREAK, break_offsets, broken
from bot.kernel import ChatRef, UserRef
from tests.service_helpers import Harness, code_of
from tests.unit.test_console_screen import settled

CHAT = ChatRef("console:local", private=True, title="Terminal")
#: Words held together by a no-break space (the whole run between breakable spaces).
_KEPT = re.compile(rf"[\S{NO_BREAK}]*[{NO_BREAK}][\S{NO_BREAK}]*")


def pieces(text: str, width: int) -> list[str]:
    offsets = [0, *break_offsets(text, width), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(offsets)]


def test_lines_break_at_spaces_never_at_a_no_break_space() -> None:
    assert pieces("1\u00a0Paso   2\u00a0Envido\u00a02", 12) == ["1\u00a0Paso   ", "2\u00a0Envido\u00a02"]
    assert pieces("GRANDE\u00a0: en paso", 10) == ["GRANDE\u00a0: ", "en paso"]
    assert pieces("a b c", 80) == ["a b c"]
    assert pieces("Ane and 🤖 Iker", 12) == ["Ane and ", "🤖 Iker"]  # a machine's mark stays with its name
    assert pieces("", 10) == [""]


def test_a_word_wider_than_the_line_is_cut_where_the_line_ends() -> None:
    assert pieces("ab cdefghij", 4) == ["ab ", "cdef", "ghij"]
    assert pieces("🤖🤖🤖 x", 4) == ["🤖🤖", "🤖 x"]  # two cells each
    for piece in pieces("🂠 Mus\u00a0·\u00a0Hand\u00a01 · Game 1 of 3 (0–0)", 7):
        assert cell_len(piece.rstrip(" ")) <= 7


def test_broken_content_keeps_its_styles_and_every_line_fits() -> None:
    content = Content.from_markup("[b]Envido\u00a02[/] or [i]Órdago\u00a0now[/]\nnext line")
    lines = broken(content, 10).split("\n")
    assert [line.plain for line in lines] == ["Envido\u00a02", "or", "Órdago\u00a0now", "next line"]
    assert [span.style for span in lines[0].spans] == ["b"]


def rendered(widget: Static) -> list[str]:
    """The widget's lines as drawn on screen (its padding too)."""
    width, height = widget.region.size
    return [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]


def broken_at_a_no_break_space(app: TableScreen) -> list[tuple[str, str]]:
    """(widget, words) for every run held by a no-break space that no drawn line of its widget holds whole
    (a run wider than the widget aside: it must be cut somewhere)."""
    found = []
    checked = 0
    for widget in app.query(Static):
        if not widget.display or widget.size.width == 0:
            continue
        lines = rendered(widget)
        visual = widget.visual
        text = visual.plain if isinstance(visual, Content) else ""
        for kept in _KEPT.findall(text):
            checked += 1
            if cell_len(kept) <= widget.content_size.width and not any(kept in line for line in lines):
                found.append((widget.id or "", kept))
    assert checked, "no words held by a no-break space on screen: nothing was checked"
    return found


async def play_some(pilot: Pilot[int], app: TableScreen, presses: int) -> None:
    """Start, then press the first sensible button ``presses`` times, checking the screen at each step."""
    for _ in range(presses):
        buttons = [code_of(b.token) for b in app.buttons[:9]]
        key = next((str(n) for n, c in enumerate(buttons, 1) if c in ("start", "discard")), "1")
        await pilot.press(key)
        await settled(pilot, app)
        await pilot.pause(0.1)
        assert broken_at_a_no_break_space(app) == []


@pytest.mark.parametrize("lang", ["es", "en", "fr"])
async def test_at_80x24_no_line_breaks_at_a_no_break_space(lang: str) -> None:
    h = Harness(settings=entry.flow_for_screen(), seed=3)
    user = UserRef("console:you", "Root", lang)
    await h.service.set_language(CHAT, user, lang)
    opened = await h.service.new_table(CHAT, user)
    assert opened.table is not None
    app = TableScreen(h.service, user, CHAT, opened.table, lang=lang, pace=0.02, clock=lambda: h.now)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        await pilot.pause(0.1)
        keys = app.query_one("#buttons", Static)
        assert len(rendered(keys)) >= 2, "the lobby's buttons take two lines at 80 columns"
        assert broken_at_a_no_break_space(app) == []
        await play_some(pilot, app, 8)
        await pilot.resize_terminal(60, 24)
        await pilot.pause(0.2)
        assert broken_at_a_no_break_space(app) == []
