"""End to end: the real python-telegram-bot Application against the fake Bot API server.

Every test runs the production adapter (``build_application``: handlers, latest-state-wins sender, deep
links, deadline loop) with long polling against :class:`FakeTelegram` on 127.0.0.1, which checks every call
against the Bot API spec. Users act only through what the fake server shows them: commands they type and the
buttons on the bot's messages. Each test ends with no call that broke the spec and every callback query
answered.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import re
import socket
import time

import aiohttp
import pytest
from pydantic import SecretStr

from adapters.telegram.app import start_telegram, stop_telegram
from bot.delivery import RedisSurfaces
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.kernel import MACHINE_NAMES, TableState, TableStatus
from bot.ops import build_app
from bot.table import FlowSettings
from engine.actions import ActionKind
from engine.hand_types import Phase
from engine.match import Match

from .conftest import (
    BOT_USERNAME,
    FAST,
    MESSAGE_NOT_MODIFIED,
    RunningBot,
    Table,
    assert_clean,
    assert_one_live_keyboard_per_slot,
    code_of,
    ever_data,
    has_card_symbol,
    labels,
    memory_service,
    seeded,
    settings_for,
    stamp_of,
    start_bot,
    table_ids,
    telegram_settings_for,
    version_texts,
)
from .fake_telegram import Call, FakeChat, FakeTelegram, FakeUser, StoredMessage

NAMES = ("Ane", "Brais", "Camille", "Dani")
DEEP_LINK = re.compile(rf"^https://t\.me/{BOT_USERNAME}\?start=([A-Za-z0-9_-]{{1,64}})$")


# ---------------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------------


async def open_table(
    tg: FakeTelegram,
    bot: RunningBot,
    *,
    humans: tuple[int, ...] = (0, 1, 2, 3),
    options: tuple[str, ...] = ("o_mode",),
    lang: str = "en",
    title: str = "Mus",
    start: bool = True,
) -> Table:
    """A group where ``/newgame`` was typed by the player of seat 0 and the other humans took their seats.

    Every player opened the bot first (``/start``). ``options`` are lobby option codes the creator presses
    (``o_mode``: a single game). The group's language is set with ``/language``.
    """
    group = tg.add_group(title)
    users = {seat: tg.add_user(NAMES[seat], language_code=lang) for seat in humans}
    table = Table(tg, bot, group, players=users)
    for user in users.values():
        tg.user_starts_bot(user)
    await table.settle()
    await table.command(users[0], f"/language {lang}")
    await table.command(users[0], "/newgame")
    lobby = table.lobby_message()
    table.table_id = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]
    for seat in humans[1:]:
        record = await table.press(users[seat], lobby, f"{table.table_id}.L.seat{seat}")
        assert record.answer is not None and record.answer.get("url") is None, record
    for code in options:
        await table.press(users[0], lobby, f"{table.table_id}.L.{code}")
    if start:
        record = await table.press(users[0], lobby, f"{table.table_id}.L.start")
        assert "starts" in record.answer.get("text", ""), record  # type: ignore[union-attr]
    return table


def hand_of(match: Match | None):  # type: ignore[no-untyped-def]
    assert match is not None and match.hand is not None
    return match.hand


def group_bot_messages(tg: FakeTelegram, chat: FakeChat) -> list[StoredMessage]:
    return tg.messages_in(chat, include_deleted=True, from_bot=True)


def audit_no_card_leaks(tg: FakeTelegram, table: Table) -> int:
    """No group message ever showed a card outside a showdown; no private message showed another seat's card.

    Returns the number of message versions checked.
    """
    checked = 0
    showdown = re.compile(r"^🂡 ")
    for chat in tg.chats.values():
        if not chat.is_group:
            continue
        for message in group_bot_messages(tg, chat):
            for text, buttons in version_texts(message):
                checked += 1
                if showdown.match(text):
                    continue
                assert not has_card_symbol(text), f"a card shows in the group before its showdown: {text!r}"
                assert not any(has_card_symbol(b) for b in buttons), f"a card on a group button: {buttons}"
    # Private messages: the reader's own cards of that hand (the first line names it), nobody else's.
    for seat, user in table.players.items():
        for message in tg.messages_in(user.id, include_deleted=True, from_bot=True):
            for text, buttons in version_texts(message):
                checked += 1
                if showdown.match(text) or not has_card_symbol(text + "".join(buttons)):
                    continue  # a solo game's showdown; a text without cards
                number = re.search(r"(\d+)$", text.splitlines()[0])
                assert number is not None, f"a private text with cards but no hand number: {text!r}"
                assert int(number.group(1)) in table.seen, f"hand {number.group(1)} was never stored?"
                cards = table.seen[int(number.group(1))]
                others = set().union(*(cards[s] for s in range(4) if s != seat)) - cards[seat]
                for label in others:
                    shown = label in text or any(label in b for b in buttons)
                    assert not shown, f"{user.first_name} (seat {seat}) sees another seat's {label}: {text!r}"
    return checked


def new_group_messages(tg: FakeTelegram, chat: FakeChat) -> list[Call]:
    return [c for c in tg.calls("sendMessage", chat.id) if c.ok]


# ---------------------------------------------------------------------------------------------------------
# A whole game
# ---------------------------------------------------------------------------------------------------------


async def test_four_players_play_a_whole_game(tg: FakeTelegram, bot: RunningBot) -> None:
    """From /newgame to the leaderboard: mus with discards, a raise, a refusal, an órdago, the results."""
    group = tg.add_group("Mus")
    ane, brais, camille, dani = (tg.add_user(n, language_code="en") for n in NAMES)
    table = Table(tg, bot, group, players={0: ane, 1: brais, 2: camille, 3: dani})
    for user in (ane, brais, dani):  # Camille never opened the bot
        tg.user_starts_bot(user)
    await table.command(ane, "/language en")
    await table.command(ane, "/newgame")

    # The lobby: one message, four seat buttons (two per team), options, Start.
    lobby = table.lobby_message()
    table.table_id = code = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]
    codes = [code_of(d) for _, d in lobby.buttons]
    assert {"seat0", "seat1", "seat2", "seat3", "o_senas", "o_target", "o_mode", "start"} <= set(codes)
    assert "Team A: Ane · (free)" in lobby.text and "Team B: (free) · (free)" in lobby.text
    # One table per chat.
    await table.command(brais, "/newgame")
    assert tg.bot_messages(group)[-1].text == "There is already a table in this chat."

    # Only the creator sets options; she picks a single game.
    record = await table.press(brais, lobby, f"{code}.L.o_mode")
    assert record.answer["text"] == "Only the player who created the table can do that."  # type: ignore[index]
    assert "full match" in lobby.text
    await table.press(ane, lobby, f"{code}.L.o_mode")
    assert "single game" in lobby.text

    # Seats by button; Camille, whom the bot cannot write to, is sent to the bot with a deep link.
    await table.press(brais, lobby, f"{code}.L.seat1")
    await table.press(dani, lobby, f"{code}.L.seat3")
    record = await table.press(camille, lobby, f"{code}.L.seat2")
    link = DEEP_LINK.match((record.answer or {}).get("url") or "")
    assert link is not None and not (record.answer or {}).get("text"), record
    assert "Camille" not in lobby.text
    before = len(tg.calls())
    tg.user_starts_bot(camille, link.group(1))
    await table.settle(before)
    assert "Team A: Ane · Camille" in lobby.text and "Team B: Brais · Dani" in lobby.text
    assert tg.private_texts(camille) == ["You joined team A."]

    # Start: the lobby closes, one table message, everybody's hand privately.
    await table.press(ane, lobby, f"{code}.L.start")
    assert lobby.buttons == [] and "The game has started." in lobby.text
    state, match = await table.state()
    assert state.status is TableStatus.PLAYING and state.hand_no == 1
    for seat in range(4):
        private = table.hand_message(seat, 1)
        assert private is not None, f"no hand for seat {seat}"
        assert all(label in private.text for label in _labels(match, seat)), private

    raised: list[int] = []

    def hand_one(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
        hand = hand_of(match)
        if hand.phase is Phase.MUS:
            return "mus" if hand.mus_round == 0 else "nomus"
        if hand.phase is Phase.GRANDE:
            if "env2" in codes:
                return "env2"
            if "sube2" in codes and not raised:
                raised.append(seat)
                return "sube2"
            return "noquiero"
        return None

    # Hand 1: mus, discards (cards toggled then confirmed), no mus, envido 2, a raise, refused; paso after.
    await table.play(hand_one, until=lambda s, m: hand_of(m).phase is Phase.DISCARD)
    state, match = await table.state()
    mano = hand_of(match).mano
    before_cards = {seat: set(table.seen[1][seat]) for seat in range(4)}
    # Confirm from the last speaker to the mano: early confirmations wait for their turn.
    for offset in (3, 2, 1, 0):
        seat = (mano + offset) % 4
        await table.discard(seat, [0, 1] if offset == 1 else [0], untoggle=2 if offset == 2 else None)
        state, match = await table.state()
        hand = hand_of(match)
        if offset:
            assert hand.phase is Phase.DISCARD and state.seats[seat].discard_ready
    assert hand.phase is Phase.MUS and hand.mus_round == 1, hand.phase
    table_message = table.table_message(1)
    discards_line = next(line for line in table_message.text.splitlines() if line.startswith("Discards:"))
    discards = re.findall(r"(\w+) (\d)", discards_line)
    assert sorted(discards) == sorted((NAMES[(mano + o) % 4], "2" if o == 1 else "1") for o in range(4)), (
        table_message.text
    )
    for seat in range(4):
        discarded = 2 if seat == (mano + 1) % 4 else 1
        assert len(table.seen[1][seat]) == len(before_cards[seat]) + discarded
        private = table.hand_message(seat, 1)
        assert private is not None and not any(d for _, d in private.buttons if "pick" in (d or ""))
        now = _labels(match, seat)
        assert all(label in private.text for label in now), (now, private.text)
    await table.play(hand_one, until=lambda s, m: s.hand_no == 2)
    showdown_one = [t for t in tg.group_texts(group) if t.startswith("🂡 Hand 1")]
    assert len(showdown_one) == 1
    assert raised, "nobody raised"
    table_one = table.table_message(1)
    assert re.search(r"✓ GRANDE: .*refused", table_one.text) and "Hand over" in table_one.text, table_one.text
    assert table_one.buttons == []  # hand 2's table superseded it: no live button left on it
    # The whole hand stayed on the table until the count: both mus rounds, the discards, every lance.
    story = table_one.text.splitlines()
    assert len([line for line in story if line.startswith("Mus: ")]) == 2, story
    assert any(line.startswith("Discards: ") for line in story), story
    assert [line[2:8] for line in story if line.startswith("✓ ")][:2] == ["GRANDE", "CHICA:"], story
    # While the envido stood, the table said what was at stake, and the raise said its total.
    versions = [text for text, _ in version_texts(table_one)]
    assert any(re.search(r"At stake: 2 — if refused, .+ take 1", v) for v in versions), versions
    assert any(re.search(r"2 more → 4", v) for v in versions), versions
    # The count says why: each line adds its parts up to what it pays and to whom.
    count = [line for line in showdown_one[0].splitlines() if line.startswith("  ")]
    assert count and all(re.search(r" = \d+ → |at once", line) for line in count), showdown_one[0]
    assert re.search(r"Score: .+ \d+ – \d+ .+", showdown_one[0]), showdown_one[0]

    # Hand 2: no mus, órdago, wanted: the game is over.
    def hand_two(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
        hand = hand_of(match)
        if hand.phase is Phase.GRANDE:
            return "ordago" if "ordago" in codes and "quiero" not in codes else "quiero"
        return None

    await table.play(hand_two, until=lambda s, m: s.status is not TableStatus.PLAYING)
    state, match = await table.state()
    assert state.status is TableStatus.FINISHED
    hand = hand_of(match)
    assert hand.ordago is not None and hand.shown
    winners = hand.ordago.team
    showdown = [t for t in tg.group_texts(group) if t.startswith("🂡 Hand 2")]
    assert len(showdown) == 1
    team = f"{NAMES[winners]} and {NAMES[winners + 2]}"
    assert "GRANDE" in showdown[0], showdown[0]  # the órdago was in grande
    assert f"🏆 {team} win the game!" in showdown[0]
    for seat in range(4):  # the showdown shows every hand
        assert all(label in showdown[0] for label in _labels(match, seat))
    assert "ÓRDAGO" in table.table_message(2).text

    # One table message per hand, edited in place; at most three new group messages per hand.
    tables = [table.table_message(1), table.table_message(2)]
    for n in (1, 2):
        assert len([m for m in tg.bot_messages(group) if f"{code}.{n}.cards" in ever_data(m)]) == 1
    assert len(tables[0].history) > 10 and len(tables[1].history) >= 3, [len(m.history) for m in tables]
    sends = new_group_messages(tg, group)
    game_sends = [c for c in sends if c.seq > lobby_seq(tg, group)]
    assert len(game_sends) <= 3 * state.hand_no, game_sends
    # Every player got a fresh private hand each hand.
    for seat in range(4):
        assert table.hand_message(seat, 1) is not None and table.hand_message(seat, 2) is not None

    # The leaderboard of the chat.
    await table.command(brais, "/leaderboard")
    board = tg.bot_messages(group)[-1].text
    assert board.startswith("🏆 Leaderboard of this chat")
    for seat in range(4):
        won = "1/1" if seat % 2 == winners else "0/1"
        assert re.search(rf"\d+\. {NAMES[seat]} · [\d.]+ · {won} games", board), board

    assert audit_no_card_leaks(tg, table) > 50
    assert_clean(tg)


def _labels(match: Match | None, seat: int) -> set[str]:
    return labels(hand_of(match).hands[seat])


def lobby_seq(tg: FakeTelegram, chat: FakeChat) -> int:
    """The call that posted the lobby."""
    for call in tg.calls("sendMessage", chat.id):
        if call.ok and call.params["text"].startswith("🂠 Mus · new table"):
            return call.seq
    raise AssertionError("no lobby was posted")


# ---------------------------------------------------------------------------------------------------------
# Presses that must change nothing
# ---------------------------------------------------------------------------------------------------------


async def stored_version(bot: RunningBot, table_id: str) -> int:
    stored = await bot.service.deps.tables.load(table_id)
    assert stored is not None
    return stored.version


async def double_press(table: Table, user: FakeUser, message: StoredMessage, data: str) -> list[str | None]:
    """Two presses of one button that reach the bot together (a double tap); their answers' texts."""
    first = table.tg.user_presses(user, message, data)
    second = table.tg.user_presses(user, message, data)
    records = [table.tg.callbacks[first], table.tg.callbacks[second]]
    await table.tg.wait_for(lambda: all(r.answered for r in records))
    await table.bot.sender.flush()
    return [(r.answer or {}).get("text") for r in records]


async def test_presses_that_change_nothing(tg: FakeTelegram, bot: RunningBot) -> None:
    """A non-player, a player out of turn, a double press, old messages and forged data change nothing."""
    table = await open_table(tg, bot)
    code = table.table_id
    outsider = tg.add_user("Zuri", language_code="en")
    tg.user_starts_bot(outsider)
    _, match = await table.state()
    seat = hand_of(match).turn
    assert seat is not None
    on_screen = table.table_message(1)
    mus = on_screen.button_data("Mus")
    version, edits = await stored_version(bot, code), len(on_screen.history)

    record = await table.press(outsider, on_screen, mus)
    assert record.answer["text"] == "You are not seated at this table."  # type: ignore[index]
    other = table.players[(seat + 1) % 4]
    record = await table.press(other, on_screen, mus)
    assert record.answer["text"] == "Not your turn."  # type: ignore[index]
    record = await table.press(outsider, on_screen, f"{code}.1.cards")
    assert record.answer["text"] == "You are not seated at this table."  # type: ignore[index]
    assert await stored_version(bot, code) == version and len(on_screen.history) == edits

    # A double press: both reach the bot before either is handled; exactly one counts.
    answers = await double_press(table, table.players[seat], on_screen, mus)
    assert answers.count(None) == 1 and len([a for a in answers if a]) == 1, answers  # one played
    _, match = await table.state()
    hand = hand_of(match)
    assert [(a.seat, a.action.kind) for a in hand.log] == [(seat, ActionKind.MUS)]
    assert await stored_version(bot, code) == version + 1

    # The same button again, from the message as it was before the edit (a client that did not refresh).
    record = await table.press(table.players[seat], on_screen, mus, check_button=False)
    assert record.answer.get("text")  # type: ignore[union-attr]
    # Old lobby buttons, once the game runs.
    lobby = table.lobby_message()
    assert lobby.buttons == []
    for old in (f"{code}.L.start", f"{code}.L.cancel", f"{code}.L.seat1", f"{code}.L.o_target"):
        record = await table.press(table.players[0], lobby, old, check_button=False)
        assert record.answer["text"] == "The game has already started.", old  # type: ignore[index]
    # Forged data: not a token, another table, a code that does not exist.
    for forged in ("garbage", "zzzzzzzz.1-1.paso", f"{code}.1-1.fly", f"{code}.99.cards"):
        record = await table.press(table.players[0], on_screen, forged, check_button=False)
        assert record.answer.get("text"), (forged, record)  # type: ignore[union-attr]
    assert await stored_version(bot, code) == version + 1

    # Finish hand 1: its table message loses its buttons; "My cards" pressed from an old client is stale.
    await table.play(until=lambda s, m: s.hand_no == 2)
    old_table = table.table_message(1)
    assert old_table.buttons == []
    version = await stored_version(bot, code)
    record = await table.press(table.players[0], old_table, f"{code}.1.cards", check_button=False)
    assert record.answer["text"] == "That button is no longer valid."  # type: ignore[index]
    # A turn button of hand 1, pressed from an old version of its message.
    old_turn = [
        b["callback_data"]
        for v in old_table.history
        for row in (v.reply_markup or {}).get("inline_keyboard", [])
        for b in row
        if "-" in stamp_of(b.get("callback_data"))
    ]
    for data in {old_turn[0], old_turn[-1]}:
        for user in table.players.values():
            await table.press(user, old_table, data, check_button=False)
    assert await stored_version(bot, code) == version
    assert_clean(tg)


@pytest.mark.tracebacks_expected  # the injected failure is logged with its traceback, as it should be
async def test_a_failing_press_is_still_answered(tg: FakeTelegram, bot: RunningBot) -> None:
    """Whatever happens while handling a press, its callback query is answered (no spinner forever)."""
    table = await open_table(tg, bot)
    on_screen = table.table_message(1)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the service broke")

    original = bot.service.press
    bot.service.press = broken  # type: ignore[assignment, method-assign]
    try:
        _, match = await table.state()
        user = table.players[hand_of(match).turn]  # type: ignore[index]
        record = await table.press(user, on_screen, on_screen.button_data("Mus"))
    finally:
        bot.service.press = original  # type: ignore[method-assign]
    assert record.answer["text"]  # type: ignore[index]
    assert record.latency is not None and record.latency < 2.0
    assert_clean(tg)


async def test_double_press_loser_is_told_already_played(tg: FakeTelegram, bot: RunningBot) -> None:
    """DESIGN: "two presses of the same button apply once; the loser gets 'already played'"."""
    table = await open_table(tg, bot)
    _, match = await table.state()
    seat = hand_of(match).turn
    assert seat is not None
    on_screen = table.table_message(1)
    mus = on_screen.button_data("Mus")
    answers = await double_press(table, table.players[seat], on_screen, mus)
    assert sorted(answers, key=str) == ["Already played.", None], answers
    # Pressing it once more from the stale message: still "already played", not "not your turn".
    record = await table.press(table.players[seat], on_screen, mus, check_button=False)
    assert record.answer["text"] == "Already played."  # type: ignore[index]
    assert_clean(tg)


# ---------------------------------------------------------------------------------------------------------
# Machine seats, solo games
# ---------------------------------------------------------------------------------------------------------


async def test_start_fills_empty_seats_with_machines(tg: FakeTelegram, bots: list[RunningBot]) -> None:
    """Start with one human: three machine seats, which act after a short pause, by their deadlines."""
    # Long enough that a loaded machine's delivery jitter (~0.1 s seen on CI) cannot halve it.
    delay = 0.3
    flow = FlowSettings(turn_timeout=3600, machine_delay=delay, next_hand_delay=0.05, catch_window=3.0)
    bot = await start_bot(tg, memory_service(flow, seed=11))
    bots.append(bot)
    table = await open_table(tg, bot, humans=(0,))
    lobby = table.lobby_message()
    machines = [f"🤖 {MACHINE_NAMES[seat]}" for seat in (1, 2, 3)]
    assert (
        f"Team A: Ane · {machines[1]}" in lobby.text
        and f"Team B: {machines[0]} · {machines[2]}" in lobby.text
    )
    state, _ = await table.state()
    assert [s.machine for s in state.seats] == [False, True, True, True]

    # Until the second deal (or the end: a machine partner may accept an órdago and end a one-game table).
    await table.play(until=lambda s, m: s.hand_no >= 2 or s.status is TableStatus.FINISHED, timeout=15.0)
    first = table.table_message(1)
    assert f"Ane and {machines[1]}" in first.text
    # Machines never act instantly: every version drawn with a machine on turn stays a while.
    waits = [
        later.time - earlier.time
        for earlier, later in zip(first.history, first.history[1:], strict=False)
        if re.search(r"🤖 \w+'s turn", earlier.text)
    ]
    # (Measured where the messages arrive, so delivery jitter counts: half the pause is the bar.)
    assert len(waits) >= 3 and min(waits) >= delay * 0.5, waits
    state, _ = await table.state()
    if state.status is TableStatus.PLAYING:
        await tg.wait_for(lambda: table.hand_message(0, 2))
        assert tg.messages_in(table.chat, from_bot=True)[-1].text.startswith("🂠 Mus")
    assert audit_no_card_leaks(tg, table) > 0
    assert_clean(tg)


async def test_solo_game_in_a_private_chat(tg: FakeTelegram, bot: RunningBot) -> None:
    """/newgame in a private chat: the solo options, then you and a machine partner against two machines."""
    ane = tg.add_user("Ane", language_code="es")
    chat = tg.private_chat(ane)
    table = Table(tg, bot, chat, players={0: ane})
    await table.command(ane, "/newgame", chat)
    (lobby,) = tg.bot_messages(ane.id)
    codes = [code_of(d) for _, d in lobby.buttons]
    assert codes == ["o_senas", "o_target", "o_mode", "o_level", "start", "cancel"], codes  # no seats to take
    await table.press(ane, lobby, next(d for _, d in lobby.buttons if code_of(d) == "start"))  # type: ignore[misc]
    assert tg.bot_messages(ane.id)[0].buttons == []  # the options message is closed
    messages = tg.bot_messages(ane.id)
    tables = [m for m in messages if any(d and d.endswith(".1.cards") for _, d in m.buttons)]
    assert len(tables) == 1, messages
    table.table_id = tables[0].buttons[-1][1].split(".")[0]  # type: ignore[union-attr]
    state, _ = await table.state()
    assert state.private and [s.machine for s in state.seats] == [False, True, True, True]
    assert "Ane y 🤖 Iker" in tables[0].text
    private_hand = table.hand_message(0, 1)
    assert private_hand is not None and private_hand.text.startswith("Mano n.º 1\n")  # her own chat: no title

    def mus_then_cut(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
        hand = hand_of(match)
        return "mus" if hand.phase is Phase.MUS and hand.mus_round == 0 and "mus" in codes else None

    await table.play(mus_then_cut, until=lambda s, m: s.hand_no >= 3 or s.status is not TableStatus.PLAYING)
    texts = tg.private_texts(ane)
    assert any(t.startswith("🂡 Mano n.º 1") for t in texts), texts  # the showdown, in Spanish
    assert table.hand_message(0, 2) is not None
    assert table.table_message(1) is tables[0] and len(tables[0].history) >= 2  # edited in place
    assert table.table_message(2).message_id > tables[0].message_id
    # Every superseded table and hand message lost its buttons: one live keyboard per slot in the chat.
    live = assert_one_live_keyboard_per_slot(tg)
    assert live >= 1, tg.bot_messages(ane.id)
    assert audit_no_card_leaks(tg, table) > 0
    assert_clean(tg)


# ---------------------------------------------------------------------------------------------------------
# Señas
# ---------------------------------------------------------------------------------------------------------


async def test_sena_and_the_catch(tg: FakeTelegram, bots: list[RunningBot]) -> None:
    """A seña goes privately to the partner; a rival pressing ⚡ in time learns it (an alert), nobody else."""
    window = 1.0
    flow = FlowSettings(
        turn_timeout=3600, machine_delay=0, next_hand_delay=0, catch_window=window, catch_lag=0
    )
    bot = await start_bot(tg, memory_service(flow, seed=3))
    bots.append(bot)
    table = await open_table(tg, bot, options=("o_mode", "o_senas"))
    outsider = tg.add_user("Zuri", language_code="en")
    # Who can make a seña now? (Every hand of four cards has at least one true seña.)
    hands = {seat: table.hand_message(seat, 1) for seat in range(4)}
    maker = next(s for s, m in hands.items() if m is not None and any("Seña:" in t for t, _ in m.buttons))
    partner, rival, other_rival = (maker + 2) % 4, (maker + 1) % 4, (maker + 3) % 4
    private = table.hand_message(maker, 1)
    assert private is not None
    label, data = next((t, d) for t, d in private.buttons if t.startswith("Seña:"))
    sena_name = label.removeprefix("Seña: ")
    record = await table.press(table.players[maker], private, data)  # type: ignore[arg-type]
    assert record.answer["text"] == "Seña made: your partner sees it."  # type: ignore[index]
    made_at = time.monotonic()

    partner_hand = table.hand_message(partner, 1)
    assert partner_hand is not None
    assert f"Your partner {NAMES[maker]} made you a seña: {sena_name}" in partner_hand.text
    for seat in (rival, other_rival):
        assert "seña" not in table.hand_message(seat, 1).text  # type: ignore[union-attr]
    on_screen = table.table_message(1)
    assert f"⚡ {NAMES[maker]} made a seña!" in on_screen.text and "seña:" not in on_screen.text
    catch = on_screen.button_data(f"⚡ Catch {NAMES[maker]}'s seña")

    record = await table.press(table.players[rival], on_screen, catch)
    assert record.answer == {  # a callback alert only the rival sees
        "callback_query_id": record.id,
        "text": f"Caught! {NAMES[maker]}'s seña: {sena_name}",
        "show_alert": True,
    }
    assert time.monotonic() - made_at < window
    assert f"You caught {NAMES[maker]}'s seña: {sena_name}" in table.hand_message(rival, 1).text  # type: ignore[union-attr]
    record = await table.press(table.players[rival], on_screen, catch)
    assert record.answer["text"] == "You already caught it."  # type: ignore[index]
    record = await table.press(table.players[partner], on_screen, catch)
    assert record.answer["text"] == "That is your partner's seña: you see it anyway."  # type: ignore[index]
    record = await table.press(outsider, on_screen, catch)
    assert record.answer["text"] == "You are not seated at this table."  # type: ignore[index]
    others = [c for c in tg.callbacks.values() if c.user is not table.players[rival]]
    assert not any("Caught" in str((c.answer or {}).get("text")) for c in others)

    # The window closes: the ⚡ leaves the table; a late press learns nothing.
    await tg.wait_for(lambda: catch not in [d for _, d in on_screen.buttons], timeout=window + 2.0)
    assert "⚡" not in on_screen.text
    record = await table.press(table.players[other_rival], on_screen, catch, check_button=False)
    assert record.answer["text"] == "Too late!"  # type: ignore[index]
    assert record.answer.get("show_alert") in (None, False)  # type: ignore[union-attr]
    assert "seña" not in table.hand_message(other_rival, 1).text  # type: ignore[union-attr]
    # The group never learnt which seña it was.
    for message in group_bot_messages(tg, table.chat):
        for text, _ in version_texts(message):
            assert "seña:" not in text, text
    assert audit_no_card_leaks(tg, table) > 0
    assert_clean(tg)


async def test_a_sena_shown_late_is_caught_1_2_s_after_it_appeared(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    """The group's edit showing the ⚡ lands 2 s late (a 429): a rival reacting 1.2 s after it appeared —
    3 s after the seña was made, past the window counted from the making — still catches it (issue 23)."""
    window = 3.0
    flow = FlowSettings(turn_timeout=3600, machine_delay=0, next_hand_delay=0, catch_window=window)
    bot = await start_bot(tg, memory_service(flow, seed=3))
    bots.append(bot)
    table = await open_table(tg, bot, options=("o_mode", "o_senas"))
    hands = {seat: table.hand_message(seat, 1) for seat in range(4)}
    maker = next(s for s, m in hands.items() if m is not None and any("Seña:" in t for t, _ in m.buttons))
    rival = (maker + 1) % 4
    private = table.hand_message(maker, 1)
    assert private is not None
    data = next(d for t, d in private.buttons if t.startswith("Seña:"))
    on_screen = table.table_message(1)
    label = f"⚡ Catch {NAMES[maker]}'s seña"
    tg.fail_next("editMessageText", 429, retry_after=2, chat_id=table.chat.id)  # the ⚡ lands 2 s late
    made_at = tg.now()
    await table.press(table.players[maker], private, data)  # type: ignore[arg-type]
    await tg.wait_for(lambda: label in [t for t, _ in on_screen.buttons], timeout=6.0)
    shown = next(
        c
        for c in tg.calls("editMessageText")
        if c.params.get("chat_id") == table.chat.id and c.status == 200 and label in str(c.params)
    )
    assert shown.finished is not None and shown.finished - made_at >= 1.5, "the 429 held the ⚡ back"
    await asyncio.sleep(max(0.0, shown.finished + 1.2 - tg.now()))  # a person's reaction, from seeing it
    assert tg.now() - made_at > window, "pressed after the window counted from the making"
    record = await table.press(table.players[rival], on_screen, on_screen.button_data(label))
    assert record.answer["text"].startswith(f"Caught! {NAMES[maker]}'s seña: "), record.answer  # type: ignore[index]
    assert_clean(tg)


# ---------------------------------------------------------------------------------------------------------
# Reachability: deep links, blocked users
# ---------------------------------------------------------------------------------------------------------


async def test_my_cards_for_a_player_the_bot_cannot_write_to(tg: FakeTelegram, bot: RunningBot) -> None:
    """A player who blocked the bot does not break the table: "My cards" shows their cards in an alert, which
    needs no private chat, and the group's invitation link sends their hand once they open the bot again."""
    table = await open_table(tg, bot)
    dani = table.players[3]
    tg.user_blocks_bot(dani)
    sent_before = len(tg.private_texts(dani))

    # The hand goes on (Dani still bets from the group table); the next deal reaches everybody else.
    await table.play(until=lambda s, m: s.hand_no >= 3)
    for seat in (0, 1, 2):
        assert table.hand_message(seat, 2) is not None and table.hand_message(seat, 3) is not None
    assert len(tg.private_texts(dani)) == sent_before  # nothing new reached Dani
    refused = tg.rejected()
    assert refused and all(c.chat_id == dani.id and c.status == 403 for c in refused), refused

    # Dani presses "My cards" on the table: an alert with his cards, no link, no private message.
    on_screen = table.table_message(3)
    record = await table.press(dani, on_screen, f"{table.table_id}.3.cards")
    answer = record.answer or {}
    assert answer.get("url") is None and answer.get("show_alert") is True, record
    _, match = await table.state()
    assert str(answer.get("text", "")).startswith("Your cards: ")
    assert all(label in answer["text"] for label in _labels(match, 3)), answer
    assert len(tg.private_texts(dani)) == sent_before

    # The group was told once, with a link (?start=h<table>) that sends the hand when Dani opens the bot.
    links = [u for t in tg.group_texts(table.chat) for u in re.findall(r"https://\S+", t) if "Dani" in t]
    assert len(links) == 1, links
    link = DEEP_LINK.match(links[0])
    assert link is not None and link.group(1) == f"h{table.table_id}", links
    before = len(tg.calls())
    tg.user_starts_bot(dani, link.group(1))
    await table.settle(before)
    hand = table.hand_message(3, 3)
    assert hand is not None
    assert all(label in hand.text for label in _labels(match, 3))
    assert audit_no_card_leaks(tg, table) > 0
    assert_one_live_keyboard_per_slot(tg)
    assert_clean(tg, allowed=lambda c: c.chat_id == dani.id and c.status == 403)


async def test_creator_who_never_opened_the_bot_is_sent_to_it(tg: FakeTelegram, bot: RunningBot) -> None:
    """DESIGN: joining must detect that the bot cannot write to the user and give them a deep link, never
    fail silently. The creator joins by typing /newgame in the group: they must get the link too, and get
    their cards once they follow it."""
    group = tg.add_group("Mus")
    ane = tg.add_user("Ane", language_code="en")  # never opened the bot
    others = {seat: tg.add_user(NAMES[seat], language_code="en") for seat in (1, 2, 3)}
    table = Table(tg, bot, group, players={0: ane, **others})
    for user in others.values():
        tg.user_starts_bot(user)
    await table.command(ane, "/language en")
    await table.command(ane, "/newgame")
    lobby = table.lobby_message()
    table.table_id = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]

    def deep_links() -> list[str]:
        found = []
        for message in tg.bot_messages(group):
            found += re.findall(rf"https://t\.me/{BOT_USERNAME}\?start=[A-Za-z0-9_-]+", message.text)
            found += [b["url"] for row in message.keyboard for b in row if "url" in b]
        return [u for u in found if DEEP_LINK.match(u)]

    links = deep_links()
    assert links, f"nothing tells Ane to open the bot: {tg.group_texts(group)}"
    before = len(tg.calls())
    tg.user_starts_bot(ane, DEEP_LINK.match(links[0]).group(1))  # type: ignore[union-attr]
    await table.settle(before)
    for seat, user in others.items():
        await table.press(user, lobby, f"{table.table_id}.L.seat{seat}")
    await table.press(ane, lobby, f"{table.table_id}.L.start")
    assert table.hand_message(0, 1) is not None
    assert_clean(tg)


# ---------------------------------------------------------------------------------------------------------
# Delivery: deleted messages, flood waits, "not modified", pacing
# ---------------------------------------------------------------------------------------------------------


async def test_a_deleted_table_message_is_posted_again(tg: FakeTelegram, bot: RunningBot) -> None:
    table = await open_table(tg, bot)
    await table.play(lambda s, m, seat, codes: "mus", until=lambda s, m: hand_of(m).phase is Phase.DISCARD)
    deleted = table.table_message(1)
    tg.delete_message_as_user(table.chat, deleted.message_id)
    for seat in range(4):
        await table.discard(seat, [0])
    # The edit of the deleted message failed; the newest state was posted as a new message.
    reposted = table.table_message(1)
    assert reposted.message_id != deleted.message_id and not reposted.deleted
    _, match = await table.state()
    assert hand_of(match).phase is Phase.MUS and hand_of(match).mus_round == 1
    assert "Discards: " in reposted.text
    # Its buttons work, and later states edit the new message in place.
    seat = hand_of(match).turn
    versions = len(reposted.history)
    record = await table.press(table.players[seat], reposted, reposted.button_data("No hay mus"))  # type: ignore[index]
    assert (record.answer or {}).get("text") is None
    assert table.table_message(1) is reposted and len(reposted.history) == versions + 1
    assert "Lance: GRANDE" in reposted.text
    assert_clean(tg, allowed=lambda c: c.description == "Bad Request: message to edit not found")
    assert [c.params["message_id"] for c in tg.rejected()] == [deleted.message_id]


async def test_retry_after_waits_then_renders_the_newest_state(tg: FakeTelegram, bot: RunningBot) -> None:
    table = await open_table(tg, bot)
    on_screen = table.table_message(1)
    group_id = table.chat.id
    tg.fail_next("editMessageText", 429, retry_after=1, chat_id=group_id)
    # Four players say "mus" quickly: the first edit hits the flood wait, the others come during it.
    _, match = await table.state()
    mano = hand_of(match).mano
    for offset in range(4):
        user = table.players[(mano + offset) % 4]
        _, match = await table.state()
        step = len(hand_of(match).log)
        record = await table.press(
            user, on_screen, f"{table.table_id}.1-{step}.mus", check_button=False, flush=False
        )
        assert (record.answer or {}).get("text") is None, record
    _, match = await table.state()
    assert hand_of(match).phase is Phase.DISCARD
    flood = next(c for c in tg.calls("editMessageText", group_id) if c.injected)
    await bot.sender.flush(timeout=5.0)
    after = [c for c in tg.calls("editMessageText", group_id) if c.seq > flood.seq]
    assert len(after) == 1, after  # no queue of stale edits: one edit, with the newest state
    assert after[0].time - flood.time >= 1.0
    assert "Lance: DISCARDS" in on_screen.text and on_screen.buttons == [
        ("🂠 My cards", f"{table.table_id}.1.cards")
    ]
    assert bot.sender.stats["retry_after"] == 1
    assert_clean(tg)


async def test_message_not_modified_counts_as_success(tg: FakeTelegram, bot: RunningBot) -> None:
    table = await open_table(tg, bot)
    on_screen = table.table_message(1)
    sends = len(tg.calls("sendMessage"))
    tg.fail_next(
        "editMessageText",
        400,
        description="Bad Request: message is not modified: specified new message content and reply markup "
        "are exactly the same as a current content and reply markup of the message",
        chat_id=table.chat.id,
    )
    _, match = await table.state()
    user = table.players[hand_of(match).turn]  # type: ignore[index]
    record = await table.press(user, on_screen, on_screen.button_data("Mus"))
    assert (record.answer or {}).get("text") is None
    assert len(tg.calls("sendMessage")) == sends  # not posted again, not retried
    assert len([c for c in tg.calls("editMessageText", table.chat.id) if c.injected]) == 1
    assert bot.sender.stats["not_modified"] == 1
    # The next state edits the same message (the client still shows the first state: Telegram said so).
    _, match = await table.state()
    user = table.players[hand_of(match).turn]  # type: ignore[index]
    await table.press(user, on_screen, f"{table.table_id}.1-1.mus", check_button=False)
    assert (
        table.table_message(1) is on_screen and ": mus · " in on_screen.text and len(on_screen.history) == 2
    )
    assert_clean(tg)


async def test_pacing_one_call_per_interval_per_chat(tg: FakeTelegram, bots: list[RunningBot]) -> None:
    """With pacing, no chat gets two calls closer than the interval; bursts coalesce into the latest state."""
    interval = 0.25
    bot = await start_bot(tg, memory_service(seed=5), min_interval=interval)
    bots.append(bot)
    # When the bot issues each call, per chat (the fake server's arrival times also carry the request's own
    # latency, which on a loaded machine can bring two paced calls closer than the interval).
    # An attempt counts only if it made a call: one that made none (a view already shown) leaves its turn to
    # the next attempt, which then goes at once.
    issued: dict[str, list[float]] = {}
    attempt = bot.sender._attempt

    async def spy(lane, item):  # type: ignore[no-untyped-def]
        started = time.monotonic()
        result = await attempt(lane, item)
        made = bot.sender._counted._made.get(lane.chat_id)  # (the lane reads and clears it next)
        if made is not None and made.calls:
            issued.setdefault(lane.chat_id, []).append(started)
        return result

    bot.sender._attempt = spy
    table = await open_table(tg, bot)
    await bot.sender.flush()
    start_seq = len(tg.calls())
    on_screen = table.table_message(1)
    # The first edit of the burst is held until every press is in, whatever the machine's speed: the states
    # in between must then coalesce (on a loaded machine, presses slower than the interval did not).
    gate = asyncio.Event()
    edit = bot.sender.transport.edit

    async def held_edit(chat, message_id, message, check=None):  # type: ignore[no-untyped-def]
        await gate.wait()
        return await edit(chat, message_id, message, check)

    bot.sender.transport.edit = held_edit  # type: ignore[method-assign]
    presses = 0
    for _ in range(12):
        _, match = await table.state()
        hand = hand_of(match)
        if hand.phase is not Phase.MUS:
            break
        user = table.players[hand.turn]  # type: ignore[index]
        step = len(hand.log)
        code = "mus" if hand.mus_round == 0 else "nomus"
        await table.press(
            user, on_screen, f"{table.table_id}.1-{step}.{code}", check_button=False, flush=False
        )
        presses += 1
    gate.set()
    await bot.sender.flush()
    burst = [
        c for c in tg.calls()[start_seq:] if c.chat_id == table.chat.id and c.method == "editMessageText"
    ]
    assert len(burst) < presses, (burst, presses)  # the states in between coalesced into the latest
    assert burst[-1].params["text"] == on_screen.text and "Lance: DISCARDS" in on_screen.text
    for seat in range(4):
        if hand_of((await table.state())[1]).phase is Phase.DISCARD:
            await table.discard(seat, [0])
    await table.play(until=lambda s, m: hand_of(m).phase is Phase.GRANDE or s.hand_no > 1, timeout=8.0)
    await bot.sender.flush()
    assert f"tg:{table.chat.id}" in issued
    # The pacing itself, as the bot issues its calls (arrival times at the server also carry each request's
    # own latency, which on a loaded machine brings paced calls closer: bench/telegram.py measures those).
    for chat_id, times in issued.items():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert not gaps or min(gaps) >= interval * 0.95, (chat_id, gaps)
    assert_clean(tg)


# ---------------------------------------------------------------------------------------------------------
# Command menus, restart
# ---------------------------------------------------------------------------------------------------------


async def test_production_startup_sets_command_menus_and_polls(tg: FakeTelegram, redis_url: str) -> None:
    """``start_telegram`` (what ``musbot run`` calls): command menus in six languages, then long polling."""
    settings = settings_for(tg, redis_url=redis_url, redis_prefix=unique_prefix())
    app = await build_app(settings, flow=FAST, rng_factory=seeded(1), id_factory=table_ids())
    application, runtime = await start_telegram(app, settings, telegram_settings_for(tg), rate_limiter=False)
    try:
        assert len(LANGUAGES) == 6
        menus = {lang: tg.commands_for(language_code=lang) for lang in ("", *LANGUAGES)}
        names = ["newgame", "leaderboard", "stats", "rules", "learn", "language", "history", "cancel", "help"]
        for lang, menu in menus.items():
            assert [c["command"] for c in menu] == names, lang
        assert menus[""] == menus["es"]  # Spanish by default
        assert menus["en"][0]["description"] == "Open a Mus table here"
        descriptions = {lang: tuple(c["description"] for c in menu) for lang, menu in menus.items() if lang}
        assert len(set(descriptions.values())) == 6, descriptions
        assert (
            descriptions["es"][0]
            == translator("es").gettext("Open a Mus table here")
            != descriptions["en"][0]
        )

        group = tg.add_group("Mus")
        ane = tg.add_user("Ane")
        tg.user_sends(ane, group, f"/newgame@{BOT_USERNAME}")
        lobby = await tg.wait_for(lambda: tg.last_bot_message(group), timeout=5.0)
        assert lobby.text.startswith("🂠 Mus · mesa nueva"), lobby  # Spanish by default
        assert len(lobby.buttons) == 11  # 4 seats, 3 options, the machines' level, leave, start, cancel
    finally:
        await stop_telegram(application, runtime)
        await app.close()
    assert_clean(tg)


async def test_production_startup_with_a_webhook(tg: FakeTelegram, redis_url: str) -> None:
    """Webhook mode: ``setWebhook`` with a secret path and token; updates posted there are handled."""
    port = free_port()
    settings = settings_for(tg, redis_url=redis_url, redis_prefix=unique_prefix())
    telegram = telegram_settings_for(
        tg,
        webhook_url="https://mus.example.org/tg-5f0c1e9a",
        webhook_secret=SecretStr("s3cret-Token_42"),
        webhook_listen="127.0.0.1",
        webhook_port=port,
    )
    app = await build_app(settings, flow=FAST, rng_factory=seeded(1), id_factory=table_ids())
    application, runtime = await start_telegram(app, settings, telegram, rate_limiter=False)
    try:
        assert tg.webhook is not None and tg.webhook["url"] == "https://mus.example.org/tg-5f0c1e9a"
        assert tg.webhook["secret_token"] == "s3cret-Token_42"
        assert set(tg.webhook["allowed_updates"]) == {"message", "callback_query", "my_chat_member"}
        group = tg.add_group("Mus")
        ane = tg.add_user("Ane")
        tg.user_sends(ane, group, "/newgame")
        update = tg.updates[-1]
        url = f"http://127.0.0.1:{port}/tg-5f0c1e9a"
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "wrong"}) as r:
                assert r.status == 403
            async with http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret-Token_42"}
            ) as r:
                assert r.status == 200
        lobby = await tg.wait_for(lambda: tg.last_bot_message(group), timeout=5.0)
        assert lobby.text.startswith("🂠 Mus · mesa nueva")
        assert len([m for m in tg.bot_messages(group)]) == 1  # the forged update did nothing
    finally:
        await stop_telegram(application, runtime)
        await app.close()
    assert_clean(tg)


def unique_prefix() -> str:
    return f"e2e:{random.Random().getrandbits(48):012x}:"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_restart_mid_hand_resumes_with_the_buttons_on_screen(
    tg: FakeTelegram, bots: list[RunningBot], redis_url: str
) -> None:
    """The bot process stops mid-hand and starts again on the same Redis: a deadline armed before the
    restart fires after it, the buttons drawn before the restart work, and the same messages are edited."""
    prefix = unique_prefix()
    delay = 0.4
    flow = FlowSettings(turn_timeout=3600, machine_delay=delay, next_hand_delay=0, catch_window=3.0)
    settings = settings_for(tg, redis_url=redis_url, redis_prefix=prefix)

    async def boot(seed: int) -> RunningBot:
        app = await build_app(settings, flow=flow, rng_factory=seeded(seed), id_factory=table_ids())
        running = await start_bot(tg, app.service, RedisSurfaces(app.redis, prefix), app=app)
        bots.append(running)
        return running

    table = await open_table(tg, await boot(1), humans=(0, 1, 2))  # seat 3: a machine

    def machine_to_bet(state: TableState, match: Match | None) -> bool:
        hand = hand_of(match)
        return hand.phase not in (Phase.MUS, Phase.DISCARD) and hand.turn == 3

    # 1. Stop while the machine's move is pending: its deadline lives in Redis, armed by this process.
    await table.play(until=machine_to_bet)
    on_screen = table.table_message(1)
    await table.bot.stop()
    await asyncio.sleep(delay + 0.1)
    state, match = await table.state()
    assert hand_of(match).turn == 3 and state.due_key is not None and "|machine|" in state.due_key
    steps = len(hand_of(match).log)

    table.use(await boot(2))
    await tg.wait_for(
        lambda: len(on_screen.history) > 1 and not re.search(r"🤖 \w+'s turn", on_screen.text), timeout=5.0
    )
    state, match = await table.state()
    assert len(hand_of(match).log) > steps  # the machine played, fired by the new process
    assert table.table_message(1) is on_screen  # ...which edited the same message

    # 2. Stop while a human is on turn; after the restart they press the button they see.
    await table.play(until=lambda s, m: hand_of(m).turn in table.players and not hand_of(m).over)
    state, match = await table.state()
    seat = hand_of(match).turn
    assert seat is not None
    buttons_before = list(on_screen.buttons)
    await table.bot.stop()
    table.use(await boot(3))
    calls_before = len(tg.calls())
    codes = {code_of(d): d for _, d in buttons_before if "-" in stamp_of(d)}
    choice = codes.get("paso") or codes.get("noquiero") or next(iter(codes.values()))
    record = await table.press(table.players[seat], on_screen, choice)  # type: ignore[arg-type]
    assert (record.answer or {}).get("text") is None, record  # it played
    state, match = await table.state()
    assert hand_of(match).log[-1].seat == seat
    assert table.table_message(1) is on_screen and on_screen.buttons != buttons_before
    # No private hand was posted again by the new process.
    after = tg.calls()[calls_before:]
    assert not [
        c for c in after if c.method == "sendMessage" and c.chat_id in {u.id for u in table.players.values()}
    ]

    # 3. The hand goes on to its showdown and the next deal, on the restarted process.
    await table.play(until=lambda s, m: s.hand_no >= 2, timeout=8.0)
    assert len([t for t in tg.group_texts(table.chat) if t.startswith("🂡 Hand 1")]) == 1
    assert audit_no_card_leaks(tg, table) > 0
    assert_clean(tg, allowed=lambda c: MESSAGE_NOT_MODIFIED in (c.description or ""))


# ---------------------------------------------------------------------------------------------------------
# Turn deadlines, cancelling
# ---------------------------------------------------------------------------------------------------------


async def test_a_player_who_does_not_answer_is_replaced_by_the_machine(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    """Every human decision has a deadline: on timeout the machine plays it; after two, it keeps the seat."""
    timeout = 0.3
    flow = FlowSettings(turn_timeout=timeout, machine_delay=0.3, next_hand_delay=0.3, catch_window=3.0)
    bot = await start_bot(tg, memory_service(flow, seed=11))
    bots.append(bot)
    table = await open_table(tg, bot, humans=(0, 1))  # seats 2 and 3: machines
    # Nobody presses anything: each human times out twice, then the machine keeps their seat.
    await tg.wait_for(
        lambda: sum("keeps" in t for t in tg.group_texts(table.chat)) == 2, timeout=4 * timeout + 3.0
    )
    texts = tg.group_texts(table.chat)
    for name in ("Ane", "Brais"):
        assert f"⏱ {name} ran out of time: a machine played for them." in texts
        assert f"🤖 A machine keeps {name}'s seat until they play again." in texts
    state, _ = await table.state()
    assert all(state.seats[s].autopilot for s in (0, 1))
    # Ane comes back: "My cards" gives her the seat back, and her cards in an alert (no private message).
    alerts = []
    for _attempt in range(8):  # the hand may end between reading it and pressing
        state, _ = await table.state()
        hand_no = state.hand_no
        on_screen = await tg.wait_for(lambda n=hand_no: table.find_table_message(n), timeout=3.0)  # type: ignore[misc]
        record = await table.press(
            table.players[0], on_screen, f"{table.table_id}.{hand_no}.cards", check_button=False
        )
        answer = record.answer or {}
        if str(answer.get("text", "")).startswith("Your cards: "):
            alerts.append((hand_no, record))
        if len(alerts) == 5:
            break
    assert len(alerts) == 5, alerts
    for hand_no, record in alerts:
        answer = record.answer or {}
        assert answer["show_alert"] is True and len(answer["text"]) <= 200, answer
        shown = set(re.findall(r"\S+", answer["text"].removeprefix("Your cards: ").split(" → ")[0]))
        assert len(shown) == 4 and shown <= table.seen[hand_no][0], (answer, table.seen[hand_no][0])
        # No private message for that hand after the press (a new deal's hand is another matter).
        sent = [
            c.params["text"]
            for c in tg.calls("sendMessage", table.players[0].id)
            if c.time >= record.created and c.params["text"].splitlines()[0].endswith(f" {hand_no}")
        ]
        assert sent == [], sent
    state, _ = await table.state()
    assert not state.seats[0].autopilot and state.seats[1].autopilot
    assert audit_no_card_leaks(tg, table) > 0
    assert_clean(tg)


async def test_superseded_messages_keep_no_live_buttons(tg: FakeTelegram, bot: RunningBot) -> None:
    """Issue 9: old table and hand messages kept live buttons. Whenever a new message takes over a slot (a new
    hand's table, new cards after the discards, /newgame posting the running table again, the hand sent again
    through a deep link), the old one loses its keyboard: every chat shows at most one per table and slot."""
    table = await open_table(tg, bot)
    code = table.table_id

    def mus_first(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
        hand = hand_of(match)
        return "mus" if hand.phase is Phase.MUS and hand.mus_round == 0 and "mus" in codes else None

    # Hand 1 with discards (new private hands), then hand 2 dealt (a new table and new private hands).
    await table.play(mus_first, until=lambda s, m: s.hand_no >= 2)
    assert table.table_message(1).buttons == []
    for seat, user in table.players.items():
        hands_one = [m for m in tg.bot_messages(user.id) if m.text.splitlines()[0].endswith(" 1")]
        assert len(hands_one) >= 2, hands_one  # the deal, and the cards after the discards
        assert all(m.buttons == [] for m in hands_one), (seat, hands_one)
    assert_one_live_keyboard_per_slot(tg)

    # /newgame while the table runs: the table is posted again; the copy above it goes quiet.
    before = table.table_message(2)
    assert before.buttons
    await table.command(table.players[1], "/newgame")
    after = table.table_message(2)
    assert after is not before and after.message_id > before.message_id
    assert before.buttons == [] and f"{code}.2.cards" in [d for _, d in after.buttons]
    assert_one_live_keyboard_per_slot(tg)

    # The hand sent again through a deep link (/start h<table>): the older copy goes quiet.
    brais = table.players[1]
    old_hand = table.hand_message(1, 2)
    assert old_hand is not None
    call = len(tg.calls())
    tg.user_starts_bot(brais, f"h{code}")
    await table.settle(call)
    new_hand = table.hand_message(1, 2)
    assert new_hand is not None and new_hand is not old_hand
    assert_one_live_keyboard_per_slot(tg)

    # Two more hands; then every superseded table and hand message, in every chat, has no buttons.
    await table.play(mus_first, until=lambda s, m: s.hand_no >= 4 or s.status is not TableStatus.PLAYING)
    live = assert_one_live_keyboard_per_slot(tg)
    assert live >= 1
    group_tables = [m for m in tg.bot_messages(table.chat) if any(".cards" in d for d in ever_data(m))]
    assert len(group_tables) >= 4 and all(m.buttons == [] for m in group_tables[:-1]), group_tables
    for user in table.players.values():
        hands = [m for m in tg.bot_messages(user.id) if has_card_symbol(m.text) and ever_data(m)]
        assert all(m.buttons == [] for m in hands[:-1]), hands
    # Nothing was stripped in vain (a message already without buttons is left alone: no "not modified").
    stripped = tg.calls("editMessageReplyMarkup")
    assert stripped and all(c.ok for c in stripped), stripped
    assert bot.sender.stats["stripped"] == len(stripped)
    assert audit_no_card_leaks(tg, table) > 0
    assert_clean(tg)


async def test_cancel_closes_the_table_and_its_buttons(tg: FakeTelegram, bot: RunningBot) -> None:
    """/cancel mid-game (issue 9: "Table cancelled" came twice, and old buttons stayed live): one notice, and
    no message of the table — lobby, table, private hands — keeps a button."""
    table = await open_table(tg, bot)
    # Into the discards: the private hands show card buttons too.
    await table.play(lambda s, m, seat, codes: "mus", until=lambda s, m: hand_of(m).phase is Phase.DISCARD)
    await table.discard(0, [0])
    on_screen = table.table_message(1)
    buttons = [d for _, d in on_screen.buttons]
    hands = {seat: table.hand_message(seat, 1) for seat in table.players}
    assert all(m is not None and m.buttons for m in hands.values()), hands
    private_buttons = {seat: [d for _, d in m.buttons] for seat, m in hands.items() if m is not None}
    await table.command(table.players[1], "/cancel")
    assert tg.group_texts(table.chat)[-1] == "Only the player who created the table can do that."
    await table.command(table.players[0], "/cancel")
    state, _ = await table.state()
    assert state.status is TableStatus.CANCELLED
    notices = [m.text for m in tg.bot_messages(table.chat) if not ever_data(m) and "cancel" in m.text.lower()]
    assert notices == ["Table cancelled."], notices
    for chat_id in (table.chat.id, *(u.id for u in table.players.values())):
        live = [m for m in tg.bot_messages(chat_id) if any(table.table_id in (d or "") for _, d in m.buttons)]
        assert live == [], (chat_id, live)
    # Private buttons pressed from a client that did not refresh change nothing either.
    version = await stored_version(bot, table.table_id)
    for seat, datas in private_buttons.items():
        message = hands[seat]
        assert message is not None
        for data in datas[:2]:
            record = await table.press(table.players[seat], message, data, check_button=False)  # type: ignore[arg-type]
            assert (record.answer or {}).get("text"), (data, record)
    assert await stored_version(bot, table.table_id) == version
    version = await stored_version(bot, table.table_id)
    for data in buttons:
        record = await table.press(table.players[0], on_screen, data, check_button=False)
        assert record.answer.get("text"), (data, record)  # type: ignore[union-attr]
    assert await stored_version(bot, table.table_id) == version
    # A new table can be opened in the chat.
    await table.command(table.players[1], "/newgame")
    assert tg.group_texts(table.chat)[-1].startswith("🂠 Mus · new table")
    assert_clean(tg)


async def test_other_commands_in_every_language(tg: FakeTelegram, bot: RunningBot) -> None:
    """/help, /rules, /stats and /language answer within Telegram's limits in each language; /rules full goes
    to the asker's private chat, section by section, in HTML with no Markdown marker left."""
    group = tg.add_group("Mus")
    ane = tg.add_user("Ane", language_code="en")
    tg.user_starts_bot(ane)
    table = Table(tg, bot, group, players={0: ane})
    await table.settle()
    await table.command(ane, "/language xx")
    assert "es (" in tg.group_texts(group)[-1] and "eu (" in tg.group_texts(group)[-1]
    # /language alone offers the languages as buttons; a press sets the language of that chat.
    await table.command(ane, "/language")
    picker = tg.bot_messages(group)[-1]
    assert picker.text == translator("es").gettext("Choose the language of this chat:"), picker  # the default
    assert [label for label, _ in picker.buttons] == [LANGUAGE_NAMES[c] for c in LANGUAGES]
    euskara = next(d for label, d in picker.buttons if label == LANGUAGE_NAMES["eu"])
    record = await table.press(ane, picker, euskara)  # type: ignore[arg-type]
    assert record.answer is not None and record.answer.get("text") == translator("eu").format(
        "Language set to {language}.", language="Euskara"
    )
    assert await bot.service.deps.prefs.get_language(f"tg:{group.id}") == "eu"
    for lang in LANGUAGES:
        before, privately = len(tg.bot_messages(group)), len(tg.bot_messages(ane.id))
        await table.command(ane, f"/language {lang}")
        for text in ("/help", "/rules", "/rules full", "/stats", "/leaderboard", "/leaderboard global"):
            await table.command(ane, text)
        new = tg.bot_messages(group)[before:]
        # "Sent privately", in Ane's language: once, as the same answer within a minute is not posted again.
        told = [m for m in new if m.text == "📖 I sent you the full rules in our private chat."]
        assert len(told) == (1 if lang == LANGUAGES[0] else 0) and len(new) >= 6 + len(told), (lang, new)
        assert all(0 < len(m.text) <= 4096 for m in new)
        assert not told or new[-4] is told[0], new
        sections = tg.bot_messages(ane.id)[privately:]
        assert len(sections) >= 3, (lang, sections)
        for m in sections:
            assert 0 < len(m.text) <= 4096
            # The heading is bold: an entity at offset 0, not asterisks.
            assert any(e["type"] == "bold" and e["offset"] == 0 for e in m.entities), m
    summary = [m for m in tg.bot_messages(group) if any(e["type"] == "bold" for e in m.entities)]
    assert len(summary) == len(LANGUAGES)  # one /rules summary per language, with bold words
    sent = [c for c in tg.calls("sendMessage") if c.ok and c.params.get("parse_mode") == "HTML"]
    assert len(sent) >= 4 * len(LANGUAGES)
    for chat_id in (group.id, ane.id):
        for m in tg.messages_in(chat_id, from_bot=True):
            assert "**" not in m.text and "<b>" not in m.text, m
    assert_clean(tg)


async def test_full_rules_for_someone_who_blocked_the_bot_since(tg: FakeTelegram, bot: RunningBot) -> None:
    """/rules full in a group by someone who opened the bot and blocked it since: Telegram told the bot of the
    block (``my_chat_member``), so the group gets the link that sends the rules once they unblock it — never
    a "sent privately" that did not reach them; asked again at once, the same link is not repeated."""
    group = tg.add_group("Mus")
    iker = tg.add_user("Iker", language_code="en")
    table = Table(tg, bot, group, players={0: iker})
    tg.user_starts_bot(iker)
    await table.settle()
    await table.command(iker, "/language en")
    tg.user_blocks_bot(iker)
    welcomed = len(tg.bot_messages(iker.id))
    for _ in range(2):
        await table.command(iker, "/rules full")
        await bot.sender.flush()
    texts = tg.group_texts(group)
    assert "📖 I sent you the full rules in our private chat." not in texts, texts
    links = [t for t in texts if t.startswith("Open a private chat with me to read the full rules:")]
    assert len(links) == 1 and links[0].endswith("?start=rules"), texts
    assert len(tg.bot_messages(iker.id)) == welcomed  # no rules reached the blocked chat
    assert_clean(tg)


async def test_full_rules_for_someone_the_bot_cannot_write_to(tg: FakeTelegram, bot: RunningBot) -> None:
    """/rules full in a group by someone who never opened the bot: a ?start=rules link in the group (no
    attempt to write first); following it sends the full rules privately. In a private chat: no answer."""
    group = tg.add_group("Mus")
    zuri = tg.add_user("Zuri", language_code="en")
    table = Table(tg, bot, group, players={0: zuri})
    await table.command(zuri, "/rules full")
    (answer,) = tg.bot_messages(group)
    links = re.findall(r"https://\S+", answer.text)
    assert len(links) == 1 and DEEP_LINK.match(links[0]) and links[0].endswith("?start=rules"), answer
    assert tg.calls("sendMessage", zuri.id) == []  # the bot did not try to write first
    before = len(tg.calls())
    tg.user_starts_bot(zuri, "rules")
    await table.settle(before)
    sections = tg.bot_messages(zuri.id)
    assert len(sections) >= 3 and all(m.entities for m in sections), sections
    assert all("**" not in m.text for m in sections)
    assert tg.bot_messages(group) == [answer]  # nothing more in the group
    # Now reachable: /rules full in the group sends them again privately, with a one-line answer there.
    await table.command(zuri, "/rules full")
    assert tg.group_texts(group)[-1] == "📖 I sent you the full rules in our private chat."
    assert len(tg.bot_messages(zuri.id)) == 2 * len(sections)
    # In the private chat itself: the sections, no answer.
    await table.command(zuri, "/rules full", tg.private_chat(zuri))
    assert len(tg.bot_messages(zuri.id)) == 3 * len(sections)
    assert_clean(tg)
