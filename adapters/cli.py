"""The ``musbot`` command: ``musbot play`` (terminal table) and ``musbot run`` (chat platforms)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TypeVar

from pydantic_settings import BaseSettings

from adapters.console import app as console
from bot.settings import Settings, SettingsInvalid, read_settings

S = TypeVar("S", bound=BaseSettings)

#: Exit status for settings that cannot be used (as for a bad command line).
BAD_SETTINGS = 2

#: ``musbot play`` logs only warnings unless ``LOG_LEVEL`` is set: INFO lines would break up the table.
PLAY_LOG_LEVEL = "WARNING"


def configure_logging(level: str, fmt: str) -> None:
    """Send log records at ``level`` or above to stderr; an unknown level name falls back to INFO, loudly.

    ``force``: whatever configured the root logger first (an import, an embedding program) must not
    silently win over ``LOG_LEVEL`` — that was why it once had no effect.
    """
    name = level.strip().upper()
    known = isinstance(logging.getLevelName(name), int)
    logging.basicConfig(level=name if known else logging.INFO, format=fmt, force=True)
    if not known:
        logging.getLogger(__name__).warning("unknown LOG_LEVEL %r: using INFO", level)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run the chosen sub-command."""
    parser = argparse.ArgumentParser(prog="musbot", description="Mus a 8 reyes for chats and terminals.")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play at a terminal table (embedded Redis, nothing to configure)")
    console.add_arguments(play)
    sub.add_parser("run", help="run the chat adapters that have a token (TELEGRAM_TOKEN…)")
    args = parser.parse_args(argv)
    # Every setting is checked before anything starts; all the bad ones are told at once.
    problems: list[str] = []
    settings = _read(Settings, problems)
    if args.command == "play":
        if settings is None:
            return _invalid(problems)
        explicit = "log_level" in settings.model_fields_set  # from the environment or .env, not the default
        configure_logging(
            settings.log_level if explicit else PLAY_LOG_LEVEL, "%(levelname)s %(name)s: %(message)s"
        )
        return console.run(args, settings)
    from adapters.discord.settings import DiscordSettings
    from adapters.runner import run
    from adapters.telegram.settings import TelegramSettings

    telegram, discord_settings = _read(TelegramSettings, problems), _read(DiscordSettings, problems)
    if settings is None or telegram is None or discord_settings is None:
        return _invalid(problems)
    return run(settings, telegram, discord_settings)


def _read(cls: type[S], problems: list[str]) -> S | None:
    """``cls`` from the environment, or ``None`` with its problems added to ``problems``."""
    try:
        return read_settings(cls)
    except SettingsInvalid as exc:
        problems.extend(exc.problems)
        return None


def _invalid(problems: list[str]) -> int:
    """Tell every problem of the settings, one line each (the variable first), on stderr."""
    for line in problems:
        print(line, file=sys.stderr)
    return BAD_SETTINGS


if __name__ == "__main__":
    sys.exit(main())
