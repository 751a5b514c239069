"""Games, vacas and the match (RULES.md, "Game, vaca, match")."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine.actions import NO_MUS, NO_QUIERO, ORDAGO, PASO, QUIERO, Action, ActionKind
from engine.ai import RandomPlayer
from engine.cards import FULL_DECK, parse_cards
from engine.errors import HandOverError, MusError
from engine.hand import Hand
from engine.match import BIG_BET, Match, MatchConfig, amarracos, big_bets_of
from engine.state import dump_match, load_match

WEAK = ["1o 4o 5o 6o", "1c 4c 5c 6c", "1e 4e 5e 6e"]  # A 4 5 6: no pares, no juego


def explicit_hand(match: Match, deal: list[str]) -> Hand:
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    hand = Hand(
        mano=match.next_mano,
        hands=hands,
        deck=[c for c in FULL_DECK if c not in used],
        scores=(match.scores[0], match.scores[1]),
        config=match.config.hand_config(),
    )
    match.start_hand(hand)
    return hand


def win_game_by_ordago(match: Match, team: int) -> Hand:
    """A hand in which ``team`` holds four reyes and an órdago in grande is accepted."""
    mano = match.next_mano
    strong_seat = mano if mano % 2 == team else (mano + 1) % 4
    weak = list(WEAK)
    deal = ["12o 12c 12e 12b" if s == strong_seat else weak.pop() for s in range(4)]
    hand = explicit_hand(match, deal)
    match.act(mano, NO_MUS)
    match.act(mano, ORDAGO)
    match.act((mano + 1) % 4, QUIERO)
    assert hand.over and hand.winner == team
    return hand


def paso_hand(match: Match, deal: list[str]) -> Hand:
    hand = explicit_hand(match, deal)
    match.act(hand.mano, NO_MUS)
    while not hand.over:
        match.act(hand.turn, PASO)  # type: ignore[arg-type]
    return hand


DEAL_A = ["12o 12c 11o 10o", "1o 1c 4o 5o", "7o 7c 6o 11c", "3o 11e 10c 1e"]  # all paso, mano 0: 3-4
DEAL_D = ["12o 12c 12e 1o", "4o 4c 5o 7o", "11o 11c 10o 10c", "3o 11e 10e 1c"]  # all paso, mano 0: 11-1


def test_scores_carry_from_hand_to_hand_within_a_game() -> None:
    match = Match()
    hand = paso_hand(match, DEAL_A)
    assert hand.scores == [3, 4] and hand.winner is None
    assert match.scores == [3, 4]
    assert match.games == [0, 0]
    assert match.next_mano == 1
    nxt = explicit_hand(match, DEAL_A)
    assert nxt.start_scores == (3, 4) and nxt.mano == 1
    assert match.live_scores() == (3, 4)


def test_a_game_won_at_the_target_by_the_count_resets_the_scores_and_counts_a_game() -> None:
    match = Match(MatchConfig(target=10))
    hand = paso_hand(match, DEAL_D)
    assert hand.winner == 0
    assert hand.scores[0] >= 10
    assert match.last_outcome is not None
    assert match.last_outcome.game_winner == 0
    assert match.last_outcome.scores == (hand.scores[0], hand.scores[1])
    assert match.scores == [0, 0]
    assert match.games == [1, 0]
    assert match.games_total == [1, 0]
    assert match.game_number == 2
    assert match.vacas == [0, 0]
    nxt = match.new_hand(random.Random(1))
    assert nxt.start_scores == (0, 0)
    assert match.view_for(0).games == (1, 0)


def test_a_game_won_by_ordago_whatever_the_score() -> None:
    match = Match()
    paso_hand(match, DEAL_A)  # 3-4
    win_game_by_ordago(match, 0)
    assert match.games == [1, 0] and match.scores == [0, 0]


def test_a_vaca_after_two_games_and_the_match_after_two_vacas() -> None:
    match = Match()
    assert match.vaca_number == 1
    win_game_by_ordago(match, 0)
    assert match.games == [1, 0] and match.vacas == [0, 0]
    win_game_by_ordago(match, 1)
    assert match.games == [1, 1] and match.vacas == [0, 0]
    win_game_by_ordago(match, 0)
    assert match.last_outcome is not None and match.last_outcome.vaca_winner == 0
    assert match.games == [0, 0], "a new vaca starts with no games"
    assert match.vacas == [1, 0]
    assert match.games_total == [2, 1]
    assert match.vaca_number == 2
    assert not match.over
    win_game_by_ordago(match, 1)
    win_game_by_ordago(match, 1)
    assert match.vacas == [1, 1] and not match.over
    win_game_by_ordago(match, 0)
    assert not match.over
    win_game_by_ordago(match, 0)
    assert match.over and match.winner == 0
    assert match.vacas == [2, 1]
    assert match.last_outcome is not None and match.last_outcome.match_winner == 0
    assert match.games_total == [4, 3]
    for seat in range(4):
        assert match.view_for(seat).match_winner == 0
    with pytest.raises(HandOverError):
        match.new_hand(random.Random(0))


def test_a_single_game_table() -> None:
    match = Match(MatchConfig(games_per_vaca=1, vacas_per_match=1, target=30))
    win_game_by_ordago(match, 1)
    assert match.over and match.winner == 1
    assert match.vacas == [0, 1]
    assert match.view_for(2).vacas_per_match == 1


def test_three_games_a_vaca_when_the_table_says_so() -> None:
    match = Match(MatchConfig(games_per_vaca=3, vacas_per_match=1))
    for team in (0, 0, 1, 1):
        win_game_by_ordago(match, team)
        assert not match.over
    win_game_by_ordago(match, 1)
    assert match.over and match.winner == 1


@pytest.mark.parametrize("first_mano", range(4))
def test_the_mano_moves_one_seat_every_hand_across_games(first_mano: int) -> None:
    rng = random.Random(first_mano)
    match = Match(MatchConfig(target=10, games_per_vaca=2, vacas_per_match=2), first_mano=first_mano)
    player = RandomPlayer()
    manos = []
    games_seen = 0
    while not match.over and len(manos) < 400:
        hand = match.new_hand(rng)
        manos.append(hand.mano)
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            match.act(seat, player.decide(match.view_for(seat), rng))
        if hand.winner is not None:
            games_seen += 1
    assert games_seen >= 2, "the mano kept rotating over a game boundary"
    assert manos == [(first_mano + i) % 4 for i in range(len(manos))]
    assert match.hands_played == len(manos)


def test_the_mano_rotates_after_an_ordago_too() -> None:
    match = Match(first_mano=3)
    hand = win_game_by_ordago(match, 0)
    assert hand.mano == 3
    assert match.next_mano == 0
    assert match.new_hand(random.Random(0)).mano == 0


@pytest.mark.parametrize(
    ("stones", "shown"), [(13, (2, 3)), (0, (0, 0)), (4, (0, 4)), (5, (1, 0)), (40, (8, 0))]
)
def test_amarracos(stones: int, shown: tuple[int, int]) -> None:
    assert amarracos(stones) == shown


def test_a_new_hand_while_one_is_being_played_is_refused() -> None:
    match = Match()
    match.new_hand(random.Random(0))
    with pytest.raises(MusError):
        match.new_hand(random.Random(1))


def test_an_explicit_hand_must_continue_the_match() -> None:
    match = Match(first_mano=1)
    hands = [parse_cards(h.split()) for h in DEAL_A]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    with pytest.raises(MusError):
        match.start_hand(Hand(mano=0, hands=hands, deck=deck))
    with pytest.raises(MusError):
        match.start_hand(Hand(mano=1, hands=hands, deck=deck, scores=(1, 0)))
    match.start_hand(Hand(mano=1, hands=hands, deck=deck))


def test_before_the_first_deal() -> None:
    match = Match()
    assert match.legal_actions(0) == []
    with pytest.raises(HandOverError):
        match.view_for(0)
    with pytest.raises(HandOverError):
        match.act(0, NO_MUS)


@pytest.mark.parametrize(
    "kwargs",
    [{"target": 0}, {"games_per_vaca": 0}, {"vacas_per_match": 0}, {"catch_window": 0.0}],
)
def test_bad_table_options_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        MatchConfig(**kwargs)  # type: ignore[arg-type]


def test_first_mano_must_be_a_seat() -> None:
    with pytest.raises(ValueError):
        Match(first_mano=4)


def test_the_table_target_reaches_the_hand() -> None:
    match = Match(MatchConfig(target=30, senas=True, catch_window=2.0))
    hand = match.new_hand(random.Random(0))
    assert hand.config.target == 30 and hand.config.senas and hand.config.catch_window == 2.0
    view = match.view_for(0)
    assert view.target == 30 and view.senas_enabled


def _bet_big_and_refuse(
    act: Callable[[int, Action], object], hand: Hand, bettor_team: int, amount: int
) -> None:
    """Play ``hand``: ``bettor_team`` opens every lance it can with ``amount``, the others refuse."""
    big = Action(ActionKind.ENVIDO, amount)
    while not hand.over:
        seat = hand.turn
        assert seat is not None
        legal = hand.legal_actions(seat)
        if NO_MUS in legal:
            action = NO_MUS
        elif seat % 2 == bettor_team and big in legal:
            action = big
        elif NO_QUIERO in legal:
            action = NO_QUIERO
        else:
            action = PASO
        act(seat, action)


def test_big_bets_of_finished_hands_are_remembered_shown_to_every_seat_and_saved() -> None:
    match = Match()
    hand = explicit_hand(match, DEAL_A)
    assert match.view_for(0).big_bets == (0, 0)
    _bet_big_and_refuse(match.act, hand, bettor_team=1, amount=BIG_BET)
    made = sum(1 for r in hand.log if r.action.kind is ActionKind.ENVIDO)
    assert made >= 2
    assert match.big_bets == [0, made]
    explicit_hand(match, DEAL_D)
    assert all(match.view_for(seat).big_bets == (0, made) for seat in range(4))
    assert load_match(dump_match(match)).big_bets == [0, made]


def test_small_bets_and_big_bets_near_the_target_are_not_big_bets() -> None:
    match = Match()
    hand = explicit_hand(match, DEAL_A)
    _bet_big_and_refuse(match.act, hand, bettor_team=0, amount=BIG_BET - 1)
    assert any(r.action.kind is ActionKind.ENVIDO for r in hand.log)
    assert match.big_bets == [0, 0]
    hands = [parse_cards(h.split()) for h in DEAL_A]
    used = {c for h in hands for c in h}
    rest = [c for c in FULL_DECK if c not in used]
    near = Hand(
        mano=0, hands=hands, deck=rest, scores=(40 - BIG_BET + 1, 0), config=match.config.hand_config()
    )
    _bet_big_and_refuse(near.act, near, bettor_team=0, amount=BIG_BET)
    assert any(r.action.kind is ActionKind.ENVIDO for r in near.log)
    assert big_bets_of(near) == (0, 0)
