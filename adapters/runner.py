"""``musbot run``: start every chat adapter that has a token, on one service, until SIGINT/SIGTERM.

Start-up checks, in this order, each failing with a one-line message on stderr and no traceback:

1. the settings, every variable at once (:mod:`adapters.cli`: one line per bad value, exit status 2);
2. a token: without ``TELEGRAM_TOKEN`` or ``DISCORD_TOKEN`` there is nothing to run (exit status 2) — checked
   before Redis, so that a bare ``musbot run`` starts no server just to stop it;
3. Redis: ``REDIS_URL`` must answer, or the embedded server must start (exit status 1) — before any chat
   platform is contacted, so that no update is taken that could not be stored;
4. the health listener and each platform: a token the platform rejects (``TELEGRAM_TOKEN: rejected by …``,
   exit status 2: restarting will not help, and the systemd units do not), a platform that cannot be reached
   (``musbot: cannot reach …``, exit status 1: the service manager restarts it).

No byte of a token is ever written: the log lines are redacted (:class:`adapters.cli.Redacting`), and so is
the one-line failure; an unexpected error is logged (redacted, with its traceback) rather than left to
Python, which would print an exception's message — python-telegram-bot's holds the token — as it is.
"""

from __future__ import annotations

import asyncio
import logging
import platform
import signal
import sys
from collections.abc import Awaitable, Callable

from adapters.discord.settings import DiscordSettings
from adapters.telegram.settings import TelegramSettings
from adapters.web.settings import WebSettings
from bot.kernel import WebAccess
from bot.ops import (
    App,
    DeadlineLoop,
    HealthServer,
    SettingRefused,
    Settings,
    StartupError,
    build_app,
    musbot_version,
    read_settings,
)

log = logging.getLogger(__name__)

NO_TOKEN = (
    "No adapter has a token: set TELEGRAM_TOKEN and/or DISCORD_TOKEN (see .env.example), or try the "
    "terminal table with `musbot play`."
)


async def serve(
    settings: Settings,
    telegram: TelegramSettings | None = None,
    discord_settings: DiscordSettings | None = None,
    web_settings: WebSettings | None = None,
) -> int:
    """Run the configured adapters on one bot core, with one deadline loop for all of them; the exit status
    (0 after a signal; 1 or 2 when it could not start, told in one line on stderr)."""
    telegram = telegram if telegram is not None else TelegramSettings()
    discord_settings = discord_settings if discord_settings is not None else DiscordSettings()
    if telegram.token is None and discord_settings.token is None:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    try:
        # A bot with a web table announces its writes to it, whether this process or another serves it.
        app = await build_app(
            settings, web_notices=web_settings is not None and web_settings.secret is not None
        )
    except StartupError as exc:
        return _failed(exc, telegram, discord_settings, web_settings)
    # Which version each worker runs, in its log (during a rolling upgrade, both show) — once Redis answered,
    # so that a Redis that does not stays the one line it is.
    log.info("musbot %s starting (Python %s)", musbot_version(), platform.python_version())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    deadlines = DeadlineLoop(app.service, outbox=app.outbox)
    stoppers: list[Callable[[], Awaitable[None]]] = []
    health: HealthServer | None = None
    try:
        health = await _start_health(app, settings, telegram, discord_settings)
        app.service.deps.web = web_access(web_settings, telegram)
        await _start_platforms(app, settings, telegram, discord_settings, deadlines, stoppers, health)
        await _start_web(app, web_settings, telegram, deadlines, stoppers)
        # What a previous process still had queued when it died is lost: show the recent tables as they are
        # (two minutes: longer than any backlog; a redraw a chat shows already costs it one "not modified").
        await deadlines.on_outcome(await app.service.redraw_recent())
        deadlines.start()
        await stop.wait()
    except StartupError as exc:
        # Told once everything started so far is stopped again (below), as the last line.
        failure: StartupError | None = exc
    else:
        failure = None
    finally:
        # Graceful: no more deadlines claimed (none is left leased: the loop ends after its round), each
        # platform takes no more updates, finishes those in hand and flushes its lanes, then Redis closes.
        log.info("stopping")
        await deadlines.stop()
        for stopper in reversed(stoppers):
            try:
                await stopper()
            except Exception:  # stop the others whatever one of them does
                log.exception("an adapter did not stop cleanly")
        if health is not None:
            await health.stop()
        await app.close()
        log.info("stopped")
    return 0 if failure is None else _failed(failure, telegram, discord_settings, web_settings)


def _failed(
    failure: StartupError,
    telegram: TelegramSettings,
    discord_settings: DiscordSettings,
    web_settings: WebSettings | None = None,
) -> int:
    """Tell ``failure`` in one line on stderr, redacted (a platform's error text could quote a token back),
    and return its exit status. A refused setting's line starts with the variable, as the settings' do."""
    from adapters.cli import redact, secret_forms

    line = str(failure) if isinstance(failure, SettingRefused) else f"musbot: {failure}"
    print(
        redact(" ".join(line.split()), secret_forms(_secrets(telegram, discord_settings, web_settings))),
        file=sys.stderr,
    )
    return failure.exit_status


def _secrets(
    telegram: TelegramSettings, discord_settings: DiscordSettings, web_settings: WebSettings | None = None
) -> list[str]:
    """What no line of this process may show: the platforms' tokens, the webhook's secret token
    (python-telegram-bot logs ``setWebhook``'s parameters at DEBUG) and the web table's key."""
    web_secret = None if web_settings is None else web_settings.secret
    secrets = (telegram.token, discord_settings.token, telegram.webhook_secret, web_secret)
    return [s.get_secret_value() for s in secrets if s is not None]


async def _start_health(
    app: App, settings: Settings, telegram: TelegramSettings, discord_settings: DiscordSettings
) -> HealthServer | None:
    """The health listener, if ``HEALTH_PORT`` asks for one, not ready until each platform with a token is
    connected (its check replaces the placeholder); a port it cannot bind is a :class:`StartupError`."""
    if not settings.health_port:
        return None
    health = HealthServer(settings.health_host, settings.health_port, {"redis": app.ping})
    for name, token in (("telegram", telegram.token), ("discord", discord_settings.token)):
        if token is not None:
            health.checks[name] = _starting
    try:
        await health.start()
    except OSError as exc:  # another process holds the port (an old worker still stopping)
        await health.stop()
        where = f"{settings.health_host}:{settings.health_port}"
        raise StartupError(f"cannot serve HEALTH_PORT on {where} ({exc.strerror or exc})") from None
    return health


async def _start_platforms(
    app: App,
    settings: Settings,
    telegram: TelegramSettings,
    discord_settings: DiscordSettings,
    deadlines: DeadlineLoop,
    stoppers: list[Callable[[], Awaitable[None]]],
    health: HealthServer | None,
) -> None:
    """Start each platform that has a token, adding what stops it to ``stoppers`` and its readiness to
    ``health``; a platform that cannot start raises :class:`StartupError` (the ones started are stopped by
    the caller)."""
    if telegram.token is not None:
        from adapters.telegram.app import start_telegram, stop_telegram, telegram_ready

        application, runtime = await start_telegram(app, settings, telegram, deadlines=False)
        deadlines.deliveries.append(runtime.sender)
        stoppers.append(lambda: stop_telegram(application, runtime))
        if health is not None:
            health.checks["telegram"] = lambda: _now(telegram_ready(application, runtime))
    if discord_settings.token is not None:
        from adapters.discord.app import start_discord

        client = await start_discord(app, settings, discord_settings, deadlines=False)
        deadlines.deliveries.append(client.sender)
        stoppers.append(client.stop)
        if health is not None:
            health.checks["discord"] = client.ready


async def _start_web(
    app: App,
    web_settings: WebSettings | None,
    telegram: TelegramSettings,
    deadlines: DeadlineLoop,
    stoppers: list[Callable[[], Awaitable[None]]],
) -> None:
    """The web table beside the chats, when ``WEB_SECRET`` is set (unless ``WEB_SERVE=false``): a press on a
    page changes the chats' messages too (the deadline loop's deliveries); a Mini App's initData is checked
    with the bot's token."""
    if web_settings is None or web_settings.secret is None or not web_settings.serve:
        return
    from adapters.web.run import start_web

    token = None if telegram.token is None else telegram.token.get_secret_value()
    secret = web_settings.secret.get_secret_value().encode()
    running = await start_web(
        app.service, web_settings, secret, telegram_token=token, on_outcome=deadlines.on_outcome
    )
    stoppers.append(running.stop)
    log.info("web table on %s:%d", web_settings.host, running.port)


def web_access(web_settings: WebSettings | None, telegram: TelegramSettings) -> WebAccess | None:
    """How the chats lead to the web table (none unless it is served at a public address): every platform's
    door, whichever this process serves — a deadline fired here draws another platform's views too."""
    from adapters.discord.web_links import open_door as discord_door
    from adapters.telegram.mini_app import open_door as telegram_door

    web = None if web_settings is None else web_settings.access()
    discord_door(web)
    door = telegram_door(web)
    if door is not None and not door.app and telegram.token is not None:
        log.warning("WEB_PUBLIC_URL is not https://: Telegram opens no web app, its chats show no way there")
    return web


async def _now(value: bool) -> bool:
    return value


async def _starting() -> bool:
    return False


def run(
    settings: Settings | None = None,
    telegram: TelegramSettings | None = None,
    discord_settings: DiscordSettings | None = None,
    web_settings: WebSettings | None = None,
) -> int:
    """Entry point of ``musbot run``: logging at ``LOG_LEVEL``, then the adapters until a signal.

    Settings not given are read from the environment (:class:`bot.ops._settings.SettingsInvalid` if bad).
    """
    from adapters.cli import configure_logging  # the one place that turns LOG_LEVEL into handlers

    settings = settings or read_settings(Settings)
    telegram = telegram if telegram is not None else read_settings(TelegramSettings)
    discord_settings = discord_settings if discord_settings is not None else read_settings(DiscordSettings)
    web_settings = web_settings if web_settings is not None else read_settings(WebSettings)
    configure_logging(
        settings.log_level,
        "%(asctime)s %(levelname)s %(name)s: %(message)s",
        json_lines=settings.log_format == "json",
        secrets=_secrets(telegram, discord_settings, web_settings),
    )
    # httpx logs every request URL, which contains the bot token (redacted, but noise at INFO): keep it quiet.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        return asyncio.run(serve(settings, telegram, discord_settings, web_settings))
    except Exception:
        # A bug, not a start-up check: its traceback is worth having, but through the redacting log handler
        # (left to Python, an exception's message would be printed as it is, a token in it included).
        log.critical("musbot stopped on an unexpected error", exc_info=True)
        return 1
