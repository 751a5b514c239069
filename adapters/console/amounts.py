"""A bet of any amount, typed rather than picked from buttons (the line mode's ``a 7``, the full screen's
amount box): the envido or raise of each amount the player may bet now, and its token as the core's buttons
carry it (so it is checked as a press of that button would be)."""

from __future__ import annotations

from bot.kernel import TableState, action_code, make_token, turn_stamp
from engine.actions import Action, ActionKind
from engine.match import Match


def bet_amounts(match: Match | None, seat: int | None) -> dict[int, Action]:
    """The envido or raise of each amount ``seat`` may bet now (none when it is not its turn to bet)."""
    hand = None if match is None else match.hand
    if hand is None or seat is None or hand.turn != seat:
        return {}
    return {a.amount: a for a in hand.legal_actions(seat) if a.kind in (ActionKind.ENVIDO, ActionKind.SUBE)}


def bet_token(table: TableState, match: Match, action: Action) -> str:
    """The token of a bet for this very turn, as the core's buttons carry it."""
    assert match.hand is not None
    code = action_code(action)
    assert code is not None
    return make_token(table.id, turn_stamp(table.hand_no, len(match.hand.log)), code)
