"""The ``musbot`` command: ``musbot play`` (terminal table: full screen on a terminal, ``--plain`` for
lines, ``--web`` for the web table), ``musbot run`` (chat platforms), ``musbot web`` (the web table alone),
``musbot history`` (the kept hands), ``musbot learn`` (the lessons at a terminal) and ``musbot discord-sync``
(the Discord slash commands registered now)."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from pydantic_settings import BaseSettings

from adapters.console import app as console
from adapters.console import history as console_history
from adapters.console import lessons as console_lessons
from adapters.console.screen import entry as fullscreen
from adapters.web import run as web_run
from adapters.web.settings import WebSettings
from bot.i18n import translator
from bot.i18n.markers import N_
from bot.ops import Settings, SettingsInvalid, holds_save, musbot_version, older_save, read_settings

if TYPE_CHECKING:
    from adapters.discord.settings import DiscordSettings

S = TypeVar("S", bound=BaseSettings)

#: Exit status for settings that cannot be used (as for a bad command line).
BAD_SETTINGS = 2

OLDER_SAVE_USED = N_(
    "Your saved games are in {older}, where older versions of musbot kept them, and are played from there. "
    "To find them from any folder, move them to the data folder: "
    'mkdir -p "{default}" && mv "{older}/appendonly.aof" "{default}/"'
)
OLDER_SAVE_LEFT = N_(
    "Older saved games are in {older} (where older versions of musbot kept them): "
    "`--data-dir {older}` plays them; your data folder is {default}."
)

#: ``musbot play`` logs only warnings unless ``LOG_LEVEL`` is set: INFO lines would break up the table.
PLAY_LOG_LEVEL = "WARNING"


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the ``table`` and ``chat`` a record is
    about (when its ``extra`` names them) and the traceback, if any."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        entry: dict[str, object] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("table", "chat"):
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = str(value)
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


#: Shorter secret forms are not redacted: they would mask ordinary words (no real token is that short).
MIN_SECRET = 8


def secret_forms(tokens: Iterable[str]) -> list[str]:
    """Everything to redact for ``tokens``, longest first: each token; the part that is secret on its own (a
    Telegram token's after its colon, the bot id before it being public; a Discord token's last, signed,
    part); and each of those as JSON and URLs escape it. Forms shorter than :data:`MIN_SECRET` are left."""
    forms: set[str] = set()
    for token in tokens:
        for part in (token, token.rpartition(":")[2], token.rpartition(".")[2]):
            forms |= {part, json.dumps(part, ensure_ascii=True)[1:-1], urllib.parse.quote(part, safe="")}
    return sorted((f for f in forms if len(f) >= MIN_SECRET), key=len, reverse=True)


#: A signed link's credential, in an address's fragment (``…/t/abcd1234#k={payload}.{signature}``): a
#: library that logs what it sends (python-telegram-bot at DEBUG, a ``/history`` answer's text) logs it too.
LINK_CREDENTIAL = re.compile(r"(#k=)[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (longest first: see :func:`secret_forms`) replaced by ``***``, and
    every signed link's credential too."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return LINK_CREDENTIAL.sub(r"\1***", text)


class Redacting(logging.Formatter):
    """Another formatter's lines with every secret (the platforms' tokens) replaced by ``***``: a library
    that logs a URL with the token in it (httpx, python-telegram-bot at DEBUG), an exception whose message
    holds it, a traceback — whatever a record carries, the line written has no token."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        """Wrap ``inner``; ``secrets`` are the tokens themselves (their forms are derived here)."""
        super().__init__()
        self.inner = inner
        self.secrets = secret_forms(secrets)

    def format(self, record: logging.LogRecord) -> str:
        """The inner formatter's line, redacted."""
        return redact(self.inner.format(record), self.secrets)


def configure_logging(level: str, fmt: str, *, json_lines: bool = False, secrets: Iterable[str] = ()) -> None:
    """Send log records at ``level`` or above to stderr (as text in ``fmt``, or JSON lines), with
    ``secrets`` redacted; an unknown level name falls back to INFO, loudly.

    ``force``: whatever configured the root logger first (an import, an embedding program) must not
    silently win over ``LOG_LEVEL`` — that was why it once had no effect.
    """
    name = level.strip().upper()
    known = isinstance(logging.getLevelName(name), int)
    handler = logging.StreamHandler(sys.stderr)
    inner = JsonLines() if json_lines else logging.Formatter(fmt)
    handler.setFormatter(Redacting(inner, secrets))
    logging.basicConfig(level=name if known else logging.INFO, handlers=[handler], force=True)
    if not known:
        logging.getLogger(__name__).warning("unknown LOG_LEVEL %r: using INFO", level)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run the chosen sub-command."""
    parser = argparse.ArgumentParser(prog="musbot", description="Mus with 8 kings for chats and terminals.")
    parser.add_argument("--version", action="version", version=f"musbot {musbot_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play at a terminal table (embedded Redis, nothing to configure)")
    console.add_arguments(play)
    fullscreen.add_arguments(play)
    play.add_argument(
        "--web", action="store_true", help="play at the web table instead (its link is printed)"
    )
    web_parser = sub.add_parser("web", help="the web table alone, for development (WEB_SECRET, WEB_PORT)")
    web_run.add_arguments(web_parser)
    sub.add_parser("run", help="run the chat adapters that have a token (TELEGRAM_TOKEN…)")
    sub.add_parser(
        "discord-sync",
        help="register the Discord slash commands now (a start registers them only when they changed)",
    )
    history = sub.add_parser("history", help="list the kept hands, tell one again, export a match")
    console_history.add_arguments(history)
    learn = sub.add_parser("learn", help="the ten lessons to learn Mus, at a terminal (learn 5: lesson 5)")
    console_lessons.add_arguments(learn)
    args = parser.parse_args(argv)
    # Every setting is checked before anything starts; all the bad ones are told at once.
    problems: list[str] = []
    settings = _read(Settings, problems)
    if settings is not None:
        settings = _with_older_save(args, settings)
    if args.command == "play":
        if settings is None:
            return _invalid(problems)
        explicit = "log_level" in settings.model_fields_set  # from the environment or .env, not the default
        configure_logging(
            settings.log_level if explicit else PLAY_LOG_LEVEL, "%(levelname)s %(name)s: %(message)s"
        )
        if args.web:
            web_settings = _read(WebSettings, problems)
            if web_settings is None:
                return _invalid(problems)
            return web_run.run_play(args, settings, web_settings)
        if fullscreen.wanted(args):
            return console.run(args, settings, table=fullscreen.play)
        return console.run(args, settings)
    if args.command == "history":
        if settings is None:
            return _invalid(problems)
        configure_logging(
            settings.log_level if "log_level" in settings.model_fields_set else PLAY_LOG_LEVEL,
            "%(levelname)s %(name)s: %(message)s",
        )
        return console_history.run(args, settings)
    if args.command == "learn":
        if settings is None:
            return _invalid(problems)
        configure_logging(
            settings.log_level if "log_level" in settings.model_fields_set else PLAY_LOG_LEVEL,
            "%(levelname)s %(name)s: %(message)s",
        )
        return console_lessons.run(args, settings)
    from adapters.discord.settings import DiscordSettings
    from adapters.runner import run, web_access
    from adapters.telegram.settings import TelegramSettings

    if args.command == "web":
        web_settings, telegram = _read(WebSettings, problems), _read(TelegramSettings, problems)
        if settings is None or web_settings is None or telegram is None:
            return _invalid(problems)
        bot_token = None if telegram.token is None else telegram.token.get_secret_value()
        hidden = [s.get_secret_value() for s in (telegram.token, web_settings.secret) if s is not None]
        configure_logging(
            settings.log_level, "%(asctime)s %(levelname)s %(name)s: %(message)s", secrets=hidden
        )
        return web_run.run(args, settings, web_settings, bot_token, web_access(web_settings, telegram))

    if args.command == "discord-sync":  # the core's store and Discord's settings: nothing of other platforms
        discord_only = _read(DiscordSettings, problems)
        if settings is None or discord_only is None:
            return _invalid(problems)
        return _discord_sync(settings, discord_only)
    telegram, discord_settings = _read(TelegramSettings, problems), _read(DiscordSettings, problems)
    web_settings = _read(WebSettings, problems)
    if settings is None or telegram is None or discord_settings is None or web_settings is None:
        return _invalid(problems)
    return run(settings, telegram, discord_settings, web_settings)


def _discord_sync(settings: Settings, discord_settings: DiscordSettings) -> int:
    """``musbot discord-sync``: its log lines without the token; one line of its own on stdout."""
    from adapters.discord.sync import sync_now

    token = discord_settings.token
    configure_logging(
        settings.log_level if "log_level" in settings.model_fields_set else PLAY_LOG_LEVEL,
        "%(levelname)s %(name)s: %(message)s",
        secrets=[] if token is None else [token.get_secret_value()],
    )
    return sync_now(settings, discord_settings)


def _with_older_save(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings with ``./data`` as the data directory when an older version's save is there and the
    default holds none; either way such a save is told about, never left behind without a word."""
    chosen = bool(settings.redis_url) or "data_dir" in settings.model_fields_set
    chosen = chosen or getattr(args, "data_dir", None) is not None
    older = older_save(settings.data_dir, chosen=chosen)
    if older is None:
        return settings
    use_older = not holds_save(settings.data_dir)
    line = translator(getattr(args, "lang", None) or "es").format(
        OLDER_SAVE_USED if use_older else OLDER_SAVE_LEFT, older=str(older), default=str(settings.data_dir)
    )
    if args.command == "run":
        logging.getLogger(__name__).warning("%s", line)
    else:
        print(line, file=sys.stderr)
    return settings.model_copy(update={"data_dir": older}) if use_older else settings


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
