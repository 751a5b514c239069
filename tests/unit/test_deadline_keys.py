"""A table's deadline as a typed value (:class:`bot.kernel.DeadlineKey`): the core makes the keys it schedules
and reads those that fire with it, and a surface asks the table what it waits for (``TableState.deadline``)
instead of splitting the key itself (the terminal's Enter deals the next hand only when a deal is due)."""

from __future__ import annotations

import pytest
from service_helpers import ANE, GROUP, Harness, english

from bot.kernel import DeadlineKey, DeadlineKind, TableState


@pytest.mark.parametrize(
    ("key", "kind", "stamp"),
    [
        ("ab12cd34|lobby|0", DeadlineKind.LOBBY, ("0",)),
        ("ab12cd34|deal|3", DeadlineKind.DEAL, ("3",)),
        ("ab12cd34|machine|3-7", DeadlineKind.MACHINE, ("3-7",)),
        ("ab12cd34|turn|3-8", DeadlineKind.TURN, ("3-8",)),
        ("ab12cd34|flash|3|1", DeadlineKind.FLASH, ("3", "1")),
        ("ab12cd34|paused|1764680000", DeadlineKind.PAUSED, ("1764680000",)),
    ],
)
def test_a_key_reads_as_what_it_names_and_is_made_again_the_same(
    key: str, kind: DeadlineKind, stamp: tuple[str, ...]
) -> None:
    deadline = DeadlineKey.parse(key)
    assert deadline == DeadlineKey("ab12cd34", kind, stamp)
    assert deadline.key == key


@pytest.mark.parametrize("key", ["", "ab12cd34", "ab12cd34|", "ab12cd34|snooze|1", "|deal|3"])
def test_a_key_naming_no_deadline_this_code_knows_reads_as_none(key: str) -> None:
    assert DeadlineKey.parse(key) is None


def test_a_table_without_a_pending_deadline_waits_for_nothing() -> None:
    assert TableState(id="ab12cd34", chat="tg:-1", creator="tg:1").deadline is None


async def test_the_table_says_what_it_waits_for_and_firing_that_key_acts() -> None:
    h = Harness(seed=2)
    await english(h)
    tid = await h.started(GROUP, ANE)
    state = await h.load(tid)
    deadline = state.table.deadline
    assert deadline is not None and deadline.key == state.table.due_key and deadline.table == tid
    assert deadline.kind in (DeadlineKind.TURN, DeadlineKind.MACHINE)
    stale = DeadlineKey(tid, DeadlineKind.DEAL, ("99",))
    await h.fire(stale.key)  # a deal of another hand: stale, nothing changes
    assert (await h.load(tid)).table.due_key == state.table.due_key
    h.advance(3600)
    fired = await h.fire(deadline.key)
    assert fired.ok
    assert (await h.load(tid)).table.due_key != deadline.key  # it acted: the table waits for something new
