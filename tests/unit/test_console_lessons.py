"""``musbot learn`` at the terminal: lines typed in place of the keyboard, against the real service on an
embedded Redis in a temporary data directory; what was printed is read back.
"""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pytest

from adapters import cli
from adapters.console import lessons as console
from bot.ops import Settings


class Typed:
    """The keyboard: these lines, then the end of input (as a closed terminal gives)."""

    def __init__(self, out: io.StringIO, lines: list[str]) -> None:
        self.out = out
        self.lines = list(lines)
        self.screens: list[str] = []
        self._seen = 0

    async def readline(self, prompt: str) -> str | None:
        self.screens.append(self.out.getvalue()[self._seen :])
        self._seen = len(self.out.getvalue())
        self.out.write(prompt)
        if not self.lines:
            return None
        line = self.lines.pop(0)
        self.out.write(line + "\n")
        return line

    def drop_typed_ahead(self) -> None:
        """Nothing typed ahead in a script."""


def learn(data_dir: Path, *extra: str, lines: list[str]) -> tuple[int, str, Typed]:
    """Run ``musbot learn`` with these arguments and lines; its exit code, output and screens."""
    parser = argparse.ArgumentParser()
    console.add_arguments(parser)
    args = parser.parse_args(["--data-dir", str(data_dir), "--lang", "en", *extra])
    out = io.StringIO()
    typed = Typed(out, lines)
    code = console.run(args, Settings(redis_url=None), lines=typed, out=out)
    return code, out.getvalue(), typed


def choice(screen: str, label: str) -> str:
    """The number printed before a choice's label."""
    found = re.findall(rf"\[(\d+)\] {re.escape(label)}$", screen, re.MULTILINE)
    assert found, (label, screen)
    return found[-1]


def test_a_lesson_at_the_terminal_with_a_wrong_then_a_right_answer(tmp_path: Path) -> None:
    # Lesson 1: which card is a king? "C🪙" is wrong, "3🍷" is right; then which is an ace: "2🪵".
    code, output, typed = learn(tmp_path, "1", lines=["2", "1", "", "hello", "4", "q"])
    assert code == 0
    first, wrong, right, redrawn, helped, second = typed.screens[:6]
    assert first.startswith("\n📘 Lesson 1/10 · The cards and the 8 kings · 1/3") and "[1] 3🍷" in first
    assert "1…N = choose" in first  # how to use the terminal, once
    assert choice(first, "C🪙") == "2"
    assert "❌ Look for the 3" in wrong and "Try again." in wrong and "[4] 2🪵" in wrong
    assert "✅ Yes: the 3 is a king" in right and "1/3" not in right and "2/3" in right
    assert "2/3" in redrawn and "✅" in redrawn  # Enter: the step again
    assert "hello\n» 1…N = choose" in helped
    assert "✅ Right: the 2 is an ace" in second and "3/3" in second
    assert output.rstrip().endswith("`musbot learn 5` opens lesson 5.")


def test_progress_is_kept_in_the_data_directory(tmp_path: Path) -> None:
    learn(tmp_path, "9", lines=["3", "q"])  # lesson 9 step 1: the pares pay "3 stones"
    code, _, typed = learn(tmp_path, lines=["q"])  # no lesson named: where the learner was
    assert code == 0 and typed.screens[0].startswith("\n📘 Lesson 9/10 · The count · 2/5")
    _, _, again = learn(tmp_path, "2", lines=[])
    assert again.screens[0].startswith("\n📘 Lesson 2/10 · Mus and discards · 1/4")


def test_a_whole_lesson_to_its_end_and_the_next(tmp_path: Path) -> None:
    # Lesson 10 (señas): two aces, catch it, Maite's medias win pares; then no next lesson: the end.
    code, output, _ = learn(tmp_path, "10", lines=["1", "1", "2"])
    assert code == 0
    assert "🎓 Lesson 10 done: Señas." in output
    # The last lesson offers a game in the terminal's own terms: the command, not a chat's /newgame.
    assert "You have done all ten lessons. Now play a game: `musbot play`." in output
    assert "You caught 🤖 Maite's seña: medias" in output
    assert "/newgame" not in output and "/learn" not in output


def test_an_unknown_lesson_is_said_so(tmp_path: Path) -> None:
    code, output, typed = learn(tmp_path, "11", lines=["q"])
    assert code == 2 and typed.screens == []  # said, and no prompt left open
    assert output == "» There are ten lessons: `musbot learn 1` to `musbot learn 10`.\n"


def test_musbot_learn_is_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["learn", "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "--lang" in shown and "lesson" in shown
