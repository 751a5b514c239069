"""``musbot learn [n]``: the ten lessons at a terminal, on the same service, store and views as the chats.

Each step is printed with its choices numbered; typing a number presses that choice (the same lesson
buttons as on the chat platforms, checked by the core). Progress is kept in the store of the data
directory (the embedded Redis, or ``REDIS_URL``), so the next ``musbot learn`` goes on where this one
stopped; ``musbot learn 5`` opens lesson 5.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from pathlib import Path
from typing import TextIO

from adapters.console.lines import LineSource, StdinLines
from adapters.console.saves import tell_repair
from adapters.console.table import numbers, plain, terminal_terms
from bot.i18n import LANGUAGES, normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import Button, ChatRef, Outcome, UserRef
from bot.ops import Settings, StartupError, build_app, data_dir_problem

HELP = N_("1…N = choose · Enter = the step again · q = quit")
GOODBYE = N_(
    "Your place in the lessons is saved: `musbot learn` goes on from there, `musbot learn 5` opens lesson 5."
)

#: Exit status when the lesson asked for does not exist (as for a bad command line).
NO_LESSON = 2
#: Exit status after a Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130


class LessonScreen:
    """Prints lesson steps and presses their numbered choices for one learner."""

    def __init__(self, out: TextIO) -> None:
        """Print to ``out``."""
        self.out = out
        self.buttons: list[Button] = []
        self.text = ""

    def show(self, outcome: Outcome) -> None:
        """Print an outcome: its answer, then the step (remembered, with its choices)."""
        if outcome.answer:
            print(f"» {terminal_terms(outcome.answer)}", file=self.out)
        for message in outcome.messages:
            self.text = plain(message)
            self.buttons = [b for row in message.buttons for b in row if not b.opens]
            self.draw()

    def draw(self) -> None:
        """Print the step on screen and its numbered choices."""
        print(f"\n{self.text}", file=self.out)
        for i, button in enumerate(self.buttons, 1):
            print(f"  [{i}] {button.label}", file=self.out)


async def learn(
    args: argparse.Namespace, settings: Settings, *, lines: LineSource | None = None, out: TextIO = sys.stdout
) -> int:
    """The lessons at the terminal: the learner's step (or lesson ``args.lesson``), then a line a choice."""
    t = translator(args.lang)
    source = lines if lines is not None else StdinLines(out=out)
    app = await build_app(settings)
    tell_repair(t, app.server, settings.data_dir, out)
    name = args.name or getpass.getuser().capitalize() or "Tú"
    user = UserRef("console:you", name, args.lang)
    chat = ChatRef(user.key, private=True, title="Terminal")
    screen = LessonScreen(out)
    try:
        await app.service.set_language(chat, user, args.lang)  # the lessons follow --lang
        opened = await app.service.lessons.learn(chat, user, args.lesson, hint=False)
        screen.show(opened)
        if not opened.messages:  # no such lesson, or the store failed (said): nothing to choose from
            return NO_LESSON if args.lesson is not None else 1
        print(t.gettext(HELP), file=out)
        while True:
            line = await source.readline("\n> ")
            if line is None or line.strip().lower() in ("q", "quit", "exit"):
                print(f"\n{t.gettext(GOODBYE)}", file=out)
                return 0
            picked = numbers(line)
            if not line.strip():
                screen.draw()
            elif picked is not None and len(picked) == 1 and 1 <= picked[0] <= len(screen.buttons):
                screen.show(await app.service.press(user, screen.buttons[picked[0] - 1].token))
            else:
                print(f"» {t.gettext(HELP)}", file=out)
    finally:
        await app.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot learn``."""
    parser.add_argument("lesson", nargs="?", type=int, default=None, help="open this lesson (1–10)")
    parser.add_argument("--lang", default="es", choices=LANGUAGES, help="language (default es)")
    parser.add_argument("--name", default=None, help="your name")
    parser.add_argument("--data-dir", type=Path, default=None, help="where your progress is saved (DATA_DIR)")


def run(
    args: argparse.Namespace,
    settings: Settings | None = None,
    *,
    lines: LineSource | None = None,
    out: TextIO | None = None,
) -> int:
    """Entry point of ``musbot learn``: 0 when done, 1 if the store cannot start, 2 for a data directory it
    cannot use or a lesson that does not exist, 130 after a Ctrl-C."""
    settings = settings or Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    args.lang = normalize_language(args.lang)
    out = out or sys.stdout
    problem = data_dir_problem(settings.data_dir)
    if problem is not None:
        print(f"{'--data-dir' if args.data_dir is not None else 'DATA_DIR'}: {problem}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(learn(args, settings, lines=lines, out=out))
    except KeyboardInterrupt:
        print(f"\n{translator(args.lang).gettext(GOODBYE)}", file=out)
        return INTERRUPTED
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return 1
