"""Phase 5 of bench/telegram.py — noisy neighbours: a game in one group while two other groups are flooded
with commands, on Telegram's own limits; then the same with someone flooding the game's own group too.

The fake Bot API server enforces Telegram's flood limits (``TelegramLimits()``: 20 new messages a minute in
a group, about 30 calls a second for the bot; a call over them is answered ``429 retry after``); the bot runs
as production builds it (one call a second per chat, the group budget in the delivery, ``ChatRateLimiter``).
In each of two groups, people type ``/help``, ``/leaderboard``, ``/newgame``, ``/cancel`` and ``/stats``
twice a second each; in a third, four people play (bench/telegram_players.py). Printed: the game's presses
answered, the answer latency (p50, p99, max), presses answered late (over 15 s, when Telegram gives up on a
callback query) and never answered; how long the player on turn waited for their buttons; per group, the
commands typed, the messages posted (the most in any minute, and how many repeated a text the group got
within the minute before) and the 429s Telegram would have answered; what the delivery did not post.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter

from bench.figures import most_within, ms, percentile
from bench.telegram_players import BOT_USERNAME, TOKEN, open_table, start
from tests.e2e.fake_telegram import FakeChat, FakeTelegram
from tests.e2e.fake_telegram_limits import TelegramLimits

#: What the people in a noisy group type, in turn.
COMMANDS = ("/help", "/leaderboard", "/newgame", "/cancel", "/stats")
#: People flooding each noisy group (each types a command twice a second).
SPAMMERS = 2
#: Telegram stops waiting for the answer to a callback query after about 15 s.
CALLBACK_TIMEOUT = 15.0


async def spam(tg: FakeTelegram, group: FakeChat, stop: asyncio.Event) -> int:
    """:data:`SPAMMERS` people type commands in ``group`` twice a second each until ``stop``; how many."""
    people = [tg.add_user(f"{group.title or 'Spam'} {n}", language_code="en") for n in range(SPAMMERS)]
    typed = 0
    while not stop.is_set():
        for person in people:
            tg.user_sends(person, group, COMMANDS[typed % len(COMMANDS)])
            typed += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
    return typed


def group_line(tg: FakeTelegram, group: FakeChat, typed: int) -> str:
    """One group's figures: commands typed, messages posted (the most in a minute, texts repeated within a
    minute), 429s."""
    posted = [c for c in tg.calls() if c.chat_id == group.id and c.ok and c.method.startswith("send")]
    last: dict[str, float] = {}
    repeated = 0
    for call in posted:
        text = str(call.params.get("text", ""))
        repeated += call.time - last.get(text, -1e9) < 60.0
        last[text] = call.time
    refused = [c for c in tg.calls() if c.chat_id == group.id and c.status == 429]
    return (
        f"    {group.title or '?':<10} {typed:4d} commands typed · {len(posted)} messages posted, at most "
        f"{most_within(sorted(c.time for c in posted), 60.0)} in a minute (Telegram's limit 20), {repeated} "
        f"the same text again within a minute · {len(refused)} × 429"
    )


async def noisy(hands: int, seed: int) -> None:
    """The phase: the game next to two flooded groups, then flooded itself too."""
    print(
        f"phase 5 — noisy neighbours (Telegram's limits on, production pacing): {SPAMMERS} people typing "
        f"commands twice a second each in each flooded group"
    )
    await neighbours(hands, seed, flood_the_game=False)
    await neighbours(hands, seed, flood_the_game=True)


async def neighbours(hands: int, seed: int, *, flood_the_game: bool) -> None:
    """Four people play ``hands`` hands in a group while two others (and with ``flood_the_game`` theirs
    too) are flooded; the figures of the module docstring."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME, limits=TelegramLimits()) as tg:
        bot = await start(tg, seed, min_interval=1.0, rate_limiter=True)
        loud = [tg.add_group(title) for title in ("Noisy", "Louder")]
        stop = asyncio.Event()
        flood = {group.id: asyncio.create_task(spam(tg, group, stop)) for group in loud}
        started = time.perf_counter()
        try:
            table = await open_table(tg, bot, seed)
            if flood_the_game:
                flood[table.group.id] = asyncio.create_task(spam(tg, table.group, stop))
            played = await table.play_hands(hands, measure=False)
        finally:
            stop.set()
            typed = dict(zip(flood, await asyncio.gather(*flood.values()), strict=True))
            elapsed = time.perf_counter() - started
            await bot.stop()
        flooded = "flooded too" if flood_the_game else "quiet"
        print(f"  the game's group {flooded}: {played} hand(s), {elapsed:.1f} s wall")
        presses = [r for r in tg.callbacks.values() if r.message.chat_id == table.group.id]
        latencies = [r.latency for r in presses if r.latency is not None]
        late = sum(1 for s in latencies if s > CALLBACK_TIMEOUT)
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        print(
            f"    game presses answered: {len(latencies)} of {len(presses)} · answer latency p50 {ms(p50)} · "
            f"p99 {ms(p99)} · max {ms(max(latencies, default=float('nan')))} · answered late "
            f"(> {CALLBACK_TIMEOUT:.0f} s): {late} · never answered: {len(presses) - len(latencies)}"
        )
        waits = table.waits
        print(
            f"    player on turn waiting for their buttons: p50 {percentile(waits, 0.5):.2f} s · p99 "
            f"{percentile(waits, 0.99):.2f} s · max {max(waits, default=float('nan')):.2f} s over "
            f"{len(waits)} turns"
        )
        for group in (table.group, *loud):
            print(group_line(tg, group, typed.get(group.id, 0)))
        refused = Counter(c.chat_id for c in tg.calls() if c.status == 429)
        stats = bot.runtime.sender.stats
        print(
            f"    429s per chat: {dict(refused) or 'none'} (over the fake's flood limits: "
            f"{len(tg.limited())}); answers not posted: {stats['coalesced']} replaced by a newer one, "
            f"{stats['repeated']} the same within a minute, {stats['duplicates']} waiting already, "
            f"{stats['dropped']} over a lane's bound"
        )
