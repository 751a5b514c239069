"""When a worker trusts its parsed copy of a table without reading the store (``bot.app._copies``)."""

from __future__ import annotations

from bot.app._copies import VERIFY_AFTER_FOREIGN_WRITE, TableCopies
from bot.kernel import TableState


def copy() -> tuple[TableState, None]:
    return TableState.model_construct(), None


def test_a_table_played_on_one_worker_is_trusted_from_its_copy() -> None:
    copies = TableCopies(8)
    assert copies.trusted("t1") is None  # no copy: read
    copies.keep("t1", 3, copy())
    for version in range(4, 40):
        assert copies.trusted("t1") == version - 1
        assert copies.take("t1", version - 1) is not None
        copies.read("t1", version - 1)  # (a read that finds this worker's own newest changes nothing)
        copies.keep("t1", version, copy())


def test_once_another_worker_wrote_a_table_its_next_commands_read_first() -> None:
    copies = TableCopies(8)
    copies.keep("t1", 3, copy())
    copies.read("t1", 4)  # the store holds a version this worker did not write
    reads = 0
    for version in range(5, 5 + VERIFY_AFTER_FOREIGN_WRITE):
        reads += copies.trusted("t1") is None
        copies.keep("t1", version, copy())  # this worker's own writes meanwhile
    assert reads == VERIFY_AFTER_FOREIGN_WRITE
    assert copies.trusted("t1") == 4 + VERIFY_AFTER_FOREIGN_WRITE  # alone again: trusted
    copies.overtaken("t1")  # a refused compare-and-set: the count starts again
    assert copies.trusted("t1") is None
    assert copies.trusted("t2") is None  # other tables are not concerned (no copy of t2 either)


def test_copies_are_bounded_and_a_dropped_table_is_not_trusted() -> None:
    copies = TableCopies(2)
    for table in ("t1", "t2", "t3"):
        copies.keep(table, 1, copy())
    assert copies.trusted("t1") is None and copies.trusted("t3") == 1  # the oldest copy went
    copies.drop("t3", 1)
    assert copies.trusted("t3") is None and copies.take("t3", 1) is None
    assert TableCopies(0).trusted("t1") is None
    none = TableCopies(0)
    none.keep("t1", 1, copy())
    assert none.trusted("t1") is None
