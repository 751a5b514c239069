"""The arena's opponent styles: legal, distinct in the way they answer, and the population table."""

from __future__ import annotations

import random

import pytest

from engine.actions import NO_MUS, NO_QUIERO, ORDAGO, QUIERO, Action, ActionKind, envido
from engine.ai.policy import POLICIES
from engine.ai.population import STYLES, MixedPair
from engine.arena import main, run_arena
from engine.cards import FULL_DECK, parse_cards
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.senas import sena_is_true


def explicit(deal: list[str], *, mano: int = 0) -> Hand:
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    return Hand(mano=mano, hands=hands, deck=deck, config=HandConfig(senas=True))


def test_styles_are_for_the_arena_only() -> None:
    assert set(STYLES) == {"tight", "loose", "bluffer", "passive", "mixed"}
    assert not set(STYLES) & set(POLICIES)


@pytest.mark.parametrize("name", sorted(STYLES))
def test_every_style_plays_legal_actions_and_true_senas(name: str) -> None:
    rng = random.Random(name)
    players = [STYLES[name]() for _ in range(4)]
    phases: set[Phase] = set()
    for _ in range(40):
        hand = Hand.deal(rng, mano=rng.randrange(4), config=HandConfig(senas=True))
        clock = 0.0
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            view = hand.view_for(seat)
            phases.add(view.phase)
            sena = players[seat].choose_sena(view, rng)
            if sena is not None:
                assert sena_is_true(sena, hand.hands[seat])
                clock += 1.0
                hand.make_sena(seat, sena, clock)
            action = players[seat].decide(hand.view_for(seat), rng)
            assert action in hand.view_for(seat).legal
            hand.act(seat, action)
    assert {Phase.MUS, Phase.GRANDE, Phase.CHICA} <= phases


def _answer_to_ordago(name: str, seat_cards: str, seat: int = 1) -> Action:
    deal = ["4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b", "10e 10b 7o 7c"]
    deal[seat] = seat_cards
    hand = explicit(deal)
    hand.act(0, NO_MUS)
    hand.act(0, ORDAGO)
    if seat == 3:
        hand.act(1, NO_QUIERO)
    return STYLES[name]().decide(hand.view_for(seat), random.Random(0))


def test_callers_differ_in_what_they_accept() -> None:
    good = "12o 12c 7b 6o"  # a good grande (better than 9 hands in 10), not a sure one
    sure = "12o 12c 3o 3c"
    assert _answer_to_ordago("loose", "4c 5o 6o 7b") == QUIERO
    assert _answer_to_ordago("tight", good) == NO_QUIERO
    assert _answer_to_ordago("tight", sure) == QUIERO
    assert _answer_to_ordago("passive", sure) == QUIERO
    # the mixed pair: a tight caller on seat 1, a loose one on seat 3
    assert isinstance(STYLES["mixed"](), MixedPair)
    assert _answer_to_ordago("mixed", "4c 5o 6o 7b", seat=1) == NO_QUIERO
    assert _answer_to_ordago("mixed", "4c 5o 6o 7b", seat=3) == QUIERO


def test_the_bluffer_bets_poor_hands_and_the_passive_player_does_not() -> None:
    poor = ["4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b", "10o 10c 7o 7c"]
    bets = {"bluffer": 0, "passive": 0}
    for name in bets:
        for i in range(200):
            hand = explicit(poor)
            hand.act(0, NO_MUS)
            action = STYLES[name]().decide(hand.view_for(0), random.Random(i))
            bets[name] += action.kind in (ActionKind.ENVIDO, ActionKind.ORDAGO)
    assert bets["bluffer"] > 30 and bets["passive"] == 0
    hand = explicit(["12o 12c 3o 11c", *poor[1:]])
    hand.act(0, NO_MUS)
    hand.act(0, envido(2))
    assert STYLES["loose"]().decide(hand.view_for(1), random.Random(0)) == QUIERO


def test_the_population_table_prints_a_line_per_level_and_style(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "--population",
        "--games",
        "2",
        "--levels",
        "baseline,easy",
        "--styles",
        "tight,mixed",
        "--seed",
        "3",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "2 games to 40 per line" in lines[0]
    assert "95% interval" in lines[1] and "órdagos" in lines[1]
    rows = [line.split() for line in lines[2:]]
    assert [(r[0], r[1]) for r in rows] == [
        ("baseline", "tight"),
        ("easy", "tight"),
        ("baseline", "mixed"),
        ("easy", "mixed"),
    ]
    assert all(r[2] == "2" for r in rows)
    assert main(args) == 0
    assert capsys.readouterr().out == out
    with pytest.raises(SystemExit):
        main(["--population", "--styles", "nobody"])
    capsys.readouterr()


def test_styles_play_in_the_arena_by_name() -> None:
    stats = run_arena("baseline", "bluffer", seed=4, games=4)
    assert stats.games == 4 and sum(stats.game_wins) == 4
