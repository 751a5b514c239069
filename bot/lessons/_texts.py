"""The words of the lessons, one file per language beside the rules texts: ``bot/i18n/lessons/<lang>.toml``.

Each lesson key (``bot/lessons/path.toml``) is a table with the lesson's ``title``, and one sub-table per
step, numbered from 1 across the lesson's deals, with three texts::

    [grande]
    title = "Grande"

    [grande.1]
    say = "In grande the highest cards win (…). Who wins grande?"   # the explanation and the question
    right = "You: rey, rey beats (…)."                              # after the right choice
    wrong = "All have a rey first; compare the second card (…)."    # after a wrong one (then: try again)

The texts are written fresh in each language with the glossary's words (``tests/unit/test_glossary.py``
checks them); ``tests/unit/test_lessons.py`` checks that every language has every lesson and step.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

from bot.i18n.languages import normalize_language

#: The texts of a step.
STEP_FIELDS: Final = ("say", "right", "wrong")


@dataclass(frozen=True, slots=True)
class StepText:
    """What a step says: the explanation and question, the answer to a right choice, to a wrong one."""

    say: str
    right: str
    wrong: str


@dataclass(frozen=True, slots=True)
class LessonText:
    """A lesson's title and its steps' texts, in one language."""

    title: str
    steps: tuple[StepText, ...]


def parse_texts(text: str) -> dict[str, LessonText]:
    """Read a language's lesson texts (TOML, see the module docstring); ``ValueError`` when malformed."""
    texts: dict[str, LessonText] = {}
    for key, table in tomllib.loads(text).items():
        if not isinstance(table, dict) or not isinstance(table.get("title"), str):
            raise ValueError(f"lesson {key!r}: a table with a `title`")
        numbers = sorted(int(k) for k in table if k != "title" and k.isdigit())
        if numbers != list(range(1, len(numbers) + 1)) or len(numbers) != len(table) - 1:
            raise ValueError(f"lesson {key!r}: steps numbered 1, 2, 3… and nothing else")
        steps = []
        for n in numbers:
            step = table[str(n)]
            if not isinstance(step, dict) or sorted(step) != sorted(STEP_FIELDS):
                raise ValueError(f"lesson {key!r} step {n}: exactly {', '.join(STEP_FIELDS)}")
            if not all(isinstance(step[f], str) and step[f].strip() for f in STEP_FIELDS):
                raise ValueError(f"lesson {key!r} step {n}: texts, not empty")
            steps.append(StepText(*(step[f].strip() for f in STEP_FIELDS)))
        texts[key] = LessonText(table["title"].strip(), tuple(steps))
    return texts


@cache
def _texts(lang: str) -> dict[str, LessonText]:
    path = resources.files("bot.i18n").joinpath("lessons", f"{lang}.toml")
    return parse_texts(path.read_text(encoding="utf-8"))


def lesson_texts(lang: str) -> dict[str, LessonText]:
    """Every lesson's texts in ``lang`` (any client code; unsupported → Spanish), by lesson key."""
    return _texts(normalize_language(lang))


def lesson_text(lang: str, key: str) -> LessonText:
    """One lesson's texts in ``lang``."""
    return lesson_texts(lang)[key]
