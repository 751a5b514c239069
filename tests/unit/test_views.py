"""Per-seat views never leak another seat's cards (all four seats, at every step of random hands)."""

from __future__ import annotations

import random
import re
from dataclasses import fields, is_dataclass
from typing import Any

import pytest

from engine.actions import Action, ActionKind
from engine.ai import RandomPlayer
from engine.cards import Card
from engine.errors import MusError
from engine.evaluation import Lance, evaluate
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.match import Match, MatchConfig
from engine.senas import true_senas
from engine.views import SeatView

_CARD_TYPE = re.compile(r"\bCard\b")


def cards_in(view: Any) -> set[Card]:
    """Every card found anywhere in a view: ints under any dataclass field annotated with ``Card``."""
    found: set[Card] = set()

    def walk(value: Any, holds_cards: bool) -> None:
        if is_dataclass(value) and not isinstance(value, type):
            for f in fields(value):
                walk(getattr(value, f.name), bool(_CARD_TYPE.search(str(f.type))))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k, holds_cards)
                walk(v, holds_cards)
        elif isinstance(value, tuple | list | set | frozenset):
            for v in value:
                walk(v, holds_cards)
        elif holds_cards and isinstance(value, int) and not isinstance(value, bool):
            found.add(value)

    walk(view, False)
    return found


def card_fields(cls: type) -> set[str]:
    return {f.name for f in fields(cls) if _CARD_TYPE.search(str(f.type))}


def test_the_walker_finds_the_card_fields() -> None:
    # A new field that carries cards must be reviewed here for leaks (and the walker proved to see it).
    assert card_fields(SeatView) == {"cards", "shown"}
    hand = Hand.deal(random.Random(1))
    view = hand.view_for(hand.turn)  # type: ignore[arg-type]
    assert cards_in(view) == set(hand.hands[hand.turn])  # type: ignore[index]


def choose(hand: Hand, rng: random.Random) -> Action:
    """A random legal action, by kind first (so that mus rounds, discards and bets all happen)."""
    legal = hand.legal_actions(hand.turn)  # type: ignore[arg-type]
    kinds = sorted({a.kind for a in legal})
    kind = ActionKind.MUS if ActionKind.MUS in kinds and rng.random() < 0.75 else rng.choice(kinds)
    return rng.choice([a for a in legal if a.kind is kind])


def lance_reached(hand: Hand, lance: Lance) -> bool:
    if lance is Lance.PARES:
        return hand.phase in (Phase.PARES, Phase.JUEGO, Phase.PUNTO) or Lance.PARES in hand.results
    return (
        hand.phase in (Phase.JUEGO, Phase.PUNTO) or Lance.JUEGO in hand.results or Lance.PUNTO in hand.results
    )


def check_views(hand: Hand, own_discards: list[set[Card]], views: list[SeatView]) -> None:
    every_hand = {c for h in hand.hands for c in h}
    for seat, view in enumerate(views):
        assert view.seat == seat
        own = set(hand.hands[seat])
        allowed = own | own_discards[seat] | (every_hand if hand.shown else set())
        found = cards_in(view)
        leaked = found - allowed
        assert not leaked, f"seat {seat} sees {sorted(leaked)} in phase {hand.phase}"
        assert view.cards == tuple(hand.hands[seat])
        assert own <= found
        if hand.shown:
            assert view.shown == tuple(tuple(h) for h in hand.hands)
        else:
            assert view.shown is None
        for action in view.actions:
            if action.seat != seat:
                assert action.cards == ()
            if action.kind is ActionKind.DISCARD:
                assert action.count >= 1
        if seat != hand.turn:
            assert view.legal == ()
        else:
            assert view.legal == tuple(hand.legal_actions(seat))
        # Declarations: None before their lance is reached, then truthful.
        pares, juego = view.pares_declared, view.juego_declared
        if lance_reached(hand, Lance.PARES):
            assert pares == tuple(evaluate(h).has_pares for h in hand.hands)
        else:
            assert pares is None
        if lance_reached(hand, Lance.JUEGO):
            assert juego == tuple(evaluate(h).has_juego for h in hand.hands)
        else:
            assert juego is None
        if hand.phase in (Phase.MUS, Phase.DISCARD, Phase.GRANDE, Phase.CHICA):
            assert pares is None and juego is None
        # Señas: which one only for its side and for rivals who caught it.
        for sena_view in view.senas:
            made = hand.senas[sena_view.index]
            knows = made.seat % 2 == seat % 2 or any(
                c.sena_index == made.index and c.seat == seat for c in hand.catches
            )
            assert sena_view.sena == (made.sena if knows else None)


def play_and_check(hand: Hand, rng: random.Random, *, use_match_views: Match | None = None) -> int:
    own_discards: list[set[Card]] = [set(), set(), set(), set()]
    clock = 0.0
    steps = 0
    while True:
        source = use_match_views if use_match_views is not None else hand
        check_views(hand, own_discards, [source.view_for(s) for s in range(4)])
        if hand.over:
            return steps
        clock += 1.0
        if hand.config.senas and rng.random() < 0.3:
            seat = rng.randrange(4)
            options = true_senas(hand.hands[seat]) if len(hand.hands[seat]) == 4 else []
            if options:
                try:
                    made = hand.make_sena(seat, rng.choice(options), clock)
                except MusError:
                    pass
                else:
                    if rng.random() < 0.5:
                        hand.catch_sena((seat + rng.choice((1, 3))) % 4, made.index, clock + 0.5)
                    check_views(hand, own_discards, [source.view_for(s) for s in range(4)])
        seat = hand.turn
        assert seat is not None
        action = choose(hand, rng)
        if action.kind is ActionKind.DISCARD:
            own_discards[seat] |= set(action.cards)
        if use_match_views is not None:
            use_match_views.act(seat, action)
        else:
            hand.act(seat, action)
        steps += 1
        assert steps < 1000


@pytest.mark.parametrize("seed", range(60))
def test_no_view_leaks_in_random_hands(seed: int) -> None:
    rng = random.Random(seed)
    config = HandConfig(senas=seed % 2 == 0, target=rng.choice([40, 40, 10]))
    hand = Hand.deal(rng, mano=seed % 4, scores=(rng.randrange(30), rng.randrange(30)), config=config)
    play_and_check(hand, rng)


@pytest.mark.parametrize("seed", range(10))
def test_no_view_leaks_in_match_views_with_the_random_player(seed: int) -> None:
    rng = random.Random(1000 + seed)
    match = Match(MatchConfig(senas=True, target=15))
    player = RandomPlayer()
    for _ in range(6):
        if match.over:
            break
        hand = match.new_hand(rng)
        own_discards: list[set[Card]] = [set(), set(), set(), set()]
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            check_views(hand, own_discards, [match.view_for(s) for s in range(4)])
            action = player.decide(match.view_for(seat), rng)
            if action.kind is ActionKind.DISCARD:
                own_discards[seat] |= set(action.cards)
            match.act(seat, action)
        check_views(hand, own_discards, [match.view_for(s) for s in range(4)])


@pytest.mark.parametrize("seed", range(4))
def test_a_deal_with_many_mus_rounds_and_a_showdown_leaks_nothing(seed: int) -> None:
    # Mus rounds until the deck has been reshuffled at least once, then a count with showdown.
    rng = random.Random(seed)
    hand = Hand.deal(rng, mano=seed)
    own_discards: list[set[Card]] = [set(), set(), set(), set()]
    while not hand.reshuffles:
        seat = hand.turn
        assert seat is not None
        if hand.phase is Phase.MUS:
            hand.act(seat, Action(ActionKind.MUS))
        else:
            thrown = tuple(rng.sample(hand.hands[seat], rng.randint(1, 4)))
            own_discards[seat] |= set(thrown)
            hand.act(seat, Action(ActionKind.DISCARD, cards=thrown))
        check_views(hand, own_discards, [hand.view_for(s) for s in range(4)])
    hand.act(hand.turn, Action(ActionKind.NO_MUS))  # type: ignore[arg-type]
    while not hand.over:
        hand.act(hand.turn, Action(ActionKind.PASO))  # type: ignore[arg-type]
        check_views(hand, own_discards, [hand.view_for(s) for s in range(4)])
    assert hand.shown


def test_a_view_of_a_seat_that_does_not_exist_is_refused() -> None:
    hand = Hand.deal(random.Random(0))
    for seat in (-1, 4):
        with pytest.raises(ValueError):
            hand.view_for(seat)


def test_public_actions_carry_the_standing_bet_of_envidos_and_raises() -> None:
    hand = Hand.deal(random.Random(7), mano=0)
    hand.act(0, Action(ActionKind.NO_MUS))
    hand.act(0, Action(ActionKind.ENVIDO, 2))
    hand.act(1, Action(ActionKind.SUBE, 5))  # the answer starts with the seat after the proposer
    hand.act(2, Action(ActionKind.SUBE, 3))
    totals = [(a.kind, a.total) for a in hand.view_for(2).actions if a.phase is Phase.GRANDE]
    assert totals == [(ActionKind.ENVIDO, 2), (ActionKind.SUBE, 7), (ActionKind.SUBE, 10)]
