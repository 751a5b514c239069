"""A table as the bot stores it: lobby, seats, options, the engine's match, turn bookkeeping.

One :class:`TableState` is one versioned JSON value in the store (the version lives in the store, the schema
version inside the value). Nothing about a game lives only in memory: the match is the engine's saved form
(:class:`engine.state.MatchState`), which replays to the exact state.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.kernel._names import clean_name
from engine.state import MatchState

SCHEMA_VERSION = 1
SEATS = 4


class TableStatus(StrEnum):
    """Life of a table."""

    LOBBY = "lobby"
    PLAYING = "playing"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class UserRef:
    """A person as the platform names them: a stable key (``tg:123``), a display name, a client language."""

    key: str
    name: str
    lang: str | None = None

    def __post_init__(self) -> None:
        # Every name entering the core is cleaned here, once (see bot.kernel._names): no bidi tricks, no 🤖.
        object.__setattr__(self, "name", clean_name(self.name))


@dataclass(frozen=True, slots=True)
class ChatRef:
    """A chat: a stable key (``tg:-100123``), whether it is a private chat, and its title for display."""

    key: str
    private: bool = False
    title: str = ""
    community: str | None = None
    """The place whose chats share their preferences (a Discord server for its channels); ``None``: the chat
    alone (a Telegram group)."""
    lang: str | None = None
    """The language the place declares (a Discord server's preferred locale): the chat's language until a
    ``/language`` is chosen."""

    @property
    def prefs_key(self) -> str:
        """Where the chat's preferences (its language) are kept: its community's, else its own."""
        return self.community or self.key


class Seat(BaseModel):
    """One of the four seats."""

    model_config = ConfigDict(extra="forbid")

    user: str | None = None
    """The seated user's key; ``None`` when empty (lobby) or a machine."""
    name: str = ""
    lang: str = "es"
    machine: bool = False
    timeouts: int = 0
    """Timeouts in a row; at 2 the machine keeps the seat until its player acts again."""
    autopilot: bool = False
    discard_pick: list[str] = Field(default_factory=list)
    """Cards (notation) the player has toggled for discarding."""
    discard_ready: bool = False
    """The player confirmed the pick; it is applied when the seat's turn to discard comes."""
    picker: str | None = None
    """The turn stamp for which the player opened the bet-amount picker ("more…"); shown while it holds."""

    @property
    def empty(self) -> bool:
        """Whether nobody (person or machine) sits here."""
        return self.user is None and not self.machine

    @property
    def human(self) -> bool:
        """Whether a person sits here."""
        return self.user is not None


#: The game targets a lobby offers, in the order its button cycles through them.
TARGET_CHOICES = (40, 30, 20)
#: Machine levels a table may choose (engine.ai players of those names), in the order the lobby cycles them.
LEVELS = ("normal", "hard", "easy")


class TableOptions(BaseModel):
    """What the creator may choose in the lobby."""

    model_config = ConfigDict(extra="forbid")

    senas: bool = False
    target: int = 40
    mode: Literal["match", "game"] = "match"
    """A full match (2 vacas of 2 games) or a single game."""
    difficulty: str = "normal"
    """Level of the machine players: easy, normal or hard (engine.ai)."""


class HandPosition(BaseModel):
    """Where the current hand stands in the match, fixed when it is dealt (a won game moves the counters)."""

    model_config = ConfigDict(extra="forbid")

    game: int = 1
    """The game being played within the vaca, from 1."""
    vaca: int = 1
    """The vaca being played, from 1."""
    games: tuple[int, int] = (0, 0)
    """Games each team had won in this vaca when the hand was dealt."""


class TableState(BaseModel):
    """Everything about one table."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    id: str
    chat: str
    chat_title: str = ""
    private: bool = False
    creator: str
    lang: str = "es"
    status: TableStatus = TableStatus.LOBBY
    options: TableOptions = Field(default_factory=TableOptions)
    seats: list[Seat] = Field(default_factory=lambda: [Seat() for _ in range(SEATS)])
    match: MatchState | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    hand_no: int = 0
    """Hands dealt at this table (1 for the first)."""
    due: float | None = None
    """When the pending deadline (turn, machine move, next deal, lobby expiry) fires."""
    due_key: str | None = None
    """The pending deadline's key: ``{table}|{kind}|{stamp}``."""
    position: HandPosition = Field(default_factory=HandPosition)
    """Where the current hand stands in the match."""
    reported_hand: int = 0
    """The last hand whose end was reported (showdown, leaderboard), so it is reported once."""
    since: dict[str, int] = Field(default_factory=dict)
    """For each kept slot where it is shown (:attr:`bot.kernel._views.OutMessage.slot_key`), the version at
    which its current message began: every later view of the slot carries it (``OutMessage.since``)."""

    def seat_of(self, user_key: str) -> int | None:
        """The seat of a user, if seated."""
        for i, seat in enumerate(self.seats):
            if seat.user == user_key:
                return i
        return None

    def humans(self) -> list[str]:
        """Keys of every seated person."""
        return [s.user for s in self.seats if s.user is not None]
