"""Randomized sessions on Discord: three members who asked for their cards by DM (one whose DMs are closed)
and a machine, pressing what people do.

Besides the right buttons they press components of older versions of any message they saw (a client that
has not caught up), doubled taps that reach the bot together, buttons of tables they do not play at, forged
custom ids, "My cards" again and again, "More…" and its menu, and type ``/mus newgame`` mid-game. Whatever
happens, what members would notice must hold:

- every interaction is answered once, within 3 s; every request follows Discord's spec; no traceback;
- a member gets a new direct message only with new cards (never a copy of the one before); the one whose
  DMs are closed is told so once, ephemerally;
- at most one message per table and slot shows live components in a channel (no live button on a
  superseded message);
- no hidden card where others see it;
- every hand that ends is counted in the channel, and its table keeps its story with no component left.
"""

from __future__ import annotations

import asyncio
import collections
import random
import string
import time
from collections.abc import AsyncIterator

import pytest

from adapters.discord.app import DiscordRuntime
from bot.kernel import TableState, TableStatus
from bot.table import FlowSettings
from engine.cards import card_name
from engine.hand_types import Phase
from engine.match import Match

from .conftest import code_of, memory_service, slot_of, stamp_of
from .discord_harness import DiscordTable, audit_no_card_leaks, ever_ids, start_discord_bot
from .fake_discord import FakeDiscord, FakeInteraction, FakeUser, StoredMessage
from .fake_discord_limits import DiscordLimits
from .private_messages import repeated_private_messages

JUNK = string.ascii_letters + string.digits + ".-_:"
FLOW = FlowSettings(turn_timeout=3600, machine_delay=0.05, next_hand_delay=0.05, catch_window=1.0)


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        with fake.point_discord_py():
            yield fake


def forged(rng: random.Random, table_id: str, hand_no: int) -> str:
    """Custom ids no component of ours carries: mutated tokens, other tables, junk, fake menus."""
    return rng.choice(
        [
            f"{table_id}.{hand_no}-{rng.randrange(99)}.env{rng.randrange(100)}",
            f"{table_id}.{hand_no}.pick_13o",
            f"{table_id}.{hand_no + 5}.cards",
            f"zzzzzzzz.{hand_no}.cards",
            f"{table_id}.L.seat{rng.randrange(4)}",
            "".join(
                rng.choice(string.ascii_letters + string.digits + ".-_:")
                for _ in range(rng.randrange(1, 100))
            ),
            f"{table_id}.{hand_no}-0.sena_ciego",
            f"{table_id}.{hand_no}.catch{rng.randrange(9)}",
            f"menu:{rng.randrange(10)}",
        ]
    )


async def double_tap(table: DiscordTable, user: FakeUser, message: StoredMessage, custom_id: str) -> None:
    """Two presses of one component that reach the bot together."""
    taps = [table.dc.press(user, message, custom_id) for _ in range(2)]
    for tap in taps:
        await table.answered(tap)


async def random_session(
    dc: FakeDiscord, runtime: DiscordRuntime, seed: int, hands: int
) -> tuple[DiscordTable, collections.Counter[str]]:
    """Play ``hands`` hands the way the module docstring says; the table and how many presses of each kind."""
    rng = random.Random(seed)
    kinds: collections.Counter[str] = collections.Counter()
    guild = dc.add_guild("Mus club", locale="en-US")
    channel = dc.add_channel(guild, "mus")
    users = [dc.add_user(name, guilds=[guild]) for name in ("Ane", "Brais", "Iker")]
    users[2].dms_open = False
    outsider = dc.add_user("Olatz", guilds=[guild])
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel)
    await table.ask_for_dms(*users)
    table = await DiscordTable.open(dc, runtime, channel, users)
    await table.seat_everyone()
    for code in ("o_senas", "start"):
        await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.{code}")
    everyone = [*users, outsider]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state, match = await table.state()
        if state.status is not TableStatus.PLAYING or state.hand_no > hands:
            break
        assert match is not None and match.hand is not None
        hand = match.hand
        seen = dc.channel_messages(channel) + [m for u in users for m in table.private_messages(u)]
        roll = rng.random()
        if roll < 0.12:  # a component of any version of a message, by anyone (a client not caught up)
            message = rng.choice(seen)
            ids = sorted(c for c in ever_ids(message) if not c.startswith("-."))  # (not the language picker)
            if ids:
                owner = [u for u in users if u.id == message.ephemeral_for]
                who = owner[0] if owner else rng.choice(everyone)  # only its owner sees an ephemeral
                await table.answered(dc.press(who, message, rng.choice(ids)))
                kinds["old"] += 1
            continue
        live = table.find_table_message(state.hand_no)
        if roll < 0.18 and live is not None:  # forged
            await table.answered(
                dc.press(rng.choice(everyone), live, forged(rng, table.table_id, state.hand_no))
            )
            kinds["forged"] += 1
            continue
        if roll < 0.24 and live is not None:  # "My cards", again
            cards = f"{table.table_id}.{state.hand_no}.cards"
            if cards in live.custom_ids():
                who = rng.choice(everyone)
                shown = await table.press(who, live, cards)
                assert shown.ephemeral, shown
                kinds["cards"] += 1
            continue
        if roll < 0.27:  # /mus newgame mid-game: the table is posted again, the old copy closed
            await table.slash(rng.choice(users), "newgame")
            continue
        if roll < 0.32:  # a seña, if one is offered (a double tap sometimes)
            for user in users:
                offered = [
                    (m, c) for m in table.private_messages(user) for c in m.custom_ids() if ".sena_" in c
                ]
                if offered:
                    message, custom_id = offered[-1]
                    if rng.random() < 0.5:
                        await double_tap(table, user, message, custom_id)
                    else:
                        await table.press(user, message, custom_id)
                    break
            continue
        seat = hand.turn
        if hand.over or seat is None or seat not in table.players or state.seats[seat].autopilot:
            await asyncio.sleep(0.02)  # a machine, a deal: the deadline loop
            continue
        if hand.phase is Phase.DISCARD:
            ready = [s for s in table.players if not state.seats[s].discard_ready and len(hand.hands[s]) == 4]
            if ready:
                who = rng.choice(ready)
                picked = set(state.seats[who].discard_pick)
                free = [i for i, card in enumerate(hand.hands[who]) if card_name(card) not in picked]
                picks = sorted(rng.sample(free, min(len(free), rng.randint(1, 3)))) if free else []
                await table.discard(who, picks)
            else:
                await asyncio.sleep(0.02)
            continue
        stamp = f"{state.hand_no}-{len(hand.log)}"

        def turn_ids(hand_no: int = state.hand_no, stamp: str = stamp) -> list[str]:
            message = table.find_table_message(hand_no)
            return [] if message is None else [c for c in message.custom_ids() if stamp_of(c) == stamp]

        ids = await dc.wait_for(turn_ids, timeout=5.0)
        message = table.find_table_message(state.hand_no)
        assert message is not None
        user = table.players[seat]
        choice = rng.choice(ids)
        if code_of(choice) == "more":  # every amount, privately (DM, or ephemerally for closed DMs)
            await table.press(user, message, choice)
            private = [
                m for m in table.private_messages(user) if any(stamp_of(c) == stamp for c in ever_ids(m))
            ]
            assert private, table.private_messages(user)
            amounts = [
                c for c in ever_ids(private[-1]) if (stamp_of(c) == stamp and ".env" in c) or ".sube" in c
            ]
            await table.press(user, private[-1], rng.choice(amounts))
        elif rng.random() < 0.15:
            await double_tap(table, user, message, choice)
            kinds["doubled"] += 1
        else:
            await table.press(user, message, choice)
        kinds["turn"] += 1
    else:
        raise AssertionError("the session did not finish in time")
    # A short session may roll no old or forged press: one of each now, on the first message with components.
    first = next(m for m in dc.channel_messages(channel) if ever_ids(m))
    if not kinds["old"]:
        await table.answered(dc.press(rng.choice(users), first, sorted(ever_ids(first))[0]))
        kinds["old"] += 1
    if not kinds["forged"]:
        await table.answered(dc.press(outsider, first, forged(rng, table.table_id, state.hand_no)))
        kinds["forged"] += 1
    state, _ = await table.state()
    if state.status is TableStatus.PLAYING:
        # The deal that ended the loop may still be on its way to the lanes (the deadline loop hands its
        # views over after its write): wait until the hand's table is posted, then for every lane.
        await dc.wait_for(lambda: table.find_table_message(state.hand_no), timeout=5.0)
    await table.settle()
    return table, kinds


def assert_one_live_message_per_slot(dc: FakeDiscord) -> int:
    """In every channel at most one message per (table, slot) shows components; returns how many do."""
    count = 0
    for channel in dc.channels.values():
        live: dict[tuple[str, str], list[StoredMessage]] = {}
        for message in dc.channel_messages(channel):
            for key in {slot_of(c) for c in message.custom_ids()}:
                live.setdefault(key, []).append(message)
        for key, messages in live.items():
            if key[1] != "other":
                assert len(messages) == 1, f"{len(messages)} live messages for {key}: {messages}"
                count += 1
    return count


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_randomized_discord_session_keeps_every_promise(dc: FakeDiscord, seed: int) -> None:
    runtime = await start_discord_bot(dc, memory_service(FLOW, seed=seed))
    try:
        table, kinds = await random_session(dc, runtime, seed, hands=5)
    finally:
        await runtime.stop()
    assert_every_promise(dc, table, kinds, await table.state())


def assert_every_promise(
    dc: FakeDiscord,
    table: DiscordTable,
    kinds: collections.Counter[str],
    stored: tuple[TableState, Match | None],
) -> None:
    """What the module docstring promises, after a session that left the table in ``stored``."""
    state, _ = stored
    # The session really pressed old, forged and right components; a member decided in every
    # hand that ended (one machine cannot end a hand alone). How many presses a hand takes is the machines'
    # pace and the cards' (an órdago accepted at once ends a hand in three).
    assert {"old", "forged", "turn"} <= set(kinds), kinds  # ("My cards" only when the roll meets its button)
    assert kinds["turn"] >= min(state.reported_hand, 5), (kinds, state.reported_hand)
    assert dc.rejected() == [], dc.rejected()
    bad: list[FakeInteraction] = [
        i for i in dc.interactions if not i.answered or (i.answered_after or 0) > 3.0 or i.late_callbacks
    ]
    assert bad == [], bad
    for user in table.players.values():
        assert repeated_private_messages([m.history for m in dc.dm_messages(user)]) == [], user.name
    closed = table.players[2]
    told = [m for m in dc.ephemerals(closed) if "cannot send you direct messages" in m.text]
    assert len(told) == 1 and dc.dm_messages(closed) == [], [m.text for m in dc.ephemerals(closed)]
    assert state.hand_no >= 5 or state.status is TableStatus.FINISHED
    assert assert_one_live_message_per_slot(dc) >= 1 or state.status is not TableStatus.PLAYING
    assert audit_no_card_leaks(dc, table) > 0
    texts = [m.text for m in dc.channel_messages(table.channel)]
    for n in range(1, state.reported_hand + 1):
        assert len([t for t in texts if t.splitlines()[0].startswith(f"🂡 Hand {n} ")]) == 1, n
        final = table.find_table_message(n)
        assert final is not None and final.custom_ids() == [] and "Hand over" in final.text, final


async def test_a_randomized_discord_session_on_discords_limits_keeps_every_promise() -> None:
    """The same with Discord's rate limits enforced (5 messages and 5 edits per 5 s in a channel, 50
    requests a second: 429 with ``retry_after``), the lanes calling up to ten times a second so that
    discord.py's own pacing by the headers is what keeps the buckets, and one edit refused ``retry after
    3`` on top: every promise holds, and nothing the bot sent went over the limits."""
    seed = 4
    async with FakeDiscord(limits=DiscordLimits()) as dc:
        with dc.point_discord_py():
            runtime = await start_discord_bot(dc, memory_service(FLOW, seed=seed), min_interval=0.1)
            dc.inject_429("PATCH", r"^/channels/\d+/messages/", retry_after=3.0)
            try:
                table, kinds = await random_session(dc, runtime, seed, hands=5)
            finally:
                await runtime.stop()
            assert_every_promise(dc, table, kinds, await table.state())
            assert [c.injected for c in dc.calls if c.status == 429] == [True]
            assert dc.limited() == []  # discord.py paced itself by the headers
