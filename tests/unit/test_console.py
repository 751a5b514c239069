"""The terminal table (``musbot play``): scripted lines against the real service on an embedded Redis.

Each test that plays runs :func:`adapters.console.app.run` (or :class:`ConsoleTable` on in-memory stores)
with a temporary data directory and a :class:`Script` in place of the keyboard, and reads what was printed.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import os
import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adapters import cli
from adapters.console import app as console
from adapters.console import saves
from adapters.console import table as console_table
from adapters.console.lines import StdinLines
from adapters.console.lock import TableLock
from bot.i18n import translator
from bot.i18n.rules import rules_sections, rules_summary
from bot.kernel import TableState, TableStatus
from bot.kernel._tokens import card_of_pick
from bot.ops import Settings, build_app
from engine.actions import ActionKind
from engine.cards import card_name
from engine.hand_types import Phase
from tests.service_helpers import ANE, BRAIS, CAMILLE, DANI, GROUP, Harness, code_of, users_by_key

INTERRUPT = "<Ctrl-C>"
"""A script line that stands for a Ctrl-C at that prompt."""

EN = translator("en")
HELP = EN.gettext(console.HELP)
PAUSE = EN.gettext(console_table.PAUSE)


class Script:
    """The keyboard: fixed lines first, then ``policy(prompt, screen since the last prompt)``, then EOF."""

    def __init__(
        self,
        out: io.StringIO,
        lines: list[str] | None = None,
        policy: Callable[[str, str], str | None] | None = None,
        limit: int = 400,
    ) -> None:
        self.out = out
        self.lines = list(lines or [])
        self.policy = policy
        self.limit = limit
        self.prompts: list[str] = []
        self.seen = 0
        self.flushes = 0

    async def readline(self, prompt: str) -> str | None:
        self.out.write(prompt)
        screen = self.out.getvalue()[self.seen :]
        self.seen = len(self.out.getvalue())
        self.prompts.append(prompt)
        if len(self.prompts) > self.limit:
            return None
        line = self.lines.pop(0) if self.lines else None
        if line is None and self.policy is not None:
            line = self.policy(prompt, screen)
        if line == INTERRUPT:
            os.kill(os.getpid(), signal.SIGINT)  # what the terminal sends; asyncio cancels the main task
            await asyncio.sleep(10)
            raise AssertionError("the Ctrl-C did not stop the table")
        if line is not None:
            self.out.write(line + "\n")
        return line

    def drop_typed_ahead(self) -> None:
        self.flushes += 1


def play_args(data_dir: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    console.add_arguments(parser)
    return parser.parse_args(["--data-dir", str(data_dir), "--lang", "en", "--name", "Ane", *extra])


def play(
    data_dir: Path, *extra: str, lines: list[str] | None = None, policy: Any = None
) -> tuple[int, str, Script]:
    """Run ``musbot play`` with these arguments and this script; its exit code, output and script."""
    out = io.StringIO()
    script = Script(out, lines, policy)
    code = console.run(play_args(data_dir, *extra), Settings(redis_url=None), lines=script, out=out)
    return code, out.getvalue(), script


def last_choice(screen: str) -> int | None:
    numbers = re.findall(r"^  \[(\d+)\] ", screen, re.MULTILINE)
    return int(numbers[-1]) if numbers else None


def press_last(prompt: str, screen: str) -> str | None:
    """Always the last button: No mus, órdago, the last card then "Discard" — a quick way to a showdown."""
    n = last_choice(screen)
    return "" if n is None else str(n)


def saved_table(data_dir: Path) -> TableState | None:
    """The terminal's table as saved in ``data_dir`` (read after the program ended)."""

    async def load() -> TableState | None:
        app = await build_app(Settings(redis_url=None, data_dir=data_dir))
        try:
            saved = await saves.current(app.service)  # the one `musbot play` resumes
            return None if saved is None else saved.table
        finally:
            await app.close()

    return asyncio.run(load())


@pytest.fixture(autouse=True)
def no_env_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REDIS_URL", "DATA_DIR", "LOG_LEVEL", "TELEGRAM_TOKEN"):
        monkeypatch.delenv(name, raising=False)


# --- 1. options from the command line, the lobby, resuming ----------------------------------------------


def test_options_start_the_game_then_a_saved_game_is_resumed_and_new_starts_afresh(tmp_path: Path) -> None:
    code, out, _ = play(tmp_path, "--senas", "--target", "30", "--single", "--level", "hard", lines=["q"])
    assert code == 0
    assert "The game starts!" in out
    saved = saved_table(tmp_path)
    assert saved is not None and saved.status is TableStatus.PLAYING
    opts = saved.options
    assert (opts.senas, opts.target, opts.mode, opts.difficulty) == (True, 30, "game", "hard")

    # The regression: options again while a game is saved used to crash with KeyError.
    code, out, _ = play(tmp_path, "--senas", "--target", "20", lines=["q"])
    assert code == 0
    assert EN.gettext(console.RESUMING_NOT_OPTIONS) in out and "The game starts!" not in out
    saved = saved_table(tmp_path)
    assert saved is not None and (saved.options.target, saved.options.mode) == (30, "game")  # unchanged

    code, out, _ = play(tmp_path, lines=["q"])
    assert code == 0 and EN.gettext(console.RESUMING) in out

    code, out, _ = play(tmp_path, "--new", "--target", "20", lines=["y", "q"])
    assert code == 0
    assert "Start a new one?" in out and "The game starts!" in out
    assert EN.gettext(console.RESUMING) not in out
    saved = saved_table(tmp_path)
    assert saved is not None
    opts = saved.options
    assert (opts.senas, opts.target, opts.mode, opts.difficulty) == (False, 20, "match", "normal")


def test_without_options_the_lobby_is_numbered_and_its_options_are_pressed(tmp_path: Path) -> None:
    code, out, _ = play(tmp_path, lines=["1", "2 2", "3", "q"])
    assert code == 0
    assert "[1] Señas: off" in out and "▶ Start" in out and "✖ Cancel" in out
    lobby_after = out.rsplit("> ", 1)[0]
    assert "Señas: on" in lobby_after and "To 20" in lobby_after and "Single game" in lobby_after
    assert "The game starts!" not in out  # nothing starts before ▶ Start

    # The lobby is saved: flags fill it in and start it.
    code, out, _ = play(tmp_path, "--target", "30", lines=["q"])
    assert code == 0
    assert "The game starts!" in out
    saved = saved_table(tmp_path)
    assert saved is not None and saved.status is TableStatus.PLAYING
    opts = saved.options
    assert (opts.senas, opts.target, opts.mode) == (False, 30, "match")


def test_cancel_in_the_lobby_ends_the_program(tmp_path: Path) -> None:
    code, out, _ = play(tmp_path, lines=["6"])
    assert code == 0 and "Table cancelled." in out and EN.gettext(console.THE_END) in out


# --- 2. rules --------------------------------------------------------------------------------------------


def test_rules_summary_and_full_rules_are_printed_without_markdown(tmp_path: Path) -> None:
    code, out, _ = play(tmp_path, lines=["r", "rules full", "q"])
    assert code == 0
    summary = rules_summary("en")
    assert summary.replace("**", "").strip().splitlines()[0] in out
    for heading, _body in rules_sections("en"):
        assert heading.replace("**", "") in out
    assert "**" not in out


# --- 3. numbers: ASCII only ------------------------------------------------------------------------------


def test_unicode_digits_and_other_text_get_the_help_line(tmp_path: Path) -> None:
    code, out, _ = play(tmp_path, lines=["²", "١", "1²", "x", "1 x", "q"])
    assert code == 0
    assert out.count(HELP) == 6  # once on the first screen, then once for each line that is not a key
    assert out.count(EN.gettext(console.SUITS)) == 1  # the suits explained once
    assert "Señas: on" not in out  # none of them pressed anything


def test_numbers_parse_ascii_digits_separated_by_spaces_or_commas() -> None:
    assert console.numbers("1 3 4") == [1, 3, 4]
    assert console.numbers(" 1,3, 4 ") == [1, 3, 4]
    assert console.numbers("12") == [12]
    for text in ("", "²", "1²", "١", "1-3", "a"):
        assert console.numbers(text) is None


# --- 4. one Ctrl-C leaves, cleanly ----------------------------------------------------------------------


def test_ctrl_c_at_the_prompt_leaves_at_once_saying_where_the_game_is(tmp_path: Path) -> None:
    code, out, script = play(tmp_path, "--single", lines=[INTERRUPT])
    assert code == console.INTERRUPTED
    assert str(tmp_path.absolute()) in out and "musbot play --new" in out
    # One Ctrl-C was enough: at the first prompt, the player's turn or, if the machines (the partner
    # answering an órdago first) ended the first hand without the player, the pause after its showdown.
    assert len(script.prompts) == 1 and script.prompts[0] in ("\n> ", PAUSE), script.prompts
    code, out, _ = play(tmp_path, lines=["q"])
    assert code == 0 and EN.gettext(console.RESUMING) in out  # the game was saved


def test_ctrl_c_at_the_pause_after_a_showdown(tmp_path: Path) -> None:
    def policy(prompt: str, screen: str) -> str | None:
        return INTERRUPT if prompt == PAUSE else press_last(prompt, screen)

    code, out, script = play(tmp_path, "--single", "--target", "20", policy=policy)
    assert script.prompts[-1] == PAUSE
    assert code == console.INTERRUPTED and "musbot play --new" in out


def test_q_at_the_pause_after_a_showdown_leaves_instead_of_dealing(tmp_path: Path) -> None:
    def policy(prompt: str, screen: str) -> str | None:
        return "q" if prompt == PAUSE else press_last(prompt, screen)

    code, out, script = play(tmp_path, "--target", "40", policy=policy)  # a match: no órdago ends it
    assert code == 0 and script.prompts[-1] == PAUSE  # nothing asked after the q: no next hand
    assert out.rstrip().endswith(console.saved_line(EN, Settings(data_dir=tmp_path)))
    saved = saved_table(tmp_path)
    assert saved is not None and saved.status is TableStatus.PLAYING  # kept for the next musbot play


def test_ctrl_c_while_the_machines_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_build_app = console.build_app

    async def build_app(*args: Any, **kwargs: Any) -> Any:
        app = await real_build_app(*args, **kwargs)
        real_press = app.service.press

        async def press(user: Any, token: object) -> Any:
            if not code_of(str(token)).startswith(("o_", "start")):
                os.kill(os.getpid(), signal.SIGINT)  # lands inside the press, while the machines answer
            return await real_press(user, token)

        app.service.press = press
        return app

    monkeypatch.setattr(console, "build_app", build_app)
    # The first button (mus, paso…): the game cannot end with the press that carries the Ctrl-C (the last
    # button, an órdago, could end a single game at once and leave nothing to resume).
    code, out, _ = play(tmp_path, "--single", policy=lambda prompt, screen: "1")
    assert code == console.INTERRUPTED and "musbot play --new" in out
    monkeypatch.undo()
    code, out, _ = play(tmp_path, lines=["q"])  # the store is intact and the lock was released
    assert code == 0 and EN.gettext(console.RESUMING) in out


# --- 5. keys typed ahead ----------------------------------------------------------------------------------


def test_typed_ahead_input_is_dropped_before_each_prompt(tmp_path: Path) -> None:
    code, _, script = play(tmp_path, "--single", lines=["q"])
    assert code == 0 and script.flushes >= 1


async def test_stdin_lines_drop_what_a_terminal_typed_ahead_and_keep_piped_lines() -> None:
    master, slave = os.openpty()
    try:
        lines = StdinLines(out=io.StringIO(), fd=slave)
        os.write(master, b"9\n")  # typed while the machines played
        await asyncio.sleep(0.05)
        lines.drop_typed_ahead()
        os.write(master, b"1\n")
        assert await asyncio.wait_for(lines.readline("> "), 5) == "1"
    finally:
        os.close(master)
        os.close(slave)
    read, write = os.pipe()
    os.write(write, b"2\n3\n")
    os.close(write)
    piped = StdinLines(out=io.StringIO(), fd=read)
    piped.drop_typed_ahead()  # a script, not a person: nothing is dropped
    assert [await piped.readline(""), await piped.readline(""), await piped.readline("")] == ["2", "3", None]
    os.close(read)


# --- 6. several buttons in one line; discards ---------------------------------------------------------


async def discard_phase(h: Harness) -> str:
    """A four-player table where everyone said mus: the discards."""
    await h.service.set_language(GROUP, ANE, "en")
    players = users_by_key(ANE, BRAIS, CAMILLE, DANI)
    tid = await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3))
    state = await h.load(tid)
    for seat in state.match.hand.speaking_order():
        await h.press(players[state.table.seats[seat].user], h.token(tid, "table", GROUP.key, "mus"))
        state = await h.load(tid)
    assert state.match.hand.phase is Phase.DISCARD
    return tid


def card_buttons(table: console.ConsoleTable) -> dict[int, str]:
    """Choice number → the name of the card that button picks."""
    picks = {i: card_of_pick(code_of(b.token)) for i, b in enumerate(table.choices(), 1)}
    return {i: card_name(card) for i, card in picks.items() if card is not None}


async def test_d_picks_exactly_those_cards_and_confirms_in_one_line() -> None:
    h = Harness()
    tid = await discard_phase(h)
    out = io.StringIO()
    table = console.ConsoleTable(SimpleNamespace(service=h.service), ANE, out=out)  # type: ignore[arg-type]
    table.latest = {"table": h.shown(tid, "table", GROUP.key), "hand": h.shown(tid, "hand", ANE.key)}
    names = card_buttons(table)
    assert sorted(names) == [1, 2, 3, 4]  # the four cards, and nothing else ("My cards" is hidden)
    await table.press(1)  # card 1 picked by hand first: "d 1 3" must not toggle it off
    await console._command(table, GROUP, "d 1 3", EN)
    state = await h.load(tid)
    seat = state.table.seats[0]
    wanted = sorted([names[1], names[3]])
    if seat.discard_ready:  # confirmed, waiting for ANE's turn to discard
        assert sorted(seat.discard_pick) == wanted
    else:  # ANE was first to discard: applied at once
        (record,) = [r for r in state.match.hand.log if r.seat == 0 and r.action.cards]
        assert sorted(card_name(c) for c in record.action.cards) == wanted
    assert "No button has that number" not in out.getvalue() and "d discards cards" not in out.getvalue()


async def test_several_numbers_press_the_buttons_seen_in_turn_and_d_refuses_non_cards() -> None:
    h = Harness()
    tid = await discard_phase(h)
    out = io.StringIO()
    table = console.ConsoleTable(SimpleNamespace(service=h.service), ANE, out=out)  # type: ignore[arg-type]
    table.latest = {"hand": h.shown(tid, "hand", ANE.key)}
    names = card_buttons(table)
    await console._command(table, GROUP, "2,4", EN)
    state = await h.load(tid)
    assert sorted(state.table.seats[0].discard_pick) == sorted([names[2], names[4]])
    assert [b.label.startswith("✓ ") for b in table.choices()[:4]] == [False, True, False, True]
    assert code_of(table.choices()[4].token) == "discard"
    await console._command(table, GROUP, "d 5", EN)  # 5 is the Discard button, not a card
    await console._command(table, GROUP, "1 9", EN)  # 9 is no button: nothing is pressed
    said = out.getvalue()
    assert "» d discards cards: type d and the numbers of card buttons, from 1 to 5." in said
    assert "» No button has that number: type one from 1 to 5 (r = rules, q = quit)." in said
    assert "» ?" not in said
    assert sorted((await h.load(tid)).table.seats[0].discard_pick) == sorted([names[2], names[4]])


async def test_a_typed_amount_bets_it_and_a_wrong_one_says_what_may_be_typed() -> None:
    """``a 7`` bets 7 as the turn's own bet button would (the line mode's "Más…" without 39 buttons)."""
    h = Harness()
    await h.service.set_language(GROUP, ANE, "en")
    players = users_by_key(ANE, BRAIS, CAMILLE, DANI)
    tid = await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3))
    state = await h.load(tid)
    first = state.table.seats[state.match.hand.speaking_order()[0]].user
    await h.press(players[first], h.token(tid, "table", GROUP.key, "nomus"))  # no mus: to GRANDE's bets
    state = await h.load(tid)
    turn = state.match.hand.turn
    assert turn is not None
    user = players[state.table.seats[turn].user]
    other = players[state.table.seats[(turn + 1) % 4].user]
    tables = {}
    for who in (user, other):
        out = io.StringIO()
        tables[who.key] = console.ConsoleTable(SimpleNamespace(service=h.service), who, out=out)  # type: ignore[arg-type]
        tables[who.key].latest = {"table": h.shown(tid, "table", GROUP.key)}
    await console._command(tables[other.key], GROUP, "a 5", EN)  # not their turn
    await console._command(tables[user.key], GROUP, "a 99", EN)  # more than may be bet
    assert len((await h.load(tid)).match.hand.log) == len(state.match.hand.log), "nothing was bet"
    await console._command(tables[user.key], GROUP, "a 7", EN)
    last = (await h.load(tid)).match.hand.log[-1]
    assert (last.seat, last.action.kind, last.action.amount) == (turn, ActionKind.ENVIDO, 7)
    assert "» No bet of an amount to make now." in tables[other.key].out.getvalue()  # type: ignore[attr-defined]
    said = tables[user.key].out.getvalue()  # type: ignore[attr-defined]
    assert "» a and an amount bets it: type a whole number from 2 to " in said


# --- 7. the help line in the table's language -----------------------------------------------------------


def test_the_help_line_is_in_the_tables_language(tmp_path: Path) -> None:
    out = io.StringIO()
    script = Script(out, ["?", "q"])
    args = play_args(tmp_path)
    args.lang = "es"
    assert console.run(args, Settings(), lines=script, out=out) == 0
    assert translator("es").gettext(console.HELP) in out.getvalue()
    assert "Señas: no" in out.getvalue()  # a Spanish table


# --- 8. "My cards" is not offered in the terminal --------------------------------------------------------


def test_my_cards_is_hidden(tmp_path: Path) -> None:
    # Seeded: in some deals the machines end the hand before Ane has a word, and the count comes first.
    code, out, _ = play(tmp_path, "--single", "--seed", "3", lines=["q"])
    assert code == 0 and "Your cards:" in out
    assert "My cards" not in out


# --- 9. quitting says where the game is ---------------------------------------------------------------


@pytest.mark.parametrize("line", ["q", "quit", None])
def test_quit_and_end_of_input_say_where_the_game_is_saved(tmp_path: Path, line: str | None) -> None:
    code, out, _ = play(tmp_path, "--single", lines=[line] if line else [])
    assert code == 0
    assert str(tmp_path.absolute()) in out
    assert "`musbot play`" in out and "`musbot play --new`" in out


# --- 10. one terminal per data directory ---------------------------------------------------------------


def test_a_second_terminal_on_the_same_data_directory_is_turned_away(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    held = TableLock(tmp_path)
    try:
        code, out, script = play(tmp_path, lines=["1", "q"])
        assert code == 1 and script.prompts == [] and out == ""
        assert str(tmp_path.absolute()) in capsys.readouterr().err
    finally:
        held.release()
    code, _, _ = play(tmp_path, lines=["q"])
    assert code == 0


# --- 11. LOG_LEVEL ---------------------------------------------------------------------------------------


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def test_log_level_applies_to_play(
    root_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran: list[argparse.Namespace] = []
    monkeypatch.setattr(console, "run", lambda args, settings: ran.append(args) or 0)
    monkeypatch.setenv("LOG_LEVEL", "DEBUG")
    assert cli.main(["play", "--data-dir", str(tmp_path)]) == 0
    assert ran and root_logger.level == logging.DEBUG
    monkeypatch.delenv("LOG_LEVEL")
    assert cli.main(["play", "--data-dir", str(tmp_path)]) == 0
    assert root_logger.level == logging.WARNING  # unset: the table is not interrupted by INFO lines


def test_log_level_applies_to_run(root_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOG_LEVEL", "debug")
    assert cli.main(["run"]) == 2  # no token: nothing to run, but logging was configured first
    assert root_logger.level == logging.DEBUG
    monkeypatch.setenv("LOG_LEVEL", "chatty")
    assert cli.main(["run"]) == 2
    assert root_logger.level == logging.INFO


# --- --auto still works ----------------------------------------------------------------------------------


def test_auto_plays_a_whole_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = play_args(tmp_path, "--auto", "--seed", "1", "--quiet")
    assert console.run(args, Settings()) == 0
    summary = capsys.readouterr().out
    assert "seed 1" in summary and "the match won by" in summary


def test_chat_commands_are_said_as_the_terminals_own() -> None:
    terms = console_table.terminal_terms
    assert terms("Now play a game: /newgame.") == "Now play a game: `musbot play`."
    assert (
        terms("/learn 1 to /learn 10 opens any lesson.")
        == "`musbot learn 1` to `musbot learn 10` opens any lesson."
    )
    assert terms("Type /history, or /learn.") == "Type `musbot history`, or `musbot learn`."
    assert terms("a/newgame /newgamez https://x/learn") == "a/newgame /newgamez https://x/learn"  # words only
