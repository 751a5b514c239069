"""The lessons as data: prepared deals, scripted moves and the decisions a learner makes.

``bot/lessons/path.toml`` holds the ten lessons without words (those are in ``bot/i18n/lessons/<lang>.toml``,
:mod:`bot.lessons._texts`). A lesson is one idea; it has one or more deals, each a hand record (the mano, the
four hands, the top of the deck, the scores) and a few steps. A step is scripted moves (machine moves, and
the learner's own where the lesson is not about them), then one decision: an engine word the learner's seat
plays (``envido 2``, ``discard 4o 5c``, ``catch 2``) or the answer to a question about the cards (``seat 1``:
who wins the lance; ``total 31``…). ``tests/unit/test_lessons.py`` replays every path through the engine.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Final

from engine.cards import FULL_DECK, card_names, parse_cards
from engine.record import Entry, HandRecord, parse_record

#: The learner's seat; the partner is seat 2, the rivals seats 1 and 3.
LEARNER: Final = 0
#: The first words of the engine's actions, señas and catches: a choice starting so is played, not answered.
ENGINE_WORDS: Final = frozenset(
    {"mus", "no_mus", "discard", "paso", "envido", "sube", "quiero", "no_quiero", "ordago", "sena", "catch"}
)
#: What a question may ask (the engine computes the answer: :func:`bot.lessons._play.engine_answer`).
ASKS: Final = frozenset(
    {"rey", "as", "total", "pares_kind", "grande", "chica", "pares", "juego", "punto", "winner", "decided"}
    | {"deje", "caught", "paid"}
)
#: What a lesson can teach (its ``teaches``), and the topic of each question and of each move a step asks
#: for: nothing is asked before a lesson taught it.
TOPICS: Final = frozenset(
    {"cards", "points", "mus", "discard", "grande", "paso", "envido", "chica", "mano", "pares", "juego"}
    | {"punto", "quiero", "deje", "ordago", "count", "senas", "catch"}
)
_ASK_TOPICS: Final = {
    "rey": {"cards"},
    "as": {"cards"},
    "total": {"points"},
    "pares_kind": {"pares"},
    "grande": {"grande"},
    "chica": {"chica", "mano"},
    "pares": {"pares"},
    "juego": {"juego"},
    "punto": {"punto"},
    "winner": {"count"},
    "decided": {"count"},
    "paid": {"count"},
    "deje": {"deje"},
    "caught": {"senas", "catch"},
}
_WORD_TOPICS: Final = {
    "mus": {"mus"},
    "no_mus": {"mus"},
    "discard": {"discard"},
    "paso": {"paso"},
    "envido": {"envido"},
    "sube": {"envido"},
    "quiero": {"quiero"},
    "no_quiero": {"quiero"},
    "ordago": {"ordago"},
    "sena": {"senas"},
    "catch": {"catch"},
    "skip": {"catch"},
}
#: What a step's ``expect`` may check after the right choice and its ``then`` moves.
EXPECT_KEYS: Final = frozenset({"phase", "deje", "lance", "team", "ordago_team", "winner"})
_SHOWS: Final = frozenset({"own", "all"})


class LessonDataError(ValueError):
    """The lesson data does not follow its format."""


@dataclass(frozen=True, slots=True)
class Step:
    """Scripted moves, then one decision among ``choices`` (``right`` is the one that moves on)."""

    choices: tuple[str, ...]
    right: str
    moves: tuple[Entry, ...] = ()
    ask: str | None = None
    """What a question asks (``None``: the choices are the learner's moves)."""
    lance: str | None = None
    """The lance a ``deje`` question is about."""
    at: float = 0.0
    """The time of a seña or catch the learner makes (the scripted ones carry theirs)."""
    then: tuple[Entry, ...] = ()
    """Scripted moves after the right choice."""
    expect: Mapping[str, object] = field(default_factory=dict)
    """What the engine must say after ``then`` (checked by the tests)."""

    @property
    def plays(self) -> bool:
        """Whether the choices are moves of the learner's seat (not answers to a question)."""
        return self.ask is None

    @property
    def topics(self) -> frozenset[str]:
        """What the learner must have been taught to decide this step (see :data:`TOPICS`)."""
        if self.ask is not None:
            return frozenset(_ASK_TOPICS[self.ask])
        return frozenset(t for c in self.choices for t in _WORD_TOPICS.get(c.split(" ", 1)[0], ()))


@dataclass(frozen=True, slots=True)
class Deal:
    """A prepared hand and the steps played on it."""

    record: HandRecord
    steps: tuple[Step, ...]
    show: str = "own"
    """``own``: the learner sees their cards; ``all``: every hand is face up (to compare them)."""


@dataclass(frozen=True, slots=True)
class Lesson:
    """One lesson: its number (1…), its key in the texts, its deals."""

    number: int
    key: str
    deals: tuple[Deal, ...]
    teaches: frozenset[str] = frozenset()
    """The topics this lesson teaches (:data:`TOPICS`)."""

    @property
    def steps(self) -> tuple[tuple[Deal, Step], ...]:
        """Every step in order, with its deal (a learner's progress is an index into these)."""
        return tuple((deal, step) for deal in self.deals for step in deal.steps)


def is_engine_word(choice: str) -> bool:
    """Whether a choice is a move of the learner's seat (``envido 2``) rather than an answer (``seat 1``)."""
    return choice.split(" ", 1)[0] in ENGINE_WORDS


def _entries(raw: object, where: str) -> tuple[Entry, ...]:
    if not isinstance(raw, list):
        raise LessonDataError(f"{where}: a list of [seat, word] entries")
    entries: list[Entry] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) in (2, 3) and isinstance(item[0], int)):
            raise LessonDataError(f"{where}: {item!r} is not [seat, word] or [seat, word, time]")
        if not isinstance(item[1], str) or (len(item) == 3 and not isinstance(item[2], (int, float))):
            raise LessonDataError(f"{where}: {item!r} is not [seat, word] or [seat, word, time]")
        entries.append((item[0], item[1]) if len(item) == 2 else (item[0], item[1], float(item[2])))
    return tuple(entries)


def _step(raw: Mapping[str, Any], where: str) -> Step:
    unknown = set(raw) - {"choices", "right", "moves", "ask", "lance", "at", "then", "expect"}
    if unknown:
        raise LessonDataError(f"{where}: unknown keys {sorted(unknown)}")
    choices = raw.get("choices")
    if not (
        isinstance(choices, list) and 2 <= len(choices) <= 6 and all(isinstance(c, str) for c in choices)
    ):
        raise LessonDataError(f"{where}: 2 to 6 choices")
    if len(set(choices)) != len(choices) or raw.get("right") not in choices:
        raise LessonDataError(f"{where}: distinct choices, and `right` one of them")
    ask = raw.get("ask")
    if ask is not None and ask not in ASKS:
        raise LessonDataError(f"{where}: unknown question {ask!r}")
    if ask in ("deje", "paid") and raw.get("lance") not in ("grande", "chica", "pares", "juego", "punto"):
        raise LessonDataError(f"{where}: a {ask} question names its lance")
    if ask is None and not is_engine_word(raw["right"]):
        raise LessonDataError(f"{where}: a step without a question has a move as its right choice")
    expect = raw.get("expect", {})
    if not isinstance(expect, dict) or set(expect) - EXPECT_KEYS:
        raise LessonDataError(f"{where}: `expect` takes {sorted(EXPECT_KEYS)}")
    return Step(
        choices=tuple(choices),
        right=raw["right"],
        moves=_entries(raw.get("moves", []), f"{where}.moves"),
        ask=ask,
        lance=raw.get("lance"),
        at=float(raw.get("at", 0.0)),
        then=_entries(raw.get("then", []), f"{where}.then"),
        expect=dict(expect),
    )


def _deal(raw: Mapping[str, Any], where: str) -> Deal:
    unknown = set(raw) - {"mano", "hands", "deck", "scores", "target", "senas", "show", "step"}
    if unknown:
        raise LessonDataError(f"{where}: unknown keys {sorted(unknown)}")
    hands = raw.get("hands")
    if not (isinstance(hands, list) and len(hands) == 4):
        raise LessonDataError(f"{where}: four hands")
    try:
        dealt = parse_cards(c for h in hands for c in h)
        top = parse_cards(raw.get("deck", []))
    except (ValueError, TypeError) as exc:
        raise LessonDataError(f"{where}: {exc}") from None
    # The rest of the deck follows the prepared top in deck order: a lesson names only the cards it needs.
    rest = [c for c in FULL_DECK if c not in set(dealt) | set(top)]
    try:
        record = parse_record(
            {
                "mano": raw.get("mano", 0),
                "scores": raw.get("scores", [0, 0]),
                "target": raw.get("target", 40),
                "senas": raw.get("senas", False),
                "hands": {seat: list(hand) for seat, hand in enumerate(hands)},
                "deck": card_names([*top, *rest]),
            }
        )
    except ValueError as exc:
        raise LessonDataError(f"{where}: {exc}") from None
    show = raw.get("show", "own")
    if show not in _SHOWS:
        raise LessonDataError(f"{where}: show is one of {sorted(_SHOWS)}")
    steps = raw.get("step", [])
    if not steps:
        raise LessonDataError(f"{where}: at least one step")
    return Deal(record, tuple(_step(s, f"{where}.step[{i}]") for i, s in enumerate(steps)), show)


def parse_lessons(text: str) -> tuple[Lesson, ...]:
    """The lessons of a path file (TOML; the format is in ``path.toml``'s opening comment)."""
    lessons: list[Lesson] = []
    for number, raw in enumerate(tomllib.loads(text).get("lesson", []), 1):
        key = raw.get("key")
        if not isinstance(key, str) or not key.isidentifier():
            raise LessonDataError(f"lesson {number}: a `key` (a word)")
        deals = raw.get("deal", [])
        if not deals:
            raise LessonDataError(f"lesson {number}: at least one deal")
        teaches = raw.get("teaches", [])
        if not isinstance(teaches, list) or not set(teaches) <= TOPICS:
            raise LessonDataError(f"lesson {key}: `teaches` lists topics among {sorted(TOPICS)}")
        deals_read = tuple(_deal(d, f"{key}.deal[{i}]") for i, d in enumerate(deals))
        lessons.append(Lesson(number, key, deals_read, frozenset(teaches)))
    if len({lesson.key for lesson in lessons}) != len(lessons):
        raise LessonDataError("two lessons share a key")
    return tuple(lessons)


@cache
def lessons() -> tuple[Lesson, ...]:
    """The ten lessons, read once from the package data."""
    text = resources.files("bot.lessons").joinpath("path.toml").read_text(encoding="utf-8")
    return parse_lessons(text)


def lesson(number: int) -> Lesson | None:
    """Lesson ``number`` (from 1), or ``None``."""
    every = lessons()
    return every[number - 1] if 1 <= number <= len(every) else None
