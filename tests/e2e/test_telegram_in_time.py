"""A press whose work outlasts its answer time is answered first — silently, once — and its views follow
through the delivery lanes; and the update is remembered as handled even when its own time is spent (issue
24: Telegram drops an answer after 15 s; the bot answers long before).

The answer time comes from the update's arrival (:mod:`adapters.telegram.arrival`); here it is shortened, and
the work slowed down, as a Redis having a bad moment would.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from bot.app import Service
from bot.delivery import RedisSurfaces
from bot.ops import AnswerWindow, build_app

from .conftest import FAST, RunningBot, Table, assert_clean, memory_service, settings_for, start_bot
from .fake_telegram import FakeTelegram

#: An answer time of a few hundredths of a second after the arrival.
HURRIED = AnswerWindow(store=0.05, least=0.05, margin=0.05, latest=10.0)


def slowed(service: Service, seconds: float) -> None:
    """Every press takes ``seconds`` more before the service handles it."""
    press = service.press

    async def slow_press(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(seconds)
        return await press(*args, **kwargs)

    service.press = slow_press  # type: ignore[method-assign]


async def lobby_of_two(tg: FakeTelegram, bot: RunningBot) -> Table:
    """Ane opened a table in a group; Brais opened the bot and stands by."""
    group = tg.add_group("Mus")
    ane, brais = tg.add_user("Ane", language_code="en"), tg.add_user("Brais", language_code="en")
    table = Table(tg, bot, group, players={0: ane, 1: brais})
    for user in (ane, brais):
        tg.user_starts_bot(user)
    await table.settle()
    await table.command(ane, "/newgame")
    table.table_id = (table.lobby_message().buttons[0][1] or "").split(".")[0]
    return table


async def test_a_slow_press_is_answered_first_and_its_views_follow(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    service = memory_service()
    bot = await start_bot(tg, service)
    bots.append(bot)
    table = await lobby_of_two(tg, bot)
    lobby = table.lobby_message()
    bot.application.update_processor.window = HURRIED  # type: ignore[attr-defined]
    slowed(service, 0.6)
    query_id = tg.user_presses(table.players[1], lobby, f"{table.table_id}.L.seat1")
    record = tg.callbacks[query_id]
    await tg.wait_for(lambda: record.answered, timeout=5.0)
    assert record.latency is not None and record.latency < 0.5, record.latency  # before the work was done
    assert not (record.answer or {}).get("text"), record.answer  # silently: the outcome is not known yet
    await tg.wait_for(lambda: "Brais" in lobby.text, timeout=5.0)  # the seat was taken, and shown
    await table.settle()
    answers = [c for c in tg.calls("answerCallbackQuery") if c.params.get("callback_query_id") == query_id]
    assert len(answers) == 1, answers
    assert_clean(tg)


async def test_an_update_whose_time_is_spent_is_still_remembered_as_handled(
    tg: FakeTelegram, bots: list[RunningBot], redis_url: str
) -> None:
    """Marking an update handled does not share the update's budget (spent by then, it would fail at once,
    and a retried webhook update would act twice): it runs afterwards, in the background, with the client's
    own timeout."""
    prefix = f"e2e:{random.Random().getrandbits(48):012x}:"
    app = await build_app(settings_for(tg, redis_url=redis_url, redis_prefix=prefix), flow=FAST)
    bot = await start_bot(tg, app.service, RedisSurfaces(app.redis, prefix), app=app)
    bots.append(bot)
    table = await lobby_of_two(tg, bot)
    bot.application.update_processor.window = HURRIED  # type: ignore[attr-defined]
    slowed(app.service, 0.3)
    await table.press(table.players[1], table.lobby_message(), f"{table.table_id}.L.seat1")
    update_id = tg.updates[-1]["update_id"]
    key = f"{prefix}once:tg:{tg.bot_user.id}:update:{update_id}"
    for _ in range(100):  # the press was answered first: its work, then the mark, come after
        if await app.redis.get(key) == "2":  # handled (a claim is "1")
            break
        await asyncio.sleep(0.05)
    assert await app.redis.get(key) == "2"
    assert_clean(tg)
