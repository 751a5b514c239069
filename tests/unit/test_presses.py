"""Regressions of presses that went wrong for players: an old copy of a hand acting on another card, a doubled
seña, a catch after the hand ended, the amount picker, presses on a finished match.

Driven through :class:`bot.app.Service` with four people at the table; a refused press must change
nothing in the store (same version, same data) and be answered clearly, never with a traceback.
"""

from __future__ import annotations

import logging

import pytest
from service_helpers import (
    ANE,
    BRAIS,
    CAMILLE,
    DANI,
    GROUP,
    Harness,
    code_of,
    english,
    snapshot,
    users_by_key,
)

from bot.kernel import parse_token, turn_stamp
from bot.table import FlowSettings
from engine.actions import ActionKind
from engine.cards import card_name
from engine.hand_types import Phase

PLAYERS = (ANE, BRAIS, CAMILLE, DANI)
OVER = "This game is over. Type /newgame for another one."
USERS = users_by_key(*PLAYERS)


@pytest.fixture
async def h() -> Harness:
    harness = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=0, turn_timeout=3600))
    await english(harness)
    return harness


async def four(h: Harness, **options: bool) -> str:
    return await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3), **options)


async def everyone_says_mus(h: Harness, tid: str) -> None:
    state = await h.load(tid)
    for seat in state.match.hand.speaking_order():
        user = USERS[state.table.seats[seat].user]  # type: ignore[index]
        assert (await h.press(user, h.token(tid, "table", GROUP.key, "mus"))).ok


async def test_a_pick_button_on_an_older_copy_of_the_hand_never_toggles_another_card(h: Harness) -> None:
    tid = await four(h)
    await everyone_says_mus(h, tid)
    state = await h.load(tid)
    assert state.match.hand.phase is Phase.DISCARD
    old_picks = [b.token for b in h.on_screen(tid, "hand", ANE.key) if code_of(b.token).startswith("pick_")]
    # Everyone discards every card: Ane's hand is all new cards.
    for seat in state.match.hand.speaking_order():
        user = USERS[state.table.seats[seat].user]  # type: ignore[index]
        for i in range(4):
            assert (await h.press(user, h.token(tid, "hand", user.key, f"pick{i}"))).ok
        assert (await h.press(user, h.token(tid, "hand", user.key, "discard"))).ok
    state = await h.load(tid)
    assert state.match.hand.phase is Phase.MUS and state.match.hand.mus_round == 1
    assert (await h.press(ANE, h.token(tid, "table", GROUP.key, "mus"))).ok  # on to the next discards…
    state = await h.load(tid)
    for seat in state.match.hand.speaking_order()[1:]:
        user = USERS[state.table.seats[seat].user]  # type: ignore[index]
        assert (await h.press(user, h.token(tid, "table", GROUP.key, "mus"))).ok
    state = await h.load(tid)
    assert state.match.hand.phase is Phase.DISCARD
    now_held = {card_name(c) for c in state.match.hand.hands[0]}
    before = await snapshot(h, tid)
    for token in old_picks:  # the first copy's buttons name cards Ane no longer holds
        assert code_of(token).removeprefix("pick_") not in now_held
        o = await h.press(ANE, token)
        assert not o.ok and o.answer == "That card is no longer in your hand."
    assert await snapshot(h, tid) == before
    assert (await h.load(tid)).table.seats[0].discard_pick == []


async def test_a_doubled_sena_press_makes_one_sena(h: Harness) -> None:
    tid = await four(h, senas=True)
    for user in PLAYERS:
        senas = [b.token for b in h.on_screen(tid, "hand", user.key) if code_of(b.token).startswith("sena_")]
        if senas:
            break
    else:  # pragma: no cover - the seeded deal holds a true seña
        raise AssertionError("no seña on any hand")
    first = await h.press(user, senas[0])
    assert first.ok and first.answer == "Seña made: your partner sees it."
    before = await snapshot(h, tid)
    second = await h.press(user, senas[0])  # the same button again (a double tap, or an old copy)
    assert not second.ok and second.answer == "Already played."
    assert await snapshot(h, tid) == before
    state = await h.load(tid)
    assert len(state.match.hand.senas) == 1
    fresh = [b.token for b in h.on_screen(tid, "hand", user.key) if code_of(b.token).startswith("sena_")]
    assert fresh and fresh[0] != senas[0]  # redrawn with a new stamp: a second seña is a new press
    # Another player's seña leaves this player's buttons valid (they count only their own señas).
    for other in PLAYERS:
        if other is user:
            continue
        theirs = [
            b.token for b in h.on_screen(tid, "hand", other.key) if code_of(b.token).startswith("sena_")
        ]
        if theirs:
            assert (await h.press(other, theirs[0])).ok
            second = await h.press(user, fresh[0])
            assert second.ok and second.answer == "Seña made: your partner sees it."
            break
    else:  # pragma: no cover - the seeded deal gives a second player a true seña
        raise AssertionError("no other player could make a seña")


async def test_a_catch_after_the_hand_ended_is_answered_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The next hand waits a few seconds: the ⚡ of the ended hand is still on screen meanwhile.
    h = Harness(settings=FlowSettings(machine_delay=0, next_hand_delay=4, turn_timeout=3600, catch_window=30))
    await english(h)
    tid = await four(h, senas=True)
    maker = None
    for user in PLAYERS:
        senas = [b.token for b in h.on_screen(tid, "hand", user.key) if code_of(b.token).startswith("sena_")]
        if senas:
            maker = user
            assert (await h.press(user, senas[0])).ok
            break
    assert maker is not None
    catch = next(
        b.token for b in h.on_screen(tid, "table", GROUP.key) if code_of(b.token).startswith("catch")
    )
    # Finish the hand at once: the mano cuts and órdago is accepted.
    state = await h.load(tid)
    mano = state.match.hand.mano
    mano_user, next_user = (USERS[state.table.seats[s].user] for s in (mano, (mano + 1) % 4))  # type: ignore[index]
    assert (await h.press(mano_user, h.token(tid, "table", GROUP.key, "nomus"))).ok
    assert (await h.press(mano_user, h.token(tid, "table", GROUP.key, "ordago"))).ok
    assert (await h.press(next_user, h.token(tid, "table", GROUP.key, "quiero"))).ok
    state = await h.load(tid)
    assert state.table.hand_no == 1 and state.match.hand.over
    rival = next(
        u for u in PLAYERS if (state.table.seat_of(u.key) or 0) % 2 != state.table.seat_of(maker.key) % 2
    )  # type: ignore[operator]
    before = await snapshot(h, tid)
    with caplog.at_level(logging.INFO):
        o = await h.press(rival, catch)
    assert not o.ok and o.answer == "Too late!"
    assert await snapshot(h, tid) == before
    assert not [r for r in caplog.records if r.exc_info], "a press must never log a traceback"


async def test_more_opens_every_amount_for_the_player_on_turn_only(h: Harness) -> None:
    tid = await four(h)
    state = await h.load(tid)
    mano = state.match.hand.mano
    on_turn = USERS[state.table.seats[mano].user]  # type: ignore[index]
    assert (await h.press(on_turn, h.token(tid, "table", GROUP.key, "nomus"))).ok
    more = h.token(tid, "table", GROUP.key, "more")
    other = next(u for u in PLAYERS if u is not on_turn)
    before = await snapshot(h, tid)
    o = await h.press(other, more)
    assert not o.ok and o.answer == "Not your turn."
    assert await snapshot(h, tid) == before
    o = await h.press(on_turn, more)
    assert o.ok and o.answer == "Every amount is in your private hand."
    picker = [b for b in h.on_screen(tid, "hand", on_turn.key) if code_of(b.token).startswith("env")]
    assert [code_of(b.token) for b in picker] == [f"env{n}" for n in range(2, 41)]
    assert not [b for b in h.on_screen(tid, "hand", other.key) if code_of(b.token).startswith("env")]
    seventeen = next(b.token for b in picker if code_of(b.token) == "env17")
    assert parse_token(seventeen).stamp == turn_stamp(1, len(state.match.hand.log) + 1)
    o = await h.press(on_turn, seventeen)
    assert o.ok, o.answer
    state = await h.load(tid)
    last = state.match.hand.log[-1]
    assert last.action.kind is ActionKind.ENVIDO and last.action.amount == 17
    assert not [b for b in h.on_screen(tid, "hand", on_turn.key) if code_of(b.token).startswith("env")]
    assert "At stake: 17" in h.shown(tid, "table", GROUP.key).text  # type: ignore[union-attr]
    o = await h.press(on_turn, seventeen)  # the picker's button, pressed again: already played
    assert not o.ok and o.answer == "Already played."


async def test_presses_on_a_finished_match_point_to_newgame(h: Harness) -> None:
    tid = await h.started(GROUP, ANE, single=True)
    state = await h.wait_for_human(tid)
    cards = h.token(tid, "table", GROUP.key, "cards")
    turn = h.turn_tokens(tid, GROUP.key)
    # Ane's hand and the rest of the match are played by the machine while she is away.
    for _ in range(500):
        state = await h.load(tid)
        if state.table.status.value == "finished":
            break
        assert state.table.due is not None
        h.set_time(max(h.now, state.table.due))
        await h.fire_due()
    assert state.table.status.value == "finished"
    for token in (cards, *turn):
        o = await h.press(ANE, token)
        assert not o.ok and o.answer in (
            "This game is over. Type /newgame for another one.",
            "Already played.",
        )
    assert (await h.press(ANE, cards)).answer == OVER
