"""Delivering views to Telegram: latest state wins, within Telegram's limits.

Each destination chat has a *lane*: a short queue of pending messages and one worker that sends them in
order, at most one call per ``min_interval`` seconds for that chat (Telegram: ~1 message per second per
chat, edits included). Views of the same table and slot (``lobby``, ``table``, ``hand``) coalesce: a newer
state replaces the pending one, so no queue of stale edits ever builds up. Other slots (showdowns, notices,
rules…) are always sent, in order. Views with ``markdown`` go out as HTML (:mod:`.formatting`).

A fresh message of a coalescing slot supersedes the one the slot showed until then (a new hand's table, new
cards after the discards, a table posted again): the old message loses its buttons in the next call of the
lane, so that a chat never shows two live keyboards for one slot — unless the cache of what each slot shows
proves the old one had none.

Failures: "message is not modified" is success; a message that was deleted is posted again; ``RetryAfter``
waits, then sends the newest state; a user who blocked the bot (403) is marked unreachable and their private
views are dropped without affecting the table; other errors are logged and the view dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from adapters.telegram.formatting import PARSE_MODE, markdown_to_html
from adapters.telegram.ids import telegram_id
from adapters.telegram.surfaces import Surfaces
from bot.store.ports import StoreUnavailable
from bot.views import OutMessage

log = logging.getLogger(__name__)

#: Slots whose newer state replaces a pending older one.
COALESCING_SLOTS = frozenset({"lobby", "table", "hand"})
MAX_TEXT = 4096
_SHOWN_CAP = 50_000


@dataclass
class _Pending:
    message: OutMessage
    attempts: int = 0
    strip: int | None = None
    """Not a view to send: remove the buttons of this superseded message (``message`` says whose slot)."""


@dataclass
class _Lane:
    chat_id: int
    pending: list[_Pending] = field(default_factory=list)
    last_call: float = -1e9
    worker: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)


def markup_of(message: OutMessage) -> InlineKeyboardMarkup | None:
    """The inline keyboard of a view (``None`` when it has no buttons)."""
    if not message.buttons:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(b.label, callback_data=b.token) for b in row]
            for row in message.buttons
            if row
        ]
    )


def text_of(message: OutMessage) -> tuple[str, str | None]:
    """The text to send for a view and its ``parse_mode`` (HTML for Markdown views, none for plain text)."""
    # Cut before converting: the visible text is never longer than the source, so it stays within the limit.
    text = message.text[:MAX_TEXT]
    if message.markdown:
        text = markdown_to_html(text)
    return (text or "…"), (PARSE_MODE if message.markdown else None)


def destination(message: OutMessage) -> int | None:
    """The Telegram chat a view goes to (a private view goes to the user's private chat)."""
    key = message.user if message.user is not None else message.chat
    return None if key is None else telegram_id(key)


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB 22 deprecates the int form; both forms are handled here
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


class Sender:
    """Sends and edits messages for the bot core's views, one lane per chat."""

    def __init__(
        self,
        bot: Bot,
        surfaces: Surfaces,
        *,
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        max_attempts: int = 3,
        on_unreachable: Callable[[OutMessage], Awaitable[None]] | None = None,
    ) -> None:
        """Use ``bot`` to call Telegram and ``surfaces`` to remember which message shows what.

        ``on_unreachable`` hears of a private view that could not be delivered (403), to tell the table.
        """
        self.bot = bot
        self.on_unreachable = on_unreachable
        self.surfaces = surfaces
        self.min_interval = min_interval
        self.clock = clock
        self.max_attempts = max_attempts
        self._lanes: dict[int, _Lane] = {}
        # What each slot shows now, so that an unchanged view costs no call (a cache: losing it is harmless).
        self._shown: dict[tuple[int, str, str], tuple[str, object]] = {}
        self.stats: dict[str, int] = {
            "send": 0,
            "edit": 0,
            "skipped": 0,
            "not_modified": 0,
            "retry_after": 0,
            "blocked": 0,
            "stripped": 0,
        }

    def deliver(self, messages: Sequence[OutMessage]) -> None:
        """Queue views for delivery (returns at once; the lanes' workers send them)."""
        for message in messages:
            chat_id = destination(message)
            if chat_id is None:
                continue
            lane = self._lanes.get(chat_id)
            if lane is None:
                lane = self._lanes[chat_id] = _Lane(chat_id)
            self._enqueue(lane, message)
            if lane.worker is None or lane.worker.done():
                lane.idle.clear()
                lane.worker = asyncio.create_task(self._run(lane), name=f"tg-lane-{chat_id}")

    @staticmethod
    def _enqueue(lane: _Lane, message: OutMessage) -> None:
        if message.slot in COALESCING_SLOTS and not message.fresh:
            for pending in reversed(lane.pending):
                if pending.strip is None and _same_slot(pending.message, message):
                    # Newest state wins; keep "post a new message" if the pending one asked for it.
                    pending.message = replace(message, fresh=pending.message.fresh)
                    return
        lane.pending.append(_Pending(message))

    async def flush(self, timeout: float = 10.0) -> None:
        """Wait until every lane is idle (tests and shutdown)."""
        lanes = [lane for lane in self._lanes.values() if lane.worker is not None and not lane.worker.done()]
        if lanes:
            await asyncio.wait_for(asyncio.gather(*(lane.idle.wait() for lane in lanes)), timeout)

    async def close(self) -> None:
        """Stop every worker (pending views are dropped)."""
        for lane in self._lanes.values():
            if lane.worker is not None:
                lane.worker.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await lane.worker
        self._lanes.clear()

    async def _run(self, lane: _Lane) -> None:
        try:
            while lane.pending:
                wait = lane.last_call + self.min_interval - self.clock()
                if wait > 0:
                    await asyncio.sleep(wait)
                item = lane.pending.pop(0)
                lane.last_call = self.clock()
                retry = await self._attempt(lane, item)
                if retry is not None:
                    await asyncio.sleep(retry)
        finally:
            lane.idle.set()

    async def _attempt(self, lane: _Lane, item: _Pending) -> float | None:
        """Send one view; on a flood wait, put it back (unless newer state came) and return the wait."""
        if item.strip is not None:
            return await self._attempt_strip(lane, item)
        message = item.message
        try:
            await self._send(lane, message)
        except RetryAfter as exc:
            self.stats["retry_after"] += 1
            item.attempts += 1
            newer = any(p.strip is None and _same_slot(p.message, message) for p in lane.pending)
            # Put it back unless a newer state of the same slot is already waiting (latest state wins).
            coalescing = message.slot in COALESCING_SLOTS
            if (coalescing and not newer) or (not coalescing and item.attempts < self.max_attempts):
                lane.pending.insert(0, item)
            return _seconds(exc)
        except Forbidden:
            self.stats["blocked"] += 1
            if message.user is not None:
                lane.pending = [p for p in lane.pending if p.message.user is None]
                with contextlib.suppress(StoreUnavailable):
                    await self.surfaces.set_reachable(lane.chat_id, False)
                if self.on_unreachable is not None:
                    try:
                        await self.on_unreachable(message)
                    except Exception:  # a notice must never break the lane
                        log.exception("could not tell the table about an unreachable player")
            log.info("chat %s cannot be written to (403)", lane.chat_id)
        except StoreUnavailable:
            log.warning("surfaces store unavailable; a view was not delivered")
        except TelegramError as exc:
            log.warning("telegram refused a view for chat %s: %s", lane.chat_id, exc)
        return None

    async def _attempt_strip(self, lane: _Lane, item: _Pending) -> float | None:
        """Remove the buttons of a superseded message; a message gone or already bare is fine as it is."""
        assert item.strip is not None
        try:
            await self.bot.edit_message_reply_markup(chat_id=lane.chat_id, message_id=item.strip)
            self.stats["stripped"] += 1
        except RetryAfter as exc:
            self.stats["retry_after"] += 1
            item.attempts += 1
            if item.attempts < self.max_attempts:
                lane.pending.insert(0, item)
            return _seconds(exc)
        except BadRequest as exc:  # "not modified" (no buttons left), "not found" (deleted): nothing to do
            log.info("buttons of message %s in chat %s stay: %s", item.strip, lane.chat_id, exc)
        except TelegramError as exc:
            log.warning("could not remove the buttons of a message in chat %s: %s", lane.chat_id, exc)
        return None

    def _remember(self, key: tuple[int, str, str], content: tuple[str, object]) -> None:
        if len(self._shown) >= _SHOWN_CAP:
            self._shown.clear()  # a cache: at worst a few redundant edits, answered "not modified"
        self._shown[key] = content

    async def _send(self, lane: _Lane, message: OutMessage) -> None:
        chat_id = lane.chat_id
        text, parse_mode = text_of(message)
        markup = markup_of(message)
        shown_key = (chat_id, message.table, message.slot)
        content = (text, message.buttons)
        if not message.fresh and self._shown.get(shown_key) == content:
            self.stats["skipped"] += 1
            return
        slot_kept = bool(message.table) and message.slot in COALESCING_SLOTS
        known = await self.surfaces.get(message.table, chat_id, message.slot) if slot_kept else None
        superseded: int | None = None
        if known is not None and message.fresh:
            # A new message supersedes the slot's current one: its buttons go, unless it surely has none.
            shown = self._shown.get(shown_key)
            superseded = known if shown is None or shown[1] else None
        elif known is not None:
            try:
                await self.bot.edit_message_text(
                    text, chat_id=chat_id, message_id=known, reply_markup=markup, parse_mode=parse_mode
                )
                self.stats["edit"] += 1
                self._remember(shown_key, content)
                return
            except BadRequest as exc:
                reason = str(exc).lower()
                if "not modified" in reason:
                    self.stats["not_modified"] += 1
                    self._remember(shown_key, content)
                    return
                if "not found" not in reason and "can't be edited" not in reason:
                    raise
                await self.surfaces.forget(message.table, chat_id, message.slot)  # deleted: post it again
        sent = await self.bot.send_message(chat_id, text, reply_markup=markup, parse_mode=parse_mode)
        self.stats["send"] += 1
        if slot_kept:
            self._remember(shown_key, content)
            await self.surfaces.set(message.table, chat_id, message.slot, sent.message_id)
        if superseded is not None and superseded != sent.message_id:
            # The next call of this lane, paced like any other: the new message goes out first.
            lane.pending.insert(0, _Pending(message, strip=superseded))
        if message.user is not None:
            await self.surfaces.set_reachable(chat_id, True)


def _same_slot(a: OutMessage, b: OutMessage) -> bool:
    return a.slot == b.slot and a.table == b.table
