"""The load generator of bench/scale.py: it plays Telegram's part for the workers (each update POSTed to a
worker's webhook, round-robin), opens a table in each group and plays it by its four people, one press at a
time, a legal move read from the table as stored; every press and its answer recorded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass

import aiohttp

from bench.players import MIX, Group, weighted
from bench.procs import Worker
from bot.kernel import TableState, TableStatus, action_code, pick_code
from bot.screens._labels import QUICK_AMOUNTS
from bot.store._redis_store import RedisTableStore
from engine.actions import ActionKind
from engine.errors import MusError
from engine.hand import Hand, Phase
from engine.record import HandRecord, apply_entry, replay
from tests.e2e.fake_telegram import JSON, CallbackRecord, FakeChat, FakeTelegram, FakeUser, StoredMessage
from tests.e2e.fake_telegram_limits import TelegramLimits

TOKEN = "123456:SCALE-token"
BOT_USERNAME = "musbot_scale"
NAMES = ("Ane", "Brais", "Camille", "Dani")
ANSWER_WAIT = 16.0
"""Seconds a press waits for its answer (the fake server refuses answers after 15 s, as Telegram does)."""
POLL = 0.02
"""Seconds between two reads of a table that waits for the bot (the next deal)."""
STUCK_PRESSES = 20
"""A table whose stored version stays the same over this many presses in a row is left alone (and counted)."""
WEIGHTS = {**MIX, "mus": 6.0, "ordago": 0.1}


class ScaleTelegram(FakeTelegram):
    """The fake server; each ``answerCallbackQuery`` also wakes the press waiting for it (no polling)."""

    def __init__(self) -> None:
        # Telegram's flood limits, as Telegram enforces them: 30 calls a second per bot, 20 new messages a
        # minute per group (a 429 with retry_after beyond).
        super().__init__(token=TOKEN, bot_username=BOT_USERNAME, limits=TelegramLimits())
        self.waiters: dict[str, asyncio.Future[None]] = {}

    async def _answer_callback_query(self, params: JSON) -> bool:
        try:
            return await super()._answer_callback_query(params)
        finally:
            waiter = self.waiters.pop(str(params.get("callback_query_id")), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)


@dataclass
class Press:
    """A press POSTed to a worker, and its callback query."""

    sent: float
    """When the POST began (the fake server's clock)."""
    record: CallbackRecord


def choose(rng: random.Random, codes: list[str]) -> str:
    """A turn button to press: by ``WEIGHTS``, else any."""
    return weighted(rng, codes, WEIGHTS) or rng.choice(codes)


class HandCache:
    """The generator's copy of each table's hand, brought up to date by the entries added since it last read
    the table (a press adds one or two), not replayed from the deal at every press as ``restore_match``
    would: the bench's own cost per action, which the CPU split reports, stays the bench's, not the bot's."""

    def __init__(self) -> None:
        self._hands: dict[str, tuple[HandRecord, int, Hand]] = {}

    def hand(self, table_id: str, state: TableState) -> Hand | None:
        """The hand of ``state``'s match, as stored (``None`` between hands)."""
        record = None if state.match is None else state.match.hand
        if record is None:
            self._hands.pop(table_id, None)
            return None
        cached = self._hands.get(table_id)
        if cached is not None and _same_deal(cached[0], record) and cached[1] <= len(record.actions):
            _, applied, hand = cached
            try:
                for entry in record.actions[applied:]:
                    apply_entry(hand, entry)
            except MusError:
                hand = replay(record, random.Random(0))
        else:
            hand = replay(record, random.Random(0))
        self._hands[table_id] = (record, len(record.actions), hand)
        return hand


def _same_deal(seen: HandRecord, now: HandRecord) -> bool:
    """Whether ``now`` continues the hand ``seen`` recorded: the same deal and reshuffles."""
    return (seen.mano, seen.scores, seen.hands, seen.reshuffles) == (
        now.mano,
        now.scores,
        now.hands,
        now.reshuffles,
    )


class Load:
    """The groups, their tables and their people; the presses made and what went wrong with them."""

    def __init__(self, tg: ScaleTelegram, workers: list[Worker], secret: str, in_flight: int) -> None:
        self.tg = tg
        self.workers = workers
        self.secret = secret
        self.groups: list[Group] = []
        self.tables: dict[str, Group] = {}
        self.presses: list[Press] = []
        self.slots = asyncio.Semaphore(in_flight)
        self.next_worker = 0
        self.post_errors: Counter[str] = Counter()
        self.reads = 0
        """Reads of a stored table (counted apart from the workers' Redis commands)."""
        self.stopping = False
        self.stuck = 0
        self.matches_over = 0
        self.session: aiohttp.ClientSession | None = None
        self.store: RedisTableStore | None = None
        self.hands = HandCache()

    # -- talking to the workers ------------------------------------------------------------------------------

    async def post(self, update: JSON) -> bool:
        """POST an update to the next worker (round-robin); whether it took it (HTTP 200)."""
        assert self.session is not None
        worker = self.workers[self.next_worker % len(self.workers)]
        self.next_worker += 1
        headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": self.secret}
        try:
            async with self.session.post(worker.url, data=json.dumps(update), headers=headers) as response:
                await response.read()
                if response.status == 200:
                    return True
                self.post_errors[f"HTTP {response.status}"] += 1
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self.post_errors[type(exc).__name__] += 1
        return False

    async def send(self, user: FakeUser, chat: FakeChat | None, text: str) -> None:
        """``user`` writes ``text``; the update it makes (if the bot gets one) is POSTed."""
        count = len(self.tg.updates)
        self.tg.user_sends(user, chat, text)
        for update in self.tg.updates[count:]:  # taken before any await: only this message's update
            await self.post(update)

    def screen(self, chat: FakeChat | int) -> StoredMessage | None:
        """The message a press is made on: the bot's latest in the chat, else the latest of anyone (the
        workers' lanes may not have sent anything there yet; the bot only looks at the chat)."""
        messages = self.tg.messages_in(chat)
        return next((m for m in reversed(messages) if m.from_bot), messages[-1] if messages else None)

    async def press(self, user: FakeUser, message: StoredMessage, data: str) -> CallbackRecord | None:
        """Press (a button of ``message``) and wait for the answer; ``None`` if it could not be pressed."""
        async with self.slots:
            count = len(self.tg.updates)
            try:
                query = self.tg.user_presses(user, message, data, check_button=False)
            except ValueError:  # the message was deleted in between
                return None
            update = self.tg.updates[count]
            record = self.tg.callbacks[query]
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.tg.waiters[query] = waiter
            sent = self.tg.now()
            if await self.post(update):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter, ANSWER_WAIT)
            self.tg.waiters.pop(query, None)
            self.presses.append(Press(sent, record))
            return record

    # -- tables ----------------------------------------------------------------------------------------------

    def make_groups(self, tables: int, rng: random.Random) -> None:
        """``tables`` groups of four people."""
        for i in range(tables):
            users = {
                seat: self.tg.add_user(NAMES[seat], language_code="en", last_name=f"S{i:03d}")
                for seat in range(4)
            }
            chat = self.tg.add_group(f"Mus scale {i}", members=list(users.values()))
            self.groups.append(Group(chat, users, random.Random(rng.random())))

    async def open_table(self, group: Group) -> str | None:
        """``/newgame``, three seats taken, Start; the new table's id (``None`` if it never came).

        The lobby is found in Redis (the chat's index entry), not on the group's screen: with hundreds of
        welcome messages queued behind PTB's rate limiter, the screen would take many seconds to show it. A
        seat press that came before that person's ``/start`` was handled (another worker) is answered with a
        deep link and pressed again.
        """
        assert self.store is not None
        creator = group.users[0]
        await self.send(creator, group.chat, "/newgame")
        table_id = None
        deadline = time.monotonic() + 60.0
        while table_id is None or table_id in group.tables:
            if time.monotonic() > deadline or self.stopping:
                return None
            await asyncio.sleep(POLL)
            table_id = await self.store.table_for_chat(f"tg:{group.chat.id}")
        group.tables.append(table_id)
        self.tables[table_id] = group
        while time.monotonic() < deadline and not self.stopping:
            loaded = await self.load(table_id)
            if loaded is not None and loaded[1].status is not TableStatus.LOBBY:
                return table_id
            message = self.screen(group.chat)
            if loaded is None or message is None:
                await asyncio.sleep(POLL)
                continue
            seats = loaded[1].seats
            missing = [s for s in (1, 2, 3) if seats[s].user != f"tg:{group.users[s].id}"]
            for seat in missing:
                await self.press(group.users[seat], message, f"{table_id}.L.seat{seat}")
            if not missing:
                await self.press(creator, message, f"{table_id}.L.start")
            await asyncio.sleep(POLL)
        return None

    async def load(self, table_id: str) -> tuple[int, TableState] | None:
        """The table's stored version and state."""
        assert self.store is not None
        self.reads += 1
        stored = await self.store.load(table_id)
        return None if stored is None else (stored.version, TableState.model_validate_json(stored.data))

    def next_press(self, group: Group, table_id: str, state: TableState) -> tuple[FakeUser, int, str] | None:
        """(who, in which chat, what) to press next at this table; ``None`` while the bot has to act."""
        if state.status is not TableStatus.PLAYING or state.match is None:
            return None
        hand = self.hands.hand(table_id, state)
        if hand is None or hand.over:
            return None
        if hand.phase is Phase.DISCARD:
            waiting = [s for s in range(4) if not state.seats[s].discard_ready and len(hand.hands[s]) == 4]
            if not waiting:
                return None
            picker = hand.turn if hand.turn in waiting else waiting[0]
            assert picker is not None
            pick = pick_code(group.rng.choice(hand.hands[picker]))
            code = "discard" if state.seats[picker].discard_pick else pick
            return group.users[picker], group.users[picker].id, f"{table_id}.{state.hand_no}.{code}"
        seat = hand.turn
        if seat is None:
            return None
        codes = []
        for action in hand.legal_actions(seat):
            turn_code = action_code(action)
            quick = action.kind not in (ActionKind.ENVIDO, ActionKind.SUBE) or action.amount in QUICK_AMOUNTS
            if turn_code is not None and quick:
                codes.append(turn_code)
        if not codes:
            return None
        stamp = f"{state.hand_no}-{len(hand.log)}"
        return group.users[seat], group.chat.id, f"{table_id}.{stamp}.{choose(group.rng, codes)}"

    async def play(self, group: Group, table_id: str | None) -> None:
        """The group's tables, one press at a time, until the run stops."""
        # Presses made since the table's stored version last changed, and that version.
        unchanged, last_version = 0, -1
        while not self.stopping:
            if table_id is None:
                table_id = await self.open_table(group)
                if table_id is None:
                    await asyncio.sleep(1.0)
                continue
            loaded = await self.load(table_id)
            state = None if loaded is None else loaded[1]
            if state is not None and state.status in (TableStatus.FINISHED, TableStatus.CANCELLED):
                self.matches_over += 1
                table_id = None
                continue
            if loaded is not None and loaded[0] != last_version:
                unchanged, last_version = 0, loaded[0]
            if unchanged >= STUCK_PRESSES:  # presses that change nothing: leave the table alone
                self.stuck += 1
                return
            planned = None if state is None else self.next_press(group, table_id, state)
            if planned is None:
                await asyncio.sleep(POLL)
                continue
            user, chat, data = planned
            message = self.screen(chat) or self.screen(group.chat)
            if message is None:
                await asyncio.sleep(POLL)
                continue
            await self.press(user, message, data)
            unchanged += 1

    async def hands_dealt(self) -> int:
        """The hands dealt at every table opened."""
        total = 0
        for table_id in list(self.tables):
            with contextlib.suppress(Exception):
                loaded = await self.load(table_id)
                total += 0 if loaded is None else loaded[1].hand_no
        return total
