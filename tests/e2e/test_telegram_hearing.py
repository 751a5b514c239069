"""A deaf bot does not look healthy (issue 27): readiness follows whether Telegram still answers, and what
Telegram reports of the webhook."""

from __future__ import annotations

import datetime as dtm
import logging
from types import SimpleNamespace

import pytest
from prometheus_client import REGISTRY

from adapters.telegram.app import telegram_ready
from adapters.telegram.hearing import Hearing, check_webhook

from .conftest import RunningBot
from .fake_telegram import FakeTelegram


async def test_a_bot_that_stops_hearing_telegram_is_not_ready_and_is_again_once_it_hears(
    tg: FakeTelegram, bot: RunningBot, caplog: pytest.LogCaptureFixture
) -> None:
    hearing = bot.runtime.hearing
    await tg.wait_for(hearing.ready, timeout=5.0)
    assert telegram_ready(bot.application, bot.runtime)  # type: ignore[arg-type]
    heard = REGISTRY.get_sample_value("mus_platform_last_heard_timestamp_seconds", {"platform": "telegram"})
    assert heard is not None and heard > 0
    hearing.within = 1.0
    tg.fail_next("getUpdates", 502, times=10_000)  # Telegram unreachable (a proxy's bad gateway)
    await tg.wait_for(lambda: not hearing.ready(), timeout=5.0)
    assert not telegram_ready(bot.application, bot.runtime)  # type: ignore[arg-type]
    tg._failures.clear()  # reachable again: the next poll is answered
    await tg.wait_for(hearing.ready, timeout=40.0)
    assert telegram_ready(bot.application, bot.runtime)  # type: ignore[arg-type]
    said = [r.getMessage() for r in caplog.records if r.name == "adapters.telegram.hearing"]
    assert said == [
        "Telegram does not answer (polling again until it does): Internal Server Error",
        "Telegram answers again",
    ]  # once per outage, no traceback (the test fails on any logged traceback)


def webhook_info(pending: int, error_seconds_ago: float | None, message: str | None) -> SimpleNamespace:
    now = dtm.datetime.now(dtm.UTC)
    when = None if error_seconds_ago is None else now - dtm.timedelta(seconds=error_seconds_ago)
    return SimpleNamespace(pending_update_count=pending, last_error_date=when, last_error_message=message)


class FakeBot:
    def __init__(self) -> None:
        self.info = webhook_info(0, None, None)

    async def get_webhook_info(self) -> SimpleNamespace:
        return self.info


async def test_a_webhook_telegram_cannot_reach_makes_the_bot_not_ready_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot, hearing = FakeBot(), Hearing()
    hearing.heard()
    await check_webhook(bot, hearing)  # type: ignore[arg-type]
    assert hearing.ready()
    bot.info = webhook_info(7, 5.0, "SSL error {error:14094412:SSL routines}")
    with caplog.at_level(logging.WARNING, logger="adapters.telegram.hearing"):
        await check_webhook(bot, hearing)  # type: ignore[arg-type]
        await check_webhook(bot, hearing)  # type: ignore[arg-type]
    assert not hearing.ready() and "SSL error" in (hearing.webhook_error or "")
    said = [r.getMessage() for r in caplog.records if "cannot deliver" in r.getMessage()]
    assert len(said) == 1 and "(7 waiting)" in said[0]
    assert REGISTRY.get_sample_value("mus_telegram_webhook_pending_updates") == 7
    bot.info = webhook_info(0, 600.0, "SSL error")  # an old error: delivered again since
    await check_webhook(bot, hearing)  # type: ignore[arg-type]
    assert hearing.ready()


def test_hearing_ages() -> None:
    now = [100.0]
    hearing = Hearing(within=30.0, clock=lambda: now[0])
    assert not hearing.ready()  # nothing heard yet
    hearing.heard()
    now[0] += 30.0
    assert hearing.ready()
    now[0] += 0.1
    assert not hearing.ready()
