"""Hand evaluation: the 330-entry table, each lance's order, ties to the mano, and a brute-force cross-check
of the table against a slow reimplementation written from RULES.md."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations, combinations_with_replacement

import pytest

from engine.cards import FULL_DECK, Card, card_name, parse_cards
from engine.evaluation import TABLE, Lance, ParesKind, compare, evaluate

# -- a slow, independent reading of RULES.md ---------------------------------------------------------------

# Effective ranks, low to high, and the printed cards of each (8 reyes: the 3 is a rey, the 2 an as).
REF_ORDER = ["A", "4", "5", "6", "7", "S", "C", "R"]
REF_VALUE = {"A": 1, "4": 4, "5": 5, "6": 6, "7": 7, "S": 10, "C": 10, "R": 10}
REF_PRINTED = {
    "A": ["1", "2"],
    "4": ["4"],
    "5": ["5"],
    "6": ["6"],
    "7": ["7"],
    "S": ["10"],
    "C": ["11"],
    "R": ["12", "3"],
}
REF_JUEGO_ORDER = [31, 32, 40, 37, 36, 35, 34, 33]  # best first, as written in RULES.md


def cards_for(names: Sequence[str]) -> list[Card]:
    """Concrete, distinct cards for a multiset of effective-rank names."""
    pools = {
        name: [f"{printed}{suit}" for printed in REF_PRINTED[name] for suit in "oceb"] for name in REF_ORDER
    }
    picked = [pools[name].pop(0) for name in names]
    return parse_cards(picked)


def names_of(cards: Sequence[Card]) -> list[str]:
    """Effective-rank names of concrete cards, from their notation (rank then suit)."""
    return [next(n for n, ps in REF_PRINTED.items() if card_name(c)[:-1] in ps) for c in cards]


def ref_pares(names: Sequence[str]) -> tuple[int, int, int] | None:
    """(kind, higher pair, lower pair) with kind par 1, medias 2, duples 3; None without pares."""
    counts = Counter(REF_ORDER.index(n) for n in names)
    pairs = sorted((r for r, n in counts.items() if n >= 2), reverse=True)
    if not pairs:
        return None
    if len(pairs) == 2:
        return (3, pairs[0], pairs[1])
    rank = pairs[0]
    n = counts[rank]
    if n == 4:
        return (3, rank, rank)  # four equal = two pairs of that rank
    if n == 3:
        return (2, rank, 0)  # medias compare only the rank
    return (1, rank, 0)  # par compares only the rank


def ref_total(names: Sequence[str]) -> int:
    return sum(REF_VALUE[n] for n in names)


def ref_key(lance: Lance, names: Sequence[str]) -> tuple[int, ...] | None:
    """A tuple where greater is better; None when the hand does not hold (pares, juego)."""
    positions = [REF_ORDER.index(n) for n in names]
    if lance is Lance.GRANDE:
        return tuple(sorted(positions, reverse=True))
    if lance is Lance.CHICA:
        # Sort low to high, compare card by card; the lower card wins.
        return tuple(-p for p in sorted(positions))
    if lance is Lance.PARES:
        return ref_pares(names)
    total = ref_total(names)
    if lance is Lance.JUEGO:
        return (len(REF_JUEGO_ORDER) - REF_JUEGO_ORDER.index(total),) if total >= 31 else None
    return (total,)


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def ref_cmp(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> int:
    if a is None or b is None:
        return sign((a is not None) - (b is not None))
    return sign((a > b) - (a < b))


ALL_MULTISETS = [list(combo) for combo in combinations_with_replacement(REF_ORDER, 4)]


def key(lance: Lance, text: str) -> int:
    return evaluate(parse_cards(text.split())).key(lance)


def mano_wins(lance: Lance, mano: int, text_by_seat: Sequence[str]) -> int | None:
    return compare(lance, {s: parse_cards(text_by_seat[s].split()) for s in range(4)}, mano)


# -- the table ---------------------------------------------------------------------------------------------


def test_the_table_has_330_entries_one_per_rank_multiset() -> None:
    assert len(ALL_MULTISETS) == 330
    assert len(TABLE) == 330
    assert {tuple(sorted(ev.ranks)) for ev in TABLE.values()} == {
        tuple(sorted(REF_ORDER.index(n) for n in m)) for m in ALL_MULTISETS
    }


@pytest.mark.parametrize("lance", list(Lance))
def test_table_keys_agree_with_a_slow_reimplementation_for_every_pair_of_multisets(lance: Lance) -> None:
    evaluated = [
        (names, ref_key(lance, names), evaluate(cards_for(names)).key(lance)) for names in ALL_MULTISETS
    ]
    for names, ref, k in evaluated:
        if lance in (Lance.PARES, Lance.JUEGO):
            assert (k == 0) == (ref is None), (names, k, ref)
        else:
            assert k > 0, names
    for (na, ra, ka), (nb, rb, kb) in combinations(evaluated, 2):
        assert sign(ka - kb) == ref_cmp(ra, rb), (lance.value, na, nb, ka, kb)


@pytest.mark.parametrize("names", ALL_MULTISETS, ids=lambda m: "".join(m))
def test_every_multiset_evaluates_to_its_kind_total_and_bonuses(names: list[str]) -> None:
    ev = evaluate(cards_for(names))
    pares = ref_pares(names)
    kind = ParesKind.NONE if pares is None else ParesKind(pares[0])
    total = ref_total(names)
    assert ev.pares_kind is kind
    assert ev.has_pares == (pares is not None)
    assert ev.total == total
    assert ev.has_juego == (total >= 31)
    assert ev.pares_bonus == {None: 0, 1: 1, 2: 2, 3: 3}[None if pares is None else pares[0]]
    assert ev.juego_bonus == (3 if total == 31 else 2 if total > 31 else 0)
    assert ev.key(Lance.PUNTO) == total


def test_suits_never_matter_and_3_2_are_rey_as() -> None:
    rng = random.Random(7)
    for _ in range(300):
        cards = rng.sample(FULL_DECK, 4)
        ev = evaluate(cards)
        for lance in Lance:
            assert ev.key(lance) == evaluate(cards_for(names_of(cards))).key(lance)


def test_evaluate_needs_four_cards() -> None:
    with pytest.raises(ValueError):
        evaluate(parse_cards(["12o", "12c", "12e"]))
    with pytest.raises(ValueError):
        evaluate(parse_cards(["12o", "12c", "12e", "12b", "1o"]))


# -- grande and chica --------------------------------------------------------------------------------------


def test_grande_compares_high_to_low_card_by_card() -> None:
    assert key(Lance.GRANDE, "12o 12c 12e 12b") > key(Lance.GRANDE, "12o 12c 12e 11b")
    assert key(Lance.GRANDE, "12o 11c 1e 1b") > key(Lance.GRANDE, "11o 11c 11e 10b")
    assert key(Lance.GRANDE, "12o 7c 6e 5b") > key(Lance.GRANDE, "12c 7o 6c 4b")
    assert key(Lance.GRANDE, "1o 2c 7e 7c") > key(Lance.GRANDE, "4o 5c 6e 7b")  # 7 7 A A: the second 7


def test_grande_a_3_is_a_rey() -> None:
    assert key(Lance.GRANDE, "3o 3c 3e 3b") == key(Lance.GRANDE, "12o 12c 12e 12b")
    assert key(Lance.GRANDE, "3o 12c 1e 4b") == key(Lance.GRANDE, "12o 12e 2e 4c")
    assert key(Lance.GRANDE, "3o 1c 1e 1b") > key(Lance.GRANDE, "11o 11c 11e 11b")


def test_chica_lowest_wins_card_by_card_and_a_2_is_an_as() -> None:
    assert key(Lance.CHICA, "1o 1c 1e 1b") == key(Lance.CHICA, "2o 2c 1e 2b")
    assert key(Lance.CHICA, "1o 2c 1e 2b") > key(Lance.CHICA, "1o 1c 1e 4b")
    assert key(Lance.CHICA, "1o 1c 4e 12b") > key(Lance.CHICA, "1e 1b 5e 5b")
    assert key(Lance.CHICA, "1o 4c 5e 6b") > key(Lance.CHICA, "4o 4c 4e 5b")
    assert key(Lance.CHICA, "2o 11c 11e 11b") > key(Lance.CHICA, "4o 4c 4e 4b")
    # A 3 is a rey: the worst card for chica.
    assert key(Lance.CHICA, "1o 4c 5e 11b") > key(Lance.CHICA, "1c 4e 5c 3b")
    assert key(Lance.CHICA, "1o 4c 5e 3b") == key(Lance.CHICA, "2c 4e 5c 12b")


# -- pares -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("12o 11c 10e 7b", ParesKind.NONE),
        ("12o 3c 10e 7b", ParesKind.PAR),
        ("1o 2c 10e 7b", ParesKind.PAR),
        ("12o 3c 12e 7b", ParesKind.MEDIAS),
        ("1o 2c 2e 7b", ParesKind.MEDIAS),
        ("12o 3c 1e 2b", ParesKind.DUPLES),
        ("7o 7c 7e 7b", ParesKind.DUPLES),
        ("3o 3c 12e 12b", ParesKind.DUPLES),
        ("5o 5c 4e 4b", ParesKind.DUPLES),
    ],
)
def test_pares_kinds(text: str, kind: ParesKind) -> None:
    assert evaluate(parse_cards(text.split())).pares_kind is kind
    assert (key(Lance.PARES, text) == 0) == (kind is ParesKind.NONE)


def test_pares_kinds_order_par_medias_duples() -> None:
    best_par = key(Lance.PARES, "12o 12c 11e 10b")
    worst_medias = key(Lance.PARES, "1o 1c 2e 4b")
    best_medias = key(Lance.PARES, "12o 12c 3e 11b")
    worst_duples = key(Lance.PARES, "1o 1c 2e 2b")
    assert 0 < best_par < worst_medias <= best_medias < worst_duples


def test_rraa_duples_beat_four_sevens() -> None:
    assert key(Lance.PARES, "12o 3c 1e 2b") > key(Lance.PARES, "7o 7c 7e 7b")


def test_four_equal_are_two_pairs_of_that_rank() -> None:
    assert key(Lance.PARES, "12o 12c 3e 3b") > key(Lance.PARES, "12o 12c 11e 11b")
    assert key(Lance.PARES, "7o 7c 7e 7b") > key(Lance.PARES, "7o 7c 6e 6b")
    assert key(Lance.PARES, "7o 7c 7e 7b") < key(Lance.PARES, "10o 10c 1e 1b")


def test_duples_compare_the_higher_pair_then_the_lower_pair() -> None:
    assert key(Lance.PARES, "12o 12c 1e 1b") > key(Lance.PARES, "11o 11c 10e 10b")
    assert key(Lance.PARES, "12o 12c 5e 5b") > key(Lance.PARES, "12e 3b 4e 4b")
    assert key(Lance.PARES, "11o 11c 5e 5b") == key(Lance.PARES, "11e 11b 5c 5o")


def test_medias_and_par_compare_only_the_rank() -> None:
    assert key(Lance.PARES, "12o 12c 12e 1b") == key(Lance.PARES, "12b 3c 3e 11b")
    assert key(Lance.PARES, "7o 7c 7e 12b") < key(Lance.PARES, "10o 10c 10e 1b")
    assert key(Lance.PARES, "12o 12c 1e 4b") == key(Lance.PARES, "3o 3c 11e 10b")
    assert key(Lance.PARES, "6o 6c 12e 11b") < key(Lance.PARES, "7o 7c 1e 4b")


# -- juego and punto ---------------------------------------------------------------------------------------

JUEGO_HANDS = {
    31: "12o 11o 10o 1o",
    32: "12c 11c 6o 6c",
    40: "12e 11e 10e 3b",
    37: "12b 11b 10b 7o",
    36: "3o 3c 10c 6e",
    35: "3e 11c 10e 5o",
    34: "12o 3b 10b 4o",
    33: "12c 11o 7c 6b",
}


def test_juego_order_31_32_40_37_36_35_34_33() -> None:
    for total, text in JUEGO_HANDS.items():
        assert evaluate(parse_cards(text.split())).total == total
    keys = [key(Lance.JUEGO, JUEGO_HANDS[t]) for t in (31, 32, 40, 37, 36, 35, 34, 33)]
    assert keys == sorted(keys, reverse=True)
    assert len(set(keys)) == 8
    assert key(Lance.JUEGO, "12o 11o 5o 5c") == 0  # 30 is not juego
    assert min(keys) > 0


def test_a_two_counts_one_and_a_three_counts_ten() -> None:
    assert evaluate(parse_cards(["12o", "11o", "10o", "2o"])).total == 31
    assert evaluate(parse_cards(["3o", "11o", "10o", "1c"])).total == 31


def test_punto_30_is_best_and_higher_sums_win() -> None:
    thirty = key(Lance.PUNTO, "12o 11o 5o 5c")
    assert thirty > key(Lance.PUNTO, "12o 11o 5o 4c") > key(Lance.PUNTO, "1o 1c 2o 2c")
    assert key(Lance.PUNTO, "1o 1c 2o 2c") == 4  # the worst punto is four ases: 4


# -- winners and ties --------------------------------------------------------------------------------------

# Four hands equal in every lance: R R 7 A (28, a par of reyes, no juego).
ALL_EQUAL = ["12o 12c 7o 1o", "12e 12b 7c 1c", "3o 3c 7e 1e", "3e 3b 7b 1b"]


@pytest.mark.parametrize("mano", range(4))
@pytest.mark.parametrize("lance", [Lance.GRANDE, Lance.CHICA, Lance.PARES, Lance.PUNTO])
def test_a_four_way_tie_goes_to_the_mano(mano: int, lance: Lance) -> None:
    assert mano_wins(lance, mano, ALL_EQUAL) == mano


@pytest.mark.parametrize("mano", range(4))
def test_nobody_wins_juego_or_pares_without_holders(mano: int) -> None:
    assert mano_wins(Lance.JUEGO, mano, ALL_EQUAL) is None
    no_pares = ["12o 11o 7o 1o", "12e 11b 7c 1c", "3o 11c 7e 1e", "3e 10b 7b 1b"]
    assert mano_wins(Lance.PARES, mano, no_pares) is None


@pytest.mark.parametrize("mano", range(4))
@pytest.mark.parametrize("tied", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (0, 1, 3), (1, 2, 3)])
def test_ties_go_to_the_tied_seat_nearest_the_mano(mano: int, tied: tuple[int, ...]) -> None:
    # Tied seats hold R R S A (31, a par of reyes, the best grande here); the others 4 5 6 C (25, no pares).
    strong = ["12o 12c 10o 1o", "3o 3c 10c 1c", "12e 3e 10e 1e"]
    weak = ["4o 5o 6o 11o", "4c 5c 6c 11c", "4e 5e 6e 11e", "4b 5b 6b 11b"]
    texts = []
    for seat in range(4):
        texts.append(strong.pop() if seat in tied else weak.pop())
    expected = next((mano + i) % 4 for i in range(4) if (mano + i) % 4 in tied)
    for lance in (Lance.GRANDE, Lance.PARES, Lance.JUEGO):
        assert mano_wins(lance, mano, texts) == expected, lance


def test_compare_agrees_with_the_reference_on_random_deals() -> None:
    rng = random.Random(2024)
    for _ in range(400):
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        hands = {s: deck[4 * s : 4 * s + 4] for s in range(4)}
        mano = rng.randrange(4)
        for lance in Lance:
            refs = {s: ref_key(lance, names_of(hands[s])) for s in range(4)}
            expected = None
            for i in range(4):
                seat = (mano + i) % 4
                if refs[seat] is None:
                    continue
                if expected is None or ref_cmp(refs[seat], refs[expected]) > 0:
                    expected = seat
            assert compare(lance, hands, mano) == expected, (lance, hands, mano)
