"""The hand's phase machine through explicit deals (RULES.md: deal and mus, lances, betting, count)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from engine.actions import (
    MUS,
    NO_MUS,
    NO_QUIERO,
    ORDAGO,
    PASO,
    QUIERO,
    Action,
    ActionKind,
    discard,
    envido,
    parse_action,
    sube,
)
from engine.betting import BetStatus
from engine.cards import FULL_DECK, Card, parse_card, parse_cards
from engine.errors import (
    BadAmountError,
    DiscardError,
    HandOverError,
    IllegalActionError,
    MusError,
    NotParticipantError,
    NotYourTurnError,
    RecordError,
)
from engine.evaluation import Lance
from engine.hand import Hand
from engine.hand_types import HandConfig, OrdagoResult, Phase
from engine.record import record_of

# -- deals -------------------------------------------------------------------------------------------------

# s0 R R C S (40, par R)   s1 A A 4 5 (11, par A)   s2 7 7 6 C (30, par 7)   s3 R C S A (31, no pares)
DEAL_A = ["12o 12c 11o 10o", "1o 1c 4o 5o", "7o 7c 6o 11c", "3o 11e 10c 1e"]
# Only team 0 holds pares; both teams hold juego (s0 34, s3 33).
DEAL_B = ["12o 12c 10e 4o", "1o 11o 6o 7o", "10o 10c 1c 4c", "3o 11c 6c 7c"]
# Nobody holds juego: punto; only s2 holds pares (5 5, 30 = the best punto).
DEAL_C = ["12o 11o 5o 1o", "12c 11c 4c 1c", "12e 10e 5e 5c", "11e 10b 6b 2b"]
# s0 R R R A (medias, 31)   s1 4 4 5 7 (par)   s2 C C S S (duples, 40)   s3 R C S A (31)
DEAL_D = ["12o 12c 12e 1o", "4o 4c 5o 7o", "11o 11c 10o 10c", "3o 11e 10e 1c"]


class SpyRandom(random.Random):
    """A seeded Random that records what it shuffles."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.shuffled: list[list[Card]] = []

    def shuffle(self, x: Any) -> None:  # type: ignore[override]
        self.shuffled.append(list(x))
        super().shuffle(x)


def make_hand(
    deal: Sequence[str],
    *,
    mano: int = 0,
    scores: tuple[int, int] = (0, 0),
    rng: random.Random | None = None,
    **config: Any,
) -> Hand:
    """A hand from explicit cards; the deck is every other card in canonical order (all 40 accounted for)."""
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    return Hand(mano=mano, hands=hands, deck=deck, scores=scores, config=HandConfig(**config), rng=rng)


def act(hand: Hand, seat: int, word: str) -> None:
    hand.act(seat, parse_action(word))


def play(hand: Hand, *moves: str) -> None:
    """Moves as ``"seat word args"``, e.g. ``"1 envido 2"``."""
    for move in moves:
        seat, word = move.split(" ", 1)
        act(hand, int(seat), word)


def paso_all(hand: Hand) -> None:
    """Pass until the current lance closes (the hand must be in a betting opening)."""
    lance = hand.lance
    while not hand.over and hand.lance is lance:
        hand.act(hand.turn, PASO)  # type: ignore[arg-type]


def cut(hand: Hand) -> None:
    hand.act(hand.mano, NO_MUS)


def snapshot(hand: Hand) -> tuple[Any, ...]:
    return (
        record_of(hand).model_dump_json(),
        [hand.view_for(s) for s in range(4)],
        hand.phase,
        hand.turn,
        list(hand.scores),
        [list(h) for h in hand.hands],
        list(hand.deck),
        list(hand.discard_pile),
        sorted(hand.all_cards()),
        [hand.legal_actions(s) for s in range(4)],
    )


def cards(text: str) -> list[Card]:
    return parse_cards(text.split())


def assert_forty(hand: Hand) -> None:
    every = hand.all_cards()
    assert len(every) == 40
    assert sorted(every) == list(FULL_DECK)


# -- construction ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mano": 4},
        {"mano": -1},
        {"hands": [cards("12o 12c 11o"), *[cards(h) for h in DEAL_A[1:]]]},
        {"hands": [cards("12o 12c 11o 10o"), cards("12o 1c 4o 5o"), *[cards(h) for h in DEAL_A[2:]]]},
        {"scores": (-1, 0)},
        {"scores": (0,)},
    ],
)
def test_a_bad_deal_is_a_record_error(kwargs: dict[str, Any]) -> None:
    hands = [cards(h) for h in DEAL_A]
    used = {c for h in hands for c in h}
    base: dict[str, Any] = {
        "mano": 0,
        "hands": hands,
        "deck": [c for c in FULL_DECK if c not in used],
        "scores": (0, 0),
    }
    base.update(kwargs)
    with pytest.raises(RecordError):
        Hand(**base)


def test_a_deck_repeating_a_dealt_card_is_a_record_error() -> None:
    hands = [cards(h) for h in DEAL_A]
    with pytest.raises(RecordError):
        Hand(mano=0, hands=hands, deck=[hands[0][0], *cards("2o 2c")])


def test_a_short_deck_never_crashes_with_a_non_domain_error() -> None:
    """Bug hunt: a deck that does not hold the 24 undealt cards must be refused (or fail as a domain error).

    With only 3 cards in the deck and discards of 1, 1, 1 and 4, the last seat is the lone waiter: its own 4
    discards are set aside, 3 cards are left to reshuffle for 4 needed.
    """
    with pytest.raises(MusError):
        hand = Hand(mano=0, hands=[cards(h) for h in DEAL_A], deck=cards("2o 2c 2e"))
        for seat in range(4):
            hand.act(seat, MUS)
        for seat, n in zip(range(4), (1, 1, 1, 4), strict=True):
            hand.act(seat, discard(hand.hands[seat][:n]))


def test_with_a_short_deck_legal_actions_still_agree_with_can_act() -> None:
    """If a short deck is accepted at all, no listed discard may be refused when it is taken."""
    try:
        hand = Hand(mano=0, hands=[cards(h) for h in DEAL_A], deck=cards("2o 2c 2e"))
    except RecordError:
        return  # refusing such a deal outright is fine
    for seat in range(4):
        hand.act(seat, MUS)
    for seat in range(3):
        hand.act(seat, discard(hand.hands[seat][:1]))
    legal = hand.legal_actions(3)
    refused = [a.word for a in legal if not hand.can_act(3, a)]
    assert refused == [], f"listed as legal but refused: {refused}"


# -- mus and discards --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mano", range(4))
def test_mus_round_and_discards_go_in_speaking_order_from_the_mano(mano: int) -> None:
    hand = make_hand(DEAL_A, mano=mano)
    order = [(mano + i) % 4 for i in range(4)]
    assert hand.phase is Phase.MUS
    for seat in order:
        assert hand.turn == seat
        for other in set(range(4)) - {seat}:
            assert hand.legal_actions(other) == []
            with pytest.raises(NotYourTurnError):
                hand.act(other, MUS)
        assert set(hand.legal_actions(seat)) == {MUS, NO_MUS}
        hand.act(seat, MUS)
    assert hand.phase is Phase.DISCARD
    for seat in order:
        assert hand.turn == seat
        hand.act(seat, discard(hand.hands[seat][:1]))
        assert_forty(hand)
    assert hand.phase is Phase.MUS
    assert hand.mus_round == 1
    assert hand.turn == mano


@pytest.mark.parametrize("mano", range(4))
@pytest.mark.parametrize("cutter", range(4))
def test_the_first_no_mus_cuts_and_grande_starts_with_the_mano(mano: int, cutter: int) -> None:
    hand = make_hand(DEAL_A, mano=mano)
    for i in range(cutter):
        hand.act((mano + i) % 4, MUS)
    hand.act((mano + cutter) % 4, NO_MUS)
    assert hand.phase is Phase.GRANDE
    assert hand.turn == mano
    assert hand.view_for(0).betting is not None
    assert hand.view_for(0).betting.participants == tuple((mano + i) % 4 for i in range(4))  # type: ignore[union-attr]


def test_replacements_come_from_the_deck_top_in_speaking_order() -> None:
    hand = make_hand(DEAL_A, mano=2)
    top = list(hand.deck[:10])
    for seat in (2, 3, 0, 1):
        hand.act(seat, MUS)
    before = [list(h) for h in hand.hands]
    counts = {2: 2, 3: 1, 0: 3, 1: 4}
    for seat in (2, 3, 0, 1):
        hand.act(seat, discard(before[seat][: counts[seat]]))
        assert_forty(hand)
    assert hand.hands[2] == before[2][2:] + top[0:2]
    assert hand.hands[3] == before[3][1:] + top[2:3]
    assert hand.hands[0] == before[0][3:] + top[3:6]
    assert hand.hands[1] == top[6:10]
    assert len(hand.deck) == 24 - 10
    assert hand.discard_counts == [[3, 4, 2, 1]]
    assert hand.view_for(0).deck_size == 14
    assert_forty(hand)


@pytest.mark.parametrize(
    ("words", "error"),
    [
        ([], DiscardError),
        (["1o"], DiscardError),  # not held by seat 0
        (["12o", "12o"], DiscardError),
    ],
)
def test_bad_discards_are_refused(words: list[str], error: type[Exception]) -> None:
    hand = make_hand(DEAL_A)
    for seat in range(4):
        hand.act(seat, MUS)
    before = snapshot(hand)
    with pytest.raises(error) as info:
        hand.act(0, Action(ActionKind.DISCARD, cards=tuple(parse_card(w) for w in words)))
    assert info.type is error
    assert snapshot(hand) == before


def test_five_cards_cannot_be_discarded() -> None:
    hand = make_hand(DEAL_A)
    for seat in range(4):
        hand.act(seat, MUS)
    before = snapshot(hand)
    with pytest.raises(DiscardError):
        hand.act(0, discard([*hand.hands[0], parse_card("1o")]))
    assert snapshot(hand) == before
    assert len(hand.legal_actions(0)) == 15  # every non-empty subset of four cards
    assert all(1 <= len(a.cards) <= 4 and set(a.cards) <= set(hand.hands[0]) for a in hand.legal_actions(0))


def drain_to(hand: Hand, pattern: Sequence[int]) -> None:
    """A mus round in which each seat (speaking order) discards the first ``pattern[i]`` of its cards."""
    order = hand.speaking_order()
    for seat in order:
        hand.act(seat, MUS)
    for seat, n in zip(order, pattern, strict=True):
        hand.act(seat, discard(hand.hands[seat][:n]))
        assert_forty(hand)


def test_deck_runs_out_with_several_players_waiting_all_discards_are_reshuffled() -> None:
    rng = SpyRandom(11)
    hand = make_hand(DEAL_A, rng=rng)
    discarded: list[Card] = []
    start = [list(h) for h in hand.hands]
    discarded += [c for h in start for c in h]
    drain_to(hand, [4, 4, 4, 4])  # 16 cards from the deck: 8 left
    assert len(hand.deck) == 8 and rng.shuffled == []
    last_of_old_deck = hand.deck[-1]
    before = [list(h) for h in hand.hands]
    # s0 takes 3 (5 left), s1 takes 4 (1 left), s2 takes 1 and the deck is out with s2 and s3 waiting.
    for seat in range(4):
        hand.act(seat, MUS)
    pattern = [3, 4, 2, 1]
    for seat in range(4):
        thrown = before[seat][: pattern[seat]]
        discarded += thrown
        hand.act(seat, discard(thrown))
        assert_forty(hand)
    assert len(rng.shuffled) == 1, "the injected rng shuffled the new deck"
    assert sorted(rng.shuffled[0]) == sorted(discarded), "every discard, the waiting seats' own included"
    assert len(hand.reshuffles) == 1
    new_deck = hand.reshuffles[0]
    assert sorted(new_deck) == sorted(discarded)
    assert hand.hands[2] == [*before[2][2:], last_of_old_deck, new_deck[0]]
    assert hand.hands[3] == [*before[3][1:], new_deck[1]]
    assert hand.deck == new_deck[2:]
    assert hand.discard_pile == []
    assert hand.phase is Phase.MUS and hand.turn == 0


def test_the_reshuffle_depends_on_the_injected_rng() -> None:
    decks = []
    for seed in (1, 1, 2):
        hand = make_hand(DEAL_A, rng=random.Random(seed))
        drain_to(hand, [4, 4, 4, 4])
        drain_to(hand, [4, 4, 4, 4])
        decks.append(hand.reshuffles[0])
    assert decks[0] == decks[1]
    assert decks[0] != decks[2]


@pytest.mark.parametrize("pattern", [[4, 3, 1, 4], [4, 2, 1, 4], [1, 1, 4, 3]])
@pytest.mark.parametrize("seed", range(25))
def test_deck_runs_out_for_the_last_player_only_its_own_discards_are_set_aside(
    pattern: list[int], seed: int
) -> None:
    mano = seed % 4
    hand = make_hand(DEAL_A, mano=mano, rng=random.Random(seed))
    drain_to(hand, [4, 4, 4, 4])
    assert len(hand.deck) == 8
    assert sum(pattern[:3]) >= 8 - pattern[3] and sum(pattern[:3]) <= 8
    last = (mano + 3) % 4
    order = hand.speaking_order()
    for seat in order:
        hand.act(seat, MUS)
    for seat, n in zip(order, pattern, strict=True):
        if seat == last:
            own = list(hand.hands[seat][:n])
        hand.act(seat, discard(hand.hands[seat][:n]))
    assert_forty(hand)
    assert len(hand.reshuffles) == 1
    assert not set(own) & set(hand.hands[last]), "it never gets back a card it just discarded"
    assert not set(own) & set(hand.reshuffles[0])
    assert sorted(hand.discard_pile) == sorted(own), "its discards are set aside, not in the deck"
    assert len(hand.reshuffles[0]) == 16 + sum(pattern) - pattern[3]


def test_set_aside_cards_go_into_the_next_reshuffle() -> None:
    hand = make_hand(DEAL_A, rng=random.Random(5))
    drain_to(hand, [4, 4, 4, 4])
    own = list(hand.hands[3])
    drain_to(hand, [4, 3, 1, 4])  # s3 is the lone waiter
    assert sorted(hand.discard_pile) == sorted(own)
    drain_to(hand, [4, 4, 4, 4])
    drain_to(hand, [4, 4, 4, 4])
    assert len(hand.reshuffles) == 2
    assert set(own) <= set(hand.reshuffles[1])
    assert_forty(hand)


def test_many_mus_rounds_keep_every_card_and_four_per_seat() -> None:
    hand = make_hand(DEAL_A, rng=random.Random(3))
    for _ in range(12):
        drain_to(hand, [4, 4, 4, 4])
        assert_forty(hand)
        assert all(len(h) == 4 for h in hand.hands)
    assert hand.mus_round == 12
    cut(hand)
    assert hand.phase is Phase.GRANDE


# -- lances and participants -------------------------------------------------------------------------------


def phases_and_turns_of_all_paso(hand: Hand) -> list[tuple[Phase, int]]:
    seen = []
    while not hand.over:
        seat = hand.turn
        assert seat is not None
        seen.append((hand.phase, seat))
        hand.act(seat, NO_MUS if hand.phase is Phase.MUS else PASO)
        assert_forty(hand)
    return seen


def test_the_lances_come_in_order_grande_chica_pares_juego() -> None:
    hand = make_hand(DEAL_A, mano=0)
    seen = phases_and_turns_of_all_paso(hand)
    G, C, P, J = Phase.GRANDE, Phase.CHICA, Phase.PARES, Phase.JUEGO
    assert seen == [
        (Phase.MUS, 0),
        (G, 0), (G, 1), (G, 2), (G, 3),
        (C, 0), (C, 1), (C, 2), (C, 3),
        (P, 0), (P, 1), (P, 2),
        (J, 0), (J, 3),
    ]  # fmt: skip
    assert hand.phase is Phase.OVER
    assert [r.status for r in hand.results.values()] == [BetStatus.PASO] * 4


def test_participants_of_pares_and_juego_are_holders_only_in_speaking_order() -> None:
    hand = make_hand(DEAL_A, mano=3)
    seen = phases_and_turns_of_all_paso(hand)
    assert [s for p, s in seen if p is Phase.PARES] == [0, 1, 2]
    assert [s for p, s in seen if p is Phase.JUEGO] == [3, 0]
    assert hand.results[Lance.PARES].participants == (0, 1, 2)
    assert hand.results[Lance.JUEGO].participants == (3, 0)
    hand = make_hand(DEAL_A, mano=2)
    seen = phases_and_turns_of_all_paso(hand)
    assert [s for p, s in seen if p is Phase.PARES] == [2, 0, 1]


def test_non_holders_cannot_bet_in_pares_or_juego() -> None:
    hand = make_hand(DEAL_A)
    cut(hand)
    paso_all(hand)
    paso_all(hand)
    assert hand.phase is Phase.PARES
    assert hand.view_for(3).pares_declared == (True, True, True, False)
    assert hand.legal_actions(3) == []
    with pytest.raises(NotParticipantError):
        hand.act(3, PASO)
    paso_all(hand)
    assert hand.phase is Phase.JUEGO
    assert hand.view_for(1).juego_declared == (True, False, False, True)
    for seat in (1, 2):
        with pytest.raises(NotParticipantError):
            hand.act(seat, PASO)
    with pytest.raises(NotYourTurnError):
        hand.act(3, PASO)


def test_a_lance_held_by_one_team_has_no_betting_but_is_scored() -> None:
    hand = make_hand(DEAL_B, mano=0)
    cut(hand)
    paso_all(hand)
    paso_all(hand)
    # Only seats 0 and 2 (team 0) hold pares: straight to juego.
    assert hand.phase is Phase.JUEGO
    assert hand.results[Lance.PARES].status is BetStatus.NO_BET
    assert hand.results[Lance.PARES].participants == (0, 2)
    assert hand.turn == 0
    with pytest.raises(NotParticipantError):
        hand.act(1, PASO)
    paso_all(hand)
    assert hand.over
    # grande s0 (R R S 4) 1, chica s2 (A 4 S S) 1, pares team 0: two pares 2, juego s0 34 beats s3 33: 2.
    assert hand.points_by_lance()["pares"] == [2, 0]
    assert hand.points_by_lance()["juego"] == [2, 0]
    assert hand.scores == [6, 0]


def test_no_betting_at_all_after_chica_when_neither_lance_is_contested() -> None:
    # Pares: team 0 only; juego: seat 3 only.
    deal = ["12o 12c 5o 4o", "1o 11o 6o 7o", "10o 10c 1c 4c", "3o 11c 6c 7c"]
    hand = make_hand(deal, mano=0)
    cut(hand)
    paso_all(hand)
    paso_all(hand)
    assert hand.over
    assert hand.results[Lance.PARES].status is BetStatus.NO_BET
    assert hand.results[Lance.JUEGO].status is BetStatus.NO_BET
    assert hand.points_by_lance() == {
        "grande": [1, 0],
        "chica": [1, 0],
        "pares": [2, 0],
        "juego": [0, 2],
        "punto": [0, 0],
    }


def test_punto_when_nobody_has_juego() -> None:
    hand = make_hand(DEAL_C, mano=0)
    cut(hand)
    paso_all(hand)
    paso_all(hand)
    assert hand.phase is Phase.PUNTO
    view = hand.view_for(0)
    assert view.juego_declared == (False, False, False, False)
    assert view.pares_declared == (False, False, True, False)
    assert view.betting is not None and view.betting.participants == (0, 1, 2, 3)
    paso_all(hand)
    assert hand.over
    assert Lance.JUEGO not in hand.results
    # s2 has 30, the best punto: 1 stone en paso.
    assert hand.points_by_lance()["punto"] == [1, 0]


# -- opening and answering ---------------------------------------------------------------------------------


def test_answers_start_with_the_seat_after_the_proposer_not_the_mano() -> None:
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    play(hand, "0 paso", "1 paso", "2 envido 2")
    assert hand.turn == 3
    for seat in (0, 1, 2):
        assert hand.legal_actions(seat) == []
    play(hand, "3 no_quiero")
    assert hand.turn == 1, "the partner answers after a no_quiero"
    play(hand, "1 no_quiero")
    assert hand.phase is Phase.CHICA
    assert hand.scores == [1, 0]


def test_a_seat_that_passed_may_answer_and_the_proposers_partner_never_answers() -> None:
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    play(hand, "0 paso", "1 envido 2")
    assert hand.turn == 2
    assert hand.legal_actions(3) == []
    with pytest.raises(NotYourTurnError):
        hand.act(3, QUIERO)
    play(hand, "2 no_quiero")
    assert hand.turn == 0, "seat 0 passed and still answers"
    with pytest.raises(NotYourTurnError):
        hand.act(3, NO_QUIERO)
    play(hand, "0 no_quiero")
    assert hand.phase is Phase.CHICA
    assert hand.scores == [0, 1]
    assert all(r.seat != 3 for r in hand.log if r.phase is Phase.GRANDE)


def test_the_first_answer_that_is_not_no_quiero_binds() -> None:
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    play(hand, "0 envido 2", "1 quiero")
    assert hand.phase is Phase.CHICA, "seat 3 is not asked"
    result = hand.results[Lance.GRANDE]
    assert result.status is BetStatus.ACCEPTED and result.amount == 2
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    play(hand, "0 envido 2", "1 no_quiero", "3 quiero")
    assert hand.results[Lance.GRANDE].status is BetStatus.ACCEPTED
    assert hand.scores == [0, 0]


def test_raises_turn_the_roles_round() -> None:
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    play(hand, "0 envido 2", "1 sube 2")
    view = hand.view_for(0).betting
    assert view is not None and view.proposal == 4 and view.proposer == 1
    assert hand.turn == 2
    play(hand, "2 sube 3")
    assert hand.turn == 3
    play(hand, "3 no_quiero")
    assert hand.turn == 1
    play(hand, "1 quiero")
    result = hand.results[Lance.GRANDE]
    assert result.status is BetStatus.ACCEPTED and result.amount == 7
    paso_all(hand)
    paso_all(hand)
    paso_all(hand)
    # grande: 7 stones to seat 0's team (R R C S), not 7 + 1.
    assert hand.points_by_lance()["grande"] == [7, 0]


def test_an_ordago_is_answered_only_by_quiero_or_no_quiero() -> None:
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    play(hand, "0 envido 2", "1 ordago")
    assert hand.turn == 2
    assert set(hand.legal_actions(2)) == {QUIERO, NO_QUIERO}
    before = snapshot(hand)
    for action in (sube(2), ORDAGO, envido(2), PASO, MUS):
        with pytest.raises(IllegalActionError) as info:
            hand.act(2, action)
        assert info.type is IllegalActionError
        assert snapshot(hand) == before


@pytest.mark.parametrize(
    ("moves", "team", "deje"),
    [
        (["0 envido 2", "1 no_quiero", "3 no_quiero"], 0, 1),
        (["0 ordago", "1 no_quiero", "3 no_quiero"], 0, 1),
        (["0 paso", "1 envido 5", "2 no_quiero", "0 no_quiero"], 1, 1),
        (["0 envido 2", "1 sube 4", "2 no_quiero", "0 no_quiero"], 1, 2),
        (["0 envido 2", "1 sube 2", "2 ordago", "3 no_quiero", "1 no_quiero"], 0, 4),
        (["0 envido 2", "1 sube 2", "2 sube 5", "3 no_quiero", "1 no_quiero"], 0, 4),
        (["0 envido 3", "1 sube 2", "2 sube 2", "3 sube 2", "0 no_quiero", "2 no_quiero"], 1, 7),
    ],
)
def test_dejes_are_paid_at_once(moves: list[str], team: int, deje: int) -> None:
    hand = make_hand(DEAL_A, mano=0, scores=(10, 20))
    cut(hand)
    play(hand, *moves)
    assert hand.phase is Phase.CHICA
    expected = [10, 20]
    expected[team] += deje
    assert hand.scores == expected, "the deje is paid the moment the bet is refused"
    assert hand.view_for(3).scores == tuple(expected)
    assert hand.results[Lance.GRANDE].status is BetStatus.REFUSED
    assert hand.results[Lance.GRANDE].deje == deje
    while not hand.over:
        paso_all(hand)
    # A refused grande pays nothing more at the count.
    grande = [0, 0]
    grande[team] = deje
    assert hand.points_by_lance()["grande"] == grande
    assert all(line.lance is not Lance.GRANDE for line in hand.count_lines)


@pytest.mark.parametrize("start", [(39, 0), (39, 39)])
def test_a_deje_reaching_the_target_ends_the_hand_at_once_without_showdown(start: tuple[int, int]) -> None:
    hand = make_hand(DEAL_A, mano=0, scores=start)
    cut(hand)
    play(hand, "0 envido 2", "1 no_quiero", "3 no_quiero")
    assert hand.over
    assert hand.winner == 0
    assert hand.scores == [40, start[1]]
    assert not hand.shown
    assert hand.count_lines == []
    assert list(hand.results) == [Lance.GRANDE]
    for seat in range(4):
        view = hand.view_for(seat)
        assert view.shown is None
        assert view.winner == 0
        assert view.pares_declared is None
        assert view.legal == ()
    with pytest.raises(HandOverError):
        hand.act(2, PASO)


def test_a_bigger_deje_reaching_the_target_wins_for_the_proposer() -> None:
    hand = make_hand(DEAL_A, mano=0, scores=(0, 38))
    cut(hand)
    play(hand, "0 envido 2", "1 sube 3", "2 no_quiero", "0 no_quiero")
    assert hand.over and hand.winner == 1 and hand.scores == [0, 40] and not hand.shown


def test_an_accepted_ordago_goes_to_the_best_pares_not_to_the_proposer() -> None:
    hand = make_hand(DEAL_A, mano=0, scores=(5, 30))
    cut(hand)
    paso_all(hand)
    paso_all(hand)
    play(hand, "0 paso", "1 ordago", "2 quiero")
    assert hand.over
    assert hand.ordago == OrdagoResult(Lance.PARES, 0)  # s0's reyes beat s1's ases
    assert hand.winner == 0
    assert hand.shown
    assert hand.scores == [5, 30], "nothing is counted after an accepted órdago"
    assert hand.count_lines == []
    for seat in range(4):
        view = hand.view_for(seat)
        assert view.shown == tuple(tuple(cards(h)) for h in DEAL_A)
        assert view.ordago == OrdagoResult(Lance.PARES, 0)


def test_an_accepted_ordago_in_juego_goes_to_31_over_40() -> None:
    hand = make_hand(DEAL_A, mano=0)
    cut(hand)
    paso_all(hand)
    paso_all(hand)
    paso_all(hand)
    play(hand, "0 ordago", "3 quiero")
    assert hand.ordago == OrdagoResult(Lance.JUEGO, 1)
    assert hand.winner == 1


def test_dejes_already_paid_stand_after_an_ordago() -> None:
    hand = make_hand(DEAL_A, mano=0, scores=(10, 20))
    cut(hand)
    play(hand, "0 envido 2", "1 no_quiero", "3 no_quiero")
    assert hand.scores == [11, 20]
    play(hand, "0 ordago", "1 quiero")
    assert hand.ordago == OrdagoResult(Lance.CHICA, 1)  # s1 A A 4 5 wins chica
    assert hand.winner == 1
    assert hand.scores == [11, 20]
    assert hand.points_by_lance()["grande"] == [1, 0]


@pytest.mark.parametrize("mano", range(4))
def test_an_ordago_tie_goes_to_the_seat_nearest_the_mano(mano: int) -> None:
    # Every seat holds R R 7 A: grande is a four-way tie.
    deal = ["12o 12c 7o 1o", "12e 12b 7c 1c", "3o 3c 7e 1e", "3e 3b 7b 1b"]
    hand = make_hand(deal, mano=mano)
    cut(hand)
    hand.act(mano, PASO)
    hand.act((mano + 1) % 4, ORDAGO)
    hand.act((mano + 2) % 4, QUIERO)
    assert hand.ordago == OrdagoResult(Lance.GRANDE, mano % 2)


# -- the count ---------------------------------------------------------------------------------------------


def test_all_paso_count_of_deal_a() -> None:
    hand = make_hand(DEAL_A)
    phases_and_turns_of_all_paso(hand)
    # grande s0 1; chica s1 1; pares s0 + s2 par: 2; juego s3 31: 3.
    assert hand.points_by_lance() == {
        "grande": [1, 0],
        "chica": [0, 1],
        "pares": [2, 0],
        "juego": [0, 3],
        "punto": [0, 0],
    }
    assert hand.scores == [3, 4]
    assert hand.winner is None
    assert hand.shown
    assert [line.lance for line in hand.count_lines] == [Lance.GRANDE, Lance.CHICA, Lance.PARES, Lance.JUEGO]


def test_the_count_goes_in_order_and_stops_at_the_target() -> None:
    # grande team 0 → 38, chica team 1 → 39, pares team 0 → 40: team 0 wins; juego (3 for team 1) is not
    # counted.
    hand = make_hand(DEAL_A, scores=(37, 38))
    phases_and_turns_of_all_paso(hand)
    assert hand.winner == 0
    assert hand.scores == [40, 39]
    assert hand.points_by_lance()["juego"] == [0, 0]
    assert [line.lance for line in hand.count_lines] == [Lance.GRANDE, Lance.CHICA, Lance.PARES]


def test_count_lines_say_who_brought_each_bonus_and_what_was_not_counted() -> None:
    hand = make_hand(DEAL_A, scores=(37, 38))
    phases_and_turns_of_all_paso(hand)
    pares = next(line for line in hand.count_lines if line.lance is Lance.PARES)
    assert (pares.bet, pares.bonus, pares.bonuses) == (0, 2, ((0, 1), (2, 1)))  # par + par, nothing bet
    # Team 0 reached 40 with pares: juego (team 1's 31, 3 stones) is shown as not counted, never paid.
    assert [(line.lance, line.team, line.stones, line.bonuses) for line in hand.uncounted] == [
        (Lance.JUEGO, 1, 3, ((3, 3),))
    ]
    view = hand.view_for(0)
    assert view.uncounted == tuple(hand.uncounted) and view.count == tuple(hand.count_lines)


def test_the_count_can_be_won_by_the_team_behind_when_its_lance_comes_first() -> None:
    hand = make_hand(DEAL_A, scores=(39, 39))
    phases_and_turns_of_all_paso(hand)
    assert hand.winner == 0  # grande is counted first
    assert hand.scores == [40, 39]


def test_pares_and_juego_bonuses_count_every_holder_of_the_winning_team() -> None:
    hand = make_hand(DEAL_D, mano=0)
    phases_and_turns_of_all_paso(hand)
    # pares: s2 duples wins; team 0: medias 2 + duples 3. juego: s0 31 (tie with s3, s0 nearer the mano):
    # team 0: 31 → 3, s2 40 → 2. s1's par does not count.
    assert hand.points_by_lance() == {
        "grande": [1, 0],
        "chica": [0, 1],
        "pares": [5, 0],
        "juego": [5, 0],
        "punto": [0, 0],
    }


def test_the_juego_tie_goes_to_the_other_31_when_its_seat_is_nearer_the_mano() -> None:
    hand = make_hand(DEAL_D, mano=1)
    phases_and_turns_of_all_paso(hand)
    assert hand.points_by_lance()["juego"] == [0, 3]  # s3 31 → 3, s1 no juego


@pytest.mark.parametrize(
    ("deal", "lance_moves", "points"),
    [
        # accepted pares bet + bonuses
        (DEAL_D, {Phase.PARES: ["0 envido 2", "1 quiero"]}, {"pares": [7, 0]}),
        # accepted juego bet + bonuses
        (DEAL_D, {Phase.JUEGO: ["0 envido 3", "3 quiero"]}, {"juego": [8, 0]}),
        # refused pares: deje 1 + the proposing team's bonuses (s1 par: 1), though team 0 had better pares
        (DEAL_D, {Phase.PARES: ["0 paso", "1 envido 2", "2 no_quiero", "0 no_quiero"]}, {"pares": [0, 2]}),
        # refused juego: deje 1 + s3's 31: 3
        (
            DEAL_D,
            {Phase.JUEGO: ["0 paso", "2 paso", "3 envido 2", "0 no_quiero", "2 no_quiero"]},
            {"juego": [0, 4]},
        ),
        # accepted grande: the bet only
        (DEAL_D, {Phase.GRANDE: ["0 envido 5", "1 quiero"]}, {"grande": [5, 0]}),
        # accepted chica: the bet to the best chica (s3)
        (DEAL_D, {Phase.CHICA: ["0 envido 4", "1 sube 2", "2 quiero"]}, {"chica": [0, 6]}),
        # punto en paso 1, accepted bet + 1, refused: deje 1 + 1
        (DEAL_C, {}, {"punto": [1, 0]}),
        (DEAL_C, {Phase.PUNTO: ["0 envido 2", "1 quiero"]}, {"punto": [3, 0]}),
        (DEAL_C, {Phase.PUNTO: ["0 paso", "1 envido 2", "2 no_quiero", "0 no_quiero"]}, {"punto": [0, 2]}),
        # pares without betting: the holders' bonuses (s2 par 5: 1)
        (DEAL_C, {}, {"pares": [1, 0]}),
    ],
)
def test_what_each_lance_pays(
    deal: list[str], lance_moves: dict[Phase, list[str]], points: dict[str, list[int]]
) -> None:
    hand = make_hand(deal, mano=0)
    cut(hand)
    while not hand.over:
        moves = lance_moves.get(hand.phase)
        if moves:
            phase = hand.phase
            play(hand, *moves)
            assert hand.phase is not phase
        else:
            paso_all(hand)
    got = hand.points_by_lance()
    for lance, expected in points.items():
        assert got[lance] == expected, lance
    assert list(hand.scores) == [sum(p[0] for p in got.values()), sum(p[1] for p in got.values())]


def test_a_lance_nobody_holds_pays_nothing() -> None:
    deal = ["12o 11o 7o 1o", "12e 11b 7c 1c", "3o 11c 7e 4e", "3e 10b 6b 5b"]
    hand = make_hand(deal)
    phases_and_turns_of_all_paso(hand)
    assert hand.points_by_lance()["pares"] == [0, 0]
    assert all(line.lance is not Lance.PARES for line in hand.count_lines)


# -- illegal actions change nothing ------------------------------------------------------------------------


def _state(name: str) -> Hand:
    hand = make_hand(DEAL_A, mano=0, senas=True)
    setups: dict[str, Callable[[], None]] = {
        "mus": lambda: None,
        "discard": lambda: [hand.act(s, MUS) for s in range(4)],
        "grande_open": lambda: cut(hand),
        "grande_answer": lambda: (cut(hand), play(hand, "0 envido 2")),
        "ordago_answer": lambda: (cut(hand), play(hand, "0 ordago")),
        "cap": lambda: (cut(hand), play(hand, "0 envido 40")),
        "near_cap": lambda: (cut(hand), play(hand, "0 envido 30")),
        "pares_open": lambda: (cut(hand), paso_all(hand), paso_all(hand)),
        "juego_open": lambda: (cut(hand), paso_all(hand), paso_all(hand), paso_all(hand)),
        "over": lambda: phases_and_turns_of_all_paso(hand),
    }
    setups[name]()
    return hand


def _discard(*names: str) -> Action:
    return Action(ActionKind.DISCARD, cards=tuple(parse_card(n) for n in names))


ILLEGAL = [
    ("over", 0, PASO, HandOverError),
    ("over", 0, MUS, HandOverError),
    ("over", 3, QUIERO, HandOverError),
    ("mus", 1, MUS, NotYourTurnError),
    ("mus", 3, NO_MUS, NotYourTurnError),
    ("mus", 0, PASO, IllegalActionError),
    ("mus", 0, envido(2), IllegalActionError),
    ("mus", 0, _discard("12o"), IllegalActionError),
    ("mus", 4, MUS, IllegalActionError),
    ("mus", -1, MUS, IllegalActionError),
    ("discard", 1, _discard("1o"), NotYourTurnError),
    ("discard", 0, MUS, IllegalActionError),
    ("discard", 0, NO_MUS, IllegalActionError),
    ("discard", 0, _discard(), DiscardError),
    ("discard", 0, _discard("1o"), DiscardError),
    ("discard", 0, _discard("12o", "12o"), DiscardError),
    ("discard", 0, _discard("12o", "12c", "11o", "10o", "1o"), DiscardError),
    ("grande_open", 1, PASO, NotYourTurnError),
    ("grande_open", 3, ORDAGO, NotYourTurnError),
    ("grande_open", 0, QUIERO, IllegalActionError),
    ("grande_open", 0, NO_QUIERO, IllegalActionError),
    ("grande_open", 0, sube(2), IllegalActionError),
    ("grande_open", 0, MUS, IllegalActionError),
    ("grande_open", 0, _discard("12o"), IllegalActionError),
    ("grande_open", 0, envido(1), BadAmountError),
    ("grande_open", 0, envido(0), BadAmountError),
    ("grande_open", 0, envido(41), BadAmountError),
    ("grande_open", 0, envido(1000), BadAmountError),
    ("grande_answer", 1, PASO, IllegalActionError),
    ("grande_answer", 1, envido(2), IllegalActionError),
    ("grande_answer", 1, sube(1), BadAmountError),
    ("grande_answer", 1, sube(0), BadAmountError),
    ("grande_answer", 1, sube(39), BadAmountError),
    ("grande_answer", 2, QUIERO, NotYourTurnError),
    ("grande_answer", 3, QUIERO, NotYourTurnError),
    ("grande_answer", 0, QUIERO, NotYourTurnError),
    ("ordago_answer", 1, sube(2), IllegalActionError),
    ("ordago_answer", 1, ORDAGO, IllegalActionError),
    ("ordago_answer", 3, QUIERO, NotYourTurnError),
    ("cap", 1, sube(2), BadAmountError),
    ("near_cap", 1, sube(11), BadAmountError),
    ("pares_open", 3, PASO, NotParticipantError),
    ("pares_open", 3, ORDAGO, NotParticipantError),
    ("pares_open", 1, PASO, NotYourTurnError),
    ("juego_open", 1, PASO, NotParticipantError),
    ("juego_open", 2, envido(2), NotParticipantError),
    ("juego_open", 3, PASO, NotYourTurnError),
]


@pytest.mark.parametrize(("state", "seat", "action", "error"), ILLEGAL, ids=lambda v: str(v))
def test_an_illegal_action_raises_its_precise_error_and_changes_nothing(
    state: str, seat: int, action: Action, error: type[Exception]
) -> None:
    hand = _state(state)
    before = snapshot(hand)
    with pytest.raises(error) as info:
        hand.act(seat, action)
    assert info.type is error, f"{info.type.__name__} is not {error.__name__}: {info.value}"
    assert str(info.value)
    assert snapshot(hand) == before
    assert not hand.can_act(seat, action)
    with pytest.raises(error):
        hand.check(seat, action)


def test_legal_amounts_at_the_cap() -> None:
    hand = _state("cap")
    assert set(hand.legal_actions(1)) == {QUIERO, NO_QUIERO, ORDAGO}
    hand = _state("near_cap")
    raises = sorted(a.amount for a in hand.legal_actions(1) if a.kind is ActionKind.SUBE)
    assert raises == list(range(2, 11))
    hand.act(1, sube(10))
    assert hand.view_for(0).betting.proposal == 40  # type: ignore[union-attr]
    assert not any(a.kind is ActionKind.SUBE for a in hand.legal_actions(2))


# -- legal_actions, can_act and check agree ----------------------------------------------------------------


def candidate_actions(hand: Hand, seat: int, rng: random.Random) -> list[Action]:
    """A universe of actions: every word with amounts 0..42, and discards of own and foreign cards."""
    own = list(hand.hands[seat])
    foreign = [c for c in FULL_DECK if c not in own]
    universe = [MUS, NO_MUS, PASO, QUIERO, NO_QUIERO, ORDAGO]
    universe += [envido(n) for n in range(43)] + [sube(n) for n in range(43)]
    for mask in range(1 << len(own)):
        universe.append(discard([c for i, c in enumerate(own) if mask >> i & 1]))
    universe += [discard([*own[:2], rng.choice(foreign)]), discard(rng.sample(foreign, 2))]
    universe.append(discard([*own, rng.choice(foreign)]))
    return universe


@pytest.mark.parametrize("seed", range(20))
def test_legal_actions_can_act_and_check_agree_through_random_hands(seed: int) -> None:
    rng = random.Random(seed)
    hand = Hand.deal(rng, mano=seed % 4, config=HandConfig(target=rng.choice([40, 40, 12])))
    steps = 0
    while True:
        for seat in range(4):
            legal = hand.legal_actions(seat)
            if seat != hand.turn:
                assert legal == []
            universe = candidate_actions(hand, seat, rng)
            accepted = []
            for action in universe:
                ok = hand.can_act(seat, action)
                try:
                    hand.check(seat, action)
                except MusError:
                    assert not ok
                else:
                    assert ok
                if ok:
                    accepted.append(action)
            assert set(legal) <= set(universe)
            assert set(accepted) == set(legal), (hand.phase, seat)
            assert len(set(legal)) == len(legal)
        if hand.over:
            break
        seat = hand.turn
        assert seat is not None
        legal = hand.legal_actions(seat)
        kinds = sorted({a.kind for a in legal})
        kind = ActionKind.MUS if ActionKind.MUS in kinds and rng.random() < 0.6 else rng.choice(kinds)
        hand.act(seat, rng.choice([a for a in legal if a.kind is kind]))
        assert_forty(hand)
        steps += 1
        assert steps < 500
