"""The Spanish 40-card deck, the card notation and the 8-kings card equivalences.

A card is a small int ``0..39``: ``suit * 10 + rank_index``. The notation is rank then suit, as in
RULES.md: ``12o``, ``3c``, ``1e``, ``10b``. Suits never matter to the game; they only make cards distinct.

With 8 reyes every 3 counts as a rey and every 2 as an as, so each card has an *effective rank* ``0..7``:
A (1, 2) = 0, 4 = 1, 5 = 2, 6 = 3, 7 = 4, S (10) = 5, C (11) = 6, R (12, 3) = 7.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.errors import CardError

Card = int
"""A card: ``suit * 10 + rank_index`` (0..39)."""

RANKS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
"""Printed ranks, in rank-index order."""

SUITS: str = "oceb"
"""Suit letters: oros, copas, espadas, bastos."""

SUIT_SYMBOLS: dict[str, str] = {"o": "🪙", "c": "🍷", "e": "🗡️", "b": "🪵"}
"""One symbol per suit, for display."""

DECK_SIZE = 40

# Effective rank (0..7) of each printed rank under 8 reyes.
_EFFECTIVE: dict[int, int] = {1: 0, 2: 0, 4: 1, 5: 2, 6: 3, 7: 4, 10: 5, 11: 6, 12: 7, 3: 7}
# Value of each printed rank for juego and punto.
_VALUE: dict[int, int] = {1: 1, 2: 1, 3: 10, 4: 4, 5: 5, 6: 6, 7: 7, 10: 10, 11: 10, 12: 10}

EFFECTIVE_RANK_NAMES: tuple[str, ...] = ("A", "4", "5", "6", "7", "S", "C", "R")
"""Short names of the effective ranks, low to high."""

EFFECTIVE_RANK_VALUES: tuple[int, ...] = (1, 4, 5, 6, 7, 10, 10, 10)
"""Juego/punto value of each effective rank."""

#: Effective rank of each card, indexed by card.
CARD_RANK: tuple[int, ...] = tuple(_EFFECTIVE[RANKS[c % 10]] for c in range(DECK_SIZE))
#: Juego/punto value of each card, indexed by card.
CARD_VALUE: tuple[int, ...] = tuple(_VALUE[RANKS[c % 10]] for c in range(DECK_SIZE))
#: Notation of each card, indexed by card.
CARD_NAMES: tuple[str, ...] = tuple(f"{RANKS[c % 10]}{SUITS[c // 10]}" for c in range(DECK_SIZE))
_BY_NAME: dict[str, Card] = {name: card for card, name in enumerate(CARD_NAMES)}

#: The full deck in canonical order (oros 1..12, copas, espadas, bastos).
FULL_DECK: tuple[Card, ...] = tuple(range(DECK_SIZE))


def parse_card(text: str) -> Card:
    """Parse one card in the notation of RULES.md (``12o``, ``3c``…); raise :class:`CardError` if invalid."""
    if not isinstance(text, str):
        raise CardError(f"not a card: {text!r} (a card is written like 12o, 3c, 1e or 10b)")
    card = _BY_NAME.get(text)  # the common case: exact notation
    if card is None:
        card = _BY_NAME.get(text.strip().lower())
    if card is None:
        raise CardError(f"not a card: {text!r} (rank 1-7, 10, 11 or 12, then a suit o, c, e or b)")
    return card


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Parse several cards; raise :class:`CardError` on the first invalid one or on a repeated card."""
    cards = [parse_card(t) for t in texts]
    if len(set(cards)) != len(cards):
        raise CardError(f"a card appears twice: {' '.join(card_name(c) for c in cards)}")
    return cards


def card_name(card: Card) -> str:
    """The notation of a card, e.g. ``12o``."""
    return CARD_NAMES[card]


def card_names(cards: Sequence[Card]) -> list[str]:
    """The notation of several cards, in the given order."""
    return [CARD_NAMES[c] for c in cards]


def printed_rank(card: Card) -> int:
    """The rank printed on a card (1..7, 10, 11, 12)."""
    return RANKS[card % 10]


def suit_of(card: Card) -> str:
    """The suit letter of a card (``o``, ``c``, ``e`` or ``b``)."""
    return SUITS[card // 10]


def effective_rank(card: Card) -> int:
    """The effective rank 0..7 of a card under 8 reyes (3 is a rey, 2 is an as)."""
    return CARD_RANK[card]


def card_value(card: Card) -> int:
    """The value of a card for juego and punto."""
    return CARD_VALUE[card]
