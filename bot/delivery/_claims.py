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
  answered "message is not modified", and it is not made. One store read, only for a call that waited.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from bot.delivery._pending import view_digest
from bot.delivery._surface_answers import Shows
from bot.delivery._surfaces import SurfaceStore
from bot.delivery._transport import StillNeeded
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


async def _shows(
    surfaces: SurfaceStore, chat: str, message: OutMessage, message_id: str, since: int
) -> Shows | None:
    """What ``message_id`` (of the epoch ``since`` of ``message``'s slot) is known to show, if known."""
    try:
        state = await surfaces.state(message.table, chat, message.slot, message_id, since=since)
    except StoreUnavailable:
        return None  # not known: the call goes
    return state.shows


def unless_shown(surfaces: SurfaceStore, chat: str, message_id: str, message: OutMessage) -> StillNeeded:
    """An edit's check: needed unless ``message_id`` is known to show the view ``message`` already."""
    digest = view_digest(message)

    async def check() -> bool:
        shows = await _shows(surfaces, chat, message, message_id, message.since)
        return shows is None or shows.digest != digest

    return check


def unless_bare(
    surfaces: SurfaceStore, chat: str, message_id: str, message: OutMessage, since: int
) -> StillNeeded:
    """A strip's check: needed unless ``message_id`` (of the epoch ``since``) is known to have no buttons."""

    async def check() -> bool:
        shows = await _shows(surfaces, chat, message, message_id, since)
        return shows is None or shows.buttons

    return check
