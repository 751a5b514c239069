"""The simulated people of bench/soak.py: in their group chats they open tables (``/newgame``, seats, Start)
and press what their screens show, as people do (a think time, a turn sat out now and then, a press that is
not theirs to make), each press and its answer recorded."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from bench.players import MIX, Group, weighted
from bot.i18n import LANGUAGES, translator
from bot.i18n import common as msg
from tests.e2e.fake_telegram import CallbackRecord, FakeTelegram, FakeUser, StoredMessage

NAMES = ("Ane", "Brais", "Camille")
LOOK_INTERVAL = 0.1
PRESS_WAIT = 20.0
SIT_OUT = 1 / 12
THINK = (0.3, 2.0)

UNAVAILABLE = {translator(lang).gettext(msg.STORE_UNAVAILABLE) for lang in LANGUAGES}
"""The answer "store unavailable", in every language."""


def _line_pattern(template: str) -> re.Pattern[str]:
    escaped = re.escape(template).replace(r"\{name\}", "(?P<name>.+?)").replace(r"\{s\}", r"\d+")
    return re.compile(escaped)


# The group table speaks the chat's language (Spanish unless changed), the private hand the person's: the
# "{name}'s turn" and "Discard confirmed" lines are recognised in every language.
TURN_LINES = [
    _line_pattern(translator(lang).gettext(text))
    for lang in LANGUAGES
    for text in ("{name}'s turn (⏱ {s} s)", "{name}'s turn")
]
CONFIRMED = [translator(lang).gettext("Discard confirmed: waiting for your turn.") for lang in LANGUAGES]

WEIGHTS = {**MIX, "mus": 4.0, "ordago": 0.1}


@dataclass
class Press:
    """A press made: its kind (turn, discard, lobby or a mischief), its callback query, when it was queued."""

    kind: str
    query: str
    created: float


@dataclass
class Table:
    """A table opened by the load, and what was seen of it (on the screens and as stored)."""

    id: str
    group: Group
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    ended_at: float | None = None
    version: int = 0
    state: dict[str, Any] | None = None
    signature: tuple[Any, ...] | None = None
    last_progress: float = 0.0
    longest: tuple[float, float] = (0.0, 0.0)
    """The longest gap without progress while playing: (start, seconds)."""
    stuck: list[tuple[float, float]] = field(default_factory=list)
    seen_stamps: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    """Turn buttons seen on the table message (old ones are pressed now and then)."""
    turns: dict[str, float] = field(default_factory=dict)
    """A person's turns as stored (``{table}.{hand}-{step}``) and when each began (fake server's clock)."""

    @property
    def hand_no(self) -> int:
        """The hand being played, as last stored (0 before the first deal)."""
        return 0 if self.state is None else int(self.state.get("hand_no", 0))


@dataclass
class Turn:
    """A turn a table message shows."""

    name: str
    stamp: str
    """``{table}.{hand}-{step}``."""
    codes: list[str]


def turn_of(message: StoredMessage, table_id: str) -> Turn | None:
    """Whose turn a table message shows, with its turn buttons (``None`` if it shows none)."""
    stamps: dict[str, list[str]] = {}
    for _, data in message.buttons:
        parts = (data or "").split(".")
        if len(parts) == 3 and parts[0] == table_id and "-" in parts[1]:
            stamps.setdefault(f"{parts[0]}.{parts[1]}", []).append(parts[2])
    if len(stamps) != 1:
        return None
    for line in message.text.splitlines():
        for pattern in TURN_LINES:
            found = pattern.fullmatch(line.strip())
            if found:
                stamp, codes = next(iter(stamps.items()))
                return Turn(found.group("name"), stamp, codes)
    return None


def choose(rng: random.Random, codes: list[str]) -> str:
    """A turn button to press: by ``WEIGHTS``, else any but "more"."""
    return weighted(rng, codes, WEIGHTS) or rng.choice([c for c in codes if c != "more"] or codes)


class People:
    """The groups of the load and their people, the tables they opened and every press they made."""

    def __init__(self, tg: FakeTelegram, rng: random.Random) -> None:
        self.tg = tg
        self.rng = rng
        self.groups: list[Group] = []
        self.tables: dict[str, Table] = {}
        self.presses: list[Press] = []
        self.retried_unavailable = 0
        self.sat_out = 0
        self.vanished = 0
        self.open_failures = 0
        self.stopping = False

    def make_groups(self, chats: int) -> None:
        """``chats`` groups of one to three people each, who have all opened the bot."""
        for i in range(chats):
            rng = random.Random(self.rng.random())
            people = rng.choice((1, 2, 2, 3))
            seats = [0, *rng.sample((1, 2, 3), people - 1)]
            users = {
                seat: self.tg.add_user(NAMES[n], language_code="en", last_name=f"G{i:03d}")
                for n, seat in enumerate(seats)
            }
            chat = self.tg.add_group(f"Mus soak {i}", members=list(users.values()))
            for user in users.values():
                self.tg.user_starts_bot(user)
            self.groups.append(Group(chat, users, rng))

    def lobby_of(self, group: Group) -> StoredMessage | None:
        """The group's lobby of a table it has not opened yet."""
        for message in reversed(self.tg.bot_messages(group.chat)):
            for _, data in message.buttons:
                if data and ".L.seat" in data and data.split(".")[0] not in group.tables:
                    return message
        return None

    async def open_table(self, group: Group) -> Table | None:
        """``/newgame``, seats, Start; the table once its first hand is on the group's screen."""
        creator = group.users[0]
        try:
            self.tg.user_sends(creator, group.chat, "/newgame")
            found = await self.tg.wait_for(lambda: self.lobby_of(group), timeout=60.0, interval=LOOK_INTERVAL)
            assert found is not None  # wait_for returns a truthy value
            lobby: StoredMessage = found
            table_id = (lobby.buttons[0][1] or "").split(".")[0]
            group.tables.append(table_id)
            table = Table(table_id, group, last_progress=self.tg.now())
            self.tables[table_id] = table
            for seat, user in group.users.items():
                if seat != 0:
                    await self.press(user, lobby, f"{table_id}.L.seat{seat}", "lobby")
            await self.press(creator, lobby, f"{table_id}.L.start", "lobby")
            await self.tg.wait_for(
                lambda: self.table_message(table) is not None, timeout=60.0, interval=LOOK_INTERVAL
            )
            return table
        except AssertionError:
            self.open_failures += 1
            return None

    # -- looking at the screens ------------------------------------------------------------------------------

    def table_message(self, table: Table) -> StoredMessage | None:
        """The group's latest table message of this table (the one with its "My cards" button)."""
        prefix = f"{table.id}."
        for message in reversed(self.tg.bot_messages(table.group.chat)):
            for _, data in message.buttons:
                if data and data.startswith(prefix) and data.endswith(".cards"):
                    return message
        return None

    def hand_message(self, table: Table, user: FakeUser) -> tuple[StoredMessage, list[str]] | None:
        """The person's private hand message showing discard picks for this table, and the picks."""
        prefix = f"{table.id}."
        for message in reversed(self.tg.bot_messages(user.id)):
            picks = [d for _, d in message.buttons if d and d.startswith(prefix) and ".pick_" in d]
            if picks:
                return message, picks
            if any(d and d.startswith(prefix) for _, d in message.buttons):
                return None
        return None

    # -- pressing ------------------------------------------------------------------------------------------

    async def press(
        self, user: FakeUser, message: StoredMessage, data: str, kind: str, *, check: bool = True
    ) -> CallbackRecord | None:
        """Press and wait for the answer (at most ``PRESS_WAIT``); ``None`` if the button had gone."""
        try:
            query = self.tg.user_presses(user, message, data, check_button=check)
        except ValueError:  # edited or deleted between the look and the press
            self.vanished += 1
            return None
        record = self.tg.callbacks[query]
        self.presses.append(Press(kind, query, record.created))
        with contextlib.suppress(AssertionError):
            await self.tg.wait_for(lambda: record.answered, timeout=PRESS_WAIT, interval=LOOK_INTERVAL)
        return record

    def refused_unavailable(self, record: CallbackRecord | None) -> bool:
        """Whether a press was answered "store unavailable" (people press again)."""
        return record is not None and (record.answer or {}).get("text") in UNAVAILABLE

    async def think(self, rng: random.Random) -> None:
        """A person's think time before a press."""
        await asyncio.sleep(rng.uniform(*THINK))

    async def person(self, table: Table, seat: int, user: FakeUser, rng: random.Random) -> None:
        """One person at one table: their turns on the group message, their discards on their hand."""
        done: set[str] = set()
        while not self.stopping and not table.ended.is_set():
            await asyncio.sleep(LOOK_INTERVAL)
            message = self.table_message(table)
            turn = None if message is None else turn_of(message, table.id)
            if turn is not None and turn.stamp not in table.seen_stamps:
                table.seen_stamps.append(turn.stamp)
            if turn is not None and turn.name == user.first_name and turn.stamp not in done:
                done.add(turn.stamp)
                if rng.random() < SIT_OUT:
                    self.sat_out += 1
                    continue
                await self.think(rng)
                message = self.table_message(table)
                again = None if message is None else turn_of(message, table.id)
                if self.stopping or message is None or again is None or again.stamp != turn.stamp:
                    continue
                record = await self.press(user, message, f"{turn.stamp}.{choose(rng, again.codes)}", "turn")
                if self.refused_unavailable(record):
                    self.retried_unavailable += 1
                    done.discard(turn.stamp)
                continue
            shown = self.hand_message(table, user)
            if shown is None or any(text in shown[0].text for text in CONFIRMED):
                continue
            hand, picks = shown
            key = ",".join(sorted(picks))  # the cards held: new ones after each discard
            if key in done:
                continue
            done.add(key)
            if rng.random() < SIT_OUT:
                self.sat_out += 1
                continue
            await self.think(rng)
            refused = False
            for data in rng.sample(picks, rng.choice((1, 1, 2))):
                if self.stopping or data not in [d for _, d in hand.buttons]:
                    break
                refused |= self.refused_unavailable(await self.press(user, hand, data, "discard"))
            confirm = f"{picks[0].rsplit('.', 1)[0]}.discard"

            def confirmable(hand: StoredMessage = hand, confirm: str = confirm) -> bool:
                return confirm in [d for _, d in hand.buttons]

            with contextlib.suppress(AssertionError):
                await self.tg.wait_for(confirmable, timeout=5.0, interval=LOOK_INTERVAL)
            if not self.stopping and confirmable():
                refused |= self.refused_unavailable(await self.press(user, hand, confirm, "discard"))
            if refused:
                self.retried_unavailable += 1
                done.discard(key)

    async def mischief(self, table: Table, rng: random.Random) -> None:
        """Now and then, a press that is not the presser's to make (or "My cards")."""
        people = list(table.group.users.values())
        while not self.stopping and not table.ended.is_set():
            await asyncio.sleep(rng.uniform(4.0, 10.0))
            message = self.table_message(table)
            if self.stopping or message is None:
                continue
            user = rng.choice(people)
            kind = rng.choices(("not-turn", "old", "forged", "cards"), (3, 3, 1, 2))[0]
            turn = turn_of(message, table.id)
            if kind == "not-turn":
                others = [p for p in people if turn is not None and p.first_name != turn.name]
                if turn is None or not others:
                    continue
                await self.press(rng.choice(others), message, f"{turn.stamp}.{rng.choice(turn.codes)}", kind)
            elif kind == "old":
                old = [s for s in table.seen_stamps if turn is None or s != turn.stamp]
                if not old:
                    continue
                await self.press(user, message, f"{rng.choice(old)}.paso", kind, check=False)
            elif kind == "forged":
                data = rng.choice(
                    (
                        f"{table.id}.{table.hand_no + 50}-0.paso",
                        "zzzzzzzz.1-0.paso",
                        f"{table.id}.L.seat2",
                        "not a token at all",
                        f"{table.id}.{table.hand_no}.pick_9z",
                    )
                )
                await self.press(user, message, data, kind, check=False)
            else:
                cards = next((d for _, d in message.buttons if d and d.endswith(".cards")), None)
                if cards is not None:
                    await self.press(user, message, cards, kind)

    async def play_group(self, group: Group, table: Table | None) -> None:
        """The group's tables, one after another (a finished match is followed by a new ``/newgame``)."""
        while not self.stopping:
            if table is None:
                table = await self.open_table(group)
                if table is None:
                    await asyncio.sleep(2.0)
                    continue
            tasks = [
                asyncio.create_task(self.person(table, seat, user, random.Random(group.rng.random())))
                for seat, user in group.users.items()
            ]
            tasks.append(asyncio.create_task(self.mischief(table, random.Random(group.rng.random()))))
            await asyncio.gather(*tasks)
            table = None
