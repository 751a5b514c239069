"""Randomized sessions: three people and a machine at a group table, pressing what people press.

Besides the right buttons, they press old buttons (any version of any message they ever saw), doubled
taps, buttons of a game they do not play, forged data, "My cards" again and again, "More…" and the amount
picker, and type ``/newgame`` mid-game. Whatever happens, what users would notice must hold:

- every press is answered, every call follows the Bot API spec, no traceback is logged;
- a player gets a new private message only with new cards (never a copy of the one before);
- at most one live keyboard per table and slot in every chat (no live button on a superseded message);
- no hidden card where others see it;
- every hand that ends is counted in the group, and its table keeps its story with no button left.
"""

from __future__ import annotations

import asyncio
import collections
import random
import string
import time

import pytest

from bot.kernel import TableStatus
from bot.table import FlowSettings
from engine.cards import card_name
from engine.hand_types import Phase

from .conftest import (
    RunningBot,
    Table,
    assert_clean,
    assert_one_live_keyboard_per_slot,
    code_of,
    ever_data,
    memory_service,
    stamp_of,
    start_bot,
)
from .fake_telegram import MESSAGE_NOT_MODIFIED, FakeTelegram, FakeUser, StoredMessage
from .private_messages import repeated_private_messages
from .test_telegram_game import audit_no_card_leaks, open_table

FLOW = FlowSettings(turn_timeout=3600, machine_delay=0.05, next_hand_delay=0.05, catch_window=1.0)


async def press_any(table: Table, user: FakeUser, message: StoredMessage, data: str) -> dict[str, object]:
    """Press ``data`` on ``message`` whether or not it shows it now (an old or forged button); the answer."""
    record = await table.press(user, message, data, check_button=False)
    assert record.answered
    return record.answer or {}


async def double_tap(table: Table, user: FakeUser, message: StoredMessage, data: str) -> None:
    """Two presses of one button that reach the bot together."""
    ids = [table.tg.user_presses(user, message, data, check_button=False) for _ in range(2)]
    records = [table.tg.callbacks[i] for i in ids]
    await table.tg.wait_for(lambda: all(r.answered for r in records), timeout=5.0)
    await table.bot.sender.flush(timeout=10.0)


def forged(rng: random.Random, table_id: str, hand_no: int) -> str:
    """Data no button of ours carries: mutated tokens, other tables, junk."""
    choices = [
        f"{table_id}.{hand_no}-{rng.randrange(99)}.env{rng.randrange(100)}",
        f"{table_id}.{hand_no}.pick_13o",
        f"{table_id}.{hand_no + 5}.cards",
        f"zzzzzzzz.{hand_no}.cards",
        f"{table_id}.L.seat{rng.randrange(4)}",
        f"-.C.lang_{rng.choice(['zz', 'e', 'x'])}",  # (a real language code is a real button)
        "".join(rng.choice(string.printable) for _ in range(rng.randrange(1, 64))),
        f"{table_id}.{hand_no}-0.sena_ciego",
        f"{table_id}.{hand_no}.catch{rng.randrange(9)}",
    ]
    return rng.choice(choices)


async def random_session(
    tg: FakeTelegram, bot: RunningBot, seed: int, hands: int
) -> tuple[Table, collections.Counter[str]]:
    """Play ``hands`` hands the way the module docstring says; the table and how many presses of each kind."""
    rng = random.Random(seed)
    kinds: collections.Counter[str] = collections.Counter()
    table = await open_table(tg, bot, humans=(0, 1, 2), options=("o_senas",))
    outsider = tg.add_user("Olatz", language_code="en")
    tg.user_starts_bot(outsider)
    seen_messages: list[StoredMessage] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state, match = await table.state()
        if state.status is not TableStatus.PLAYING or state.hand_no > hands:
            break
        assert match is not None and match.hand is not None
        hand = match.hand
        seen_messages = [m for m in tg.messages_in(table.chat, from_bot=True)] + [
            m for u in table.players.values() for m in tg.messages_in(u.id, from_bot=True)
        ]
        roll = rng.random()
        seat = hand.turn
        if roll < 0.12 and seen_messages:  # an old (or current) button, by anyone at the table
            message = rng.choice(seen_messages)
            # (Not the language picker: its buttons are live settings, and the checks below read English.)
            data = sorted(d for d in ever_data(message) if not d.startswith("-."))
            if data:
                user = rng.choice([*table.players.values(), outsider])
                await press_any(table, user, message, rng.choice(data))
                kinds["old"] += 1
            continue
        if roll < 0.18:  # forged data on the live table
            message = table.find_table_message(state.hand_no)
            if message is not None:
                await press_any(table, rng.choice([*table.players.values(), outsider]), message,
                                forged(rng, table.table_id, state.hand_no))  # fmt: skip
                kinds["forged"] += 1
            continue
        if roll < 0.24:  # "My cards", again
            message = table.find_table_message(state.hand_no)
            data = f"{table.table_id}.{state.hand_no}.cards"
            if message is not None and data in [d for _, d in message.buttons]:
                user = rng.choice([*table.players.values(), outsider])
                answer = await press_any(table, user, message, data)
                if user is not outsider:
                    assert answer.get("show_alert") is True and len(str(answer.get("text"))) <= 200
                kinds["cards"] += 1
            continue
        if roll < 0.27:  # /newgame typed mid-game: the table is posted again, the old copy closed
            await table.command(rng.choice(list(table.players.values())), "/newgame")
            continue
        if roll < 0.32:  # a seña, if one is offered (a double tap sometimes)
            for s, user in table.players.items():
                private = table.hand_message(s, state.hand_no)
                senas = [] if private is None else [d for _, d in private.buttons if "sena_" in (d or "")]
                if senas and private is not None:
                    if rng.random() < 0.5:
                        await double_tap(table, user, private, senas[0])
                    else:
                        await press_any(table, user, private, senas[0])
                    break
            continue
        if hand.over or seat is None or seat not in table.players or state.seats[seat].autopilot:
            await asyncio.sleep(0.02)  # a machine, a deal: the deadline loop
            continue
        if hand.phase is Phase.DISCARD:
            ready = [s for s in table.players if not state.seats[s].discard_ready and len(hand.hands[s]) == 4]
            if ready:
                # An old button may have picked a card already: pick others (picking toggles), then confirm.
                who = rng.choice(ready)
                picked = set(state.seats[who].discard_pick)
                free = [i for i, card in enumerate(hand.hands[who]) if card_name(card) not in picked]
                picks = sorted(rng.sample(free, min(len(free), rng.randint(1, 3)))) if free else []
                await table.discard(who, picks)
                kinds["discard"] += 1
            else:
                await asyncio.sleep(0.02)
            continue
        stamp = f"{state.hand_no}-{len(hand.log)}"

        def turn_buttons(hand_no: int = state.hand_no, stamp: str = stamp) -> list[str]:
            message = table.find_table_message(hand_no)
            return [] if message is None else [d for _, d in message.buttons if stamp_of(d) == stamp]

        data = await tg.wait_for(turn_buttons, timeout=5.0)
        message = table.find_table_message(state.hand_no)
        assert message is not None
        user = table.players[seat]
        choice = rng.choice(data)
        if code_of(choice) == "more":  # the picker: every amount, in the private hand, for this turn
            await table.press(user, message, choice)
            private = table.hand_message(seat, state.hand_no)
            amounts = [] if private is None else [d for _, d in private.buttons if stamp_of(d) == stamp]
            assert amounts, private
            await table.press(user, private, rng.choice(amounts))  # type: ignore[arg-type]
        elif rng.random() < 0.15:
            await double_tap(table, user, message, choice)
            kinds["doubled"] += 1
        else:
            await table.press(user, message, choice)
        kinds["turn"] += 1
    else:
        raise AssertionError("the session did not finish in time")
    # A short session may roll no old or forged press: one of each now, on the first message with buttons.
    first = next(m for m in tg.messages_in(table.chat, from_bot=True) if ever_data(m))
    if not kinds["old"]:
        data = sorted(d for d in ever_data(first) if not d.startswith("-."))[0]
        await press_any(table, rng.choice(list(table.players.values())), first, data)
        kinds["old"] += 1
    if not kinds["forged"]:
        await press_any(table, outsider, first, forged(rng, table.table_id, state.hand_no))
        kinds["forged"] += 1
    state, _ = await table.state()
    if state.status is TableStatus.PLAYING:
        # The deal that ended the loop may still be on its way to the lanes (the deadline loop hands its
        # views over after its write): wait until the hand's table is posted, then for every lane.
        await tg.wait_for(lambda: table.find_table_message(state.hand_no), timeout=5.0)
    await bot.sender.flush(timeout=10.0)
    return table, kinds


def assert_no_repeated_private_message(tg: FakeTelegram, table: Table) -> None:
    for user in table.players.values():
        messages = tg.messages_in(user.id, include_deleted=True, from_bot=True)
        histories = [[v.text for v in m.history] for m in messages]
        repeats = repeated_private_messages(histories)
        # (Every version of every private message on failure: which one was missed tells why.)
        assert repeats == [], f"{user.first_name} got a private message again: {repeats} in {histories}"


# (Seed 4 with each chat paced as in production, 0.1 s between calls: views then wait in the lanes, where a
# newer one takes the place of an older one.)
@pytest.mark.parametrize(("seed", "pace"), [(1, 0.0), (2, 0.0), (3, 0.0), (4, 0.1)])
async def test_a_randomized_session_keeps_every_promise(
    tg: FakeTelegram, bots: list[RunningBot], seed: int, pace: float
) -> None:
    bot = await start_bot(tg, memory_service(FLOW, seed=seed), min_interval=pace)
    bots.append(bot)
    table, kinds = await random_session(tg, bot, seed, hands=6)
    print(f"seed {seed}: {table.presses} presses {dict(kinds)}")
    await assert_every_promise(tg, table, kinds, hands=6)


@pytest.mark.parametrize("seed", [6, 7])
async def test_a_randomized_session_on_telegrams_limits_keeps_every_promise(
    limited_tg: FakeTelegram, bots: list[RunningBot], seed: int
) -> None:
    """The same, with Telegram's flood limits enforced (20 new messages a minute in a group, 30 calls a
    second: 429 with retry_after) and the production rate limiter and group budget, and one group message
    refused ``retry after 3`` on top."""
    tg = limited_tg
    bot = await start_bot(tg, memory_service(FLOW, seed=seed), min_interval=0.1, rate_limiter=True)
    bots.append(bot)
    tg.fail_next("editMessageText", 429, retry_after=3)
    table, kinds = await random_session(tg, bot, seed, hands=4)
    print(f"seed {seed} (limits on): {table.presses} presses {dict(kinds)}")
    await assert_every_promise(tg, table, kinds, hands=4)
    assert tg.limited() == []  # the bot kept within Telegram's limits


async def assert_every_promise(
    tg: FakeTelegram, table: Table, kinds: collections.Counter[str], hands: int, *, workers: int = 1
) -> None:
    """What the module docstring promises, after a randomized session of ``hands`` hands (on ``workers``
    workers: then an edit may be answered "not modified", which delivery takes as success — each worker
    knows only what it drew itself)."""
    state, _ = await table.state()
    # The session really pressed old, forged and right buttons; a person decided in every hand
    # that ended (one machine cannot end a hand alone). How many presses a hand takes is the machines' pace
    # and the cards' (an órdago accepted at once ends a hand in three).
    assert {"old", "forged", "turn"} <= set(kinds), kinds  # ("My cards" only when the roll meets its button)
    assert kinds["turn"] >= min(state.reported_hand, hands), (kinds, state.reported_hand)
    assert state.hand_no >= hands or state.status is TableStatus.FINISHED
    assert_clean(tg, allowed=lambda c: workers > 1 and MESSAGE_NOT_MODIFIED in (c.description or ""))
    assert_no_repeated_private_message(tg, table)
    live = assert_one_live_keyboard_per_slot(tg)
    assert live >= 1 or state.status is not TableStatus.PLAYING
    assert audit_no_card_leaks(tg, table) > 0
    # Every hand that ended was counted in the group, and its table keeps the story with no button left.
    group = tg.group_texts(table.chat)
    for n in range(1, state.reported_hand + 1):
        assert len([t for t in group if t.splitlines()[0].startswith(f"🂡 Hand {n} ")]) == 1, n
        final = table.table_message(n)
        assert final.buttons == [] and "Hand over" in final.text, final.text
        assert "Mus: " in final.text and ("✓ GRANDE" in final.text), final.text
