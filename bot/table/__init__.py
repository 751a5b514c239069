"""One table's game flow, synchronous, on one loaded table: the lobby, a person's moves, what plays itself
and the deadline the table waits for.

* :mod:`bot.table._context` — :class:`TableContext` (one loaded table during one command), :class:`Refusal`
  and the answers a step gives;
* :mod:`bot.table._steps` — :func:`dispatch_press`: a parsed button checked against the table, then one step;
  :func:`redraw`: the views a command changed;
* :mod:`bot.table._lobby` — seats, options, start, cancel;
* :mod:`bot.table._flow` — turn actions, the amount picker, discards, señas and catches;
* :mod:`bot.table._autoplay` — machine seats, queued discards, the end of a hand, the next deal;
* :mod:`bot.table._timers` — the one deadline a table waits for, and what happens when it fires.

Nothing here touches a store: :mod:`bot.app` loads, runs a step and writes.
"""

from bot.table._context import (
    Answer,
    FlowSettings,
    Refusal,
    TableContext,
    lang_for,
    load_context,
    private_signature,
    say,
)
from bot.table._flow import NOT_NOW
from bot.table._lobby import cancel_table, new_table, start_game, take_seat
from bot.table._steps import dispatch_press, redraw
from bot.table._timers import arm_deadline, fire_deadline

__all__ = [
    "NOT_NOW",
    "Answer",
    "FlowSettings",
    "Refusal",
    "TableContext",
    "arm_deadline",
    "cancel_table",
    "dispatch_press",
    "fire_deadline",
    "lang_for",
    "load_context",
    "new_table",
    "private_signature",
    "redraw",
    "say",
    "start_game",
    "take_seat",
]
