"""This worker's parsed copies of the tables it wrote or read last (:class:`TableCopies`), and when to trust
one without reading the store first.

Parsing a stored table and restoring its match (a replay of the hand's record) costs more than the step that
runs on it, so the unit of work keeps each table's newest copy, parsed, by version. The first try of a
command trusts that copy without a read: the compare-and-set finds out if another worker wrote since. That is
right for a worker that plays a table alone (one worker, or a load balancer that keeps a chat on one
worker), and costly where workers take a table's commands in turn (a round-robin balancer: the copy is then
mostly stale, and a try trusted on it runs its step, draws its views and sends its write for nothing). So once
another worker's write to a table was seen (a refused compare-and-set, or a read that found a version this
worker did not write), the next :data:`VERIFY_AFTER_FOREIGN_WRITE` commands on it read the store first — one
read, the copy still used if it is the stored version — and each foreign write seen meanwhile starts the count
again. The trade-off: a table shared by workers costs one read per command, never a wasted step; a table
played on one worker costs none.
"""

from __future__ import annotations

from collections import OrderedDict

from bot.kernel import LruCache, TableState
from engine.match import Match

#: Commands on a table that read the store first once another worker's write to it was seen.
VERIFY_AFTER_FOREIGN_WRITE = 16

#: Tables whose foreign writes are remembered at most (the oldest forgotten first: their copies are trusted).
_SHARED_KEPT = 4096

Copy = tuple[TableState, Match | None]
"""A parsed table and its live match (``None``: restored from the table when used)."""


class TableCopies:
    """Parsed tables by (id, version), at most ``size`` of them; each table's newest version held here; and
    the tables another worker was seen writing."""

    def __init__(self, size: int) -> None:
        """Keep at most ``size`` copies (0: none, every command reads the store)."""
        self.size = size
        self._copies: OrderedDict[tuple[str, int], Copy] = OrderedDict()
        self._newest: dict[str, int] = {}
        self._shared: LruCache[str, int] = LruCache(_SHARED_KEPT)

    def trusted(self, table_id: str) -> int | None:
        """The version of the copy a first try may run on without reading the store (``None``: read it — no
        copy, or another worker writes this table); counts down the commands left to verify."""
        left = self._shared.get(table_id)
        if left:
            self._shared.put(table_id, left - 1)
            return None
        return self._newest.get(table_id)

    def take(self, table_id: str, version: int) -> Copy | None:
        """The copy of ``version``, taken out while a command uses it (so never shared)."""
        return self._copies.pop((table_id, version), None)

    def read(self, table_id: str, version: int) -> None:
        """The store held ``version``: if this worker's newest copy is another, another worker wrote it."""
        newest = self._newest.get(table_id)
        if newest is not None and newest != version:
            self.overtaken(table_id)

    def overtaken(self, table_id: str) -> None:
        """Another worker wrote the table: its copies are stale, and the next commands read first."""
        self._newest.pop(table_id, None)
        self._shared.put(table_id, VERIFY_AFTER_FOREIGN_WRITE)

    def drop(self, table_id: str, version: int | None = None) -> None:
        """Forget the table's newest version (and the copy of ``version``): none to trust."""
        if version is not None:
            self._copies.pop((table_id, version), None)
        self._newest.pop(table_id, None)

    def keep(self, table_id: str, version: int, copy: Copy) -> None:
        """Remember a parsed table for the next command on this version (the oldest copies go first)."""
        if self.size <= 0:
            return
        self._copies[(table_id, version)] = copy
        if self._newest.get(table_id, 0) <= version:
            self._newest[table_id] = version
        while len(self._copies) > self.size:
            (old_id, old_version), _ = self._copies.popitem(last=False)
            if self._newest.get(old_id) == old_version:
                del self._newest[old_id]
