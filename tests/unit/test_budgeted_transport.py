"""The transport that books each call in the bot's shared budget (Discord's): a strip's check is asked once
the call's turn came, and a strip no longer needed costs no call."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.delivery import BudgetedTransport, StillNeeded, Unneeded
from bot.kernel import OutMessage
from bot.store import BotRate, MemoryCallBudget


class Recorded:
    """A platform that takes every call: the strips made, in order."""

    def __init__(self) -> None:
        self.strips: list[str] = []

    def owns(self, chat: str) -> bool:
        return True

    async def send(self, chat: str, message: OutMessage) -> str:
        return "1"

    async def edit(self, chat: str, message_id: str, message: OutMessage, check: object = None) -> None:
        return None

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        self.strips.append(message_id)

    async def delete(self, chat: str, message_id: str) -> None:
        return None


async def test_a_strip_asks_its_check_after_its_turn_and_is_dropped_if_no_longer_needed() -> None:
    inner = Recorded()
    transport = BudgetedTransport(inner, MemoryCallBudget(), "dc:bot", BotRate(per_second=4))
    needed, asked = True, []
    started = time.monotonic()

    async def check() -> bool:
        asked.append(time.monotonic() - started)
        return needed

    async def gone_meanwhile() -> None:
        nonlocal needed
        await asyncio.sleep(0.1)
        needed = False

    await transport.clear_buttons("dc:1", "a", check)  # the first turn, at once: not asked (nothing waited)
    flip = asyncio.create_task(gone_meanwhile())
    with pytest.raises(Unneeded):
        await transport.clear_buttons("dc:1", "b", check)  # its turn in 0.25 s: bare by then
    await flip
    await transport.clear_buttons("dc:1", "c")  # no check: made
    assert len(asked) == 1 and asked[0] >= 0.2, asked
    assert inner.strips == ["a", "c"]
