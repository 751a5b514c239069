"""Telegram's limits, kept without ever pausing the whole bot: one chat's 429 delays only that chat.

python-telegram-bot's ``AIORateLimiter`` answers a ``RetryAfter`` from *any* chat by holding *every* request
of the bot until that chat's wait is over (one bot-wide event): a group over its 20 messages a minute with
``retry_after: 39`` silenced every other group for 39 s, and the callback queries pressed meanwhile expired
(issue 21). Telegram's two documented budgets are kept in two places, and nothing is global:

* **a group's budget, by the core's delivery**: at most :data:`GROUP_MESSAGES` new messages per
  :data:`GROUP_WINDOW` seconds in one group (Telegram: 20 a minute), which :func:`new_messages` gives the
  delivery (:mod:`bot.delivery._budget`). It spends them on the game first — half of them
  (:data:`GROUP_RESERVE`) are the game's alone: a new hand's table, a lobby, a showdown — and a post over
  the budget waits in its group's lane while the lane's edits go on (the lane paces each chat at one call a
  second, edits included);
* **the bot's budget, here**: at most ``bot_per_second`` calls a second that write to a chat (Telegram:
  about 30), shared fairly (first come, first served) by every chat;
* **a group's window, here, as a safety net**: the same count per call, which the delivery's budget keeps
  under (it counts a post once Telegram answered it, a little later than this window). It is reached only
  if something posts outside the delivery's count (or clocks disagree by milliseconds): then a new message
  waits a moment at most (:data:`MAX_GROUP_WAIT`), else it is refused at once with a ``RetryAfter`` of its
  own — the group's lane holds its posts until then, and its edits go on. It never holds a lane for long;
* **never a retry**: a ``RetryAfter`` (Telegram's, or the safety net's) goes back to the caller at once, and
  :mod:`adapters.telegram.transport` turns it into :class:`~bot.delivery.RateLimited`, which the core's lane
  for *that chat* waits out before it sends the newest state (a refused new message holds only that chat's
  posts). Nothing else waits;
* **callback answers never wait**: ``answerCallbackQuery`` (and every call without a chat) passes untouched —
  a press must be answered within seconds or never.

The trade-off: both counts are this process's, and can disagree with Telegram's (another process on the same
token, messages sent before a restart); then Telegram's own 429 says so, and that chat's lane waits what
Telegram asks. Groups are remembered while they have a budget in use (at most :data:`MAX_GROUPS`; the least
recently used go first).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import math
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from adapters.telegram.ids import telegram_id
from bot.delivery import NewMessages

JSONDict = dict[str, Any]

#: Groups whose budgets are kept at once (each is a small limiter; more forget the least recently used).
MAX_GROUPS = 10_000
#: Telegram's documented limits (core.telegram.org/bots/faq: "my bot is hitting limits"), kept with a margin:
#: our clock starts a call a few milliseconds before Telegram's counts it, so a budget spent exactly to the
#: limit would sometimes be one over at Telegram (a group's window is a second longer, the bot's rate 25 of
#: "about 30" a second).
GROUP_MESSAGES = 20
GROUP_WINDOW = 61.0
BOT_PER_SECOND = 25
#: A group's new messages that answers to commands leave to the game (ten of the twenty: a hand posts two or
#: three messages — its table, its showdown —, and ten answers a minute are plenty for people who talk).
GROUP_RESERVE = 10
#: A group's budget of new messages, as the delivery keeps it.
GROUP_BUDGET = NewMessages(GROUP_MESSAGES, GROUP_WINDOW, reserve=GROUP_RESERVE)
#: The longest the safety net holds a new message before it refuses it (clocks that disagree by a few ms).
MAX_GROUP_WAIT = 1.0


def new_messages(chat: str) -> NewMessages | None:
    """A chat's budget of new messages: a group's (a negative id); none for a private chat, which takes a
    message a second (the delivery's pacing)."""
    chat_id = telegram_id(chat)
    return GROUP_BUDGET if chat_id is not None and chat_id < 0 else None


def _is_new_message(endpoint: str) -> bool:
    """Whether a method posts a new message (``sendMessage``, ``sendDocument``…; not ``sendChatAction``)."""
    return endpoint.startswith("send") and endpoint != "sendChatAction"


def _group_of(data: JSONDict) -> int | str | None:
    """The group a call writes to: a negative chat id, or a ``@channel`` name; ``None`` for a private chat."""
    chat_id = data.get("chat_id")
    with contextlib.suppress(TypeError, ValueError):
        chat_id = int(chat_id)  # type: ignore[arg-type]
    if isinstance(chat_id, int):
        return chat_id if chat_id < 0 else None
    return chat_id if isinstance(chat_id, str) else None


class SlidingWindow:
    """At most ``limit`` acquisitions in any ``window`` seconds, granted first come, first served.

    A token bucket would let a burst and its refill land in the same window (20 now, 20 more within the
    minute), which Telegram counts as over; this counts the window itself: ``limit`` timestamps at most.
    """

    def __init__(self, limit: int, window: float) -> None:
        """Allow ``limit`` per ``window`` seconds."""
        self.limit = limit
        self.window = window
        self._times: deque[float] = deque()
        self._turn = asyncio.Lock()  # FIFO: waiters are served in the order they came

    async def acquire(self, longest: float = math.inf) -> None:
        """Wait until one more fits in the window, and take it — or, if that is more than ``longest`` seconds
        away, raise ``RetryAfter`` at once with the wait (whole seconds, as Telegram's)."""
        async with self._turn:
            while True:
                now = time.monotonic()
                while self._times and self._times[0] <= now - self.window:
                    self._times.popleft()
                if len(self._times) < self.limit:
                    self._times.append(now)
                    return
                wait = self._times[0] + self.window - now
                if wait > longest:
                    raise RetryAfter(dtm.timedelta(seconds=math.ceil(wait)))
                await asyncio.sleep(wait)


class ChatRateLimiter(BaseRateLimiter[None]):
    """The bot's call budget, and each group's message window as a safety net that refuses rather than waits;
    never a retry, never a bot-wide pause."""

    def __init__(
        self,
        *,
        group_messages: int = GROUP_MESSAGES,
        group_window: float = GROUP_WINDOW,
        bot_per_second: int = BOT_PER_SECOND,
        max_group_wait: float = MAX_GROUP_WAIT,
    ) -> None:
        """Allow ``group_messages`` new messages per ``group_window`` seconds in a group (a longer wait
        than ``max_group_wait`` is refused) and ``bot_per_second`` chat calls a second in all."""
        self.group_messages = group_messages
        self.group_window = group_window
        self.max_group_wait = max_group_wait
        self._bot = SlidingWindow(bot_per_second, 1.0)
        self._groups: OrderedDict[int | str, SlidingWindow] = OrderedDict()

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    def _group_limiter(self, group: int | str) -> SlidingWindow:
        limiter = self._groups.pop(group, None)
        if limiter is None:
            limiter = SlidingWindow(self.group_messages, self.group_window)
            while len(self._groups) >= MAX_GROUPS:
                self._groups.popitem(last=False)
        self._groups[group] = limiter
        return limiter

    @contextlib.asynccontextmanager
    async def _budgets(self, endpoint: str, data: JSONDict) -> AsyncIterator[None]:
        """Wait for the group's window (a new message; ``RetryAfter`` if it is long), then the bot's budget
        (any call to a chat)."""
        if data.get("chat_id") is None:  # answerCallbackQuery, getUpdates…: never held
            yield
            return
        group = _group_of(data)
        # The group's budget first: a group waiting for its minute holds no share of the bot's second.
        if group is not None and _is_new_message(endpoint):
            await self._group_limiter(group).acquire(self.max_group_wait)
        await self._bot.acquire()
        yield

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> bool | JSONDict | list[JSONDict]:
        """Make the call within the budgets; a ``RetryAfter`` is the caller's (the chat's lane) to wait."""
        async with self._budgets(endpoint, data):
            return await callback(*args, **kwargs)
