"""When ``musbot play`` opens the full-screen table, and how: on a terminal, unless ``--plain`` (pipes and
screen readers keep the line mode) or ``--auto``. The table is opened exactly as the line mode opens it
(the saved game resumed, or the lobby, the command line's options pressed), then shown full screen.
"""

from __future__ import annotations

import argparse
import getpass
import io
import sys
from typing import TextIO

from adapters.console import app as console
from adapters.console import saves
from adapters.console.lines import LineSource, StdinLines
from adapters.console.screen.table import DEFAULT_PACE, TableScreen
from adapters.console.table import ConsoleTable
from bot.app import Service
from bot.i18n import DEFAULT_LANGUAGE, Translator, normalize_language, translator
from bot.kernel import UserRef
from bot.ops import Settings, build_app
from bot.table import FlowSettings

#: A week: the terminal's "no deadline" (a person at a terminal never times out, the lobby never expires).
_NO_DEADLINE = 7 * 86400


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot play`` that choose and pace the full screen."""
    parser.add_argument(
        "--plain", action="store_true", help="line mode, for pipes and screen readers (no full screen)"
    )
    parser.add_argument(
        "--pace", type=float, default=DEFAULT_PACE, help="seconds between two moves on the full screen (0.7)"
    )


def wanted(
    args: argparse.Namespace,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> bool:
    """Whether to open the full screen: not ``--plain``, not ``--auto``, and every end a terminal (the keys
    come in on standard input; Textual draws on standard error; standard output says where the game is
    saved, after the screen closes)."""
    if getattr(args, "plain", False) or getattr(args, "auto", False):
        return False
    ends = (stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr)
    return all(end.isatty() for end in ends)


def flow_for_screen() -> FlowSettings:
    """Machines play at once (the screen paces what they said); the next hand waits for the player's key."""
    return FlowSettings(
        turn_timeout=_NO_DEADLINE, machine_delay=0, next_hand_delay=_NO_DEADLINE, lobby_timeout=_NO_DEADLINE
    )


async def play(
    args: argparse.Namespace,
    settings: Settings,
    *,
    lines: LineSource | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Open the table as the line mode does, then play it full screen; say where the game is saved.

    As in the line mode: the saved game resumes in its language unless ``--lang`` says another, a save
    repaired at start-up is told, and ``--new`` with a game under way asks first (on the plain terminal,
    before the full screen opens; ``lines`` answers in tests) and closes the old game only once the new one
    has started (:mod:`adapters.console.saves`).
    """
    rng_factory, id_factory = console._seeded(args.seed)  # the same seeding as the line mode
    app = await build_app(settings, flow=flow_for_screen(), rng_factory=rng_factory, id_factory=id_factory)
    try:
        saved = await saves.current(app.service)
        args.lang = normalize_language(args.lang or (saved.table.lang if saved else DEFAULT_LANGUAGE))
        t = translator(args.lang)
        saves.tell_repair(t, app.server, settings.data_dir, out)
        user = UserRef("console:you", args.name or getpass.getuser().capitalize() or "Tú", args.lang)
        asking = ConsoleTable(app, user, out=out, lines=lines or StdinLines(out=out))  # on the plain terminal
        chat, replacement = await saves.chat_to_open(asking, saved, args.new, t)
        await app.service.set_language(chat, user, args.lang)
        printed = io.StringIO()  # what opening the table says goes to the top of the screen
        table_id = await console._open(ConsoleTable(app, user, out=printed), chat, args, t)
        said = [line.removeprefix("» ") for line in printed.getvalue().splitlines() if line.startswith("» ")]
        if table_id is None:
            print("\n".join(said), file=out)
            return 1
        screen = TableScreen(
            app.service,
            user,
            chat,
            table_id,
            lang=args.lang,
            pace=max(0.0, getattr(args, "pace", DEFAULT_PACE)),
            opening=" ".join(said),
        )
        await screen.run_async()
        print(await _closing_line(app.service, user, table_id, replacement, t, settings), file=out)
        return 0
    finally:
        await app.close()


async def _closing_line(
    service: Service,
    user: UserRef,
    table_id: str,
    replacement: saves.Replacement,
    t: Translator,
    settings: Settings,
) -> str:
    """What the terminal says once the screen closes; the saved game a started new one replaces is closed."""
    state = await service.load_table(table_id)
    replaced = await replacement.settle(service, user, state)
    if replacement.pending:
        return t.gettext(saves.NEW_CANCELLED)
    ended = state is not None and state.finished
    closing = t.gettext(console.THE_END) if ended else console.saved_line(t, settings)
    return f"{t.gettext(saves.REPLACED)}\n{closing}" if replaced else closing
