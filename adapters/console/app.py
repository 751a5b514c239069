"""A Mus table in the terminal, on the same service, store and views as the chat platforms.

``musbot play``: you (seat 0) and a machine partner against two machines, in a private "chat". It opens the
solo lobby (the options and ▶ Start, numbered like every button), or resumes the game saved in the data
directory (in the language it was played in, unless ``--lang`` says another); ``--senas``/``--target``/
``--single``/``--level`` choose the options and start at once. ``--new`` asks first when a game is saved, and
keeps it until the new table starts (:mod:`adapters.console.saves`). The group table and your private hand
are printed as text; every button becomes a numbered choice. Machines act without a pause here (the table
lists what they said). ``musbot play --auto --seed S`` plays a whole machine-only match and prints a summary.

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
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from adapters.console import saves
from adapters.console.lines import CtrlC, LineSource, StdinLines
from adapters.console.lock import TableBusy, TableLock
from adapters.console.table import QUIT_WORDS, RULE, ConsoleTable, LeaveTable, numbers
from bot.i18n import DEFAULT_LANGUAGE, LANGUAGES, normalize_language, translator
from bot.i18n.catalog import Translator
from bot.i18n.markers import N_
from bot.kernel import (
    LEVELS,
    TARGET_CHOICES,
    ChatRef,
    Outcome,
    TableOptions,
    TableState,
    TableStatus,
    UserRef,
)
from bot.ops import Settings, StartupError, build_app, data_dir_problem
from bot.screens import team_names
from bot.table import FlowSettings

# What the command line accepts; the lobby's buttons stay the authority (the options are reached by pressing
# them, so a value the lobby does not offer leaves the lobby on screen instead of starting).
TARGETS = TARGET_CHOICES

#: Exit status after a Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130

HELP = N_(
    "1…N = press a button · 1 3 4 = several buttons in turn · d 1 3 = discard those cards · "
    "a 7 = bet 7 · Enter = the table again · r = rules · r full = all the rules · q = quit"
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
SUITS = N_(
    "The suits: 🪙 oros, 🍷 copas, 🗡️ espadas, 🪵 bastos — they never matter in Mus: only the ranks count."
)


def _flow_for_terminal() -> FlowSettings:
    # Machines act at once (their words are listed on the table); a person never times out here.
    return FlowSettings(turn_timeout=7 * 86400, machine_delay=0, next_hand_delay=0, lobby_timeout=7 * 86400)


def _seeded(seed: int | None) -> tuple[Callable[[], random.Random], Callable[[], str]]:
    if seed is None:
        from bot.app import secure_rng, secure_table_id

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
    rng_factory, id_factory = _seeded(args.seed)
    source = lines if lines is not None else StdinLines(out=out)
    app = await build_app(settings, flow=_flow_for_terminal(), rng_factory=rng_factory, id_factory=id_factory)
    interrupted = CtrlC()
    try:
        saved = await saves.current(app.service)
        # The saved game's language unless --lang says another (run() tells the way out in it too).
        args.lang = normalize_language(args.lang or (saved.table.lang if saved else DEFAULT_LANGUAGE))
        t = translator(args.lang)
        saves.tell_repair(t, app.server, settings.data_dir, out)
        name = args.name or getpass.getuser().capitalize() or "Tú"
        user = UserRef("console:you", name, args.lang)
        table = ConsoleTable(app, user, out=out, lines=source, pause=True)
        chat, replacement = await saves.chat_to_open(table, saved, args.new, t)
        await app.service.set_language(chat, user, args.lang)
        try:
            table_id = await _open(table, chat, args, t)
            table.say(t.gettext(HELP))
            table.say(t.gettext(SUITS))
            if await _play_on(table, chat, table_id, replacement, t, interrupted):
                return 0  # the table ended (and said so)
        except LeaveTable:  # q at the pause after a showdown
            left = await app.service.table_of_chat(chat)
            await _settle(table, replacement, left, t)
        left_line = t.gettext(saves.NEW_CANCELLED) if replacement.pending else saved_line(t, settings)
        print(f"\n{left_line}", file=out)
        return 0
    finally:
        interrupted.restore()
        await app.close()


async def _play_on(
    table: ConsoleTable,
    chat: ChatRef,
    table_id: str | None,
    replacement: saves.Replacement,
    t: Translator,
    interrupted: CtrlC,
) -> bool:
    """Read and play lines until the table ends (``True``) or the player leaves (``False``)."""
    app, source, out = table.app, table.lines, table.out
    assert source is not None
    while True:
        if interrupted.is_set():
            # The Ctrl-C's cancellation can be lost in a wait that completed at the same moment
            # (asyncio on Python 3.11): the flag makes one Ctrl-C always enough.
            raise KeyboardInterrupt
        for fired in await app.service.deadlines.fire_due():
            await table.show(fired)
        await app.service.tables.drain_results()
        state = await _settle(table, replacement, table_id, t)
        if state is not None and state.finished:
            print(f"\n{t.gettext(THE_END if not replacement.pending else saves.NEW_CANCELLED)}", file=out)
            return True
        source.drop_typed_ahead()  # keys pressed while the machines played must not pick a button
        line = await source.readline("\n> ")
        if line is None or line.strip().lower() in QUIT_WORDS:
            return False
        await _command(table, chat, line.strip().lower(), t)


async def _settle(
    table: ConsoleTable, replacement: saves.Replacement, table_id: str | None, t: Translator
) -> TableState | None:
    """The table as stored now; the saved game it replaces is closed once it has started (and told)."""
    service = table.app.service
    state = await service.load_table(table_id) if table_id else None
    if await replacement.settle(service, table.user, state):
        table.say(t.gettext(saves.REPLACED))
    return state


async def _command(table: ConsoleTable, chat: ChatRef, line: str, t: Translator) -> None:
    """One line typed at the prompt (anything but quitting)."""
    words = line.split()
    if not words:
        table.draw()
    elif words[0] in ("r", "rules") and len(words) <= 2 and words[1:] in ([], ["full"]):
        outcome = await table.app.service.chats.rules(chat, table.user, full=words[1:] == ["full"])
        await table.show(outcome, draw=False)  # the rules stay in view; Enter brings the table back
    elif words[0] == "d" and (picked := numbers(line[1:])) is not None:
        await table.discard(*picked)
    elif words[0] == "a" and len(words) == 2 and words[1].isascii() and words[1].isdigit():
        await table.bet(int(words[1]))
    elif (pressed := numbers(line)) is not None:
        await table.press(*pressed)
    else:
        table.say(t.gettext(HELP))


async def _open(table: ConsoleTable, chat: ChatRef, args: argparse.Namespace, t: Translator) -> str | None:
    """Resume the saved table, or open the solo lobby; with options on the command line, set them and start.

    Returns the table id.
    """
    service, user = table.app.service, table.user
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
    args.lang = normalize_language(args.lang or DEFAULT_LANGUAGE)
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
                print(f"{text}\n{RULE}")
        state = await app.service.load_table(outcome.table or "")
        if state is None or state.match is None:
            print(outcome.answer or "no table", file=sys.stderr)
            return 1
        m = state.match
        t = translator(args.lang)
        winner = team_names(state, m.winner) if m.winner is not None else "?"
        games, vacas = f"{m.games_total[0]}–{m.games_total[1]}", f"{m.vacas[0]}–{m.vacas[1]}"
        print(
            t.nformat(
                "seed {seed} · {hands} hand · games {games} · vacas {vacas} · the match won by {winner} · "
                "table {table} (`musbot history {table}` tells it again)",
                "seed {seed} · {hands} hands · games {games} · vacas {vacas} · the match won by {winner} · "
                "table {table} (`musbot history {table}` tells it again)",
                len(showdowns),
                seed=args.seed if args.seed is not None else 1,
                hands=len(showdowns),
                games=games,
                vacas=vacas,
                winner=winner,
                table=state.id,
            )
        )
        # (No leaderboard: machine seats are rated but never listed — machines are not players.)
        return 0
    finally:
        await app.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot play``."""
    parser.add_argument("--auto", action="store_true", help="machines only: play a whole match and summarise")
    parser.add_argument("--seed", type=int, default=None, help="random seed (same seed, same match)")
    parser.add_argument(
        "--new",
        action="store_true",
        help="open a new table (asks first; the saved game is kept until it starts)",
    )
    parser.add_argument("--senas", action="store_true", help="play with señas (and start at once)")
    parser.add_argument(
        "--target", type=int, default=None, choices=TARGETS, help="stones per game (default 40)"
    )
    parser.add_argument("--single", action="store_true", help="a single game instead of a full match")
    parser.add_argument("--level", default=None, choices=LEVELS, help="the machines' level (default normal)")
    parser.add_argument(
        "--lang", default=None, choices=LANGUAGES, help="language (default: the saved game's, else es)"
    )
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--quiet", action="store_true", help="with --auto: only the summary")
    parser.add_argument("--data-dir", type=Path, default=None, help="where the game is saved (DATA_DIR)")


def run(
    args: argparse.Namespace,
    settings: Settings | None = None,
    *,
    lines: LineSource | None = None,
    out: TextIO | None = None,
    table: Callable[..., Coroutine[Any, Any, int]] | None = None,
) -> int:
    """Entry point of ``musbot play``: 0 when done, 1 if another terminal plays here or the store cannot
    start (one line on stderr), 2 for a data directory it cannot use, 130 after a Ctrl-C. ``table`` plays
    the table (:func:`play`, the line mode, unless the full screen's is given)."""
    settings = settings or Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    out = out or sys.stdout
    t = translator(args.lang or DEFAULT_LANGUAGE)
    problem = data_dir_problem(settings.data_dir)  # the lock lives there, and the embedded Redis
    if problem is not None:
        print(f"{'--data-dir' if args.data_dir is not None else 'DATA_DIR'}: {problem}", file=sys.stderr)
        return 2
    if args.auto:
        try:
            return asyncio.run(auto(args, settings))
        except KeyboardInterrupt:
            return INTERRUPTED
        except StartupError as exc:
            print(f"musbot: {exc}", file=sys.stderr)
            return 1
    try:
        lock = TableLock(settings.data_dir)
    except TableBusy:
        print(t.format(BUSY, path=str(settings.data_dir.absolute())), file=sys.stderr)
        return 1
    except OSError as exc:
        print(
            f"musbot: cannot use the data directory {settings.data_dir}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 1
    try:
        # asyncio.run turns the first Ctrl-C into a cancellation of play(), which closes the store on its
        # way out, then raises KeyboardInterrupt here.
        return asyncio.run((table or play)(args, settings, lines=lines, out=out))
    except KeyboardInterrupt:
        print(f"\n{saved_line(translator(args.lang or DEFAULT_LANGUAGE), settings)}", file=out)
        return INTERRUPTED
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return 1
    finally:
        lock.release()
