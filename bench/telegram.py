"""Telegram adapter benchmark: a 4-human group game through the real Application; prints figures only.

    python bench/telegram.py [--hands N] [--paced-hands N] [--solo-hands N] [--mixed-hands N]
                             [--noisy-hands N] [--seed N]

The production ``Application`` (``adapters.telegram.app.build_application``: handlers, latest-state-wins
sender, deep links, deadline loop) runs with long polling against the fake Bot API server of the end-to-end
tests (``tests/e2e/fake_telegram.py``, aiohttp on 127.0.0.1, every call checked against the Bot API spec),
on a ``Service`` with in-process stores. Four fake users open the bot, take the seats of a group table from
``/newgame`` and play by pressing the buttons the fake server shows them (a seeded mix of mus, discards
chosen by toggling cards, paso, envidos, quiero/no quiero and the odd órdago).

Five phases:

1. **Throughput** (``--hands``, default 20): no pacing (``min_interval=0``), no rate limiter, so that every
   figure is the bot's own work. Printed first, plainly: group messages, group edits (keyboards of
   superseded messages removed included) and private messages per hand; then Bot API calls per hand by
   kind and the processing latency per update — from the moment the fake server queues the update (a
   button press) to the end of the last API call it caused (callback answer, edits, sends), p50/p99/max.
   Each press waits for the previous one to be fully delivered, so every call after a press belongs to it.
2. **Pacing** (``--paced-hands``, default 1): production delivery (``min_interval=1.0`` per chat, the group's
   budget and ``ChatRateLimiter``), players pressing as soon as the buttons they need are on their screen.
   Printed: the most calls any one chat received within one second (sliding window, as the fake server timed
   them) and the shortest gap between two calls to the same chat.

3. **Solo** (``--solo-hands``, default 5): ``/newgame`` in a private chat, Start, one person against the
   machines. Printed: private messages, edits and removed keyboards per hand.
4. **Mixed** (``--mixed-hands``, default 10): two people and two machine seats in a group, the machines
   pausing before they play as in production. Printed: group messages and edits per hand (a run of machine
   moves is one edit).
5. **Noisy neighbours** (``--noisy-hands``, default 3): the fake server with Telegram's flood limits on, two
   groups flooded with commands and a game in a third; then the same with the game's group flooded too
   (bench/telegram_noisy.py). Printed: the game's presses answered, answer latency p50/p99, answered late
   (> 15 s) and never, the player on turn's wait for their buttons; per group, messages posted (the most in
   a minute, texts repeated within one) and 429s; what the delivery did not post.

Targets: <= 3 new group messages per hand, never more than one call (edits included) per second per chat,
p99 <= 50 ms of processing per update; next to noisy groups, every press answered within a second and no
429.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.figures import most_within, percentile, shortest_gap
from bench.machine import about_machine
from bench.phases import parse_phases, run_phases
from bench.telegram_noisy import noisy
from bench.telegram_players import BOT_USERNAME, TOKEN, Players, open_solo, open_table, start
from tests.e2e.fake_telegram import Call, FakeTelegram

TARGET_GROUP_SENDS_PER_HAND = 3
TARGET_CALLS_PER_SECOND_PER_CHAT = 1
TARGET_P99_MS = 50.0


_KINDS = {"sendMessage": "sends", "editMessageText": "edits", "editMessageReplyMarkup": "keyboard removals"}


def classify(call: Call, group_ids: set[int]) -> str | None:
    """The kind of a call that went through: ``group sends``, ``private edits``, ``callback answers``…"""
    if not call.ok:
        return None
    if call.method == "answerCallbackQuery":
        return "callback answers"
    if call.method not in _KINDS:
        return None
    where = "group" if call.chat_id in group_ids else "private"
    return f"{where} {_KINDS[call.method]}"


def print_per_hand(counts: Counter[str], played: int) -> None:
    """The three figures that matter first, plainly; then every kind of call."""
    group_edits = counts["group edits"] + counts["group keyboard removals"]
    private = counts["private sends"]
    print(f"  group messages per hand:   {counts['group sends'] / played:6.2f}")
    print(
        f"  group edits per hand:      {group_edits / played:6.2f}   "
        f"({counts['group edits'] / played:.2f} texts, {counts['group keyboard removals'] / played:.2f} "
        "keyboards of superseded messages removed)"
    )
    print(f"  private messages per hand: {private / played:6.2f}")
    print("  Bot API calls per hand:")
    for kind in (
        "group sends",
        "group edits",
        "group keyboard removals",
        "private sends",
        "private edits",
        "private keyboard removals",
        "callback answers",
    ):
        note = (
            f"   (target <= {TARGET_GROUP_SENDS_PER_HAND} new group messages per hand)"
            if kind == "group sends"
            else ""
        )
        print(f"    {kind:<25} {counts[kind] / played:6.2f}{note}")
    total = sum(counts.values())
    print(f"    {'total':<25} {total / played:6.2f}   ({total} calls)")


def per_chat_rates(calls: list[Call]) -> tuple[int, float, int]:
    """The most calls one chat got within any one second, the shortest gap between two, and the chats."""
    times: dict[object, list[float]] = {}
    for call in calls:
        if call.chat_id is not None and call.method != "getUpdates" and call.ok:
            times.setdefault(call.chat_id, []).append(call.time)
    series = [sorted(s) for s in times.values()]
    worst = max((most_within(s, 1.0) for s in series), default=0)
    return worst, min((shortest_gap(s) for s in series), default=float("inf")), len(times)


def print_clean(tg: FakeTelegram) -> None:
    """What a phase left wrong: calls the fake server refused, callback queries never answered."""
    print(
        f"  calls rejected by the fake server: {len(tg.rejected())}; "
        f"unanswered callback queries: {len(tg.unanswered_callbacks())}"
    )


async def throughput(hands: int, seed: int) -> None:
    """Four people at group tables, no pacing: calls per hand and the processing per update."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as tg:
        bot = await start(tg, seed, min_interval=0.0, rate_limiter=False)
        try:
            played = 0
            players: list[Players] = []
            start_seq = 0
            started = time.perf_counter()
            while played < hands:
                table = await open_table(tg, bot, seed + len(players))
                players.append(table)
                if len(players) == 1:
                    await bot.runtime.sender.flush()
                    start_seq = len(tg.calls())  # count from the first deal (the lobby is not a hand)
                played += await table.play_hands(hands - played, measure=True)
                with contextlib.suppress(TimeoutError):
                    await bot.runtime.sender.flush()
            elapsed = time.perf_counter() - started
        finally:
            await bot.stop()
        groups = {p.group.id for p in players}
        counts = Counter(k for c in tg.calls()[start_seq:] if (k := classify(c, groups)) is not None)
        latencies = [s * 1e3 for p in players for s in p.latencies]
        presses = sum(p.presses for p in players)
        answers = sum((p.answers for p in players), Counter())
        print(
            f"phase 1 — throughput: {played} hands, {presses} button presses, {len(players)} table(s), "
            f"{elapsed:.1f} s wall, no pacing, no rate limiter"
        )
        shown = ", ".join(f"{text!r} x{n}" for text, n in answers.most_common())
        print(f"  callback answers with a text (lobby included): {shown or 'none'}")
        print_per_hand(counts, played)
        print("  processing per update (fake server queues the press -> end of the last API call it caused):")
        print(
            f"    p50 {percentile(latencies, 0.5):.1f} ms · p99 {percentile(latencies, 0.99):.1f} ms · "
            f"max {max(latencies):.1f} ms · mean {statistics.fmean(latencies):.1f} ms over {len(latencies)} "
            f"updates   (target p99 <= {TARGET_P99_MS:.0f} ms)"
        )
        rejected = tg.rejected()
        unanswered = tg.unanswered_callbacks()
        print(
            f"  calls rejected by the fake server: {len(rejected)}; "
            f"unanswered callback queries: {len(unanswered)}"
        )
        for call in rejected[:5]:
            print(f"    {call!r}")


async def solo(hands: int, seed: int) -> None:
    """A solo game in a private chat (the table and the hand share one chat); no pacing."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as tg:
        bot = await start(tg, seed, min_interval=0.0, rate_limiter=False)
        try:
            played, tables, start_seq = 0, 0, 0
            while played < hands:
                table = await open_solo(tg, bot, seed + tables)
                tables += 1
                if tables == 1:
                    await bot.runtime.sender.flush()
                    start_seq = len(tg.calls())
                played += await table.play_hands(hands - played, measure=False)
                with contextlib.suppress(TimeoutError):
                    await bot.runtime.sender.flush()
        finally:
            await bot.stop()
        counts = Counter(k for c in tg.calls()[start_seq:] if (k := classify(c, set())) is not None)
        print(f"phase 3 — solo game in a private chat: {played} hands, {tables} table(s), no pacing")
        print(
            f"  private messages per hand: {counts['private sends'] / played:6.2f} · private edits per hand: "
            f"{counts['private edits'] / played:6.2f} · keyboards removed per hand: "
            f"{counts['private keyboard removals'] / played:.2f}"
        )
        print_clean(tg)


async def mixed(hands: int, seed: int) -> None:
    """Two people and two machines in a group, machines pausing before they play: edits per hand."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as tg:
        bot = await start(tg, seed, min_interval=0.0, rate_limiter=False, machine_delay=0.05)
        try:
            table = await open_table(tg, bot, seed, humans=(0, 1))
            await bot.runtime.sender.flush()
            start_seq = len(tg.calls())
            played = await table.play_hands(hands, measure=False)
            with contextlib.suppress(TimeoutError):
                await bot.runtime.sender.flush()
            state = await bot.service.load_table(table.table_id)
        finally:
            await bot.stop()
        calls = tg.calls()[start_seq:]
        counts = Counter(k for c in calls if (k := classify(c, {table.group.id})) is not None)
        actions = 0 if state is None else state.hand_no
        print(
            f"phase 4 — a group of two people and two machines (machines pause before playing): "
            f"{played} hands, {table.presses} presses by the people, {actions} hands dealt"
        )
        print(
            f"  group messages per hand: {counts['group sends'] / played:6.2f} · group edits per hand: "
            f"{counts['group edits'] / played:6.2f}   (a run of machine moves is one edit)"
        )
        print_clean(tg)


async def pacing(hands: int, seed: int) -> None:
    """Four people at a group table, production pacing: the calls each chat gets per second."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as tg:
        bot = await start(tg, seed, min_interval=1.0, rate_limiter=True)
        try:
            table = await open_table(tg, bot, seed)
            await asyncio.sleep(1.0)
            start_seq = len(tg.calls())
            started = time.perf_counter()
            played = await table.play_hands(hands, measure=False)
            with contextlib.suppress(TimeoutError):
                await bot.runtime.sender.flush(timeout=30.0)
            elapsed = time.perf_counter() - started
        finally:
            await bot.stop()
        calls = tg.calls()[start_seq:]
        counts = Counter(k for c in calls if (k := classify(c, {table.group.id})) is not None)
        worst, shortest, chats = per_chat_rates(calls)
        group_calls = counts["group sends"] + counts["group edits"]
        print(
            f"phase 2 — production pacing (min_interval=1.0 s per chat, ChatRateLimiter): {played} hand(s), "
            f"{table.presses} presses, {elapsed:.1f} s wall"
        )
        print(
            f"  shortest gap between two calls to one chat: {shortest * 1e3:.1f} ms = at most "
            f"{1 / shortest:.3f} calls/s per chat   "
            f"(target <= {TARGET_CALLS_PER_SECOND_PER_CHAT} per second); "
            f"{chats} chats"
        )
        print(
            f"  most calls to one chat within a sliding 1 s window: {worst} "
            "(strict, at the fake server's arrival "
            "times: two calls paced 1 s apart by the bot can arrive a fraction of a ms closer)"
        )
        print(
            f"  group: {group_calls} calls for {table.presses} presses "
            f"({counts['group sends']} sends, {counts['group edits']} edits: intermediate states coalesced); "
            f"private: {counts['private sends']} sends, {counts['private edits']} edits"
        )
        print(
            f"  player on turn waiting for their buttons on the group table: p50 "
            f"{percentile(table.waits, 0.5):.2f} s · max {max(table.waits):.2f} s "
            f"over {len(table.waits)} turns"
        )
        print_clean(tg)


def main() -> None:
    """Parse the command line and run the phases asked for."""
    args = parse_phases(
        __doc__.splitlines()[0],
        solo_default=5,
        solo_help="hands of a solo game (default 5)",
        more=[
            ("--mixed-hands", 10, "hands of two people and two machines (default 10)"),
            ("--noisy-hands", 3, "hands of a game next to two groups flooded with commands (default 3)"),
        ],
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    phases = [
        (args.hands, throughput),
        (args.paced_hands, pacing),
        (args.solo_hands, solo),
        (args.mixed_hands, mixed),
        (args.noisy_hands, noisy),
    ]
    asyncio.run(run_phases(about_machine(), phases, args.seed))


if __name__ == "__main__":
    main()
