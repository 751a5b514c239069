"""One loaded table during one command: the context every flow step works on, and what a step may answer.

A :class:`TableContext` holds the table, its replayed match, the clock, the settings and the randomness of
one command, plus what the command produced (messages, results, flags for the redraw). A :class:`Refusal`
means "answer the user, change nothing".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.history import KeptHand
from bot.i18n import DEFAULT_LANGUAGE, normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import OutMessage, TableState, TableStatus, UserRef
from bot.leaderboard import GameResult
from bot.screens import Renderer, picker_open
from engine.ai.policy import Policy
from engine.hand_types import Phase
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
    lobby_timeout: float = 900.0
    timeouts_to_autopilot: int = 2


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
    table_fresh: bool = False
    hands_fresh: bool = False
    render_hands: bool = True
    alert: bool = False
    """Show the answer as an alert (a caught seña)."""
    messages: list[OutMessage] = field(default_factory=list)
    results: list[GameResult] = field(default_factory=list)
    flashes: list[tuple[str, float]] = field(default_factory=list)
    """Extra deadlines (key, due) to schedule: the end of a seña's catch window."""
    kept_hands: list[KeptHand] = field(default_factory=list)
    """Hands that finished in this command, to keep in the history once the write succeeded."""
    match_dirty: bool = False
    private_before: object = None
    """What the private hands showed when the command began (see :func:`private_signature`)."""

    # --- helpers ---------------------------------------------------------------------------------------

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

    def renderer(self) -> Renderer:
        """A renderer of the current state."""
        return Renderer(self.table, self.match, self.now, turn_seconds=self.settings.turn_timeout)

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


def private_signature(ctx: TableContext) -> object:
    """Everything a private hand message depends on: when it is unchanged, private views need no redraw.

    (Bets by others do not appear in private messages; cards, discards, señas, catches, picks and
    languages do.)
    """
    match = ctx.match
    if match is None or match.hand is None:
        return None
    hand = match.hand
    return (
        ctx.table.hand_no,
        ctx.table.lang,
        ctx.table.status,
        _live_picker(ctx),
        hand.mus_round,
        hand.phase is Phase.DISCARD,
        hand.over,
        len(hand.senas),
        len(hand.catches),
        tuple(len(h) for h in hand.hands),
        tuple((tuple(s.discard_pick), s.discard_ready, s.lang) for s in ctx.table.seats),
    )


def _live_picker(ctx: TableContext) -> int | None:
    """The seat whose bet-amount picker is showing now, if any."""
    match = ctx.match
    assert match is not None and match.hand is not None
    seat = match.hand.turn
    return seat if seat is not None and picker_open(ctx.table, match.hand, seat) else None


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
