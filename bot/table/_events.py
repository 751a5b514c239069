"""What happened during one command at a table, as its steps record it (:attr:`TableContext.events`).

A step changes the table and records what happened, in order; it draws nothing, keeps nothing in the history
and rates nothing. The unit of work (:mod:`bot.app._unit_of_work`) reads these events after the step and
makes, in one place, the views people see, the answer's alert, the hands kept in the history and the
results rated (:func:`bot.app._drawn.drawn`). Each event holds what that needs and nothing more: most name a
seat or a hand, and a finished hand holds the table and match as they were when it ended (a command may
deal the next hand and play on).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.kernel import TableState
from engine.match import Match
from engine.senas import Sena


@dataclass(frozen=True, slots=True)
class HandDealt:
    """A new hand was dealt: its table and every private hand begin new messages."""

    hand_no: int


@dataclass(frozen=True, slots=True)
class NewCards:
    """The discards were replaced with new cards: every private hand begins a new message (which notifies
    its player, where an edit would not)."""


@dataclass(frozen=True, slots=True)
class HandFinished:
    """A hand ended (recorded once per hand): its last table, its showdown, the hand kept in the history and
    the games, vacas and match it won are made from it.

    ``table`` and ``match`` are copies taken when it ended: the same command may go on to deal the next hand.
    (The copy of the match shares the finished hand itself, which nothing changes any more.)
    """

    table: TableState
    match: Match


@dataclass(frozen=True, slots=True)
class SeatTimedOut:
    """A person's turn ran out and a machine played for them; ``autopilot``: this timeout was one too many,
    and the machine keeps the seat until they play again."""

    seat: int
    autopilot: bool


@dataclass(frozen=True, slots=True)
class LobbyExpired:
    """Nobody started the game in time: the lobby was closed."""


@dataclass(frozen=True, slots=True)
class SenaMade:
    """A seña was made (by a person or a machine): its catch window ends at ``window_ends`` (the table is
    drawn again then, without its ⚡)."""

    seat: int
    hand_no: int
    index: int
    window_ends: float


@dataclass(frozen=True, slots=True)
class SenaCaught:
    """A person pressed ⚡ in time and caught a rival's seña: they alone learn which one it was (machines
    catch at once when the seña is made, and need no answer)."""

    catcher: int
    maker: int
    sena: Sena


@dataclass(frozen=True, slots=True)
class CardsShown:
    """ "My cards": a player's own cards, shown to them alone as an alert (no new private message)."""

    seat: int


@dataclass(frozen=True, slots=True)
class CatchWindowClosed:
    """A seña's catch window ended (its deadline fired): the table is drawn again as it stands, without the
    ⚡ — also when the hand has moved on since (a view that changes nothing costs no call)."""


@dataclass(frozen=True, slots=True)
class TableShown:
    """The table was asked for as it stands (``/newgame`` during a game, a refused press, start-up): drawn
    although nothing changed, as new messages when ``fresh``."""

    fresh: bool


@dataclass(frozen=True, slots=True)
class HandsShown:
    """These seats' private hands were asked for (with the table, or by a deep link: ``fresh``, a new
    message)."""

    seats: tuple[int, ...]
    fresh: bool


@dataclass(frozen=True, slots=True)
class TableResumed:
    """The bot reaches the chat of a paused table again, in time: the table goes on where it was, posted
    afresh, with fresh deadlines."""


@dataclass(frozen=True, slots=True)
class TableAbandoned:
    """A paused table was closed without rating: its chat stayed out of reach too long (``told``: the bot
    reaches the chat again, and says so there)."""

    told: bool


#: Anything a step may record.
Event = (
    HandDealt
    | NewCards
    | HandFinished
    | SeatTimedOut
    | LobbyExpired
    | SenaMade
    | SenaCaught
    | CardsShown
    | CatchWindowClosed
    | TableShown
    | HandsShown
    | TableResumed
    | TableAbandoned
)
