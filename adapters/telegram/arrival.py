"""Each Telegram update is handled under one time budget from its arrival, so a frozen Redis never costs
an answer (issue 24).

Telegram drops a callback query's answer after 15 s, and the bot promises "store unavailable" within about
2 s. The Application handles 16 updates at once; the others wait for a slot, and that wait counts: what a
person sees is the time from their press to its answer. So:

* :class:`ArrivalQueue` is the Application's update queue (the Updater puts every fetched update into it,
  long polling or webhook): it notes when each update arrived.
* :class:`TimedUpdates` is its update processor (16 at once, as before): it handles each update — every
  handler group: the act-once check, the command or press, marking it handled — under the store budget
  of :data:`TELEGRAM` counted from its arrival (:func:`bot.store.store_budget`), and tells the handlers
  the update's :func:`update_times`.

The numbers (:data:`TELEGRAM`): 1.2 s from arrival for all of an update's store calls, at least 0.4 s from
when its handling starts (a long queue with a healthy Redis must not turn into "store unavailable"), and the
answer to a press goes out at the latest 0.6 s after that, even if its work still runs. With Redis frozen, a
press is answered in about 1.2 s and a burst of 40 within about 2 s (16, then 16, then 8).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextvars import ContextVar
from typing import Any

from telegram import Update
from telegram.ext import SimpleUpdateProcessor

from bot.kernel import LruCache
from bot.ops import AnswerWindow, UpdateTimes
from bot.store import store_budget

#: How Telegram updates are timed (see the module docstring); a press's answer never waits past ``latest``,
#: well within the 15 s Telegram keeps a callback query open.
TELEGRAM = AnswerWindow(store=1.2, least=0.4, margin=0.6, latest=10.0)
#: Updates whose arrival is remembered at most (one is forgotten when handled; more only pile up if the
#: Application stopped taking them). Past it the oldest arrival is forgotten: that update is timed from when
#: its handling starts, a budget too generous by its wait in the queue, and nothing else is lost.
_ARRIVALS_KEPT = 10_000

_TIMES: ContextVar[UpdateTimes | None] = ContextVar("telegram_update_times", default=None)


class ArrivalQueue(asyncio.Queue[object]):
    """The update queue, noting when each update was put in it (event-loop time)."""

    def __init__(self) -> None:
        """An empty, unbounded queue (as python-telegram-bot's own)."""
        super().__init__()
        self._arrived: LruCache[int, float] = LruCache(_ARRIVALS_KEPT)

    def put_nowait(self, item: object) -> None:
        """Queue ``item``; an update's arrival is noted (``put`` comes here too)."""
        if isinstance(item, Update):
            self._arrived.put(item.update_id, asyncio.get_running_loop().time())
        super().put_nowait(item)

    def arrival(self, update: object) -> float:
        """When ``update`` arrived, forgotten now (an update not seen here — handed to the Application
        directly — arrived now)."""
        if isinstance(update, Update):
            arrived = self._arrived.pop(update.update_id)
            if arrived is not None:
                return arrived
        return asyncio.get_running_loop().time()


class TimedUpdates(SimpleUpdateProcessor):
    """Handles up to ``max_concurrent_updates`` at once, each under its store budget from its arrival."""

    def __init__(
        self, max_concurrent_updates: int, arrivals: ArrivalQueue, window: AnswerWindow = TELEGRAM
    ) -> None:
        """Time the updates of ``arrivals``, the Application's update queue, by ``window``."""
        super().__init__(max_concurrent_updates)
        self.arrivals = arrivals
        self.window = window

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run every handler of ``update`` (in this task) under its budget."""
        times = self.window.times(self.arrivals.arrival(update))
        token = _TIMES.set(times)
        try:
            with store_budget(times.store_by):
                await coroutine
        finally:
            _TIMES.reset(token)


def update_times() -> UpdateTimes:
    """The times of the update being handled (one that did not come through :class:`TimedUpdates`, as in a
    test calling a handler, counts as arrived now)."""
    times = _TIMES.get()
    return times if times is not None else TELEGRAM.times(asyncio.get_running_loop().time())
