"""What plays itself: machine seats (and people on autopilot), confirmed discards when their turn comes,
the end of a hand (reported once) and the next deal."""

from __future__ import annotations

import copy
import logging
import random

from bot.i18n.markers import N_
from bot.kernel import HandPosition, TableStatus
from bot.table._context import TableContext
from bot.table._events import HandDealt, HandFinished, NewCards, SenaMade
from engine.actions import Action, ActionKind
from engine.ai.baseline import BaselinePlayer
from engine.ai.policy import Policy
from engine.cards import parse_cards
from engine.errors import MusError
from engine.hand_types import Phase
from engine.views import SeatView

_ = N_
log = logging.getLogger(__name__)
_FALLBACK = BaselinePlayer()


def back_in_control(ctx: TableContext, seat: int) -> None:
    """The player acted: forget their timeouts and take the seat back from the machine."""
    s = ctx.table.seats[seat]
    if s.timeouts or s.autopilot:
        s.timeouts = 0
        s.autopilot = False
        ctx.changed = True


def machine_plays(ctx: TableContext, seat: int) -> bool:
    """Whether a machine decides for ``seat`` (a machine seat, or a person on autopilot)."""
    s = ctx.table.seats[seat]
    return s.machine or s.autopilot


def machines_catch(ctx: TableContext, sena_index: int) -> None:
    """Machine rivals of a seña's maker try to catch it at once (as a person would press ⚡)."""
    match = ctx.match
    assert match is not None and match.hand is not None
    made = match.hand.senas[sena_index]
    for rival in ((made.seat + 1) % 4, (made.seat + 3) % 4):
        if not ctx.table.seats[rival].machine:
            continue
        view = match.view_for(rival)
        policy = ctx.policy(ctx.table.options.difficulty)
        if policy.wants_catch(view, view.senas[sena_index], ctx.rng):
            match.catch_sena(rival, sena_index, ctx.now)


def after_sena(ctx: TableContext, sena_index: int) -> None:
    """A seña was made: machine rivals try to catch it at once, and its catch window opens (the table is drawn
    again when it ends, without the ⚡)."""
    match = ctx.match
    assert match is not None and match.hand is not None
    machines_catch(ctx, sena_index)
    maker = match.hand.senas[sena_index].seat
    window_ends = ctx.now + match.config.catch_window + ctx.settings.catch_lag  # (⚡ kept for a late screen)
    ctx.record(SenaMade(maker, ctx.table.hand_no, sena_index, window_ends))


def machine_move(ctx: TableContext, seat: int) -> None:
    """The machine decides for ``seat`` (a machine seat, or a human's on timeout/autopilot)."""
    match = ctx.match
    assert match is not None and match.hand is not None
    hand = match.hand
    policy = ctx.policy(ctx.table.options.difficulty)
    s = ctx.table.seats[seat]
    if s.machine and hand.config.senas:
        sena = policy.choose_sena(match.view_for(seat), ctx.rng)
        if sena is not None:
            try:
                record = match.make_sena(seat, sena, ctx.now)
            except MusError:
                record = None
            if record is not None:
                after_sena(ctx, record.index)
    action = _picked_discard(ctx, seat) if hand.phase is Phase.DISCARD else None
    if action is None:
        action = _machine_decision(policy, match.view_for(seat), ctx.rng)
    _apply(ctx, seat, action)


def _machine_decision(policy: Policy, view: SeatView, rng: random.Random) -> Action:
    """The policy's choice; should a player ever fail or choose an illegal action, the baseline decides.

    A table must never be stuck on a machine's turn because of a bug in one machine player.
    """
    try:
        action = policy.decide(view, rng)
        if action in view.legal:
            return action
        log.error("machine player %s chose an illegal action %s", policy.name, action)
    except Exception:
        log.exception("machine player %s failed", policy.name)
    return _FALLBACK.decide(view, rng)


def _picked_discard(ctx: TableContext, seat: int) -> Action | None:
    s = ctx.table.seats[seat]
    if not s.discard_pick:
        return None
    match = ctx.match
    assert match is not None and match.hand is not None
    cards = tuple(parse_cards(s.discard_pick))
    action = Action(ActionKind.DISCARD, cards=cards)
    return action if match.hand.can_act(seat, action) else None


def _apply(ctx: TableContext, seat: int, action: Action) -> None:
    match = ctx.match
    assert match is not None and match.hand is not None
    hand = match.hand
    before_round = hand.mus_round
    match.act(seat, action)
    if action.kind is ActionKind.DISCARD:
        s = ctx.table.seats[seat]
        s.discard_pick, s.discard_ready = [], False
    if hand.mus_round != before_round:
        for s in ctx.table.seats:
            s.discard_pick, s.discard_ready = [], False
        ctx.record(NewCards())
    ctx.save_match()


def advance(ctx: TableContext, *, machines_now: bool = False) -> None:
    """Play everything that needs no human now: machine turns (without a pause), queued discards, deals.

    Stops at a human decision, or at a machine turn / next deal when those wait for a pause (a deadline).
    With ``machines_now`` (the pause before a machine's move has just ended) the machines that follow play
    at once too: a run of machine moves is one pause and one redraw of the table, whose story lists every
    word they said (a redraw per move would cost the group's message budget for nothing).
    """
    match = ctx.match
    if match is None or ctx.table.status is not TableStatus.PLAYING:
        return
    for _guard in range(10_000):
        hand = match.hand
        assert hand is not None
        if hand.over:
            if not _hand_finished(ctx):
                return
            if ctx.settings.next_hand_delay > 0:
                return
            deal(ctx)
            continue
        seat = hand.turn
        assert seat is not None
        s = ctx.table.seats[seat]
        if hand.phase is Phase.DISCARD and s.discard_ready and not machine_plays(ctx, seat):
            action = _picked_discard(ctx, seat)
            if action is not None:
                _apply(ctx, seat, action)
                continue
        if machine_plays(ctx, seat) and (machines_now or ctx.settings.machine_delay <= 0):
            machine_move(ctx, seat)
            continue
        return
    raise RuntimeError("advance() did not settle")  # a bug, never a long game: hands are bounded


def _hand_finished(ctx: TableContext) -> bool:
    """Report a finished hand once; return whether the match goes on."""
    match = ctx.match
    assert match is not None and match.hand is not None
    table = ctx.table
    if table.reported_hand >= table.hand_no:
        return not match.over
    table.reported_hand = table.hand_no
    # Copies as it ended (this command may deal the next hand at once); the finished hand is shared, as
    # nothing changes it any more (a deal makes a new one).
    ctx.record(HandFinished(table.model_copy(deep=True), copy.deepcopy(match, {id(match.hand): match.hand})))
    if match.over:
        table.status = TableStatus.FINISHED
    ctx.changed = True
    return not match.over


def deal(ctx: TableContext) -> None:
    """Deal the next hand: where it stands in the match, a fresh table and fresh private hands."""
    match = ctx.match
    assert match is not None
    ctx.table.position = HandPosition(
        game=sum(match.games) + 1, vaca=sum(match.vacas) + 1, games=(match.games[0], match.games[1])
    )
    match.new_hand(ctx.rng)
    ctx.table.hand_no += 1
    for s in ctx.table.seats:
        s.discard_pick, s.discard_ready = [], False
    ctx.save_match()
    ctx.record(HandDealt(ctx.table.hand_no))
