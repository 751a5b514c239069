"""What a button press does at a table: its parsed command checked against the table, then one step.

:func:`dispatch_press` looks the command's type up in one table (:data:`_PRESSES`, as the service's message
bus does for every command) and runs its step: lobby buttons are checked against the lobby, buttons of a
whole hand against the hand dealt, turn buttons and señas check their own stamps. Nothing here touches a
store or draws anything: the unit of work (:mod:`bot.app._unit_of_work`) loads, runs the step, draws what
its events say and writes with a compare-and-set.
"""

from __future__ import annotations

from collections.abc import Callable

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
from bot.table._pause import refuse_if_paused

#: One step of a press: the table, the presser, the parsed token; what to answer (or a :class:`Refusal`).
PressStep = Callable[[TableContext, UserRef, Token], Answer]


def dispatch_press(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    """What a button press does: the step registered for its command's type (:data:`_PRESSES`); a command
    no step knows is checked as a button of the hand, then refused as stale. Nothing at a paused table."""
    refuse_if_paused(ctx)
    step = _PRESSES.get(type(token.command), _unknown)
    return step(ctx, user, token)


def dispatch_catch(user: UserRef, token: Token, shown_at: float) -> Callable[[TableContext], Answer]:
    """The step of a ⚡ pressed on a surface that knows when it showed the seña (a paced chat edit, the
    terminal's move feed): checked as :func:`dispatch_press` checks it (nothing at a paused table), the catch
    window counting from ``shown_at`` (the service's clock)."""

    def caught(ctx: TableContext, user: UserRef, token: Token) -> Answer:
        assert isinstance(token.command, CatchSena)
        flow.catch(ctx, user, token.command.index, shown_at)
        return None

    def step(ctx: TableContext) -> Answer:
        refuse_if_paused(ctx)
        return _in_this_hand(caught)(ctx, user, token)

    return step


# --- the checks a family of buttons shares --------------------------------------------------------------


def _in_lobby(step: PressStep) -> PressStep:
    """A lobby button: it only works in the lobby (an old lobby message must not cancel a running game)."""

    def checked(ctx: TableContext, user: UserRef, token: Token) -> Answer:
        if token.stamp != lobby_stamp():
            raise Refusal(msg.STALE_BUTTON)
        if ctx.table.status is not TableStatus.LOBBY:
            playing = ctx.table.status is TableStatus.PLAYING
            raise Refusal(lobby.NOT_IN_LOBBY if playing else msg.STALE_BUTTON)
        return step(ctx, user, token)

    return checked


def _in_this_hand(step: PressStep) -> PressStep:
    """A button valid for the whole hand it was drawn for (stamped with the hand's number)."""

    def checked(ctx: TableContext, user: UserRef, token: Token) -> Answer:
        table = ctx.table
        if table.status is TableStatus.FINISHED:
            raise Refusal(MATCH_OVER)
        if token.stamp != hand_stamp(table.hand_no) or table.status is not TableStatus.PLAYING:
            raise Refusal(msg.STALE_BUTTON)
        return step(ctx, user, token)

    return checked


# --- the steps ------------------------------------------------------------------------------------------


def _take_seat(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    assert isinstance(token.command, TakeSeat)
    seat = token.command.seat
    return lobby.take_seat(ctx, user, seat), {"team": "A" if seat % 2 == 0 else "B"}


def _lobby_action(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    assert isinstance(token.command, LobbyAction)
    name = token.command.name
    if name == "leave":
        return lobby.leave_seat(ctx, user)
    if name == "start":
        return lobby.start_game(ctx, user)
    if name == "cancel":
        return lobby.cancel_table(ctx, user)
    raise Refusal(msg.STALE_BUTTON)


def _change_option(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    assert isinstance(token.command, ChangeOption)
    return lobby.change_option(ctx, user, token.command.option)


def _open_picker(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    return flow.open_picker(ctx, user, token)


def _turn_action(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    assert isinstance(token.command, TurnAction)
    flow.act(ctx, user, token, token.command.action)
    return None


def _make_sena(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    """Stamped with the señas the presser made: a doubled press (or an old copy) makes no second seña, while
    others' señas leave the button valid."""
    assert isinstance(token.command, MakeSena)
    table = ctx.table
    hand = ctx.require_match().hand
    assert hand is not None
    if token.hand != table.hand_no:
        raise Refusal(msg.STALE_BUTTON)
    if token.stamp != sena_stamp(table.hand_no, hand.senas_made(ctx.seat_of(user))):
        raise Refusal(msg.ALREADY_PLAYED)
    return flow.make_sena(ctx, user, token.command.sena.value)


def _show_cards(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    """Shown to the presser alone, as an alert: no new private message (one live hand message each)."""
    seat = ctx.seat_of(user)
    back_in_control(ctx, seat)
    ctx.record(CardsShown(seat))
    return None


def _pick_card(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    assert isinstance(token.command, PickCard)
    flow.pick(ctx, user, token.command.card)
    return None


def _confirm_discard(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    return flow.confirm_discard(ctx, user)


def _catch_sena(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    assert isinstance(token.command, CatchSena)
    flow.catch(ctx, user, token.command.index)
    return None


def _stale(ctx: TableContext, user: UserRef, token: Token) -> Answer:
    raise Refusal(msg.STALE_BUTTON)


#: Which step answers each kind of table button, and the checks it passes first.
_PRESSES: dict[type, PressStep] = {
    TakeSeat: _in_lobby(_take_seat),
    LobbyAction: _in_lobby(_lobby_action),
    ChangeOption: _in_lobby(_change_option),
    OpenPicker: _open_picker,
    TurnAction: _turn_action,
    MakeSena: _make_sena,
    ShowCards: _in_this_hand(_show_cards),
    PickCard: _in_this_hand(_pick_card),
    ConfirmDiscard: _in_this_hand(_confirm_discard),
    CatchSena: _in_this_hand(_catch_sena),
}
#: A command of no table's (routed here by mistake, or a kind added without a step): checked, then stale.
_unknown = _in_this_hand(_stale)
