"""Card notation, the 8-reyes equivalences and card values (RULES.md, "Cards and seats")."""

from __future__ import annotations

import re

import pytest

from engine.actions import ActionKind, parse_action
from engine.cards import (
    DECK_SIZE,
    FULL_DECK,
    card_name,
    card_names,
    card_value,
    effective_rank,
    parse_card,
    parse_cards,
    printed_rank,
    suit_of,
)
from engine.errors import ActionSyntaxError, CardError, MusError

ALL_NAMES = [f"{rank}{suit}" for suit in "oceb" for rank in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)]


def test_the_deck_has_forty_distinct_cards() -> None:
    assert DECK_SIZE == 40
    assert len(FULL_DECK) == 40
    assert len(set(FULL_DECK)) == 40
    assert sorted(card_name(c) for c in FULL_DECK) == sorted(ALL_NAMES)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_card_round_trips_through_the_notation(name: str) -> None:
    card = parse_card(name)
    assert card in FULL_DECK
    assert card_name(card) == name
    assert parse_card(card_name(card)) == card
    assert f"{printed_rank(card)}{suit_of(card)}" == name


def test_formatting_all_forty_cards_and_parsing_back_is_the_identity() -> None:
    names = card_names(list(FULL_DECK))
    assert all(re.fullmatch(r"(1|2|3|4|5|6|7|10|11|12)[oceb]", n) for n in names)
    assert parse_cards(names) == list(FULL_DECK)


def test_ten_cards_per_suit_and_four_per_printed_rank() -> None:
    for suit in "oceb":
        assert sum(1 for c in FULL_DECK if suit_of(c) == suit) == 10
    for rank in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12):
        assert sum(1 for c in FULL_DECK if printed_rank(c) == rank) == 4


@pytest.mark.parametrize("bad", ["13o", "8c", "0b", "12x", "", "12", "9o", "o12", "1", "12oo", "-1o", "3 c"])
def test_a_string_that_is_not_a_card_raises_card_error(bad: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(bad)
    message = str(info.value)
    assert repr(bad) in message, "the message names the bad input"
    assert "not a card" in message
    # The message says what a card looks like.
    assert "12" in message and "o" in message and "b" in message


@pytest.mark.parametrize("bad", [None, 12, 12.0, b"12o", ["12o"], ("12", "o")])
def test_a_non_string_raises_card_error_not_a_crash(bad: object) -> None:
    with pytest.raises(CardError) as info:
        parse_card(bad)  # type: ignore[arg-type]
    assert "not a card" in str(info.value)


def test_card_error_is_a_domain_error_and_a_value_error() -> None:
    with pytest.raises(MusError):
        parse_card("13o")
    with pytest.raises(ValueError):
        parse_card("13o")


def test_parse_cards_rejects_a_repeated_card() -> None:
    with pytest.raises(CardError) as info:
        parse_cards(["12o", "3c", "12o"])
    assert "twice" in str(info.value)
    assert "12o" in str(info.value)


def test_parse_cards_rejects_a_bad_card_among_good_ones() -> None:
    with pytest.raises(CardError) as info:
        parse_cards(["12o", "8c", "1e"])
    assert "'8c'" in str(info.value)


def test_parse_cards_keeps_the_order() -> None:
    assert card_names(parse_cards(["3c", "12o", "1e", "10b"])) == ["3c", "12o", "1e", "10b"]
    assert parse_cards([]) == []


# -- 8 reyes: effective ranks ------------------------------------------------------------------------------

ORDER_HIGH_TO_LOW = [("12", "3"), ("11",), ("10",), ("7",), ("6",), ("5",), ("4",), ("1", "2")]


@pytest.mark.parametrize("suit", "oceb")
def test_effective_ranks_follow_the_8_reyes_order(suit: str) -> None:
    ranks = [[effective_rank(parse_card(p + suit)) for p in group] for group in ORDER_HIGH_TO_LOW]
    for group in ranks:
        assert len(set(group)) == 1, "cards of one group rank the same"
    heads = [group[0] for group in ranks]
    assert heads == sorted(heads, reverse=True)
    assert len(set(heads)) == 8


def test_three_is_a_rey_and_two_is_an_as_across_suits() -> None:
    rey = effective_rank(parse_card("12o"))
    as_ = effective_rank(parse_card("1o"))
    for suit in "oceb":
        assert effective_rank(parse_card(f"3{suit}")) == rey
        assert effective_rank(parse_card(f"12{suit}")) == rey
        assert effective_rank(parse_card(f"2{suit}")) == as_
        assert effective_rank(parse_card(f"1{suit}")) == as_
    assert sum(1 for c in FULL_DECK if effective_rank(c) == rey) == 8
    assert sum(1 for c in FULL_DECK if effective_rank(c) == as_) == 8
    # The 3 is above the caballo, the 2 below the 4.
    assert effective_rank(parse_card("3e")) > effective_rank(parse_card("11e"))
    assert effective_rank(parse_card("2e")) < effective_rank(parse_card("4e"))


@pytest.mark.parametrize(
    ("rank", "value"),
    [
        ("12", 10),
        ("11", 10),
        ("10", 10),
        ("3", 10),
        ("7", 7),
        ("6", 6),
        ("5", 5),
        ("4", 4),
        ("2", 1),
        ("1", 1),
    ],
)
def test_card_values_for_juego_and_punto(rank: str, value: int) -> None:
    for suit in "oceb":
        assert card_value(parse_card(rank + suit)) == value


def test_the_deck_adds_up() -> None:
    # 4 * (10+10+10+10 + 7+6+5+4 + 1+1) = 256
    assert sum(card_value(c) for c in FULL_DECK) == 256


# -- action words that carry cards -------------------------------------------------------------------------


def test_a_discard_word_parses_its_cards() -> None:
    action = parse_action("discard 12o 3c")
    assert action.kind is ActionKind.DISCARD
    assert action.cards == (parse_card("12o"), parse_card("3c"))
    assert action.word == "discard 12o 3c"


@pytest.mark.parametrize("word", ["discard 13o", "discard 12o 12o", "discard 8c 1o"])
def test_a_discard_word_with_a_bad_card_is_a_syntax_error(word: str) -> None:
    with pytest.raises(ActionSyntaxError):
        parse_action(word)
