"""One time budget per update for all its store calls: a frozen Redis must not cost an answer.

A platform gives an update a window to be answered in (Telegram refuses a callback answer after 15 s,
Discord an interaction's after 3 s); a frozen Redis answers nothing, so every command would wait out the
client's :data:`~bot.store._redis_client.CLIENT_TIMEOUT`, and an update that makes three store calls would
spend three of them. Instead the adapter opens a budget for the update when it starts handling it
(:func:`store_budget`, with a deadline counted from the update's *arrival*), and every Redis command the
update's task sends — act-once check, loads, the compare-and-set, preferences, surfaces — ends by that
deadline: the client (:class:`~bot.store._redis_client.BudgetedRedis`) awaits it through
:func:`within_budget`, which fails it as a Redis timeout (so as :class:`~bot.store._ports.StoreUnavailable`,
like any other) once the budget is spent. The update then answers "store unavailable" in time.

Choices, and why:

* **The deadline is an instant, not a duration per call**: what the platform measures is the update's
  whole path, so calls share what is left. Budgets nest; the earlier deadline wins (the act-once check
  bounds itself more tightly inside the update's budget).
* **Only the task that opened the budget is bounded.** A context variable is copied into every task
  started meanwhile, and some of those outlive the update: a delivery lane's worker is started by the
  first view queued for its chat. Its store calls must keep the client's own timeout, not inherit a
  deadline that is over a moment later. So a budget bounds the calls of its own task; a coroutine that
  should share it runs in that task (the adapters answer early from a helper task instead).
* **Cancelling a command is safe for the store**: redis-py drops the connection of a command interrupted
  mid-way, and every change of a table is one compare-and-set script, which Redis runs whole or not at all —
  possibly later, once a frozen server resumes and reads what was waiting in its socket. A write that
  "failed" may thus have happened; the unit of work's stamps and versions make the next press see it (the
  same holds for a write that ran into the client's timeout).
* **Pipelines are not bounded** (they run on the cluster's index repair after a write, and in background
  work); they keep the client's timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Coroutine, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

import redis.exceptions

__all__ = ["store_budget", "store_time_left", "within_budget"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class _Budget:
    deadline: float
    """Event-loop time by which every store call must be over."""
    task: asyncio.Task[Any] | None
    """The task whose calls it bounds (the one that opened it)."""


_CURRENT: ContextVar[_Budget | None] = ContextVar("store_budget", default=None)


def _active() -> _Budget | None:
    budget = _CURRENT.get()
    if budget is None or budget.task is not asyncio.current_task():
        return None
    return budget


@contextlib.contextmanager
def store_budget(deadline: float) -> Iterator[None]:
    """Inside the block, every Redis command this task sends ends by ``deadline`` (event-loop time, as
    ``asyncio.get_running_loop().time()``); inside another budget, by the earlier of the two."""
    outer = _active()
    if outer is not None:
        deadline = min(deadline, outer.deadline)
    token = _CURRENT.set(_Budget(deadline, asyncio.current_task()))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def store_time_left() -> float | None:
    """Seconds left for this task's store calls (``0`` or less: spent); ``None``: no budget bounds them."""
    budget = _active()
    if budget is None:
        return None
    return budget.deadline - asyncio.get_running_loop().time()


async def within_budget(call: Awaitable[_T]) -> _T:
    """Await a Redis call, ended by this task's budget if one is open: a spent budget raises
    ``redis.exceptions.TimeoutError`` (without sending anything if it was spent before)."""
    left = store_time_left()
    if left is None:
        return await call
    if left <= 0:
        if isinstance(call, Coroutine):
            call.close()  # never started: nothing was sent
        raise redis.exceptions.TimeoutError("the update's time for the store is spent")
    try:
        async with asyncio.timeout(left):
            return await call
    except TimeoutError as exc:
        raise redis.exceptions.TimeoutError("the update's time for the store ran out") from exc
