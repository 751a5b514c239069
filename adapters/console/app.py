"""A Mus table in the terminal, on the same service, store and views as the chat platforms.

``musbot play``: you (seat 0) and a machine partner against two machines, in a private "chat". It opens the
solo lobby (the options and ▶ Start, numbered like every button), or resumes the game saved in the data
directory; ``--senas``/``--target``/``--single``/``--level`` choose the options and start at once, and
``--new`` cancels a saved game first. The group table and your private hand are printed as text; every
button becomes a numbered choice. Machines act without a pause here (the table lists what they said).
``musbot play --auto --seed S`` plays a whole machine-only match and prints a summary.

One terminal per data directory drives the table (:mod:`adapters.console.lock`); one Ctrl-C leaves, and the
game stays saved for the next ``musbot play``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import getpass
import itertools
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TextIO

from adapters.console.lines import LineSource, StdinLines
from adapters.console.lock import TableBusy, TableLock
from bot.bootstrap import App, build_app
from bot.flow import FlowSettings
from bot.i18n import LANGUAGES, normalize_language, translator
from bot.i18n.catalog import Translator
from bot.i18n.markers import N_
from bot.labels import LEVELS, TARGET_CHOICES
from bot.model import ChatRef, TableOptions, TableStatus, UserRef
from bot.settings import Settings
from bot.tokens import PickCard, TokenError, parse_token
from bot.views import Button, Outcome, OutMessage
from engine.cards import Card, card_name

_RULE = "─" * 60

# What the command line accepts; the lobby's buttons stay the authority (the options are reached by pressing
# them, so a value the lobby does not offer leaves the lobby on screen instead of starting).
TARGETS = TARGET_CHOICES

#: Exit status after a Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130

HELP = N_(
    "1…N = press a button · 1 3 4 = several buttons in turn · d 1 3 = discard those cards · "
    "Enter = the table again · r = rules · r full = all the rules · q = quit"
)
SAVED = N_("Your game is saved in {where}: `musbot play` resumes it, `musbot play --new` starts afresh.")
SAVED_IN_REDIS = N_("the Redis server of REDIS_URL")
RESUMING = N_("A game is saved here: resuming it (`musbot play --new` starts afresh).")
RESUMING_NOT_OPTIONS = N_("A game is saved; resuming it — use --new to start afresh with these options.")
BUSY = N_(
    "Another terminal is already playing with the data directory {path}. "
    "Go on there, or use another --data-dir."
)
THE_END = N_("The end. Agur!")

# The private hand is always printed here, so "My cards" would only repeat it.
_HIDDEN_CODES = frozenset({"cards"})
# Messages that stand on the screen and are redrawn; every other slot (rules, notices…) is printed once.
_STANDING_SLOTS = ("lobby", "table", "hand")
_NUMBERS_RE = re.compile(r"[0-9]+(?:[\s,]+[0-9]+)*")  # ASCII digits only: int() would take "²"… or not
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


def plain(message: OutMessage) -> str:
    """A message's text for a terminal: light Markdown markers stripped (``**bold**`` → ``bold``)."""
    return _BOLD_RE.sub(r"\1", message.text) if message.markdown else message.text


def numbers(text: str) -> list[int] | None:
    """``"1 3 4"`` or ``"1,3,4"`` → ``[1, 3, 4]``; ``None`` unless the text is only ASCII numbers."""
    text = text.strip()
    if not _NUMBERS_RE.fullmatch(text):
        return None
    return [int(n) for n in re.split(r"[\s,]+", text)]


def code_of(button: Button) -> str | None:
    """The action code of a button's token (``None`` if it is not a token)."""
    try:
        return parse_token(button.token).code
    except TokenError:
        return None


def card_of(button: Button) -> Card | None:
    """The card a discard-pick button toggles (``None`` for any other button)."""
    try:
        command = parse_token(button.token).command
    except TokenError:
        return None
    return command.card if isinstance(command, PickCard) else None


class ConsoleTable:
    """Prints views and turns buttons into numbered choices."""

    def __init__(
        self,
        app: App,
        user: UserRef,
        out: TextIO = sys.stdout,
        lines: LineSource | None = None,
        *,
        pause: bool = False,
    ):
        """Play as ``user``; with ``pause``, wait for Enter (read from ``lines``) after each showdown."""
        self.app = app
        self.user = user
        self.out = out
        self.lines = lines
        self.pause = pause
        self.latest: dict[str, OutMessage] = {}

    def say(self, text: str) -> None:
        """Print a short line for the player."""
        print(f"» {text}", file=self.out)

    async def show(self, outcome: Outcome, *, draw: bool = True) -> None:
        """Print an outcome's answer and one-off messages; remember the standing ones; redraw if ``draw``."""
        if outcome.answer:
            self.say(outcome.answer)
        for message in outcome.messages:
            if message.user is not None and message.user != self.user.key:
                continue
            if message.slot == "showdown":
                print(f"\n{_RULE}\n{plain(message)}\n{_RULE}", file=self.out)
                if self.pause and self.lines is not None:
                    self.lines.drop_typed_ahead()
                    await self.lines.readline("(Enter) ")
            elif message.slot in _STANDING_SLOTS:
                self.latest[message.slot] = message
            else:  # rules (also the full rules, sent privately), notices, leaderboards
                print(f"\n{plain(message)}", file=self.out)
        if draw:
            self.draw()

    def choices(self) -> list[Button]:
        """Every button on screen, lobby and table first, then the private hand ("My cards" left out)."""
        buttons: list[Button] = []
        for key in _STANDING_SLOTS:
            message = self.latest.get(key)
            if message is not None:
                buttons.extend(b for row in message.buttons for b in row if code_of(b) not in _HIDDEN_CODES)
        return buttons

    def button(self, code: str) -> Button | None:
        """The button on screen with this action code, if any."""
        return next((b for b in self.choices() if code_of(b) == code), None)

    def draw(self) -> None:
        """Print the open lobby or the table, the private hand and the numbered choices."""
        lobby = self.latest.get("lobby")
        if lobby is not None and lobby.buttons:  # a closed lobby ("the game has started") says nothing new
            print(f"\n{plain(lobby)}", file=self.out)
        for key in ("table", "hand"):
            message = self.latest.get(key)
            if message is not None:
                print(f"\n{plain(message)}", file=self.out)
        for i, button in enumerate(self.choices(), 1):
            print(f"  [{i}] {button.label}", file=self.out)

    async def press(self, *indexes: int) -> None:
        """Press the choices numbered ``indexes`` (1-based), in turn, as they were on screen.

        The tokens are read before the first press: the numbers mean what the player saw, even if a press
        redraws the buttons. A refused press stops the rest.
        """
        buttons = self.choices()
        if not indexes or not all(1 <= i <= len(buttons) for i in indexes):
            self.say("?")
            return
        tokens = [buttons[i - 1].token for i in indexes]
        for n, token in enumerate(tokens, 1):
            outcome = await self.app.service.press(self.user, token)
            last = n == len(tokens) or not outcome.ok
            await self.show(outcome, draw=last)
            if last:
                return

    async def discard(self, *indexes: int) -> None:
        """Discard exactly the cards whose buttons are numbered ``indexes``, and confirm, in one go."""
        buttons = self.choices()
        if not indexes or not all(1 <= i <= len(buttons) for i in indexes):
            self.say("?")
            return
        chosen = [buttons[i - 1] for i in indexes]
        if not all(_is_card(b) for b in chosen):
            self.say("?")  # not card buttons: nothing to discard there
            return
        wanted = {b.token for b in chosen}
        picked = await self._picked([b for b in buttons if _is_card(b)])
        # Card buttons toggle: press only those whose card is not yet as wanted (one may be picked already).
        for b in buttons:
            if _is_card(b) and (b.token in wanted) != (b.token in picked):
                outcome = await self.app.service.press(self.user, b.token)
                await self.show(outcome, draw=False)
                if not outcome.ok:
                    self.draw()
                    return
        confirm = self.button("discard")
        if confirm is None:
            self.draw()
            return
        await self.show(await self.app.service.press(self.user, confirm.token))

    async def _picked(self, cards: list[Button]) -> set[str]:
        """The tokens of those card buttons whose card is picked for the discard now (the stored table)."""
        hand = self.latest.get("hand")
        state = await self.app.service.load_table(hand.table) if hand is not None else None
        seat = None if state is None else state.seat_of(self.user.key)
        if state is None or seat is None:
            return set()
        names = set(state.seats[seat].discard_pick)
        picked: set[str] = set()
        for b in cards:
            card = card_of(b)
            if card is not None and card_name(card) in names:
                picked.add(b.token)
        return picked


def _is_card(button: Button) -> bool:
    """Whether a button picks a card for the discard (its code names the card)."""
    return card_of(button) is not None


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


def saved_line(t: Translator, settings: Settings) -> str:
    """Where the game is saved and how to resume it or start afresh."""
    where = t.gettext(SAVED_IN_REDIS) if settings.redis_url else str(settings.data_dir.absolute())
    return t.format(SAVED, where=where)


def options_given(args: argparse.Namespace) -> bool:
    """Whether the command line chose any game option (then the lobby is filled in and started)."""
    return bool(args.senas or args.single or args.target is not None or args.level is not None)


def wanted_options(args: argparse.Namespace) -> list[tuple[str, Callable[[TableOptions], object], object]]:
    """Each lobby option button's code, how to read the option, and the value the command line asks for.

    An option not on the command line takes its default (señas off, to 40, a full match, normal machines).
    """
    return [
        ("o_senas", lambda o: o.senas, bool(args.senas)),
        ("o_target", lambda o: o.target, args.target if args.target is not None else 40),
        ("o_mode", lambda o: o.mode, "game" if args.single else "match"),
        ("o_level", lambda o: o.difficulty, args.level or "normal"),
    ]


async def play(
    args: argparse.Namespace,
    settings: Settings,
    *,
    lines: LineSource | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """The interactive table: the solo lobby or the saved game, then one line per move."""
    t = translator(args.lang)
    rng_factory, id_factory = _seeded(args.seed)
    source = lines if lines is not None else StdinLines(out=out)
    app = await build_app(settings, flow=_flow_for_terminal(), rng_factory=rng_factory, id_factory=id_factory)
    name = args.name or getpass.getuser().capitalize() or "Tú"
    user = UserRef("console:you", name, args.lang)
    # One terminal chat: an unfinished game is resumed the next time (it lives in the store, not here).
    chat = ChatRef("console:local", private=True, title="Terminal")
    table = ConsoleTable(app, user, out=out, lines=source, pause=True)
    interrupted = _CtrlC()
    try:
        await app.service.set_language(chat, user, args.lang)
        table_id = await _open(table, chat, args, t)
        while True:
            if interrupted.is_set():
                # The Ctrl-C's cancellation can be lost in a wait that completed at the same moment
                # (asyncio on Python 3.11): the flag makes one Ctrl-C always enough.
                raise KeyboardInterrupt
            for fired in await app.service.fire_due():
                await table.show(fired)
            await app.service.drain_results()
            state = await app.service.load_table(table_id) if table_id else None
            if state is not None and state.status in (TableStatus.FINISHED, TableStatus.CANCELLED):
                print(f"\n{t.gettext(THE_END)}", file=out)
                return 0
            source.drop_typed_ahead()  # keys pressed while the machines played must not pick a button
            line = await source.readline("\n> ")
            if line is None or line.strip().lower() in ("q", "quit", "exit"):
                print(f"\n{saved_line(t, settings)}", file=out)
                return 0
            await _command(table, chat, line.strip().lower(), t)
    finally:
        interrupted.restore()
        await app.close()


class _CtrlC:
    """Whether Ctrl-C was pressed since this was made; asyncio's own handling is kept as it was."""

    def __init__(self) -> None:
        self._seen = False
        self._previous = signal.getsignal(signal.SIGINT)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self._seen = True
        if callable(self._previous):
            self._previous(signum, frame)  # asyncio cancels the main task (or, a second time, interrupts)

    def is_set(self) -> bool:
        """Whether Ctrl-C was pressed."""
        return self._seen

    def restore(self) -> None:
        """Put the previous handler back."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._previous)


async def _command(table: ConsoleTable, chat: ChatRef, line: str, t: Translator) -> None:
    """One line typed at the prompt (anything but quitting)."""
    words = line.split()
    if not words:
        table.draw()
    elif words[0] in ("r", "rules") and len(words) <= 2 and words[1:] in ([], ["full"]):
        outcome = await table.app.service.rules(chat, table.user, full=words[1:] == ["full"])
        await table.show(outcome, draw=False)  # the rules stay in view; Enter brings the table back
    elif words[0] == "d" and (picked := numbers(line[1:])) is not None:
        await table.discard(*picked)
    elif (pressed := numbers(line)) is not None:
        await table.press(*pressed)
    else:
        table.say(t.gettext(HELP))


async def _open(table: ConsoleTable, chat: ChatRef, args: argparse.Namespace, t: Translator) -> str | None:
    """Resume the saved table, or open the solo lobby; with options on the command line, set them and start.

    Returns the table id.
    """
    service, user = table.app.service, table.user
    if args.new:
        await service.cancel(chat, user)  # nothing saved: a refusal nobody needs to read
    outcome = await service.new_table(chat, user)
    table_id = outcome.table
    state = await service.load_table(table_id) if table_id else None
    if state is None:  # the store failed: show why
        await table.show(outcome)
        return table_id
    if not outcome.ok and state.status is TableStatus.PLAYING:
        await table.show(dataclasses.replace(outcome, answer=None))
        table.say(t.gettext(RESUMING_NOT_OPTIONS if options_given(args) else RESUMING))
        return table_id
    # A lobby, new or saved.
    await table.show(dataclasses.replace(outcome, answer=None), draw=not options_given(args))
    if options_given(args):
        started = await _start_with_options(table, state.id, args)
        if started is not None:
            await table.show(started)
        else:
            table.draw()  # something refused: the lobby is on screen, to choose by hand
    return table_id


async def _start_with_options(table: ConsoleTable, table_id: str, args: argparse.Namespace) -> Outcome | None:
    """Press the lobby's option buttons until the options are the command line's, then ▶ Start."""
    service, user = table.app.service, table.user
    presses_left = len(TARGETS) + len(LEVELS) + 2  # enough to cycle through every option once
    for code, read, value in wanted_options(args):
        while True:
            state = await service.load_table(table_id)
            if state is None or read(state.options) == value:
                break
            button = table.button(code)
            if button is None or presses_left == 0:
                return None
            presses_left -= 1
            outcome = await service.press(user, button.token)
            await table.show(outcome, draw=False)
            if not outcome.ok:
                return None
    start = table.button("start")
    return None if start is None else await service.press(user, start.token)


async def auto(args: argparse.Namespace, settings: Settings) -> int:
    """A machine-only match through the service; prints every showdown, then a summary."""
    rng_factory, id_factory = _seeded(args.seed if args.seed is not None else 1)
    app = await build_app(settings, flow=_flow_for_terminal(), rng_factory=rng_factory, id_factory=id_factory)
    user = UserRef("console:auto", "auto", args.lang)
    # A chat of its own per run, so that a run never meets another run's table.
    chat = ChatRef(f"console:auto-{time.time_ns()}", private=False, title="Auto")
    try:
        outcome = await app.service.new_machine_table(
            chat,
            user,
            senas=args.senas,
            target=args.target if args.target is not None else 40,
            single_game=args.single,
            difficulty=args.level or "normal",
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
        # (No leaderboard: machine seats are rated but never listed — machines are not players.)
        return 0
    finally:
        await app.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot play``."""
    parser.add_argument("--auto", action="store_true", help="machines only: play a whole match and summarise")
    parser.add_argument("--seed", type=int, default=None, help="random seed (same seed, same match)")
    parser.add_argument("--new", action="store_true", help="cancel the saved game and open a new one")
    parser.add_argument("--senas", action="store_true", help="play with señas (and start at once)")
    parser.add_argument(
        "--target", type=int, default=None, choices=TARGETS, help="stones per game (default 40)"
    )
    parser.add_argument("--single", action="store_true", help="a single game instead of a full match")
    parser.add_argument("--level", default=None, choices=LEVELS, help="the machines' level (default normal)")
    parser.add_argument("--lang", default="es", choices=LANGUAGES, help="language (default es)")
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--quiet", action="store_true", help="with --auto: only the summary")
    parser.add_argument("--data-dir", type=Path, default=None, help="where the game is saved (DATA_DIR)")


def run(
    args: argparse.Namespace,
    settings: Settings | None = None,
    *,
    lines: LineSource | None = None,
    out: TextIO | None = None,
) -> int:
    """Entry point of ``musbot play``: 0 when done, 1 if another terminal plays here, 130 after a Ctrl-C."""
    settings = settings or Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    args.lang = normalize_language(args.lang)
    out = out or sys.stdout
    t = translator(args.lang)
    if args.auto:
        try:
            return asyncio.run(auto(args, settings))
        except KeyboardInterrupt:
            return INTERRUPTED
    try:
        lock = TableLock(settings.data_dir)
    except TableBusy:
        print(t.format(BUSY, path=str(settings.data_dir.absolute())), file=sys.stderr)
        return 1
    try:
        # asyncio.run turns the first Ctrl-C into a cancellation of play(), which closes the store on its
        # way out, then raises KeyboardInterrupt here.
        return asyncio.run(play(args, settings, lines=lines, out=out))
    except KeyboardInterrupt:
        print(f"\n{saved_line(t, settings)}", file=out)
        return INTERRUPTED
    finally:
        lock.release()
