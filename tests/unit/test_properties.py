"""Properties of random legal (and illegal) play: termination, no lost or duplicated card, monotone scores,
the game to the first team at the target, no view leaks, determinism."""

from __future__ import annotations

import random
import re
from dataclasses import fields, is_dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from engine.actions import Action, ActionKind
from engine.ai import BaselinePlayer, RandomPlayer
from engine.cards import FULL_DECK, Card
from engine.errors import MusError
from engine.hand import Hand
from engine.match import Match, MatchConfig
from engine.record import record_of
from engine.senas import Sena, sena_is_true, true_senas
from engine.simulate import play_match
from engine.state import dump_match

# Derandomized (the same examples every run) and without the shrink phase: a failure is reported at once with
# its reproduction blob instead of minutes of shrinking whole matches.
SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "print_blob": True,
    "phases": (Phase.explicit, Phase.reuse, Phase.generate),
}

_CARD_TYPE = re.compile(r"\bCard\b")


def cards_in(view: Any) -> set[Card]:
    """Every int under a dataclass field annotated with ``Card``, anywhere in the view."""
    found: set[Card] = set()

    def walk(value: Any, holds_cards: bool) -> None:
        if is_dataclass(value) and not isinstance(value, type):
            for f in fields(value):
                walk(getattr(value, f.name), bool(_CARD_TYPE.search(str(f.type))))
        elif isinstance(value, tuple | list | set | frozenset):
            for v in value:
                walk(v, holds_cards)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k, holds_cards)
                walk(v, holds_cards)
        elif holds_cards and isinstance(value, int) and not isinstance(value, bool):
            found.add(value)

    walk(view, False)
    return found


def all_actions(hand: Hand, seat: int, rng: random.Random) -> list[Action]:
    """A sample of actions of every kind, legal or not."""
    own = list(hand.hands[seat])
    others = [c for c in FULL_DECK if c not in own]
    sample = [Action(kind) for kind in ActionKind if kind not in (ActionKind.ENVIDO, ActionKind.SUBE)]
    sample += [Action(ActionKind.ENVIDO, rng.randint(0, 45)), Action(ActionKind.SUBE, rng.randint(0, 45))]
    if own:
        sample.append(Action(ActionKind.DISCARD, cards=tuple(rng.sample(own, rng.randint(1, len(own))))))
    sample.append(Action(ActionKind.DISCARD, cards=(rng.choice(others),)))
    sample.append(Action(ActionKind.DISCARD, cards=()))
    return sample


def pick(legal: list[Action], rng: random.Random) -> Action:
    kinds = sorted({a.kind for a in legal})
    if ActionKind.MUS in kinds and rng.random() < 0.5:
        kind = ActionKind.MUS
    elif ActionKind.ORDAGO in kinds and len(kinds) > 1 and rng.random() < 0.9:
        kind = rng.choice([k for k in kinds if k is not ActionKind.ORDAGO])
    else:
        kind = rng.choice(kinds)
    return rng.choice([a for a in legal if a.kind is kind])


class Observer:
    """Checks a match's invariants after every step."""

    def __init__(self, match: Match) -> None:
        self.match = match
        self.own_discards: list[set[Card]] = [set(), set(), set(), set()]
        self.last_scores: list[int] | None = None
        self.hand: Hand | None = None

    def frozen(self) -> tuple[Any, ...]:
        hand = self.match.hand
        assert hand is not None
        return (
            record_of(hand).model_dump_json(),
            [self.match.view_for(s) for s in range(4)],
            dump_match(self.match),
        )

    def note_action(self, seat: int, action: Action) -> None:
        if action.kind is ActionKind.DISCARD:
            self.own_discards[seat] |= set(action.cards)

    def check(self) -> None:
        match, hand = self.match, self.match.hand
        if hand is None:
            return
        if hand is not self.hand:
            self.hand = hand
            self.own_discards = [set(), set(), set(), set()]
            self.last_scores = list(hand.start_scores)
        # Cards: never lost nor duplicated.
        every = hand.all_cards()
        assert len(every) == 40 and sorted(every) == list(FULL_DECK)
        in_hands = [c for h in hand.hands for c in h]
        assert len(set(in_hands) | set(hand.deck) | set(hand.discard_pile)) == len(
            in_hands + hand.deck + hand.discard_pile
        )
        # Scores never decrease within a hand.
        assert self.last_scores is not None
        assert all(now >= before for now, before in zip(hand.scores, self.last_scores, strict=True))
        self.last_scores = list(hand.scores)
        # The game goes to the first team at the target.
        target = hand.config.target
        if hand.over:
            if hand.winner is None:
                assert max(hand.scores) < target
                assert hand.shown
            elif hand.ordago is not None:
                assert hand.winner == hand.ordago.team
                assert max(hand.scores) < target
            else:
                assert hand.scores[hand.winner] >= target
                assert hand.scores[1 - hand.winner] < target
        else:
            assert max(hand.scores) < target
            assert hand.winner is None and hand.turn is not None
        # No view leaks, for all four seats.
        every_hand = {c for h in hand.hands for c in h}
        for seat in range(4):
            view = match.view_for(seat)
            allowed = set(hand.hands[seat]) | self.own_discards[seat] | (every_hand if hand.shown else set())
            assert cards_in(view) <= allowed, (seat, hand.phase)
            assert (view.shown is not None) == hand.shown
            if seat != hand.turn:
                assert view.legal == () and match.legal_actions(seat) == []


def play_random_match(seed: int, config: MatchConfig, *, illegal_every: int = 5) -> Match:
    rng = random.Random(seed)
    match = Match(config, first_mano=rng.randrange(4))
    observer = Observer(match)
    clock = 0.0
    steps = 0
    while not match.over:
        match.new_hand(rng)
        observer.check()
        hand = match.hand
        assert hand is not None
        while not hand.over:
            steps += 1
            assert steps < 20_000, "a match must end"
            clock += rng.choice([0.5, 1.0, 4.0])
            if steps % illegal_every == 0:
                seat = rng.randrange(4)
                for action in all_actions(hand, seat, rng):
                    if not hand.can_act(seat, action):
                        before = observer.frozen()
                        try:
                            match.act(seat, action)
                        except MusError:
                            pass
                        else:
                            raise AssertionError(f"can_act said no but act took {action} from seat {seat}")
                        assert observer.frozen() == before
            if config.senas and rng.random() < 0.3:
                seat = rng.randrange(4)
                sena = rng.choice(list(Sena))
                before = observer.frozen()
                try:
                    made = match.make_sena(seat, sena, clock)
                except MusError:
                    assert observer.frozen() == before
                else:
                    assert sena_is_true(made.sena, hand.hands[seat])
                    catcher = rng.randrange(4)
                    delay = rng.choice([0.0, 1.0, 2.9, 3.5, -0.5])
                    before = observer.frozen()
                    try:
                        match.catch_sena(catcher, made.index, clock + delay)
                    except MusError:
                        assert observer.frozen() == before
                        assert catcher % 2 == seat % 2 or not 0 <= delay <= config.catch_window
                    else:
                        assert catcher % 2 != seat % 2 and 0 <= delay <= config.catch_window
                observer.check()
            seat = hand.turn
            assert seat is not None
            action = pick(match.legal_actions(seat), rng)
            observer.note_action(seat, action)
            match.act(seat, action)
            observer.check()
    return match


@settings(max_examples=40, **SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    target=st.sampled_from([3, 10, 20, 40]),
    games=st.integers(1, 2),
    vacas=st.integers(1, 2),
    senas=st.booleans(),
)
def test_random_matches_keep_every_invariant_and_end(
    seed: int, target: int, games: int, vacas: int, senas: bool
) -> None:
    config = MatchConfig(target=target, games_per_vaca=games, vacas_per_match=vacas, senas=senas)
    match = play_random_match(seed, config)
    assert match.over
    winner = match.winner
    assert winner is not None
    assert match.vacas[winner] == vacas
    assert match.vacas[1 - winner] < vacas


@settings(max_examples=8, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), senas=st.booleans(), baseline=st.booleans())
def test_same_seed_same_match(seed: int, senas: bool, baseline: bool) -> None:
    config = MatchConfig(senas=senas, target=40 if baseline else 20)

    def players() -> list[Any]:
        if baseline:
            return [BaselinePlayer(), BaselinePlayer(), BaselinePlayer(), BaselinePlayer()]
        return [RandomPlayer(), BaselinePlayer(), RandomPlayer(), BaselinePlayer()]

    first = play_match(players(), random.Random(seed), config)
    second = play_match(players(), random.Random(seed), config)
    assert first.over and second.over
    assert dump_match(first) == dump_match(second)
    assert first.games_total == second.games_total
    assert first.hands_played == second.hands_played


# -- a state machine over one match: legal and illegal moves, señas and catches, in any order --------------


class MatchMachine(RuleBasedStateMachine):
    match: Match
    observer: Observer
    clock: float
    rng: random.Random

    @initialize(
        seed=st.integers(0, 2**32 - 1),
        goal=st.sampled_from([5, 15, 40]),
        senas=st.booleans(),
        window=st.sampled_from([1.0, 3.0]),
    )
    def start(self, seed: int, goal: int, senas: bool, window: float) -> None:
        self.rng = random.Random(seed)
        config = MatchConfig(
            target=goal, senas=senas, catch_window=window, games_per_vaca=1, vacas_per_match=2
        )
        self.match = Match(config, first_mano=seed % 4)
        self.match.new_hand(self.rng)
        self.observer = Observer(self.match)
        self.clock = 0.0

    def hand(self) -> Hand:
        assert self.match.hand is not None
        return self.match.hand

    @precondition(lambda self: not self.match.over and self.match.hand is not None and self.match.hand.over)
    @rule()
    def deal(self) -> None:
        self.match.new_hand(self.rng)

    @precondition(lambda self: self.match.hand is not None and not self.match.hand.over)
    @rule(kind_pick=st.integers(0, 10), index=st.integers(0, 10_000))
    def legal_move(self, kind_pick: int, index: int) -> None:
        seat = self.hand().turn
        assert seat is not None
        legal = self.match.legal_actions(seat)
        assert legal
        kinds = sorted({a.kind for a in legal})
        options = [a for a in legal if a.kind is kinds[kind_pick % len(kinds)]]
        action = options[index % len(options)]
        self.observer.note_action(seat, action)
        self.match.act(seat, action)

    @precondition(lambda self: self.match.hand is not None and not self.match.hand.over)
    @rule()
    def finish_hand(self) -> None:
        """Cut and pass (or refuse) to the end of the hand: reaches the states after a hand quickly."""
        hand = self.hand()
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            legal = self.match.legal_actions(seat)
            for kind in (ActionKind.NO_MUS, ActionKind.PASO, ActionKind.NO_QUIERO, ActionKind.DISCARD):
                options = [a for a in legal if a.kind is kind]
                if options:
                    break
            self.observer.note_action(seat, options[0])
            self.match.act(seat, options[0])
            self.observer.check()

    @precondition(lambda self: self.match.hand is not None)
    @rule(
        seat=st.integers(-1, 4),
        kind=st.sampled_from(list(ActionKind)),
        amount=st.integers(-1, 45),
        picks=st.lists(st.integers(0, 39), max_size=5),
    )
    def any_move(self, seat: int, kind: ActionKind, amount: int, picks: list[int]) -> None:
        action = Action(kind, amount if kind in (ActionKind.ENVIDO, ActionKind.SUBE) else 0, tuple(picks))
        if kind is not ActionKind.DISCARD:
            action = Action(kind, action.amount)
        hand = self.hand()
        allowed = hand.can_act(seat, action) if seat in range(4) else False
        if allowed:
            assert action in hand.legal_actions(seat)
            self.observer.note_action(seat, action)
            self.match.act(seat, action)
            return
        before = self.observer.frozen()
        try:
            self.match.act(seat, action)
        except MusError:
            pass
        else:
            raise AssertionError(f"an illegal action was taken: seat {seat} {action}")
        assert self.observer.frozen() == before

    @precondition(lambda self: self.match.hand is not None)
    @rule(
        seat=st.integers(0, 3),
        sena=st.sampled_from(list(Sena)),
        a_true_one=st.booleans(),
        dt=st.sampled_from([0.0, 0.5, 2.0]),
    )
    def make_sena(self, seat: int, sena: Sena, a_true_one: bool, dt: float) -> None:
        self.clock += dt
        hand = self.hand()
        options = true_senas(hand.hands[seat]) if len(hand.hands[seat]) == 4 else []
        if a_true_one and options:
            sena = options[list(Sena).index(sena) % len(options)]
        before = self.observer.frozen()
        try:
            self.match.make_sena(seat, sena, self.clock)
        except MusError:
            assert self.observer.frozen() == before
            return
        assert self.match.config.senas and not hand.over
        assert sena_is_true(sena, hand.hands[seat])
        assert sum(1 for s in hand.senas if s.seat == seat) <= 2

    @precondition(lambda self: self.match.hand is not None and bool(self.match.hand.senas))
    @rule(
        seat=st.integers(0, 3),
        a_rival=st.booleans(),
        which=st.integers(0, 20),
        dt=st.sampled_from([0.0, 0.0, 0.7, 2.5, 5.0]),
    )
    def catch(self, seat: int, a_rival: bool, which: int, dt: float) -> None:
        self.clock += dt
        hand = self.hand()
        index = which % len(hand.senas)
        if a_rival:
            seat = (hand.senas[index].seat + 1 + 2 * (seat % 2)) % 4
        before = self.observer.frozen()
        try:
            self.match.catch_sena(seat, index, self.clock)
        except MusError:
            assert self.observer.frozen() == before
            return
        made = hand.senas[index]
        assert not hand.over, "a catch was accepted after the hand ended"
        assert made.seat % 2 != seat % 2
        assert made.made_at <= self.clock <= made.made_at + self.match.config.catch_window
        assert self.match.view_for(seat).senas[index].sena is made.sena

    @invariant()
    def invariants_hold(self) -> None:
        if hasattr(self, "observer"):
            self.observer.check()


MatchMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=60,
    suppress_health_check=[HealthCheck.too_slow],
    **SETTINGS,  # type: ignore[arg-type]
)
TestMatchMachine = MatchMachine.TestCase
