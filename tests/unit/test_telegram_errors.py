"""An update whose handler raised is logged by the adapter's own error handler (python-telegram-bot would
otherwise print "No error handlers are registered" and a traceback): a store that did not answer in time is
one line, anything else keeps its traceback."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from adapters.telegram.app import handler_failed
from bot.store import StoreUnavailable


async def test_a_store_that_did_not_answer_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        await handler_failed(object(), SimpleNamespace(error=StoreUnavailable("timed out")))  # type: ignore[arg-type]
        await handler_failed(object(), SimpleNamespace(error=TimeoutError()))  # type: ignore[arg-type]
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.WARNING]
    assert all(r.exc_info is None for r in caplog.records)
    assert "timed out" in caplog.records[0].getMessage()


async def test_any_other_failure_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise KeyError("a bug")
    except KeyError as exc:
        error = exc
    with caplog.at_level(logging.WARNING):
        await handler_failed(object(), SimpleNamespace(error=error))  # type: ignore[arg-type]
    (record,) = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None and record.exc_info[1] is error
