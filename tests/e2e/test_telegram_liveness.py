"""No chat can slow another, with the production rate limiter on (python-telegram-bot's AIORateLimiter).

A flood of commands in one group must leave every other group as quick as ever: handlers never wait on a
send (answers go through the per-chat lanes), a person who floods is told to slow down once, and ``/newgame``
during a game posts the table again at most once per interval.
"""

from __future__ import annotations

from telegram import Update

from adapters.telegram.app import build_application
from bot.store.surfaces import MemorySurfaces
from bot.throttle import Throttle

from .conftest import FAST, RunningBot, Table, memory_service, telegram_settings_for
from .fake_telegram import FakeTelegram


async def start_production_bot(tg: FakeTelegram) -> RunningBot:
    """A bot as production builds it: AIORateLimiter, one call per second per chat, the real throttle."""
    service = memory_service(FAST)
    service.deps.throttle = Throttle()
    surfaces = MemorySurfaces()
    application, runtime = build_application(
        service,
        telegram_settings_for(tg),
        surfaces,
        rate_limiter=True,
        min_interval=1.0,
        bot_username=tg.bot_user.username,
    )
    await application.initialize()
    await application.start()
    assert application.updater is not None
    await application.updater.start_polling(
        poll_interval=0, timeout=1, allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY]
    )
    await runtime.start_deadlines()
    return RunningBot(tg, application, runtime, service, surfaces)


async def test_a_flood_in_one_group_leaves_another_group_answered_at_once(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    bot = await start_production_bot(tg)
    bots.append(bot)
    noisy, quiet = tg.add_group("Noisy"), tg.add_group("Quiet")
    flooders = [tg.add_user(f"F{i}", language_code="en") for i in range(16)]
    brais, iker = tg.add_user("Brais", language_code="en"), tg.add_user("Iker", language_code="en")
    for user in (*flooders, brais, iker):
        tg.user_starts_bot(user)
    table = Table(tg, bot, quiet, players={0: brais})
    await table.command(brais, "/newgame")
    lobby = table.lobby_message()
    table.table_id = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]

    # 80 /newgame in the noisy group (16 people, 5 each, as fast as updates come), all handled...
    flood = [tg.user_sends(user, noisy, "/newgame") for _ in range(5) for user in flooders]
    last = tg.updates[-1]["update_id"]
    await tg.wait_for(
        lambda: any((c.params.get("offset") or 0) > last for c in tg.calls("getUpdates")), timeout=10.0
    )
    # ...while the noisy group's lane is still waiting out Telegram's group limit.
    assert bot.sender.flush is not None and len(flood) == 80
    record = await table.press(iker, lobby, f"{table.table_id}.L.seat1", flush=False)
    answered_in = record.answered_at - record.created  # type: ignore[operator]
    assert answered_in < 0.1, f"a press in the quiet group took {answered_in:.3f} s"
    # The noisy group gets its lobby and a few answers; the table is never posted again within the interval.
    await tg.wait_for(lambda: len(tg.group_texts(noisy)) >= 2, timeout=10.0)
    lobbies = [t for t in tg.group_texts(noisy) if t.startswith("🂠 Mus")]
    assert len(lobbies) == 1, lobbies
