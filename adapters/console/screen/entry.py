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
from adapters.console.lines import LineSource
from adapters.console.screen.table import DEFAULT_PACE, TableScreen
from adapters.console.table import ConsoleTable
from bot.i18n import translator
from bot.kernel import ChatRef, TableStatus, UserRef
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

    (``lines`` is the line mode's keyboard, accepted as :func:`adapters.console.app.run` passes it: the full
    screen reads its own keys.)
    """
    t = translator(args.lang)
    rng_factory, id_factory = console._seeded(args.seed)  # the same seeding as the line mode
    app = await build_app(settings, flow=flow_for_screen(), rng_factory=rng_factory, id_factory=id_factory)
    name = args.name or getpass.getuser().capitalize() or "Tú"
    user = UserRef("console:you", name, args.lang)
    chat = ChatRef("console:local", private=True, title="Terminal")
    printed = io.StringIO()
    try:
        await app.service.set_language(chat, user, args.lang)
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
        status = None if screen.table is None else screen.table.status
        ended = status in (TableStatus.FINISHED, TableStatus.CANCELLED)
        print(t.gettext(console.THE_END) if ended else console.saved_line(t, settings), file=out)
        return 0
    finally:
        await app.close()
