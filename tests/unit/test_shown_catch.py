"""A seña's catch window counted from when the presser's surface showed it (issue 22: a web page shows each
move in turn, so a seña may appear there a few seconds after it was made).

The chats show a seña as soon as it is made: their catches count from its making, as before. A page passes
when it showed the seña; the window then counts from that showing, bounded so that no claim stretches it.
"""

from __future__ import annotations

import pytest
from service_helpers import GROUP, Harness, english
from test_service import sena_table

from bot.table._flow import MAX_SHOWN_LAG, shown_catch_time


@pytest.fixture
async def h() -> Harness:
    harness = Harness()
    await english(harness)
    return harness


def flash_token(h: Harness, tid: str) -> str:
    return next(b.token for b in h.on_screen(tid, "table", GROUP.key) if b.label.startswith("⚡"))


async def test_a_person_who_saw_the_sena_late_still_catches_in_their_window(h: Harness) -> None:
    tid, players, maker, token = await sena_table(h)
    made_at = h.now
    assert (await h.press(players[maker], token)).ok
    catch = flash_token(h, tid)
    rival = players[(maker + 1) % 4]
    # The page showed the seña 2.5 s after it was made (a run of moves paced before it); the person reacted
    # in 1.2 s: 3.7 s after the making, outside the chats' 3 s window, inside the page's.
    h.set_time(made_at + 3.7)
    late_chat = await h.service.press(rival, catch)
    assert (late_chat.ok, late_chat.answer) == (False, "Too late!")
    caught = await h.service.press(rival, catch, shown_at=made_at + 2.5)
    assert caught.ok and caught.answer and caught.answer.startswith("Caught!")
    loaded = await h.load(tid)
    assert loaded.match is not None and loaded.match.hand is not None
    # The record keeps a time inside the engine's window: the hand replays as it was played.
    assert loaded.match.hand.catches[-1].caught_at == pytest.approx(made_at + 1.2)


async def test_a_slow_reaction_after_the_showing_is_still_too_late(h: Harness) -> None:
    tid, players, maker, token = await sena_table(h)
    made_at = h.now
    assert (await h.press(players[maker], token)).ok
    h.set_time(made_at + 6.0)
    o = await h.service.press(players[(maker + 1) % 4], flash_token(h, tid), shown_at=made_at + 2.0)
    assert (o.ok, o.answer) == (False, "Too late!")  # 4 s after the page showed it


def test_the_showing_cannot_stretch_the_window_past_its_bounds() -> None:
    # Claimed before the making: counted from the making.
    assert shown_catch_time(100.0, 50.0, 102.0) == 102.0
    # Claimed after the press: the reaction took no time at all, never negative.
    assert shown_catch_time(100.0, 110.0, 105.0) == 100.0
    # Claimed long after the making: the showing is bounded by MAX_SHOWN_LAG.
    assert shown_catch_time(100.0, 1000.0, 2000.0) == 100.0 + (2000.0 - (100.0 + MAX_SHOWN_LAG))
