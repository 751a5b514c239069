"""Randomized sessions on two workers, as a host runs them: any worker may get any press.

Two bot "processes" share the stores (tables, deadlines, surfaces, history, the once-only record), as two
``musbot run`` workers share Redis; each has its own Application, delivery lanes, caches and deadline loop.
The fake Bot API is polled through the first, which hands about half of the updates to the second (as a
load balancer in front of two webhook workers would). The promises of the one-worker sessions
(:mod:`tests.e2e.test_random_sessions`) hold: every press answered, no repeated private message, one live
keyboard per slot, no hidden card shown, every hand's table ending on its story.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

import pytest
from telegram import Update
from telegram.ext import ApplicationHandlerStop, ContextTypes, TypeHandler

from adapters.telegram.app import build_application
from bot.app import Service
from bot.delivery import Delivery
from bot.delivery._surfaces_memory import MemorySurfaces

from .conftest import RunningBot, memory_service, seeded, start_bot, telegram_settings_for
from .fake_telegram import FakeTelegram
from .test_random_sessions import FLOW, assert_every_promise, random_session


class BothSenders:
    """The two workers' deliveries, flushed together."""

    def __init__(self, *senders: Delivery) -> None:
        self.senders = senders

    async def flush(self, timeout: float = 10.0) -> None:
        """Wait until both workers' lanes are idle."""
        await asyncio.gather(*(sender.flush(timeout) for sender in self.senders))


@dataclasses.dataclass
class TwoWorkers(RunningBot):
    """The first worker (which polls) and the second, stopped together."""

    second: RunningBot | None = None

    @property
    def sender(self) -> BothSenders:  # type: ignore[override]
        assert self.second is not None
        return BothSenders(self.runtime.sender, self.second.runtime.sender)

    async def stop(self) -> None:
        """Stop the second worker, then the first."""
        if self.second is not None:
            await self.second.stop()
        await super().stop()


async def start_second_worker(
    tg: FakeTelegram, service: Service, surfaces: MemorySurfaces, pace: float
) -> RunningBot:
    """A worker that does not poll: its Application takes the updates put on its queue."""
    application, runtime = build_application(
        service, telegram_settings_for(tg), surfaces, rate_limiter=False, min_interval=pace,
        bot_username=tg.bot_user.username,
    )  # fmt: skip
    await application.initialize()
    await application.start()
    await runtime.start_deadlines()
    return RunningBot(tg, application, runtime, service, surfaces)


async def start_two_workers(tg: FakeTelegram, seed: int, pace: float) -> TwoWorkers:
    """Two workers on shared stores, the updates split between them at random; each paces its calls to a
    chat ``pace`` s apart (and the shared surfaces book the chat's turns for both)."""
    first_service = memory_service(FLOW, seed=seed)
    # The same stores (as two processes share Redis), its own caches and randomness.
    second_service = Service(dataclasses.replace(first_service.deps, rng_factory=seeded(seed + 7_919)))
    surfaces = MemorySurfaces()
    first = await start_bot(tg, first_service, surfaces, min_interval=pace)
    second = await start_second_worker(tg, second_service, surfaces, pace)
    split = random.Random(seed)

    async def route(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Any:
        if split.random() < 0.5:
            await second.application.update_queue.put(update)  # type: ignore[attr-defined]
            raise ApplicationHandlerStop

    first.application.add_handler(TypeHandler(Update, route), group=-2)  # type: ignore[attr-defined]
    return TwoWorkers(tg, first.application, first.runtime, first_service, surfaces, second=second)


@pytest.mark.parametrize(("seed", "pace"), [(1, 0.0), (2, 0.1)])
async def test_a_randomized_session_on_two_workers_keeps_every_promise(
    tg: FakeTelegram, bots: list[RunningBot], seed: int, pace: float
) -> None:
    workers = await start_two_workers(tg, seed, pace)
    bots.append(workers)
    table, kinds = await random_session(tg, workers, seed, hands=6)
    assert workers.second is not None
    handled = [workers.runtime.sender.stats["send"], workers.second.runtime.sender.stats["send"]]
    print(f"seed {seed}: {table.presses} presses {dict(kinds)}; messages posted by each worker {handled}")
    assert min(handled) > 0, handled  # both workers really drew
    await assert_every_promise(tg, table, kinds, hands=6, workers=2)
