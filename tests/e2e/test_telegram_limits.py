"""Telegram's flood limits (issue 21): the fake server enforces them as Telegram does, and one chat's 429
delays only that chat — never another group, never a callback answer.

Telegram answers a bot over a group's 20 messages a minute (or its ~30 calls a second) with ``429`` and
``retry_after``. python-telegram-bot's ``AIORateLimiter`` used to turn one such answer into a pause of the
whole bot; :class:`adapters.telegram.rate_limit.ChatRateLimiter` keeps the budgets and leaves a 429 to the
lane of the chat it came from.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from telegram.error import RetryAfter
from telegram.ext import ExtBot
from telegram.request import BaseRequest

from adapters.telegram.rate_limit import GROUP_BUDGET, GROUP_WINDOW, ChatRateLimiter, new_messages
from adapters.telegram.transport import TelegramTransport
from bot.delivery import NewMessages, Unneeded
from bot.store import Drawn, MemoryCallBudget, StoreUnavailable

from .conftest import RunningBot, Table, assert_clean, memory_service, start_bot
from .fake_telegram import FakeChat, FakeTelegram
from .fake_telegram_limits import TelegramLimits

TOKEN = "123:LIMITS"


async def post(tg: FakeTelegram, method: str, **params: Any) -> tuple[int, dict[str, Any]]:
    """A raw Bot API call (form-encoded, as PTB sends them)."""
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    async with aiohttp.ClientSession() as http, http.post(f"{tg.api_url}{method}", data=form) as resp:
        return resp.status, await resp.json()


@pytest.fixture
async def limited_tg() -> AsyncIterator[FakeTelegram]:
    """A fake server whose groups take 3 messages per 4 s (Telegram's rule, on a shorter clock)."""
    limits = TelegramLimits(group_messages=3, group_window=4.0, bot_per_second=30)
    async with FakeTelegram(token=TOKEN, limits=limits) as fake:
        yield fake


async def test_the_fake_refuses_a_fourth_message_in_a_group_with_retry_after(
    limited_tg: FakeTelegram,
) -> None:
    tg = limited_tg
    group, other = tg.add_group("Spam"), tg.add_group("Game")
    for n in range(3):
        status, _ = await post(tg, "sendMessage", chat_id=group.id, text=f"m{n}")
        assert status == 200
    status, body = await post(tg, "sendMessage", chat_id=group.id, text="one too many")
    assert status == 429 and body["parameters"]["retry_after"] in (3, 4), body
    assert body["description"].startswith("Too Many Requests: retry after")
    # Another group has its own budget; an edit is not a new message.
    assert (await post(tg, "sendMessage", chat_id=other.id, text="fine"))[0] == 200
    first = tg.bot_messages(group)[0]
    edited = await post(tg, "editMessageText", chat_id=group.id, message_id=first.message_id, text="edited")
    assert edited[0] == 200
    assert [c.method for c in tg.limited()] == ["sendMessage"]
    assert tg.rejected() == []  # a flood refusal is the platform's rule, not a broken call


async def test_the_fake_counts_the_bot_per_second_but_not_callback_answers() -> None:
    async with FakeTelegram(token=TOKEN, limits=TelegramLimits(bot_per_second=2)) as tg:
        ane = tg.add_user("Ane")
        tg.user_starts_bot(ane)
        group = tg.add_group("Mus")
        assert (await post(tg, "sendMessage", chat_id=group.id, text="a"))[0] == 200
        assert (await post(tg, "sendMessage", chat_id=ane.id, text="b"))[0] == 200
        status, body = await post(tg, "sendMessage", chat_id=ane.id, text="c")
        assert status == 429 and body["parameters"]["retry_after"] == 1
        # A press is answered whatever the bot sent this second.
        message = tg.bot_messages(group)[0]
        status, _ = await post(tg, "editMessageReplyMarkup", chat_id=group.id, message_id=message.message_id)
        assert status == 429
        query = tg.user_presses(ane, message, "x", check_button=False)
        assert (await post(tg, "answerCallbackQuery", callback_query_id=query))[0] == 200


class Answers(BaseRequest):
    """A Bot API that takes every call (no network): what the limiter let through, in order."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(
        self, url: str, method: str, request_data: Any = None, **_: Any
    ) -> tuple[int, bytes]:
        self.calls.append(request_data.parameters if request_data is not None else {})
        return 200, b'{"ok": true, "result": true}'


# --- the bot's limiter --------------------------------------------------------------------------------


async def test_the_limiter_never_retries_and_never_pauses_other_chats() -> None:
    limiter = ChatRateLimiter()
    calls: list[str] = []

    async def refused() -> bool:
        calls.append("refused")
        raise RetryAfter(30)

    async def fine() -> bool:
        calls.append("fine")
        return True

    with pytest.raises(RetryAfter):  # to the lane of that chat, at once: no sleep, no second try
        await asyncio.wait_for(
            limiter.process_request(refused, (), {}, "sendMessage", {"chat_id": -100}, None), 1.0
        )
    started = time.monotonic()
    await limiter.process_request(fine, (), {}, "editMessageText", {"chat_id": -200}, None)
    await limiter.process_request(fine, (), {}, "answerCallbackQuery", {"callback_query_id": "1"}, None)
    assert time.monotonic() - started < 0.5
    assert calls == ["refused", "fine", "fine"]


async def test_a_checked_call_is_made_only_if_still_needed_once_its_turn_came() -> None:
    """A strip carries a check (PTB's ``rate_limit_args``, from the transport's ``clear_buttons``): the
    limiter asks it if the bot's budget made the call wait, and makes the call only if it says so — a
    message another worker's edit left bare meanwhile costs no call."""
    limiter = ChatRateLimiter(bot_per_second=2)  # two at once, then one every 0.5 s
    bot = ExtBot("123:abc", request=Answers(), rate_limiter=limiter)
    transport = TelegramTransport(bot)
    needed, asked = True, []
    started = time.monotonic()

    async def check() -> bool:
        asked.append(time.monotonic() - started)
        return needed

    async def gone_meanwhile() -> None:
        nonlocal needed
        await asyncio.sleep(0.2)
        needed = False

    await transport.clear_buttons("tg:-100", "1")
    await transport.clear_buttons("tg:-100", "2", check)  # within the burst: no wait, not asked, made
    flip = asyncio.create_task(gone_meanwhile())
    with pytest.raises(Unneeded):
        await transport.clear_buttons("tg:-100", "3", check)  # its turn in 0.5 s: bare by then
    await flip
    assert len(asked) == 1 and asked[0] >= 0.4, asked  # (a call that did not wait: its caller just looked)
    assert [call["message_id"] for call in bot.request.calls] == [1, 2], bot.request.calls


async def test_a_group_over_its_budget_waits_while_callback_answers_and_other_groups_do_not() -> None:
    limiter = ChatRateLimiter(group_messages=2, group_window=1.0)

    async def fine() -> bool:
        return True

    async def send(chat: int) -> float:
        started = time.monotonic()
        await limiter.process_request(fine, (), {}, "sendMessage", {"chat_id": chat}, None)
        return time.monotonic() - started

    assert max([await send(-1), await send(-1)]) < 0.2  # within the budget
    third = asyncio.create_task(send(-1))  # over it: waits for the window
    await asyncio.sleep(0.05)
    assert not third.done()
    answered = time.monotonic()
    await limiter.process_request(fine, (), {}, "answerCallbackQuery", {"callback_query_id": "7"}, None)
    assert await send(-2) < 0.2 and await send(42) < 0.2  # another group, a private chat
    assert time.monotonic() - answered < 0.2
    assert await third >= 0.3


async def test_the_group_window_refuses_a_long_wait_at_once_and_is_only_a_safety_net() -> None:
    """The delivery keeps each group's budget; the limiter's own window only catches what went past it: a
    wait of a moment is waited, a longer one refused at once (the group's lane then holds its posts, not
    its edits), never held inside the call for most of a minute."""
    limiter = ChatRateLimiter(group_messages=2, group_window=30.0, max_group_wait=0.2)

    async def fine() -> bool:
        return True

    for _ in range(2):
        await limiter.process_request(fine, (), {}, "sendMessage", {"chat_id": -1}, None)
    started = time.monotonic()
    with pytest.raises(RetryAfter) as refused:
        await limiter.process_request(fine, (), {}, "sendMessage", {"chat_id": -1}, None)
    assert time.monotonic() - started < 0.1
    wait = refused.value.retry_after  # (an int, or a timedelta: PTB 22 has both)
    assert (wait if isinstance(wait, int) else wait.total_seconds()) == 30  # whole seconds, as Telegram's
    await limiter.process_request(fine, (), {}, "editMessageText", {"chat_id": -1}, None)  # edits go on
    short = ChatRateLimiter(group_messages=1, group_window=0.15, max_group_wait=0.2)
    await short.process_request(fine, (), {}, "sendMessage", {"chat_id": -1}, None)
    started = time.monotonic()
    await short.process_request(fine, (), {}, "sendMessage", {"chat_id": -1}, None)  # a moment: waited
    assert 0.1 < time.monotonic() - started < 0.5


async def test_a_store_that_does_not_answer_leaves_each_worker_its_own_count() -> None:
    """The shared budget failing (Redis down) never stops a call: the limiter counts on its own meanwhile."""

    class Down:
        async def draw(self, *args: Any, **kwargs: Any) -> Drawn:
            raise StoreUnavailable("redis is down")

    limiter = ChatRateLimiter(Down(), group_messages=1, group_window=30.0, max_group_wait=0.2)

    async def fine() -> bool:
        return True

    assert await limiter.process_request(fine, (), {}, "sendMessage", {"chat_id": -1}, None)
    with pytest.raises(RetryAfter):  # its own count of the group's window still holds
        await limiter.process_request(fine, (), {}, "sendMessage", {"chat_id": -1}, None)
    assert await limiter.process_request(fine, (), {}, "editMessageText", {"chat_id": -1}, None)


def test_a_group_has_the_delivery_budget_and_a_private_chat_none() -> None:
    assert new_messages("tg:-1001234") == GROUP_BUDGET == NewMessages(20, GROUP_WINDOW, reserve=10)
    assert GROUP_WINDOW > 60  # a margin on Telegram's minute
    assert new_messages("tg:42") is None and new_messages("dc:1") is None


# --- noisy neighbours ---------------------------------------------------------------------------------


async def spam(tg: FakeTelegram, group: FakeChat, stop: asyncio.Event) -> None:
    """Someone types commands in a group twice a second until ``stop``."""
    user = tg.add_user(f"Spammer {group.title}")
    commands = ("/help", "/leaderboard", "/newgame", "/cancel")
    n = 0
    while not stop.is_set():
        tg.user_sends(user, group, commands[n % len(commands)])
        n += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


async def test_two_spamming_groups_do_not_delay_the_presses_of_a_game() -> None:
    """Two groups flood the bot with commands, and Telegram answers each one's messages ``429, retry after
    39`` (as measured on a real group over its budget); four people play a hand in a third group meanwhile:
    every press there is answered at once, the game's messages are never refused, and each noisy group's
    lane waits its own 39 s."""
    async with FakeTelegram(token=TOKEN, limits=TelegramLimits()) as tg:  # Telegram's limits too
        bot: RunningBot = await start_bot(tg, memory_service(seed=3), rate_limiter=True)
        noisy = [tg.add_group(name) for name in ("Noisy", "Louder")]
        for group in noisy:
            tg.fail_next("sendMessage", 429, retry_after=39, chat_id=group.id)
        stop = asyncio.Event()
        spammers = [asyncio.create_task(spam(tg, group, stop)) for group in noisy]
        try:
            group = tg.add_group("Game")
            names = ("Ane", "Brais", "Camille", "Dani")
            users = {seat: tg.add_user(names[seat], language_code="en") for seat in range(4)}
            for user in users.values():
                tg.user_starts_bot(user)
            table = Table(tg, bot, group, players=users)
            tg.user_sends(users[0], group, "/newgame")  # (the noise never lets the bot settle: just wait)
            lobby = await tg.wait_for(lambda: tg.bot_messages(group) and table.lobby_message(), timeout=5.0)
            table.table_id = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]
            for seat in (1, 2, 3):
                await table.press(users[seat], lobby, f"{table.table_id}.L.seat{seat}", flush=False)
            await table.press(users[0], lobby, f"{table.table_id}.L.start", flush=False)
            await table.play(until=lambda t, m: t.hand_no >= 2, timeout=30.0, flush=False)
        finally:
            stop.set()
            await asyncio.gather(*spammers)
            await bot.stop()
        game = [r for r in tg.callbacks.values() if r.message.chat_id == group.id]
        latencies = [r.latency for r in game if r.latency is not None]
        assert len(latencies) == len(game) >= 8, game
        refused = [c for c in tg.calls("sendMessage") if c.status == 429]
        assert {c.chat_id for c in refused} == {g.id for g in noisy}, refused
        for g, first in ((g, next(c for c in refused if c.chat_id == g.id)) for g in noisy):
            later = [c for c in tg.calls("sendMessage") if c.chat_id == g.id and c.seq > first.seq]
            assert later == [], later  # that group's lane waits its 39 s
        assert tg.limited() == []  # nothing the bot sent went over Telegram's own limits
        # A pause for another group's 429 would hold a press for 39 s.
        assert max(latencies) < 2.0, sorted(latencies)[-5:]
        print(f"game presses {len(latencies)}: p50 {statistics.median(latencies) * 1000:.0f} ms")
        assert_clean(tg)


class Starved:
    """One worker's side of the bot's shared budget while that worker is starved of CPU: its turns are booked
    on time, but it hears the answers only once the stall is over (``until``, on the monotonic clock)."""

    def __init__(self, shared: MemoryCallBudget, until: float) -> None:
        self.shared = shared
        self.until = until

    async def draw(self, *args: Any, **kwargs: Any) -> Drawn:
        drawn = await self.shared.draw(*args, **kwargs)
        await asyncio.sleep(max(0.0, self.until - time.monotonic()))
        return drawn


async def test_a_worker_that_hears_its_turns_late_books_new_ones_and_the_bot_stays_under_its_rate() -> None:
    """Two workers share the bot's budget of 24 calls a second; one is starved for 0.6 s just after it booked
    a second's worth of calls. Sent at once when it wakes, those calls would reach Telegram with the other
    worker's calls of that moment: over 30 in one second, answered 429. Late calls book new turns instead."""
    async with FakeTelegram(token=TOKEN, limits=TelegramLimits(bot_per_second=30)) as tg:
        people = [tg.add_user(f"P{n}") for n in range(6)]
        for person in people:
            tg.user_starts_bot(person)
        shared = MemoryCallBudget()
        starved = ChatRateLimiter(Starved(shared, time.monotonic() + 0.6))
        steady = ChatRateLimiter(shared)
        statuses: list[int] = []

        async def send(limiter: ChatRateLimiter, n: int) -> None:
            chat_id = people[n % len(people)].id

            async def call() -> bool:
                statuses.append((await post(tg, "sendMessage", chat_id=chat_id, text=f"m{n}"))[0])
                return True

            await limiter.process_request(call, (), {}, "sendMessage", {"chat_id": chat_id}, None)

        first = [asyncio.create_task(send(starved, n)) for n in range(24)]
        await asyncio.sleep(0.05)  # the starved worker's turns are booked: the other worker's come after
        await asyncio.gather(*first, *(send(steady, n) for n in range(24, 60)))
        assert len(statuses) == 60
        assert tg.limited() == [], [(c.method, c.time) for c in tg.limited()]
