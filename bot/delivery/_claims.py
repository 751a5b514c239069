"""What a call waiting for its turn keeps, and what it checks once the turn came.

A rate limiter may hold a call for seconds (a bot over its budget books turns well ahead), and meanwhile the
other workers go on. So a waiting call:

* **keeps its claim** (:func:`claim_kept`): a worker's claim on a message — to post an epoch's message, or to
  remove its buttons — holds :attr:`~bot.delivery._surfaces.SurfaceStore.post_claim` seconds, so that a worker
  that died with its call on the way keeps the others off the message only that long. Renewed every
  half-claim, a waiting call would cost a store script every few seconds: with 64 busy tables, more Redis
  commands than the actions themselves. So each renewal holds the claim as long again as the call has waited
  so far (at most :data:`MAX_HOLD` beyond the claim's length), and the next comes when half of that is left: a
  call that waits 20 s renews 3 times, not 8. The trade-off: a worker that dies while its call waits keeps the
  others off that message about as long again as its call had waited (at most :data:`MAX_HOLD` more) — a
  wait their own calls would mostly have spent in the same queue of the bot's budget;
* **is checked once its turn came** (:func:`unless_shown`, :func:`unless_bare`: the transport asks, see
  :data:`~bot.delivery._transport.StillNeeded`): another worker's call on the message may have landed
  meanwhile and drawn this very view, or left the message without buttons; then the call would only be
  answered "message is not modified", and it is not made. One store read, only for a call that waited —
  which also tells when the call really began (:meth:`TurnCheck.begun`): a call queued for seconds behind the
  bot's budget is not counted as crossing every call that landed while it queued, so what a message shows
  stays known (and the next strip or edit of it is spared) far more often under load.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from bot.delivery._pending import view_digest
from bot.delivery._surface_answers import Shows
from bot.delivery._surfaces import SurfaceStore
from bot.kernel import OutMessage
from bot.store import StoreUnavailable

#: The longest a renewal holds a claim beyond its own length (seconds).
MAX_HOLD = 30.0


async def keep_claim(renew: Callable[[float], Awaitable[bool]], claim: float) -> None:
    """Renew a claim of ``claim`` seconds while the caller's call waits (run as a task, cancelled once the
    call is made): ``renew(hold)`` holds it ``hold`` seconds beyond its length from now and says whether it
    is still this worker's (else the loop ends, as it does when the store does not answer)."""
    holds, waited = claim, 0.0
    with contextlib.suppress(StoreUnavailable):
        while True:
            await asyncio.sleep(holds / 2)  # half of what the last renewal held is left
            waited += holds / 2
            hold = min(waited, MAX_HOLD)
            if not await renew(hold):
                return
            holds = claim + hold


def claim_kept(
    surfaces: SurfaceStore, chat: str, message: OutMessage, worker: str, *, since: int, strip: bool = False
) -> asyncio.Task[None]:
    """Keep ``worker``'s claim to post the epoch ``since`` of ``message``'s slot in ``chat`` (``strip``: to
    remove its buttons) while its call waits: a task, to cancel once the call is made."""

    async def renew(hold: float) -> bool:
        return await surfaces.renew(
            message.table, chat, message.slot, since=since, poster=worker, strip=strip, hold=hold
        )

    return asyncio.create_task(keep_claim(renew, surfaces.post_claim))


class TurnCheck:
    """A call's check once its turn came (a :data:`~bot.delivery._transport.StillNeeded`), which also notes
    how many calls on the message had landed at that moment (:meth:`begun`): the call's record takes that as
    when it began — when it was sent, not when it queued — so that two calls count as crossed only if they
    were really on their way at once, and what the message shows stays known more often."""

    def __init__(
        self,
        surfaces: SurfaceStore,
        chat: str,
        message: OutMessage,
        message_id: str,
        since: int,
        needed: Callable[[Shows], bool],
    ) -> None:
        """Check ``message_id`` (of the epoch ``since`` of ``message``'s slot in ``chat``): the call is needed
        unless what it is known to show makes ``needed`` false."""
        self.surfaces, self.chat, self.message = surfaces, chat, message
        self.message_id, self.since, self.needed = message_id, since, needed
        self.landed: int | None = None

    async def __call__(self) -> bool:
        """Whether the call is still needed (yes if the store cannot tell)."""
        message = self.message
        try:
            state = await self.surfaces.state(
                message.table, self.chat, message.slot, self.message_id, since=self.since
            )
        except StoreUnavailable:
            return True
        self.landed = state.landed if state.landed >= 0 else None
        return state.shows is None or self.needed(state.shows)

    def begun(self, before: int) -> int:
        """When the call began, for its record: at its turn if the check was asked then, else ``before``
        (read when the call was decided)."""
        return before if self.landed is None else self.landed


def unless_shown(surfaces: SurfaceStore, chat: str, message_id: str, message: OutMessage) -> TurnCheck:
    """An edit's check: needed unless ``message_id`` is known to show the view ``message`` already."""
    digest = view_digest(message)
    return TurnCheck(surfaces, chat, message, message_id, message.since, lambda shows: shows.digest != digest)


def unless_bare(
    surfaces: SurfaceStore, chat: str, message_id: str, message: OutMessage, since: int
) -> TurnCheck:
    """A strip's check: needed unless ``message_id`` (of the epoch ``since``) is known to have no buttons."""
    return TurnCheck(surfaces, chat, message, message_id, since, lambda shows: shows.buttons)
