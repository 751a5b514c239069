"""What the player can press at the full-screen table, worked out from the service's views and the player's
own view: the buttons (the core's, less those the full screen replaces), the amounts a bet may take, and a
catch button per rival seña shown (each with its own key and the moment it was shown)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from textual.content import Content

from adapters.console.screen.feed import Step
from adapters.console.table import code_of
from bot.i18n import Translator
from bot.kernel import Button, OutMessage, TableState, hand_stamp, make_token
from bot.screens import catch_label, seat_name

#: Keys of the catch buttons, one per seña on screen at once.
CATCH_KEYS = "cxvz"
# Buttons the full screen does not show: "My cards" (the cards are always on screen), "More…" (an amount is
# typed), and the core's ⚡ (the screen's own catch buttons count from when the seña was shown here).
_HIDDEN = frozenset({"cards", "more"})
#: Between the words of one button (its key and its label): the screen never breaks a line there.
_NBSP = "\u00a0"


@dataclass(frozen=True, slots=True)
class Catchable:
    """A rival's seña on screen: its button's label and key, its token, when it was shown (service clock)."""

    label: str
    token: str
    shown_at: float
    key: str


def pressable(messages: Iterable[OutMessage], slots: tuple[str, ...] = ("table", "hand")) -> list[Button]:
    """The buttons of the views in ``slots`` that the full screen shows, in order (no link: a terminal opens
    no address)."""
    return [
        b
        for m in messages
        if m.slot in slots
        for row in m.buttons
        for b in row
        if not b.opens and code_of(b) not in _HIDDEN and not (code_of(b) or "").startswith("catch")
    ]


def new_catches(
    t: Translator, table: TableState, step: Step, on_screen: list[Catchable], now: float
) -> list[Catchable]:
    """A catch button for each rival seña ``step`` showed, with a key none of ``on_screen`` has."""
    made: list[Catchable] = []
    for sena in step.senas:
        taken = {c.key for c in [*on_screen, *made]}
        key = next((k for k in CATCH_KEYS if k not in taken), None)
        if key is None:
            continue
        second = any(s.seat == sena.seat and s.index < sena.index for s in step.view.senas)
        label = f"{key} {catch_label(t, seat_name(table, sena.seat), second)}"
        token = make_token(table.id, hand_stamp(table.hand_no), f"catch{sena.index}")
        made.append(Catchable(label, token, now, key))
    return made


def key_line(buttons: list[Button]) -> Content:
    """``1 Paso  2 Envido 2  …``: each button with its key, clickable, wrapping at spaces between buttons
    (a button's own spaces are no-break spaces, which the screen never breaks: :mod:`.wrap`)."""
    return Content("   ").join(
        Content.from_markup(
            f"[@click=app.press({n})][b reverse]{_NBSP}{n}{_NBSP}[/]{_NBSP}$label[/]",
            label=_unbroken(b.label),
        )
        for n, b in enumerate(buttons, 1)
    )


def catch_lines(catches: list[Catchable]) -> Content:
    """One clickable line per seña that may be caught, its key first."""
    return Content("\n").join(
        Content.from_markup(f"[@click=app.catch('{c.key}')][b]$label[/][/]", label=c.label) for c in catches
    )


def _unbroken(label: str) -> str:
    return label.replace(" ", _NBSP)
