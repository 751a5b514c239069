"""A lane's queue (:class:`Lane`): the calls one chat waits for, in the order its worker makes them.

Views of the same table and slot (``lobby``, ``table``, ``hand``: :data:`COALESCING_SLOTS`) coalesce: a newer
state takes the place of the pending one, so no queue of stale edits ever builds up. Views of other slots
(answers, notices, rules…) wait in order, each once, and a bounded number of them. What the drawer says comes
next (a view shown again, buttons to remove, a copy to delete: :data:`~bot.delivery._pending.FollowUps`) goes
to the front.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

from bot.delivery._pending import CallNext, FollowUps, Pending, ViewCall, same_slot
from bot.kernel import KEPT_SLOTS, OutMessage

#: Slots whose newer state replaces a pending older one (the kept slots).
COALESCING_SLOTS = KEPT_SLOTS
#: Messages of other slots (answers, notices, rules…) a lane holds at most; more are dropped.
MAX_PENDING_NOTICES = 20


@dataclass
class Lane:
    """One chat's pending calls, the worker that makes them, and when it last called the chat."""

    chat_id: str
    pending: list[Pending] = field(default_factory=list)
    last_call: float = -1e9
    worker: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def views_of(self, message: OutMessage) -> list[Pending]:
        """The views waiting to be drawn on the message of ``message``'s slot (its epoch's)."""
        return [pending for pending in self.pending if pending.sends and same_slot(pending.message, message)]

    def add(self, message: OutMessage) -> Literal["duplicates", "dropped"] | None:
        """Queue a view — or let it take the place of the last one waiting for its slot (newest state
        wins). A view of another slot is queued unless the same one is waiting, or too many are: then the
        name of the count it goes to instead (``duplicates``, ``dropped``)."""
        if message.slot in COALESCING_SLOTS:
            waiting = self.views_of(message) if not message.fresh else []
            if waiting:
                waiting[-1].take(message)
                return None
        else:
            # Answers and notices: the same one twice in a queue says nothing more, and a lane holds a
            # bounded number (a flooded chat gets the first ones, not an ever-growing backlog).
            if any(isinstance(p.kind, ViewCall) and p.message == message for p in self.pending):
                return "duplicates"
            if sum(p.message.slot not in COALESCING_SLOTS for p in self.pending) >= MAX_PENDING_NOTICES:
                return "dropped"
        self.pending.append(Pending(message))
        return None

    def put_back(self, item: Pending, max_attempts: int) -> None:
        """A call the platform asked to wait for goes first again: a view of a coalescing slot unless a newer
        state of it is waiting already (latest state wins), another call unless it was tried
        ``max_attempts`` times."""
        item.attempts += 1
        if item.sends and item.message.slot in COALESCING_SLOTS:
            again = not self.views_of(item.message)
        else:
            again = item.attempts < max_attempts
        if again:
            self.pending.insert(0, item)

    def call_next(self, then: FollowUps) -> None:
        """Put the calls ``then`` says to make next at the front of the queue, in their order (a call to
        make later waits for a timer of the lane's delivery, not in the queue)."""
        self.pending[0:0] = [follow.call for follow in then if isinstance(follow, CallNext)]

    @property
    def busy(self) -> bool:
        """Whether the lane has calls waiting, or its worker is at work."""
        return bool(self.pending) or (self.worker is not None and not self.worker.done())
