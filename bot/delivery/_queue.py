"""A lane's queue (:class:`Lane`): the calls one chat waits for, and which of them its worker makes next.

Views of the same table and slot (``lobby``, ``table``, ``hand``: :data:`COALESCING_SLOTS`) coalesce: a newer
state takes the place of the pending one, so no queue of stale edits ever builds up. Answers to commands
coalesce too, by subject, and one the chat just saw is not queued again (:mod:`bot.delivery._answers`).
Other views (a showdown, a table's notices, private messages) wait in order, each once, and a bounded number
of them. What the drawer says comes next (a view shown again, buttons to remove, a copy to delete:
:data:`~bot.delivery._pending.FollowUps`) goes to the front.

The worker takes the calls in order, with two exceptions (:meth:`Lane.next_call`): a new message over the
chat's budget waits while the calls behind it go (:mod:`bot.delivery._budget`), and the game's calls (its
views, in their order) go before answers — an answer waits for them :data:`ANSWER_PATIENCE` seconds at most,
then goes next, but never two answers in a row while the game has a call to make: a table edit waits behind
one answer at most, and a game that never stops calling cannot silence a chat.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Literal

from bot.delivery._answers import RecentAnswers, subject
from bot.delivery._budget import PostBudget, is_game
from bot.delivery._pending import CallNext, FollowUps, Pending, ViewCall, same_slot, versioned
from bot.delivery._shown import Shown, ShownCache
from bot.kernel import KEPT_SLOTS, OutMessage

#: Slots whose newer state replaces a pending older one (the kept slots).
COALESCING_SLOTS = KEPT_SLOTS
#: Messages of other slots (answers, notices, rules…) a lane holds at most; more are dropped.
MAX_PENDING_NOTICES = 20
#: Seconds an answer lets the game's calls go first; then it goes next.
ANSWER_PATIENCE = 3.0
#: The longest a worker waits for a budget before it looks again (a cap: the wait is exact otherwise).
_LONGEST_WAIT = 60.0

Refusal = Literal["duplicates", "coalesced", "repeated", "dropped"]
"""Why a view was not queued (the name of the count it goes to): the same one waits already, a newer answer
of its subject took the waiting one's place, the chat just saw it, or the lane holds too many."""


@dataclass
class Lane:
    """One chat's pending calls, the worker that makes them, when it last called the chat, its budget of new
    messages and the answers it posted last."""

    chat_id: str
    budget: PostBudget = field(default_factory=lambda: PostBudget(None))
    answers: RecentAnswers = field(default_factory=lambda: RecentAnswers(0.0))
    pending: list[Pending] = field(default_factory=list)
    last_call: float = -1e9
    answered_last: bool = False
    """The lane's last call was an answer's: the game's next call goes first, however long answers wait."""
    worker: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a view is queued: a worker waiting for its chat's budget looks again."""

    def views_of(self, message: OutMessage) -> list[Pending]:
        """The views waiting to be drawn on the message of ``message``'s slot (its epoch's)."""
        return [pending for pending in self.pending if pending.sends and same_slot(pending.message, message)]

    def add(self, message: OutMessage, now: float) -> Refusal | None:
        """Queue a view — or let it take the place of the last one waiting for its slot (newest state
        wins), or of the answer waiting on its subject. Else the name of the count it goes to instead."""
        if message.slot in COALESCING_SLOTS:
            waiting = self.views_of(message) if not message.fresh else []
            if waiting:
                waiting[-1].take(message)
                return None
        elif (about := subject(message)) is not None:
            if self.answers.repeats(message, now):
                return "repeated"
            for pending in self.pending:
                if pending.sends and subject(pending.message) == about:
                    replaced, pending.message = pending.message, message
                    return "duplicates" if replaced == message else "coalesced"
        elif any(isinstance(p.kind, ViewCall) and p.message == message for p in self.pending):
            return "duplicates"  # the same notice twice in a queue says nothing more
        notices = sum(p.message.slot not in COALESCING_SLOTS for p in self.pending)
        if message.slot not in COALESCING_SLOTS and notices >= MAX_PENDING_NOTICES:
            return "dropped"  # a flooded chat gets the first ones, not an ever-growing backlog
        self.pending.append(Pending(message, queued=now))
        return None

    def next_call(self, now: float, shown: ShownCache) -> Pending | float:
        """The call to make now: the game's first, or the first answer (each in its order; the answer first
        once it waited :data:`ANSWER_PATIENCE`, unless an answer went last), whichever may go — else the
        seconds until a new message fits the budget (which calls post one, this worker's cache of what it
        drew says: ``shown``)."""
        game = next((p for p in self.pending if is_game(p.message)), None)
        answer = next((p for p in self.pending if not is_game(p.message)), None)
        impatient = answer is not None and not self.answered_last and now - answer.queued >= ANSWER_PATIENCE
        first, second = (answer, game) if impatient else (game, answer)
        waits = []
        for item in (first, second):
            if item is None:
                continue
            posting = posts(item, shown.get(self.chat_id, item.message))
            wait = self.budget.wait(now, game=is_game(item.message)) if posting else 0.0
            if wait <= 0:
                return item
            waits.append(wait)
        return min([*waits, _LONGEST_WAIT])

    def called(self, item: Pending, *, posted: int, at: float) -> None:
        """The worker made ``item``'s call at ``at``, which posted ``posted`` new messages."""
        self.answered_last = not is_game(item.message)
        for _ in range(posted):
            self.budget.spend(at)
            self.answers.posted(item.message, at)

    async def wait_for_budget(self, seconds: float) -> None:
        """Wait ``seconds`` for the chat's budget, or less if a view is queued meanwhile (it may go now)."""
        self.arrived.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.arrived.wait(), seconds)

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


def posts(item: Pending, drawn: Shown | None) -> bool:
    """Whether a call posts a new message, as far as this worker can tell (it must fit the chat's budget): a
    view that is not kept, one that asks for a new message, one whose slot shows no message this worker drew
    (``drawn``; if another worker's shows it, it is edited — a call that waited for the budget for nothing)
    or only one of an earlier epoch (a new hand's). A post this worker could not foresee (the message to
    edit was deleted) is counted once made."""
    message = item.message
    if item.kind not in (ViewCall.DRAW, ViewCall.DRAW_FORCED, ViewCall.RECHECK):
        return False
    if message.fresh or not message.kept or drawn is None or drawn.message_id is None:
        return True
    return versioned(message) and drawn.version < message.since
