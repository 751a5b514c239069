"""A claim kept while its call waits: renewed a few times however long the wait, never lapsing."""

from __future__ import annotations

import asyncio

import pytest

from bot.delivery import _claims as claims
from bot.delivery._claims import MAX_HOLD, keep_claim
from bot.store import StoreUnavailable


async def keep_for(wait: float, claim: float, *, still_mine: bool = True) -> list[tuple[float, float]]:
    """Keep a claim of ``claim`` seconds for ``wait`` seconds (on a loop whose clock runs fast: sleeps are
    real but short); each renewal as (when, until when it holds the claim)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    renewals: list[tuple[float, float]] = []

    async def renew(hold: float) -> bool:
        now = loop.time() - start
        renewals.append((now, now + claim + hold))
        return still_mine

    task = asyncio.create_task(keep_claim(renew, claim))
    await asyncio.sleep(wait)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return renewals


async def test_a_long_wait_renews_a_few_times_and_never_lapses() -> None:
    """A wait 40 claims long renews about ten times (every half-claim: 80), and at every moment of the wait
    the claim still holds with a margin."""
    claim = 0.05
    renewals = await keep_for(40 * claim, claim)
    assert 5 <= len(renewals) <= 12, renewals
    holds_until = claim  # the first claim, taken when the call began
    for when, until in renewals:
        assert when < holds_until - claim / 4, (when, holds_until)  # renewed before it lapsed
        holds_until = until
    assert holds_until > 40 * claim
    assert all(until - when <= claim + MAX_HOLD for when, until in renewals)


async def test_the_loop_ends_when_the_claim_is_lost_or_the_store_fails() -> None:
    """A claim that is another's now ends the renewals; a store that does not answer ends them quietly."""
    assert len(await keep_for(0.3, 0.05, still_mine=False)) == 1

    async def failing(hold: float) -> bool:
        raise StoreUnavailable("down")

    await asyncio.wait_for(keep_claim(failing, 0.02), 1.0)  # returns, does not raise


async def test_max_hold_bounds_what_a_dead_worker_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    """However long a call waited, a renewal holds at most :data:`MAX_HOLD` beyond the claim's length."""
    monkeypatch.setattr(claims, "MAX_HOLD", 0.1)
    claim = 0.05
    renewals = await keep_for(30 * claim, claim)
    holds = [until - when - claim for when, until in renewals]
    assert max(holds) == pytest.approx(0.1) and len(renewals) >= 6, holds
