"""A table's deadline key, made and read in one place: ``{table}|{kind}|{stamp…}`` (:class:`DeadlineKey`).

The key is what the deadline store schedules and what :attr:`~bot.kernel._model.TableState.due_key` keeps; its
stamp names the exact moment the deadline was armed for (a hand, a turn's step, a seña, a pause), so that one
firing after the table moved on is recognised as stale. Code that needs to know what a table waits for asks
for this typed value (:attr:`~bot.kernel._model.TableState.deadline`) instead of splitting the string.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: Between the key's parts (a table id, a kind and a stamp never contain it).
_SEPARATOR = "|"


class DeadlineKind(StrEnum):
    """What a table waits for."""

    LOBBY = "lobby"
    """A lobby nobody started: it closes."""
    DEAL = "deal"
    """A hand was counted: the next one is dealt."""
    MACHINE = "machine"
    """A machine seat's move."""
    TURN = "turn"
    """A person's turn: it runs out, and the machine plays for them."""
    FLASH = "flash"
    """A seña's catch window closes (scheduled beside the table's one pending deadline)."""
    PAUSED = "paused"
    """A paused table, its chat out of reach too long: it is closed."""


@dataclass(frozen=True, slots=True)
class DeadlineKey:
    """One deadline of a table: which table, what for, and the moment it was armed for."""

    table: str
    kind: DeadlineKind
    stamp: tuple[str, ...] = ()
    """The moment, in the kind's terms: ``("0",)`` (lobby), the hand (deal), its turn stamp (machine, turn),
    the hand and the seña's index (flash), the second it was paused (paused)."""

    @property
    def key(self) -> str:
        """The key as stored and scheduled."""
        return _SEPARATOR.join((self.table, self.kind.value, *self.stamp))

    @classmethod
    def parse(cls, key: str) -> DeadlineKey | None:
        """The deadline ``key`` names, or ``None`` if it names none (no table, or a kind this code does not
        know: a newer version's, which this one leaves alone)."""
        table, _, rest = key.partition(_SEPARATOR)
        word, *stamp = rest.split(_SEPARATOR)
        try:
            kind = DeadlineKind(word)
        except ValueError:
            return None
        return cls(table, kind, tuple(stamp)) if table else None
