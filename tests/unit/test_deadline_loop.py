"""The deadline loop of a worker (``bot.ops._bootstrap.run_deadlines``) wakes for a deadline due sooner than
the ones it waits for — a machine's move — and sleeps on through one due later (every turn's timeout, every
lobby's): on a Redis Cluster each round looks at every shard of the deadlines."""

from __future__ import annotations

import asyncio

from service_helpers import ANE, BRAIS, GROUP, GROUP2, START, Harness, english

from bot.kernel import Outcome
from bot.ops._bootstrap import run_deadlines
from bot.store._memory import MemoryDeadlineStore
from bot.table import FlowSettings

SLOW = FlowSettings(turn_timeout=60, machine_delay=2, next_hand_delay=4, catch_window=3, lobby_timeout=900)


async def settle() -> None:
    """Let the loop run whatever a wake started."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_the_loop_wakes_for_a_sooner_deadline_only() -> None:
    deadlines = MemoryDeadlineStore()
    rounds: list[float | None] = []
    original = deadlines.next_due

    async def counted() -> float | None:
        upcoming = await original()
        rounds.append(upcoming)
        return upcoming

    deadlines.next_due = counted  # type: ignore[method-assign]
    h = Harness(deadlines=deadlines, settings=SLOW)
    await english(h)
    stop = asyncio.Event()

    async def ignore(outcome: Outcome) -> None:
        pass

    loop = asyncio.create_task(run_deadlines(h.service, ignore, stop, clock=lambda: h.now, max_sleep=30))
    try:
        await settle()
        assert rounds == [None]  # nothing scheduled: asleep
        first = await h.lobby(GROUP, ANE)  # its lobby's deadline, 900 s away: the first one, so it wakes
        await settle()
        assert rounds == [None, h.now + 900]
        h.advance(10)
        await h.lobby(GROUP2, BRAIS)  # due after the first lobby's: no reason to look again
        await settle()
        assert len(rounds) == 2
        assert (await h.press(ANE, h.token(first, "lobby", GROUP.key, "start"))).ok  # machines on 3 seats
        await settle()  # the first turn (a machine's move, or Ane's timeout) is due before either lobby's
        due = (await h.load(first)).table.due
        assert len(rounds) == 3 and due is not None and rounds[-1] == due <= h.now + 60
    finally:
        stop.set()
        await loop


async def test_a_deadline_written_while_the_loop_looked_makes_it_look_again() -> None:
    """A write that lands during the loop's round, after it read the next due time, is not missed."""
    deadlines = MemoryDeadlineStore()
    rounds: list[float | None] = []
    original = deadlines.next_due
    h = Harness(deadlines=deadlines, settings=SLOW)
    await english(h)
    late_write = asyncio.Event()

    async def racing() -> float | None:
        upcoming = await original()
        rounds.append(upcoming)
        if late_write.is_set():  # another update's write lands right after the loop looked
            late_write.clear()
            h.set_time(START - 100)
            await h.lobby(GROUP2, BRAIS)  # due 100 s before the lobby the loop just found
        return upcoming

    deadlines.next_due = racing  # type: ignore[method-assign]
    stop = asyncio.Event()

    async def ignore(outcome: Outcome) -> None:
        pass

    loop = asyncio.create_task(run_deadlines(h.service, ignore, stop, clock=lambda: h.now, max_sleep=30))
    try:
        await settle()
        late_write.set()
        await h.lobby(GROUP, ANE)
        await settle()
        assert rounds == [None, START + 900, START + 800]
    finally:
        stop.set()
        await loop
