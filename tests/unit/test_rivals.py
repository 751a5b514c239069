"""The public record of answers, and the answer model that learns from it."""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from engine.actions import NO_MUS, NO_QUIERO, ORDAGO, QUIERO, Action, ActionKind, envido
from engine.ai import BaselinePlayer
from engine.ai.arrays import INDEX, PCT
from engine.ai.rivals import PRIOR, TYPES, Callers
from engine.ai.tables import LANCE_INDEX
from engine.cards import FULL_DECK, parse_cards
from engine.evaluation import Lance, hand_code
from engine.hand import Hand
from engine.hand_types import HandConfig
from engine.match import ANSWERS_KEPT, Match, MatchConfig, answers_of
from engine.state import dump_match, load_match, pack_answer, unpack_answer
from engine.views import PublicAnswer


def explicit(deal: list[str], *, mano: int = 0) -> Hand:
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    return Hand(mano=mano, hands=hands, deck=deck, config=HandConfig())


DEAL = ["12o 12c 3o 3c", "4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b"]


def test_answers_of_a_shown_hand_name_the_seat_the_stake_and_the_hand_shown() -> None:
    hand = explicit(DEAL)
    hand.act(0, NO_MUS)
    hand.act(0, envido(2))
    hand.act(1, NO_QUIERO)  # the word goes to the partner
    hand.act(3, Action(ActionKind.SUBE, 3))  # a raise takes the stake: 5 now stands
    hand.act(0, QUIERO)
    while not hand.over:  # the other lances en paso
        hand.act(hand.turn, Action(ActionKind.PASO))  # type: ignore[arg-type]
    assert hand.shown
    answers = answers_of(hand)
    code = {seat: hand_code(hand.hands[seat]) for seat in range(4)}
    assert answers == (
        PublicAnswer(1, Lance.GRANDE, 2, False, code[1]),
        PublicAnswer(3, Lance.GRANDE, 2, True, code[3]),
        PublicAnswer(0, Lance.GRANDE, 5, True, code[0]),
    )


def test_an_accepted_ordago_records_the_answer_and_the_hands() -> None:
    hand = explicit(DEAL)
    hand.act(0, NO_MUS)
    hand.act(0, ORDAGO)
    hand.act(1, QUIERO)
    assert hand.over and hand.shown
    assert answers_of(hand) == (PublicAnswer(1, Lance.GRANDE, 0, True, hand_code(hand.hands[1])),)


def test_the_match_remembers_answers_shows_them_to_every_seat_and_saves_them() -> None:
    rng = random.Random(3)
    match = Match(MatchConfig(), first_mano=0)
    player = BaselinePlayer(aggression=0.9)
    while len(match.answers) < 3 and not match.over:
        hand = match.new_hand(rng)
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            match.act(seat, player.decide(match.view_for(seat), rng))
        # nothing of a hand's answers is known before it ends; every seat sees the same record after
        assert all(match.view_for(s).answers == tuple(match.answers) for s in range(4))
    assert match.answers and len(match.answers) <= ANSWERS_KEPT
    assert load_match(dump_match(match)).answers == match.answers
    for answer in match.answers:
        assert unpack_answer(pack_answer(answer)) == answer
    assert unpack_answer(pack_answer(PublicAnswer(2, Lance.PUNTO, 40, False, -1))) == PublicAnswer(
        2, Lance.PUNTO, 40, False, -1
    )


def _view_with(answers: list[PublicAnswer]) -> Callers:
    hand = explicit(DEAL)
    hand.act(0, NO_MUS)
    view = dataclasses.replace(hand.view_for(0), answers=tuple(answers))
    return Callers(view)


def _code_at(lance: Lance, low: float, high: float) -> int:
    from engine.ai.arrays import CODE

    pct = PCT[LANCE_INDEX[lance]]
    return int(CODE[int(np.flatnonzero((pct > low) & (pct < high))[0])])


def test_a_seat_seen_accepting_poor_hands_is_read_as_a_loose_caller() -> None:
    poor = _code_at(Lance.GRANDE, 0.2, 0.4)
    callers = _view_with(
        [PublicAnswer(1, Lance.GRANDE, 0, True, poor), PublicAnswer(1, Lance.GRANDE, 10, True, poor)]
    )
    assert callers.type_weight(1, "loose") > 0.8
    assert callers.weights[3] == PRIOR  # the partner of that seat showed nothing
    lance = LANCE_INDEX[Lance.GRANDE]
    position = int(INDEX[poor])
    assert callers.acceptance(1, lance, 0)[position] > 0.8 > callers.acceptance(3, lance, 0)[position]


def test_a_seat_seen_refusing_good_hands_is_read_as_tight() -> None:
    good = _code_at(Lance.GRANDE, 0.92, 0.95)
    seen = [PublicAnswer(3, Lance.GRANDE, 0, False, good) for _ in range(3)]
    callers = _view_with(seen)
    tight = callers.type_weight(3, "tight") + callers.type_weight(3, "rock")
    assert tight > PRIOR[3] + PRIOR[4] + 0.3
    lance = LANCE_INDEX[Lance.GRANDE]
    assert (
        callers.acceptance(3, lance, 0)[int(INDEX[good])] < callers.acceptance(1, lance, 0)[int(INDEX[good])]
    )
    # answers whose hands were never shown teach nothing
    unknown = _view_with([PublicAnswer(3, Lance.GRANDE, 0, False, -1) for _ in range(3)])
    assert unknown.weights[3] == PRIOR


def test_the_type_weights_are_a_distribution() -> None:
    assert abs(sum(PRIOR) - 1.0) < 1e-9 and len(PRIOR) == len(TYPES)
    callers = _view_with([PublicAnswer(1, Lance.PARES, 2, True, _code_at(Lance.PARES, 0.6, 0.9))])
    assert abs(sum(callers.weights[1]) - 1.0) < 0.01


def test_a_side_about_to_lose_is_expected_to_call_an_ordago_more_readily() -> None:
    hand = explicit(DEAL)
    hand.act(0, NO_MUS)
    view = hand.view_for(0)
    lance = LANCE_INDEX[Lance.GRANDE]
    calm = Callers(view)
    pressed = Callers(dataclasses.replace(view, scores=(36, 10)))  # we need 4, they need 30
    assert pressed.pressed[1] and pressed.pressed[3] and not calm.pressed[1]
    assert not pressed.pressed[2]  # our own side is not pressed
    fair = _code_at(Lance.GRANDE, 0.8, 0.85)
    position = int(INDEX[fair])
    assert pressed.acceptance(1, lance, 0)[position] > calm.acceptance(1, lance, 0)[position] + 0.2
    # bets are answered as before: only an órdago ends the game at once
    assert pressed.acceptance(1, lance, 4)[position] == calm.acceptance(1, lance, 4)[position]


def _ordago_value(answers: list[PublicAnswer]) -> float:
    from engine.ai.sampling import Beliefs
    from engine.ai.strong import StrongPlayer

    # A mediocre grande (two reyes, a seven, a four) opening the betting at 0-0.
    hand = explicit(["12o 12c 7o 4c", "4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b"])
    hand.act(0, NO_MUS)
    view = dataclasses.replace(hand.view_for(0), answers=tuple(answers))
    player = StrongPlayer("hard")
    callers = Callers(view)
    beliefs = Beliefs(view, callers=callers)
    positions, weights = beliefs.draw(random.Random(1), 2000)
    options = dict(player._options(view, beliefs, positions, weights))
    return options[ORDAGO] - options[Action(ActionKind.PASO)]


def test_a_bluffed_ordago_is_worth_less_against_callers_seen_calling_with_poor_hands() -> None:
    poor = _code_at(Lance.GRANDE, 0.2, 0.4)
    good = _code_at(Lance.GRANDE, 0.92, 0.95)
    loose = [PublicAnswer(seat, Lance.GRANDE, 0, True, poor) for seat in (1, 3) for _ in range(2)]
    tight = [PublicAnswer(seat, Lance.GRANDE, 0, False, good) for seat in (1, 3) for _ in range(3)]
    assert _ordago_value(loose) < _ordago_value([]) < _ordago_value(tight)


def test_a_shown_code_that_is_no_hand_teaches_nothing() -> None:
    bogus = [PublicAnswer(1, Lance.GRANDE, 0, True, 4 * 5**7 + 99), PublicAnswer(1, Lance.GRANDE, 0, True, 7)]
    assert _view_with(bogus).weights[1] == PRIOR


def test_answers_of_a_hand_won_by_a_deje_show_no_hand() -> None:
    hands = [parse_cards(h.split()) for h in DEAL]
    used = {c for h in hands for c in h}
    hand = Hand(mano=0, hands=hands, deck=[c for c in FULL_DECK if c not in used], scores=(39, 0))
    hand.act(0, NO_MUS)
    hand.act(0, envido(2))
    hand.act(1, NO_QUIERO)
    hand.act(3, NO_QUIERO)  # the deje reaches 40: the game is won and nobody shows a card
    assert hand.over and not hand.shown
    assert answers_of(hand) == (
        PublicAnswer(1, Lance.GRANDE, 2, False, -1),
        PublicAnswer(3, Lance.GRANDE, 2, False, -1),
    )
