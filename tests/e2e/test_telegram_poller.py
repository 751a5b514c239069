"""One process polls a bot token at a time (issue 27): two workers started without a webhook do not fight
(Telegram would answer the second poll ``409 Conflict``); the standby takes over when the poller is gone."""

from __future__ import annotations

import asyncio
import random

from adapters.telegram.app import start_telegram, stop_telegram, telegram_ready
from adapters.telegram.poller import SinglePoller
from bot.ops import build_app
from bot.store import MemoryLeases

from .conftest import FAST, assert_clean, seeded, settings_for, table_ids, telegram_settings_for
from .fake_telegram import FakeTelegram


async def test_two_workers_on_one_token_poll_one_at_a_time_and_the_standby_takes_over(
    tg: FakeTelegram, redis_url: str
) -> None:
    settings = settings_for(tg, redis_url=redis_url, redis_prefix=f"e2e:{random.getrandbits(40):010x}:")
    workers = []
    for seed in (1, 2):
        app = await build_app(settings, flow=FAST, rng_factory=seeded(seed), id_factory=table_ids())
        application, runtime = await start_telegram(
            app, settings, telegram_settings_for(tg), rate_limiter=False
        )
        workers.append((app, application, runtime))
    (_, first, a), (_, second, b) = workers
    try:
        assert a.poller is not None and b.poller is not None
        assert a.poller.polling and b.poller.standby  # one polls, the other waits
        assert first.updater.running and not second.updater.running  # type: ignore[union-attr]
        assert telegram_ready(second, b)  # a standby is a healthy worker
        group, ane = tg.add_group("Mus"), tg.add_user("Ane")
        tg.user_sends(ane, group, "/help")
        await tg.wait_for(lambda: tg.last_bot_message(group), timeout=5.0)

        # The poller stops (its process ends): the standby polls at once, and answers.
        await stop_telegram(first, a)
        await tg.wait_for(lambda: b.poller is not None and b.poller.polling, timeout=10.0)
        tg.user_sends(ane, group, "/rules")
        await tg.wait_for(lambda: len(tg.bot_messages(group)) >= 2, timeout=5.0)
    finally:
        for app, application, runtime in workers:
            if application.running:
                await stop_telegram(application, runtime)
            await app.close()
    conflicts = [c for c in tg.calls("getUpdates") if c.status == 409]
    assert conflicts == []
    assert_clean(tg)


async def test_a_poller_killed_without_a_word_is_replaced_within_its_lease() -> None:
    leases = MemoryLeases()
    events: list[str] = []

    def poller(name: str) -> SinglePoller:
        async def start() -> None:
            events.append(f"{name} polls")

        async def stop() -> None:
            events.append(f"{name} stops")

        return SinglePoller(leases, 123, start, stop, ttl=0.6)

    a, b = poller("a"), poller("b")
    await a.begin()
    await b.begin()
    assert events == ["a polls"] and b.standby
    assert a._task is not None
    a._task.cancel()  # killed: it renews nothing and releases nothing
    await asyncio.sleep(1.2)
    assert events == ["a polls", "b polls"] and b.polling
    await b.end()
    assert events[-1] == "b stops"
