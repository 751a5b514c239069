"""Keeping a worker's claim on a message (to post an epoch's message, or to remove its buttons) while its call
waits for its turn: :func:`keep_claim`.

A claim holds :attr:`~bot.delivery._surfaces.SurfaceStore.post_claim` seconds, so that a worker that died with
its call on the way keeps the others off the message only that long. But a rate limiter may hold a call far
longer (a bot over its budget books turns many seconds ahead), and a claim renewed every half-claim costs a
store script every few seconds for every waiting call: with 64 busy tables, more Redis commands than the
actions themselves. So each renewal holds the claim as long again as the call has waited so far (at most
:data:`MAX_HOLD` beyond the claim's length), and the next comes when half of that is left: a call that waits
``t`` seconds renews a handful of times (3 in 20 s), not every 2.5 s (8).

The trade-off: a worker that dies while its call waits keeps the other workers off that message for about as
long again as its call had waited (at most :data:`MAX_HOLD` more) — a wait their own calls would mostly have
spent in the same queue of the bot's budget.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

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
