"""Answering in time (issue 24): the store budget of an update, its answer time, and answering first.

What these pieces promise, without a Redis: a budget bounds the calls of the task that opened it (nested:
the earlier deadline) and no other task's; a spent budget fails a call without starting it; the answer goes
out first only when the work outlasts the answer time, once, and the caller always knows whether it did.
The frozen-Redis tests (``tests/faults/test_frozen_redis_*.py``) time the whole path.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
import redis.exceptions
from telegram import Update

from adapters.discord.timing import DISCORD, interaction_times
from adapters.telegram.arrival import TELEGRAM, ArrivalQueue, TimedUpdates, update_times
from bot.ops import AnswerWindow, answer_in_time
from bot.store import store_budget
from bot.store._budget import store_time_left, within_budget

WINDOW = AnswerWindow(store=1.2, least=0.4, margin=0.6, latest=10.0)


def now() -> float:
    return asyncio.get_running_loop().time()


async def test_an_update_gets_its_store_time_from_its_arrival_and_at_least_a_little() -> None:
    fresh = WINDOW.times(now())
    assert fresh.store_by == pytest.approx(now() + 1.2, abs=0.05)
    assert fresh.answer_by == pytest.approx(fresh.store_by + 0.6, abs=0.05)
    queued = WINDOW.times(now() - 5.0)  # it waited 5 s for a slot: a healthy Redis must still be reached
    assert queued.store_by == pytest.approx(now() + 0.4, abs=0.05)
    late = AnswerWindow(store=1.5, least=0.4, margin=0.5, latest=2.2).times(now() - 2.5)
    assert late.answer_by < now()  # past its platform's window: answered (deferred) at once


async def test_a_budget_bounds_its_own_task_nested_budgets_take_the_earlier_deadline() -> None:
    assert store_time_left() is None
    with store_budget(now() + 1.0):
        assert store_time_left() == pytest.approx(1.0, abs=0.05)
        with store_budget(now() + 0.2):
            assert store_time_left() == pytest.approx(0.2, abs=0.05)
        with store_budget(now() + 5.0):
            assert store_time_left() == pytest.approx(1.0, abs=0.05)  # an inner budget never extends

        async def elsewhere() -> float | None:
            return store_time_left()

        # A task started meanwhile (a delivery lane's worker) keeps the client's own timeout.
        assert await asyncio.create_task(elsewhere()) is None
    assert store_time_left() is None


async def test_a_call_ends_with_its_budget_and_a_spent_budget_starts_none() -> None:
    started: list[bool] = []

    async def slow_call() -> str:
        started.append(True)
        await asyncio.sleep(5)
        return "late"

    began = now()
    with store_budget(now() + 0.1), pytest.raises(redis.exceptions.TimeoutError):
        await within_budget(slow_call())
    assert now() - began < 1.0 and started == [True]
    with store_budget(now() - 0.1), pytest.raises(redis.exceptions.TimeoutError):
        await within_budget(slow_call())
    assert started == [True]  # never started: nothing sent
    assert await within_budget(asyncio.sleep(0, "unbounded")) == "unbounded"


async def test_work_done_in_time_is_answered_by_the_caller_alone() -> None:
    early: list[float] = []

    async def answer_first() -> None:
        early.append(now())

    result, answered = await answer_in_time(asyncio.sleep(0.05, "done"), now() + 0.5, answer_first)
    assert (result, answered) == ("done", False)
    await asyncio.sleep(0.6)
    assert early == []  # and never later


async def test_late_work_is_answered_first_once_and_the_caller_knows() -> None:
    early: list[float] = []
    answer_by = now() + 0.1

    async def answer_first() -> None:
        early.append(now())
        await asyncio.sleep(0.2)  # the platform's round trip: awaited before the work's result comes back

    result, answered = await answer_in_time(asyncio.sleep(0.15, "views"), answer_by, answer_first)
    assert (result, answered) == ("views", True)
    assert len(early) == 1 and early[0] == pytest.approx(answer_by, abs=0.05)
    assert now() >= early[0] + 0.2


async def test_work_that_fails_after_answering_first_still_says_so() -> None:
    async def failing() -> None:
        await asyncio.sleep(0.1)
        raise RuntimeError("boom")

    answered: list[bool] = []

    async def answer_first() -> None:
        answered.append(True)

    with pytest.raises(RuntimeError):
        await answer_in_time(failing(), now() + 0.01, answer_first)
    assert answered == [True]


async def test_telegram_updates_are_timed_from_their_arrival_in_the_queue() -> None:
    arrivals = ArrivalQueue()
    update = Update(update_id=41)
    await arrivals.put(update)
    arrived = now()
    await asyncio.sleep(0.3)  # waiting for a slot
    seen: list[tuple[float | None, float]] = []

    async def handlers() -> None:
        seen.append((store_time_left(), update_times().answer_by))

    processor = TimedUpdates(16, arrivals)
    await processor.process_update(update, handlers())
    ((left, answer_by),) = seen
    assert left == pytest.approx(TELEGRAM.store - 0.3, abs=0.1)
    assert answer_by == pytest.approx(arrived + TELEGRAM.store + TELEGRAM.margin, abs=0.1)
    assert arrivals.arrival(update) == pytest.approx(now(), abs=0.05)  # forgotten once handled


async def test_discord_interactions_are_timed_from_their_creation() -> None:
    created = datetime.now(UTC) - timedelta(seconds=1.0)  # the gateway took a second to bring it
    times = interaction_times(SimpleNamespace(created_at=created))  # type: ignore[arg-type]
    assert times.store_by == pytest.approx(now() + DISCORD.store - 1.0, abs=0.1)
    assert times.answer_by == pytest.approx(now() + DISCORD.store + DISCORD.margin - 1.0, abs=0.1)
    ahead = interaction_times(SimpleNamespace(created_at=datetime.now(UTC) + timedelta(seconds=5)))  # type: ignore[arg-type]
    assert ahead.store_by == pytest.approx(now() + DISCORD.store, abs=0.1)  # a clock behind Discord's
    stale = interaction_times(SimpleNamespace(created_at=created - timedelta(seconds=60)))  # type: ignore[arg-type]
    assert stale.answer_by < now() < stale.store_by  # deferred at once, then a little store time
