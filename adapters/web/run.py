"""``musbot web`` (the web table alone, for development) and ``musbot play --web`` (the solo game's table on
127.0.0.1, its link printed: the zero-set-up way to see it, on the embedded store like everything else).

In ``musbot run`` the same application is started beside the chats by :func:`start_web` when ``WEB_SECRET``
is set, sharing their service and deadline loop.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import secrets
import signal
import sys
import time
import webbrowser
from dataclasses import dataclass

from aiohttp import web

from adapters.web.feed import Hub
from adapters.web.server import OnOutcome, WebTable
from adapters.web.settings import WebSettings
from bot.app import Service
from bot.i18n import normalize_language
from bot.kernel import (
    LEVELS,
    TARGET_CHOICES,
    ChatRef,
    TableStatus,
    UserRef,
    WebAccess,
    lobby_stamp,
    make_token,
)
from bot.ops import DeadlineLoop, Settings, StartupError, build_app
from bot.table import FlowSettings

#: The solo web game's chat and player (a saved game of its own, beside the terminal's).
SOLO_CHAT = ChatRef("web:local", private=True, title="Web")
NO_SECRET = "WEB_SECRET: not set (it signs the links to a table; e.g. `openssl rand -hex 32`)"


@dataclass
class Running:
    """A started web table: its hub and runner, to stop them."""

    hub: Hub
    runner: web.AppRunner
    table: WebTable
    port: int
    """The port it listens on (the one asked for, or the one the system chose for port 0)."""

    async def stop(self) -> None:
        """Stop polling, close every stream and the listener."""
        await self.hub.stop()
        await self.runner.cleanup()


async def start_web(
    service: Service,
    web_settings: WebSettings,
    secret: bytes,
    *,
    telegram_token: str | None = None,
    on_outcome: OnOutcome | None = None,
) -> Running:
    """Serve the web table on ``WEB_HOST:WEB_PORT``; :class:`StartupError` if the port cannot be bound."""
    hub = Hub(service, pause=web_settings.move_pause, poll=web_settings.safety_poll)
    table = WebTable(
        service,
        hub,
        secret,
        telegram_token=telegram_token,
        initdata_max_age=web_settings.initdata_max_age,
        on_outcome=on_outcome,
    )
    # No access log: a request line may carry a page id, and a credential is a credential.
    runner = web.AppRunner(table.app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, web_settings.host, web_settings.port, shutdown_timeout=1.0).start()
    except OSError as exc:
        await runner.cleanup()
        where = f"{web_settings.host}:{web_settings.port}"
        raise StartupError(f"cannot serve WEB_PORT on {where} ({exc.strerror or exc})") from None
    hub.start()
    port = runner.addresses[0][1] if runner.addresses else web_settings.port
    return Running(hub, runner, table, port)


async def _until_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def serve_alone(
    settings: Settings, web_settings: WebSettings, telegram_token: str | None, access: WebAccess | None = None
) -> int:
    """``musbot web``: the web table on its own (its deadline loop too), until a signal. ``access`` is how
    the chats lead here, as the bot's workers have it: the views a deadline fired here draws for the chats
    are the ones they draw, and ``/history`` links to replays."""
    if web_settings.secret is None:
        print(NO_SECRET, file=sys.stderr)
        return 2
    app = await build_app(settings, web_notices=True)
    app.service.deps.web = access
    # What a page's press or a deadline changes here reaches the chats through their platforms' outboxes:
    # this process serves no chat.
    deadlines = DeadlineLoop(app.service, outbox=app.outbox)
    running: Running | None = None
    try:
        running = await start_web(
            app.service,
            web_settings,
            web_settings.secret.get_secret_value().encode(),
            telegram_token=telegram_token,
            on_outcome=deadlines.on_outcome,
        )
        deadlines.start()
        print(f"musbot web: serving {web_settings.base_url()}/t/<table>", flush=True)
        await _until_signal()
    finally:
        await deadlines.stop()
        if running is not None:
            await running.stop()
        await app.close()
    return 0


def web_flow() -> FlowSettings:
    """The solo web game's timings: machines answer at once (the page shows each move in turn), the count
    stays a few seconds before the next deal, and a person never times out."""
    return FlowSettings(turn_timeout=7 * 86400, machine_delay=0, next_hand_delay=3.0, lobby_timeout=7 * 86400)


def _wanted(args: argparse.Namespace) -> list[tuple[str, str, object]]:
    """The lobby options the command line chose (each button's code, the option's field, its value);
    none: the page opens the lobby, its options chosen there. One chosen: the rest take their defaults."""
    if not (args.senas or args.single or args.target is not None or args.level is not None):
        return []
    return [
        ("o_senas", "senas", bool(args.senas)),
        ("o_target", "target", 40 if args.target is None else args.target),
        ("o_mode", "mode", "game" if args.single else "match"),
        ("o_level", "difficulty", args.level or "normal"),
    ]


async def _solo_table(service: Service, user: UserRef, args: argparse.Namespace) -> str:
    """The solo web game's table: the saved one, or a new one — started at once with the options the
    command line chose, or left in its lobby for the page when it chose none (as ``musbot play`` opens
    its options first)."""
    if args.new:
        await service.cancel(SOLO_CHAT, user)
    await service.set_language(SOLO_CHAT, user, args.lang)
    outcome = await service.new_table(SOLO_CHAT, user)
    if outcome.table is None:
        raise StartupError(outcome.answer or "the store failed")
    wanted = _wanted(args)
    state = await service.load_table(outcome.table)
    if state is None or state.status is not TableStatus.LOBBY or not wanted:
        return outcome.table
    for code, option, value in wanted:
        for _cycle in range(len(TARGET_CHOICES) + len(LEVELS)):  # a press cycles the option one step
            if state is None or getattr(state.options, option) == value:
                break
            await service.press(user, make_token(state.id, lobby_stamp(), code))
            state = await service.load_table(outcome.table)
    await service.press(user, make_token(outcome.table, lobby_stamp(), "start"))
    return outcome.table


async def play_web(args: argparse.Namespace, settings: Settings, web_settings: WebSettings) -> int:
    """``musbot play --web``: the solo game served on 127.0.0.1, its link printed (and opened in a browser
    where one is available), until a signal."""
    # 127.0.0.1 only; WEB_PORT if set, else any free port (the link says which).
    port = web_settings.port if "port" in web_settings.model_fields_set else 0
    web_settings = web_settings.model_copy(update={"host": "127.0.0.1", "public_url": None, "port": port})
    # WEB_SECRET if set (a link then outlives a restart), else a key of this run only.
    secret = (
        web_settings.secret.get_secret_value().encode() if web_settings.secret else secrets.token_bytes(32)
    )
    app = await build_app(settings, flow=web_flow(), web_notices=True)
    deadlines = DeadlineLoop(app.service)
    running: Running | None = None
    try:
        name = args.name or getpass.getuser().capitalize() or "Tú"
        user = UserRef("web:you", name, args.lang)
        table_id = await _solo_table(app.service, user, args)
        running = await start_web(app.service, web_settings, secret)
        deadlines.start()
        web_settings = web_settings.model_copy(update={"port": running.port})
        link = web_settings.links(secret).table(user, table_id, time.time())
        print(link, flush=True)
        if sys.stdout.isatty() and (os.environ.get("DISPLAY") or sys.platform in ("darwin", "win32")):
            with contextlib.suppress(webbrowser.Error):
                webbrowser.open(link)
        await _until_signal()
    finally:
        await deadlines.stop()
        if running is not None:
            await running.stop()
        await app.close()
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot web``."""
    parser.add_argument("--link", metavar="TABLE", default=None, help="print a signed link to TABLE and exit")
    parser.add_argument("--user", default=None, help="with --link: the user key it is for (tg:123, dc:456)")
    parser.add_argument("--name", default="", help="with --link: the name shown")
    parser.add_argument("--lang", default=None, help="with --link or --replay: the page's language")
    parser.add_argument(
        "--replay", metavar="TABLE", default=None, help="print a link to replay TABLE's kept match and exit"
    )


def run(
    args: argparse.Namespace,
    settings: Settings,
    web_settings: WebSettings,
    telegram_token: str | None,
    access: WebAccess | None = None,
) -> int:
    """Entry point of ``musbot web`` (``access``: how the chats lead to the web table, see
    :func:`serve_alone`)."""
    if args.replay is not None:
        if web_settings.secret is None:
            print(NO_SECRET, file=sys.stderr)
            return 2
        # Whoever it is given to sees what the match's history shows: the link names no one in particular.
        viewer = UserRef(args.user or "console", "", normalize_language(args.lang) if args.lang else None)
        secret = web_settings.secret.get_secret_value().encode()
        print(web_settings.links(secret).replay(viewer, args.replay, time.time()))
        return 0
    if args.link is not None:
        if web_settings.secret is None:
            print(NO_SECRET, file=sys.stderr)
            return 2
        if not args.user:
            print("musbot web --link: --user is required", file=sys.stderr)
            return 2
        lang = normalize_language(args.lang) if args.lang else None
        user = UserRef(args.user, args.name or args.user, lang)
        secret = web_settings.secret.get_secret_value().encode()
        print(web_settings.links(secret).table(user, args.link, time.time()))
        return 0
    try:
        return asyncio.run(serve_alone(settings, web_settings, telegram_token, access))
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def run_play(args: argparse.Namespace, settings: Settings, web_settings: WebSettings) -> int:
    """Entry point of ``musbot play --web``."""
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    args.lang = normalize_language(args.lang)
    try:
        return asyncio.run(play_web(args, settings, web_settings))
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
