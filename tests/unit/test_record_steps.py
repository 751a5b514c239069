"""Stepping through a hand's record (``engine.record.hand_after``, ``hand_steps``): the one way the web
table's pages, a replay of a kept match and the terminal's feed see a hand as it stood after each entry.
Random hands with señas and catches: each step is the hand that the first ``k`` entries make, as a fresh
replay of exactly those entries makes it, and the last step is the hand itself."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_web_frames import play_hand

from engine.hand import Hand
from engine.record import HandRecord, hand_after, hand_steps, record_of, replay
from engine.views import SeatView


def views(hand: Hand) -> list[SeatView]:
    return [hand.view_for(seat) for seat in range(4)]


def truncated(record: HandRecord, entries: int) -> HandRecord:
    return record.model_copy(update={"actions": record.actions[:entries]})


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_each_step_is_the_hand_its_first_entries_make(seed: int) -> None:
    hand = play_hand(seed).hand
    assert hand is not None and hand.over
    record = record_of(hand)
    total = len(record.actions)
    dealt = hand_after(record, 0)
    assert not dealt.journal and [list(h) for h in dealt.hands] == [list(h) for h in hand.initial_hands]
    stepped = [(done, views(step), list(step.journal)) for done, step in hand_steps(record)]
    assert [done for done, _, _ in stepped] == list(range(1, total + 1))
    for done, seen, journal in stepped:
        after = hand_after(record, done)
        assert journal == list(after.journal) == list(hand.journal[:done])
        assert seen == views(after)
        if done < total:  # a hand cut short of its end is still a hand its entries make
            assert not after.over
    assert views(hand_after(record, total)) == views(hand) == views(replay(record))
    # Beyond the record: the hand as it ends; before its start: as dealt.
    assert views(hand_after(record, total + 5)) == views(hand)
    assert views(hand_after(record, -1)) == views(dealt)
    # Steps from the middle on are the same steps.
    middle = total // 2 + 1
    assert [done for done, _ in hand_steps(record, middle)] == list(range(middle, total + 1))
    assert list(hand_steps(record, total + 1)) == []


def test_a_step_of_a_record_cut_short_is_the_same_hand() -> None:
    hand = play_hand(7).hand
    assert hand is not None
    record = record_of(hand)
    for entries in (1, len(record.actions) // 2, len(record.actions) - 1):
        assert views(hand_after(record, entries)) == views(hand_after(truncated(record, entries), 99))
