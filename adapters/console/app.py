"""A Mus table in the terminal, on the same service, store and views as the chat platforms.

``musbot play``: you (seat 0) and a machine partner against two machines, in a private "chat". The group
table and your private hand are printed as text; every button becomes a numbered choice. Machines act
without a pause here (the table lists what they said). ``musbot play --auto --seed S`` plays a whole
machine-only match and prints a summary.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import itertools
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from bot.bootstrap import App, build_app
from bot.flow import FlowSettings
from bot.i18n import LANGUAGES, normalize_language
from bot.model import ChatRef, TableStatus, UserRef
from bot.settings import Settings
from bot.views import Button, Outcome, OutMessage

_RULE = "─" * 60


class ConsoleTable:
    """Prints views and turns buttons into numbered choices."""

    def __init__(
        self, app: App, user: UserRef, out: TextIO = sys.stdout, pause: Callable[[], None] | None = None
    ):
        """Play as ``user``; ``pause`` waits after a showdown (Enter), or nothing when not interactive."""
        self.app = app
        self.user = user
        self.out = out
        self.pause = pause
        self.latest: dict[str, OutMessage] = {}

    def show(self, outcome: Outcome) -> None:
        """Print an outcome's answer and messages; remember the latest table and hand for the menu."""
        if outcome.answer:
            print(f"» {outcome.answer}", file=self.out)
        for message in outcome.messages:
            if message.user is not None and message.user != self.user.key:
                continue
            key = "hand" if message.private else message.slot
            if message.slot == "showdown":
                print(f"\n{_RULE}\n{message.text}\n{_RULE}", file=self.out)
                if self.pause is not None:
                    self.pause()
                continue
            self.latest[key] = message
        self.draw()

    def choices(self) -> list[Button]:
        """Every button on screen, table first, then the private hand."""
        buttons: list[Button] = []
        for key in ("lobby", "table", "hand"):
            message = self.latest.get(key)
            if message is not None:
                buttons.extend(b for row in message.buttons for b in row)
        return buttons

    def draw(self) -> None:
        """Print the table, the private hand and the numbered choices."""
        for key in ("table", "hand"):
            message = self.latest.get(key)
            if message is not None:
                print(f"\n{message.text}", file=self.out)
        for i, button in enumerate(self.choices(), 1):
            print(f"  [{i}] {button.label}", file=self.out)

    async def press(self, index: int) -> None:
        """Press the ``index``-th choice (1-based)."""
        buttons = self.choices()
        if not 1 <= index <= len(buttons):
            print("» ?", file=self.out)
            return
        self.show(await self.app.service.press(self.user, buttons[index - 1].token))


def _wait_enter() -> None:
    with contextlib.suppress(EOFError):
        input("(Enter) ")


def _flow_for_terminal() -> FlowSettings:
    # Machines act at once (their words are listed on the table); a person never times out here.
    return FlowSettings(turn_timeout=7 * 86400, machine_delay=0, next_hand_delay=0, lobby_timeout=7 * 86400)


def _seeded(seed: int | None) -> tuple[Callable[[], random.Random], Callable[[], str]]:
    if seed is None:
        from bot.service import secure_rng, secure_table_id

        return secure_rng, secure_table_id
    counter = itertools.count()
    master = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return (lambda: random.Random(seed * 1_000_003 + next(counter))), (
        lambda: "".join(master.choice(alphabet) for _ in range(8))
    )


async def play(args: argparse.Namespace, settings: Settings) -> int:
    """The interactive table."""
    rng_factory, id_factory = _seeded(args.seed)
    app = await build_app(settings, flow=_flow_for_terminal(), rng_factory=rng_factory, id_factory=id_factory)
    name = args.name or getpass.getuser().capitalize() or "Tú"
    user = UserRef("console:you", name, args.lang)
    # One terminal chat: an unfinished game is resumed the next time (it lives in the store, not here).
    chat = ChatRef("console:local", private=True, title="Terminal")
    table = ConsoleTable(app, user, pause=lambda: _wait_enter())
    try:
        await app.service.set_language(chat, user, args.lang)
        if args.senas or args.target != 40 or args.single:
            outcome = await _custom_solo(app, chat, user, args)
        else:
            outcome = await app.service.new_table(chat, user)
        table.show(outcome)
        while True:
            for fired in await app.service.fire_due():
                table.show(fired)
            await app.service.drain_results()
            state = await app.service.load_table(outcome.table or "") if outcome.table else None
            if state is not None and state.status in (TableStatus.FINISHED, TableStatus.CANCELLED):
                print("\nFin. ¡Agur!", file=table.out)
                return 0
            try:
                line = input("\n> ").strip().lower()
            except EOFError:
                return 0
            if line in ("q", "quit", "exit"):
                return 0
            if line in ("r", "rules"):
                table.show(await app.service.rules(chat, user, full=False))
            elif line.isdigit():
                await table.press(int(line))
            else:
                print("» 1…N = a button · r = rules · q = quit", file=table.out)
    finally:
        await app.close()


async def _custom_solo(app: App, chat: ChatRef, user: UserRef, args: argparse.Namespace) -> Outcome:
    """A solo game with options: a lobby in a 'group' of one, options pressed, then started."""
    group = ChatRef(chat.key, private=False, title=chat.title)
    outcome = await app.service.new_table(group, user)
    lobby = {b.token.rsplit(".", 1)[1]: b.token for m in outcome.messages for row in m.buttons for b in row}
    if args.senas:
        await app.service.press(user, lobby["o_senas"])
    targets = {40: 0, 30: 1, 20: 2}
    for _ in range(targets.get(args.target, 0)):
        await app.service.press(user, lobby["o_target"])
    if args.single:
        await app.service.press(user, lobby["o_mode"])
    return await app.service.press(user, lobby["start"])


async def auto(args: argparse.Namespace, settings: Settings) -> int:
    """A machine-only match through the service; prints every showdown, then a summary."""
    rng_factory, id_factory = _seeded(args.seed if args.seed is not None else 1)
    app = await build_app(settings, flow=_flow_for_terminal(), rng_factory=rng_factory, id_factory=id_factory)
    user = UserRef("console:auto", "auto", args.lang)
    # A chat of its own per run: its leaderboard is this match's.
    chat = ChatRef(f"console:auto-{time.time_ns()}", private=False, title="Auto")
    try:
        outcome = await app.service.new_machine_table(
            chat, user, senas=args.senas, target=args.target, single_game=args.single
        )
        showdowns = [m.text for m in outcome.messages if m.slot == "showdown"]
        if not args.quiet:
            for text in showdowns:
                print(f"{text}\n{_RULE}")
        state = await app.service.load_table(outcome.table or "")
        if state is None or state.match is None:
            print(outcome.answer or "no table", file=sys.stderr)
            return 1
        m = state.match
        print(
            f"seed {args.seed if args.seed is not None else 1} · {len(showdowns)} hands · "
            f"games {m.games_total[0]}–{m.games_total[1]} · vacas {m.vacas[0]}–{m.vacas[1]} · "
            f"winner: team {'AB'[m.winner] if m.winner is not None else '?'} · status {state.status.value}"
        )
        while await app.service.drain_results():  # rate the match's results before showing the board
            pass
        board = await app.service.leaderboard(chat, user)
        for message in board.messages:
            print(message.text)
        return 0
    finally:
        await app.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot play``."""
    parser.add_argument("--auto", action="store_true", help="machines only: play a whole match and summarise")
    parser.add_argument("--seed", type=int, default=None, help="random seed (same seed, same match)")
    parser.add_argument("--senas", action="store_true", help="play with señas")
    parser.add_argument("--target", type=int, default=40, choices=(20, 30, 40), help="stones per game")
    parser.add_argument("--single", action="store_true", help="a single game instead of a full match")
    parser.add_argument("--lang", default="es", choices=LANGUAGES, help="language (default es)")
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--quiet", action="store_true", help="with --auto: only the summary")
    parser.add_argument("--data-dir", type=Path, default=None, help="embedded Redis data directory")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``musbot play``."""
    settings = Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    args.lang = normalize_language(args.lang)
    return asyncio.run(auto(args, settings) if args.auto else play(args, settings))
