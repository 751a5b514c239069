"""Señas (RULES.md, "Señas"): when each is true, the limits, who sees them, and catching them."""

from __future__ import annotations

from typing import Any

import pytest

from engine.actions import MUS, NO_MUS, PASO, discard
from engine.cards import FULL_DECK, parse_cards
from engine.errors import CatchError, HandOverError, SenaError
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.record import record_of, replay
from engine.senas import (
    MAX_SENAS_PER_HAND,
    MAX_SHOW_DELAY,
    Sena,
    SenaRecord,
    catch_moment,
    sena_is_true,
    true_senas,
)

# -- when each seña is true --------------------------------------------------------------------------------

CASES = [
    (Sena.DOS_REYES, "12o 12c 5o 6o", True),
    (Sena.DOS_REYES, "12o 3c 5o 6o", True),  # a 3 is a rey
    (Sena.DOS_REYES, "3o 3c 1o 2o", True),
    (Sena.DOS_REYES, "12o 3c 3e 6o", False),  # three reyes, not two
    (Sena.DOS_REYES, "12o 11c 10o 6o", False),
    (Sena.TRES_REYES, "12o 3c 3e 6o", True),
    (Sena.TRES_REYES, "3o 3c 3e 1o", True),
    (Sena.TRES_REYES, "12o 12c 3e 3o", False),  # four reyes
    (Sena.TRES_REYES, "12o 12c 11e 11o", False),
    (Sena.DOS_ASES, "1o 1c 5o 6o", True),
    (Sena.DOS_ASES, "1o 2c 5o 6o", True),  # a 2 is an as
    (Sena.DOS_ASES, "2o 2c 12o 3o", True),
    (Sena.DOS_ASES, "1o 2c 2e 6o", False),
    (Sena.DOS_ASES, "1o 4c 5o 6o", False),
    (Sena.TRES_ASES, "1o 2c 2e 6o", True),
    (Sena.TRES_ASES, "2o 2c 2e 12o", True),
    (Sena.TRES_ASES, "1o 1c 2e 2o", False),  # four ases
    (Sena.TRES_ASES, "1o 1c 4e 4o", False),
    (Sena.MEDIAS, "12o 3c 3e 6o", True),  # reyes medias through the 3s
    (Sena.MEDIAS, "7o 7c 7e 1o", True),
    (Sena.MEDIAS, "1o 2c 1e 12o", True),
    (Sena.MEDIAS, "7o 7c 7e 7b", False),  # four equal are duples
    (Sena.MEDIAS, "7o 7c 6e 6b", False),
    (Sena.DUPLES, "7o 7c 6e 6b", True),
    (Sena.DUPLES, "7o 7c 7e 7b", True),
    (Sena.DUPLES, "12o 3c 1e 2b", True),  # R R A A through the 3 and the 2
    (Sena.DUPLES, "12o 12c 12e 1b", False),
    (Sena.DUPLES, "12o 11c 1e 2b", False),
    (Sena.TREINTA_Y_UNA, "12o 11o 10o 1o", True),
    (Sena.TREINTA_Y_UNA, "12o 11o 10o 2o", True),  # a 2 is worth 1
    (Sena.TREINTA_Y_UNA, "3o 11o 10o 1c", True),  # a 3 is worth 10
    (Sena.TREINTA_Y_UNA, "7o 7c 7e 10o", True),
    (Sena.TREINTA_Y_UNA, "12o 11o 6o 6c", False),  # 32
    (Sena.TREINTA_Y_UNA, "12o 11o 5o 5c", False),  # 30
    (Sena.CIEGO, "1o 4o 5o 6o", True),
    (Sena.CIEGO, "12o 11o 7o 1c", True),  # 28, no pares
    (Sena.CIEGO, "1o 2o 5o 6o", False),  # a par of ases
    (Sena.CIEGO, "12o 11o 10o 1o", False),  # juego
    (Sena.CIEGO, "12o 3o 5o 6o", False),  # a par of reyes
]


@pytest.mark.parametrize(("sena", "text", "truth"), CASES, ids=lambda v: str(v))
def test_sena_truth(sena: Sena, text: str, truth: bool) -> None:
    cards = parse_cards(text.split())
    assert sena_is_true(sena, cards) is truth
    assert (sena in true_senas(cards)) is truth


def test_every_sena_has_true_and_false_examples() -> None:
    assert {s for s, _, t in CASES if t} == set(Sena)
    assert {s for s, _, t in CASES if not t} == set(Sena)
    assert len(Sena) == 8


# -- señas in a hand ---------------------------------------------------------------------------------------

# s0 R R 7 6: dos_reyes; s1 A A A 5: tres_ases, medias; s2 R C S A: treinta_y_una; s3 7 7 4 4: duples
DEAL = ["12o 3c 7o 6o", "1o 2c 2e 5o", "12e 11e 10e 1e", "7c 7e 4o 4c"]


def make_hand(*, senas: bool = True, window: float = 3.0, mano: int = 0) -> Hand:
    hands = [parse_cards(h.split()) for h in DEAL]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    return Hand(mano=mano, hands=hands, deck=deck, config=HandConfig(senas=senas, catch_window=window))


def frozen(hand: Hand) -> tuple[Any, ...]:
    return (
        record_of(hand).model_dump_json(),
        [hand.view_for(s) for s in range(4)],
        hand.phase,
        hand.turn,
        list(hand.scores),
        [list(h) for h in hand.hands],
    )


def test_the_deal_holds_the_intended_senas() -> None:
    hand = make_hand()
    assert true_senas(hand.hands[0]) == [Sena.DOS_REYES]
    assert set(true_senas(hand.hands[1])) == {Sena.TRES_ASES, Sena.MEDIAS}
    assert true_senas(hand.hands[2]) == [Sena.TREINTA_Y_UNA]
    assert true_senas(hand.hands[3]) == [Sena.DUPLES]


def test_a_true_sena_is_accepted_takes_no_turn_and_changes_no_card_or_score() -> None:
    hand = make_hand()
    cards = [list(h) for h in hand.hands]
    record = hand.make_sena(2, Sena.TREINTA_Y_UNA, 10.0)
    assert record.seat == 2 and record.sena is Sena.TREINTA_Y_UNA and record.made_at == 10.0
    assert hand.turn == 0, "a seña takes no turn (seat 2 made it out of turn)"
    assert [list(h) for h in hand.hands] == cards
    assert hand.scores == [0, 0]
    assert hand.log == []
    hand.act(0, MUS)
    assert hand.turn == 1


def test_a_sena_may_be_named_by_its_word() -> None:
    hand = make_hand()
    assert hand.make_sena(0, "dos_reyes", 1.0).sena is Sena.DOS_REYES


@pytest.mark.parametrize(
    ("seat", "sena"), [(0, Sena.TRES_REYES), (0, Sena.DOS_ASES), (2, Sena.CIEGO), (3, Sena.MEDIAS)]
)
def test_a_false_sena_is_rejected_and_changes_nothing(seat: int, sena: Sena) -> None:
    hand = make_hand()
    before = frozen(hand)
    with pytest.raises(SenaError):
        hand.make_sena(seat, sena, 1.0)
    assert frozen(hand) == before


@pytest.mark.parametrize(("seat", "sena"), [(4, Sena.DOS_REYES), (0, "dos_caballos"), (0, "")])
def test_an_unknown_seat_or_sena_is_rejected(seat: int, sena: str) -> None:
    hand = make_hand()
    before = frozen(hand)
    with pytest.raises(SenaError):
        hand.make_sena(seat, sena, 1.0)
    assert frozen(hand) == before


def test_senas_off_rejects_every_sena() -> None:
    hand = make_hand(senas=False)
    before = frozen(hand)
    with pytest.raises(SenaError) as info:
        hand.make_sena(0, Sena.DOS_REYES, 1.0)
    assert info.type is SenaError
    assert frozen(hand) == before


def test_at_most_two_senas_per_seat_per_hand() -> None:
    hand = make_hand()
    assert MAX_SENAS_PER_HAND == 2
    assert set(true_senas(hand.hands[1])) == {Sena.TRES_ASES, Sena.MEDIAS}
    assert hand.view_for(1).senas_left == 2
    hand.make_sena(1, Sena.TRES_ASES, 1.0)
    assert hand.view_for(1).senas_left == 1
    hand.make_sena(1, Sena.TRES_ASES, 2.0)  # the same seña again still counts
    assert hand.view_for(1).senas_left == 0
    before = frozen(hand)
    with pytest.raises(SenaError):
        hand.make_sena(1, Sena.MEDIAS, 3.0)
    assert frozen(hand) == before
    # Another seat still has its own two, later in the hand too.
    hand.make_sena(3, Sena.DUPLES, 4.0)
    hand.act(0, NO_MUS)
    hand.make_sena(3, Sena.DUPLES, 5.0)
    with pytest.raises(SenaError):
        hand.make_sena(3, Sena.DUPLES, 6.0)
    with pytest.raises(SenaError):
        hand.make_sena(1, Sena.MEDIAS, 7.0)


def test_a_seat_waiting_for_its_new_cards_cannot_make_a_sena() -> None:
    hand = make_hand()
    for seat in range(4):
        hand.act(seat, MUS)
    hand.act(0, discard(hand.hands[0][2:]))  # keeps 12o 3c: still "dos reyes" by its remaining cards
    before = frozen(hand)
    with pytest.raises(SenaError) as info:
        hand.make_sena(0, Sena.DOS_REYES, 1.0)
    assert "waiting" in str(info.value)
    assert frozen(hand) == before
    # A seat that has not discarded yet still holds four cards and may.
    hand.make_sena(1, Sena.TRES_ASES, 1.0)


def test_after_a_discard_a_sena_must_be_true_of_the_new_cards() -> None:
    hand = make_hand()
    for seat in range(4):
        hand.act(seat, MUS)
    hand.act(0, discard(hand.hands[0][:2]))  # throws both reyes
    for seat in (1, 2, 3):
        hand.act(seat, discard(hand.hands[seat][:1]))
    assert hand.phase is Phase.MUS
    new = hand.hands[0]
    assert sena_is_true(Sena.DOS_REYES, new) is False
    with pytest.raises(SenaError):
        hand.make_sena(0, Sena.DOS_REYES, 1.0)
    for sena in true_senas(new)[:1]:
        hand.make_sena(0, sena, 1.0)


def test_no_sena_after_the_hand_is_over() -> None:
    hand = make_hand()
    hand.act(0, NO_MUS)
    while not hand.over:
        hand.act(hand.turn, PASO)  # type: ignore[arg-type]
    with pytest.raises(HandOverError):
        hand.make_sena(0, Sena.DOS_REYES, 1.0)


# -- who sees what, and catching ---------------------------------------------------------------------------


def test_the_partner_sees_the_name_rivals_only_that_a_sena_was_made() -> None:
    hand = make_hand()
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    for seat in range(4):
        (view,) = hand.view_for(seat).senas
        assert view.seat == 0 and view.index == 0 and view.made_at == 10.0
        assert view.sena == (Sena.DOS_REYES if seat in (0, 2) else None)
    assert hand.view_for(2).partner_senas() == [Sena.DOS_REYES]
    assert hand.view_for(1).partner_senas() == []


def test_a_rival_who_catches_in_the_window_sees_it_the_other_rival_does_not() -> None:
    hand = make_hand(window=3.0)
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    caught = hand.catch_sena(1, 0, 12.9)
    assert caught.seat == 1 and caught.sena_index == 0 and caught.caught_at == 12.9
    assert hand.view_for(1).senas[0].sena is Sena.DOS_REYES
    assert hand.view_for(3).senas[0].sena is None
    assert hand.view_for(2).senas[0].sena is Sena.DOS_REYES
    # Nothing else changed for anyone.
    assert hand.turn == 0 and hand.scores == [0, 0]


@pytest.mark.parametrize("when", [13.1, 20.0, 9.9, 0.0, -1.0])
def test_a_catch_outside_the_window_is_rejected_and_changes_nothing(when: float) -> None:
    hand = make_hand(window=3.0)
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    before = frozen(hand)
    with pytest.raises(CatchError):
        hand.catch_sena(1, 0, when)
    assert frozen(hand) == before
    assert hand.view_for(1).senas[0].sena is None


def test_the_window_is_the_tables() -> None:
    hand = make_hand(window=0.5)
    hand.make_sena(3, Sena.DUPLES, 100.0)
    with pytest.raises(CatchError):
        hand.catch_sena(0, 0, 100.6)
    hand.catch_sena(2, 0, 100.4)
    assert hand.view_for(2).senas[0].sena is Sena.DUPLES


@pytest.mark.parametrize("catcher", [0, 2])
def test_a_partner_or_the_maker_cannot_catch(catcher: int) -> None:
    hand = make_hand()
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    before = frozen(hand)
    with pytest.raises(CatchError):
        hand.catch_sena(catcher, 0, 11.0)
    assert frozen(hand) == before


def test_a_second_catch_by_the_same_seat_is_rejected() -> None:
    hand = make_hand()
    hand.make_sena(2, Sena.TREINTA_Y_UNA, 10.0)
    hand.catch_sena(3, 0, 11.0)
    before = frozen(hand)
    with pytest.raises(CatchError):
        hand.catch_sena(3, 0, 11.5)
    assert frozen(hand) == before
    hand.catch_sena(1, 0, 11.5)  # the other rival may still catch it
    assert hand.view_for(1).senas[0].sena is Sena.TREINTA_Y_UNA


@pytest.mark.parametrize(("seat", "index"), [(1, 1), (1, -1), (1, 99), (4, 0), (-1, 0)])
def test_catching_a_sena_that_does_not_exist_is_rejected(seat: int, index: int) -> None:
    hand = make_hand()
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    before = frozen(hand)
    with pytest.raises(CatchError):
        hand.catch_sena(seat, index, 10.5)
    assert frozen(hand) == before


def test_each_sena_is_caught_separately() -> None:
    hand = make_hand()
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    hand.make_sena(2, Sena.TREINTA_Y_UNA, 10.2)
    hand.catch_sena(1, 1, 11.0)
    view = hand.view_for(1)
    assert [s.sena for s in view.senas] == [None, Sena.TREINTA_Y_UNA]


def test_no_catch_after_the_hand_is_over() -> None:
    """errors.HandOverError: 'no action, seña or catch is accepted any more' once the hand has ended."""
    hand = make_hand()
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    hand.act(0, NO_MUS)
    while not hand.over:
        hand.act(hand.turn, PASO)  # type: ignore[arg-type]
    before = frozen(hand)
    with pytest.raises(HandOverError):
        hand.catch_sena(1, 0, 10.5)  # inside the window, but the hand has ended
    assert frozen(hand) == before


def test_senas_and_catches_are_in_the_record() -> None:
    hand = make_hand()
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    hand.catch_sena(1, 0, 11.0)
    entries = record_of(hand).actions
    assert [tuple(e) for e in entries] == [(0, "sena dos_reyes", 10.0), (1, "catch 0", 11.0)]


# --- the window belongs to the person: it counts from when the catcher's surface showed the seña ---------


def test_a_catch_counts_from_when_the_sena_was_shown_and_replays_the_same() -> None:
    hand = make_hand(window=3.0)
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    with pytest.raises(CatchError):
        hand.catch_sena(1, 0, 14.2)  # 4.2 s after it was made: too late on the maker's clock
    caught = hand.catch_sena(1, 0, 14.2, shown_at=13.0)  # shown 3 s late, caught 1.2 s after
    assert caught.caught_at == pytest.approx(11.2)  # on the seña's clock
    assert hand.view_for(1).senas[0].sena is Sena.DOS_REYES
    again = replay(record_of(hand))
    assert again.view_for(1).senas[0].sena is Sena.DOS_REYES and again.catches == hand.catches


@pytest.mark.parametrize(
    ("shown_at", "now", "moment"),
    [
        (13.0, 14.2, 11.2),  # 1.2 s after it was shown
        (9.0, 11.0, 11.0),  # "shown" before it was made: no credit
        (10.0 + MAX_SHOW_DELAY + 50, 10.0 + MAX_SHOW_DELAY + 51, 61.0),  # the delay is capped
        (12.0, 11.0, 10.0),  # pressed before it was shown (clocks apart): never before the seña
        (None, 12.5, 12.5),
        (float("nan"), 12.5, 12.5),
    ],
)
def test_the_catch_moment_takes_off_the_showing_delay(
    shown_at: float | None, now: float, moment: float
) -> None:
    made = [SenaRecord(0, 0, Sena.DUPLES, 10.0, 0)]
    assert catch_moment(made, 0, now, shown_at) == pytest.approx(moment)
    assert catch_moment(made, 1, now, shown_at) == now  # no such seña: refused as it is


def test_a_late_shown_sena_is_still_too_late_after_its_own_window() -> None:
    hand = make_hand(window=3.0)
    hand.make_sena(0, Sena.DOS_REYES, 10.0)
    with pytest.raises(CatchError):
        hand.catch_sena(1, 0, 16.1, shown_at=13.0)
    assert hand.view_for(1).senas[0].sena is None
