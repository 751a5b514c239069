"""Discord adapter benchmark: four members at a server table through the real discord.py client; figures only.

    python bench/discord.py [--hands N] [--paced-hands N] [--solo-hands N] [--seed N]

The production client (``adapters.discord.app.start_client``) runs against the fake Discord of the
end-to-end tests (``tests/e2e/fake_discord.py``: REST and gateway on 127.0.0.1, every request checked against
Discord's OpenAPI description), on a ``Service`` with in-process stores and seeded deals. Members open a table
with ``/mus newgame``, sit and press the components the fake holds (a seeded mix of mus, discards chosen by
toggling cards, paso, envidos, quiero/no quiero, the odd órdago); one has closed DMs and reads their hand
with "My cards", ephemerally, every hand.

1. **Throughput** (``--hands``, default 20), no pacing (``min_interval=0``): per hand, new channel messages,
   channel edits (superseded messages' components removed included), DM and ephemeral messages, interaction
   callbacks by type (4/5/6/7), REST calls by route; per interaction, the handling latency from the fake's
   dispatch to its callback and to the end of the last REST call it caused. Each press waits until its
   handler returned and the lanes are idle (``runtime.sender.flush()``): every call after it is its own.
2. **Pacing** (``--paced-hands``, default 1), production delivery (``min_interval=1.0``), members pressing as
   soon as they can: the most calls one channel got within a sliding 5 s window (Discord allows about 5) and
   within 1 s, and the shortest gap between two calls to one channel, as the fake timed their arrival.
3. **Solo** (``--solo-hands``, default 3): ``/mus newgame`` in a DM, Start, one person against the machines
   (no machine delay): DM messages and edits per hand.

Targets: p99 <= 50 ms of handling per interaction (dispatch -> last call it caused); at most 5 calls per
5 s per channel, edits included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import itertools
import logging
import os
import platform
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from adapters.discord.app import DiscordRuntime
from bot.model import TableState, TableStatus
from bot.service import Service
from engine.cards import card_name
from engine.hand import Hand
from engine.hand_types import Phase
from tests.e2e.conftest import FAST, code_of, memory_service, stamp_of
from tests.e2e.discord_harness import DiscordTable, start_discord_bot
from tests.e2e.fake_discord import Call, FakeDiscord, FakeGuild, FakeInteraction, StoredMessage

TOKEN = "bench.discord.token"
NAMES = ("Ane", "Brais", "Iker", "Uxue")
CLOSED_DMS_SEAT = 3
TARGET_P99_MS = 50.0
TARGET_PER_5S = 5
EDIT = "/channels/{channel_id}/messages/{message_id}"
Window = tuple[float, float]
#: A seeded mix of moves: mostly paso, some mus, envidos, answers and the odd órdago.
WEIGHTS = dict(nomus=4, paso=10, env2=2, env5=1, quiero=3, noquiero=4, sube2=1, ordago=0.15)


# --- measuring and playing --------------------------------------------------------------------------


@dataclass
class GcPauses:
    """How long the process stood still in full (generation 2) garbage collections."""

    pauses: list[float] = field(default_factory=list)
    began: float = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                self.began = time.perf_counter()
            else:
                self.pauses.append((time.perf_counter() - self.began) * 1e3)


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
async def running_bot(seed: int, min_interval: float, *, guild_commands: bool = True) -> AsyncIterator[Bench]:
    """The production client on a seeded in-process service; no guild commands: global ones (DMs too)."""
    async with FakeDiscord(token=TOKEN) as dc:
        with dc.point_discord_py():
            guild = dc.add_guild("Mus bench", locale="es-ES")
            ids = [guild.id] if guild_commands else []
            service = memory_service(FAST, seed=seed)
            runtime = await start_discord_bot(dc, service, guild_ids=ids, min_interval=min_interval)
            try:
                yield Bench(dc, guild, runtime)
            finally:
                await runtime.stop()


async def open_table(bench: Bench, seed: int, *, solo: bool) -> BenchTable:
    """``/mus newgame`` by four members in a new channel (one with closed DMs), or by one person in a DM with
    the bot (against the machines); the seats taken, Start: the first hand is dealt."""
    dc, guild = bench.dc, bench.guild
    users = [
        dc.add_user(name, locale="es-ES", dms_open=seat != CLOSED_DMS_SEAT, guilds=[guild])
        for seat, name in enumerate(NAMES[:1] if solo else NAMES)
    ]
    channel = dc.dm_channel(users[0]) if solo else dc.add_channel(guild, f"mus-{seed}")
    service = bench.runtime.client.handlers.service
    table = BenchTable(dc, bench.runtime, service, channel, rng=random.Random(seed))
    table.players = dict(enumerate(users))
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


# --- figures -----------------------------------------------------------------------------------------


def within(at: float, windows: list[Window]) -> bool:
    return any(begin <= at <= end for begin, end in windows)


def channel_of(call: Call) -> int | None:
    """The channel a ``/channels/{channel_id}/...`` call writes to."""
    if not (call.route_template or "").startswith("/channels/{channel_id}"):
        return None
    return int(call.path.split("/")[2])


def counts(dc: FakeDiscord, windows: list[Window]) -> Counter[str]:
    """Messages created, edits and callbacks within ``windows``, by kind."""
    found: Counter[str] = Counter()
    for m in dc.messages.values():
        if within(m.created_at, windows):
            found["ephemeral" if m.ephemeral else "dm" if m.channel.is_dm else "channel"] += 1
    for call in dc.calls:
        channel = channel_of(call)
        if call.ok and call.route_template == EDIT and within(call.at, windows) and channel is not None:
            where = "dm" if dc.channels[channel].is_dm else "channel"
            found[f"{where} edits"] += 1
            found[f"{where} bare"] += (call.json or {}).get("components") == []  # no components left
    for inter in dc.interactions:
        if inter.callback_type is not None and within(inter.dispatched_at, windows):
            found[f"callback {inter.callback_type}"] += 1
    return found


def routes(dc: FakeDiscord, windows: list[Window]) -> Counter[str]:
    found: Counter[str] = Counter()
    for call in dc.calls:
        if within(call.at, windows):
            status = "" if call.ok else f" -> {call.status} {call.code or ''}".rstrip()
            found[f"{call.method} {call.route_template or call.path}{status}"] += 1
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def spread(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5):.1f} ms · p99 {percentile(values, 0.99):.1f} ms · "
        f"max {max(values):.1f} ms · mean {statistics.fmean(values):.1f} ms"
    )


def print_clean(dc: FakeDiscord) -> None:
    """What a phase left wrong: refused calls, interactions unanswered or answered too late."""
    late = [i for i in dc.interactions if not i.answered or (i.answered_after or 0) > 3.0 or i.late_callbacks]
    print(f"  calls refused by the fake: {len(dc.rejected())}; interactions unanswered or late: {len(late)}")
    for call in dc.rejected()[:5]:
        print(f"    {call!r}")


def most_within(series: list[float], width: float) -> int:
    """The most of the sorted instants ``series`` within any ``width`` seconds (sliding)."""
    j, most = 0, 0
    for i, t in enumerate(series):
        while series[j] <= t - width:
            j += 1
        most = max(most, i - j + 1)
    return most


def per_channel_rates(calls: list[Call]) -> tuple[int, int, float, int]:
    """Most calls to one channel within any 5 s and any 1 s, the shortest gap, how many channels."""
    times: dict[int, list[float]] = defaultdict(list)
    for call in calls:
        if (channel := channel_of(call)) is not None:
            times[channel].append(call.at)
    series = [sorted(t) for t in times.values()]
    gaps = [b - a for s in series for a, b in itertools.pairwise(s)]
    worst5, worst1 = (max(most_within(s, width) for s in series) for width in (5.0, 1.0))
    return worst5, worst1, min(gaps, default=float("inf")), len(series)


# --- phases ------------------------------------------------------------------------------------------


async def throughput(hands: int, seed: int) -> None:
    collections = GcPauses()
    async with running_bot(seed, 0.0) as bench:
        gc.callbacks.append(collections)
        started = time.perf_counter()
        tables, windows, played = await play_tables(bench, hands, seed)
        elapsed = time.perf_counter() - started
        gc.callbacks.remove(collections)
    dc, samples = bench.dc, [s for t in tables for s in t.samples]
    found = counts(dc, windows)
    print(
        f"phase 1 — throughput: {played} hands, {len(samples)} interactions, {len(tables)} table(s) of four "
        f"(seat {CLOSED_DMS_SEAT} with closed DMs), {elapsed:.1f} s wall, min_interval=0"
    )
    per = defaultdict(float, {k: v / played for k, v in found.items()})
    print(f"  new channel messages per hand: {per['channel']:6.2f}")
    print(
        f"  channel edits per hand:        {per['channel edits']:6.2f}   ({per['channel bare']:.2f} of them "
        "leaving no components: superseded or finished messages)"
    )
    print(
        f"  DM messages per hand:          {per['dm']:6.2f}   (and {per['dm edits']:.2f} DM edits, "
        f"{per['dm bare']:.2f} of them leaving no components)"
    )
    print(f"  ephemeral messages per hand:   {per['ephemeral']:6.2f}")
    kinds = {4: "message", 5: "deferred", 6: "deferred update", 7: "update message"}
    shown = " · ".join(f"{k} {name} {per[f'callback {k}']:.2f}" for k, name in kinds.items())
    print(f"  interaction callbacks per hand by type: {shown}")
    print("  REST calls per hand by route:")
    by_route = routes(dc, windows)
    for route, n in sorted(by_route.items(), key=lambda kv: -kv[1]):
        print(f"    {route:<74} {n / played:6.2f}")
    total = sum(by_route.values())
    print(f"    {'total':<74} {total / played:6.2f}   ({total} calls)")
    print("  handling per interaction, from the fake's dispatch:")
    print(f"    to its callback:                 {spread([s.answered for s in samples])}")
    print(
        f"    to the end of the last call:     {spread([s.done for s in samples])}   "
        f"(target p99 <= {TARGET_P99_MS:.0f} ms)"
    )
    server, longest = [s.server for s in samples], max(collections.pauses, default=0.0)
    print(
        f"    calls per interaction: mean {statistics.fmean(s.calls for s in samples):.2f}, max "
        f"{max(s.calls for s in samples)}; of the time, the fake server's own (same process): "
        f"p50 {percentile(server, 0.5):.1f} ms, mean {statistics.fmean(server):.1f} ms; full garbage "
        f"collections: {len(collections.pauses)}, the longest {longest:.1f} ms"
    )
    print_clean(dc)


async def pacing(hands: int, seed: int) -> None:
    async with running_bot(seed, 1.0) as bench:
        dc, table = bench.dc, await open_table(bench, seed, solo=False)
        await bench.runtime.sender.flush(timeout=30.0)
        first_call, first_interaction = len(dc.calls), len(table.interactions)
        table.flush_each = False  # members press as soon as what they need is on their screen
        started = time.perf_counter()
        played = await table.play_hands(hands)
        await bench.runtime.sender.flush(timeout=60.0)
        elapsed = time.perf_counter() - started
    calls = [c for c in dc.calls[first_call:] if c.ok]
    worst5, worst1, shortest, channels = per_channel_rates(calls)
    at_table = [c for c in calls if channel_of(c) == table.channel.id]
    presses = len(table.interactions) - first_interaction
    print(
        f"phase 2 — production pacing (min_interval=1.0 s per channel): {played} hand(s), "
        f"{presses} interactions, {elapsed:.1f} s wall"
    )
    print(
        f"  most calls to one channel within a sliding 5 s window: {worst5}   "
        f"(Discord allows about {TARGET_PER_5S}); within 1 s: {worst1}"
    )
    print(
        f"  shortest gap between two calls to one channel: {shortest * 1e3:.1f} ms, at the fake's arrival "
        "times (calls the bot paces 1 s apart may arrive a fraction of a ms closer); "
        f"{channels} channels: the table's and DMs (interaction callbacks are no channel's calls)"
    )
    print(
        f"  table channel: {len(at_table)} calls for {presses} interactions "
        f"({sum(c.method == 'POST' for c in at_table)} messages, "
        f"{sum(c.method == 'PATCH' for c in at_table)} edits: intermediate states coalesced)"
    )
    print(
        f"  member on turn waiting for their buttons: p50 {percentile(table.waits, 0.5):.2f} s "
        f"· max {max(table.waits):.2f} s over {len(table.waits)} turns"
    )
    print_clean(dc)


async def solo(hands: int, seed: int) -> None:
    """One person against three machines in a DM with the bot (table and hand share the channel)."""
    async with running_bot(seed, 0.0, guild_commands=False) as bench:
        tables, windows, played = await play_tables(bench, hands, seed, solo=True)
    dc, found = bench.dc, counts(bench.dc, windows)
    print(f"phase 3 — solo game in a DM: {played} hands, {len(tables)} table(s), no machine delay, no pacing")
    print(
        f"  DM messages per hand: {found['dm'] / played:.2f} · DM edits per hand: "
        f"{found['dm edits'] / played:.2f} ({found['dm bare'] / played:.2f} leaving no components)"
    )
    print_clean(dc)


async def run(args: argparse.Namespace) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(
        f"python {platform.python_version()} · discord.py {metadata.version('discord.py')} · "
        f"{os.cpu_count()} cores · load average {load} before the run"
    )
    if args.hands > 0:
        await throughput(args.hands, args.seed)
    if args.paced_hands > 0:
        await pacing(args.paced_hands, args.seed)
    if args.solo_hands > 0:
        await solo(args.solo_hands, args.seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20, help="hands in the throughput phase (default 20)")
    parser.add_argument("--paced-hands", type=int, default=1, help="hands with production pacing (default 1)")
    parser.add_argument("--solo-hands", type=int, default=3, help="hands of a solo game in a DM (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("discord.client").setLevel(logging.ERROR)  # no voice here: PyNaCl is not needed
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
