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
* **the bot's budget, here, one for all workers**: at most :data:`BOT_PER_SECOND` calls a second that write
  to a chat (Telegram: about 30), a few at once after a quiet moment (:data:`BOT_BURST`), booked in the
  core's shared :class:`~bot.store.CallBudget` (in Redis: every worker of the token books on one clock, so N
  workers send what one bot may, not N times that). A call over the rate waits its own turn, first come first
  served across workers and chats; nothing else waits;
* **a group's window, here, as a safety net counted across workers**: the same count per call, in the same
  budget, which each worker's delivery keeps under for its own posts (it counts a post once Telegram
  answered it, a little later than this window). It is reached when several workers post to one group, or
  something posts outside the delivery's count: then a new message waits a moment at most
  (:data:`MAX_GROUP_WAIT`), else it is refused at once with a ``RetryAfter`` of its own — the group's lane
  holds its posts until then, and its edits go on. It never holds a lane for long;
* **never late**: a call goes within 0.15 s of its booked turn, or books a new one
  (:func:`~bot.store.take_turn`: a worker starved of CPU would otherwise send every call whose turn passed
  meanwhile at once, on top of the other workers' calls of that moment, more than Telegram's 30 a second);
* **never a retry**: a ``RetryAfter`` (Telegram's, or the safety net's) goes back to the caller at once, and
  :mod:`adapters.telegram.transport` turns it into :class:`~bot.delivery.RateLimited`, which the core's lane
  for *that chat* waits out before it sends the newest state (a refused new message holds only that chat's
  posts). Nothing else waits;
* **a call checked once its turn came**: a call may carry a check (``rate_limit_args``: an edit, or a strip
  of a message's buttons, which another worker's edit may make pointless while this call waits its turn)
  and is not made if the check, asked once the turn came, says it is no longer needed
  (:class:`~bot.delivery.Unneeded`). The check counts in the call's lateness (above): a slow answer books a
  new turn;
* **callback answers never wait**: ``answerCallbackQuery`` (and every call without a chat) passes untouched —
  a press must be answered within seconds or never.

The trade-off: the counts can still disagree with Telegram's (messages sent before the budget's keys expired,
another program on the same token); then Telegram's own 429 says so, and that chat's lane waits what Telegram
asks. A store that does not answer leaves each worker to its own count (a
:class:`~bot.store.MemoryCallBudget`) until it answers again: a moment of N workers' rates, not none.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import math
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from adapters.telegram.ids import telegram_id
from bot.delivery import NewMessages, StillNeeded, at_turn
from bot.store import BotRate, CallBudget, ChatWindow, Drawn, MemoryCallBudget, StoreUnavailable, take_turn

JSONDict = dict[str, Any]

#: Telegram's documented limits (core.telegram.org/bots/faq: "my bot is hitting limits"), kept with a margin:
#: our clock starts a call a few milliseconds before Telegram's counts it, so a budget spent exactly to the
#: limit would sometimes be one over at Telegram (a group's window is a second longer, the bot's rate 24 of
#: "about 30" a second).
GROUP_MESSAGES = 20
GROUP_WINDOW = 61.0
BOT_PER_SECOND = 24
#: Calls the bot may make at once after a quiet moment, before its turns are spaced by the rate (in any second
#: at most ``BOT_PER_SECOND + BOT_BURST - 1``: 25, under Telegram's 30 even when calls booked a few hundred
#: ms apart reach Telegram closer together: a worker starved of CPU for a moment, network jitter).
BOT_BURST = 2
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


def bot_key(token: str) -> str:
    """The name of a token's budget in the store: its bot's id (the public part before the colon), never the
    token itself."""
    return f"tg:{token.partition(':')[0]}"


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


class ChatRateLimiter(BaseRateLimiter[StillNeeded]):
    """The bot's call budget, and each group's message window as a safety net that refuses rather than waits,
    both drawn from a budget every worker of the token shares; never a retry, never a bot-wide pause."""

    def __init__(
        self,
        budget: CallBudget | None = None,
        *,
        bot: str = "tg:bot",
        group_messages: int = GROUP_MESSAGES,
        group_window: float = GROUP_WINDOW,
        bot_per_second: int = BOT_PER_SECOND,
        max_group_wait: float = MAX_GROUP_WAIT,
    ) -> None:
        """Draw every call from ``budget`` under the name ``bot`` (:func:`bot_key`; no budget: this process's
        own): ``bot_per_second`` chat calls a second in all, ``group_messages`` new messages per
        ``group_window`` seconds in a group (a longer wait than ``max_group_wait`` is refused)."""
        self.own = MemoryCallBudget()
        """This process's count: the budget when none is shared, the fallback when the store fails."""
        self.budget: CallBudget = budget if budget is not None else self.own
        self.bot = bot
        self.rate = BotRate(bot_per_second, burst=min(BOT_BURST, bot_per_second))
        self.group_window = ChatWindow(group_messages, group_window)
        self.max_group_wait = max_group_wait

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    @contextlib.asynccontextmanager
    async def _budgets(
        self, endpoint: str, data: JSONDict, check: StillNeeded | None = None
    ) -> AsyncIterator[None]:
        """Book the call's turn (a new message in a group: in the group's window too; ``RetryAfter`` if that
        is long) and wait for it; then ask ``check``, if the call waited (:class:`~bot.delivery.Unneeded`)."""
        if data.get("chat_id") is None:  # answerCallbackQuery, getUpdates…: never held
            yield
            return
        group = _group_of(data)
        posts = group is not None and _is_new_message(endpoint)
        chat, window = (str(group), self.group_window) if posts else (None, None)
        # A turn booked again (the call woke too late for its first) is the bot's only: the group's window
        # keeps the post's first booking (a second would count the post twice).
        look = None if check is None else at_turn(check)
        await take_turn(lambda again: self._turn(None, None) if again else self._turn(chat, window), look)
        yield

    async def _turn(self, chat: str | None, window: ChatWindow | None) -> float:
        """Book the call's turn (in ``chat``'s ``window`` too, when given) and wait for it; the wait.
        ``RetryAfter`` if the window holds the call longer than :attr:`max_group_wait`."""
        held = 0.0  # how long the group's window has held this post so far
        while not (drawn := await self._draw(chat, window)).granted:
            if held + drawn.wait > self.max_group_wait:
                raise RetryAfter(dtm.timedelta(seconds=max(1, math.ceil(drawn.wait))))
            await asyncio.sleep(drawn.wait)  # a moment: then ask again (another post may have taken it)
            held += drawn.wait
        if drawn.wait > 0:
            await asyncio.sleep(drawn.wait)
        return held + drawn.wait

    async def _draw(self, chat: str | None, window: ChatWindow | None) -> Drawn:
        """Draw from the shared budget, or from this process's own while the store does not answer."""
        try:
            return await self.budget.draw(self.bot, self.rate, chat, window)
        except StoreUnavailable:
            return await self.own.draw(self.bot, self.rate, chat, window)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: StillNeeded | None,
    ) -> bool | JSONDict | list[JSONDict]:
        """Make the call within the budgets; a ``RetryAfter`` is the caller's (the chat's lane) to wait. A
        call given a check (``rate_limit_args``: an edit or a strip, which another worker's edit may make
        pointless while this one waits for its turn) is made only if the check, asked once the turn came (if
        it waited at all), says it is still needed (else :class:`~bot.delivery.Unneeded`: no call, no
        "message is not modified")."""
        async with self._budgets(endpoint, data, rate_limit_args):
            return await callback(*args, **kwargs)
