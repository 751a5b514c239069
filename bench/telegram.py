"""Telegram adapter benchmark: a 4-human group game through the real Application; prints figures only.

    python bench/telegram.py [--hands N] [--paced-hands N] [--solo-hands N] [--mixed-hands N] [--seed N]

The production ``Application`` (``adapters.telegram.app.build_application``: handlers, latest-state-wins
sender, deep links, deadline loop) runs with long polling against the fake Bot API server of the end-to-end
tests (``tests/e2e/fake_telegram.py``, aiohttp on 127.0.0.1, every call checked against the Bot API spec),
on a ``Service`` with in-process stores. Four fake users open the bot, take the seats of a group table from
``/newgame`` and play by pressing the buttons the fake server shows them (a seeded mix of mus, discards
chosen by toggling cards, paso, envidos, quiero/no quiero and the odd órdago).

Three phases:

1. **Throughput** (``--hands``, default 20): no pacing (``min_interval=0``), no rate limiter, so that every
   figure is the bot's own work. Printed first, plainly: group messages, group edits (keyboards of
   superseded messages removed included) and private messages per hand; then Bot API calls per hand by
   kind and the processing latency per update — from the moment the fake server queues the update (a
   button press) to the end of the last API call it caused (callback answer, edits, sends), p50/p99/max.
   Each press waits for the previous one to be fully delivered, so every call after a press belongs to it.
2. **Pacing** (``--paced-hands``, default 1): production delivery (``min_interval=1.0`` per chat and PTB's
   ``AIORateLimiter``), players pressing as soon as the buttons they need are on their screen. Printed: the
   most calls any one chat received within one second (sliding window, as the fake server timed them) and the
   shortest gap between two calls to the same chat.

3. **Solo** (``--solo-hands``, default 5): ``/newgame`` in a private chat, Start, one person against the
   machines. Printed: private messages, edits and removed keyboards per hand.
4. **Mixed** (``--mixed-hands``, default 10): two people and two machine seats in a group, the machines
   pausing before they play as in production. Printed: group messages and edits per hand (a run of machine
   moves is one edit).

Targets: <= 3 new group messages per hand, never more than one call (edits included) per second per chat,
p99 <= 50 ms of processing per update.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import logging
import os
import platform
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from pydantic import SecretStr
from telegram import Update

from adapters.telegram.app import TelegramRuntime, build_application
from adapters.telegram.settings import TelegramSettings
from bot.flow import FlowSettings
from bot.leaderboard import MemoryLeaderboard
from bot.model import TableState, TableStatus
from bot.service import Service, ServiceDeps
from bot.store.memory import MemoryDeadlineStore, MemoryTableStore
from bot.store.prefs import MemoryPreferences
from bot.store.surfaces_memory import MemorySurfaces
from engine.hand import Hand
from engine.hand_types import Phase
from engine.state import restore_match
from tests.e2e.fake_telegram import Call, FakeChat, FakeTelegram, FakeUser, StoredMessage

TOKEN = "123456:BENCH-token"
BOT_USERNAME = "musbot_bench"
NAMES = ("Ane", "Brais", "Camille", "Dani")
TARGET_GROUP_SENDS_PER_HAND = 3
TARGET_CALLS_PER_SECOND_PER_CHAT = 1
TARGET_P99_MS = 50.0


# --- the bot under test ------------------------------------------------------------------------------


def make_service(seed: int, machine_delay: float = 0.0) -> Service:
    seeds = itertools.count(seed * 1_000_003)
    ids = itertools.count(1)
    return Service(
        ServiceDeps(
            tables=MemoryTableStore(),
            deadlines=MemoryDeadlineStore(),
            prefs=MemoryPreferences(),
            leaderboard=MemoryLeaderboard(),
            settings=FlowSettings(
                turn_timeout=3600, machine_delay=machine_delay, next_hand_delay=0, catch_window=3.0
            ),
            rng_factory=lambda: random.Random(next(seeds)),
            id_factory=lambda: f"b{next(ids):07d}",
        )
    )


@dataclass
class Bot:
    application: object
    runtime: TelegramRuntime
    service: Service

    async def stop(self) -> None:
        app = self.application
        await self.runtime.stop_deadlines()
        if app.updater is not None and app.updater.running:  # type: ignore[attr-defined]
            await app.updater.stop()  # type: ignore[attr-defined]
        if app.running:  # type: ignore[attr-defined]
            await app.stop()  # type: ignore[attr-defined]
        await app.shutdown()  # type: ignore[attr-defined]


async def start_bot(
    tg: FakeTelegram, seed: int, *, min_interval: float, rate_limiter: bool, machine_delay: float = 0.0
) -> Bot:
    service = make_service(seed, machine_delay)
    settings = TelegramSettings(
        token=SecretStr(tg.token),
        api_base_url=f"http://127.0.0.1:{tg.port}",
        _env_file=None,  # type: ignore[call-arg]
    )
    application, runtime = build_application(
        service,
        settings,
        MemorySurfaces(),
        rate_limiter=rate_limiter,
        min_interval=min_interval,
        bot_username=BOT_USERNAME,
    )
    await application.initialize()
    await application.start()
    assert application.updater is not None
    await application.updater.start_polling(
        poll_interval=0, timeout=1, allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY]
    )
    await runtime.start_deadlines()
    return Bot(application, runtime, service)


# --- players -----------------------------------------------------------------------------------------


def code_of(data: str | None) -> str:
    return (data or "").rsplit(".", 1)[-1]


@dataclass
class Players:
    """Four users at a group table, pressing what the fake server shows them."""

    tg: FakeTelegram
    bot: Bot
    group: FakeChat
    users: dict[int, FakeUser]
    rng: random.Random
    table_id: str = ""
    latencies: list[float] = field(default_factory=list)
    presses: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    waits: list[float] = field(default_factory=list)
    """Seconds each player on turn waited for their buttons to appear on the group table."""

    async def state(self) -> tuple[TableState, Hand]:
        table = await self.bot.service.load_table(self.table_id)
        assert table is not None and table.match is not None
        match = restore_match(table.match, random.Random(0))
        assert match.hand is not None
        return table, match.hand

    def find(self, chat: int, data: str) -> StoredMessage | None:
        for message in reversed(self.tg.bot_messages(chat)):
            if data in [d for _, d in message.buttons]:
                return message
        return None

    def showing(self, cards: str, stamp: str) -> StoredMessage | None:
        """The group table message once it shows the turn buttons stamped ``stamp``."""
        message = self.find(self.group.id, cards)
        shown = message is not None and any((d or "").startswith(stamp) for _, d in message.buttons)
        return message if shown else None

    async def on_screen(self, chat: int, data: str) -> StoredMessage:
        """Wait until a message of ``chat`` shows a button with ``data`` (what a player waits for)."""
        return await self.tg.wait_for(lambda: self.find(chat, data), timeout=30.0)

    async def press(self, user: FakeUser, message: StoredMessage, data: str, *, measure: bool) -> None:
        before = len(self.tg.calls())
        queued = self.tg.now()
        query = self.tg.user_presses(user, message, data)
        record = self.tg.callbacks[query]
        await self.tg.wait_for(lambda: record.answered, timeout=30.0)
        self.presses += 1
        text = (record.answer or {}).get("text")
        if text is not None:
            self.answers[text] += 1
        if not measure:
            return
        await self.bot.runtime.sender.flush(timeout=30.0)
        caused = [c for c in self.tg.calls()[before:] if c.method != "getUpdates" and c.finished is not None]
        self.latencies.append(max(c.finished for c in caused) - queued)  # type: ignore[type-var]

    def choose(self, hand: Hand, codes: list[str]) -> str:
        """A seeded mix: mostly paso, some mus, envidos, answers and the odd órdago."""
        weights = {
            "mus": 5 if hand.mus_round == 0 else 1,
            "nomus": 4,
            "paso": 10,
            "env2": 2,
            "env5": 1,
            "quiero": 3,
            "noquiero": 4,
            "sube2": 1,
            "ordago": 0.15,
        }
        options = [c for c in codes if c in weights]
        return self.rng.choices(options, [weights[c] for c in options])[0]

    async def discard_all(self, hand_no: int, *, measure: bool) -> bool:
        """Every player toggles one or two cards on their private hand, then confirms; whether anyone did."""
        table, hand = await self.state()
        pressed = False
        for seat, user in self.users.items():
            if table.seats[seat].discard_ready or len(hand.hands[seat]) < 4:
                continue
            pressed = True
            confirm = f"{self.table_id}.{hand_no}.discard"
            prefix = f"{self.table_id}.{hand_no}.pick"

            def picks(chat: int = user.id, prefix: str = prefix) -> list[str]:
                for message in reversed(self.tg.bot_messages(chat)):
                    found = [d for _, d in message.buttons if d is not None and d.startswith(prefix)]
                    if found:
                        return found
                return []

            # Pick buttons name their card (``pick_12o``): choose among those drawn on the hand.
            cards = await self.tg.wait_for(picks, timeout=30.0)
            for data in self.rng.sample(cards, self.rng.choice((1, 1, 2))):
                await self.press(user, await self.on_screen(user.id, data), data, measure=measure)
            await self.press(user, await self.on_screen(user.id, confirm), confirm, measure=measure)
        return pressed

    async def play_hands(self, hands: int, *, measure: bool) -> int:
        """Play until ``hands`` more hands have been dealt (or the match is over); the hands played."""
        table, _ = await self.state()
        first = table.hand_no
        while True:
            table, hand = await self.state()
            if table.status is not TableStatus.PLAYING or table.hand_no - first >= hands:
                return table.hand_no - first
            if hand.over:
                await asyncio.sleep(0.005)
                continue
            if hand.phase is Phase.DISCARD:
                if not await self.discard_all(table.hand_no, measure=measure):
                    await asyncio.sleep(0.005)  # only machines left to discard: their deadlines do it
                continue
            seat = hand.turn
            assert seat is not None
            if seat not in self.users:  # a machine's turn: the bot's deadline loop plays it
                await asyncio.sleep(0.005)
                continue
            stamp = f"{self.table_id}.{table.hand_no}-{len(hand.log)}."
            cards = f"{self.table_id}.{table.hand_no}.cards"

            waited = time.monotonic()
            message = await self.tg.wait_for(functools.partial(self.showing, cards, stamp), timeout=30.0)
            self.waits.append(time.monotonic() - waited)
            codes = [code_of(d) for _, d in message.buttons if (d or "").startswith(stamp)]
            code = self.choose(hand, codes)
            await self.press(self.users[seat], message, f"{stamp}{code}", measure=measure)


async def open_table(
    tg: FakeTelegram, bot: Bot, seed: int, humans: tuple[int, ...] = (0, 1, 2, 3)
) -> Players:
    group = tg.add_group("Mus bench")
    users = {seat: tg.add_user(NAMES[seat], language_code="en") for seat in humans}
    players = Players(tg, bot, group, users, random.Random(seed))
    for user in users.values():
        tg.user_starts_bot(user)
    tg.user_sends(users[0], group, "/newgame")
    lobby = await tg.wait_for(
        lambda: next(
            (m for m in tg.bot_messages(group) if any(".L.seat" in (d or "") for _, d in m.buttons)), None
        ),
        timeout=30.0,
    )
    players.table_id = (lobby.buttons[0][1] or "").split(".")[0]
    for seat in humans[1:]:
        data = f"{players.table_id}.L.seat{seat}"
        await players.press(users[seat], lobby, data, measure=False)
    data = f"{players.table_id}.L.start"
    await players.press(users[0], await players.on_screen(group.id, data), data, measure=False)
    await tg.wait_for(lambda: players.find(group.id, f"{players.table_id}.1.cards"), timeout=30.0)
    return players


async def open_solo(tg: FakeTelegram, bot: Bot, seed: int) -> Players:
    """``/newgame`` in a private chat: the solo options, then Start (one person, three machines)."""
    user = tg.add_user(NAMES[0], language_code="en")
    chat = tg.private_chat(user)
    players = Players(tg, bot, chat, {0: user}, random.Random(seed))
    tg.user_sends(user, None, "/newgame")
    lobby = await tg.wait_for(
        lambda: next(
            (m for m in tg.bot_messages(chat) if any(".L.start" in (d or "") for _, d in m.buttons)), None
        ),
        timeout=30.0,
    )
    players.table_id = (lobby.buttons[0][1] or "").split(".")[0]
    await players.press(user, lobby, f"{players.table_id}.L.start", measure=False)
    await tg.wait_for(lambda: players.find(chat.id, f"{players.table_id}.1.cards"), timeout=30.0)
    return players


# --- figures -----------------------------------------------------------------------------------------


_KINDS = {"sendMessage": "sends", "editMessageText": "edits", "editMessageReplyMarkup": "keyboard removals"}


def classify(call: Call, group_ids: set[int]) -> str | None:
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
    worst, shortest = 0, float("inf")
    for series in times.values():
        series.sort()
        j = 0
        for i, t in enumerate(series):
            while series[j] <= t - 1.0:
                j += 1
            worst = max(worst, i - j + 1)
        shortest = min([shortest, *(b - a for a, b in itertools.pairwise(series))])
    return worst, shortest, len(times)


def print_clean(tg: FakeTelegram) -> None:
    """What a phase left wrong: calls the fake server refused, callback queries never answered."""
    print(
        f"  calls rejected by the fake server: {len(tg.rejected())}; "
        f"unanswered callback queries: {len(tg.unanswered_callbacks())}"
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def throughput(hands: int, seed: int) -> None:
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as tg:
        bot = await start_bot(tg, seed, min_interval=0.0, rate_limiter=False)
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
        bot = await start_bot(tg, seed, min_interval=0.0, rate_limiter=False)
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
        bot = await start_bot(tg, seed, min_interval=0.0, rate_limiter=False, machine_delay=0.05)
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
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as tg:
        bot = await start_bot(tg, seed, min_interval=1.0, rate_limiter=True)
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
            f"phase 2 — production pacing (min_interval=1.0 s per chat, AIORateLimiter): {played} hand(s), "
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


async def run(args: argparse.Namespace) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(f"python {platform.python_version()} · {os.cpu_count()} cores · load average {load} before the run")
    if args.hands > 0:
        await throughput(args.hands, args.seed)
    if args.paced_hands > 0:
        await pacing(args.paced_hands, args.seed)
    if args.solo_hands > 0:
        await solo(args.solo_hands, args.seed)
    if args.mixed_hands > 0:
        await mixed(args.mixed_hands, args.seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20, help="hands in the throughput phase (default 20)")
    parser.add_argument("--paced-hands", type=int, default=1, help="hands with production pacing (default 1)")
    parser.add_argument("--solo-hands", type=int, default=5, help="hands of a solo game (default 5)")
    parser.add_argument(
        "--mixed-hands", type=int, default=10, help="hands of two people and two machines (default 10)"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
