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
from bot.store import CallBudget, MemoryCallBudget

from .conftest import RunningBot, memory_service, seeded, start_bot, telegram_settings_for
from .fake_telegram import MESSAGE_NOT_MODIFIED, FakeTelegram
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
    tg: FakeTelegram,
    service: Service,
    surfaces: MemorySurfaces,
    pace: float,
    *,
    rate_limiter: bool = False,
    calls: CallBudget | None = None,
) -> RunningBot:
    """A worker that does not poll: its Application takes the updates put on its queue."""
    application, runtime = build_application(
        service, telegram_settings_for(tg), surfaces, rate_limiter=rate_limiter, min_interval=pace,
        bot_username=tg.bot_user.username, calls=calls,
    )  # fmt: skip
    await application.initialize()
    await application.start()
    await runtime.start_deadlines()
    return RunningBot(tg, application, runtime, service, surfaces)


async def start_two_workers(
    tg: FakeTelegram,
    seed: int,
    pace: float,
    *,
    rate_limiter: bool = False,
    calls: tuple[CallBudget | None, CallBudget | None] = (None, None),
) -> TwoWorkers:
    """Two workers on shared stores, the updates split between them at random; each paces its calls to a
    chat ``pace`` s apart (and the shared surfaces book the chat's turns for both). With ``rate_limiter``,
    each draws its calls from its budget in ``calls`` (one budget twice: shared, as in Redis)."""
    first_service = memory_service(FLOW, seed=seed)
    # The same stores (as two processes share Redis), its own caches and randomness.
    second_service = Service(dataclasses.replace(first_service.deps, rng_factory=seeded(seed + 7_919)))
    surfaces = MemorySurfaces()
    first = await start_bot(
        tg, first_service, surfaces, min_interval=pace, rate_limiter=rate_limiter, calls=calls[0]
    )
    second = await start_second_worker(
        tg, second_service, surfaces, pace, rate_limiter=rate_limiter, calls=calls[1]
    )
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


@pytest.mark.parametrize("seed", [3])
async def test_two_workers_on_telegrams_limits_draw_from_one_budget_and_keep_every_promise(
    limited_tg: FakeTelegram, bots: list[RunningBot], seed: int
) -> None:
    """The same on two workers with the production rate limiter, Telegram's flood limits enforced, and one
    budget of calls for both (as in Redis): nothing goes over the bot's limits, and hardly an edit is
    answered "not modified" (each worker knows what the other drew on a slot)."""
    tg = limited_tg
    shared = MemoryCallBudget()
    workers = await start_two_workers(tg, seed, 0.1, rate_limiter=True, calls=(shared, shared))
    bots.append(workers)
    table, kinds = await random_session(tg, workers, seed, hands=4)
    await assert_every_promise(tg, table, kinds, hands=4, workers=2)
    assert tg.limited() == []  # the bot kept within Telegram's limits
    edits = [c for c in tg.calls() if c.method.startswith("edit")]
    not_modified = [c for c in tg.rejected() if MESSAGE_NOT_MODIFIED in (c.description or "")]
    print(f"seed {seed}: {table.presses} presses, {len(edits)} edits, {len(not_modified)} not modified")
    assert len(not_modified) <= max(2, len(edits) // 50), not_modified
