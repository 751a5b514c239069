"""The transport that books each call in the bot's shared budget (Discord's): a strip's check is asked once
the call's turn came, and a strip no longer needed costs no call."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.delivery import BudgetedTransport, StillNeeded, Unneeded
from bot.kernel import OutMessage
from bot.store import BotRate, ChatWindow, Drawn, MemoryCallBudget
from bot.store._calls import MAX_LATE


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


async def test_a_look_at_the_turn_that_answers_late_books_a_new_turn_rather_than_send_late() -> None:
    """The check counts in the call's lateness: a check slower than :data:`~bot.store.MAX_LATE` (a starved
    worker, a slow store) books the call a new turn, where it is asked again — the call never goes late on
    top of the other workers' calls of that moment."""
    inner, draws = Recorded(), []

    class Counted(MemoryCallBudget):
        async def draw(
            self, bot: str, rate: BotRate, chat: str | None = None, window: ChatWindow | None = None
        ) -> Drawn:
            drawn = await super().draw(bot, rate, chat, window)
            draws.append(drawn)
            return drawn

    transport = BudgetedTransport(inner, Counted(), "dc:bot", BotRate(per_second=10))
    await transport.clear_buttons("dc:1", "a")  # the first turn, at once
    asked = 0

    async def slow_once() -> bool:
        nonlocal asked
        asked += 1
        await asyncio.sleep(MAX_LATE + 0.05 if asked == 1 else 0)
        return True

    await transport.clear_buttons("dc:1", "b", slow_once)  # waits 0.1 s; asked, too slowly: a new turn
    assert (len(draws), asked, inner.strips) == (3, 2, ["a", "b"]), (draws, asked)
