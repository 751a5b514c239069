"""A table whose chat the bot cannot reach is paused; the rule for when the chat comes back.

The bot loses a chat when it is removed from it (kicked out of a Telegram group, or it left) or may no longer
post there (a right taken away; a Discord channel's permissions changed): the adapters learn it from the
platform's updates or from a refused post, and the service pauses the chat's table (:mod:`bot.app._pauses`).

**The rule.** A paused table keeps everything — seats, scores, the hand in play — and waits: no turn runs
out, no machine moves, no hand is dealt, a press is refused, and nothing is drawn (nothing could reach its
chat). Its one deadline is :attr:`~bot.table._context.FlowSettings.pause_limit` after the pause:

* the chat comes back before it (the bot added back, its rights given back): the table **resumes** where it
  was — posted afresh at the bottom of the chat, with a notice, and every deadline fresh (a whole turn for
  the player to act, a lobby's whole time to start);
* it fires first: the table is **closed as abandoned**, without rating (no game was won), and the chat is
  free for a ``/newgame``. A chat that comes back after that finds no table; one that comes back late,
  before a worker fired the deadline, is told its table was closed.

The deadline lives in the store like every other, so a pause survives restarts, and the deadline sweep arms
it again if it was lost (:mod:`bot.ops._sweep`).
"""

from __future__ import annotations

from bot.i18n.markers import N_
from bot.kernel import DeadlineKey, DeadlineKind, TableStatus
from bot.table._context import Refusal, TableContext
from bot.table._events import TableAbandoned, TableResumed

_ = N_

PAUSED = _(
    "This table is paused: I cannot post in its chat. It goes on where it was once I can post there again."
)

#: Tables that can be paused (a finished or cancelled one has nothing to wait for).
_LIVE = (TableStatus.LOBBY, TableStatus.PLAYING)


class TablePaused(Refusal):
    """A command refused because its table is paused (:attr:`bot.kernel.Outcome.paused` says so)."""

    def __init__(self) -> None:
        super().__init__(PAUSED)


def refuse_if_paused(ctx: TableContext) -> None:
    """Refuse a command at a paused table (:class:`TablePaused`)."""
    if ctx.table.paused is not None and ctx.table.status in _LIVE:
        raise TablePaused()


def pause(ctx: TableContext) -> bool:
    """Pause a live table (its pending deadline becomes the one that closes it); whether it was paused now
    (not: paused already, or not live)."""
    table = ctx.table
    if table.paused is not None or table.status not in _LIVE:
        return False
    table.paused = ctx.now
    ctx.changed = True
    return True


def resume(ctx: TableContext) -> bool:
    """The chat is back: resume the paused table if it waited less than the limit, else close it (see the
    module's rule); whether it was paused."""
    table = ctx.table
    if table.paused is None or table.status not in _LIVE:
        return False
    waited = ctx.now - table.paused
    table.paused = None
    ctx.changed = True
    if waited >= ctx.settings.pause_limit:
        abandon(ctx, told=True)
        return True
    if table.status is TableStatus.LOBBY:
        table.created_at = ctx.now  # the lobby's whole time again: its expiry counts from its creation
    ctx.record(TableResumed())
    return True


def abandon(ctx: TableContext, *, told: bool) -> None:
    """Close a table whose chat stayed out of reach too long, without rating (``told``: the chat is back, and
    is told; else nothing is drawn, as nothing could reach it)."""
    ctx.table.status = TableStatus.CANCELLED
    ctx.changed = True
    ctx.record(TableAbandoned(told))


def pause_deadline(ctx: TableContext) -> tuple[str, float] | None:
    """The deadline of a paused table: the moment it is closed (``None`` when it is not paused)."""
    paused = ctx.table.paused
    if paused is None or ctx.table.status not in _LIVE:
        return None
    key = DeadlineKey(ctx.table.id, DeadlineKind.PAUSED, (str(int(paused)),)).key
    return key, paused + ctx.settings.pause_limit
