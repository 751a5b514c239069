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
    assert (await second.draw("bot3", fast, "-200", window)) == (True, 0)
    assert (await second.draw("bot3", fast)) == (True, 0)
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
    loop = asyncio.get_running_loop()

    async def booked(budget: RedisCallBudget) -> float:
        """The moment a draw books: when its answer came, plus its wait."""
        drawn = await budget.draw("bot", rate)
        return loop.time() + drawn.wait

    results = await asyncio.gather(*(booked(b) for b in budgets for _ in range(5)))
    moments = sorted(results)
    # Each wait is counted from its own call, so two calls answered apart may both wait 0: the moments they
    # book are what the rate spaces (less the answers' round trips, a few ms on a loaded machine).
    gaps = [b - a for a, b in itertools.pairwise(moments)]
    assert min(gaps) >= 0.01, gaps
    # Nor does it over-wait: twenty turns take about nineteen intervals. A loaded machine (three cluster nodes
    # and four clients on two cores) may stall one answer by 0.1 s or more, which only lengthens the span, so
    # the bound is half as much again: a budget booking a turn more per call (twice the span) still fails.
    span = moments[-1] - moments[0]
    assert span <= 0.02 * (len(moments) - 1) * 1.5, gaps
