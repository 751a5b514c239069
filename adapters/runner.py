"""``musbot run``: start every chat adapter that has a token, on one service, until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable

from adapters.discord.settings import DiscordSettings
from adapters.telegram.settings import TelegramSettings
from bot.bootstrap import DeadlineLoop, build_app
from bot.settings import Settings

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
    app = await build_app(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    deadlines = DeadlineLoop(app.service)
    stoppers: list[Callable[[], Awaitable[None]]] = []
    try:
        if telegram.token is not None:
            from adapters.telegram.app import start_telegram, stop_telegram

            application, runtime = await start_telegram(app, settings, telegram, deadlines=False)
            deadlines.deliveries.append(runtime.sender)
            stoppers.append(lambda: stop_telegram(application, runtime))
        if discord_settings.token is not None:
            from adapters.discord.app import start_discord

            client = await start_discord(app, settings, discord_settings, deadlines=False)
            deadlines.deliveries.append(client.sender)
            stoppers.append(client.stop)
        deadlines.start()
        await stop.wait()
    finally:
        await deadlines.stop()
        for stopper in reversed(stoppers):
            try:
                await stopper()
            except Exception:  # stop the others whatever one of them does
                log.exception("an adapter did not stop cleanly")
        await app.close()
    return 0


def run(settings: Settings | None = None) -> int:
    """Entry point of ``musbot run``: logging at ``LOG_LEVEL``, then the adapters until a signal."""
    from adapters.cli import configure_logging  # the one place that turns LOG_LEVEL into handlers

    settings = settings or Settings()
    configure_logging(settings.log_level, "%(asctime)s %(levelname)s %(name)s: %(message)s")
    # httpx logs every request URL, which contains the bot token: keep it quiet.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return asyncio.run(serve(settings))
