"""Delivering views to a chat platform: latest state wins, within the platform's limits.

Each destination chat has a *lane*: a short queue of pending views and one worker that sends them, at most
one call per ``min_interval`` seconds for that chat (each platform says how often a chat may be written to,
edits included; the adapter chooses the interval). Views of the same table and slot (``lobby``, ``table``,
``hand``) coalesce: a newer state replaces the pending one, so no queue of stale edits ever builds up.
Answers to commands coalesce by subject, and one the chat just got is not posted again
(:mod:`bot.delivery._answers`). Other views (showdowns, a table's notices, private messages) are always sent,
in order. A chat may have a budget of new messages (``new_messages``: Telegram's groups), spent on the game
first (:mod:`bot.delivery._budget`): a post over it waits while the lane's edits go on, and the game's calls
go before answers (the queue's rules are :class:`~bot.delivery._queue.Lane`'s). A view that would not change
what its slot shows costs no call.

A fresh view of a coalescing slot supersedes the message the slot showed until then (a new hand's table, new
cards after the discards, a table posted again): the old message loses its buttons in the next call of the
lane, so that a chat never shows two live keyboards for one slot — unless this worker's cache, or the store's
record of the calls that landed on it (:mod:`bot.delivery._clearing`), proves the old one had none.

Each call is made by a :class:`~bot.delivery._drawing.Drawer`, which keeps several workers drawing one table
on its newest state (views carry their table version; see :mod:`bot.delivery._drawing`). The drawer answers
each call with what comes next, and the lane queues it: the calls it decided on (a newer view shown again,
buttons to remove, a second copy to delete) are the lane's next ones, paced like any other, and a view left
to another worker's post is queued again once that worker's claim to post ran out.

The platform is a :class:`~bot.delivery._transport.Transport` (send, edit, clear the buttons, delete) whose
failures are typed: ``NotModified`` is success; ``MessageGone`` posts the view again; ``RateLimited`` on a
new message makes the chat's posts wait (its edits go on), on another call the lane waits, then sends the
newest state; ``Unreachable`` for a user (blocked the bot, closed DMs) marks them and drops their private
views, for a chat drops its views and pauses its table; other refusals are logged and the view dropped. If
the surfaces store fails, the view is dropped (logged); what the drawer decided before still comes next.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from bot.delivery._answers import REPEAT_WINDOW, RecentAnswers
from bot.delivery._budget import NewMessages, PostBudget
from bot.delivery._drawing import Drawer, RecordFailed
from bot.delivery._pending import (
    CallLater,
    FollowUps,
    LatestViews,
    Pending,
    ViewCall,
    as_edit,
)
from bot.delivery._queue import MAX_PENDING_NOTICES, Lane
from bot.delivery._surfaces import SurfaceStore
from bot.delivery._transport import CountingTransport, DeliveryError, RateLimited, Transport, Unreachable
from bot.kernel import DELIVERY_DROPPED, PLATFORM_ERRORS, RATE_LIMITED, RETRY_AFTER, OutMessage, watch_queue
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

#: Idle lanes are forgotten when this many chats have one (then when twice as many as remain).
LANES_BEFORE_SWEEP = 1000
#: What a delivery counts: its calls (``send``, ``edit``, ``stripped``, ``deleted``), their answers
#: (``not_modified``, ``retry_after``, ``blocked``), views shown again for another worker (``reshown``), and
#: views that cost no call, by why (``skipped``, ``superseded``, ``left``; and dropped unsent: ``duplicates``,
#: ``coalesced``, ``repeated``, ``dropped`` — see :class:`~bot.delivery._queue.Refusal`).
STATS = (
    *("send", "edit", "skipped", "not_modified", "retry_after", "blocked", "stripped", "deleted"),
    *("duplicates", "coalesced", "repeated", "dropped", "superseded", "reshown", "left"),
)


def destination(message: OutMessage) -> str | None:
    """The chat a view goes to: the user's private chat for a private view, else the table's chat."""
    return message.user if message.user is not None else message.chat


class Delivery:
    """Sends and edits messages for the core's views, one lane per chat, through one platform's transport."""

    def __init__(
        self,
        transport: Transport,
        surfaces: SurfaceStore,
        *,
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        max_attempts: int = 3,
        on_unreachable: Callable[[OutMessage], Awaitable[None]] | None = None,
        platform: str = "chat",
        key_platform: str = "",
        new_messages: Callable[[str], NewMessages | None] | None = None,
        repeat_window: float = REPEAT_WINDOW,
    ) -> None:
        """Call the platform through ``transport``; ``surfaces`` remembers which message shows what.

        ``on_unreachable`` hears of a private view that could not be delivered, to tell the table.
        ``new_messages`` says each chat's budget of new messages (``None``: none), which the lanes spend on
        the game first (:mod:`bot.delivery._budget`); an answer the chat got within ``repeat_window``
        seconds is not posted again (:mod:`bot.delivery._answers`)."""
        self.transport = transport
        self.platform = platform
        """The platform's name in metrics (``telegram``, ``discord``)."""
        self.key_platform = key_platform
        """The platform part of the chat keys it delivers to (``tg``, ``dc``): its outbox's name."""
        watch_queue(self)
        self.on_unreachable = on_unreachable
        self.on_chat_lost: Callable[[OutMessage], Awaitable[object]] | None = None  # pauses its table
        self.surfaces = surfaces
        self.min_interval = min_interval
        self.clock = clock
        self.max_attempts = max_attempts
        self.new_messages = new_messages
        self.repeat_window = repeat_window
        self._lanes: dict[str, Lane] = {}
        self._evict_at = LANES_BEFORE_SWEEP
        self._latest = LatestViews()
        self.stats: dict[str, int] = dict.fromkeys(STATS, 0)
        """How many times each of :data:`STATS` happened."""
        self._counted = CountingTransport(transport)
        self.drawer = Drawer(self._counted, surfaces, self.stats)
        """Draws each view on its slot's message (and remembers what it drew)."""
        self._timers: set[asyncio.TimerHandle] = set()

    def owns(self, chat: str) -> bool:
        """Whether ``chat`` is on this delivery's platform."""
        return self.transport.owns(chat)

    def deliver(self, messages: Sequence[OutMessage]) -> None:
        """Queue views for delivery (returns at once; the lanes' workers send them)."""
        for message in messages:
            chat_id = destination(message)
            if chat_id is None or not self.transport.owns(chat_id):
                continue
            lane = self._lane(chat_id)
            if message.kept:
                self._latest.note(chat_id, message)
            self._enqueue(lane, message)
            self._wake(lane)

    async def showing(self, message: OutMessage) -> str | None:
        """The id of the message that shows ``message``'s slot now (``None``: none, or not a kept slot)."""
        chat_id = destination(message)
        if chat_id is None:
            return None
        try:
            return await self.drawer.known(chat_id, message)
        except StoreUnavailable:
            return None

    def hold(self, message: OutMessage) -> None:
        """The adapter is about to show ``message`` itself, on the message showing its slot (an
        interaction's update): it becomes the slot's newest state, and an older one still pending is not
        sent over it. Follow with :meth:`shown_by_adapter` once shown, or :meth:`deliver` if that failed."""
        chat_id = destination(message)
        if chat_id is None or not self.transport.owns(chat_id):
            return
        self._latest.note(chat_id, message)
        for pending in self._lane(chat_id).views_of(message):
            pending.take(message)

    def shown_by_adapter(self, message: OutMessage) -> None:
        """The adapter made the slot's message show ``message`` itself (an interaction's update).

        If a newer view of that slot was queued meanwhile — or even sent, then overwritten by this older
        one — the newest is sent again, whatever the cache says; otherwise nothing more is sent for it.
        """
        chat_id = destination(message)
        if chat_id is None or not self.transport.owns(chat_id):
            return
        lane = self._lane(chat_id)
        latest = self._latest.get(chat_id, message)
        if latest is None or (latest.text, latest.buttons) == (message.text, message.buttons):
            self.drawer.shown.remember(chat_id, message)
            if message.version > 0:
                # Another worker may hold a newer view of this slot: the lane checks, with no call to pay.
                lane.pending.insert(0, Pending(message, ViewCall.CHECK))
                self._wake(lane)
            return
        self.drawer.shown.forget(chat_id, message)
        waiting = lane.views_of(message)
        if not waiting:
            lane.pending.append(Pending(as_edit(latest), ViewCall.DRAW_FORCED))
        for pending in waiting:
            pending.force()
        self._wake(lane)

    async def adopt(self, message: OutMessage, message_id: str) -> None:
        """The adapter posted ``message`` itself, as ``message_id`` (the reply to a slash command).

        The slot's next view edits that message, and the message it supersedes loses its buttons, exactly as
        if the lane had sent it.
        """
        chat_id = destination(message)
        if chat_id is None or not self.transport.owns(chat_id):
            return
        lane = self._lane(chat_id)
        try:
            self._follow(lane, await self.drawer.adopt(chat_id, message, message_id))
        except StoreUnavailable as failure:
            self._follow_unfinished(lane, failure)
            log.warning("surfaces store unavailable; a reply's message id was not kept")
        self._wake(lane)

    async def posts_new(self, message: OutMessage) -> bool:
        """Whether delivering ``message`` would post a new message rather than edit the one showing its slot
        (so an adapter may post it itself, as a reply, and :meth:`adopt` it)."""
        chat_id = destination(message)
        if chat_id is None or message.fresh:
            return True
        try:
            return await self.drawer.known(chat_id, message) is None
        except StoreUnavailable:
            return True

    def _lane(self, chat_id: str) -> Lane:
        lane = self._lanes.get(chat_id)
        if lane is None:
            if len(self._lanes) >= self._evict_at:
                self._evict_idle()
            rule = None if self.new_messages is None else self.new_messages(chat_id)
            lane = self._lanes[chat_id] = Lane(chat_id, PostBudget(rule), RecentAnswers(self.repeat_window))
        return lane

    def _evict_idle(self) -> None:
        """Forget the lanes with nothing to send whose pacing interval is over and whose budget has nothing
        to remember (a lane costs memory for every chat ever written to otherwise); forgetting them loses
        nothing but the answers they posted last (at worst one is posted again)."""
        now = self.clock()
        for chat_id, lane in list(self._lanes.items()):
            if not lane.busy and now - lane.last_call >= self.min_interval and lane.budget.quiet(now):
                del self._lanes[chat_id]
        # Sweep again once as many lanes again are open (amortised: no sweep per call).
        self._evict_at = max(LANES_BEFORE_SWEEP, 2 * len(self._lanes))

    def pending_count(self) -> int:
        """Views waiting in every lane (the delivery queue depth)."""
        return sum(len(lane.pending) for lane in self._lanes.values())

    def lane_count(self) -> int:
        """How many chats have a lane now (memory use; tests)."""
        return len(self._lanes)

    def _wake(self, lane: Lane) -> None:
        lane.arrived.set()
        if lane.pending and (lane.worker is None or lane.worker.done()):
            lane.idle.clear()
            lane.worker = asyncio.create_task(self._run(lane), name=f"lane-{lane.chat_id}")

    def _enqueue(self, lane: Lane, message: OutMessage) -> None:
        refused = lane.add(message, self.clock())
        if refused is not None:
            self._dropped(refused)
        if refused == "dropped":
            log.info("chat %s has %d messages waiting: one more dropped", lane.chat_id, MAX_PENDING_NOTICES)

    def _follow(self, lane: Lane, then: FollowUps) -> None:
        """Queue what the drawer said comes next: calls to make next, and calls to queue again later."""
        lane.call_next(then)
        for follow in then:
            if isinstance(follow, CallLater):
                self._later(lane.chat_id, follow.call, follow.seconds)

    def _follow_unfinished(self, lane: Lane, failure: StoreUnavailable) -> None:
        """The store failed during a drawer's call: the follow-ups it decided before, if any, still hold."""
        if isinstance(failure, RecordFailed):
            self._follow(lane, failure.then)

    def _later(self, chat_id: str, item: Pending, delay: float) -> None:
        """Queue ``item`` again in ``delay`` seconds (unless a newer view of its slot is waiting then)."""
        loop = asyncio.get_running_loop()
        self._timers = {t for t in self._timers if t.when() > loop.time()}
        self._timers.add(loop.call_later(delay, self._requeue, chat_id, item))

    def _requeue(self, chat_id: str, item: Pending) -> None:
        lane = self._lane(chat_id)
        if not lane.views_of(item.message):
            lane.pending.append(item)
            self._wake(lane)

    async def flush(self, timeout: float = 10.0) -> None:
        """Wait until every lane is idle (tests and shutdown)."""
        lanes = [lane for lane in self._lanes.values() if lane.worker is not None and not lane.worker.done()]
        if lanes:
            await asyncio.wait_for(asyncio.gather(*(lane.idle.wait() for lane in lanes)), timeout)

    async def close(self) -> None:
        """Stop every worker (pending views are dropped)."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        for lane in self._lanes.values():
            if lane.worker is not None:
                lane.worker.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await lane.worker
        self._lanes.clear()

    def _dropped(self, why: str) -> None:
        """Count a view dropped unsent (``duplicates``, ``coalesced``, ``repeated``, ``dropped``)."""
        self.stats[why] += 1
        DELIVERY_DROPPED.labels(self.platform, why).inc()

    async def _run(self, lane: Lane) -> None:
        try:
            turn: float | None = None  # when the turn this lane waited for began, while no call used it
            paced = False  # the lane has just waited for its turn: the next call takes it
            while lane.pending:
                item = lane.next_call(self.clock(), self.drawer.shown)
                if not isinstance(item, Pending):
                    await lane.wait_for_budget(item)  # only posts over the chat's budget are waiting
                    paced = False
                    continue
                if item.kind is not ViewCall.CHECK and not paced and not self._unused(lane, turn):
                    await self._pace(lane)
                    turn, paced = self.clock(), True
                    continue  # choose again: a newer view may have come while the lane waited
                paced = False
                lane.pending.remove(item)
                if lane.answers.repeats(item.message, self.clock()):
                    self._dropped("repeated")  # an identical answer was being posted when it was queued
                    continue
                started = self.clock()
                retry = await self._attempt(lane, item)
                made = self._counted.made(lane.chat_id)
                if made.calls:
                    lane.last_call = started
                    lane.called(item, posted=made.sends, at=self.clock())
                if retry is not None and made.posting:  # a new message refused: only the posts wait
                    lane.budget.refuse_until(self.clock() + retry)
                elif retry is not None:
                    await asyncio.sleep(retry)
        finally:
            lane.idle.set()

    def _unused(self, lane: Lane, turn: float | None) -> bool:
        """Whether a turn the lane waited for, and made no call in since (a view skipped, superseded, or left
        to another worker's post), is still fresh enough for the next call: half an interval at most, so
        that a call never comes much later than its turn, when other workers' turns may have begun."""
        return turn is not None and lane.last_call < turn and self.clock() - turn <= self.min_interval / 2

    async def _pace(self, lane: Lane) -> None:
        """Wait for the lane's turn to call: this worker's interval since its last call to the chat, then a
        turn booked in the store, which every worker writing to the chat shares."""
        if self.min_interval <= 0:
            return
        wait = lane.last_call + self.min_interval - self.clock()
        if wait > 0:
            await asyncio.sleep(wait)
        try:
            wait = await self.surfaces.pace(lane.chat_id, self.min_interval)
        except StoreUnavailable:
            return  # this worker's own pacing, above, still holds
        if wait > 0:
            await asyncio.sleep(wait)

    async def _attempt(self, lane: Lane, item: Pending) -> float | None:
        """Make one call; on a rate limit, put it back (unless newer state came, or too often): the wait."""
        kind, message = item.kind, item.message
        try:
            if not isinstance(kind, ViewCall):
                self._follow(lane, await self.drawer.clearer.clear(lane.chat_id, message, kind))
            elif kind is ViewCall.CHECK:
                self._follow(lane, await self.drawer.check_shown(lane.chat_id, message))
            else:
                self._follow(lane, await self.drawer.draw(lane.chat_id, item))
        except RateLimited as exc:
            self.stats["retry_after"] += 1
            RATE_LIMITED.labels(self.platform).inc()
            RETRY_AFTER.labels(self.platform).inc(exc.retry_after)
            lane.put_back(item, self.max_attempts)
            return exc.retry_after
        except Unreachable:
            await self._unreachable(lane, message)
        except StoreUnavailable as failure:
            self._follow_unfinished(lane, failure)
            log.warning("surfaces store unavailable; a view was not delivered")
        except DeliveryError as exc:
            PLATFORM_ERRORS.labels(self.platform, type(exc).__name__.lower()).inc()
            log.warning(
                "the platform refused a view for chat %s: %s", lane.chat_id, exc, extra={"chat": lane.chat_id}
            )
        return None

    async def _unreachable(self, lane: Lane, message: OutMessage) -> None:
        """The chat cannot be written to: a user's private views are dropped, the user marked, the table
        told; a chat's views are all dropped, its table paused (``on_chat_lost``): nothing is retried."""
        self.stats["blocked"] += 1
        PLATFORM_ERRORS.labels(self.platform, "unreachable").inc()
        private = message.user is not None
        lane.pending = [p for p in lane.pending if private and p.message.user is None]
        if private:
            with contextlib.suppress(StoreUnavailable):
                await self.surfaces.set_reachable(lane.chat_id, False)
        tell = self.on_unreachable if private else self.on_chat_lost
        try:
            if tell is not None:
                await tell(message)
        except Exception:  # a notice must never break the lane
            log.exception("could not tell the core about a chat that cannot be written to")
        log.info("chat %s cannot be written to", lane.chat_id, extra={"chat": lane.chat_id})
