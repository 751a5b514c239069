"""Saved games at the terminal are safe: ``--new`` asks first and keeps the saved game until the new table
starts, the language stays with the game, and the data directory is the user's data folder.

Each test runs :func:`adapters.console.app.run` on a real embedded Redis in a temporary data directory, with
the keyboard scripted (the same :class:`Script` as ``test_console``'s, in short).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
from pathlib import Path

import platformdirs
import pytest

from adapters import cli
from adapters.console import app as console
from adapters.console import saves
from bot.i18n import translator
from bot.kernel import TableState, TableStatus
from bot.ops import OLDER_DATA_DIR, Settings, build_app, default_data_dir

EN = translator("en")
FR = translator("fr")


class Keys:
    """The keyboard: these lines in turn, then the end of input."""

    def __init__(self, out: io.StringIO, lines: list[str]) -> None:
        self.out, self.lines, self.prompts = out, list(lines), []

    async def readline(self, prompt: str) -> str | None:
        self.out.write(prompt)
        self.prompts.append(prompt)
        line = self.lines.pop(0) if self.lines else None
        if line is not None:
            self.out.write(line + "\n")
        return line

    def drop_typed_ahead(self) -> None:
        pass


def play(data_dir: Path, *extra: str, lines: list[str], lang: str | None = "en") -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    console.add_arguments(parser)
    chosen = ["--lang", lang] if lang else []
    args = parser.parse_args(["--data-dir", str(data_dir), "--name", "Ane", *chosen, *extra])
    out = io.StringIO()
    code = console.run(args, Settings(redis_url=None), lines=Keys(out, lines), out=out)
    return code, out.getvalue()


def tables(data_dir: Path) -> list[TableState]:
    """The terminal's open tables, the one ``musbot play`` resumes first."""

    async def load() -> list[TableState]:
        app = await build_app(Settings(redis_url=None, data_dir=data_dir))
        try:
            return [saved.table for saved in await saves.open_tables(app.service)]
        finally:
            await app.close()

    return asyncio.run(load())


@pytest.fixture(autouse=True)
def no_env_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REDIS_URL", "DATA_DIR", "LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def a_game(tmp_path: Path) -> str:
    """A game under way, saved in ``tmp_path``: its table id."""
    code, out = play(tmp_path, "--single", lines=["q"])
    assert code == 0 and "The game starts!" in out
    [saved] = tables(tmp_path)
    assert saved.status is TableStatus.PLAYING
    return saved.id


def test_new_asks_first_and_no_keeps_the_saved_game(tmp_path: Path, a_game: str) -> None:
    code, out = play(tmp_path, "--new", lines=["n", "q"])
    assert code == 0
    assert "Start a new one? The saved game is kept until the new one starts. [y/n]" in out
    assert EN.gettext(saves.KEPT) in out and EN.gettext(console.RESUMING) in out
    assert [t.id for t in tables(tmp_path)] == [a_game]


def test_a_new_table_left_before_it_starts_leaves_the_saved_game(tmp_path: Path, a_game: str) -> None:
    code, out = play(tmp_path, "--new", lines=["y", "q"])  # the new lobby is on screen: quit there
    assert code == 0
    assert "▶ Start" in out and EN.gettext(saves.NEW_CANCELLED) in out
    assert tables(tmp_path)[0].id == a_game  # resumed next time, as it was
    code, out = play(tmp_path, lines=["q"])
    assert code == 0 and EN.gettext(console.RESUMING) in out

    # The new lobby's own ✖ Cancel: the same.
    code, out = play(tmp_path, "--new", lines=["y", "6"])
    assert "✖ Cancel" in out.split("> 6")[0] and EN.gettext(saves.NEW_CANCELLED) in out
    assert [t.id for t in tables(tmp_path)] == [a_game]


def test_the_saved_game_is_closed_only_once_the_new_table_starts(tmp_path: Path, a_game: str) -> None:
    code, out = play(tmp_path, "--new", "--target", "30", lines=["y", "q"])
    assert code == 0 and "The game starts!" in out and EN.gettext(saves.REPLACED) in out
    [new] = tables(tmp_path)
    assert new.id != a_game and new.options.target == 30 and new.status is TableStatus.PLAYING
    # Started by hand from the lobby, too; and a third --new uses the first chat again.
    code, out = play(tmp_path, "--new", lines=["y", "5", "q"])  # [5] ▶ Start
    assert "The game starts!" in out and EN.gettext(saves.REPLACED) in out
    [newer] = tables(tmp_path)
    assert newer.id not in (a_game, new.id) and newer.options.target == 40


def test_the_language_is_kept_with_the_game(tmp_path: Path) -> None:
    code, out = play(tmp_path, "--single", lines=["q"], lang="fr")
    assert code == 0
    code, out = play(tmp_path, lines=["q"], lang=None)  # no --lang: the game's own
    assert FR.gettext(console.RESUMING) in out and EN.gettext(console.RESUMING) not in out
    code, out = play(tmp_path, lines=["q"], lang="en")  # --lang says another: from now on
    assert EN.gettext(console.RESUMING) in out
    assert tables(tmp_path)[0].lang == "en"


def test_the_data_directory_is_the_users_data_folder_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert default_data_dir() == tmp_path / "xdg" / "musbot"
    assert default_data_dir() == platformdirs.user_data_path("musbot", appauthor=False)
    assert Settings(_env_file=None).data_dir == tmp_path / "xdg" / "musbot"  # type: ignore[call-arg]
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "mine"))
    assert Settings(_env_file=None).data_dir == tmp_path / "mine"  # type: ignore[call-arg]


def test_an_older_save_in_dot_data_is_played_and_told_never_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    older = tmp_path / OLDER_DATA_DIR
    code, _ = play(older, "--single", lines=["q"])  # what an older version left in ./data
    assert code == 0 and (older / "appendonly.aof").stat().st_size > 0
    [game] = tables(older)

    seen: list[Path] = []
    monkeypatch.setattr(console, "run", lambda args, settings: seen.append(settings.data_dir) or 0)
    assert cli.main(["play", "--lang", "en"]) == 0
    assert seen == [older.absolute()]  # the default holds nothing: ./data is played
    told = capsys.readouterr().err
    assert f"Your saved games are in {older.absolute()}" in told and str(default_data_dir()) in told

    os.makedirs(default_data_dir())
    (default_data_dir() / "appendonly.aof").write_bytes(b"*1\r\n$4\r\nPING\r\n")  # a save of its own
    assert cli.main(["play", "--lang", "en"]) == 0
    assert seen[-1] == default_data_dir()
    assert f"--data-dir {older.absolute()}` plays them" in capsys.readouterr().err
    assert cli.main(["play", "--lang", "en", "--data-dir", str(tmp_path / "other")]) == 0
    assert capsys.readouterr().err == ""  # a directory chosen: nothing to tell
    assert [t.id for t in tables(older)] == [game.id]


def test_the_auto_summary_speaks_the_language_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    console.add_arguments(parser)
    args = parser.parse_args(["--data-dir", str(tmp_path), "--auto", "--seed", "2", "--single", "--quiet"])
    args.lang = "es"
    assert console.run(args, Settings(redis_url=None)) == 0
    summary = capsys.readouterr().out.strip()
    assert (
        summary.startswith("semilla 2 · ")
        and " manos · juegos " in summary
        and " · gana la partida " in summary
    )
    assert "(`musbot history " in summary and "hands" not in summary and "winner" not in summary


def test_learn_and_history_tell_a_damaged_save_too(
    tmp_path: Path, a_game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from adapters.console import lessons as console_lessons

    aof = tmp_path / "appendonly.aof"
    aof.write_bytes(aof.read_bytes()[:-2])
    parser = argparse.ArgumentParser()
    console_lessons.add_arguments(parser)
    out = io.StringIO()
    args = parser.parse_args(["1", "--data-dir", str(tmp_path), "--lang", "en"])
    assert console_lessons.run(args, Settings(redis_url=None), lines=Keys(out, ["q"]), out=out) == 0
    told = f"⚠ The save in {tmp_path.absolute()} was damaged (it stops in the middle of a write)"
    assert out.getvalue().startswith(told)
    aof.write_bytes(b"garbage")
    assert cli.main(["history", "--data-dir", str(tmp_path), "--lang", "en"]) == 1  # nothing recovered
    assert "was damaged (part of it is unreadable)" in capsys.readouterr().err


def play_full_screen(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, *extra: str, lines: list[str]
) -> tuple[int, str, list[str]]:
    """``musbot play`` as on a terminal (the full screen), its screen closed at once: the exit status, what
    the terminal said around it, and the table the screen showed."""
    from adapters.console.screen import entry
    from adapters.console.screen.table import TableScreen

    shown: list[str] = []

    async def close_at_once(screen: TableScreen) -> None:
        shown.append(screen.table_id)

    monkeypatch.setattr(TableScreen, "run_async", close_at_once)
    parser = argparse.ArgumentParser()
    console.add_arguments(parser)
    entry.add_arguments(parser)
    args = parser.parse_args(["--data-dir", str(data_dir), "--name", "Ane", *extra])
    out = io.StringIO()
    code = console.run(args, Settings(redis_url=None), lines=Keys(out, lines), out=out, table=entry.play)
    return code, out.getvalue(), shown


def test_the_full_screen_asks_before_a_new_game_and_resumes_in_the_saved_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = play(tmp_path, "--single", lines=["q"], lang="fr")
    [saved] = tables(tmp_path)
    code, out, shown = play_full_screen(tmp_path, monkeypatch, "--new", lines=["n"])
    assert code == 0 and shown == [saved.id], "answered no: the saved game is what the screen shows"
    assert FR.gettext(saves.KEPT) in out and [t.id for t in tables(tmp_path)] == [saved.id]
    code, out, shown = play_full_screen(tmp_path, monkeypatch, "--new", lines=["o"])  # French "oui"
    assert shown and shown[0] != saved.id, "the new lobby is on screen"
    assert FR.gettext(saves.NEW_CANCELLED) in out, "left before it started: the saved game stays"
    assert saved.id in [t.id for t in tables(tmp_path)]
