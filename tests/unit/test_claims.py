"""A call waiting for its turn: its claim renewed a few times however long the wait, never lapsing; its
check once the turn came, and when it began."""

from __future__ import annotations

import asyncio

import pytest

from bot.delivery import _claims as claims
from bot.delivery._claims import MAX_HOLD, keep_claim, unless_bare, unless_shown
from bot.delivery._pending import view_digest
from bot.delivery._surface_answers import MessageState
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import OutMessage
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


async def test_a_checked_call_begins_at_its_turn_and_is_needed_unless_known_drawn() -> None:
    """The check reads what the message shows when the call's turn came, and how many calls had landed
    then: the call's record begins there (not when it queued); a check never asked keeps the first read."""
    surfaces = MemorySurfaces()
    t, chat = "t0000001", "tg:-100"
    message = OutMessage(slot="table", text="hand 1", chat=chat, table=t, version=1, since=1)
    assert (await surfaces.offer(t, chat, "table", 1, "{}", since=1, digest=view_digest(message))).accepted
    assert (await surfaces.record(t, chat, "table", "41", since=1, replacing=None)).taken
    edit, strip = unless_shown(surfaces, chat, "41", message), unless_bare(surfaces, chat, "41", message, 1)
    assert edit.begun(0) == 0 and strip.begun(0) == 0  # not asked: the read before the call
    assert await edit() and await strip()  # nothing known yet
    assert edit.begun(0) == 0
    await surfaces.landed(t, chat, "table", "41", since=1, digest=view_digest(message), buttons=True, begun=0)
    await surfaces.landed(t, chat, "table", "41", since=1, digest="", buttons=False, begun=1)  # stripped
    assert not await strip() and strip.begun(0) == 2  # known bare, two calls landed
    assert await edit()  # shows no longer this view (the strip took its buttons)
    await surfaces.landed(t, chat, "table", "41", since=1, digest=view_digest(message), buttons=True, begun=2)
    assert not await edit() and edit.begun(0) == 3
    down = unless_bare(Down(), chat, "41", message, 1)
    assert await down() and down.begun(5) == 5  # a store that does not answer: the call goes


class Down(MemorySurfaces):
    """A store that does not answer."""

    async def state(self, table: str, chat: str, slot: str, message_id: str, *, since: int) -> MessageState:
        raise StoreUnavailable("down")
