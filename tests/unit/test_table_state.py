"""What a stored table says of itself: whether it is over (:attr:`TableState.finished`), asked in one place by
the deadline sweep, the store's indexes, cancelling, moving a chat and the terminal's last line."""

from __future__ import annotations

import json

import pytest

from bot.kernel import TableState, TableStatus


@pytest.mark.parametrize(
    ("status", "finished"),
    [
        (TableStatus.LOBBY, False),
        (TableStatus.PLAYING, False),
        (TableStatus.FINISHED, True),
        (TableStatus.CANCELLED, True),
    ],
)
def test_a_table_is_finished_once_won_or_closed(status: TableStatus, finished: bool) -> None:
    table = TableState(id="t1", chat="tg:-1", creator="tg:1", status=status)
    assert table.finished is finished


def test_finished_is_worked_out_not_stored() -> None:
    table = TableState(id="t1", chat="tg:-1", creator="tg:1", status=TableStatus.CANCELLED)
    stored = json.loads(table.model_dump_json())
    assert "finished" not in stored
    assert TableState.model_validate(stored).finished


def test_the_status_alone_says_it_for_a_reader_of_part_of_the_table() -> None:
    # (the deadline sweep reads only the status and the deadline of each stored table)
    assert [s for s in TableStatus if s.finished] == [TableStatus.FINISHED, TableStatus.CANCELLED]
