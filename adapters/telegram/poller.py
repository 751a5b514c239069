"""One process polls a bot token at a time; the others stand by and take over when it is gone.

Telegram answers a second long poll on the same token with ``409 Conflict``, cutting the first: two workers
both polling (two Compose replicas without a webhook) fought, with tracebacks, while both said they were
ready. :class:`SinglePoller` polls only while it holds the token's lease (:class:`bot.store.LeaseStore`,
shared through Redis): it renews the lease every third of its ``ttl`` and stops polling if it ever loses it;
a standby tries to take it as often, so a killed poller is replaced within ``ttl`` seconds. Everything else
a worker does (its deadlines, its deliveries) goes on in standby. The lease is named after the bot's id,
never its token.

The trade-off: while Redis is unreachable nobody can take or renew a lease; a poller keeps polling (updates
then wait in Telegram rather than being lost), and a standby stays one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable

from bot.store import LeaseStore, StoreUnavailable

log = logging.getLogger(__name__)

#: Seconds a poller's lease lasts without renewal (a killed poller is replaced within this).
POLL_LEASE_TTL = 15.0


class SinglePoller:
    """Polls while holding the token's lease (see the module docstring)."""

    def __init__(
        self,
        leases: LeaseStore,
        bot_id: int,
        start: Callable[[], Awaitable[None]],
        stop: Callable[[], Awaitable[None]],
        *,
        ttl: float = POLL_LEASE_TTL,
    ) -> None:
        """Call ``start``/``stop`` to begin and end long polling (the Application's updater)."""
        self.leases = leases
        self.name = f"telegram-poller:{bot_id}"
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._start, self._stop = start, stop
        self.ttl = ttl
        self.polling = False
        self._quit = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def standby(self) -> bool:
        """Whether another process polls (this one waits to take over)."""
        return not self.polling

    async def begin(self) -> None:
        """Take the lease and poll if it is free (else stand by), then keep at it in the background."""
        await self._round()
        if not self.polling:
            log.info("another process polls this bot: standing by to take over")
        self._task = asyncio.create_task(self._keep(), name="telegram-poller")

    async def end(self) -> None:
        """Stop polling and give the lease up, so that a standby takes over at once."""
        self._quit.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.polling:
            self.polling = False
            await self._stop()
        with contextlib.suppress(StoreUnavailable):
            await self.leases.release(self.name, self.holder)

    async def _keep(self) -> None:
        while not self._quit.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._quit.wait(), self.ttl / 3)
            if not self._quit.is_set():
                await self._round()

    async def _round(self) -> None:
        """Renew or take the lease; start or stop polling to match."""
        try:
            held = await self.leases.acquire(self.name, self.holder, self.ttl)
        except StoreUnavailable:
            return  # nobody can change hands now: keep doing what we do
        if held and not self.polling:
            await self._start()
            self.polling = True
            log.info("polling Telegram for updates (this process holds the poller's lease)")
        elif not held and self.polling:
            self.polling = False
            await self._stop()
            log.warning("another process took the poller's lease: standing by")
