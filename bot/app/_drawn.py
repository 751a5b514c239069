"""What a table command shows, keeps and rates, made in one place after its step: :func:`drawn`.

A step of :mod:`bot.table` changes the table and records what happened (:mod:`events <bot.table._events>`);
it draws nothing. :func:`drawn` reads those events, in order, with the table as the command found it
(:class:`Before`) and as the step left it, and makes the views people see (in the order they are posted),
the answer an event decides (an alert), the finished hands the history keeps and the results the leaderboard
rates. The unit of work (:mod:`bot.app._unit_of_work`) calls it once per command, then stamps the views and
writes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from bot.history import KeptHand, kept_hand
from bot.i18n.markers import N_
from bot.kernel import MACHINE_MARK, MACHINE_NAMES, OutMessage, TableState, TableStatus, WebAccess
from bot.leaderboard import MACHINE_PREFIX, GameResult, PlayerRef
from bot.screens import SENA_NAMES, Renderer, picker_open, seat_name
from bot.table import (
    Answer,
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
    TableContext,
    TableResumed,
    TableShown,
)
from engine.hand_types import Phase
from engine.match import Match

_ = N_
log = logging.getLogger(__name__)

TIMEOUT_NOTICE = _("⏱ {name} ran out of time: a machine played for them.")
AUTOPILOT_NOTICE = _("🤖 A machine keeps {name}'s seat until they play again.")
LOBBY_EXPIRED = _("Nobody started the game in time: the table was closed.")
CAUGHT = _("Caught! {name}'s seña: {sena}")
RESUMED = _("I can post here again: the table goes on where it was.")
ABANDONED = _(
    "I could not post here for too long: the table was closed, without rating. Type /newgame for another one."
)

#: Table states whose current hand is drawn (a cancelled game closes its table and every private hand,
#: drawn once more without buttons).
_HAND_DRAWN = (TableStatus.PLAYING, TableStatus.FINISHED, TableStatus.CANCELLED)


@dataclass(frozen=True, slots=True)
class Before:
    """The table as the command found it: what decides which views a change draws again."""

    status: TableStatus
    hands: object
    """What the private hands showed (:func:`private_signature`)."""


@dataclass(frozen=True, slots=True)
class Drawn:
    """What a command shows, answers, keeps and rates."""

    views: tuple[OutMessage, ...]
    answer: Answer = None
    """The answer an event decided ("My cards", a caught seña), instead of the step's (``None``: none did)."""
    alert: bool = False
    """Show the answer as an alert (only its presser sees it, and must dismiss it)."""
    kept_hands: tuple[KeptHand, ...] = ()
    """Hands that finished, to keep in the history once the write succeeded."""
    results: tuple[GameResult, ...] = ()
    """Games, vacas and matches won, to rate once the write succeeded."""

    def answer_or(self, step_answer: Answer) -> Answer:
        """The presser's answer: the one an event decided, else the step's."""
        return step_answer if self.answer is None else self.answer


def as_found(ctx: TableContext) -> Before:
    """The table as a command finds it (taken before its step)."""
    return Before(ctx.table.status, private_signature(ctx))


def drawn(ctx: TableContext, found: Before, web: WebAccess | None = None) -> Drawn:
    """What the command shows, answers, keeps and rates: from its step's events, with the table as the
    command found it and as the step left it. The views, in the order they are posted:

    1. the lobby, while the table is one or has just stopped being one (drawn once more, without buttons);
    2. what each event shows, as it happened: a finished hand its last table and showdown (kept and rated), a
       timeout, an expired lobby or a pause's end a notice, a caught seña the catcher's hand, hands asked for;
    3. the current hand's table, unless that hand is over (its showdown said it all; a cancelled game's is
       drawn once more, without buttons); then every private hand that shows something new, as new messages
       after new cards — none after an answer to the presser alone ("My cards", a catch) or a closed window.

    1 and 3 only when the table changed or an event asks for it as it stands (the table shown, a catch window
    closed). A table message begins a new message when this command dealt its hand (or asked for new ones, or
    the table resumed). A paused table draws nothing: nothing could reach its chat. ``web``: the chats' doors
    to the web table, drawn as buttons."""
    table = ctx.table
    if table.paused is not None:
        return Drawn(())
    r = _renderer(ctx, table, ctx.match, web)
    views: list[OutMessage] = []
    finished: list[HandFinished] = []
    answer: Answer = None
    shown = ctx.changed  # the table is drawn: it changed, or an event asks for it as it stands
    fresh_table = fresh_hands = alert = False
    redraw_hands = True  # the private hands that show something new are drawn again
    for event in ctx.events:
        match event:
            case HandDealt():
                fresh_table = fresh_hands = True
            case NewCards():
                fresh_hands = True
            case TableShown(fresh=fresh):
                shown, fresh_table = True, fresh
            case HandFinished():
                views.extend(_hand_end(ctx, event, web, fresh=fresh_table))
                fresh_table = False  # the next table message edits the one just drawn
                finished.append(event)
            case SeatTimedOut() | LobbyExpired() | TableResumed() | TableAbandoned():
                views.extend(_notice(r, event))
                fresh_table |= isinstance(event, TableResumed)  # posted afresh at the bottom of the chat
            case SenaCaught(catcher=catcher, maker=maker, sena=sena):
                views.extend(_private_hands(r, (catcher,), fresh=False))  # it now names the seña
                answer = CAUGHT, {"name": seat_name(table, maker), "sena": SENA_NAMES[sena]}
                alert, redraw_hands = True, False
            case CardsShown(seat=seat):
                answer, alert, redraw_hands = r.cards_alert(seat), True, False
            case CatchWindowClosed():
                shown, redraw_hands = True, False
            case HandsShown(seats=seats, fresh=fresh):
                views.extend(_private_hands(r, seats, fresh=fresh))
    if shown:
        if table.status is TableStatus.LOBBY or found.status is TableStatus.LOBBY:
            views.insert(0, r.lobby(fresh=any(isinstance(e, TableResumed) for e in ctx.events)))
        hand = None if ctx.match is None else ctx.match.hand
        if table.status in _HAND_DRAWN and hand is not None:
            if not hand.over or table.status is TableStatus.CANCELLED:
                views.append(r.table_message(fresh=fresh_table))
            if redraw_hands and (fresh_hands or private_signature(ctx) != found.hands):
                views.extend(_private_hands(r, range(4), fresh=fresh_hands))
    return Drawn(tuple(views), answer, alert, _kept(finished, ctx.now), _won(finished))


_Noticed = SeatTimedOut | LobbyExpired | TableResumed | TableAbandoned


def _notice(r: Renderer, event: _Noticed) -> list[OutMessage]:
    """The notice an event posts in the table's chat (none for a table abandoned out of its chat's reach)."""
    match event:
        case SeatTimedOut(seat=seat, autopilot=autopilot):
            notice = AUTOPILOT_NOTICE if autopilot else TIMEOUT_NOTICE
            return [r.notice(r.t.format(notice, name=r.table.seats[seat].name))]
        case LobbyExpired():
            return [r.notice(r.t.gettext(LOBBY_EXPIRED))]
        case TableResumed():
            return [r.notice(r.t.gettext(RESUMED))]
        case TableAbandoned(told=told):
            return [r.notice(r.t.gettext(ABANDONED))] if told else []


def _private_hands(r: Renderer, seats: Iterable[int], *, fresh: bool) -> list[OutMessage]:
    """The private hands of ``seats`` (machines have none)."""
    hands = (r.private_hand(seat, fresh=fresh) for seat in seats)
    return [hand for hand in hands if hand is not None]


def _hand_end(
    ctx: TableContext, finished: HandFinished, web: WebAccess | None, *, fresh: bool
) -> list[OutMessage]:
    """A finished hand's last table (new when this command dealt it too: it must not edit the last hand's)
    and its showdown, as the table stood when it ended."""
    r = _renderer(ctx, finished.table, finished.match, web)
    return [r.table_message(fresh=fresh), r.showdown()]


def _kept(finished: Iterable[HandFinished], now: float) -> tuple[KeptHand, ...]:
    """The finished hands as the history keeps them (one that cannot be made is logged and left out)."""
    kept = []
    for hand in finished:
        try:
            kept.append(kept_hand(hand.table, hand.match, now))
        except Exception:  # the history is a record of the game, never a reason to stop it
            log.exception(
                "hand %s of table %s cannot be kept in the history", hand.table.hand_no, hand.table.id
            )
    return tuple(kept)


def _won(finished: Iterable[HandFinished]) -> tuple[GameResult, ...]:
    """The games the hands won, and the vacas and match (in a full match), for the leaderboard."""
    return tuple(result for hand in finished for result in _results(hand))


def _results(finished: HandFinished) -> list[GameResult]:
    """The game a hand won, and the vaca and match (in a full match)."""
    outcome = finished.match.last_outcome
    if outcome is None or outcome.game_winner is None:
        return []
    table = finished.table
    players = []
    for i, s in enumerate(table.seats):
        if s.user is not None:
            players.append(PlayerRef(s.user, s.name))
        else:
            key = f"{MACHINE_PREFIX}{table.options.difficulty}:{MACHINE_NAMES[i].lower()}"
            players.append(PlayerRef(key, f"{MACHINE_MARK} {MACHINE_NAMES[i]}"))
    teams = ((players[0], players[2]), (players[1], players[3]))
    results = [GameResult(table.chat, teams, outcome.game_winner, "game")]
    if table.options.mode == "match":
        if outcome.vaca_winner is not None:
            results.append(GameResult(table.chat, teams, outcome.vaca_winner, "vaca"))
        if outcome.match_winner is not None:
            results.append(GameResult(table.chat, teams, outcome.match_winner, "match"))
    return results


def private_signature(ctx: TableContext) -> object:
    """Everything a private hand message depends on: when it is unchanged, private views need no redraw.

    (Bets by others do not appear in private messages; cards, discards, señas, catches, picks and
    languages do.)
    """
    match = ctx.match
    if match is None or match.hand is None:
        return None
    hand = match.hand
    seat = hand.turn
    return (
        ctx.table.hand_no,
        ctx.table.lang,
        ctx.table.status,
        seat if seat is not None and picker_open(ctx.table, hand, seat) else None,  # a bet-amount picker
        hand.mus_round,
        hand.phase is Phase.DISCARD,
        hand.over,
        len(hand.senas),
        len(hand.catches),
        tuple(len(h) for h in hand.hands),
        tuple((tuple(s.discard_pick), s.discard_ready, s.lang) for s in ctx.table.seats),
    )


def _renderer(ctx: TableContext, table: TableState, match: Match | None, web: WebAccess | None) -> Renderer:
    """The renderer of ``table`` now, with the flow's turn time, the seña lag a chat allows and the chats'
    doors to the web table."""
    settings = ctx.settings
    return Renderer(
        table, match, ctx.now, turn_seconds=settings.turn_timeout, catch_lag=settings.catch_lag, web=web
    )
