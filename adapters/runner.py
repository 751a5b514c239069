"""``musbot run``: start every chat adapter that has a token, on one service, until SIGINT/SIGTERM.

Start-up checks, in this order, each failing with a one-line message on stderr and no traceback:

1. the settings, every variable at once (:mod:`adapters.cli`: one line per bad value, exit status 2);
2. a token: without ``TELEGRAM_TOKEN`` or ``DISCORD_TOKEN`` there is nothing to run (exit status 2) — checked
   before Redis, so that a bare ``musbot run`` starts no server just to stop it;
3. Redis: ``REDIS_URL`` must answer, or the embedded server must start (exit status 1) — before any chat
   platform is contacted, so that no update is taken that could not be stored.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable

from adapters.discord.settings import DiscordSettings
from adapters.telegram.settings import TelegramSettings
from bot.ops import DeadlineLoop, HealthServer, Settings, StartupError, build_app, read_settings

log = logging.getLogger(__name__)

NO_TOKEN = (
    "No adapter has a token: set TELEGRAM_TOKEN and/or DISCORD_TOKEN (see .env.example), or try the "
    "terminal table with `musbot play`."
)


async def serve(
    settings: Settings,
    telegram: TelegramSettings | None = None,
    discord_settings: DiscordSettings | None = None,
) -> int:
    """Run the configured adapters on one bot core, with one deadline loop for all of them."""
    telegram = telegram if telegram is not None else TelegramSettings()
    discord_settings = discord_settings if discord_settings is not None else DiscordSettings()
    if telegram.token is None and discord_settings.token is None:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    try:
        app = await build_app(settings)
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    deadlines = DeadlineLoop(app.service, outbox=app.outbox)
    stoppers: list[Callable[[], Awaitable[None]]] = []
    health: HealthServer | None = None
    try:
        if settings.health_port:
            health = HealthServer(settings.health_host, settings.health_port, {"redis": app.ping})
            # Not ready until each platform with a token is connected (its check replaces this one).
            for name, token in (("telegram", telegram.token), ("discord", discord_settings.token)):
                if token is not None:
                    health.checks[name] = _starting
            await health.start()
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
        # What a previous process still had queued when it died is lost: show the recent tables as they are
        # (two minutes: longer than any backlog; a redraw a chat shows already costs it one "not modified").
        await deadlines.on_outcome(await app.service.redraw_recent())
        deadlines.start()
        await stop.wait()
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
    return 0


async def _now(value: bool) -> bool:
    return value


async def _starting() -> bool:
    return False


def run(
    settings: Settings | None = None,
    telegram: TelegramSettings | None = None,
    discord_settings: DiscordSettings | None = None,
) -> int:
    """Entry point of ``musbot run``: logging at ``LOG_LEVEL``, then the adapters until a signal.

    Settings not given are read from the environment (:class:`bot.ops._settings.SettingsInvalid` if bad).
    """
    from adapters.cli import configure_logging  # the one place that turns LOG_LEVEL into handlers

    settings = settings or read_settings(Settings)
    telegram = telegram if telegram is not None else read_settings(TelegramSettings)
    discord_settings = discord_settings if discord_settings is not None else read_settings(DiscordSettings)
    tokens = [t.get_secret_value() for t in (telegram.token, discord_settings.token) if t is not None]
    configure_logging(
        settings.log_level,
        "%(asctime)s %(levelname)s %(name)s: %(message)s",
        json_lines=settings.log_format == "json",
        secrets=tokens,
    )
    # httpx logs every request URL, which contains the bot token: keep it quiet.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return asyncio.run(serve(settings, telegram, discord_settings))
