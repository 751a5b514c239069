"""A table as the bot stores it: lobby, seats, options, the engine's match, turn bookkeeping.

One :class:`TableState` is one versioned JSON value in the store (the version lives in the store, the schema
version inside the value). Nothing about a game lives only in memory: the match is the engine's saved form
(:class:`engine.state.MatchState`), which replays to the exact state.

**Read across one version up and down.** During a rolling upgrade (or after a rollback) workers of two
versions write the same tables, so a table is read tolerantly:

* a field this code does not know (a newer version added it) is **kept** — in the table, a seat, the
  options, the hand position — and written back as it was, so that a newer worker finds its data again
  after an older one played a move (``extra="allow"``; the cost is one dict per model, usually empty). It
  is kept as it was, not updated: a newer version must give every field it adds a default meaning "as
  before", and not rely on it staying in step with the fields an older worker changes. (The engine's match
  is rebuilt from the live match at every change, so a newer engine's unknown match fields are dropped then:
  :class:`~engine.state.MatchState` ignores them.)
* a field this code knows but the stored table lacks (written before it existed) takes its default;
* ``schema_version`` says which schema wrote the value. A newer one is read as far as this code understands
  it (told once per process, at info); an older one is upgraded on read by :data:`UPGRADES`, step by step.
  Every write stamps this code's :data:`SCHEMA_VERSION`, so an upgrade step must also accept a table that
  already holds the fields it adds (a newer worker wrote them, an older one kept them).

What is incompatible across one version — a field renamed, or its meaning changed — is done in two releases:
the first adds the new field beside the old one, the second stops reading the old one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.kernel._deadline_keys import DeadlineKey
from bot.kernel._names import clean_name
from engine.state import SCHEMA_VERSION as MATCH_SCHEMA_VERSION
from engine.state import MatchState

log = logging.getLogger(__name__)

#: The schema of the stored table this code writes. Bump it with each change of the stored form, and add
#: the step from the previous one to :data:`UPGRADES` when a default is not enough.
SCHEMA_VERSION = 1
SEATS = 4

#: How a stored table of schema ``n`` becomes one of schema ``n + 1``: a function of its JSON object (a
#: dict) returning the upgraded one; schemas whose new fields' defaults suffice need no step. Schema 1 is the
#: first: nothing to upgrade yet.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

#: Stored models keep the fields they do not know, and write them back (see the module's docstring).
STORED = ConfigDict(extra="allow")


class TableStatus(StrEnum):
    """Life of a table."""

    LOBBY = "lobby"
    PLAYING = "playing"
    FINISHED = "finished"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """Whether a table in this status is over for good: its match won (``FINISHED``) or the table closed
        (``CANCELLED``). Nothing plays at it again; it is only shown, and forgotten in time."""
        return self in (TableStatus.FINISHED, TableStatus.CANCELLED)


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

    model_config = STORED

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

    model_config = STORED

    senas: bool = False
    target: int = 40
    mode: Literal["match", "game"] = "match"
    """A full match (2 vacas of 2 games) or a single game."""
    difficulty: str = "normal"
    """Level of the machine players: easy, normal or hard (engine.ai)."""


class HandPosition(BaseModel):
    """Where the current hand stands in the match, fixed when it is dealt (a won game moves the counters)."""

    model_config = STORED

    game: int = 1
    """The game being played within the vaca, from 1."""
    vaca: int = 1
    """The vaca being played, from 1."""
    games: tuple[int, int] = (0, 0)
    """Games each team had won in this vaca when the hand was dealt."""


class TableState(BaseModel):
    """Everything about one table (read across versions as the module's docstring says)."""

    model_config = STORED

    schema_version: int = SCHEMA_VERSION
    """The schema of this value: this code's, once read (an older one was upgraded, a newer one noted)."""
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
    paused: float | None = None
    """When the bot lost its way into the table's chat (removed from it, or no right to post there): the table
    waits, with no deadline but the one that closes it, until the chat is back (:mod:`bot.table._pause`);
    ``None`` while it plays."""
    since: dict[str, int] = Field(default_factory=dict)
    """For each kept slot where it is shown (:attr:`bot.kernel._views.OutMessage.slot_key`), the version at
    which its current message began: every later view of the slot carries it (``OutMessage.since``)."""

    @model_validator(mode="before")
    @classmethod
    def _read_any_schema(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data  # (a TableState itself, or garbage for pydantic to refuse)
        written = _schema_of(data)
        if written is None:
            return data  # not a number: pydantic says so
        if written > SCHEMA_VERSION:
            _tell_newer("table", written, SCHEMA_VERSION)
        for step in range(written, SCHEMA_VERSION):
            if step in UPGRADES:
                data = UPGRADES[step](dict(data))
        match = data.get("match")
        if isinstance(match, dict):
            match_schema = _schema_of(match)
            if match_schema is not None and match_schema > MATCH_SCHEMA_VERSION:
                _tell_newer("match", match_schema, MATCH_SCHEMA_VERSION)
        return {**data, "schema_version": SCHEMA_VERSION}

    @property
    def deadline(self) -> DeadlineKey | None:
        """The pending deadline (:attr:`due_key`), typed: what the table waits for, and since when."""
        return None if self.due_key is None else DeadlineKey.parse(self.due_key)

    @property
    def finished(self) -> bool:
        """Whether the table is over for good (won or closed: :attr:`TableStatus.finished`)."""
        return self.status.finished

    def seat_of(self, user_key: str) -> int | None:
        """The seat of a user, if seated."""
        for i, seat in enumerate(self.seats):
            if seat.user == user_key:
                return i
        return None

    def humans(self) -> list[str]:
        """Keys of every seated person."""
        return [s.user for s in self.seats if s.user is not None]


def _schema_of(data: dict[str, Any]) -> int | None:
    """The ``schema_version`` a stored value says it was written with (1, the first, if it says none);
    ``None`` if it is not a whole number (for pydantic to refuse, or coerce)."""
    written = data.get("schema_version", 1)
    return written if isinstance(written, int) and not isinstance(written, bool) else None


_told: set[tuple[str, int]] = set()


def _tell_newer(what: str, written: int, known: int) -> None:
    """Say once per process that a newer version wrote stored ``what`` (normal during a rolling upgrade)."""
    if (what, written) not in _told:
        _told.add((what, written))
        log.info(
            "a %s written with schema %d (this code knows %d) is read as far as understood; its unknown "
            "fields are kept: a newer version runs beside this one",
            what,
            written,
            known,
        )
