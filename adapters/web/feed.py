"""The pages watching each table, fed each move in turn.

A :class:`Hub` keeps one :class:`TableFeed` per table that has open pages. A feed holds the newest stored
version of its table (and the last version of the hand before, whose last moves a lagging page still has to
show). Changes are pushed: every write of a table, by any worker (a page's press, a chat's, a deadline), is
announced through the service's :class:`~bot.store.TableNotices`, which the hub follows for its feeds; a
newer version's notice reads the table once, for all its pages. An interrupted subscription re-reads every
feed, and a slow safety poll (every :attr:`Hub.poll` seconds) reads them all in case a notice was lost.

Each :class:`Page` walks from what it last showed to the newest state **one record entry at a time**, at
least ``pause`` seconds apart (:meth:`Hub.frames`): a run of machine moves is seen move by move, and the last
answer before the count is shown. The time a page was sent a seña's ⚡ is kept (:attr:`Page.shown`): a catch
from that page counts its window from then (:meth:`bot.app.Service.press`, ``shown_at``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable

from adapters.web.frames import Json, page
from adapters.web.lobby import again_button, lobby_page
from adapters.web.watchers import Page, Snapshot, TableFeed
from bot.app import Service
from bot.kernel import TableStatus, WebVisitor
from bot.store import NoticeSubscription, StoreError, StoreUnavailable, TableNotice, TableNotices

log = logging.getLogger(__name__)

#: Seconds between two keep-alive comments on an idle stream (proxies close silent connections).
KEEPALIVE = 15.0
#: A page lingers on a hand's count at least this many pauses before the next hand's deal.
COUNT_LINGER = 4
#: A visitor's open pages at most (a new one closes their oldest): a credential opens no unbounded sessions.
PAGES_PER_USER = 8
#: Seconds a page may wait before opening its event stream; then it is forgotten.
ABANDONED = 60.0
#: What a page is sent with its first frame only (its texts, language, catch window and pause).
ONCE = ("texts", "lang", "window", "pause")
#: Tables read at once by a poll (the store's connections are shared with the presses, which come first).
POLL_READS = 8
#: Seconds between two safety polls of every watched table (changes are pushed; this finds a lost notice).
SAFETY_POLL = 5.0
#: Actions one visitor may send: a burst of this many, refilled at :data:`ACTIONS_PER_SECOND`.
ACTION_BURST = 12
ACTIONS_PER_SECOND = 4.0


class Hub:
    """Every feed and page of this process; the stream of frames each page is sent."""

    def __init__(
        self,
        service: Service,
        *,
        pause: float = 0.7,
        poll: float = SAFETY_POLL,
        clock: Callable[[], float] = time.time,
        notices: TableNotices | None = None,
    ) -> None:
        """Feeds read through ``service``'s table store when ``notices`` (the service's by default) announce
        a write; moves ``pause`` s apart; every feed polled all the same every ``poll`` s."""
        self.service = service
        self.pause = pause
        self.poll = poll
        self.clock = clock
        self.feeds: dict[str, TableFeed] = {}
        self.pages: dict[str, Page] = {}
        self._buckets: dict[str, tuple[float, float]] = {}
        self._task: asyncio.Task[None] | None = None
        self.reads = 0
        """How many times a table was read for the pages (one per change heard, and the safety polls)."""
        notices = service.deps.notices if notices is None else notices
        self._notices: NoticeSubscription = notices.subscribe(self._noticed, self._interrupted)

    # --- pages ---------------------------------------------------------------------------------------

    async def open_page(self, visitor: WebVisitor) -> Page | None:
        """A new page for ``visitor`` (``None`` if the table does not exist; :class:`StoreUnavailable` if it
        could not be read)."""
        feed = self.feeds.get(visitor.table)
        if feed is None:  # registered before reading it: pages opening at once share one feed
            feed = self.feeds[visitor.table] = TableFeed(visitor.table)
        try:
            async with feed.first_read:  # ...and one read of it, once its notices are heard (none is missed)
                if not feed.followed:
                    await self._notices.follow(visitor.table)
                    feed.followed = True
                readable = feed.newest is not None or await self._refresh(feed)
        finally:
            if feed.newest is None and not feed.pages and self.feeds.get(visitor.table) is feed:
                self._drop_feed(feed)  # (unread, or its follow failed: no feed nobody watches is kept)
        if feed.newest is None:
            if not readable:
                raise StoreUnavailable("the table could not be read")
            return None
        page_id = secrets.token_urlsafe(18)
        opened = Page(page_id, visitor)
        feed.pages.add(opened)
        self.pages[page_id] = opened
        mine = [p for p in self.pages.values() if p.visitor.user.key == visitor.user.key]
        for oldest in mine[: max(0, len(mine) - PAGES_PER_USER)]:
            self.close_page(oldest)
        return opened

    def close_page(self, closing: Page) -> None:
        """Forget a page (its visitor left, or it was dropped): its stream ends, its table's feed goes once
        nobody watches it. Closed twice (dropped, then its stream ended), it leaves the feed alone."""
        if self.pages.pop(closing.id, None) is None:
            return
        closing.wake.set()
        feed = self.feeds.get(closing.table)
        if feed is not None:
            feed.pages.discard(closing)
            if not feed.pages:
                self._drop_feed(feed)

    def _drop_feed(self, feed: TableFeed) -> None:
        """Nobody watches the feed's table any more: forget it, and stop hearing its notices."""
        del self.feeds[feed.table_id]
        if feed.followed:
            self._notices.unfollow(feed.table_id)

    def allow_action(self, user_key: str) -> bool:
        """Whether ``user_key`` may act now (a token bucket: :data:`ACTION_BURST`, refilled steadily)."""
        now = time.monotonic()
        tokens, at = self._buckets.get(user_key, (float(ACTION_BURST), now))
        tokens = min(float(ACTION_BURST), tokens + (now - at) * ACTIONS_PER_SECOND)
        if len(self._buckets) > 100_000:
            self._buckets.clear()
        if tokens < 1.0:
            self._buckets[user_key] = (tokens, now)
            return False
        self._buckets[user_key] = (tokens - 1.0, now)
        return True

    # --- keeping feeds fresh -------------------------------------------------------------------------

    def _noticed(self, notice: TableNotice) -> None:
        """A table was written: read it, unless its feed holds that version already (a page's first read)."""
        feed = self.feeds.get(notice.table_id)
        if feed is None:
            return
        feed.heard = max(feed.heard, notice.version)
        if feed.newest is None or notice.version > feed.newest.version:
            self._read_soon(feed)

    def _interrupted(self) -> None:
        """The subscription was interrupted and is back: notices may have been lost, every feed is read."""
        for feed in list(self.feeds.values()):
            feed.reread = True
            self._read_soon(feed)

    def _read_soon(self, feed: TableFeed) -> None:
        """Read ``feed``'s table in the background: one read at a time, the notices meanwhile folded in."""
        if feed.reading is None:
            feed.reading = asyncio.create_task(self._read_while_behind(feed))

    async def _read_while_behind(self, feed: TableFeed) -> None:
        """Read the table; again while a notice during a read announced a newer version, or a gap came."""
        try:
            while True:
                feed.reread = False
                before = 0 if feed.newest is None else feed.newest.version
                if not await self._refresh(feed):
                    return  # the store is away: the safety poll reads it again
                after = 0 if feed.newest is None else feed.newest.version
                if not (feed.reread or (feed.heard > after > before)):
                    return
        finally:
            feed.reading = None

    async def _refresh(self, feed: TableFeed) -> bool:
        """Read the feed's table (a newer version wakes its pages); whether the store answered."""
        self.reads += 1
        try:
            stored = await self.service.deps.tables.load(feed.table_id)
            if stored is not None:
                feed.update(stored.version, stored.data)
        except StoreError:
            return False  # the next poll tries again; the pages keep what they show
        except Exception:  # a table this version cannot read: its pages keep what they show, the rest go on
            log.exception("web: table %s could not be read for its pages", feed.table_id)
        return True

    def start(self) -> None:
        """Start the safety poll of the watched tables (notices are heard from the first page on)."""
        self._task = asyncio.create_task(self._poll_forever())

    async def stop(self) -> None:
        """Stop notices and polls; end every page's stream (it reconnects to the process serving next)."""
        await self._notices.close()
        reads = [f.reading for f in self.feeds.values() if f.reading is not None]
        for task in [self._task, *reads]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = None
        closing = list(self.pages.values())
        self.pages.clear()
        for watcher in closing:
            watcher.wake.set()

    async def _poll_forever(self) -> None:
        reading = asyncio.Semaphore(POLL_READS)

        async def refresh(feed: TableFeed) -> None:
            async with reading:
                await self._refresh(feed)

        while True:
            await asyncio.sleep(self.poll)
            now = time.monotonic()
            for stale in [
                p for p in self.pages.values() if not p.streaming and now - p.opened_at > ABANDONED
            ]:
                self.close_page(stale)
            feeds = list(self.feeds.values())
            if feeds:
                await asyncio.gather(*(refresh(f) for f in feeds))

    # --- a page's frames -----------------------------------------------------------------------------

    async def frames(self, watcher: Page) -> AsyncIterator[Json | None]:
        """The frames of one page, each move in turn (``None``: nothing new for a while, a keep-alive)."""
        watcher.streaming = True
        while watcher.id in self.pages:
            step = self.next_frame(watcher)
            if step is None:
                watcher.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(watcher.wake.wait(), KEEPALIVE)
                    continue
                yield None
                continue
            frame, wait = step
            delay = watcher.last_move + wait - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if wait:
                watcher.last_move = time.monotonic()
            self._note_flashes(watcher, frame)
            if watcher.sent is not None:  # what does not change goes once: the page keeps it
                for constant in ONCE:
                    frame.pop(constant, None)
            # An earlier move's frame is not the version it was replayed from: the page goes on to it.
            watcher.sent = (frame["hand"], frame["k"], frame["v"] if frame["live"] else -1)
            yield frame

    def next_frame(self, watcher: Page) -> tuple[Json, float] | None:
        """The frame this page should be sent next, and the pause since the last move it must wait first
        (0: at once); ``None`` when it shows the newest state."""
        feed = self.feeds.get(watcher.table)
        if feed is None or feed.newest is None:
            return None
        newest = feed.newest
        if watcher.sent is None:
            return self._frame(feed, watcher, newest, newest.entries), 0.0
        hand_no, shown, version = watcher.sent
        if version == newest.version:
            return None
        old = feed.hands.get(hand_no)
        if hand_no < newest.table.hand_no and old is not None and shown < old.entries:
            return self._frame(feed, watcher, old, shown + 1), self.pause  # the old hand's last moves
        if hand_no < newest.table.hand_no and newest.hand is not None:
            # A new deal: shown alone first, after the count lingered.
            linger = self.pause * COUNT_LINGER if old is not None else 0.0
            return self._frame(feed, watcher, newest, 0), linger
        if hand_no == newest.table.hand_no and shown < newest.entries:
            return self._frame(feed, watcher, newest, shown + 1), self.pause
        return self._frame(feed, watcher, newest, newest.entries), 0.0

    def _frame(self, feed: TableFeed, watcher: Page, snap: Snapshot, entries: int) -> Json:
        table, match = snap.table, snap.match
        seat = table.seat_of(watcher.visitor.user.key)
        lang = watcher.visitor.user.lang
        if match is None or match.hand is None or table.status is TableStatus.LOBBY:
            return lobby_page(table, watcher.visitor.user, lang, snap.version, self.clock())
        live = entries >= snap.entries
        hand = feed.replayed(snap, entries)
        frame = page(table, match, hand, seat, lang=lang, version=snap.version, live=live, now=self.clock())
        frame["pause"] = self.pause  # the page holds the count this long after the last answer
        if live:
            frame["again"] = again = again_button(table, seat, frame["lang"])
            if again is not None and match.over and frame.get("results"):
                # Its last line says to type /newgame: the page has the button instead, under who won.
                frame["results"] = results = frame["results"][:-1]
                again["headline"] = results[-1] if results else ""
        return frame

    def _note_flashes(self, watcher: Page, frame: Json) -> None:
        """Remember when this page was first sent each seña's ⚡ (its catch window counts from then)."""
        for flash in frame.get("flashes", ()):
            key = (frame["hand"], flash["index"])
            if key not in watcher.shown:
                watcher.shown[key] = self.clock()
                if len(watcher.shown) > 64:
                    watcher.shown.pop(next(iter(watcher.shown)))
            flash["age"] = round(self.clock() - watcher.shown[key], 2)
