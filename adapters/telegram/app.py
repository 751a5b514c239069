"""The Telegram Application: handlers, command menus in six languages, the deadline loop, polling or webhook.

``build_application`` wires a python-telegram-bot ``Application`` to the bot core; ``run`` starts it with
long polling (default) or a webhook (``TELEGRAM_WEBHOOK_URL`` set: a secret path and secret token, so several
workers can sit behind a load balancer — every state lives in Redis).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from dataclasses import dataclass
from urllib.parse import urlparse

from telegram import BotCommand, Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    TypeHandler,
)

from adapters.telegram import lessons
from adapters.telegram.handlers import TelegramHandlers
from adapters.telegram.ids import PREFIX
from adapters.telegram.rate_limit import ChatRateLimiter, new_messages
from adapters.telegram.settings import TelegramSettings
from adapters.telegram.transport import TelegramTransport
from bot.app import COMMAND_LIST, Service
from bot.delivery import Delivery, MemoryOutbox, Outbox, RedisSurfaces, SurfaceStore
from bot.i18n import LANGUAGES, translator
from bot.ops import App, DeadlineLoop, Settings

log = logging.getLogger(__name__)


@dataclass
class TelegramRuntime:
    """What runs next to the Application: the sender, the handlers and (alone on a service) the deadlines."""

    service: Service
    sender: Delivery
    handlers: TelegramHandlers
    deadlines: DeadlineLoop | None = None

    async def start_deadlines(self, outbox: Outbox | None = None) -> None:
        """Fire deadlines in the background (when Telegram is the only platform on this service); views
        for another platform wait in ``outbox`` for a process that serves it."""
        self.deadlines = DeadlineLoop(self.service, [self.sender], outbox=outbox or MemoryOutbox())
        self.deadlines.start()

    async def stop_deadlines(self) -> None:
        """Stop the deadline loop, if this runtime runs one, and the sender."""
        if self.deadlines is not None:
            await self.deadlines.stop()
        with contextlib.suppress(TimeoutError):
            await self.sender.flush(timeout=5.0)  # let the last views out
        await self.sender.close()


def build_application(
    service: Service,
    settings: TelegramSettings,
    surfaces: SurfaceStore,
    *,
    rate_limiter: bool = True,
    min_interval: float = 1.0,
    bot_username: str | None = None,
) -> tuple[Application, TelegramRuntime]:  # type: ignore[type-arg]
    """An Application whose handlers call ``service``; ``surfaces`` remembers messages and reachability."""
    if settings.token is None:
        raise ValueError("TELEGRAM_TOKEN is not set")
    builder = ApplicationBuilder().token(settings.token.get_secret_value())
    if settings.api_base_url:
        base = settings.api_base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    if rate_limiter:
        # Telegram's limits per bot (per group: a safety net), no bot-wide pause on a 429 (see rate_limit.py).
        builder = builder.rate_limiter(ChatRateLimiter())
    # Updates are handled concurrently; the store's compare-and-set keeps every table consistent.
    builder = builder.concurrent_updates(16)
    application = builder.build()
    sender = Delivery(
        TelegramTransport(application.bot),
        surfaces,
        min_interval=min_interval,
        platform="telegram",
        key_platform=PREFIX.rstrip(":"),
        # A group's 20 new messages a minute, spent on the game first (with Telegram's limits kept).
        new_messages=new_messages if rate_limiter else None,
    )
    handlers = TelegramHandlers(service, sender, surfaces, bot_username or "")
    sender.on_unreachable = handlers.unreachable
    runtime = TelegramRuntime(service, sender, handlers)
    application.add_handler(TypeHandler(Update, handlers.once), group=-1)  # before every other handler
    for name, callback in (
        ("start", handlers.start),
        ("newgame", handlers.newgame),
        ("cancel", handlers.cancel),
        ("leaderboard", handlers.leaderboard),
        ("stats", handlers.stats),
        ("rules", handlers.rules),
        ("language", handlers.language),
        ("help", handlers.help),
        ("history", handlers.history),
    ):
        application.add_handler(CommandHandler(name, callback))
    application.add_handler(CommandHandler("learn", functools.partial(lessons.learn, handlers)))
    application.add_handler(CallbackQueryHandler(handlers.button))
    application.add_handler(TypeHandler(Update, handlers.handled), group=1)  # after the handler
    return application, runtime


async def set_command_menus(application: Application) -> None:  # type: ignore[type-arg]
    """``setMyCommands`` for every language (the default menu in Spanish)."""
    for lang in (None, *LANGUAGES):
        t = translator(lang or "es")
        commands = [BotCommand(name, t.gettext(description)) for name, description in COMMAND_LIST]
        try:
            await application.bot.set_my_commands(commands, language_code=lang)
        except TelegramError as exc:
            log.warning("setMyCommands(%s) failed: %s", lang, exc)


async def start_telegram(
    app: App,
    settings: Settings,
    telegram: TelegramSettings,
    *,
    rate_limiter: bool = True,
    deadlines: bool = True,
) -> tuple[
    Application, TelegramRuntime  # type: ignore[type-arg]
]:
    """Initialise and start the Application (polling or webhook), and the deadline loop unless another
    runs it (``deadlines=False``: ``musbot run`` with several platforms runs one loop for all)."""
    surfaces = RedisSurfaces(app.redis, settings.redis_prefix)
    application, runtime = build_application(app.service, telegram, surfaces, rate_limiter=rate_limiter)
    await application.initialize()
    runtime.handlers.bot_username = application.bot.username
    await set_command_menus(application)
    await application.start()
    assert application.updater is not None
    if telegram.webhook_url:
        secret = telegram.webhook_secret.get_secret_value() if telegram.webhook_secret else None
        path = urlparse(telegram.webhook_url).path.lstrip("/") or "telegram"
        await application.updater.start_webhook(
            listen=telegram.webhook_listen,
            port=telegram.webhook_port,
            url_path=path,
            webhook_url=telegram.webhook_url,
            secret_token=secret,
            allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY],
        )
    else:
        await application.updater.start_polling(allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY])
    if deadlines:
        await runtime.start_deadlines(app.outbox)
    log.info("telegram adapter running as @%s", application.bot.username)
    return application, runtime


def telegram_ready(application: Application) -> bool:  # type: ignore[type-arg]
    """Whether the Application takes updates (polling or webhook running)."""
    updater = application.updater
    return bool(application.running and updater is not None and updater.running)


async def stop_telegram(application: Application, runtime: TelegramRuntime) -> None:  # type: ignore[type-arg]
    """Stop gracefully: take no more updates, finish the ones in hand, let their views out (bounded), stop.

    The order matters: the lanes are flushed after the last handler ran, so nothing it queued is lost.
    """
    if application.updater is not None and application.updater.running:
        await application.updater.stop()
    if application.running:
        await application.stop()  # waits for the updates being handled
    await runtime.stop_deadlines()  # the deadline loop (if ours), then the lanes flushed and closed
    await application.shutdown()
