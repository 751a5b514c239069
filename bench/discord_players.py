"""The bot and the members of bench/discord.py: the production discord.py client on a seeded in-process
service against the fake Discord, and the tables its members open (in a channel, or alone in a DM) and play
by pressing the components the fake holds, each press measured."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from adapters.discord.app import DiscordRuntime
from bench.players import MIX
from bot.app import Service
from bot.kernel import TableState, TableStatus
from engine.cards import card_name
from engine.hand import Hand
from engine.hand_types import Phase
from tests.e2e.conftest import FAST, code_of, memory_service, stamp_of
from tests.e2e.discord_harness import DiscordTable, start_discord_bot
from tests.e2e.fake_discord import FakeDiscord, FakeGuild, FakeInteraction, StoredMessage
from tests.e2e.fake_discord_limits import DiscordLimits

TOKEN = "bench.discord.token"
NAMES = ("Ane", "Brais", "Iker", "Uxue")
CLOSED_DMS_SEAT = 3
Window = tuple[float, float]
"""From when to when a table played, on the fake's clock."""
WEIGHTS = {**MIX, "ordago": 0.15}
"""A seeded mix of moves: mostly paso, some envidos, answers and the odd órdago (and mus: by the hand)."""


@dataclass
class Sample:
    """One measured interaction, in milliseconds on the fake's clock."""

    answered: float
    done: float
    calls: int
    server: float
    """Of ``done``: the fake server's own time answering the calls (spec checks included)."""


@dataclass
class BenchTable(DiscordTable):
    """A :class:`DiscordTable` that measures each press and plays a seeded mix of moves."""

    rng: random.Random = field(default_factory=random.Random)
    measure: bool = False
    flush_each: bool = True
    samples: list[Sample] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)
    """Seconds each member on turn waited for their buttons on the table."""

    def watch(self, service: Service) -> None:
        """No store hook: the harness's one replays every stored state inside the bot's own writes."""
        self.service = service

    async def answered(self, interaction: FakeInteraction) -> FakeInteraction:
        """Wait for its answer and handler (and the lanes: ``flush_each``); measured with ``measure``."""
        self.interactions.append(interaction)
        await self.dc.wait_answered(interaction, timeout=5.0)
        await self.bot.client.handlers.wait_idle()  # the callback is recorded before the handler returns
        if self.flush_each:
            await self.bot.sender.flush(timeout=30.0)
        if self.measure:
            since = interaction.dispatched_at
            caused = list(itertools.takewhile(lambda c: c.at >= since, reversed(self.dc.calls)))
            done = max(c.finished or c.at for c in caused) - since
            server = sum((c.finished or c.at) - c.at for c in caused)
            answered = interaction.answered_after or 0.0
            self.samples.append(Sample(answered * 1e3, done * 1e3, len(caused), server * 1e3))
        return interaction

    def choose(self, hand: Hand, codes: list[str]) -> str:
        """A seeded mix: mostly paso, some mus, envidos, answers and the odd órdago."""
        weights = {**WEIGHTS, "mus": 5 if hand.mus_round == 0 else 1}
        options = [c for c in codes if c in weights] or codes
        return self.rng.choices(options, [weights.get(c, 1) for c in options])[0]

    def turn_message(self, hand_no: int, stamp: str) -> StoredMessage | None:
        """The table message once it shows the turn buttons stamped ``stamp``."""
        message = self.find_table_message(hand_no)
        shown = message is not None and any(stamp_of(c) == stamp for c in message.custom_ids())
        return message if shown else None

    async def discard_all(self, table: TableState, hand: Hand) -> bool:
        """Every member still to discard toggles one or two cards, then confirms; whether anyone did."""
        pressed = False
        for seat, user in self.players.items():
            if table.seats[seat].discard_ready or len(hand.hands[seat]) < 4 or table.seats[seat].autopilot:
                continue
            pressed = True
            prefix = f"{self.table_id}.{table.hand_no}"
            for card in self.rng.sample(list(hand.hands[seat]), self.rng.choice((1, 1, 2))):
                custom_id = f"{prefix}.pick_{card_name(card)}"
                await self.press(user, await self.private_with(user, custom_id), custom_id)
            await self.press(user, await self.private_with(user, f"{prefix}.discard"), f"{prefix}.discard")
        return pressed

    async def play_hands(self, hands: int) -> int:
        """Play until ``hands`` more hands are over (or the match is); the hands played."""
        table, _ = await self.state()
        first, looked = table.hand_no, 0
        while True:
            table, match = await self.state()
            if table.status is not TableStatus.PLAYING:
                return table.hand_no - first + 1  # the hand that ended the match was played out
            if table.hand_no - first >= hands:
                return hands
            assert match is not None and match.hand is not None
            hand = match.hand
            if hand.over:
                await asyncio.sleep(0.005)
                continue
            if looked < table.hand_no:  # closed DMs: a look at one's cards, ephemerally, each hand
                looked = table.hand_no
                for user in (u for u in self.players.values() if not u.dms_open):
                    await self.dc.wait_for(
                        functools.partial(self.find_table_message, table.hand_no), timeout=30.0
                    )
                    await self.my_cards(user, table.hand_no)
                continue
            if hand.phase is Phase.DISCARD:
                if not await self.discard_all(table, hand):
                    await asyncio.sleep(0.005)  # only machines left to discard
                continue
            seat = hand.turn
            if seat not in self.players or table.seats[seat].autopilot:
                await asyncio.sleep(0.005)  # a machine's turn: played inside the last press
                continue
            stamp = f"{table.hand_no}-{len(hand.log)}"
            waited = time.monotonic()
            wanted = functools.partial(self.turn_message, table.hand_no, stamp)
            message = await self.dc.wait_for(wanted, timeout=30.0)
            assert message is not None
            self.waits.append(time.monotonic() - waited)
            ids = [c for c in message.custom_ids() if stamp_of(c) == stamp]
            code = self.choose(hand, [code_of(c) for c in ids])
            await self.press(self.players[seat], message, next(c for c in ids if code_of(c) == code))


@dataclass
class Bench:
    """The fake Discord with one server, and the production client on it."""

    dc: FakeDiscord
    guild: FakeGuild
    runtime: DiscordRuntime


@contextlib.asynccontextmanager
async def running_bot(
    seed: int, min_interval: float, *, guild_commands: bool = True, limits: DiscordLimits | None = None
) -> AsyncIterator[Bench]:
    """The production client on a seeded in-process service; no guild commands: global ones (DMs too);
    with ``limits``, the fake enforces Discord's rate limits."""
    async with FakeDiscord(token=TOKEN, limits=limits) as dc:
        with dc.point_discord_py():
            guild = dc.add_guild("Mus bench", locale="es-ES", community=True)
            ids = [guild.id] if guild_commands else []
            service = memory_service(FAST, seed=seed)
            runtime = await start_discord_bot(dc, service, guild_ids=ids, min_interval=min_interval)
            try:
                yield Bench(dc, guild, runtime)
            finally:
                await runtime.stop()


async def open_table(bench: Bench, seed: int, *, solo: bool, flush_each: bool = True) -> BenchTable:
    """``/mus newgame`` by four members in a new channel (one with closed DMs), or by one person in a DM with
    the bot (against the machines); the seats taken, Start: the first hand is dealt. Without ``flush_each``
    members go on once their interaction is handled, without waiting for every lane of the bot."""
    dc, guild = bench.dc, bench.guild
    users = [
        dc.add_user(name, locale="es-ES", dms_open=seat != CLOSED_DMS_SEAT, guilds=[guild])
        for seat, name in enumerate(NAMES[:1] if solo else NAMES)
    ]
    channel = dc.dm_channel(users[0]) if solo else dc.add_channel(guild, f"mus-{seed}")
    service = bench.runtime.client.handlers.service
    table = BenchTable(dc, bench.runtime, service, channel, rng=random.Random(seed), flush_each=flush_each)
    table.players = dict(enumerate(users))
    if not solo:  # (cards by DM are an opt-in: those with open DMs asked for them)
        await table.ask_for_dms(*(u for u in users if u.dms_open))
    created = await table.slash(users[0], "newgame")
    assert created.response is not None, created
    table.table_id = created.response.custom_ids()[0].split(".")[0]
    await table.seat_everyone()
    await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.start")
    return table


async def play_tables(
    bench: Bench, hands: int, seed: int, *, solo: bool = False
) -> tuple[list[BenchTable], list[Window], int]:
    """Tables one after the other until ``hands`` were played: the tables, when they played, the hands."""
    tables: list[BenchTable] = []
    windows: list[Window] = []
    played = 0
    while played < hands:
        table = await open_table(bench, seed + len(tables), solo=solo)
        tables.append(table)
        begin, table.measure = bench.dc.now(), True  # from the first deal (the lobby is not a hand)
        played += await table.play_hands(hands - played)
        windows.append((begin, bench.dc.now()))
    return tables, windows, played
