"""The one deadline a table waits for (turn timeout, machine move, next deal, lobby expiry; a paused table's
closing), the end of each seña's catch window, and what happens when they fire."""

from __future__ import annotations

from bot.kernel import DeadlineKey, DeadlineKind, TableStatus, hand_stamp, turn_stamp
from bot.table._autoplay import advance, deal, machine_move, machine_plays
from bot.table._context import TableContext
from bot.table._events import CatchWindowClosed, LobbyExpired, SeatTimedOut, SenaMade
from bot.table._pause import abandon, pause_deadline

#: Seconds after a catch window's end at which its deadline fires (so that the window is surely closed).
_AFTER_WINDOW = 0.1


def pending_deadline(ctx: TableContext) -> tuple[str, float] | None:
    """The one deadline this table waits for now (key, due), or ``None``.

    Keys name the table, the kind and the exact moment they were armed for, so a deadline that fires after
    the table moved on is recognised and ignored.
    """
    table, match, s = ctx.table, ctx.match, ctx.settings
    tid = table.id
    if table.paused is not None:  # nothing runs while its chat is out of reach: only its closing
        return pause_deadline(ctx)
    if table.status is TableStatus.LOBBY:
        return DeadlineKey(tid, DeadlineKind.LOBBY, ("0",)).key, table.created_at + s.lobby_timeout
    if table.status is not TableStatus.PLAYING or match is None or match.hand is None:
        return None
    hand = match.hand
    if hand.over:
        deal_key = DeadlineKey(tid, DeadlineKind.DEAL, (hand_stamp(table.hand_no),)).key
        return deal_key, ctx.now + s.next_hand_delay
    seat = hand.turn
    assert seat is not None
    stamp = (turn_stamp(table.hand_no, len(hand.log)),)
    if machine_plays(ctx, seat):
        return DeadlineKey(tid, DeadlineKind.MACHINE, stamp).key, ctx.now + s.machine_delay
    return DeadlineKey(tid, DeadlineKind.TURN, stamp).key, ctx.now + s.turn_timeout


def arm_deadline(ctx: TableContext) -> None:
    """Record the pending deadline in the table (keeping an unchanged one's due time)."""
    pending = pending_deadline(ctx)
    table = ctx.table
    if pending is None:
        if table.due_key is not None:
            table.due_key, table.due = None, None
            ctx.changed = True
        return
    key, due = pending
    if key != table.due_key:
        table.due_key, table.due = key, due
        ctx.changed = True


def catch_windows(ctx: TableContext) -> list[tuple[str, float]]:
    """Deadlines (key, due) to schedule besides the pending one: the end of each seña's catch window opened
    by this command."""
    return [
        (
            DeadlineKey(ctx.table.id, DeadlineKind.FLASH, (hand_stamp(made.hand_no), str(made.index))).key,
            made.window_ends + _AFTER_WINDOW,
        )
        for made in ctx.events
        if isinstance(made, SenaMade)
    ]


def fire_deadline(ctx: TableContext, key: str) -> bool:
    """A deadline fired: act on it if it is still the table's pending one; return whether it was."""
    table = ctx.table
    deadline = DeadlineKey.parse(key)
    if deadline is None:
        return False  # not a deadline this code knows
    kind = deadline.kind
    if kind is DeadlineKind.FLASH:
        # The catch window closed: nothing changes, the table is drawn again without the ⚡ (also when the
        # hand has moved on: it is drawn as it stands).
        ctx.record(CatchWindowClosed())
        live = table.status is TableStatus.PLAYING and table.paused is None
        return len(deadline.stamp) == 2 and deadline.stamp[0] == hand_stamp(table.hand_no) and live
    if key != table.due_key:
        return False
    if kind is DeadlineKind.PAUSED:  # its chat stayed out of reach too long
        abandon(ctx, told=False)
        return True
    if kind is DeadlineKind.LOBBY:
        table.status = TableStatus.CANCELLED
        ctx.changed = True
        ctx.record(LobbyExpired())
        return True
    match = ctx.match
    if match is None or match.hand is None:
        return False
    if kind is DeadlineKind.DEAL:
        deal(ctx)
    elif kind in (DeadlineKind.MACHINE, DeadlineKind.TURN):
        seat = match.hand.turn
        if seat is None:
            return False
        if kind is DeadlineKind.TURN:
            _timeout(ctx, seat)
        machine_move(ctx, seat)
    else:
        return False
    advance(ctx, machines_now=kind in (DeadlineKind.MACHINE, DeadlineKind.TURN))
    return True


def _timeout(ctx: TableContext, seat: int) -> None:
    """A person's turn ran out: one more timeout, and the machine keeps the seat after too many in a row."""
    s = ctx.table.seats[seat]
    s.timeouts += 1
    autopilot = s.timeouts >= ctx.settings.timeouts_to_autopilot and not s.autopilot
    if autopilot:
        s.autopilot = True
    ctx.changed = True
    ctx.record(SeatTimedOut(seat, autopilot))
