"""One budget of platform calls per bot, on Redis (one server and a cluster) and in memory, with one contract:
every worker books its calls on one clock at the bot's rate (a burst after a quiet moment, then one turn per
interval), a chat's window of new messages is counted once across workers, and a post the window has no room
for within the caller's longest wait is refused without drawing anything."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable

import pytest

from bot.store import BotRate, CallBudget, ChatWindow, MemoryCallBudget, RedisCallBudget

ClientFactory = Callable[..., Awaitable[object]]
#: Redis's clock moves between two calls of a test (and a cluster's nodes each have one): waits are compared
#: within this much.
SLACK = 0.03


def near(value: float, expected: float) -> bool:
    return abs(value - expected) <= SLACK


async def contract(first: CallBudget, second: CallBudget) -> None:
    """``first`` and ``second`` are two workers' handles on one store."""
    rate = BotRate(per_second=10, burst=2)
    # A burst of two at once, then one turn every 0.1 s, whichever worker asks.
    waits = [(await budget.draw("bot1", rate)).wait for budget in (first, second, first, second, first)]
    assert all(near(w, e) for w, e in zip(waits, [0, 0, 0.1, 0.2, 0.3], strict=True)), waits
    # Another bot has its own budget.
    assert near((await second.draw("bot2", rate)).wait, 0)

    fast = BotRate(per_second=1000, burst=50)
    window = ChatWindow(limit=2, seconds=1.0)
    drawn = [await budget.draw("bot3", fast, "-100", window) for budget in (first, second)]
    assert all(d.granted and near(d.wait, 0) for d in drawn), drawn
    # The third post in the group, by either worker: refused until the window frees, in about a second.
    refused = await first.draw("bot3", fast, "-100", window)
    assert not refused.granted and 0.8 < refused.wait <= 1.0 + SLACK, refused
    # Another group, and a call that posts nothing (an edit), go on at once: the refusal booked nothing.
    assert (await second.draw("bot3", fast, "-200", window))[:2] == (True, 0)
    assert (await second.draw("bot3", fast))[:2] == (True, 0)
    await asyncio.sleep(refused.wait + SLACK)
    assert (await second.draw("bot3", fast, "-100", window)).granted


async def test_the_call_budget_contract_in_memory() -> None:
    budget = MemoryCallBudget(clock=time.monotonic)
    await contract(budget, budget)


async def test_the_call_budget_contract_on_redis(make_client: ClientFactory, key_prefix: str) -> None:
    first = RedisCallBudget(await make_client(), prefix=key_prefix)  # type: ignore[arg-type]
    second = RedisCallBudget(await make_client(), prefix=key_prefix)  # type: ignore[arg-type]
    await contract(first, second)


async def test_a_refused_post_draws_nothing_and_the_window_frees_with_time() -> None:
    now = [0.0]
    budget = MemoryCallBudget(clock=lambda: now[0])
    rate, window = BotRate(per_second=4), ChatWindow(limit=1, seconds=10.0)
    assert (await budget.draw("bot", rate, "-1", window)).granted
    for _ in range(3):
        assert not (await budget.draw("bot", rate, "-1", window)).granted
    # The refusals booked no turn of the bot's: the next call waits one interval, not four.
    assert (await budget.draw("bot", rate)).wait == pytest.approx(0.25)
    now[0] = 10.5
    assert (await budget.draw("bot", rate, "-1", window)).granted


@pytest.mark.parametrize("workers", [4])
async def test_many_workers_at_once_never_book_two_calls_closer_than_the_rate(
    make_client: ClientFactory, key_prefix: str, workers: int
) -> None:
    budgets = [RedisCallBudget(await make_client(), prefix=key_prefix) for _ in range(workers)]  # type: ignore[arg-type]
    rate = BotRate(per_second=50, burst=1)
    drawn = await asyncio.gather(*(b.draw("bot", rate) for b in budgets for _ in range(5)))
    assert all(d.granted for d in drawn)
    # The turns are read on the budget's own clock (Redis's, on the node of the bot's key), not from when each
    # answer reached this process: a loaded machine that stalls an answer by 0.3 s cannot move them.
    by_turn = sorted(drawn, key=lambda d: d.turn)
    gaps = [b.turn - a.turn for a, b in itertools.pairwise(by_turn)]
    # Never two turns closer than the rate (20 ms, to Redis's millisecond) ...
    assert min(gaps) >= 0.02 - 0.001, gaps
    # ... and no turn later than it had to be: a call that waits was booked right after the turn before it.
    late = [b for a, b in itertools.pairwise(by_turn) if b.wait > 0 and abs(b.turn - a.turn - 0.02) > 0.001]
    assert not late, by_turn
