"""Saving and loading: matches round-trip through JSON mid-hand, records replay, bad input is refused."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from engine.actions import MUS, NO_MUS, PASO, Action, ActionKind, discard
from engine.ai import BaselinePlayer
from engine.cards import CARD_NAMES, parse_cards
from engine.errors import MusError, RecordError
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.match import Match, MatchConfig
from engine.record import parse_record, record_of, replay
from engine.senas import Sena, true_senas
from engine.state import dump_match, load_match

MAX_JSON = 4096


def choose(legal: list[Action], rng: random.Random, mus_bias: float = 0.6) -> Action:
    """A random legal action, by kind first; mus often (discards, reshuffles), órdago seldom (long hands)."""
    kinds = sorted({a.kind for a in legal})
    if ActionKind.MUS in kinds and rng.random() < mus_bias:
        kind = ActionKind.MUS
    else:
        if len(kinds) > 1 and ActionKind.ORDAGO in kinds and rng.random() < 0.9:
            kinds.remove(ActionKind.ORDAGO)
        kind = rng.choice(kinds)
    return rng.choice([a for a in legal if a.kind is kind])


def fork_rng(rng: random.Random) -> random.Random:
    twin = random.Random()
    twin.setstate(rng.getstate())
    return twin


def assert_same_match(a: Match, b: Match) -> None:
    assert dump_match(a) == dump_match(b)
    assert (a.scores, a.games, a.vacas, a.games_total) == (b.scores, b.games, b.vacas, b.games_total)
    assert (a.next_mano, a.hands_played, a.game_number, a.winner) == (
        b.next_mano,
        b.hands_played,
        b.game_number,
        b.winner,
    )
    assert a.last_outcome == b.last_outcome
    if a.hand is None:
        assert b.hand is None
        return
    assert b.hand is not None
    for seat in range(4):
        assert a.view_for(seat) == b.view_for(seat)
        assert a.legal_actions(seat) == b.legal_actions(seat)
    ha, hb = a.hand, b.hand
    assert ha.hands == hb.hands
    assert ha.deck == hb.deck
    assert ha.discard_pile == hb.discard_pile
    assert sorted(ha.all_cards()) == sorted(hb.all_cards())
    assert (ha.phase, ha.turn, ha.scores, ha.winner) == (hb.phase, hb.turn, hb.scores, hb.winner)


def random_step(match: Match, rng: random.Random, clock: list[float]) -> None:
    """One step of random play: maybe a seña and a catch, then a legal action."""
    hand = match.hand
    assert hand is not None and not hand.over
    clock[0] += rng.choice([0.5, 1.25, 2.0])
    if match.config.senas and rng.random() < 0.35:
        seat = rng.randrange(4)
        options = true_senas(hand.hands[seat]) if len(hand.hands[seat]) == 4 else []
        if options:
            try:
                made = match.make_sena(seat, rng.choice(options), clock[0])
            except MusError:
                made = None
            if made is not None and rng.random() < 0.6:
                match.catch_sena((seat + rng.choice((1, 3))) % 4, made.index, clock[0] + 0.25)
    seat = hand.turn
    assert seat is not None
    match.act(seat, choose(match.legal_actions(seat), rng))


@pytest.mark.parametrize("seed", range(8))
def test_a_match_saved_and_loaded_at_any_point_is_the_same_match(seed: int) -> None:
    deal_rng = random.Random(seed)
    play_rng = random.Random(10_000 + seed)
    config = MatchConfig(senas=True, target=(12, 20, 40)[seed % 3], games_per_vaca=2, vacas_per_match=1)
    match = Match(config, first_mano=seed % 4)
    clock = [100.0]
    loads = 0
    while not match.over and match.hands_played < 12:
        hand = match.new_hand(deal_rng)
        while not hand.over:
            saved = dump_match(match)
            loaded = load_match(saved, fork_rng(deal_rng))
            loads += 1
            assert dump_match(loaded) == saved
            assert_same_match(match, loaded)
            # The loaded match goes on exactly like the original (same later reshuffles and deals).
            if loads % 7 == 0:
                twin_play, twin_clock = fork_rng(play_rng), list(clock)
                for _ in range(6):
                    if match.hand is None or match.hand.over:
                        break
                    random_step(match, play_rng, clock)
                    random_step(loaded, twin_play, twin_clock)
                    assert_same_match(match, loaded)
                continue
            random_step(match, play_rng, clock)
        saved = dump_match(match)
        assert_same_match(match, load_match(saved))
    assert loads > 15


@pytest.mark.parametrize("seed", range(3))
def test_a_loaded_match_plays_on_identically_to_the_end(seed: int) -> None:
    deal_rng = random.Random(seed)
    play_rng = random.Random(500 + seed)
    match = Match(MatchConfig(senas=True, target=15, games_per_vaca=1, vacas_per_match=2))
    clock = [0.0]
    match.new_hand(deal_rng)
    for _ in range(3):
        random_step(match, play_rng, clock)
        if match.hand is not None and match.hand.over:
            break
    twin_deal = fork_rng(deal_rng)
    loaded = load_match(dump_match(match), twin_deal)
    twin_play, twin_clock = fork_rng(play_rng), list(clock)
    for _ in range(3000):
        if match.over:
            break
        if match.hand is None or match.hand.over:
            match.new_hand(deal_rng)
            loaded.new_hand(twin_deal)
        random_step(match, play_rng, clock)
        random_step(loaded, twin_play, twin_clock)
        assert dump_match(match) == dump_match(loaded)
    assert match.over and loaded.over and match.winner == loaded.winner


def test_the_saved_json_is_small_mid_hand_in_realistic_play() -> None:
    rng = random.Random(42)
    player = BaselinePlayer()
    biggest = 0
    for _ in range(3):
        match = Match(MatchConfig(senas=True))
        clock = 1_712_345_678.123456  # an epoch clock, as a bot would pass
        while not match.over:
            hand = match.new_hand(rng)
            while not hand.over:
                seat = hand.turn
                assert seat is not None
                clock += 1.37
                view = match.view_for(seat)
                sena = player.choose_sena(view, rng)
                if sena is not None:
                    made = match.make_sena(seat, sena, clock)
                    for rival in ((seat + 1) % 4, (seat + 3) % 4):
                        if player.wants_catch(
                            match.view_for(rival), match.view_for(rival).senas[made.index], rng
                        ):
                            match.catch_sena(rival, made.index, clock + 0.5)
                size = len(dump_match(match).encode())
                biggest = max(biggest, size)
                assert size <= MAX_JSON
                match.act(seat, player.decide(match.view_for(seat), rng))
    assert biggest > 500


def test_the_saved_json_stays_under_4096_bytes_with_ten_mus_rounds_and_every_sena_caught() -> None:
    match = Match(MatchConfig(senas=True))
    hand = match.new_hand(random.Random(1))
    for _ in range(10):
        for seat in hand.speaking_order():
            match.act(seat, MUS)
        for seat in hand.speaking_order():
            match.act(seat, discard(hand.hands[seat]))  # four cards each: the longest words
    clock = 1_712_345_678.123456
    for seat in range(4):
        for k in range(2):
            options = true_senas(hand.hands[seat])
            if options:
                made = match.make_sena(seat, options[0], clock + k)
                for rival in ((seat + 1) % 4, (seat + 3) % 4):
                    match.catch_sena(rival, made.index, clock + k + 0.123456)
    match.act(hand.turn, NO_MUS)  # type: ignore[arg-type]
    match.act(hand.turn, PASO)  # type: ignore[arg-type]
    assert not hand.over
    saved = dump_match(match)
    assert len(saved.encode()) <= MAX_JSON
    assert dump_match(load_match(saved)) == saved


# -- hand records ------------------------------------------------------------------------------------------


def assert_same_hand(a: Hand, b: Hand) -> None:
    assert record_of(a) == record_of(b)
    for seat in range(4):
        assert a.view_for(seat) == b.view_for(seat)
        assert a.legal_actions(seat) == b.legal_actions(seat)
    assert (a.phase, a.turn, a.scores, a.winner, a.shown, a.ordago) == (
        b.phase,
        b.turn,
        b.scores,
        b.winner,
        b.shown,
        b.ordago,
    )
    assert (a.hands, a.deck, a.discard_pile, a.reshuffles) == (b.hands, b.deck, b.discard_pile, b.reshuffles)
    assert a.results == b.results and a.count_lines == b.count_lines
    assert a.points_by_lance() == b.points_by_lance()


@pytest.mark.parametrize("seed", range(25))
def test_a_hand_record_replays_to_the_same_state_at_every_step(seed: int) -> None:
    rng = random.Random(seed)
    config = HandConfig(senas=True, target=rng.choice([10, 40]), catch_window=2.5)
    hand = Hand.deal(rng, mano=seed % 4, scores=(rng.randrange(9), rng.randrange(9)), config=config)
    clock = [0.0]
    while True:
        record = record_of(hand)
        assert_same_hand(hand, replay(record))
        # Through JSON too, as the conformance tools read it.
        assert_same_hand(hand, replay(parse_record(json.loads(record.model_dump_json()))))
        if hand.over:
            break
        clock[0] += 1.0
        if rng.random() < 0.3:
            seat = rng.randrange(4)
            options = true_senas(hand.hands[seat]) if len(hand.hands[seat]) == 4 else []
            if options and hand.view_for(seat).senas_left:
                made = hand.make_sena(seat, rng.choice(options), clock[0])
                hand.catch_sena((seat + 1) % 4, made.index, clock[0] + 1.0)
        hand.act(hand.turn, choose(hand.legal_actions(hand.turn), rng, 0.8))  # type: ignore[arg-type]


def test_a_record_with_a_reshuffle_replays_without_an_rng() -> None:
    rng = random.Random(3)
    hand = Hand.deal(rng, mano=1)
    while not hand.reshuffles:
        seat = hand.turn
        assert seat is not None
        hand.act(seat, MUS if hand.phase is Phase.MUS else discard(hand.hands[seat][: rng.randint(1, 4)]))
    again = replay(record_of(hand))
    assert_same_hand(hand, again)
    assert again.reshuffles == hand.reshuffles


# -- malformed and tampered input --------------------------------------------------------------------------


def saved_mid_hand(*, senas: bool = True) -> tuple[dict[str, Any], Match]:
    match = Match(MatchConfig(senas=senas), first_mano=0)
    hand = match.new_hand(random.Random(9))
    for seat in range(4):
        match.act(seat, MUS)
    for seat in range(4):
        match.act(seat, discard(hand.hands[seat][:1]))
    return json.loads(dump_match(match)), match


@pytest.mark.parametrize(
    "text",
    ["", "not json", "{", "[]", "null", "42", "{}", '{"schema_version": 1}', "\x00\x01"],
)
def test_malformed_json_is_a_record_error(text: str) -> None:
    with pytest.raises(RecordError):
        load_match(text)


def test_a_truncated_save_is_a_record_error() -> None:
    _, match = saved_mid_hand()
    saved = dump_match(match)
    for cut in (1, len(saved) // 3, len(saved) // 2, len(saved) - 1):
        with pytest.raises(RecordError):
            load_match(saved[:cut])


def _tamper(data: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _insert_action(data: dict[str, Any], index: int, entry: list[Any]) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    data["hand"]["actions"].insert(index, entry)
    return data


def _false_sena(names: list[str]) -> str:
    held = set(true_senas(parse_cards(names)))
    return next(s.value for s in Sena if s not in held)


TAMPERED = {
    "schema version 0": lambda d: _tamper(d, ["schema_version"], 0),
    "schema version not a number": lambda d: _tamper(d, ["schema_version"], "two"),
    "target 0": lambda d: _tamper(d, ["target"], 0),
    "mano 7": lambda d: _tamper(d, ["hand", "mano"], 7),
    "next mano 4": lambda d: _tamper(d, ["next_mano"], 4),
    "three cards": lambda d: _tamper(d, ["hand", "hands", "0"], d["hand"]["hands"]["0"][:3]),
    "bad card": lambda d: _tamper(d, ["hand", "hands", "1"], ["13o", *d["hand"]["hands"]["1"][1:]]),
    "repeated card": lambda d: _tamper(
        d, ["hand", "hands", "1"], [d["hand"]["hands"]["0"][0], *d["hand"]["hands"]["1"][1:]]
    ),
    "seat 5 in hands": lambda d: _tamper(d, ["hand", "hands", "5"], ["1o", "1c", "1e", "1b"]),
    "wrong seat first": lambda d: _insert_action(d, 0, [1, "mus"]),
    "betting word in the mus round": lambda d: _insert_action(d, 0, [0, "envido 2"]),
    "unknown word": lambda d: _insert_action(d, 0, [0, "bailar"]),
    "seat 9": lambda d: _insert_action(d, 0, [9, "mus"]),
    "discard of a card not held": lambda d: _tamper(
        d, ["hand", "actions", 4], [0, f"discard {d['hand']['hands']['1'][0]}"]
    ),
    "wrong seat after the discards": lambda d: _insert_action(d, 8, [2, "no_mus"]),
    "false seña": lambda d: _insert_action(d, 0, [0, f"sena {_false_sena(d['hand']['hands']['0'])}", 1.0]),
    "unknown seña": lambda d: _insert_action(d, 0, [0, "sena cuatro_reyes", 1.0]),
    "catch of nothing": lambda d: _insert_action(d, 0, [1, "catch 0", 1.0]),
    "entry not a list": lambda d: _insert_action(d, 0, "mus"),  # type: ignore[arg-type]
    "entry seat not an int": lambda d: _insert_action(d, 0, ["zero", "mus"]),
}


@pytest.mark.parametrize("name", list(TAMPERED))
def test_a_tampered_save_is_a_record_error(name: str) -> None:
    data, _ = saved_mid_hand()
    with pytest.raises(RecordError):
        load_match(json.dumps(TAMPERED[name](data)))


def second_hand_under_way(seed: int = 4) -> Match:
    """A match whose first hand is over (a last outcome saved) and whose second is a few moves in."""
    deal_rng, play_rng, clock = random.Random(seed), random.Random(seed + 1), [0.0]
    match = Match(MatchConfig(senas=True), first_mano=0)
    for moves in (1000, 3):
        hand = match.new_hand(deal_rng)
        for _ in range(moves):
            if hand.over:
                break
            random_step(match, play_rng, clock)
    assert match.last_outcome is not None and match.hand is not None and not match.hand.over
    return match


def test_a_save_of_a_newer_engine_is_read_as_far_as_understood() -> None:
    """A rolling upgrade: a newer engine saved this (a newer schema; fields this one does not know in the
    match, its hand and its last outcome); this one reads it to the same match, which plays on."""
    match = second_hand_under_way()
    data = json.loads(dump_match(match))
    data |= {"schema_version": 2, "surprise": {"new": [1, 2]}}
    data["hand"]["new_in_hand"] = True
    data["last_outcome"]["new_in_outcome"] = 3
    loaded = load_match(json.dumps(data))
    assert_same_match(match, loaded)  # (and saved again in this engine's schema, without the newer fields)
    random_step(match, random.Random(7), [50.0])
    random_step(loaded, random.Random(7), [50.0])
    assert_same_match(match, loaded)


def test_a_save_without_the_fields_a_newer_engine_added_takes_their_defaults() -> None:
    """The other way round: an older engine (schema 1, before ``big_bets`` and ``answers`` existed) saved
    the first hand; this one reads it with their defaults."""
    match = Match(MatchConfig(), first_mano=0)
    match.new_hand(random.Random(3))
    data = json.loads(dump_match(match))
    assert data["big_bets"] == [0, 0] and data["answers"] == []  # (nothing bet yet: the defaults hold)
    for added in ("big_bets", "answers", "last_outcome", "winner", "schema_version"):
        del data[added]
    assert_same_match(match, load_match(json.dumps(data)))


def test_a_tampered_reshuffle_is_a_record_error() -> None:
    match = Match()
    hand = match.new_hand(random.Random(8))
    while not hand.reshuffles:
        seat = hand.turn
        assert seat is not None
        match.act(seat, MUS if hand.phase is Phase.MUS else discard(hand.hands[seat]))
    data = json.loads(dump_match(match))
    assert load_match(json.dumps(data)) is not None
    deck = data["hand"]["reshuffles"][0]
    foreign = next(c for c in CARD_NAMES if c not in deck)
    data["hand"]["reshuffles"][0] = [foreign, *deck[1:]]
    with pytest.raises(RecordError):
        load_match(json.dumps(data))


def test_a_reshuffle_that_never_happened_is_refused_or_kept() -> None:
    """A save carrying a reshuffled deck its actions never used is inconsistent: refuse it, or keep it."""
    data, _ = saved_mid_hand()
    assert data["hand"]["reshuffles"] == []
    data["hand"]["reshuffles"] = [["1o", "1c"]]
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    try:
        loaded = load_match(text)
    except RecordError:
        return
    assert dump_match(loaded) == text, "the unused reshuffle was silently dropped"


def test_an_action_after_the_end_of_the_hand_is_a_record_error() -> None:
    match = Match()
    hand = match.new_hand(random.Random(4))
    match.act(hand.mano, NO_MUS)
    while not hand.over:
        match.act(hand.turn, PASO)  # type: ignore[arg-type]
    data = json.loads(dump_match(match))
    data["hand"]["actions"].append([hand.mano, "paso"])
    with pytest.raises(RecordError):
        load_match(json.dumps(data))


def test_a_third_sena_in_a_record_is_a_record_error() -> None:
    match = Match(MatchConfig(senas=True))
    hand = match.new_hand(random.Random(2))
    seat = next(s for s in range(4) if true_senas(hand.hands[s]))
    sena = true_senas(hand.hands[seat])[0]
    match.make_sena(seat, sena, 1.0)
    match.make_sena(seat, sena, 2.0)
    data = json.loads(dump_match(match))
    assert load_match(json.dumps(data)) is not None
    data["hand"]["actions"].append([seat, f"sena {sena.value}", 3.0])
    with pytest.raises(RecordError):
        load_match(json.dumps(data))


def test_a_save_whose_deck_is_short_is_a_record_error() -> None:
    """A deck cut down to 3 cards: the replay runs out of cards for the lone waiter (seat 3)."""
    match = Match()
    hand = match.new_hand(random.Random(6))
    data = json.loads(dump_match(match))
    h = data["hand"]
    h["deck"] = h["deck"][:3]
    h["actions"] = [[s, "mus"] for s in range(4)] + [
        [s, "discard " + " ".join(h["hands"][str(s)][:n])]
        for s, n in zip(range(4), (1, 1, 1, 4), strict=True)
    ]
    assert hand.mano == 0
    with pytest.raises(RecordError):
        load_match(json.dumps(data))


@pytest.mark.parametrize(
    "change",
    [
        {"scores": [10, 0]},  # the hand started at 0-0
        {"next_mano": 1},  # the hand in progress has mano 0
        {"winner": 7},
        {"hand_target": 10},  # the table plays to 40
    ],
    ids=str,
)
def test_a_save_whose_hand_does_not_continue_its_match_is_a_record_error(change: dict[str, Any]) -> None:
    data, _ = saved_mid_hand()
    assert data["hand"]["mano"] == 0 and data["scores"] == [0, 0]
    for key, value in change.items():
        if key == "hand_target":
            data["hand"]["target"] = value
        else:
            data[key] = value
    with pytest.raises(RecordError):
        load_match(json.dumps(data))


@pytest.mark.parametrize("when", [math.nan, math.inf, -math.inf])
def test_a_sena_time_the_engine_accepts_survives_a_save(when: float) -> None:
    match = Match(MatchConfig(senas=True))
    hand = match.new_hand(random.Random(2))
    seat = next(s for s in range(4) if true_senas(hand.hands[s]))
    try:
        match.make_sena(seat, true_senas(hand.hands[seat])[0], when)
    except (MusError, ValueError):
        return  # refusing a time that is not a number is fine
    saved = dump_match(match)
    assert dump_match(load_match(saved)) == saved
