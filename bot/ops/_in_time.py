"""Answering an update in time: its store calls share one budget from its arrival, and when its work still
runs at the platform's answer time, the adapter answers (or defers) first and lets the views follow.

Each platform counts from an update's *arrival* (Telegram: when the update was fetched; Discord: when the
interaction was created) and refuses a late answer (Telegram a callback answer after 15 s, Discord any first
answer after 3 s). An adapter gives each update an :class:`AnswerWindow` of its platform:

* :meth:`AnswerWindow.times` — the update's :class:`UpdateTimes`: ``store_by``, the deadline of the
  update's store budget (:func:`bot.store.store_budget`: all its Redis calls together end by then, so a frozen
  Redis turns into a "store unavailable" answer instead of a lost one), and ``answer_by``, when the answer
  goes out at the latest;
* :func:`answer_in_time` — await the work, and if it still runs at ``answer_by``, answer first from a helper
  task (a silent acknowledgement, a deferral): the work goes on in the update's own task (so under its
  budget), and its views follow through the delivery lanes.

Why the numbers hold together: the store's share ends well before the answer time (``margin``), since
what runs after the last store call — drawing views, the platform's round trip — takes milliseconds. An
update that waited for its turn (Telegram handles 16 at once) still gets ``least`` seconds of store time
from when its handling starts: a busy but healthy Redis answers within milliseconds, and those updates
must not be told "store unavailable" because the queue was long. With a frozen Redis, each wave of waiting
updates then costs ``least`` — a burst of 40 is answered in about ``store + 2 × least`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class UpdateTimes:
    """When one update's store calls must be over, and when its answer must go out (event-loop time)."""

    store_by: float
    """The deadline of the update's store budget."""
    answer_by: float
    """If the work still runs then, answer (or defer) first."""


@dataclass(frozen=True, slots=True)
class AnswerWindow:
    """How one platform's updates are timed (see the module docstring); all in seconds."""

    store: float
    """From an update's arrival, the time all its store calls may take together."""
    least: float
    """From when the handling starts, the store time every update gets however long it waited."""
    margin: float
    """After the store's time, the answer goes out first if the work still runs..."""
    latest: float
    """...and never later than this after the arrival (the platform's window, less its round trip)."""

    def times(self, arrival: float) -> UpdateTimes:
        """The times of an update that arrived at ``arrival`` (event-loop time), handled from now on."""
        now = asyncio.get_running_loop().time()
        store_by = max(arrival + self.store, now + self.least)
        return UpdateTimes(store_by, min(store_by + self.margin, arrival + self.latest))


async def answer_in_time(
    work: Awaitable[_T], answer_by: float, answer_first: Callable[[], Awaitable[None]]
) -> tuple[_T, bool]:
    """Await ``work`` in this task; if it still runs at ``answer_by`` (event-loop time), ``answer_first()``
    runs meanwhile, from a helper task. Returns the work's result and whether ``answer_first`` ran.

    Once ``answer_first`` started it is awaited before this returns (or raises what the work raised), so the
    caller knows whether the update was answered and never answers over it; one that did not start never
    will. ``answer_first`` should not raise: what it raises is logged.
    """
    loop = asyncio.get_running_loop()
    started = False

    async def at_answer_time() -> None:
        nonlocal started
        await asyncio.sleep(max(0.0, answer_by - loop.time()))
        started = True
        await answer_first()

    helper = asyncio.create_task(at_answer_time(), name="answer-in-time")
    try:
        result = await work
    finally:
        if not started:
            helper.cancel()
        await asyncio.wait({helper})
        if not helper.cancelled() and helper.exception() is not None:
            log.error("answering first failed", exc_info=helper.exception())
    return result, started
