"""Every process on one token takes its turn to IDENTIFY: Discord starts at most one session per 5 s.

Discord lets a bot start ``max_concurrency`` gateway sessions (IDENTIFYs) per 5 seconds — 1 unless it was
granted large-bot sharding — across *all* its connections. discord.py spaces the shards of one process
(it sleeps 5 s before each IDENTIFY but the first), but two processes that start together (``discord-0`` and
``discord-1`` in the compose file, a restart of both) identify at once, and Discord refuses one of them.

:class:`IdentifyGate` makes every IDENTIFY of the token take a lease in the store for :data:`SPACING`
seconds first (waiting while another process holds it): the first IDENTIFY anywhere goes at once, each next
one 5 s after the previous, whichever process makes it. A RESUME is no IDENTIFY and never waits. If the store
cannot say, the process waits the spacing by itself (as discord.py would) rather than not at all.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from bot.store import LeaseStore, StoreUnavailable

log = logging.getLogger(__name__)

#: Seconds between two IDENTIFYs of one token (Discord's window for ``max_concurrency`` of 1).
SPACING = 5.0
#: Seconds between two looks at a lease someone else holds.
POLL = 0.25


class IdentifyGate:
    """Spaces a token's IDENTIFYs across every process sharing ``leases`` (see the module docstring)."""

    def __init__(self, leases: LeaseStore, spacing: float = SPACING, poll: float = POLL) -> None:
        """IDENTIFYs at least ``spacing`` seconds apart, by the leases of ``leases``."""
        self.leases = leases
        self.spacing = spacing
        self.poll = poll

    async def wait(self, application_id: int, shard_id: int) -> None:
        """Return when shard ``shard_id`` of the application may IDENTIFY (the lease is then held for
        :attr:`spacing` seconds, and left to expire: that is the spacing)."""
        name = f"discord:identify:{application_id}"
        holder = uuid.uuid4().hex  # each IDENTIFY its own: a holder would renew its own lease at once
        waited = False
        while True:
            try:
                if await self.leases.acquire(name, holder, self.spacing):
                    break
            except StoreUnavailable as exc:
                log.warning("the store cannot space the IDENTIFYs (%s): waiting %g s", exc, self.spacing)
                await asyncio.sleep(self.spacing)
                break
            if not waited:
                log.info("discord shard %s waits its turn to identify", shard_id)
                waited = True
            await asyncio.sleep(self.poll)
