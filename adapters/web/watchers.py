"""What the web table's server keeps of a table and of each page watching it: :class:`Snapshot` (one stored
version, parsed once), :class:`TableFeed` (the newest versions of one table, for all its pages) and
:class:`Page` (one open page: who, at which table, what it was last sent). :mod:`adapters.web.feed` moves
the pages along."""

from __future__ import annotations

import asyncio
import random
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from adapters.web.frames import hand_at
from bot.kernel import TableState, WebVisitor
from engine.hand import Hand
from engine.match import Match
from engine.state import restore_match


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One stored version of a table, parsed once for every page of it."""

    version: int
    table: TableState
    match: Match | None

    @property
    def hand(self) -> Hand | None:
        """The hand being played (or just over), if the game runs."""
        return None if self.match is None else self.match.hand

    @property
    def entries(self) -> int:
        """How many record entries (actions, señas, catches) its hand holds."""
        return 0 if self.hand is None else len(self.hand.journal)


@dataclass(eq=False)
class Page:
    """One open page: who looks, at which table, and what it was last sent."""

    id: str
    visitor: WebVisitor
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    sent: tuple[int, int, int] | None = None
    """(hand, entries, version) of the last frame sent."""
    last_move: float = 0.0
    """When (monotonic) the last frame that showed a new move was sent."""
    shown: dict[tuple[int, int], float] = field(default_factory=dict)
    """When (the service's clock) each seña's ⚡ was first sent to this page, by (hand, seña index)."""
    opened_at: float = field(default_factory=time.monotonic)
    streaming: bool = False
    """Its event stream is open (a page that never opens one is dropped after :data:`ABANDONED` s)."""

    @property
    def table(self) -> str:
        """The table this page shows."""
        return self.visitor.table


class TableFeed:
    """The newest state of one table, for every page that watches it."""

    def __init__(self, table_id: str) -> None:
        """An empty feed of ``table_id`` (filled by :meth:`Hub.refresh`)."""
        self.table_id = table_id
        self.newest: Snapshot | None = None
        self.hands: OrderedDict[int, Snapshot] = OrderedDict()
        """The newest snapshot of each of the last two hands dealt."""
        self.pages: set[Page] = set()
        self.first_read = asyncio.Lock()
        """Held while the feed is first read (the pages opening meanwhile wait for that read)."""
        self.followed = False  # (the hub hears this table's notices)
        self.heard = 0  # (the newest version a notice announced)
        self.reading: asyncio.Task[None] | None = None
        """The read that notices asked for, while it runs (one at a time per feed)."""
        self.reread = False  # (read once more after the running read: the subscription had a gap)
        self._replayed: dict[tuple[int, int], Hand] = {}

    def update(self, version: int, data: str) -> bool:
        """Take a stored version if it is newer; whether it was."""
        if self.newest is not None and version <= self.newest.version:
            return False
        table = TableState.model_validate_json(data)
        match = None if table.match is None else restore_match(table.match, random.Random(0))
        snap = Snapshot(version, table, match)
        self.newest = snap
        if snap.hand is not None:
            if table.hand_no not in self.hands:
                self._replayed.clear()  # a new hand: the old one's replays are done with
            self.hands[table.hand_no] = snap
            self.hands.move_to_end(table.hand_no)
            while len(self.hands) > 2:
                self.hands.popitem(last=False)
        for p in self.pages:
            p.wake.set()
        return True

    def replayed(self, snap: Snapshot, entries: int) -> Hand:
        """The hand of ``snap`` as it stood after ``entries`` record entries (replayed once per feed)."""
        hand = snap.hand
        assert hand is not None
        if entries >= len(hand.journal):
            return hand
        key = (snap.table.hand_no, entries)
        if key not in self._replayed:
            self._replayed[key] = hand_at(hand, entries)
        return self._replayed[key]
