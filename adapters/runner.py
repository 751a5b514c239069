"""``musbot run``: start every chat adapter that has a token, until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from adapters.telegram.settings import TelegramSettings
from bot.bootstrap import build_app
from bot.settings import Settings

log = logging.getLogger(__name__)


async def serve(settings: Settings, telegram: TelegramSettings | None = None) -> int:
    """Run the configured adapters on one bot core."""
    telegram = telegram if telegram is not None else TelegramSettings()
    if telegram.token is None:
        print(
            "No adapter has a token: set TELEGRAM_TOKEN (see .env.example), or try the terminal table with "
            "`musbot play`.",
            file=sys.stderr,
        )
        return 2
    from adapters.telegram.app import start_telegram, stop_telegram

    app = await build_app(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        application, runtime = await start_telegram(app, settings, telegram)
        try:
            await stop.wait()
        finally:
            await stop_telegram(application, runtime)
    finally:
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
