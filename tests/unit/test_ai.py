"""Machine players: always legal, true señas, sensible choices; and the simulation command."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from engine.actions import MUS, NO_MUS, NO_QUIERO, ORDAGO, QUIERO, ActionKind, envido
from engine.ai import BaselinePlayer, RandomPlayer, make_policy
from engine.cards import FULL_DECK, parse_cards
from engine.errors import MusError
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.match import Match, MatchConfig
from engine.senas import sena_is_true

ROOT = Path(__file__).resolve().parents[2]


def explicit(
    deal: list[str], *, mano: int = 0, scores: tuple[int, int] = (0, 0), senas: bool = False
) -> Hand:
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    return Hand(mano=mano, hands=hands, deck=deck, scores=scores, config=HandConfig(senas=senas))


@pytest.mark.parametrize("seed", range(6))
def test_both_players_always_choose_a_legal_action_and_true_senas(seed: int) -> None:
    drive = random.Random(seed)
    ask = random.Random(1000 + seed)
    players = [BaselinePlayer(aggression=a) for a in (0.0, 0.5, 1.0)] + [RandomPlayer()]
    decisions = 0
    senas_chosen = 0
    phases: Counter[Phase] = Counter()
    config = MatchConfig(senas=seed % 3 != 0, target=(40, 20, 12)[seed % 3])
    clock = 0.0
    while decisions < 1200:
        match = Match(config, first_mano=drive.randrange(4))
        while not match.over and decisions < 1200:
            hand = match.new_hand(drive)
            while not hand.over:
                clock += 1.0
                for seat in range(4):
                    view = match.view_for(seat)
                    for player in players:
                        sena = player.choose_sena(view, ask)
                        if sena is not None:
                            senas_chosen += 1
                            assert sena_is_true(sena, hand.hands[seat]), (player.name, sena, hand.hands[seat])
                            hand.check_sena(seat, sena)  # it may be made now
                seat = hand.turn
                assert seat is not None
                view = match.view_for(seat)
                phases[view.phase] += 1
                for player in players:
                    action = player.decide(view, ask)
                    decisions += 1
                    assert action in view.legal, (player.name, action, view.phase)
                    assert hand.can_act(seat, action)
                # Move the match on with one of them, with señas and catches.
                mover = players[drive.randrange(len(players))]
                sena = mover.choose_sena(view, drive)
                if sena is not None:
                    made = match.make_sena(seat, sena, clock)
                    for rival in ((seat + 1) % 4, (seat + 3) % 4):
                        rival_view = match.view_for(rival)
                        wants = mover.wants_catch(rival_view, rival_view.senas[made.index], drive)
                        assert isinstance(wants, bool)
                        if wants:
                            match.catch_sena(rival, made.index, clock + 0.5)
                match.act(seat, mover.decide(match.view_for(seat), drive))
    assert decisions >= 1200
    assert {Phase.MUS, Phase.GRANDE, Phase.CHICA, Phase.PARES} <= set(phases)
    if config.senas:
        assert senas_chosen > 0


def test_every_phase_is_covered_over_the_random_situations() -> None:
    # Random drivers with many mus rounds reach discards, juego and punto too.
    rng = random.Random(77)
    players = [BaselinePlayer(), RandomPlayer()]
    phases: set[Phase] = set()
    for _ in range(150):
        hand = Hand.deal(rng, mano=rng.randrange(4), config=HandConfig(senas=True))
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            view = hand.view_for(seat)
            phases.add(view.phase)
            for player in players:
                assert player.decide(view, rng) in view.legal
            legal = hand.legal_actions(seat)
            hand.act(seat, MUS if MUS in legal and rng.random() < 0.6 else rng.choice(legal))
    assert phases == {
        Phase.MUS,
        Phase.DISCARD,
        Phase.GRANDE,
        Phase.CHICA,
        Phase.PARES,
        Phase.JUEGO,
        Phase.PUNTO,
    }


def test_no_player_chooses_a_sena_once_the_hand_is_over() -> None:
    """Policy.choose_sena: 'a true seña to make now' — after the hand no seña can be made."""
    rng = random.Random(12)
    for _ in range(30):
        hand = Hand.deal(rng, mano=rng.randrange(4), config=HandConfig(senas=True))
        hand.act(hand.turn, NO_MUS)  # type: ignore[arg-type]
        while not hand.over:
            hand.act(hand.turn, hand.legal_actions(hand.turn)[0])  # type: ignore[arg-type]
        for seat in range(4):
            view = hand.view_for(seat)
            for player in (BaselinePlayer(), RandomPlayer()):
                for _ in range(10):
                    sena = player.choose_sena(view, rng)
                    assert sena is None, f"{player.name} chose {sena} after the hand ended"


def test_players_refuse_to_decide_for_a_seat_that_cannot_act() -> None:
    hand = explicit(["12o 11o 10o 1o", "1c 4c 5c 6c", "1e 4e 5e 6e", "1b 4b 5b 6b"])
    view = hand.view_for(1)
    assert view.legal == ()
    for player in (BaselinePlayer(), RandomPlayer()):
        with pytest.raises(ValueError):
            player.decide(view, random.Random(0))


def cut_rate(cards: str, trials: int = 300) -> float:
    deal = [cards, "1c 4c 5c 6c", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    player = BaselinePlayer()
    cuts = 0
    for i in range(trials):
        hand = explicit(deal)
        action = player.decide(hand.view_for(0), random.Random(i))
        assert action in (MUS, NO_MUS)
        cuts += action == NO_MUS
    return cuts / trials


def test_the_baseline_cuts_mus_with_31_or_duples_of_reyes_more_often_than_with_a_poor_hand() -> None:
    poor = cut_rate("4o 6o 7e 11b")  # 27, no pares, middling everywhere
    thirty_one = cut_rate("12o 11o 10o 2o")
    duples_reyes = cut_rate("12o 12c 3o 3c")
    assert thirty_one >= 0.9
    assert duples_reyes >= 0.9
    assert poor <= 0.35
    assert thirty_one > poor and duples_reyes > poor


@pytest.mark.parametrize("aggression", [0.0, 0.5, 1.0])
def test_the_baseline_answers_an_envido_in_grande_with_four_reyes_by_quiero_or_sube(
    aggression: float,
) -> None:
    deal = ["4o 6c 7e 11b", "12o 12c 3o 3c", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    player = BaselinePlayer(aggression=aggression)
    answers: Counter[ActionKind] = Counter()
    for i in range(200):
        hand = explicit(deal)
        hand.act(0, NO_MUS)
        hand.act(0, envido(2))
        view = hand.view_for(1)
        assert view.on_turn
        action = player.decide(view, random.Random(i))
        assert action in view.legal
        answers[action.kind] += 1
    assert set(answers) <= {ActionKind.QUIERO, ActionKind.SUBE}, answers


def test_the_baseline_does_not_accept_an_ordago_in_grande_with_a_poor_hand() -> None:
    deal = ["12o 12c 3o 3c", "4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    player = BaselinePlayer()
    for i in range(100):
        hand = explicit(deal)
        hand.act(0, NO_MUS)
        hand.act(0, ORDAGO)
        assert set(hand.view_for(1).legal) == {QUIERO, NO_QUIERO}
        assert player.decide(hand.view_for(1), random.Random(i)) == NO_QUIERO


def test_make_policy_by_name() -> None:
    assert make_policy("baseline").name == "baseline"
    assert make_policy("random").name == "random"
    with pytest.raises(KeyError):
        make_policy("nobody")


def test_baseline_senas_are_true_and_only_in_betting_phases() -> None:
    rng = random.Random(5)
    player = BaselinePlayer()
    made = 0
    for _ in range(300):
        hand = Hand.deal(rng, mano=rng.randrange(4), config=HandConfig(senas=True))
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            view = hand.view_for(seat)
            sena = player.choose_sena(view, rng)
            if sena is not None:
                assert view.phase not in (Phase.MUS, Phase.DISCARD)
                assert sena_is_true(sena, hand.hands[seat])
                try:
                    hand.make_sena(seat, sena, float(made))
                except MusError as exc:  # pragma: no cover - a failure to report
                    raise AssertionError(f"the baseline chose a seña the hand refuses: {exc}") from exc
                made += 1
            hand.act(seat, player.decide(hand.view_for(seat), rng))
    assert made > 20


# -- python -m engine.simulate -----------------------------------------------------------------------------


def run_simulate(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "engine.simulate", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def test_simulate_prints_the_summary_and_the_same_seed_prints_the_same() -> None:
    first = run_simulate("--matches", "2", "--seed", "3")
    assert first.returncode == 0, first.stderr
    out = first.stdout
    lines = out.splitlines()

    def value(label: str) -> str:
        line = next((ln for ln in lines if re.match(rf"{label}\s", ln)), None)
        assert line is not None, f"no {label!r} line in:\n{out}"
        return line[len(label) :].split()[0]

    assert value("matches") == "2"
    games, hands = int(value("games")), int(value("hands"))
    assert games >= 2 and hands >= games
    assert float(value("hands per game")) == pytest.approx(hands / games, abs=0.006)
    assert any(ln.startswith("órdagos") for ln in lines)
    for lance in ("grande", "chica", "pares", "juego", "punto"):
        assert any(ln.split()[:1] == [lance] for ln in lines), f"no {lance} line"
    second = run_simulate("--matches", "2", "--seed", "3")
    assert second.returncode == 0
    assert second.stdout == out


def test_simulate_rejects_bad_arguments() -> None:
    bad = run_simulate("--matches", "0")
    assert bad.returncode != 0
    assert "matches" in bad.stderr
