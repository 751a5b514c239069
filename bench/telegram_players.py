"""The bot and the players of bench/telegram.py: the production ``Application`` on a seeded in-process
service against the fake Bot API, and the people at a table (a group of four, or fewer with machines, or one
in a private chat), who press what the fake server shows them."""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections import Counter
from dataclasses import dataclass, field, replace

from bench.players import MIX, weighted
from bot.app import Service
from bot.kernel import TableState, TableStatus
from engine.hand import Hand
from engine.hand_types import Phase
from engine.state import restore_match
from tests.e2e.conftest import FAST, RunningBot, code_of, memory_service, start_bot
from tests.e2e.fake_telegram import FakeChat, FakeTelegram, FakeUser, StoredMessage

TOKEN = "123456:BENCH-token"
BOT_USERNAME = "musbot_bench"
NAMES = ("Ane", "Brais", "Camille", "Dani")


def make_service(seed: int, machine_delay: float = 0.0) -> Service:
    """A service on in-process stores with seeded deals; machines wait ``machine_delay`` before they play."""
    return memory_service(replace(FAST, machine_delay=machine_delay), seed=seed)


async def start(
    tg: FakeTelegram, seed: int, *, min_interval: float, rate_limiter: bool, machine_delay: float = 0.0
) -> RunningBot:
    """The production ``Application`` polling the fake server, its deadline loop running."""
    service = make_service(seed, machine_delay)
    return await start_bot(tg, service, min_interval=min_interval, rate_limiter=rate_limiter)


@dataclass
class Players:
    """Four users at a group table, pressing what the fake server shows them."""

    tg: FakeTelegram
    bot: RunningBot
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
        """The table as stored and its hand."""
        table = await self.bot.service.load_table(self.table_id)
        assert table is not None and table.match is not None
        match = restore_match(table.match, random.Random(0))
        assert match.hand is not None
        return table, match.hand

    def find(self, chat: int, data: str) -> StoredMessage | None:
        """The latest message of ``chat`` with a button ``data``."""
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
        found = await self.tg.wait_for(lambda: self.find(chat, data), timeout=30.0)
        assert found is not None  # wait_for returns a truthy value
        return found

    async def press(self, user: FakeUser, message: StoredMessage, data: str, *, measure: bool) -> None:
        """Press and wait for the answer; with ``measure``, time the update until the last call it caused."""
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
        self.latencies.append(max(c.finished or 0.0 for c in caused) - queued)

    def choose(self, hand: Hand, codes: list[str]) -> str:
        """A seeded mix: mostly paso, some mus, envidos, answers and the odd órdago."""
        weights = {**MIX, "mus": 5 if hand.mus_round == 0 else 1, "ordago": 0.15}
        code = weighted(self.rng, codes, weights)
        assert code is not None, codes
        return code

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
            assert message is not None  # wait_for returns a truthy value
            self.waits.append(time.monotonic() - waited)
            codes = [code_of(d) for _, d in message.buttons if (d or "").startswith(stamp)]
            code = self.choose(hand, codes)
            await self.press(self.users[seat], message, f"{stamp}{code}", measure=measure)


async def lobby_in(tg: FakeTelegram, chat: FakeChat, button: str) -> StoredMessage:
    """Wait for the bot's first message in ``chat`` with a button whose data holds ``button`` (the lobby)."""
    lobby = await tg.wait_for(
        lambda: next(
            (m for m in tg.bot_messages(chat) if any(button in (d or "") for _, d in m.buttons)), None
        ),
        timeout=30.0,
    )
    assert lobby is not None  # wait_for returns a truthy value
    return lobby


async def open_table(
    tg: FakeTelegram, bot: RunningBot, seed: int, humans: tuple[int, ...] = (0, 1, 2, 3)
) -> Players:
    """``/newgame`` in a new group, the seats of ``humans`` taken (the others are machines), Start."""
    group = tg.add_group("Mus bench")
    users = {seat: tg.add_user(NAMES[seat], language_code="en") for seat in humans}
    players = Players(tg, bot, group, users, random.Random(seed))
    for user in users.values():
        tg.user_starts_bot(user)
    tg.user_sends(users[0], group, "/newgame")
    lobby = await lobby_in(tg, group, ".L.seat")
    players.table_id = (lobby.buttons[0][1] or "").split(".")[0]
    for seat in humans[1:]:
        data = f"{players.table_id}.L.seat{seat}"
        await players.press(users[seat], lobby, data, measure=False)
    data = f"{players.table_id}.L.start"
    await players.press(users[0], await players.on_screen(group.id, data), data, measure=False)
    await tg.wait_for(lambda: players.find(group.id, f"{players.table_id}.1.cards"), timeout=30.0)
    return players


async def open_solo(tg: FakeTelegram, bot: RunningBot, seed: int) -> Players:
    """``/newgame`` in a private chat: the solo options, then Start (one person, three machines)."""
    user = tg.add_user(NAMES[0], language_code="en")
    chat = tg.private_chat(user)
    players = Players(tg, bot, chat, {0: user}, random.Random(seed))
    tg.user_sends(user, None, "/newgame")
    lobby = await lobby_in(tg, chat, ".L.start")
    players.table_id = (lobby.buttons[0][1] or "").split(".")[0]
    await players.press(user, lobby, f"{players.table_id}.L.start", measure=False)
    await tg.wait_for(lambda: players.find(chat.id, f"{players.table_id}.1.cards"), timeout=30.0)
    return players
