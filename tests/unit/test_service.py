"""The bot service as users meet it, on in-process stores with a fake clock and seeded randomness.

Every test drives :class:`bot.app.Service` through its public coroutines (commands, button presses,
deadlines) and checks what a player would notice: the messages shown, the answers to presses, and that a
refused press changes nothing in the store (same version, same data).
"""

from __future__ import annotations

import asyncio
import random
import string
from typing import Any

import pytest
from service_helpers import (
    ANE,
    BRAIS,
    CAMILLE,
    DANI,
    GROUP,
    GROUP2,
    OUTSIDER,
    Harness,
    all_labels,
    buttons_of,
    code_of,
    english,
    human_step,
    seat_labels,
    snapshot,
    stamp_of,
    users_by_key,
)

from bot.app._chat_commands import LEADERBOARD_TITLE
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.i18n.rules import rules_sections, rules_summary
from bot.kernel import ChatRef, TableStatus, UserRef, parse_token
from bot.leaderboard import GLOBAL_SCOPE
from bot.screens import SENA_NAMES, card_label
from bot.store import StoredTable, StoreUnavailable, VersionConflict
from bot.store._memory import MemoryTableStore
from bot.table import FlowSettings
from engine.actions import ActionKind
from engine.cards import FULL_DECK, card_name
from engine.hand_types import Phase

ALREADY_TABLE = "There is already a table in this chat."
NOT_SEATED = "You are not seated at this table."
NOT_YOUR_TURN = "Not your turn."
ALREADY_PLAYED = "Already played."
STALE = "That button is no longer valid."
UNAVAILABLE = "The game store is unavailable right now; try again in a moment."
ONLY_CREATOR = "Only the player who created the table can do that."
SEAT_TAKEN = "That seat is taken."
STARTED_ALREADY = "The game has already started."

EVERY_LABEL = {card_label(c) for c in FULL_DECK}


@pytest.fixture
async def h() -> Harness:
    harness = Harness()
    await english(harness)
    return harness


# --- lobby -------------------------------------------------------------------------------------------


async def test_newgame_in_a_group_posts_a_lobby_with_seats_options_start_and_cancel(h: Harness) -> None:
    o = await h.new_table(GROUP, ANE)
    assert o.ok
    lobby = [m for m in o.messages if m.slot == "lobby"]
    assert len(lobby) == 1 and lobby[0].chat == GROUP.key and not lobby[0].private
    text, rows = lobby[0].text, lobby[0].buttons
    assert "Ane" in text
    codes = [code_of(b.token) for b in buttons_of(lobby)]
    assert sorted(c for c in codes if c.startswith("seat")) == ["seat0", "seat1", "seat2", "seat3"]
    for code in ("o_senas", "o_target", "o_mode", "start", "cancel"):
        assert code in codes, code
    # Two seat buttons per team, one row each: team A is seats 0 and 2, team B seats 1 and 3.
    seat_rows = [
        sorted(code_of(b.token) for b in row) for row in rows if code_of(row[0].token).startswith("seat")
    ]
    assert seat_rows == [["seat0", "seat2"], ["seat1", "seat3"]]
    for b in buttons_of(lobby):
        parse_token(b.token)
        assert stamp_of(b.token) == "L"
    state = await h.load(o.table)
    assert state.table.status is TableStatus.LOBBY
    assert state.table.seats[0].user == ANE.key  # the creator is seated
    assert [s.empty for s in state.table.seats] == [False, True, True, True]
    assert await h.tables.table_for_chat(GROUP.key) == o.table


async def test_second_newgame_in_the_same_chat_creates_nothing(h: Harness) -> None:
    first = await h.new_table(GROUP, ANE)
    before = await snapshot(h, first.table)
    again = await h.new_table(GROUP, BRAIS)
    assert not again.ok
    assert again.answer == ALREADY_TABLE
    assert await h.tables.table_for_chat(GROUP.key) == first.table
    assert await snapshot(h, first.table) == before
    for table_id in h.issued:
        if table_id != first.table:
            assert await h.tables.load(table_id) is None
    # Another chat may open its own table.
    other = await h.new_table(GROUP2, BRAIS)
    assert other.ok and other.table != first.table


async def test_join_a_free_seat_a_taken_seat_move_and_leave(h: Harness) -> None:
    tid = await h.lobby(GROUP, ANE)
    o = await h.press(BRAIS, h.token(tid, "lobby", GROUP.key, "seat1"))
    assert o.ok and o.answer == "You joined team B."
    assert "Brais" in h.shown(tid, "lobby", GROUP.key).text
    assert (await h.load(tid)).table.seats[1].user == BRAIS.key

    before = await snapshot(h, tid)
    o = await h.press(CAMILLE, h.token(tid, "lobby", GROUP.key, "seat1"))
    assert not o.ok and o.answer == SEAT_TAKEN
    assert await snapshot(h, tid) == before
    o = await h.press(CAMILLE, h.token(tid, "lobby", GROUP.key, "seat0"))  # the creator's seat
    assert not o.ok and o.answer == SEAT_TAKEN
    assert await snapshot(h, tid) == before

    o = await h.press(BRAIS, h.token(tid, "lobby", GROUP.key, "seat2"))  # moving to the other team
    assert o.ok and o.answer == "You joined team A."
    seats = (await h.load(tid)).table.seats
    assert seats[1].empty and seats[2].user == BRAIS.key
    o = await h.press(CAMILLE, h.token(tid, "lobby", GROUP.key, "seat1"))  # the freed seat
    assert o.ok

    o = await h.press(BRAIS, h.token(tid, "lobby", GROUP.key, "leave"))
    assert o.ok and o.answer == "You left your seat."
    seats = (await h.load(tid)).table.seats
    assert seats[2].empty and BRAIS.key not in [s.user for s in seats]
    assert "Brais" not in h.shown(tid, "lobby", GROUP.key).text

    before = await snapshot(h, tid)
    o = await h.press(DANI, h.token(tid, "lobby", GROUP.key, "leave"))
    assert not o.ok and o.answer == NOT_SEATED
    assert await snapshot(h, tid) == before


async def test_only_the_creator_changes_options_or_starts(h: Harness) -> None:
    tid = await h.lobby(GROUP, ANE, (BRAIS, 1))
    before = await snapshot(h, tid)
    for user in (BRAIS, OUTSIDER):
        for code in ("o_senas", "o_target", "o_mode", "start", "cancel"):
            o = await h.press(user, h.token(tid, "lobby", GROUP.key, code))
            assert not o.ok and o.answer == ONLY_CREATOR, (user, code, o.answer)
            assert await snapshot(h, tid) == before

    assert "Señas: off" in [b.label for b in h.on_screen(tid, "lobby", GROUP.key)]
    o = await h.press(ANE, h.token(tid, "lobby", GROUP.key, "o_senas"))
    assert o.ok
    assert "Señas: on" in [b.label for b in h.on_screen(tid, "lobby", GROUP.key)]
    assert await h.press(ANE, h.token(tid, "lobby", GROUP.key, "o_target"))
    assert await h.press(ANE, h.token(tid, "lobby", GROUP.key, "o_mode"))
    options = (await h.load(tid)).table.options
    assert (options.senas, options.target, options.mode) == (True, 30, "game")
    text = h.shown(tid, "lobby", GROUP.key).text
    assert "señas on" in text and "30" in text and "single game" in text


async def test_start_fills_machines_and_sends_each_human_their_hand(h: Harness) -> None:
    tid = await h.lobby(GROUP, ANE, (BRAIS, 3))
    start = h.token(tid, "lobby", GROUP.key, "start")
    h.log.clear()
    o = await h.press(ANE, start)
    assert o.ok and o.answer == "The game starts!"
    state = await h.load(tid)
    assert state.table.status is TableStatus.PLAYING
    seats = state.table.seats
    assert [s.user for s in seats] == [ANE.key, None, None, BRAIS.key]
    assert [s.machine for s in seats] == [False, True, True, False]
    group = [m for m in o.messages if not m.private]
    assert all(m.chat == GROUP.key for m in group)
    tables = [m for m in group if m.slot == "table"]
    assert len(tables) == 1 and tables[0].fresh
    assert "🤖" in tables[0].text
    lobby = [m for m in group if m.slot == "lobby"]
    assert lobby and not buttons_of(lobby)  # the lobby loses its buttons once the game starts
    hands = {m.user: m for m in o.messages if m.slot == "hand"}
    assert set(hands) == {ANE.key, BRAIS.key}  # privately, only to the humans
    assert all(m.chat is None for m in hands.values())
    for seat, user in ((0, ANE), (3, BRAIS)):
        assert state.match is not None
        labels = seat_labels(state.match, seat)
        assert len(labels) == 4 and all(lab in hands[user.key].text for lab in labels)
    # The same start button again: refused, nothing changes.
    before = await snapshot(h, tid)
    o = await h.press(ANE, start)
    assert not o.ok and o.answer == STARTED_ALREADY
    assert await snapshot(h, tid) == before


async def test_group_messages_never_show_a_hidden_card_before_the_showdown() -> None:
    h = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=5), seed=7)
    await english(h)
    users = users_by_key(ANE, BRAIS)
    tid = await h.started(GROUP, ANE, (BRAIS, 1), senas=True)
    rng = random.Random(3)
    seen: set[str] = set()  # labels of every card any seat held in any hand so far
    checked_showdowns = 0
    checked_upto = 0
    last_hand = 0
    for _ in range(400):
        state = await h.load(tid)
        assert state.match is not None and state.match.hand is not None
        hand = state.match.hand
        seen |= all_labels(state.match)
        new = h.log[checked_upto:]
        checked_upto = len(h.log)
        for m in new:
            if m.private:
                assert m.user in users
                seat = state.table.seat_of(m.user)
                others = set().union(*(seat_labels(state.match, s) for s in range(4) if s != seat))
                if m.slot == "hand" and not hand.over:
                    leaked = [lab for lab in others if lab in m.text]
                    assert not leaked, f"{m.user} sees {leaked}: {m.text}"
                continue
            texts = [m.text, *(b.label for b in buttons_of([m]))]
            if m.slot == "showdown":
                if hand.over and hand.shown and m.text.startswith(f"🂡 Hand {state.table.hand_no} "):
                    for seat in range(4):
                        for lab in seat_labels(state.match, seat):
                            assert lab in m.text, (lab, m.text)
                    checked_showdowns += 1
                continue
            for text in texts:
                leaked = [lab for lab in seen | EVERY_LABEL if lab in text]
                assert not leaked, f"group {m.slot} shows {leaked}:\n{text}"
        if state.table.hand_no >= 4 and state.table.hand_no != last_hand and checked_showdowns >= 2:
            break
        last_hand = state.table.hand_no
        if not await human_step(h, tid, GROUP, users, rng):
            break
    assert checked_showdowns >= 1
    assert len(seen) > 16


async def test_one_table_message_per_hand_edited_in_place() -> None:
    """Within a hand the group table and the private hands are edited (not fresh); a new deal posts anew."""
    h = Harness(settings=FlowSettings(machine_delay=1, next_hand_delay=3), seed=9)
    await english(h)
    users = users_by_key(ANE, BRAIS)
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    rng = random.Random(4)
    hand_no = (await h.load(tid)).table.hand_no
    mus_round = 0
    deals = 0
    for _ in range(300):
        mark = len(h.log)
        if not await human_step(h, tid, GROUP, users, rng):
            break
        state = await h.load(tid)
        now = state.table.hand_no
        new = h.log[mark:]
        tables = [m for m in new if m.slot == "table"]
        hands = [m for m in new if m.slot == "hand"]
        if now != hand_no:
            deals += 1
            assert (
                tables and tables[-1].fresh and [m.fresh for m in tables[:-1]] == [False] * (len(tables) - 1)
            )
            assert {m.user for m in hands if m.fresh} == set(users)
        else:
            assert not any(m.fresh for m in tables), [m.text for m in tables]
            # New cards after the discards come as a new private message (it notifies); nothing else does.
            assert not any(m.fresh for m in hands) or state.match.hand.mus_round != mus_round
        assert all(m.fresh for m in new if m.slot in ("showdown", "notice"))
        hand_no = now
        mus_round = state.match.hand.mus_round
        if deals >= 3:
            break
    assert deals >= 3


async def test_newgame_in_a_private_chat_offers_the_solo_options(h: Harness) -> None:
    private = ChatRef("tg:1", True, "")
    o = await h.new_table(private, ANE)
    assert o.ok
    state = await h.load(o.table)
    assert state.table.status is TableStatus.LOBBY
    (lobby,) = [m for m in o.messages if m.slot == "lobby"]
    codes = [b.token.rsplit(".", 1)[1] for row in lobby.buttons for b in row]
    # The same options as a group table, and no seats to take: the other three are machines.
    assert codes == ["o_senas", "o_target", "o_mode", "o_level", "start", "cancel"]
    for code in ("o_senas", "o_target", "o_mode", "o_level"):
        assert (await h.press(ANE, lobby.buttons[0][0].token.replace("o_senas", code))).ok
    started = await h.press(ANE, lobby.buttons[-1][0].token)
    assert started.ok and started.answer == "The game starts!"
    state = await h.load(o.table)
    assert state.table.status is TableStatus.PLAYING
    opts = state.table.options
    assert (opts.senas, opts.target, opts.mode, opts.difficulty) == (True, 30, "game", "hard")
    seats = state.table.seats
    assert seats[0].user == ANE.key and not seats[0].machine
    assert all(s.machine and s.user is None for s in seats[1:])  # partner (seat 2) and both rivals
    assert [m.user for m in started.messages if m.slot == "hand"] == [ANE.key]
    assert any(m.slot == "table" and m.chat == private.key for m in started.messages)
    closed = [m for m in started.messages if m.slot == "lobby"]
    assert closed and closed[0].buttons == ()  # the options message is closed, not left with live buttons


# --- authorization ------------------------------------------------------------------------------------


async def started_pair(h: Harness) -> str:
    return await h.started(GROUP, ANE, (BRAIS, 1))


def user_of(key: str | None) -> UserRef:
    return {ANE.key: ANE, BRAIS.key: BRAIS}[key]  # type: ignore[index]


async def test_turn_buttons_only_for_the_seated_player_on_turn(h: Harness) -> None:
    tid = await started_pair(h)
    state = await h.load(tid)
    on_turn = user_of(state.user_on_turn())
    other = BRAIS if on_turn is ANE else ANE
    token = h.turn_tokens(tid, GROUP.key)[0]
    before = await snapshot(h, tid)
    o = await h.press(OUTSIDER, token)
    assert (o.ok, o.answer) == (False, NOT_SEATED)
    assert await snapshot(h, tid) == before
    o = await h.press(other, token)
    assert (o.ok, o.answer) == (False, NOT_YOUR_TURN)
    assert await snapshot(h, tid) == before
    o = await h.press(on_turn, token)
    assert o.ok
    after = await h.load(tid)
    assert after.version == before[0] + 1
    assert any(r.seat == state.turn for r in after.match.hand.log[len(state.match.hand.log) :])


async def test_a_worker_whose_copy_is_stale_retries_on_the_table_its_refused_write_brought_back(
    h: Harness,
) -> None:
    """Two workers on one store: the first's copy of the table is a version behind after the second wrote.
    Its write is refused, and the refusal carries the table as stored: the step runs again on it, with no
    read of its own (with several workers, most presses land on a worker whose copy is behind)."""
    other = Harness(tables=h.tables, deadlines=h.deadlines, prefs=h.prefs, leaderboard=h.leaderboard, seed=2)
    other.clock = h.clock
    tid = await h.lobby(GROUP, ANE)  # (this worker keeps the lobby it wrote)
    assert (await other.press(BRAIS, h.token(tid, "lobby", GROUP.key, "seat1"))).ok
    reads = []
    load = h.tables.load

    async def counted(table_id: str) -> StoredTable | None:
        reads.append(table_id)
        return await load(table_id)

    h.tables.load = counted  # type: ignore[method-assign]
    assert (await h.press(CAMILLE, h.token(tid, "lobby", GROUP.key, "seat2"))).ok
    assert reads == []
    seats = (await h.load(tid)).table.seats
    assert [seat.user for seat in seats[:3]] == [ANE.key, BRAIS.key, CAMILLE.key]


async def test_workers_taking_a_tables_presses_in_turn_read_it_rather_than_write_for_nothing(
    h: Harness,
) -> None:
    """Two workers take one table's presses in turn (a round-robin balancer). Each one's first write on a
    copy the other overtook is refused; after that, each reads the table before its step (one read) and no
    write is refused again: no step run, drawn and sent for nothing."""
    other = Harness(tables=h.tables, deadlines=h.deadlines, prefs=h.prefs, leaderboard=h.leaderboard, seed=2)
    other.clock = h.clock
    refused = []
    write = h.tables.compare_and_set

    async def counted(table_id: str, expected_version: int, data: str, **kwargs: Any) -> StoredTable:
        try:
            return await write(table_id, expected_version, data, **kwargs)
        except VersionConflict:
            refused.append(expected_version)
            raise

    h.tables.compare_and_set = counted  # type: ignore[method-assign]
    tid = await h.lobby(GROUP, ANE)
    presses = [(other, BRAIS, "seat1"), (h, CAMILLE, "seat2"), (other, DANI, "seat3")]
    presses += [(h, CAMILLE, "leave"), (other, CAMILLE, "seat2"), (h, DANI, "leave"), (other, DANI, "seat3")]
    for worker, user, code in presses:
        assert (await worker.press(user, h.token(tid, "lobby", GROUP.key, code))).ok, (user.name, code)
    assert len(refused) == 2, refused  # the first press of each worker on the other's write
    seats = (await h.load(tid)).table.seats
    assert [seat.user for seat in seats] == [ANE.key, BRAIS.key, CAMILLE.key, DANI.key]


async def test_a_stale_turn_button_is_already_played(h: Harness) -> None:
    tid = await started_pair(h)
    users = users_by_key(ANE, BRAIS)
    rng = random.Random(5)
    old: dict[str, list[str]] = {ANE.key: [], BRAIS.key: []}
    for _ in range(300):
        state = await h.load(tid)
        key = state.user_on_turn()
        if key is not None and state.match.hand.phase is not Phase.DISCARD and old[key]:
            stale = old[key][0]
            assert stamp_of(stale) != stamp_of(h.turn_tokens(tid, GROUP.key)[0])
            before = await snapshot(h, tid)
            o = await h.press(users[key], stale)
            assert (o.ok, o.answer) == (False, ALREADY_PLAYED)
            assert await snapshot(h, tid) == before
            return
        if key is not None and state.match.hand.phase is not Phase.DISCARD:
            old[key].extend(h.turn_tokens(tid, GROUP.key))
        assert await human_step(h, tid, GROUP, users, rng)
    pytest.fail("the same player never came back on turn")


async def test_a_double_press_applies_once(h: Harness) -> None:
    tid = await started_pair(h)
    state = await h.load(tid)
    user = user_of(state.user_on_turn())
    token = h.turn_tokens(tid, GROUP.key)[0]
    first, second = await asyncio.gather(h.press(user, token), h.press(user, token))
    assert sorted([first.ok, second.ok]) == [False, True]
    refused = second if first.ok else first
    assert refused.answer in (ALREADY_PLAYED, NOT_YOUR_TURN)
    after = await h.load(tid)
    assert after.version == state.version + 1
    step = len(state.match.hand.log)
    assert after.match.hand.log[step].seat == state.turn
    # And once more, one after the other.
    o = await h.press(user, token)
    assert not o.ok
    assert (await h.load(tid)).version == after.version


async def test_lobby_buttons_after_the_start_are_refused(h: Harness) -> None:
    tid = await h.lobby(GROUP, ANE, (BRAIS, 1))
    lobby = sorted(
        (b.token for b in h.on_screen(tid, "lobby", GROUP.key)), key=lambda t: t.endswith("cancel")
    )
    assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "start"))).ok
    before = await snapshot(h, tid)
    for token in lobby:
        for user in (ANE, BRAIS, OUTSIDER):
            o = await h.press(user, token)
            assert not o.ok and o.answer, (token, user)
            assert await snapshot(h, tid) == before


async def test_forged_and_malformed_tokens_are_no_longer_valid(h: Harness) -> None:
    tid = await started_pair(h)
    state = await h.load(tid)
    hand_no = state.table.hand_no
    on_turn = user_of(state.user_on_turn())
    forged: list[object] = [
        "",
        "hello",
        "💥" * 30,
        None,
        42,
        b"t0000001.L.seat0",
        ["t0000001.L.seat0"],
        f"{tid}.L.seat0 ",
        f" {tid}.L.seat0",
        f"{tid}.L.SEAT0",
        f"{tid}.L.seat4",
        f"{tid}..seat0",
        f"{tid}.L.",
        f"{tid}.x.paso",
        f"{tid}.{hand_no}.hack",
        f"{tid}.{hand_no}.pick_13o",
        f"{tid}.{hand_no}.sena_nonsense",
        f"{tid}.{hand_no}.o_level",
        f"{tid}.{hand_no}-0.seat0",  # a lobby code with a turn stamp
        f"{tid}.{hand_no + 1}.cards",  # a hand that was never dealt
        f"{tid}.{hand_no + 7}.discard",
        f"{tid}.0.cards",
        f"{tid}.99999.cards",
        f"{tid}.{hand_no}.cards" + "x" * 60,
        "zzzzzzzz.L.seat0",  # no such table
        "zzzzzzzz.1-0.paso",
        "zzzzzzzz.1.cards",
        "t000000.L.seat0",
        "T0000001.L.seat0",
        f"{tid}.L.seat0.extra",
        f"{tid}|turn|1-0",
    ]
    before = await snapshot(h, tid)
    for token in forged:
        for user in (on_turn, OUTSIDER):
            o = await h.press(user, token)
            assert (o.ok, o.answer) == (False, STALE), (token, user, o.answer)
            assert await snapshot(h, tid) == before
    # Turn codes with a stamp that is not the current step: refused (already played / not your turn).
    current = stamp_of(h.turn_tokens(tid, GROUP.key)[0])
    for stamp in ("L", str(hand_no), f"{hand_no}-0", f"{hand_no}-999", f"{hand_no + 1}-0", "0-0"):
        if stamp == current:
            continue
        for code in ("paso", "mus", "nomus", "ordago", "env2", "quiero"):
            o = await h.press(on_turn, f"{tid}.{stamp}.{code}")
            assert not o.ok and o.answer in (STALE, ALREADY_PLAYED), (stamp, code, o.answer)
            assert await snapshot(h, tid) == before


async def test_a_token_with_a_trailing_newline_is_not_a_token(h: Harness) -> None:
    """``parse_token`` promises to accept exactly the grammar; ``$`` also matches before a final newline."""
    tid = await h.lobby(GROUP, ANE)
    before = await snapshot(h, tid)
    o = await h.press(BRAIS, f"{tid}.L.seat1\n")
    assert (o.ok, o.answer) == (False, STALE)
    assert await snapshot(h, tid) == before


async def test_my_cards_is_an_alert_to_the_presser_only(h: Harness) -> None:
    tid = await started_pair(h)
    token = h.token(tid, "table", GROUP.key, "cards")
    before = await snapshot(h, tid)
    state = await h.load(tid)
    for _press in range(3):  # pressed again and again: never a new private message
        o = await h.press(BRAIS, token)
        assert o.ok and o.alert and o.answer is not None and len(o.answer) <= 200
        assert all(lab in o.answer for lab in seat_labels(state.match, 1))
        assert o.messages == ()
    o = await h.press(OUTSIDER, token)
    assert (o.ok, o.answer) == (False, NOT_SEATED)
    # A refused press redraws the table as it stands (in case a lost edit left it stale), nothing private.
    assert [(m.slot, m.user, m.fresh) for m in o.messages] == [("table", None, False)]
    o = await h.service.show_hand(OUTSIDER, tid)  # the deep link of "My cards"
    assert (o.ok, o.answer, o.messages) == (False, NOT_SEATED, ())
    o = await h.service.show_hand(ANE, tid)
    assert [(m.slot, m.user) for m in o.messages] == [("hand", ANE.key)]
    assert await snapshot(h, tid) == before


async def test_joining_by_deep_link(h: Harness) -> None:
    tid = await h.lobby(GROUP, ANE)
    o = await h.service.join_seat(BRAIS, tid, 3)
    assert o.ok and o.answer == "You joined team B."
    assert (await h.load(tid)).table.seats[3].user == BRAIS.key
    before = await snapshot(h, tid)
    for table_id, seat in ((tid, 4), (tid, -1), ("zzzzzzzz", 1), (tid, 0)):
        o = await h.service.join_seat(CAMILLE, table_id, seat)
        assert not o.ok and o.answer in (STALE, SEAT_TAKEN), (table_id, seat, o.answer)
    assert await snapshot(h, tid) == before
    assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "start"))).ok
    o = await h.service.join_seat(CAMILLE, tid, 1)  # a machine's seat, after the start
    assert (o.ok, o.answer) == (False, STARTED_ALREADY)


# --- discards -------------------------------------------------------------------------------------------


async def test_discards_are_picked_privately_queued_and_applied_in_speaking_order(h: Harness) -> None:
    players = (ANE, BRAIS, CAMILLE, DANI)
    users = users_by_key(*players)
    tid = await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3))
    state = await h.load(tid)
    order = state.match.hand.speaking_order()
    for seat in order:  # everyone says mus
        assert state.turn == seat
        o = await h.press(users[state.table.seats[seat].user], h.token(tid, "table", GROUP.key, "mus"))
        assert o.ok, o.answer
        state = await h.load(tid)
    assert state.match.hand.phase is Phase.DISCARD
    assert not any(code_of(b.token).startswith("pick") for b in h.on_screen(tid, "table", GROUP.key))
    for user in players:  # each one gets its pick buttons, privately
        picks = [code_of(b.token) for b in h.on_screen(tid, "hand", user.key) if "pick" in b.token]
        seat = state.table.seat_of(user.key)
        # Each button names its card, so a button on an older copy can never toggle another card.
        assert picks == [f"pick_{card_name(c)}" for c in state.match.hand.hands[seat]]

    start_cards = {s: list(state.match.hand.hands[s]) for s in range(4)}
    chosen = {}
    # The last to speak picks out of turn: toggles 0 and 1, untoggles 1, confirms one card.
    last = users[state.table.seats[order[3]].user]
    for code in ("pick0", "pick1", "pick1"):
        assert (await h.press(last, h.token(tid, "hand", last.key, code))).ok
    labels = [b.label for b in h.on_screen(tid, "hand", last.key)]
    assert labels[0].startswith("✓ ") and not labels[1].startswith("✓ ")
    o = await h.press(last, h.token(tid, "hand", last.key, "discard"))
    assert o.ok and o.answer == "Discard confirmed."
    chosen[order[3]] = [start_cards[order[3]][0]]
    state = await h.load(tid)
    assert len(state.match.hand.hands[order[3]]) == 4  # queued, not applied: not its turn yet
    assert state.table.seats[order[3]].discard_ready
    # Then the third and second (out of turn too), then the mano: all applied in speaking order.
    for idx, picks in ((2, ("pick1", "pick2")), (1, ("pick3",)), (0, ("pick0", "pick1", "pick2", "pick3"))):
        seat = order[idx]
        user = users[state.table.seats[seat].user]
        for code in picks:
            assert (await h.press(user, h.token(tid, "hand", user.key, code))).ok
        assert (await h.press(user, h.token(tid, "hand", user.key, "discard"))).ok
        chosen[seat] = [start_cards[seat][int(c[4])] for c in picks]
    state = await h.load(tid)
    hand = state.match.hand
    discards = [r for r in hand.log if r.action.kind is ActionKind.DISCARD]
    assert [r.seat for r in discards] == order
    for r in discards:
        assert sorted(r.action.cards) == sorted(chosen[r.seat])
    assert hand.phase is Phase.MUS and hand.turn == order[0]  # the hand goes on: a new mus round
    for seat in range(4):
        assert len(hand.hands[seat]) == 4
        assert not set(chosen[seat]) & set(hand.hands[seat])
    assert h.turn_tokens(tid, GROUP.key)


async def test_a_discard_cannot_be_confirmed_without_picks_or_outside_discards(h: Harness) -> None:
    tid = await started_pair(h)
    before = await snapshot(h, tid)
    state = await h.load(tid)
    o = await h.press(ANE, f"{tid}.1.pick_{card_name(state.match.hand.hands[0][0])}")
    assert not o.ok and o.answer == "It is not the time to discard."
    o = await h.press(ANE, f"{tid}.1.discard")
    assert not o.ok and o.answer == "It is not the time to discard."
    assert await snapshot(h, tid) == before


# --- señas ----------------------------------------------------------------------------------------------


async def sena_table(h: Harness) -> tuple[str, dict[int, UserRef], int, str]:
    """Four humans, señas on; returns (table, users by seat, the maker's seat, its seña token)."""
    players = {0: ANE, 1: BRAIS, 2: CAMILLE, 3: DANI}
    tid = await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3), senas=True)
    for seat, user in players.items():
        senas = [b.token for b in h.on_screen(tid, "hand", user.key) if code_of(b.token).startswith("sena_")]
        if senas:
            return tid, players, seat, senas[0]
    pytest.skip("no seat holds a true seña in this deal")  # pragma: no cover - seeded deal has one


async def test_a_sena_reaches_the_partner_and_flashes_for_the_rivals(h: Harness) -> None:
    tid, players, maker, token = await sena_table(h)
    partner, rival, rival2 = players[(maker + 2) % 4], players[(maker + 1) % 4], players[(maker + 3) % 4]
    sena = code_of(token).removeprefix("sena_")
    name = SENA_NAMES[next(s for s in SENA_NAMES if s.value == sena)]
    made_at = h.now
    o = await h.press(players[maker], token)
    assert o.ok and o.answer == "Seña made: your partner sees it."
    partner_hand = h.shown(tid, "hand", partner.key).text
    assert "made you a seña" in partner_hand and name in partner_hand
    for other in (rival, rival2):
        assert name not in h.shown(tid, "hand", other.key).text
    table = h.shown(tid, "table", GROUP.key)
    flashes = [b for b in buttons_of([table]) if b.label.startswith("⚡")]
    assert len(flashes) == 1 and players[maker].name in flashes[0].label
    assert "⚡" in table.text and name not in table.text  # the group sees that a seña was made, not which

    catch = flashes[0].token
    before = await snapshot(h, tid)
    o = await h.press(partner, catch)
    assert (o.ok, o.answer) == (False, "That is your partner's seña: you see it anyway.")
    o = await h.press(players[maker], catch)
    assert (o.ok, o.answer) == (False, "That is your own seña: only your rivals can catch it.")
    assert await snapshot(h, tid) == before

    h.set_time(made_at + 1.5)  # inside the 3 s catch window
    o = await h.press(rival, catch)
    assert o.ok
    assert o.answer == f"Caught! {players[maker].name}'s seña: {name}"
    assert not [m for m in o.messages if m.private and m.user != rival.key]  # nobody else learns it
    o = await h.press(rival, catch)
    assert not o.ok and o.answer == "You already caught it."

    h.set_time(made_at + 3.5)  # after the window
    before = await snapshot(h, tid)
    o = await h.press(rival2, catch)
    assert (o.ok, o.answer) == (False, "Too late!")
    assert await snapshot(h, tid) == before
    # The window's deadline, later by the lag a chat may take to show the seña, redraws the table without
    # the ⚡ (until then a press on a late screen, which says when it showed it, can still catch).
    assert [b for b in h.on_screen(tid, "table", GROUP.key) if b.label.startswith("⚡")]
    h.set_time(made_at + 3.0 + FlowSettings().catch_lag + 0.5)
    outcomes = await h.fire_due()
    assert any(m.slot == "table" for o in outcomes for m in o.messages)
    assert not [b for b in h.on_screen(tid, "table", GROUP.key) if b.label.startswith("⚡")]


async def test_a_catch_window_counts_from_when_the_surface_showed_the_sena(h: Harness) -> None:
    """A surface that showed the seña late (the terminal's paced feed) says when: caught 1.2 s after it was
    shown, 3.7 s after it was made; without that, or 3.1 s after it was shown, too late."""
    tid, players, maker, token = await sena_table(h)
    rival, rival2 = players[(maker + 1) % 4], players[(maker + 3) % 4]
    made_at = h.now
    assert (await h.press(players[maker], token)).ok
    catch = next(b.token for b in h.on_screen(tid, "table", GROUP.key) if b.label.startswith("⚡"))
    h.set_time(made_at + 3.7)
    before = await snapshot(h, tid)
    o = await h.press(rival2, catch)
    assert (o.ok, o.answer) == (False, "Too late!")
    late = await h.service.press(rival2, catch, shown_at=made_at + 0.6)
    assert (late.ok, late.answer) == (False, "Too late!")
    assert await snapshot(h, tid) == before
    o = h.record(await h.service.press(rival, catch, shown_at=made_at + 2.5))
    assert o.ok and o.answer is not None and o.answer.startswith("Caught!")
    assert "made you a seña" not in h.shown(tid, "hand", rival.key).text
    assert "You caught" in h.shown(tid, "hand", rival.key).text
    o = await h.service.press(rival, catch, shown_at=made_at + 2.5)
    assert not o.ok and o.answer == "You already caught it."
    # Any other button goes through as a press.
    o = await h.service.press(rival, "forged", shown_at=made_at)
    assert not o.ok


async def test_a_catch_from_a_late_screen_is_refused_at_a_paused_table(h: Harness) -> None:
    """The ⚡ with ``shown_at`` is checked as every press is: nothing happens at a paused table."""
    tid, players, maker, token = await sena_table(h)
    rival = players[(maker + 1) % 4]
    made_at = h.now
    assert (await h.press(players[maker], token)).ok
    catch = next(b.token for b in h.on_screen(tid, "table", GROUP.key) if b.label.startswith("⚡"))
    await h.service.pauses.chat_lost(GROUP.key)
    before = await snapshot(h, tid)
    o = await h.service.press(rival, catch, shown_at=made_at + 0.5)
    assert not o.ok and o.paused
    assert await snapshot(h, tid) == before


async def test_a_caught_sena_is_answered_as_an_alert(h: Harness) -> None:
    """views.Outcome.alert: "Show the answer as an alert the user must dismiss (e.g. a caught seña)"."""
    tid, players, maker, token = await sena_table(h)
    assert (await h.press(players[maker], token)).ok
    catch = next(b.token for b in h.on_screen(tid, "table", GROUP.key) if b.label.startswith("⚡"))
    h.advance(1.0)
    o = await h.press(players[(maker + 1) % 4], catch)
    assert o.ok and o.answer and o.answer.startswith("Caught!")
    assert o.alert, "a caught seña must be shown as an alert (Outcome.alert), not a passing toast"


async def test_senas_off_refuses_sena_buttons(h: Harness) -> None:
    tid = await started_pair(h)
    assert not [b for b in h.on_screen(tid, "hand", ANE.key) if "sena_" in b.token]
    before = await snapshot(h, tid)
    o = await h.press(ANE, f"{tid}.1-0.sena_dos_reyes")
    assert not o.ok and o.answer == "Señas are off at this table."
    assert await snapshot(h, tid) == before


# --- deadlines -------------------------------------------------------------------------------------------

PAUSED = FlowSettings(turn_timeout=60, machine_delay=2, next_hand_delay=4, catch_window=3, lobby_timeout=900)


async def test_machines_act_only_when_their_pause_fires() -> None:
    h = Harness(settings=PAUSED, seed=2)
    await english(h)
    tid = await h.started(GROUP, ANE)
    for _ in range(20):
        state = await h.load(tid)
        seat = state.turn
        if state.table.seats[seat].machine:
            break
        # Ane passes her turn quickly to get to a machine turn.
        assert (await h.press(ANE, h.turn_tokens(tid, GROUP.key)[0])).ok
    else:
        pytest.fail("no machine turn")
    assert state.table.due_key.split("|")[1] == "machine"
    due = state.table.due
    assert due == pytest.approx(h.now + 2)
    steps = len(state.match.hand.log)
    assert await h.fire_due(due - 0.01) == []
    assert (await h.load(tid)).version == state.version
    h.set_time(due)
    outcomes = await h.fire_due()
    assert len(outcomes) == 1 and outcomes[0].ok
    after = await h.load(tid)
    assert after.version == state.version + 1
    # The machine on turn played, and the machines after it at once (one pause, one redraw), up to Ane.
    played = after.match.hand.log[steps:]
    assert played and played[0].seat == seat and all(after.table.seats[r.seat].machine for r in played)
    assert after.match.hand.over or after.turn == 0
    assert [m.slot for m in outcomes[0].messages].count("table") == 1


async def test_a_timeout_plays_for_the_human_and_two_put_the_machine_in_the_seat() -> None:
    h = Harness(settings=PAUSED, seed=3)
    await english(h)
    tid = await h.started(GROUP, ANE)
    notices: list[str] = []
    for timeout_no in (1, 2):
        state = await h.wait_for_human(tid)
        assert state.table.due_key.split("|")[1] == "turn"
        due = state.table.due
        assert due == pytest.approx(h.now + 60)
        assert await h.fire_due(due - 1) == []
        steps = len(state.match.hand.log)
        hand_no = state.table.hand_no
        h.set_time(due)
        outcomes = await h.fire_due()
        assert len(outcomes) == 1 and outcomes[0].ok
        notices += [m.text for m in outcomes[0].messages if m.slot == "notice"]
        after = await h.load(tid)
        if after.table.hand_no == hand_no:
            assert after.match.hand.log[steps].seat == 0  # the machine played Ane's decision
        assert after.table.seats[0].timeouts == timeout_no
    assert notices == [
        "⏱ Ane ran out of time: a machine played for them.",
        "🤖 A machine keeps Ane's seat until they play again.",
    ]
    assert (await h.load(tid)).table.seats[0].autopilot
    # On autopilot, Ane's turns wait only for the machine's pause.
    for _ in range(200):
        state = await h.load(tid)
        if state.turn == 0 and state.match.hand.phase is not Phase.DISCARD:
            break
        h.set_time(max(h.now, state.table.due))
        await h.fire_due()
    else:
        pytest.fail("Ane's seat never came on turn again")
    assert state.table.due_key.split("|")[1] == "machine"
    assert state.table.due == pytest.approx(h.now + 2)
    # Ane comes back: she presses a button and the seat is hers again.
    o = await h.press(ANE, h.turn_tokens(tid, GROUP.key)[0])
    assert o.ok, o.answer
    seat = (await h.load(tid)).table.seats[0]
    assert not seat.autopilot and seat.timeouts == 0
    state = await h.wait_for_human(tid)
    assert state.turn == 0 and state.table.due_key.split("|")[1] == "turn"


async def test_an_unstarted_lobby_expires_and_the_chat_can_open_another() -> None:
    h = Harness(settings=PAUSED)
    await english(h)
    created = h.now
    tid = await h.lobby(GROUP, ANE, (BRAIS, 1))
    start = h.token(tid, "lobby", GROUP.key, "start")
    assert await h.fire_due(created + 899) == []
    assert (await h.load(tid)).table.status is TableStatus.LOBBY
    h.set_time(created + 900)
    outcomes = await h.fire_due()
    assert len(outcomes) == 1
    texts = [m.text for m in outcomes[0].messages]
    assert "Nobody started the game in time: the table was closed." in texts
    assert (await h.load(tid)).table.status is TableStatus.CANCELLED
    assert await h.tables.table_for_chat(GROUP.key) is None
    o = await h.press(ANE, start)
    assert not o.ok
    assert (await h.load(tid)).table.status is TableStatus.CANCELLED
    again = await h.new_table(GROUP, BRAIS)
    assert again.ok and again.table != tid
    assert await h.tables.table_for_chat(GROUP.key) == again.table


async def test_a_started_table_does_not_expire_as_a_lobby() -> None:
    h = Harness(
        settings=FlowSettings(turn_timeout=2000, machine_delay=2, next_hand_delay=4, lobby_timeout=900)
    )
    await english(h)
    created = h.now
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    state = await h.wait_for_human(tid)
    assert state.table.due > created + 900
    h.set_time(created + 900)  # the lobby's expiry, while a human is still thinking
    assert await h.fire_due() == []
    o = await h.fire(f"{tid}|lobby|0")  # even if a worker held on to the lobby's key
    assert not o.messages
    after = await h.load(tid)
    assert after.table.status is TableStatus.PLAYING
    assert after.version == state.version


async def test_timeouts_must_be_in_a_row_to_hand_the_seat_to_the_machine() -> None:
    h = Harness(settings=PAUSED, seed=5)
    await english(h)
    tid = await h.started(GROUP, ANE)
    notices: list[str] = []
    for plays in (False, True, False):
        state = await h.wait_for_human(tid)
        if plays:  # Ane plays in time between two timeouts (a bet, or a discard in the discard phase)
            tokens = h.turn_tokens(tid, GROUP.key)
            if tokens:
                assert (await h.press(ANE, tokens[0])).ok
            else:
                assert (await h.press(ANE, h.token(tid, "hand", ANE.key, "pick0"))).ok
                assert (await h.press(ANE, h.token(tid, "hand", ANE.key, "discard"))).ok
            assert (await h.load(tid)).table.seats[0].timeouts == 0
            continue
        h.set_time(state.table.due)
        for o in await h.fire_due():
            notices += [m.text for m in o.messages if m.slot == "notice"]
    assert notices == ["⏱ Ane ran out of time: a machine played for them."] * 2
    seat = (await h.load(tid)).table.seats[0]
    assert seat.timeouts == 1 and not seat.autopilot


async def test_a_deadline_fired_twice_acts_once() -> None:
    h = Harness(settings=PAUSED, seed=4)
    await english(h)
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    for kind_wanted in ("turn", "machine"):
        for _ in range(50):
            state = await h.load(tid)
            if state.table.due_key.split("|")[1] == kind_wanted:
                break
            h.set_time(state.table.due)
            await h.fire_due()
        else:
            pytest.fail(f"no {kind_wanted} deadline")
        key = state.table.due_key
        h.set_time(state.table.due)
        first = await h.fire(key)
        assert first.ok and first.messages
        version = (await h.load(tid)).version
        assert version == state.version + 1
        second = await h.fire(key)
        assert not second.messages
        assert (await h.load(tid)).version == version
    # Claiming is atomic as well: once claimed, a deadline is not handed out again.
    state = await h.load(tid)
    h.set_time(state.table.due)
    assert len(await h.fire_due()) == 1
    assert await h.fire_due(state.table.due) == []


async def test_fire_with_a_garbage_key_changes_nothing(h: Harness) -> None:
    tid = await started_pair(h)
    before = await snapshot(h, tid)
    for key in (
        "",
        "x",
        "|||",
        f"{tid}",
        f"{tid}|turn|9-9",
        f"{tid}|flash|x|y",
        f"{tid}|bogus|1",
        "zzzzzzzz|turn|1-0",
    ):
        o = await h.service.deadlines.fire(key)
        assert not o.messages or key.startswith(f"{tid}|flash"), key
        assert await snapshot(h, tid) == before


# --- a whole match, leaderboards, commands ---------------------------------------------------------------


async def test_a_four_machine_match_ends_with_a_winner_and_leaderboards(h: Harness) -> None:
    o = await h.service.new_machine_table(GROUP, ANE)
    assert o.ok, o.answer
    state = await h.load(o.table)
    assert state.table.status is TableStatus.FINISHED
    assert state.match.over and state.table.match.winner in (0, 1)
    assert await h.tables.table_for_chat(GROUP.key) is None
    assert any(m.slot == "showdown" and "win the match" in m.text for m in o.messages)
    # Machine seats are not players: rated (their rivals' updates need them) but never listed.
    assert await h.leaderboard.top(GROUP.key) == [] and await h.leaderboard.top(GLOBAL_SCOPE) == []
    text = (await h.service.chats.leaderboard(GROUP, ANE)).messages[0].text
    assert text.startswith("🏆 Leaderboard of this chat") and "🤖" not in text
    empty = (await h.service.chats.leaderboard(GROUP2, ANE)).messages[0].text
    assert "No finished games yet." in empty
    # The chat is free again.
    assert (await h.new_table(GROUP, ANE)).ok


async def test_stats_after_a_finished_game_show_the_players_line() -> None:
    h = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=0), seed=11)
    await english(h)
    tid = await h.lobby(GROUP, ANE)
    for _ in range(2):  # to 20 stones
        assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "o_target"))).ok
    assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "o_mode"))).ok
    assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "start"))).ok
    users = users_by_key(ANE)
    rng = random.Random(1)
    for _ in range(1500):
        if not await human_step(h, tid, GROUP, users, rng):
            break
    state = await h.load(tid)
    assert state.table.status is TableStatus.FINISHED
    stats = (await h.service.chats.stats(GROUP, ANE)).messages[0].text
    lines = stats.splitlines()
    assert lines[0] == "🏆 Leaderboard of this chat" and lines[2] == "🌍 Global leaderboard"
    for line in (lines[1], lines[3]):
        assert line.startswith("Ane: rating ") and "games " in line and "/1 " in line
    entry = await h.leaderboard.entry(GROUP.key, ANE.key)
    assert entry is not None and entry.games == 1
    assert f"#{entry.rank}" in lines[1]
    none = (await h.service.chats.stats(GROUP, BRAIS)).messages[0].text
    assert "Brais: no finished games yet." in none
    # The buttons left on screen by the finished game change nothing.
    before = await snapshot(h, tid)
    for b in buttons_of(h.log):
        o = await h.press(ANE, b.token)
        assert not o.ok and o.answer, b.token
    assert await snapshot(h, tid) == before
    assert await h.tables.table_for_chat(GROUP.key) is None


async def test_rules_summary_and_full(h: Harness) -> None:
    o = await h.service.chats.rules(GROUP, ANE)
    assert len(o.messages) == 1 and o.messages[0].text == rules_summary("en")
    assert "Mus" in o.messages[0].text
    full = await h.service.chats.rules(GROUP, ANE, full=True)
    sections = rules_sections("en")
    assert len(full.messages) == len(sections) >= 3
    # The full rules go to the asker privately (a group would be flooded), rendered from Markdown.
    for m, (heading, _body) in zip(full.messages, sections, strict=True):
        assert m.text.startswith(f"**{heading}**") and m.user == ANE.key and m.chat is None and m.markdown
    assert full.answer and "private" in full.answer
    assert o.messages[0].markdown


async def test_language_switches_the_tables_texts(h: Harness) -> None:
    tid = await h.lobby(GROUP, ANE)
    english_lobby = h.shown(tid, "lobby", GROUP.key).text
    o = await h.service.set_language(GROUP, ANE, "eu")
    h.record(o)
    assert o.ok and o.answer == translator("eu").format("Language set to {language}.", language="Euskara")
    assert (await h.load(tid)).table.lang == "eu"
    basque_lobby = h.shown(tid, "lobby", GROUP.key).text
    assert basque_lobby != english_lobby, "the lobby did not change language"
    assert translator("eu").gettext("Team A") in basque_lobby


async def test_language_without_a_valid_code_offers_every_language_as_buttons(h: Harness) -> None:
    for code in ("xx", "", None, "english", "EU2"):
        o = await h.service.set_language(GROUP, ANE, code)
        assert o.ok == (not code), code  # no argument is a question, not a mistake
        (picker,) = o.messages
        assert picker.chat == GROUP.key and picker.text.endswith("Choose the language of this chat:")
        labels = [b.label for row in picker.buttons for b in row]
        assert labels == [LANGUAGE_NAMES[c] for c in LANGUAGES]
        if code:
            for lang in LANGUAGES:
                assert f"{lang} ({LANGUAGE_NAMES[lang]})" in picker.text
    assert await h.prefs.get_language(GROUP.key) == "en"
    # Pressing one sets the language of the chat where it was pressed (and nothing without a chat).
    token = next(b.token for row in picker.buttons for b in row if b.label == LANGUAGE_NAMES["eu"])
    assert not (await h.service.press(ANE, token)).ok
    assert await h.prefs.get_language(GROUP.key) == "en"
    o = await h.service.press(ANE, token, GROUP)
    assert o.ok and o.answer == translator("eu").format("Language set to {language}.", language="Euskara")
    assert await h.prefs.get_language(GROUP.key) == "eu"
    for forged in ("-.C.lang_zz", "-.C.lang_es2", "-.L.lang_es", "-.C.seat0"):
        assert not (await h.service.press(ANE, forged, GROUP)).ok
    assert await h.prefs.get_language(GROUP.key) == "eu"


async def test_cancel_closes_the_table_for_the_creator_only(h: Harness) -> None:
    tid = await started_pair(h)
    o = await h.service.cancel(GROUP, BRAIS)
    assert not o.ok and o.answer == ONLY_CREATOR
    o = h.record(await h.service.cancel(GROUP, ANE))
    # Said once (the answer), and every message of the table is closed: no live button anywhere.
    assert o.ok and o.answer == "Table cancelled." and "Table cancelled." not in [m.text for m in o.messages]
    assert {(m.slot, m.user) for m in o.messages} == {("table", None), ("hand", ANE.key), ("hand", BRAIS.key)}
    assert all(m.buttons == () and "This table was cancelled." in m.text for m in o.messages)
    assert (await h.load(tid)).table.status is TableStatus.CANCELLED
    assert await h.tables.table_for_chat(GROUP.key) is None
    o = await h.service.cancel(GROUP, ANE)
    assert not o.ok and o.answer == "There is no table in this chat. Start one with /newgame."


async def test_one_s_own_language_is_kept_and_one_s_seat_follows_at_once(h: Harness) -> None:
    tid = await started_pair(h)
    o = await h.service.languages.own(BRAIS, "gl")
    assert o.ok and "Galego" in (o.answer or ""), o.answer
    assert await h.prefs.get_language(BRAIS.key) == "gl"
    table = (await h.load(tid)).table
    assert (
        table.seats[table.seat_of(BRAIS.key) or 0].lang == "gl" and table.lang != "gl"
    )  # (the table's stays)
    mine = [m for m in o.messages if m.user == BRAIS.key and m.slot == "hand"]
    assert mine and "As túas cartas" in mine[0].text  # drawn again, in Galician
    with pytest.raises(ValueError):
        await h.service.languages.own(BRAIS, "zz")


async def test_a_moderator_may_cancel_a_table_they_do_not_sit_at(h: Harness) -> None:
    tid = await started_pair(h)
    zuri = UserRef("t:99", "Zuri", "en")
    assert not (await h.service.cancel(GROUP, zuri)).ok  # not seated, not the creator
    assert (await h.load(tid)).table.status is TableStatus.PLAYING
    o = await h.service.cancel(GROUP, zuri, moderator=True)  # the platform says Zuri moderates the chat
    assert o.ok and (await h.load(tid)).table.status is TableStatus.CANCELLED


# --- fuzzing the buttons --------------------------------------------------------------------------------


def _random_tokens(
    rng: random.Random, tid: str, current: set[str], harvested: list[str], n: int
) -> list[object]:
    codes = [
        "seat0", "seat3", "leave", "start", "cancel", "o_senas", "o_target", "o_mode", "o_level", "mus",
        "nomus", "paso", "quiero", "noquiero", "ordago", "env2", "env5", "env99", "sube2", "sube17",
        "pick_1o", "pick_12e", "discard", "sena_dos_reyes", "sena_ciego", "sena_xxxx", "catch0", "catch9",
        "catch99", "cards",
    ]  # fmt: skip
    alphabet = string.ascii_letters + string.digits + "._-|:/ \n\t\\\"'éñ⚡🂠"
    out: list[object] = []
    while len(out) < n:
        kind = rng.randrange(7)
        if kind == 0:  # random text
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 80))))
        elif kind == 1:  # random bytes, decoded or not
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 70)))
            out.append(raw if rng.random() < 0.3 else raw.decode("latin-1"))
        elif kind == 2:  # the grammar, a random table id
            table = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(8))
            stamp = rng.choice(
                ["L", str(rng.randrange(100000)), f"{rng.randrange(100)}-{rng.randrange(1000)}"]
            )
            out.append(f"{table}.{stamp}.{rng.choice(codes)}")
        elif kind in (3, 4):  # the real table, a wrong stamp
            stamp = rng.choice(["L", str(rng.randrange(100)), f"{rng.randrange(10)}-{rng.randrange(60)}"])
            token = f"{tid}.{stamp}.{rng.choice(codes)}"
            if stamp == "L" or stamp not in current:
                out.append(token)
        elif kind == 5 and harvested:  # real tokens of other tables and earlier hands
            out.append(rng.choice(harvested))
        else:  # mutilated real tokens
            base = rng.choice(harvested) if harvested else f"{tid}.L.seat0"
            i = rng.randrange(len(base))
            out.append(base[:i] + rng.choice(alphabet) + base[i + 1 :] if rng.random() < 0.7 else base[:i])
    return out


async def test_a_thousand_forged_tokens_change_nothing() -> None:
    h = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=0), seed=21)
    await english(h)
    users = users_by_key(ANE, BRAIS)
    tid = await h.started(GROUP, ANE, (BRAIS, 1))
    rng = random.Random(99)
    while (await h.load(tid)).table.hand_no < 2:  # play into the second hand to harvest old buttons
        assert await human_step(h, tid, GROUP, users, rng)
    other = await h.started(GROUP2, CAMILLE, (DANI, 3))
    state = await h.load(tid)
    current = {str(state.table.hand_no), f"{state.table.hand_no}-{len(state.match.hand.log)}"}
    harvested = sorted(
        {b.token for b in buttons_of(h.log)}
        - {b.token for b in buttons_of(h.log) if b.token.startswith(tid) and stamp_of(b.token) in current}
    )
    assert any(t.startswith(other) for t in harvested) and any(t.startswith(f"{tid}.1") for t in harvested)
    tokens = _random_tokens(random.Random(2024), tid, current, harvested, 1000)
    before = {t: await snapshot(h, t) for t in (tid, other)}
    answers: set[str] = set()
    for i, token in enumerate(tokens):
        user = (ANE, BRAIS, OUTSIDER)[i % 3]
        o = await h.service.press(user, token)
        assert isinstance(o.answer, str) and o.answer.strip(), (token, o)
        assert not o.ok, (token, user, o.answer)
        answers.add(o.answer)
        if i % 50 == 0:
            assert {t: await snapshot(h, t) for t in (tid, other)} == before, token
    assert {t: await snapshot(h, t) for t in (tid, other)} == before
    assert STALE in answers and len(answers) > 3


# --- the store goes away -----------------------------------------------------------------------------------


class FlakyTables(MemoryTableStore):
    """A memory store that can be made to fail like an unreachable Redis.

    ``fail_load`` is an outage (nothing answers: reads and writes fail); ``fail_write`` fails writes only.
    (The service may answer from its own copy of a table without reading it, so an outage must fail both.)
    """

    def __init__(self) -> None:
        super().__init__()
        self.fail_load = False
        self.fail_write = False

    async def load(self, table_id):  # type: ignore[no-untyped-def]
        if self.fail_load:
            raise StoreUnavailable("down")
        return await super().load(table_id)

    async def compare_and_set(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.fail_write or self.fail_load:
            raise StoreUnavailable("down")
        return await super().compare_and_set(*args, **kwargs)

    async def table_for_chat(self, chat_key):  # type: ignore[no-untyped-def]
        if self.fail_load:
            raise StoreUnavailable("down")
        return await super().table_for_chat(chat_key)


async def test_an_unavailable_store_is_answered_and_the_game_resumes() -> None:
    tables = FlakyTables()
    h = Harness(tables=tables, settings=FlowSettings(machine_delay=0, next_hand_delay=0))
    await english(h)
    tid = await started_pair(h)
    state = await h.load(tid)
    user = user_of(state.user_on_turn())
    token = h.turn_tokens(tid, GROUP.key)[0]
    before = await snapshot(h, tid)

    tables.fail_load = True
    o = await h.press(user, token)
    assert (o.ok, o.answer) == (False, UNAVAILABLE)
    o = await h.service.new_table(GROUP2, CAMILLE)
    assert (o.ok, o.answer) == (False, UNAVAILABLE)
    o = await h.service.cancel(GROUP, ANE)
    assert (o.ok, o.answer) == (False, UNAVAILABLE)
    tables.fail_load = False

    tables.fail_write = True
    o = await h.press(user, token)
    assert (o.ok, o.answer) == (False, UNAVAILABLE)
    assert not o.messages
    assert await snapshot(h, tid) == before
    tables.fail_write = False

    o = await h.press(user, token)  # the button still on screen works once the store is back
    assert o.ok, o.answer
    after = await h.load(tid)
    assert after.version == before[0] + 1
    assert after.match.hand.log[len(state.match.hand.log)].seat == state.turn


async def test_a_deadline_that_fails_to_fire_during_an_outage_is_not_lost() -> None:
    """A machine's pause is claimed, but the store fails before the move is written: once the store is back,
    the machine must still play (otherwise the table waits forever: nobody else may act on its turn)."""
    tables = FlakyTables()
    h = Harness(tables=tables, settings=PAUSED, seed=6)
    await english(h)
    tid = await h.started(GROUP, ANE)
    for _ in range(20):
        state = await h.load(tid)
        if state.table.seats[state.turn].machine:
            break
        assert (await h.press(ANE, h.turn_tokens(tid, GROUP.key)[0])).ok
    else:
        pytest.fail("no machine turn")
    h.set_time(state.table.due)
    tables.fail_load = True
    outcomes = await h.fire_due()  # the worker claims the deadline; the table cannot be read
    assert [o.ok for o in outcomes] in ([], [False])
    tables.fail_load = False
    for _ in range(10):  # the deadline loop keeps running after the outage
        h.advance(5)
        await h.fire_due()
    after = await h.load(tid)
    assert after.version > state.version, "the machine never played: the table is stuck"


class FlakyCancel:
    """A deadline store whose ``cancel`` fails (the connection drops right after the table write)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner = inner
        self.fail = False

    async def schedule(self, key: str, due: float) -> None:
        await self.inner.schedule(key, due)

    async def cancel(self, key: str) -> None:
        if self.fail:
            raise StoreUnavailable("down")
        await self.inner.cancel(key)

    async def claim_due(self, now: float, limit: int = 100) -> list[str]:
        return await self.inner.claim_due(now, limit)

    async def next_due(self) -> float | None:
        return await self.inner.next_due()

    async def ping(self) -> None:
        await self.inner.ping()


async def test_a_press_whose_write_succeeded_is_not_reported_as_failed() -> None:
    """If the table was written, the presser must not be told "try again" (a retry says "already played")
    and the new table must be drawn; failing to drop the old deadline is harmless (it fires as a no-op)."""
    from bot.store._memory import MemoryDeadlineStore

    deadlines = FlakyCancel(MemoryDeadlineStore())
    h = Harness(deadlines=deadlines, settings=PAUSED)
    await english(h)
    tid = await started_pair(h)
    state = await h.wait_for_human(tid)
    user = user_of(state.user_on_turn())
    token = h.turn_tokens(tid, GROUP.key)[0]
    deadlines.fail = True
    o = await h.press(user, token)
    deadlines.fail = False
    after = await h.load(tid)
    assert after.version == state.version + 1  # the action was applied...
    assert o.ok and o.answer != UNAVAILABLE, o.answer  # ...so say so
    assert any(m.slot == "table" for m in o.messages)  # and redraw the table


async def test_a_flood_of_commands_is_told_to_slow_down_once() -> None:
    h = Harness()
    chat, ane = ChatRef("t:-9", title="G"), UserRef("t:1", "Ane", "en")
    answers = [await h.service.chats.admit(chat, ane) for _ in range(8)]
    assert answers[:5] == [None] * 5
    assert answers[5] is not None and answers[5].answer is not None and "Slow down" in answers[5].answer
    assert all(a is not None and a.answer is None and not a.messages for a in answers[6:])
    assert await h.service.chats.admit(chat, UserRef("t:2", "Brais", "en")) is None  # others are not held up


async def test_newgame_during_a_game_posts_the_table_again_at_most_once_per_interval() -> None:
    h = Harness()
    chat, ane = ChatRef("t:-9", title="G"), UserRef("t:1", "Ane", "en")
    await h.service.new_table(chat, ane)
    reposts = [await h.service.new_table(chat, ane) for _ in range(5)]
    assert [bool(r.messages) for r in reposts] == [True, False, False, False, False]
    assert all(r.answer and not r.ok for r in reposts)
    h.clock[0] += h.deps.repost_interval
    assert (await h.service.new_table(chat, ane)).messages


async def test_newgame_at_a_paused_table_spends_no_repost_so_the_next_one_can_resume_it() -> None:
    h = Harness()
    chat, ane = ChatRef("t:-9", title="G"), UserRef("t:1", "Ane", "en")
    await h.service.new_table(chat, ane)
    assert (await h.service.pauses.chat_lost(chat.key)).ok  # the bot may no longer post there
    refused = [await h.service.new_table(chat, ane) for _ in range(3)]
    assert all(r.paused and not r.messages for r in refused)  # each says why; none posted anything
    assert (await h.service.pauses.chat_back(chat)).ok
    assert (await h.service.new_table(chat, ane)).messages  # back: posted at once, no interval to wait


async def test_a_table_posted_again_says_so_and_views_that_begin_a_hand_do_not(h: Harness) -> None:
    """Delivery posts a view that begins a hand only if no view of that hand posted it yet (a redraw may come
    first), and a view posted again at the bottom anew: the stamp tells them apart."""
    tid = await started_pair(h)
    dealt = [m for m in h.log if m.table == tid and m.fresh and m.slot in ("table", "hand")]
    assert dealt and not any(m.again for m in dealt) and all(m.since == m.version for m in dealt)
    again = await h.service.show_table(tid, ANE)  # /newgame during the game
    table = [m for m in again.messages if m.slot == "table"]
    assert table and all(m.fresh and m.again for m in table)
    redraw = await h.service.show_table(tid, ANE, fresh=False)  # a refused press
    assert redraw.messages and not any(m.fresh or m.again for m in redraw.messages)


async def test_only_the_players_change_the_language_of_a_game_in_progress(h: Harness) -> None:
    tid = await started_pair(h)
    before = await snapshot(h, tid)
    o = await h.service.set_language(GROUP, OUTSIDER, "fr")
    keeps = translator("fr").format("The game in progress stays in {language}.", language="English")
    assert o.answer is not None and o.answer.endswith(keeps) and "Français" in o.answer
    assert o.messages == () and await snapshot(h, tid) == before  # the table untouched, no hand redrawn
    assert await h.prefs.get_language(GROUP.key) == "fr"  # the chat's next tables
    o = await h.service.set_language(GROUP, ANE, "eu")  # a player may
    assert (await h.load(tid)).table.lang == "eu"


class DownPrefs:
    """A preferences store whose Redis is down."""

    async def get_language(self, key: str) -> str | None:
        raise StoreUnavailable("down")

    async def set_language(self, key: str, lang: str) -> None:
        raise StoreUnavailable("down")


async def test_answers_during_an_outage_keep_the_askers_language() -> None:
    tables = FlakyTables()
    h = Harness(tables=tables, prefs=DownPrefs())  # type: ignore[arg-type]
    tables.fail_load = True
    basque = UserRef("t:77", "Miren", "eu")
    down = translator("eu").gettext("The game store is unavailable right now; try again in a moment.")
    for outcome in (
        await h.service.new_table(ChatRef("t:-5", title="G"), basque),
        await h.service.cancel(ChatRef("t:-5", title="G"), basque),
    ):
        assert (outcome.ok, outcome.answer) == (False, down)
    # The chat's language cannot be read: what still works speaks the asker's language, not the default.
    board = await h.service.chats.leaderboard(ChatRef("t:-5", title="G"), basque)
    (view,) = board.messages
    assert view.text.startswith(translator("eu").gettext(LEADERBOARD_TITLE))
