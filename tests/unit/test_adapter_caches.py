"""The adapters' own caches are the core's bounded LRU (:class:`bot.kernel.LruCache`): past the bound each
forgets the entry used least recently, one at a time — never everything at once, and never one in use."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

import discord
import pytest
from telegram import Update

from adapters.discord.access import FOLLOW_UP_WINDOW, MAX_REMEMBERED, LastPresses
from adapters.telegram import arrival
from adapters.telegram.arrival import ArrivalQueue
from bot.kernel import UserRef

ANE = UserRef("dc:1", "Ane")


def _press() -> discord.Interaction[Any]:
    return cast("discord.Interaction[Any]", SimpleNamespace(created_at=discord.utils.utcnow()))


def test_a_press_in_a_busy_channel_is_still_followed_up_when_one_channel_too_many_pressed() -> None:
    presses = LastPresses()
    latest = _press()
    for channel in range(MAX_REMEMBERED):
        presses.note(f"dc:{channel}", latest if channel == MAX_REMEMBERED - 1 else _press(), ANE)
    presses.note("dc:one-too-many", _press(), ANE)
    # Before, the 10,001st channel cleared every press: a post refused in any channel then told nobody.
    assert presses.take(f"dc:{MAX_REMEMBERED - 1}") == (latest, ANE)
    assert presses.take("dc:0") is None, "the channel pressed least recently is the one forgotten"
    assert presses.take("dc:1") is not None


def test_a_press_is_followed_up_once_and_only_while_its_token_lives() -> None:
    presses = LastPresses(capacity=2)
    presses.note("dc:1", _press(), ANE)
    assert presses.take("dc:1") is not None
    assert presses.take("dc:1") is None  # taken: one follow-up per press
    old = SimpleNamespace(created_at=discord.utils.utcnow() - 2 * FOLLOW_UP_WINDOW)
    presses.note("dc:2", cast("discord.Interaction[Any]", old), ANE)
    assert presses.take("dc:2") is None


async def test_update_arrivals_past_the_bound_forget_the_oldest_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrival, "_ARRIVALS_KEPT", 3)
    queue = ArrivalQueue()
    updates = [Update(update_id=n) for n in range(4)]
    for update in updates:
        queue.put_nowait(update)
        await asyncio.sleep(0.05)
    loop = asyncio.get_running_loop()
    assert queue.arrival(updates[1]) < loop.time() - 0.08, "a kept update is timed from its arrival"
    assert queue.arrival(updates[0]) == pytest.approx(loop.time(), abs=0.02), "the oldest was forgotten"
    assert queue.arrival(updates[1]) == pytest.approx(loop.time(), abs=0.02), "forgotten once handled"
