"""The hand as the player saw it grow: one step per entry of the hand's journal (a word said, a seña, a
catch), each drawn from the player's own view at that moment, so that the full-screen table can show every
move in turn, with a pause, and never show a move before its turn.

A hand's record replays to the same state (:mod:`engine.record`): replaying its first ``k`` entries gives
the hand as it stood after the ``k``-th, and the player's :meth:`~engine.hand.Hand.view_for` of it is what
the player could know then: never a hidden card. Only what the view shows makes a line of the feed (a
machine catching a seña is not in anyone else's view, and is not told).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.console.screen import texts
from bot.i18n import Translator
from bot.kernel import TableState
from bot.screens import (
    LANCE_NAMES,
    SENA_NAMES,
    action_label,
    labelled,
    result_words,
    seat_name,
)
from engine.actions import ActionKind
from engine.hand import Hand
from engine.record import hand_after, hand_steps, record_of
from engine.views import SeatView, SenaView


def views_after(hand: Hand, seat: int, first: int) -> list[SeatView]:
    """``seat``'s views of ``hand`` after each journal entry from the ``first``-th on (1-based: the view
    after entry ``first``, ``first + 1``…, the last one the hand as it stands)."""
    record = record_of(hand)
    total = len(record.actions)
    return [
        hand.view_for(seat) if done == total else replayed.view_for(seat)
        for done, replayed in hand_steps(record, first)
    ]


def view_before(hand: Hand, seat: int, done: int) -> SeatView:
    """``seat``'s view of ``hand`` after its first ``done`` journal entries (0: as dealt)."""
    record = record_of(hand)
    if done >= len(record.actions):
        return hand.view_for(seat)
    return hand_after(record, done).view_for(seat)


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of the journal as the player saw it: the view after it and the feed's lines (none when the
    player could see nothing happen: a rival's catch of a seña)."""

    view: SeatView
    lines: tuple[str, ...]
    senas: tuple[SenaView, ...] = field(default=())
    """Señas of a rival this step showed, which the player may catch."""


def step_lines(t: Translator, table: TableState, before: SeatView, after: SeatView) -> Step:
    """What changed for the player between two consecutive views: a word said (and the result of the lance
    it closed), a seña made or one the player caught."""
    lines: list[str] = []
    catchable: list[SenaView] = []
    for action in after.actions[len(before.actions) :]:
        name = seat_name(table, action.seat)
        if action.kind is ActionKind.DISCARD:
            lines.append(texts.discard_line(t, name, action.count, action.cards))
        else:
            lines.append(labelled(t, name, action_label(t, action.kind, action.amount, action.total)))
    closed = [r for r in after.results if r.lance not in {b.lance for b in before.results}]
    for result in closed:
        words = result_words(t, table, result)
        lines.append("  ✓ " + labelled(t, t.gettext(LANCE_NAMES[result.lance]), words))
    for sena in after.senas[len(before.senas) :]:
        name = seat_name(table, sena.seat)
        if sena.seat == after.partner and sena.sena is not None:
            lines.append(t.format(texts.PARTNER_SENA, name=name, sena=t.gettext(SENA_NAMES[sena.sena])))
        elif sena.seat == after.seat:
            lines.append(t.format(texts.OWN_SENA, name=name))
        else:
            lines.append(t.format(texts.RIVAL_SENA, name=name))
            catchable.append(sena)
    for old, new in zip(before.senas, after.senas, strict=False):
        if old.sena is None and new.sena is not None and new.seat % 2 != after.seat % 2:
            name = seat_name(table, new.seat)
            lines.append(t.format(texts.CAUGHT, name=name, sena=t.gettext(SENA_NAMES[new.sena])))
    return Step(after, tuple(lines), tuple(catchable))
