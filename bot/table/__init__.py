"""One table's game flow, synchronous, on one loaded table: the lobby, a person's moves, what plays itself
and the deadline the table waits for.

* :mod:`bot.table._context` — :class:`TableContext` (one loaded table during one command), :class:`Refusal`
  and the answers a step gives;
* :mod:`bot.table._events` — what a step records as it goes (a hand dealt or finished, a seat timed out, a
  seña made or caught…): what is drawn, kept and rated is made from them, after the step;
* :mod:`bot.table._steps` — :func:`dispatch_press`: a parsed button checked against the table, then one step
  (one table from the command's type to its step); :func:`dispatch_catch`, a ⚡ whose window counts from when
  the surface showed the seña;
* :mod:`bot.table._lobby` — seats, options, start, cancel;
* :mod:`bot.table._flow` — turn actions, the amount picker, discards, señas and catches;
* :mod:`bot.table._autoplay` — machine seats, queued discards, the end of a hand, the next deal;
* :mod:`bot.table._timers` — the one deadline a table waits for, the catch windows, and what happens when
  they fire;
* :mod:`bot.table._pause` — a table whose chat the bot cannot reach: paused, then resumed or closed.

Nothing here touches a store, draws a view or keeps a hand: :mod:`bot.app` loads, runs a step, makes what its
events say and writes.
"""

from bot.table._context import (
    Answer,
    FlowSettings,
    Refusal,
    TableContext,
    lang_for,
    load_context,
    say,
)
from bot.table._events import (
    CardsShown,
    CatchWindowClosed,
    HandDealt,
    HandFinished,
    HandsShown,
    LobbyExpired,
    NewCards,
    SeatTimedOut,
    SenaCaught,
    TableAbandoned,
    TableResumed,
    TableShown,
)
from bot.table._flow import NOT_NOW
from bot.table._lobby import cancel_table, may_organise, new_table, start_game, take_seat
from bot.table._pause import TablePaused, pause, refuse_if_paused, resume
from bot.table._steps import dispatch_catch, dispatch_press
from bot.table._timers import arm_deadline, catch_windows, fire_deadline

__all__ = [
    "NOT_NOW",
    "Answer",
    "CardsShown",
    "CatchWindowClosed",
    "FlowSettings",
    "HandDealt",
    "HandFinished",
    "HandsShown",
    "LobbyExpired",
    "NewCards",
    "Refusal",
    "SeatTimedOut",
    "SenaCaught",
    "TableAbandoned",
    "TableContext",
    "TablePaused",
    "TableResumed",
    "TableShown",
    "arm_deadline",
    "cancel_table",
    "catch_windows",
    "dispatch_catch",
    "dispatch_press",
    "fire_deadline",
    "lang_for",
    "load_context",
    "may_organise",
    "new_table",
    "pause",
    "refuse_if_paused",
    "resume",
    "say",
    "start_game",
    "take_seat",
]
