"""One loaded table during one command: the context every flow step works on, and what a step may answer.

A :class:`TableContext` holds the table, its replayed match, the clock, the settings and the randomness of
one command, plus what happened during it (its :mod:`events <bot.table._events>`, in order). A
:class:`Refusal` means "answer the user, change nothing".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.i18n import DEFAULT_LANGUAGE, normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import TableState, TableStatus, UserRef
from bot.table._events import Event
from engine.ai.policy import Policy
from engine.match import Match
from engine.state import match_state, restore_match

_ = N_

GAME_NOT_RUNNING = _("There is no game running at this table.")
MATCH_OVER = _("This game is over. Type /newgame for another one.")
NOT_SEATED = _("You are not seated at this table.")


#: What a step answers the user: a msgid, a msgid with its arguments, or nothing.
Answer = tuple[str, dict[str, object]] | str | None


def say(lang: str, answer: Answer) -> str | None:
    """An answer in ``lang`` (its arguments that are msgids translated too)."""
    if answer is None:
        return None
    t = translator(lang)
    if isinstance(answer, str):
        return t.gettext(answer)
    msgid, kwargs = answer
    return t.format(msgid, **{k: t.gettext(v) if isinstance(v, str) else v for k, v in kwargs.items()})


def lang_for(user: UserRef, table: TableState | None = None) -> str:
    """The language for ``user``: their seat's at ``table``, else their client's, else the table's."""
    if table is not None:
        seat = table.seat_of(user.key)
        if seat is not None:
            return table.seats[seat].lang
    if user.lang:
        return normalize_language(user.lang)
    return table.lang if table is not None else DEFAULT_LANGUAGE


class Refusal(Exception):
    """A command that must be answered with a message and change nothing."""

    def __init__(self, msgid: str, **kwargs: object) -> None:
        super().__init__(msgid)
        self.msgid = msgid
        self.kwargs = kwargs


@dataclass(frozen=True, slots=True)
class FlowSettings:
    """Timings and options of the flow (seconds)."""

    turn_timeout: float = 60.0
    machine_delay: float = 1.5
    next_hand_delay: float = 4.0
    catch_window: float = 3.0
    catch_lag: float = 2.0
    """How late a chat may show a seña (a paced edit, a rate limit): its ⚡ stays that much longer, and a
    press counts from when the presser's message showed it (:meth:`bot.app.Service.press`'s ``shown_at``)."""
    lobby_timeout: float = 900.0
    timeouts_to_autopilot: int = 2
    pause_limit: float = 86400.0
    """How long a paused table (its chat out of the bot's reach) waits for the chat to come back before it
    is closed (:mod:`bot.table._pause`)."""


@dataclass
class TableContext:
    """One loaded table during one command."""

    table: TableState
    match: Match | None
    now: float
    settings: FlowSettings
    rng: random.Random
    policy: Callable[[str], Policy]
    changed: bool = False
    """The table changed: it is written (and drawn again)."""
    events: list[Event] = field(default_factory=list)
    """What happened during the command, in order (what is drawn, kept and rated is made from them)."""
    match_dirty: bool = False

    # --- helpers ---------------------------------------------------------------------------------------

    def record(self, event: Event) -> None:
        """Note that ``event`` happened (after whatever it reports has been done to the table)."""
        self.events.append(event)

    def require_match(self) -> Match:
        """The live match, or a refusal if the table is not playing."""
        if self.table.status is TableStatus.FINISHED:
            raise Refusal(MATCH_OVER)
        if self.table.status is not TableStatus.PLAYING or self.match is None or self.match.hand is None:
            raise Refusal(GAME_NOT_RUNNING)
        return self.match

    def seat_of(self, user: UserRef) -> int:
        """The user's seat, or a refusal if not seated."""
        seat = self.table.seat_of(user.key)
        if seat is None:
            raise Refusal(NOT_SEATED)
        return seat

    def save_match(self) -> None:
        """The match changed: it is serialised into the table once, just before the write."""
        self.table.updated_at = self.now
        self.match_dirty = True
        self.changed = True

    def sync_match(self) -> None:
        """Serialise a changed match into the table (called once per write)."""
        if self.match_dirty:
            self.table.match = None if self.match is None else match_state(self.match)
            self.match_dirty = False


def load_context(
    table: TableState,
    now: float,
    settings: FlowSettings,
    rng: random.Random,
    policy: Callable[[str], Policy],
    match: Match | None = None,
) -> TableContext:
    """Wrap a loaded table, replaying its match (unless the caller already holds it)."""
    if match is None and table.match is not None:
        match = restore_match(table.match, rng)
    return TableContext(table, match, now, settings, rng, policy)
