"""Helpers to drive :class:`bot.app.Service` in tests: a fake clock, seeded randomness, a screen.

Used by ``tests/unit/test_service.py`` (in-process stores) and ``tests/integration/test_service_redis.py``
(Redis stores). A :class:`Harness` wraps one service (one "worker"); several harnesses may share stores.
Every outcome that goes through the harness is recorded: ``log`` keeps every message, ``screen`` the latest
message of each slot for each chat or user, as an adapter would show it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from bot.app import Service, ServiceDeps
from bot.kernel import Button, ChatRef, Outcome, OutMessage, TableState, UserRef, parse_token
from bot.leaderboard import LeaderboardStore, MemoryLeaderboard
from bot.screens import card_label
from bot.store import DeadlineStore, PreferencesStore, TableStore
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._ports import StoredTable
from bot.store._prefs import MemoryPreferences
from bot.table import FlowSettings
from engine.match import Match
from engine.state import restore_match

ANE = UserRef("tg:1", "Ane", "en")
BRAIS = UserRef("tg:2", "Brais", "en")
CAMILLE = UserRef("tg:3", "Camille", "en")
DANI = UserRef("tg:4", "Dani", "en")
OUTSIDER = UserRef("tg:99", "Zuri", "en")
GROUP = ChatRef("tg:-100", False, "Test group")
GROUP2 = ChatRef("tg:-200", False, "Other group")

ZERO = FlowSettings(machine_delay=0, next_hand_delay=0)
"""Machines play and hands are dealt inline, inside each command."""
START = 1_000_000.0


def id_sequence(prefix: str) -> Callable[[], str]:
    """Table ids ``{prefix}0000001``… (8 characters of ``[a-z0-9]``)."""
    counter = itertools.count(1)
    width = 8 - len(prefix)
    return lambda: f"{prefix}{next(counter):0{width}d}"


def code_of(token: str) -> str:
    """The code of a token (``seat0``, ``paso``…)."""
    return token.rsplit(".", 1)[-1]


def stamp_of(token: str) -> str:
    """The stamp of a token."""
    return token.split(".")[1]


def buttons_of(messages: Iterable[OutMessage]) -> list[Button]:
    """Every button of these messages."""
    return [b for m in messages for row in m.buttons for b in row]


@dataclass
class Loaded:
    """A table as stored, parsed."""

    stored: StoredTable
    table: TableState
    match: Match | None

    @property
    def version(self) -> int:
        return self.stored.version

    @property
    def turn(self) -> int | None:
        hand = None if self.match is None else self.match.hand
        return None if hand is None else hand.turn

    def user_on_turn(self) -> str | None:
        seat = self.turn
        return None if seat is None else self.table.seats[seat].user


@dataclass
class Harness:
    """One service with a fake clock and seeded randomness, plus a record of what it showed."""

    tables: TableStore = field(default_factory=lambda: MemoryTableStore())
    deadlines: DeadlineStore = field(default_factory=MemoryDeadlineStore)
    prefs: PreferencesStore = field(default_factory=MemoryPreferences)
    leaderboard: LeaderboardStore | None = field(default_factory=MemoryLeaderboard)
    settings: FlowSettings = ZERO
    seed: int = 1
    id_prefix: str = "t"
    clock: list[float] = field(default_factory=lambda: [START])
    """Shared (a list) so that several workers can run on the same fake time."""
    log: list[OutMessage] = field(default_factory=list)
    screen: dict[tuple[str, str, str], OutMessage] = field(default_factory=dict)
    service: Service = field(init=False)

    def __post_init__(self) -> None:
        seeds = itertools.count(self.seed * 100_003)
        self.ids = id_sequence(self.id_prefix)
        self.issued: list[str] = []

        def next_id() -> str:
            table_id = self.ids()
            self.issued.append(table_id)
            return table_id

        self.deps = ServiceDeps(
            tables=self.tables,
            deadlines=self.deadlines,
            prefs=self.prefs,
            leaderboard=self.leaderboard,
            settings=self.settings,
            clock=lambda: self.clock[0],
            rng_factory=lambda: random.Random(next(seeds)),
            id_factory=next_id,
        )
        self.service = Service(self.deps)

    # --- time ----------------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.clock[0]

    def advance(self, seconds: float) -> float:
        self.clock[0] += seconds
        return self.clock[0]

    def set_time(self, moment: float) -> None:
        self.clock[0] = moment

    # --- recording -----------------------------------------------------------------------------------

    def record(self, outcome: Outcome) -> Outcome:
        assert isinstance(outcome, Outcome), outcome
        for m in outcome.messages:
            self.log.append(m)
            self.screen[(m.table, m.slot, m.chat or m.user or "")] = m
        return outcome

    def records(self, outcomes: list[Outcome]) -> list[Outcome]:
        for o in outcomes:
            self.record(o)
        return outcomes

    def shown(self, table: str, slot: str, to: str) -> OutMessage | None:
        """The latest message of ``slot`` shown to a chat or user key."""
        return self.screen.get((table, slot, to))

    def on_screen(self, table: str, slot: str, to: str) -> list[Button]:
        m = self.shown(table, slot, to)
        return [] if m is None else buttons_of([m])

    def token(self, table: str, slot: str, to: str, code: str) -> str:
        """The token of the button with ``code`` in the latest ``slot`` message shown to ``to``.

        ``pickN`` stands for the N-th card's discard button (those buttons name their card: ``pick_12o``).
        """
        if code.startswith("pick") and code[4:].isdigit():
            picks = [b.token for b in self.on_screen(table, slot, to) if code_of(b.token).startswith("pick_")]
            if int(code[4:]) < len(picks):
                return picks[int(code[4:])]
        for b in self.on_screen(table, slot, to):
            if code_of(b.token) == code:
                return b.token
        raise AssertionError(f"no {code!r} button in {slot} for {to}: {self.on_screen(table, slot, to)}")

    def turn_tokens(self, table: str, chat: str) -> list[str]:
        """Turn-action tokens on the group table (stamp ``hand-step``)."""
        return [b.token for b in self.on_screen(table, "table", chat) if "-" in stamp_of(b.token)]

    # --- commands ------------------------------------------------------------------------------------

    async def new_table(self, chat: ChatRef, user: UserRef) -> Outcome:
        return self.record(await self.service.new_table(chat, user))

    async def press(self, user: UserRef, token: object) -> Outcome:
        return self.record(await self.service.press(user, token))

    async def fire_due(self, now: float | None = None) -> list[Outcome]:
        return self.records(await self.service.deadlines.fire_due(now))

    async def fire(self, key: str) -> Outcome:
        return self.record(await self.service.deadlines.fire(key))

    async def load(self, table_id: str) -> Loaded:
        stored = await self.tables.load(table_id)
        assert stored is not None, f"table {table_id} is not stored"
        table = TableState.model_validate_json(stored.data)
        match = None if table.match is None else restore_match(table.match, random.Random(0))
        return Loaded(stored, table, match)

    async def lobby(self, chat: ChatRef, creator: UserRef, *others: tuple[UserRef, int]) -> str:
        """A lobby in ``chat`` with ``creator`` at seat 0 and ``others`` at their seats; its table id."""
        o = await self.new_table(chat, creator)
        assert o.ok, o.answer
        table_id = o.table
        assert table_id is not None
        for user, seat in others:
            joined = await self.press(user, self.token(table_id, "lobby", chat.key, f"seat{seat}"))
            assert joined.ok, joined.answer
        return table_id

    async def started(
        self, chat: ChatRef, creator: UserRef, *others: tuple[UserRef, int], **options: bool
    ) -> str:
        """A started table (``senas=True`` / ``single=True`` set the options first); its id."""
        table_id = await self.lobby(chat, creator, *others)
        if options.get("senas"):
            assert (await self.press(creator, self.token(table_id, "lobby", chat.key, "o_senas"))).ok
        if options.get("single"):
            assert (await self.press(creator, self.token(table_id, "lobby", chat.key, "o_mode"))).ok
        o = await self.press(creator, self.token(table_id, "lobby", chat.key, "start"))
        assert o.ok, o.answer
        return table_id

    async def wait_for_human(self, table_id: str, *, limit: int = 200) -> Loaded:
        """Fire deadlines (advancing the clock to each) until a human is on turn and not on autopilot."""
        for _ in range(limit):
            state = await self.load(table_id)
            seat = state.turn
            if seat is not None:
                s = state.table.seats[seat]
                if s.user is not None and not s.autopilot:
                    return state
            assert state.table.due is not None, "nothing pending"
            self.set_time(max(self.now, state.table.due))
            await self.fire_due()
        raise AssertionError("no human turn came")


def users_by_key(*users: UserRef) -> dict[str, UserRef]:
    return {u.key: u for u in users}


def all_labels(match: Match) -> set[str]:
    """Labels of every card held now or at the deal of the current hand, by any seat."""
    hand = match.hand
    assert hand is not None
    cards = {c for h in hand.hands for c in h} | {c for h in hand.initial_hands for c in h}
    return {card_label(c) for c in cards}


def seat_labels(match: Match, seat: int) -> set[str]:
    hand = match.hand
    assert hand is not None
    return {card_label(c) for c in hand.hands[seat]}


def iter_tokens(messages: Iterable[OutMessage]) -> Iterator[str]:
    for b in buttons_of(messages):
        parse_token(b.token)  # every rendered token follows the grammar
        yield b.token


async def english(h: Harness, *chats: ChatRef) -> None:
    """Set the chats' language to English (the default is Spanish), so that answers read as msgids."""
    for chat in chats or (GROUP, GROUP2):
        await h.prefs.set_language(chat.key, "en")


async def human_step(
    h: Harness, table_id: str, chat: ChatRef, users: dict[str, UserRef], rng: random.Random
) -> bool:
    """One move of the game: the human on turn presses a random legal button (discarding their first
    card in the discard phase); machine turns and deals are fired by advancing the clock. False once over."""
    from bot.kernel import TableStatus
    from engine.hand_types import Phase

    state = await h.load(table_id)
    if state.table.status is not TableStatus.PLAYING:
        return False
    assert state.match is not None and state.match.hand is not None
    hand = state.match.hand
    seat = hand.turn
    human = None if seat is None else state.table.seats[seat]
    if hand.over or human is None or human.user is None or human.autopilot:
        assert state.table.due is not None, f"nothing pending: {state.table.due_key}"
        h.set_time(max(h.now, state.table.due))
        await h.fire_due()
        return True
    user = users[human.user]
    if hand.phase is Phase.DISCARD:
        o = await h.press(user, h.token(table_id, "hand", user.key, "pick0"))
        assert o.ok, o.answer
        o = await h.press(user, h.token(table_id, "hand", user.key, "discard"))
        assert o.ok, o.answer
        return True
    tokens = h.turn_tokens(table_id, chat.key)
    assert tokens, f"no turn buttons on screen for {user.name}"
    o = await h.press(user, rng.choice(sorted(tokens)))
    assert o.ok, o.answer
    return True


async def snapshot(h: Harness, table_id: str) -> tuple[int, str]:
    """The stored version and data of a table: a refused press must leave both unchanged."""
    stored = await h.tables.load(table_id)
    assert stored is not None
    return stored.version, stored.data
