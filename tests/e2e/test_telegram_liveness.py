"""No chat can slow another, with the production rate limiter on (adapters/telegram/rate_limit.py).

A flood of commands in one group must leave every other group as quick as ever: handlers never wait on a
send (answers go through the per-chat lanes), a person who floods is told to slow down once, and ``/newgame``
during a game posts the table again at most once per interval.
"""

from __future__ import annotations

import time

from bot.app import Service
from bot.app._throttle import Throttle
from bot.delivery._surfaces_memory import MemorySurfaces

from .conftest import (
    FAST,
    RunningBot,
    Table,
    assert_clean,
    code_of,
    memory_service,
    start_bot,
)
from .fake_telegram import FakeTelegram


async def start_production_bot(tg: FakeTelegram) -> RunningBot:
    """A bot as production builds it: ChatRateLimiter, one call per second per chat, the real throttle."""
    service = memory_service(FAST)
    service.deps.throttle = Throttle()
    return await start_bot(tg, service, min_interval=1.0, rate_limiter=True)


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
    # ...while the noisy group's lane is still waiting out Telegram's group limit (20 a minute).
    assert len(flood) == 80
    record = await table.press(iker, lobby, f"{table.table_id}.L.seat1", flush=False)
    answered_in = record.answered_at - record.created  # type: ignore[operator]
    noisy_lane = bot.sender._lanes[f"tg:{noisy.id}"]
    # Answered while the noisy group still waits for its messages (the old handlers, sending inline, left it
    # unanswered for good). How fast is bench/soak.py's figure; here only "not held up" is asserted.
    assert noisy_lane.pending, "the noisy group's backlog is gone: the check below proves nothing"
    assert answered_in < 1.0, f"a press in the quiet group took {answered_in:.3f} s"
    # The noisy group gets its lobby and a few answers; the table is never posted again within the interval.
    await tg.wait_for(lambda: len(tg.group_texts(noisy)) >= 2, timeout=10.0)
    lobbies = [t for t in tg.group_texts(noisy) if t.startswith("🂠 Mus")]
    assert len(lobbies) == 1, lobbies


async def crash_after_a_move(bot: RunningBot, table: Table) -> tuple[str, str]:
    """The player on turn moves; the move is saved, but the process dies before its lane edits the table
    (kill -9: what was queued is gone). Returns the stale text on screen and the button pressed."""
    state, match = await table.state()
    assert match is not None and match.hand is not None
    on_screen = table.table_message(state.hand_no)
    stale = on_screen.text
    turn = f"{table.table_id}.{state.hand_no}-{len(match.hand.log)}"
    pressed = next(d for _, d in on_screen.buttons if d and d.startswith(turn) and code_of(d) == "mus")
    bot.runtime.sender.min_interval = 60.0
    bot.runtime.sender._lanes[f"tg:{table.chat.id}"].last_call = time.monotonic()  # it just called: wait
    await table.press(table.players[match.hand.turn], on_screen, pressed, flush=False)
    await bot.runtime.sender.close()
    await bot.stop()
    assert on_screen.text == stale  # the next player does not see their turn
    return stale, pressed


async def test_an_edit_lost_in_a_crash_is_redrawn_on_a_stale_press_and_at_start_up(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    from .test_telegram_game import open_table

    service = memory_service(FAST)
    surfaces = MemorySurfaces()
    table = await open_table(tg, await start_bot(tg, service, surfaces), humans=(0, 1, 2, 3))
    state, _ = await table.state()
    on_screen = table.table_message(state.hand_no)

    # 1. A new process that did not redraw: the first press of a stale button is refused and redraws.
    stale, pressed = await crash_after_a_move(table.bot, table)
    second = await start_bot(tg, Service(service.deps), surfaces)
    bots.append(second)
    table.use(second)
    record = await table.press(table.players[0], on_screen, pressed)
    assert record.answer is not None and record.answer.get("text") in ("Already played.", "Not your turn.")
    assert on_screen.text != stale

    # 2. Another crash after a move: this time the new process redraws at start-up (as musbot run does).
    stale, _ = await crash_after_a_move(second, table)
    third = await start_bot(tg, Service(service.deps), surfaces)
    bots.append(third)
    table.use(third)
    third.runtime.sender.deliver((await third.service.redraw_recent()).messages)
    await third.runtime.sender.flush()
    assert on_screen.text != stale
    now_state, now_match = await table.state()
    assert now_match is not None and now_match.hand is not None
    turn_now = f"{table.table_id}.{now_state.hand_no}-{len(now_match.hand.log)}"
    assert any(d and d.startswith(turn_now) for _, d in on_screen.buttons), on_screen.buttons
    assert_clean(tg, allowed=lambda c: "not modified" in str(c.response))


async def test_an_update_delivered_twice_acts_once(tg: FakeTelegram, bot: RunningBot) -> None:
    from .test_telegram_game import open_table

    table = await open_table(tg, bot, humans=(0, 1), options=(), start=False)
    lobby = table.lobby_message()
    # The creator turns señas on; Telegram delivers that press twice (a retried webhook update).
    query = tg.user_presses(table.players[0], lobby, f"{table.table_id}.L.o_senas")
    tg.redeliver(tg.updates[-1])
    await tg.wait_for(lambda: tg.callbacks[query].answered, timeout=5.0)
    await table.settle()
    state, _ = await table.state()
    assert state.options.senas is True  # toggled once, not on and off again
    # A /newgame delivered twice opens one table and says nothing twice.
    other = tg.add_group("Other")
    before = len(tg.calls("sendMessage"))
    tg.user_sends(table.players[1], other, "/newgame")
    tg.redeliver(tg.updates[-1])
    await table.settle()
    sent = [c for c in tg.calls("sendMessage")[before:] if c.params.get("chat_id") == other.id]
    assert len(sent) == 1, sent
    assert_clean(tg)
