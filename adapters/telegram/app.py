"""The Telegram Application: handlers, command menus in six languages, the deadline loop, polling or webhook.

``build_application`` wires a python-telegram-bot ``Application`` to the bot core; ``run`` starts it with
long polling (default) or a webhook (``TELEGRAM_WEBHOOK_URL`` set: a secret path and secret token, so several
workers can sit behind a load balancer — every state lives in Redis).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from telegram import BotCommand, Update
from telegram.error import BadRequest, InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from adapters.telegram import lessons
from adapters.telegram.arrival import ArrivalQueue, TimedUpdates
from adapters.telegram.handlers import TelegramHandlers
from adapters.telegram.hearing import HeardRequest, Hearing, watch_webhook
from adapters.telegram.ids import PREFIX
from adapters.telegram.membership import Membership
from adapters.telegram.moves import ChatMover
from adapters.telegram.poller import SinglePoller
from adapters.telegram.rate_limit import ChatRateLimiter, bot_key, new_messages
from adapters.telegram.settings import TelegramSettings
from adapters.telegram.transport import TelegramTransport
from bot.app import COMMAND_LIST, Service
from bot.delivery import Delivery, MemoryOutbox, Outbox, RedisSurfaces, SurfaceStore
from bot.i18n import LANGUAGES, translator
from bot.ops import App, DeadlineLoop, SettingRefused, Settings, StartupError
from bot.store import CallBudget, LeaseStore, RedisCallBudget, RedisLeases, StoreError

log = logging.getLogger(__name__)

#: The updates the bot asks for: messages, presses, and its own membership (removed, added back, blocked).
ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY, Update.MY_CHAT_MEMBER]
#: Where python-telegram-bot calls the Bot API unless ``TELEGRAM_API_BASE_URL`` says otherwise.
DEFAULT_API_URL = "https://api.telegram.org"


@dataclass
class TelegramRuntime:
    """What runs next to the Application: the sender, the handlers and (alone on a service) the deadlines."""

    service: Service
    sender: Delivery
    handlers: TelegramHandlers
    hearing: Hearing
    """When Telegram last answered (readiness: :func:`telegram_ready`)."""
    deadlines: DeadlineLoop | None = None
    webhook_watch: asyncio.Task[None] | None = None
    poller: SinglePoller | None = None
    """Long polling by one process of the token at a time (polling mode only)."""
    """Asks Telegram how the webhook fares (webhook mode only)."""
    watch_stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def start_deadlines(self, outbox: Outbox | None = None) -> None:
        """Fire deadlines in the background (when Telegram is the only platform on this service); views
        for another platform wait in ``outbox`` for a process that serves it."""
        self.deadlines = DeadlineLoop(self.service, [self.sender], outbox=outbox or MemoryOutbox())
        self.deadlines.start()

    async def stop_deadlines(self) -> None:
        """Stop the deadline loop, if this runtime runs one, and the sender."""
        if self.deadlines is not None:
            await self.deadlines.stop()
        await self.handlers.marked()  # the last updates remembered as handled
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
    calls: CallBudget | None = None,
) -> tuple[Application, TelegramRuntime]:  # type: ignore[type-arg]
    """An Application whose handlers call ``service``; ``surfaces`` remembers messages and reachability;
    ``calls`` is the bot's budget of calls that every worker of the token shares (``None``: this process's
    own count)."""
    if settings.token is None:
        raise ValueError("TELEGRAM_TOKEN is not set")
    hearing = Hearing()
    # (Any: the builder's bot type changes with the rate limiter, whose calls carry a check: rate_limit.py.)
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any]
    builder = ApplicationBuilder().token(settings.token.get_secret_value())
    # Every answer from Telegram tells the hearing it is reachable (readiness and a metric; see hearing.py).
    builder = builder.request(HeardRequest(hearing, connection_pool_size=256))
    builder = builder.get_updates_request(HeardRequest(hearing, connection_pool_size=1))
    if settings.api_base_url:
        base = settings.api_base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    if rate_limiter:
        # Telegram's limits per bot (per group: a safety net), no bot-wide pause on a 429 (see rate_limit.py).
        token = settings.token.get_secret_value()
        builder = builder.rate_limiter(ChatRateLimiter(calls, bot=bot_key(token)))
    # Updates are handled concurrently; the store's compare-and-set keeps every table consistent. Each is
    # timed from its arrival in the queue: one store budget, an answer in time (see arrival.py).
    arrivals = ArrivalQueue()
    builder = builder.update_queue(arrivals).concurrent_updates(TimedUpdates(16, arrivals))
    application = builder.build()
    transport = TelegramTransport(application.bot, app_name=settings.miniapp_name)
    sender = Delivery(
        transport,
        surfaces,
        min_interval=min_interval,
        platform="telegram",
        key_platform=PREFIX.rstrip(":"),
        # A group's 20 new messages a minute, spent on the game first (with Telegram's limits kept).
        new_messages=new_messages if rate_limiter else None,
    )
    handlers = TelegramHandlers(service, sender, surfaces, bot_username or "", blocked=transport.blocked)
    sender.on_unreachable = handlers.unreachable
    sender.on_chat_lost = lambda view: service.pauses.chat_lost(view.chat or "")  # (a group refused a post)
    membership = Membership(handlers)  # the bot removed, added back, blocked: see membership.py
    mover = ChatMover(service, sender, surfaces)  # a group upgraded to a supergroup: see moves.py
    transport.on_moved = mover.refused
    runtime = TelegramRuntime(service, sender, handlers, hearing)
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
    application.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, mover.service_message))
    application.add_handler(ChatMemberHandler(membership.changed, ChatMemberHandler.MY_CHAT_MEMBER))
    application.add_handler(TypeHandler(Update, handlers.handled), group=1)  # after the handler
    application.add_error_handler(handler_failed)
    return application, runtime


async def handler_failed(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """An update whose handler raised: a store that did not answer in time (an overloaded or frozen Redis:
    the person was told, or their press expires) is one line; anything else keeps its traceback."""
    error = context.error
    if isinstance(error, (StoreError, TimeoutError)):
        log.warning("an update was not handled: the store did not answer (%s)", error or type(error).__name__)
    else:
        log.error("an update's handler failed", exc_info=error)


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
    runs it (``deadlines=False``: ``musbot run`` with several platforms runs one loop for all).

    A start that fails is undone and told as a :class:`~bot.ops.StartupError` without the token (see
    :func:`startup_error`); python-telegram-bot's own ``InvalidToken`` quotes the whole token.
    """
    surfaces = RedisSurfaces(app.redis, settings.redis_prefix)
    calls = RedisCallBudget(app.redis, settings.redis_prefix)  # one budget for every worker of the token
    application, runtime = build_application(
        app.service, telegram, surfaces, rate_limiter=rate_limiter, calls=calls
    )
    try:
        await _bring_up(application, runtime, telegram, RedisLeases(app.redis, settings.redis_prefix))
    except (TelegramError, OSError, StartupError) as exc:
        await _abandon(application, runtime)
        raise startup_error(exc, telegram) from None
    if deadlines:
        await runtime.start_deadlines(app.outbox)
    log.info("telegram adapter running as @%s", application.bot.username)
    return application, runtime


async def _bring_up(
    application: Application,  # type: ignore[type-arg]
    runtime: TelegramRuntime,
    telegram: TelegramSettings,
    leases: LeaseStore,
) -> None:
    """``getMe`` (the token checked), the command menus, then updates by polling (while this process holds
    the token's poller lease: :mod:`adapters.telegram.poller`) or webhook (watched: ``getWebhookInfo``)."""
    await application.initialize()
    runtime.handlers.bot_username = application.bot.username
    await set_command_menus(application)
    await application.start()
    updater = application.updater
    assert updater is not None
    if not telegram.webhook_url:

        async def poll() -> None:
            await updater.start_polling(
                allowed_updates=ALLOWED_UPDATES,
                error_callback=runtime.hearing.polling_failed,
            )

        runtime.poller = SinglePoller(leases, application.bot.id, poll, updater.stop)
        await runtime.poller.begin()
        return
    secret = telegram.webhook_secret.get_secret_value() if telegram.webhook_secret else None
    path = urlparse(telegram.webhook_url).path.lstrip("/") or "telegram"
    try:
        await updater.start_webhook(
            listen=telegram.webhook_listen,
            port=telegram.webhook_port,
            url_path=path,
            webhook_url=telegram.webhook_url,
            secret_token=secret,
            allowed_updates=ALLOWED_UPDATES,
        )
    except OSError as exc:  # the listener (the Bot API's network errors come as TelegramError)
        where = f"{telegram.webhook_listen}:{telegram.webhook_port}"
        raise StartupError(
            f"cannot listen for Telegram's webhook on {where} ({exc.strerror or exc})"
        ) from None
    runtime.webhook_watch = asyncio.create_task(
        watch_webhook(application.bot, runtime.hearing, runtime.watch_stop)
    )


async def _abandon(application: Application, runtime: TelegramRuntime) -> None:  # type: ignore[type-arg]
    """Undo a start that failed half-way: whatever started stops, the HTTP clients close."""
    try:
        await stop_telegram(application, runtime)
        # (an Application whose initialize() failed does not shut its bot down: its HTTP clients are open)
        await application.bot.shutdown()
    except Exception:  # the start's own error is what matters; this one is only logged
        log.debug("the failed Telegram start did not stop cleanly", exc_info=True)


def startup_error(exc: TelegramError | OSError | StartupError, telegram: TelegramSettings) -> StartupError:
    """What a failed start means for the host, in one line without the token: a rejected token is a
    :class:`~bot.ops.SettingRefused` (exit status 2, no restart), the rest a :class:`~bot.ops.StartupError`
    (exit status 1: unreachable, or refused for a reason a restart may clear)."""
    if isinstance(exc, StartupError):
        return exc
    where = (telegram.api_base_url or DEFAULT_API_URL).rstrip("/")
    if isinstance(exc, InvalidToken):
        # PTB's message quotes the token; its cause holds what the server said (401 Unauthorized, or 404 Not
        # Found when the address is no Bot API server, or the token is malformed).
        said = exc.__cause__.message if isinstance(exc.__cause__, TelegramError) else "rejected"
        hint = "; or TELEGRAM_API_BASE_URL is not a Bot API server" if telegram.api_base_url else ""
        return SettingRefused(
            "TELEGRAM_TOKEN",
            f"rejected by the Bot API at {where} ({said}): revoked or mistyped? @BotFather gives the token "
            f"(/mybots → API Token){hint}",
        )
    if isinstance(exc, NetworkError) and not isinstance(exc, BadRequest):  # (PTB's BadRequest is one too)
        return StartupError(f"cannot reach the Telegram Bot API at {where} ({exc.message})")
    if isinstance(exc, TelegramError):
        return StartupError(f"the Telegram Bot API at {where} refused to start the bot ({exc.message})")
    return StartupError(f"the Telegram adapter cannot start ({exc.strerror or exc})")


def telegram_ready(application: Application, runtime: TelegramRuntime) -> bool:  # type: ignore[type-arg]
    """Whether the Application takes updates (polling or webhook running) and Telegram still answers (and
    reports no recent failure to deliver to our webhook); a standby poller is ready when its Application
    runs (it fires deadlines and delivers, and takes over polling when the poller goes)."""
    if runtime.poller is not None and runtime.poller.standby:
        return bool(application.running)
    updater = application.updater
    running = bool(application.running and updater is not None and updater.running)
    return running and runtime.hearing.ready()


async def stop_telegram(application: Application, runtime: TelegramRuntime) -> None:  # type: ignore[type-arg]
    """Stop gracefully: take no more updates, finish the ones in hand, let their views out (bounded), stop.

    The order matters: the lanes are flushed after the last handler ran, so nothing it queued is lost.
    """
    if runtime.webhook_watch is not None:
        runtime.watch_stop.set()
        await runtime.webhook_watch
    if runtime.poller is not None:
        await runtime.poller.end()  # the lease given up: a standby polls at once
    if application.updater is not None and application.updater.running:
        await application.updater.stop()
    if application.running:
        await application.stop()  # waits for the updates being handled
    await runtime.stop_deadlines()  # the deadline loop (if ours), then the lanes flushed and closed
    await application.shutdown()
