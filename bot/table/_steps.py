"""The synchronous part of a command on one loaded table: what a button press does.

:func:`dispatch_press` checks a parsed token against the table (stamp, status, card, seña count) and runs one
step of :mod:`bot.table._flow`. It touches no store and draws nothing: the unit of work
(:mod:`bot.app._unit_of_work`) loads, runs it, draws what its events say, and writes with a compare-and-set.
"""

from __future__ import annotations

from bot.i18n import common as msg
from bot.kernel import (
    CatchSena,
    ChangeOption,
    ConfirmDiscard,
    LobbyAction,
    MakeSena,
    OpenPicker,
    PickCard,
    ShowCards,
    TableStatus,
    TakeSeat,
    Token,
    TurnAction,
    UserRef,
    hand_stamp,
    lobby_stamp,
    sena_stamp,
)
from bot.table import _flow as flow
from bot.table import _lobby as lobby
from bot.table._autoplay import back_in_control
from bot.table._context import MATCH_OVER, Answer, Refusal, TableContext
from bot.table._events import CardsShown


def dispatch_press(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    """What a button press does: its parsed command checked against the table (stamp, status), then one
    flow step."""
    table = ctx.table
    command = token.command
    match command:
        case TakeSeat() | LobbyAction() | ChangeOption():
            # Lobby buttons only work in the lobby (an old lobby message must not cancel a running game).
            if token.stamp != lobby_stamp():
                raise Refusal(msg.STALE_BUTTON)
            if table.status is not TableStatus.LOBBY:
                raise Refusal(lobby.NOT_IN_LOBBY if table.status is TableStatus.PLAYING else msg.STALE_BUTTON)
            return _lobby(ctx, user, command)
        case OpenPicker():
            return flow.open_picker(ctx, user, token)
        case TurnAction(action):
            flow.act(ctx, user, token, action)
            return None
        case MakeSena(sena):
            # Stamped with the señas the presser made: a doubled press (or an old copy) makes no second
            # seña, while others' señas leave the button valid.
            hand = ctx.require_match().hand
            assert hand is not None
            if token.hand != table.hand_no:
                raise Refusal(msg.STALE_BUTTON)
            if token.stamp != sena_stamp(table.hand_no, hand.senas_made(ctx.seat_of(user))):
                raise Refusal(msg.ALREADY_PLAYED)
            return flow.make_sena(ctx, user, sena.value)
    # Buttons valid for the whole hand.
    if table.status is TableStatus.FINISHED:
        raise Refusal(MATCH_OVER)
    if token.stamp != hand_stamp(table.hand_no) or table.status is not TableStatus.PLAYING:
        raise Refusal(msg.STALE_BUTTON)
    match command:
        case ShowCards():
            # Shown to the presser alone, as an alert: no new private message (one live hand message each).
            seat = ctx.seat_of(user)
            back_in_control(ctx, seat)
            ctx.record(CardsShown(seat))
            return None
        case PickCard(card):
            flow.pick(ctx, user, card)
            return None
        case ConfirmDiscard():
            return flow.confirm_discard(ctx, user)
        case CatchSena(index):
            flow.catch(ctx, user, index)
            return None
    raise Refusal(msg.STALE_BUTTON)


def _lobby(ctx: TableContext, user: UserRef, command: TakeSeat | LobbyAction | ChangeOption) -> Answer:
    match command:
        case TakeSeat(seat):
            return lobby.take_seat(ctx, user, seat), {"team": "A" if seat % 2 == 0 else "B"}
        case LobbyAction("leave"):
            return lobby.leave_seat(ctx, user)
        case LobbyAction("start"):
            return lobby.start_game(ctx, user)
        case LobbyAction("cancel"):
            return lobby.cancel_table(ctx, user)
        case ChangeOption(option):
            return lobby.change_option(ctx, user, option)
    raise Refusal(msg.STALE_BUTTON)
