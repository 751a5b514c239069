"""What a chat platform's calls look like to the core: the :class:`Transport` protocol an adapter
implements (send — a text, or a file —, edit, clear the buttons, delete) and the typed failures it raises,
which :class:`bot.delivery._lanes.Delivery` acts on:
``NotModified`` is success (and ``Unneeded``, a call not made: once its turn came, it was no longer needed);
``MessageGone`` posts the view again; ``RateLimited`` waits (only the chat's new
messages, if it refused one), then sends the newest state; ``Unreachable`` marks a user who cannot be written
to; ``Refused`` is logged and the view dropped.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from bot.kernel import OutMessage
from bot.store import BotRate, CallBudget, StoreUnavailable, take_turn


class DeliveryError(Exception):
    """The platform did not take a call."""


class NotModified(DeliveryError):
    """An edit that would change nothing: the message already shows it (a success)."""


class Unneeded(NotModified):
    """A call not made: when its turn came (after a rate limiter's wait), it was no longer needed — the
    message already showed what it would, drawn meanwhile by another worker. A success at no cost."""


StillNeeded = Callable[[], Awaitable[bool]]
"""Asked once a call's turn has come, right before it goes: whether it is still needed (else
:class:`Unneeded`). It never raises: a check that cannot tell says the call is needed."""

#: A call that waited less than this for its turn (seconds) is not checked: its caller has just looked.
CHECK_AFTER = 0.05


def at_turn(check: StillNeeded) -> Callable[[float], Awaitable[None]]:
    """What a call does once its turn came (:func:`~bot.store.take_turn`'s ``at_turn``): if it waited at
    least :data:`CHECK_AFTER`, ask ``check`` and stop the call (:class:`Unneeded`) if it is not needed."""

    async def look(waited: float) -> None:
        if waited >= CHECK_AFTER and not await check():
            raise Unneeded("no longer needed when the call's turn came")

    return look


class MessageGone(DeliveryError):
    """The message to edit no longer exists or can no longer be edited: post the view again."""


class Unreachable(DeliveryError):
    """The chat cannot be written to (a user who blocked the bot, or never opened it; closed DMs)."""


class RateLimited(DeliveryError):
    """The platform asks to wait ``retry_after`` seconds before the next call."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


class Refused(DeliveryError):
    """Any other refusal (a bad request): the view is dropped and the reason logged."""


class Transport(Protocol):
    """One platform's calls, on the core's chat keys (``tg:-100123``) and string message ids."""

    def owns(self, chat: str) -> bool:
        """Whether ``chat`` is a key of this platform (views for other platforms are not for it)."""
        ...

    async def send(self, chat: str, message: OutMessage) -> str:
        """Post a new message showing ``message``; its id. A view with a :attr:`~OutMessage.document` is
        posted as that file (Telegram ``sendDocument``, a Discord attachment), its text the caption."""
        ...

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        """Make message ``message_id`` show ``message`` (text and buttons); ``check`` as for
        :meth:`clear_buttons` (another worker may draw the same view while this call waits its turn)."""
        ...

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        """Remove the buttons of a message (its text stays). A transport whose call may wait for its turn (a
        rate limiter) asks ``check``, if given, once the turn came: False, and no call is made
        (:class:`Unneeded`); one that never waits may ignore it (its caller has just checked)."""
        ...

    async def delete(self, chat: str, message_id: str) -> None:
        """Delete a message the bot posted (a second copy of one, posted by two workers at once);
        ``MessageGone`` if it is gone already, ``Refused`` if it cannot be deleted."""
        ...


@dataclass
class CallsMade:
    """The calls made to one chat since its lane last asked (:meth:`CountingTransport.made`)."""

    calls: int = 0
    sends: int = 0
    """New messages posted (counted once the platform took them)."""
    posting: bool = False
    """The last call was a post (whether or not the platform took it)."""


class CountingTransport:
    """A transport that counts the calls it passes on, per chat: a lane asks whether an attempt used its turn
    (a view skipped, superseded or left to another worker's post makes no call: the next one takes the
    turn), how many new messages it posted (the chat's budget), and whether the call the platform refused was
    a post. (Counted per chat: the lanes of other chats call meanwhile.)"""

    def __init__(self, inner: Transport) -> None:
        """Pass every call on to ``inner``."""
        self.inner = inner
        self._made: dict[str, CallsMade] = {}

    def made(self, chat: str) -> CallsMade:
        """The calls made to ``chat`` since the last time its lane asked (then none: a chat's entry lives
        only while its lane makes a call)."""
        return self._made.pop(chat, CallsMade())

    def _call(self, chat: str, *, posting: bool = False) -> CallsMade:
        made = self._made.setdefault(chat, CallsMade())
        made.calls += 1
        made.posting = posting
        return made

    def owns(self, chat: str) -> bool:
        """Whether ``inner`` writes to ``chat``."""
        return self.inner.owns(chat)

    async def send(self, chat: str, message: OutMessage) -> str:
        """Count, then post."""
        made = self._call(chat, posting=True)
        sent = await self.inner.send(chat, message)
        made.sends += 1
        return sent

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        """Count, then edit."""
        self._call(chat)
        await self.inner.edit(chat, message_id, message, check)

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        """Count, then remove the buttons."""
        self._call(chat)
        await self.inner.clear_buttons(chat, message_id, check)

    async def delete(self, chat: str, message_id: str) -> None:
        """Count, then delete."""
        self._call(chat)
        await self.inner.delete(chat, message_id)


class BudgetedTransport:
    """A transport whose every call first books its turn in the bot's budget of calls, which every worker of
    the bot shares (:class:`bot.store.CallBudget`): for a platform whose client keeps its limits per process
    (discord.py's 50 requests a second), so that N workers together send what one bot may. A call waits its
    own turn (a new one if it woke too late for it); a store that does not answer leaves the call to the
    client's own limits."""

    def __init__(self, inner: Transport, calls: CallBudget, bot: str, rate: BotRate) -> None:
        """Pass every call on to ``inner`` once ``calls`` gave it a turn within ``rate`` for ``bot`` (the
        bot's name in the store: its platform and id)."""
        self.inner = inner
        self.calls = calls
        self.bot = bot
        self.rate = rate

    async def _turn(self) -> None:
        """Wait for the call's turn: booked again if the call woke too late for it (:func:`take_turn`)."""
        await take_turn(self._book)

    async def _checked_turn(self, check: StillNeeded | None) -> None:
        """Wait for the call's turn; once it came, if the call waited, ask ``check`` (:class:`Unneeded` if not
        needed; a slow answer books a new turn: :func:`~bot.store.take_turn`)."""
        await take_turn(self._book, None if check is None else at_turn(check))

    async def _book(self, again: bool) -> float:
        try:
            drawn = await self.calls.draw(self.bot, self.rate)
        except StoreUnavailable:
            return math.inf  # the client's own limits hold: not late, whenever it goes
        if drawn.wait > 0:
            await asyncio.sleep(drawn.wait)
        return drawn.wait

    def owns(self, chat: str) -> bool:
        """Whether ``inner`` writes to ``chat``."""
        return self.inner.owns(chat)

    async def send(self, chat: str, message: OutMessage) -> str:
        """Wait for a turn, then post."""
        await self._turn()
        return await self.inner.send(chat, message)

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        """Wait for a turn, then edit if ``check`` says it is still needed."""
        await self._checked_turn(check)
        await self.inner.edit(chat, message_id, message)

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        """Wait for a turn, then remove the buttons if ``check`` says they are still there."""
        await self._checked_turn(check)
        await self.inner.clear_buttons(chat, message_id)

    async def delete(self, chat: str, message_id: str) -> None:
        """Wait for a turn, then delete."""
        await self._turn()
        await self.inner.delete(chat, message_id)
