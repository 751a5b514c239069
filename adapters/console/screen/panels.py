"""What the full-screen table's panels say, from the player's view after the feed's last move: the header
(where the hand stands, the score named by pair), the seats, the player's cards, the hand's story and the
count. The words are the core's (:mod:`bot.screens`); only their arrangement is the terminal's."""

from __future__ import annotations

from textual.app import App

from adapters.console.screen import texts
from bot.i18n import Translator
from bot.kernel import TableState
from bot.screens import (
    SENA_NAMES,
    Renderer,
    cards_label,
    count_lines,
    hand_summary,
    header_line,
    labelled,
    lance_lines,
    mus_lines,
    seat_name,
    stake_line,
    stopped_line,
    team_names,
)
from engine.hand_types import Phase
from engine.match import Match
from engine.views import SeatView


def header(t: Translator, table: TableState, match: Match, view: SeatView, now: float) -> str:
    """The core's first line of the table (hand, game, vaca, target) and the score named by pair."""
    first = header_line(t, table, match.config)
    target = view.target
    score = t.format(
        texts.SCORE,
        team_a=team_names(table, 0),
        a=min(view.scores[0], target),
        team_b=team_names(table, 1),
        b=min(view.scores[1], target),
    )
    return f"{first}\n{score}"


def seat_lines(t: Translator, table: TableState, view: SeatView) -> list[str]:
    """``▶ 🤖 Nerea · rival · mano``: each seat, who it is to the player, the mano, whose turn it is."""
    lines = []
    for seat in range(4):
        role = texts.YOU if seat == view.seat else texts.PARTNER if seat == view.partner else texts.RIVAL
        tags = [t.gettext(role)] + ([t.gettext(texts.MANO)] if seat == view.mano else [])
        mark = "▶" if view.turn == seat else " "
        lines.append(f"{mark} {seat_name(table, seat)} · {' · '.join(tags)}")
    return lines


def card_lines(t: Translator, table: TableState, view: SeatView) -> list[str]:
    """The player's cards and what they hold, and the señas the partner made."""
    lines = [t.format(texts.YOUR_CARDS, cards=cards_label(view.cards))]
    if len(view.cards) == 4:
        lines[0] += f"  → {hand_summary(t, view.cards)}"
    if view.phase is Phase.DISCARD and len(view.cards) == 4:
        lines.append(t.gettext(texts.CHOOSE_DISCARDS))
    for sena in view.partner_senas():
        name = seat_name(table, view.partner)
        lines.append(t.format(texts.PARTNER_SENA, name=name, sena=t.gettext(SENA_NAMES[sena])))
    return lines


def story_lines(t: Translator, table: TableState, view: SeatView) -> list[str]:
    """The hand's story so far (the mus, every lance's words and results) and what is at stake."""
    lines = mus_lines(t, table, view.actions) + lance_lines(t, table, view)
    stake = stake_line(t, table, view)
    return [*lines, stake] if stake else lines


def count_panel(t: Translator, table: TableState, match: Match, view: SeatView, now: float) -> list[str]:
    """The count: its title, the hands shown, each lance's reasons, the score named by pair, what the hand
    won, and the key for what comes next."""
    lines = [t.format(texts.COUNT_TITLE, n=table.hand_no)]
    if view.shown is not None:
        for seat in range(4):
            cards = view.shown[seat]
            lines.append(
                labelled(t, seat_name(table, seat), f"{cards_label(cards)} ({hand_summary(t, cards)})")
            )
    lines.extend(count_lines(t, table, view))
    stopped = stopped_line(t, table, view)
    if stopped is not None:
        lines.append(stopped)
    lines.append(header(t, table, match, view, now).splitlines()[-1])
    # The core's last line at the end of a match names a chat command: a terminal has a key instead.
    results = Renderer(table, match, now).results_lines()
    lines.extend(results[:-1] if match.over else results)
    lines.append(t.gettext(texts.MATCH_OVER if match.over else texts.NEXT_HAND))
    return lines


def lobby(t: Translator, text: str) -> tuple[str, str]:
    """The core's lobby as the header (its first line) and the panel (the rest, then the suits' legend)."""
    first, _, rest = text.partition("\n")
    return first, f"{rest}\n\n{texts.suits_line(t)}"


def screen_text(app: App[object]) -> str:
    """A running app's screen as plain text, row by row (what a capture writes; the tests read it)."""
    # As App.export_screenshot renders the screen, without the SVG.
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)
