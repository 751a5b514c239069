"""The strong machine player: always legal, deterministic, blind to hidden cards, true señas, sensible."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from engine.actions import MUS, NO_MUS, NO_QUIERO, ORDAGO, QUIERO, Action, ActionKind, envido
from engine.ai import LEVELS, BaselinePlayer, RandomPlayer, StrongPlayer, make_policy
from engine.ai.policy import POLICIES, Policy
from engine.ai.sampling import ERRATIC_HISTORY, Beliefs, erratic_rivals, unseen_ranks
from engine.ai.tables import P5, SENA_CODES, TEAM_WIN, erratic_value, game_value
from engine.cards import CARD_RANK, FULL_DECK, Card, parse_cards
from engine.evaluation import Lance, evaluate, hand_code
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.match import Match, MatchConfig
from engine.senas import Sena, sena_is_true
from engine.views import SeatView

LEVEL_NAMES = ("easy", "normal", "hard")


def explicit(
    deal: list[str], *, mano: int = 0, scores: tuple[int, int] = (0, 0), senas: bool = False
) -> Hand:
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    return Hand(mano=mano, hands=hands, deck=deck, scores=scores, config=HandConfig(senas=senas))


def quick(name: str) -> StrongPlayer:
    """The level's player with few samples: the same code paths, faster (for the bulk legality test)."""
    return StrongPlayer(dataclasses.replace(LEVELS[name], samples=12))


def driver_action(legal: tuple[Action, ...] | list[Action], rng: random.Random) -> Action:
    """A random legal action, by kind first, so that mus rounds, discards, bets and órdagos all happen."""
    kinds = sorted({a.kind for a in legal}, key=lambda k: k.value)
    kind = rng.choice(kinds)
    if kind is ActionKind.MUS and rng.random() < 0.3:
        kind = ActionKind.MUS
    options = [a for a in legal if a.kind is kind]
    if kind in (ActionKind.ENVIDO, ActionKind.SUBE):
        options = options[:6]
    return rng.choice(options)


def situations(seed: int, count: int) -> Iterator[tuple[Match, SeatView]]:
    """Views of the seat on turn over random matches: every phase, señas on and off, varied targets."""
    rng = random.Random(seed)
    movers: list[Policy] = [RandomPlayer(), BaselinePlayer(), quick("hard")]
    produced = 0
    clock = 0.0
    table = 0
    while produced < count:
        config = MatchConfig(
            target=(40, 20, 12, 40)[table % 4],
            senas=table % 2 == 0,
            max_bet=(0, 0, 0, 9)[table % 4],
            games_per_vaca=1,
            vacas_per_match=1,
        )
        table += 1
        match = Match(config, first_mano=rng.randrange(4))
        while not match.over and produced < count:
            hand = match.new_hand(rng)
            mover = movers[rng.randrange(len(movers))]
            while not hand.over and produced < count:
                seat = hand.turn
                assert seat is not None
                view = match.view_for(seat)
                yield match, view
                produced += 1
                clock += 1.0
                sena = mover.choose_sena(view, rng)
                if sena is not None:
                    made = match.make_sena(seat, sena, clock)
                    for rival in ((seat + 1) % 4, (seat + 3) % 4):
                        if rng.random() < 0.5:
                            match.catch_sena(rival, made.index, clock + 0.5)
                    view = match.view_for(seat)
                action = driver_action(view.legal, rng) if rng.random() < 0.5 else mover.decide(view, rng)
                match.act(seat, action)


# --- registry and levels ---------------------------------------------------------------------------------


def test_levels_are_registered_by_name() -> None:
    for name in LEVEL_NAMES:
        player = make_policy(name)
        assert player.name == name
        assert isinstance(player, StrongPlayer)
        assert name in POLICIES
    assert LEVELS["easy"].samples < LEVELS["normal"].samples < LEVELS["hard"].samples
    assert not LEVELS["easy"].evidence and LEVELS["hard"].evidence


# --- never an illegal action -----------------------------------------------------------------------------


def test_every_level_always_chooses_a_legal_action_and_true_senas_in_every_phase() -> None:
    players = [quick(name) for name in LEVEL_NAMES]
    full = [make_policy(name) for name in LEVEL_NAMES]
    ask = random.Random(99)
    phases: Counter[Phase] = Counter()
    senas = 0
    for i, (match, view) in enumerate(situations(seed=1, count=2500)):
        hand = match.hand
        assert hand is not None
        phases[view.phase] += 1
        chosen = players if i % 4 else players + full
        for player in chosen:
            action = player.decide(view, ask)
            assert action in view.legal, (player.name, action, view.phase)
            assert hand.can_act(view.seat, action)
            sena = player.choose_sena(view, ask)
            if sena is not None:
                senas += 1
                assert sena_is_true(sena, hand.hands[view.seat])
                hand.check_sena(view.seat, sena)
    assert set(phases) == {
        Phase.MUS,
        Phase.DISCARD,
        Phase.GRANDE,
        Phase.CHICA,
        Phase.PARES,
        Phase.JUEGO,
        Phase.PUNTO,
    }, phases
    assert senas > 50


def test_players_refuse_to_decide_for_a_seat_that_cannot_act() -> None:
    hand = explicit(["12o 11o 10o 1o", "1c 4c 5c 6c", "1e 4e 5e 6e", "1b 4b 5b 6b"])
    view = hand.view_for(1)
    for name in LEVEL_NAMES:
        with pytest.raises(ValueError):
            make_policy(name).decide(view, random.Random(0))


# --- determinism -----------------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_decisions() -> None:
    views = [view for _, view in situations(seed=2, count=150)]
    for name in LEVEL_NAMES:
        first = [make_policy(name).decide(v, random.Random(i)) for i, v in enumerate(views)]
        second = [make_policy(name).decide(v, random.Random(i)) for i, v in enumerate(views)]
        assert first == second, name
        catches = [make_policy(name).choose_sena(v, random.Random(i)) for i, v in enumerate(views)]
        assert catches == [make_policy(name).choose_sena(v, random.Random(i)) for i, v in enumerate(views)]


# --- no hidden information -------------------------------------------------------------------------------


def _flags(cards: list[Card]) -> tuple[bool, bool]:
    ev = evaluate(cards)
    return ev.has_pares, ev.has_juego


def _redeal(hand: Hand, seat: int, rng: random.Random) -> Hand:
    """The same hand with every other seat's cards redealt, keeping each seat's pares/juego flags."""
    hands = [list(h) for h in hand.initial_hands]
    mine = hands[seat]
    others = [s for s in range(4) if s != seat]
    for _ in range(10_000):
        pool = [c for c in FULL_DECK if c not in mine]
        rng.shuffle(pool)
        new = {s: pool[4 * i : 4 * i + 4] for i, s in enumerate(others)}
        if all(_flags(new[s]) == _flags(hands[s]) for s in others):
            break
    else:  # pragma: no cover - the flags are common enough
        raise AssertionError("no consistent redeal found")
    for s in others:
        hands[s] = new[s]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    rng.shuffle(deck)
    return Hand(mano=hand.mano, hands=hands, deck=deck, scores=hand.start_scores, config=hand.config)


def _hidden_info_cases(seed: int, count: int) -> Iterator[tuple[Hand, int]]:
    """Hands cut in the first mus round (no discards), stopped at a random point: (hand, actions played)."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        scores = (rng.randrange(40), rng.randrange(40))
        hand = Hand.deal(rng, mano=rng.randrange(4), scores=scores)
        stop = rng.randrange(1, 14)
        steps = 0
        while not hand.over and steps < stop:
            seat = hand.turn
            assert seat is not None
            legal = hand.legal_actions(seat)
            if hand.phase is Phase.MUS:
                action = (
                    NO_MUS
                    if hand.mus_round == 0 and (rng.random() < 0.4 or seat == (hand.mano + 3) % 4)
                    else MUS
                )
            else:
                action = driver_action(legal, rng)
            hand.act(seat, action)
            steps += 1
        if not hand.over:
            yield hand, len(hand.log)
            made += 1


def test_decisions_do_not_depend_on_the_other_seats_hidden_cards() -> None:
    rng = random.Random(3)
    players = {name: make_policy(name) for name in LEVEL_NAMES}
    checked = 0
    for hand, played in _hidden_info_cases(seed=4, count=120):
        seat = hand.turn
        assert seat is not None
        view = hand.view_for(seat)
        other = _redeal(hand, seat, rng)
        for record in hand.log[:played]:
            other.act(record.seat, record.action)
        assert [other.hands[s] for s in range(4) if s != seat] != [
            hand.hands[s] for s in range(4) if s != seat
        ]
        twin = other.view_for(seat)
        assert twin == view  # same public information: the redeal is consistent with the view
        for name, player in players.items():
            for k in range(2):
                assert player.decide(view, random.Random(k)) == player.decide(twin, random.Random(k)), name
                assert player.choose_sena(view, random.Random(k)) == player.choose_sena(
                    twin, random.Random(k)
                )
        checked += 1
    assert checked == 120


# --- señas -----------------------------------------------------------------------------------------------


def test_senas_made_are_always_true_and_accepted_by_the_hand() -> None:
    rng = random.Random(5)
    player = make_policy("hard")
    mover = quick("hard")
    made = 0
    for _ in range(80):
        hand = Hand.deal(rng, mano=rng.randrange(4), config=HandConfig(senas=True))
        while not hand.over:
            seat = hand.turn
            assert seat is not None
            view = hand.view_for(seat)
            sena = player.choose_sena(view, rng)
            if sena is not None:
                assert sena_is_true(sena, hand.hands[seat])
                hand.make_sena(seat, sena, float(made))
                made += 1
            hand.act(seat, mover.decide(hand.view_for(seat), rng))
    assert made > 30


def test_the_seña_tables_agree_with_the_engine() -> None:
    rng = random.Random(6)
    for _ in range(2000):
        cards = rng.sample(FULL_DECK, 4)
        code = hand_code(cards)
        assert sum(P5[CARD_RANK[c]] for c in cards) == code
        for sena in Sena:
            assert (code in SENA_CODES[sena]) == sena_is_true(sena, cards)


def test_rivals_senas_are_caught_and_own_side_senas_are_not() -> None:
    hand = explicit(["12o 12c 1o 4c", "1c 4e 5c 6c", "1e 4b 5e 6e", "1b 4o 5b 6b"], senas=True)
    hand.act(0, NO_MUS)
    hand.make_sena(1, Sena.CIEGO, 1.0)
    rival_view = hand.view_for(0)
    partner_view = hand.view_for(3)
    hard = make_policy("hard")
    assert hard.wants_catch(rival_view, rival_view.senas[0], random.Random(0))
    assert not hard.wants_catch(partner_view, partner_view.senas[0], random.Random(0))


# --- what the samples respect ----------------------------------------------------------------------------


def test_samples_respect_declarations_senas_and_own_cards() -> None:
    hand = explicit(["12o 12c 3o 1c", "1b 4e 5c 6c", "11e 11b 7e 6e", "10b 10o 5b 6b"], senas=True)
    hand.act(0, NO_MUS)
    for _ in range(4):  # grande and chica en paso: the pares declarations are public now
        hand.act(hand.turn, Action(ActionKind.PASO))  # type: ignore[arg-type]
    for _ in range(4):
        hand.act(hand.turn, Action(ActionKind.PASO))  # type: ignore[arg-type]
    assert hand.phase is Phase.PARES
    view = hand.view_for(0)
    assert view.pares_declared == (True, False, True, True)
    beliefs = Beliefs(view)
    samples, weights = beliefs.sample(random.Random(1), 400)
    unseen = unseen_ranks(view)
    assert sum(unseen) == 36
    for codes, weight in zip(samples, weights, strict=True):
        assert codes[0] == hand_code(view.cards)
        assert weight > 0
        for seat, declared in enumerate(view.pares_declared):
            assert (evaluate_code_pares(codes[seat])) == declared
        # never more cards of a rank than this seat has not seen
        counts = [sum((c // P5[r]) % 5 for c in codes[1:]) for r in range(8)]
        assert all(counts[r] <= unseen[r] for r in range(8))


def evaluate_code_pares(code: int) -> bool:
    from engine.evaluation import TABLE

    return TABLE[code].has_pares


def test_a_partners_sena_is_a_hard_constraint() -> None:
    hand = explicit(["4o 5c 6o 7c", "1b 4e 5e 6c", "12e 12b 7e 6e", "10b 11o 5b 6b"], senas=True)
    hand.make_sena(2, Sena.DOS_REYES, 1.0)
    hand.act(0, NO_MUS)
    view = hand.view_for(0)
    samples, _ = Beliefs(view).sample(random.Random(2), 300)
    assert all(codes[2] in SENA_CODES[Sena.DOS_REYES] for codes in samples)
    # a rival who did not catch it sees nothing of it
    rival = hand.view_for(1)
    assert rival.senas[0].sena is None
    assert not Beliefs(rival).allowed


# --- sensible play ---------------------------------------------------------------------------------------


def test_tables_order_hands_sensibly() -> None:
    code = hand_code
    four_reyes = code(parse_cards(["12o", "12c", "3o", "3c"]))
    poor = code(parse_cards(["4o", "6c", "7e", "11b"]))
    assert TEAM_WIN[Lance.GRANDE][four_reyes] > 0.99 > TEAM_WIN[Lance.GRANDE][poor]
    assert TEAM_WIN[Lance.CHICA][code(parse_cards(["1o", "1c", "2o", "2c"]))] > 0.99
    values = game_value(40)
    assert values[0][0] == pytest.approx(0.5, abs=1e-9)
    assert values[39][0] > 0.95 and values[0][39] < 0.05
    assert all(values[a][10] <= values[a + 1][10] for a in range(39))


@pytest.mark.parametrize("name", LEVEL_NAMES)
def test_strong_hands_cut_the_mus_and_weak_hands_ask_for_it(name: str) -> None:
    player = make_policy(name)
    cuts: Counter[str] = Counter()
    for cards in ("12o 12c 3o 3c", "12o 11o 10o 2o", "4o 6c 7e 11b", "4o 5o 6c 7b"):
        deal = [cards, "2e 2b 10e 10b", "1e 4e 5e 6e", "1b 4b 5b 6b"]
        for i in range(40):
            action = player.decide(explicit(deal).view_for(0), random.Random(i))
            cuts[cards] += action == NO_MUS
    sure, often = (30, 24) if name == "easy" else (36, 30)
    assert cuts["12o 12c 3o 3c"] >= sure and cuts["12o 11o 10o 2o"] >= often
    assert cuts["4o 6c 7e 11b"] <= 12 and cuts["4o 5o 6c 7b"] <= 12


def test_discards_keep_the_reyes() -> None:
    hand = explicit(["12o 3c 5o 6b", "1c 4c 5c 6c", "1e 4e 5e 6e", "1b 4b 5b 7b"])
    for _ in range(4):
        hand.act(hand.turn, MUS)  # type: ignore[arg-type]
    assert hand.phase is Phase.DISCARD
    view = hand.view_for(0)
    action = make_policy("hard").decide(view, random.Random(0))
    assert action.kind is ActionKind.DISCARD
    assert set(action.cards) <= set(parse_cards(["5o", "6b"]))


@pytest.mark.parametrize("name", ["normal", "hard"])
def test_orders_are_accepted_with_a_sure_hand_and_refused_with_a_poor_one(name: str) -> None:
    player = make_policy(name)
    sure = ["4o 6c 7e 11b", "12o 12c 3o 3c", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    poor = ["12o 12c 3o 3c", "4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    for i in range(20):
        hand = explicit(sure, mano=1)
        hand.act(1, NO_MUS)
        hand.act(1, Action(ActionKind.PASO))
        hand.act(2, ORDAGO)
        assert player.decide(hand.view_for(3), random.Random(i)) in (QUIERO, NO_QUIERO)
        hand = explicit(sure)
        hand.act(0, NO_MUS)
        hand.act(0, ORDAGO)
        assert player.decide(hand.view_for(1), random.Random(i)) == QUIERO
        hand = explicit(poor)
        hand.act(0, NO_MUS)
        hand.act(0, ORDAGO)
        assert player.decide(hand.view_for(1), random.Random(i)) == NO_QUIERO


def test_hard_bets_or_raises_with_four_reyes_in_grande() -> None:
    deal = ["4o 6c 7e 11b", "12o 12c 3o 3c", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    player = make_policy("hard")
    for i in range(10):
        hand = explicit(deal)
        hand.act(0, NO_MUS)
        hand.act(0, envido(2))
        action = player.decide(hand.view_for(1), random.Random(i))
        assert action.kind in (ActionKind.QUIERO, ActionKind.SUBE, ActionKind.ORDAGO)


def test_score_aware_play_closes_a_game_with_an_ordago_when_behind_and_the_rivals_are_about_to_win() -> None:
    # The rivals need one stone; with the best grande in the table the hard player goes for it.
    deal = ["12o 12c 3o 11c", "4o 6c 7e 11b", "1e 4e 5e 6e", "1b 4b 5b 6b"]
    hand = explicit(deal, scores=(10, 39))
    hand.act(0, NO_MUS)
    action = make_policy("hard").decide(hand.view_for(0), random.Random(1))
    assert action.kind in (ActionKind.ORDAGO, ActionKind.ENVIDO)


# --- reading erratic rivals ------------------------------------------------------------------------------


def test_rivals_with_big_bets_in_earlier_hands_are_read_as_erratic_from_their_first_word() -> None:
    hand = explicit(["4o 6c 7e 11b", "12o 12c 3o 3c", "1e 4e 5e 6e", "1b 4b 5b 6b"])
    hand.act(0, NO_MUS)
    view = hand.view_for(0)
    assert not erratic_rivals(view)
    assert erratic_rivals(dataclasses.replace(view, big_bets=(0, ERRATIC_HISTORY)))
    assert not erratic_rivals(dataclasses.replace(view, big_bets=(0, ERRATIC_HISTORY - 1)))
    assert not erratic_rivals(dataclasses.replace(view, big_bets=(ERRATIC_HISTORY, 0)))  # our own side's


def test_against_a_record_of_big_bets_the_hard_player_goes_all_in_instead_of_raising() -> None:
    # Two reyes and two treses behind by four: against sensible rivals a raise makes them fold; erratic
    # rivals re-raise anything, so the hard player goes all in at once instead of starting a raise war.
    deal = ["5c 2c 5b 2o", "12e 10o 12c 3e", "11e 1o 4o 10c", "11c 5o 4e 10b"]
    player = make_policy("hard")
    for i in range(5):
        hand = explicit(deal, scores=(26, 22))
        hand.act(0, NO_MUS)
        hand.act(0, envido(5))
        view = hand.view_for(1)
        assert player.decide(view, random.Random(i)).kind is ActionKind.SUBE
        wild = dataclasses.replace(view, big_bets=(3, 0))
        assert player.decide(wild, random.Random(i)).kind is ActionKind.ORDAGO


def test_the_erratic_game_value_is_monotone_in_both_scores() -> None:
    value = erratic_value(40)
    for a in range(40):
        for b in range(40):
            assert value[a + 1][b] >= value[a][b] and value[a][b + 1] <= value[a][b], (a, b)
    assert value[0][0] > 0.9 and value[39][0] > value[0][0] > value[0][39]
