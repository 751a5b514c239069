"""Whether the bot still hears Telegram: a deaf bot must not look healthy.

A process whose Telegram is unreachable (a network down, a revoked token, a broken TLS proxy in front of the
webhook) used to say ``/readyz`` 200 and move no metric. :class:`Hearing` remembers when Telegram last
answered a call with success (every call goes through :class:`HeardRequest`): with long polling that is at
least every poll (10 s), so :meth:`Hearing.ready` turns false once ``within`` seconds pass without one. With a
webhook Telegram calls us, and nothing of ours may call it for a while: :func:`watch_webhook` asks
``getWebhookInfo`` every ``interval`` seconds, which keeps the hearing fresh and reports what Telegram says of
our webhook — its pending updates (a metric) and its last delivery error, logged once and making the bot not
ready while it is recent (Telegram could not reach us).

Each answer sets ``mus_platform_last_heard_timestamp_seconds{platform="telegram"}``: an alert on its age
catches a deaf bot even where ``/readyz`` is not watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import Gauge
from telegram import Bot
from telegram.error import TelegramError

from adapters.telegram.request import AiohttpRequest
from bot.kernel import LAST_HEARD

#: A Telegram detail, so defined here rather than with the core's metrics.
WEBHOOK_PENDING = Gauge(
    "mus_telegram_webhook_pending_updates", "Updates Telegram holds for this bot's webhook (getWebhookInfo)"
)

log = logging.getLogger(__name__)

#: Seconds without an answer from Telegram after which the bot is not ready (three missed long polls).
HEARD_WITHIN = 30.0
#: Seconds between two ``getWebhookInfo`` (webhook mode).
WEBHOOK_CHECK_INTERVAL = 15.0
#: Seconds a webhook delivery error Telegram reports keeps the bot not ready.
WEBHOOK_ERROR_HOLD = 60.0


class Hearing:
    """When Telegram last answered, and what it last said of our webhook."""

    def __init__(self, *, within: float = HEARD_WITHIN, clock: Callable[[], float] = time.monotonic) -> None:
        """Not ready once ``within`` seconds pass without an answer."""
        self.within = within
        self.clock = clock
        self.last: float | None = None
        self.webhook_error: str | None = None
        """Telegram's last error delivering to our webhook, while recent (``None``: none)."""
        self.failing: str | None = None
        """Why polling fails, while it does (said once, not one traceback per retry)."""

    def heard(self) -> None:
        """Telegram answered a call with success."""
        self.last = self.clock()
        LAST_HEARD.labels("telegram").set(time.time())
        if self.failing is not None:
            self.failing = None
            log.warning("Telegram answers again")

    def polling_failed(self, exc: TelegramError) -> None:
        """A ``getUpdates`` failed (PTB retries it): say so once per outage, in one line, without the
        traceback PTB would log at every retry."""
        if self.failing is None:
            self.failing = str(exc) or type(exc).__name__
            log.warning("Telegram does not answer (polling again until it does): %s", self.failing)

    def ready(self) -> bool:
        """Whether Telegram answered in the last ``within`` seconds, and reports no recent webhook error."""
        recent = self.last is not None and self.clock() - self.last <= self.within
        return recent and self.webhook_error is None


class HeardRequest(AiohttpRequest):
    """The adapter's HTTP request, telling a :class:`Hearing` of every successful answer."""

    def __init__(self, hearing: Hearing, **options: Any) -> None:
        """``options`` are :class:`~adapters.telegram.request.AiohttpRequest`'s."""
        super().__init__(**options)
        self.hearing = hearing

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        """Make the call; a 200 means Telegram hears us and we hear it."""
        code, payload = await super().do_request(*args, **kwargs)
        if code == 200:
            self.hearing.heard()
        return code, payload


async def check_webhook(bot: Bot, hearing: Hearing, *, now: Callable[[], float] = time.time) -> None:
    """Ask Telegram how our webhook fares: its pending updates, and its last delivery error if recent."""
    info = await bot.get_webhook_info()
    WEBHOOK_PENDING.set(info.pending_update_count)
    error_at = info.last_error_date
    recent = error_at is not None and now() - error_at.timestamp() <= WEBHOOK_ERROR_HOLD
    error = (info.last_error_message or "unknown error") if recent else None
    if error is not None and error != hearing.webhook_error:
        log.warning(
            "Telegram cannot deliver updates to the webhook: %s (%d waiting)",
            error,
            info.pending_update_count,
        )
    elif error is None and hearing.webhook_error is not None:
        log.warning("Telegram delivers updates to the webhook again")
    hearing.webhook_error = error


async def watch_webhook(
    bot: Bot, hearing: Hearing, stop: asyncio.Event, interval: float = WEBHOOK_CHECK_INTERVAL
) -> None:
    """Check the webhook every ``interval`` seconds until ``stop`` (a failed check only ages the hearing)."""
    while not stop.is_set():
        try:
            await check_webhook(bot, hearing)
        except TelegramError as exc:
            log.info("getWebhookInfo failed: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
