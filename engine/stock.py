"""The cards of a hand that no seat holds: dealing, the deck and the discard pile of the mus rounds.

:class:`Stock` is the small collaborator a :class:`engine.hand.Hand` keeps for its undealt and discarded
cards; the functions beside it deal a hand and say which discards a seat may make. RULES.md decisions
encoded here:

- the deal: shuffle, then four cards to each seat, one at a time, starting with the mano; 24 stay in the deck
  (:func:`check_deal` checks an explicit one, a record's);
- a seat discards 1 to 4 of its own cards, each once;
- replacements come from the top of the deck, seat after seat in speaking order, once all four discarded;
- the deck runs out while replacing: the discard pile is shuffled into a new deck, **except** that when only
  one seat (the last in speaking order) is still waiting, its own latest discards are set aside, not
  reshuffled, and stay on the pile;
- a replayed record brings the decks its reshuffles made; a recorded deck must hold exactly the discards.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from engine.actions import Action, ActionKind
from engine.cards import DECK_SIZE, FULL_DECK, Card, card_names
from engine.errors import DiscardError, IllegalActionError, RecordError


def deal(rng: random.Random, mano: int) -> tuple[list[list[Card]], list[Card]]:
    """Shuffle with ``rng`` and deal four cards to each seat, one at a time, starting with the mano.

    Returns the four seats' cards and the undealt deck, top first.
    """
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hands: list[list[Card]] = [[], [], [], []]
    for i in range(16):
        hands[(mano + i) % 4].append(deck[i])
    return hands, deck[16:]


def check_deal(
    mano: int, hands: Sequence[Sequence[Card]], deck: Sequence[Card], scores: Sequence[int]
) -> None:
    """Raise :class:`RecordError` unless an explicit deal (a record's) is one: the mano a seat, four seats of
    four cards, the two teams' stones so far, and every card, held or in the deck, in range and there once."""
    if mano not in range(4):
        raise RecordError(f"mano must be a seat 0..3, not {mano!r}")
    if len(hands) != 4 or any(len(h) != 4 for h in hands):
        raise RecordError("a hand needs four seats of four cards each")
    if len(scores) != 2 or any(not isinstance(s, int) or s < 0 for s in scores):
        raise RecordError(f"scores must be two stones counts, not {scores!r}")
    dealt = [c for h in hands for c in h]
    every = [*dealt, *deck]
    if any(not isinstance(c, int) or not 0 <= c < DECK_SIZE for c in every):
        raise RecordError("a card is out of range")
    if len(set(every)) != len(every):
        raise RecordError(f"a card appears twice: {' '.join(card_names(every))}")


def subsets(cards: Sequence[Card]) -> list[tuple[Card, ...]]:
    """Every non-empty subset of a seat's cards (1 to 4 of them), in a stable order."""
    n = len(cards)
    return [tuple(cards[i] for i in range(n) if mask >> i & 1) for mask in range(1, 1 << n)]


def check_discard(seat: int, action: Action, held: Sequence[Card]) -> None:
    """Raise :class:`DiscardError` (or :class:`IllegalActionError`) unless ``seat``, holding ``held``, may
    take ``action`` in its turn to discard."""
    if action.kind is not ActionKind.DISCARD:
        raise IllegalActionError(f"seat {seat} must discard, not {action.word}")
    cards = action.cards
    if not 1 <= len(cards) <= 4:
        raise DiscardError(f"discard 1 to 4 cards, not {len(cards)}")
    if len(set(cards)) != len(cards):
        raise DiscardError("a card is discarded twice")
    missing = [c for c in cards if c not in held]
    if missing:
        raise DiscardError(f"seat {seat} does not hold {' '.join(card_names(missing))}")


class Stock:
    """The deck (top first), the discard pile, and the decks that reshuffles made."""

    __slots__ = ("_recorded", "deck", "discard_pile", "reshuffles")

    def __init__(self, deck: Sequence[Card], recorded: Sequence[Sequence[Card]] = ()) -> None:
        """Start from the undealt ``deck``; ``recorded`` replays the decks earlier reshuffles produced."""
        self.deck: list[Card] = list(deck)
        self.discard_pile: list[Card] = []
        """Discarded cards not yet shuffled back into a deck."""
        self.reshuffles: list[list[Card]] = []
        """Every deck a reshuffle made, in order (a record keeps them)."""
        self._recorded: list[list[Card]] = [list(d) for d in recorded]

    @property
    def pending_reshuffles(self) -> int:
        """Recorded reshuffles not yet used."""
        return len(self._recorded)

    def can_replace(self, order: Sequence[int], round_discards: Mapping[int, Sequence[Card]]) -> bool:
        """Whether :meth:`replace` would find enough cards (it follows the same steps, counting only)."""
        deck = len(self.deck)
        pile = len(self.discard_pile) + sum(len(c) for c in round_discards.values())
        for position, seat in enumerate(order):
            needed = len(round_discards[seat])
            taken = min(deck, needed)
            deck -= taken
            if needed > taken:
                set_aside = needed if position == 3 else 0
                deck, pile = pile - set_aside, set_aside
                if deck < needed - taken:
                    return False
                deck -= needed - taken
        return True

    def replace(
        self,
        order: Sequence[int],
        round_discards: Mapping[int, tuple[Card, ...]],
        hands: Sequence[list[Card]],
        rng: random.Random | None,
    ) -> None:
        """Put a round's discards on the pile, then deal each seat in ``order`` as many cards from the top,
        reshuffling when the deck runs out (``rng`` shuffles unless a recorded deck is left)."""
        for seat in order:
            self.discard_pile.extend(round_discards[seat])
        for position, seat in enumerate(order):
            needed = len(round_discards[seat])
            for _ in range(needed):
                if not self.deck:
                    lone_waiter = position == 3
                    self._reshuffle(round_discards[seat] if lone_waiter else (), rng)
                hands[seat].append(self.deck.pop(0))

    def _reshuffle(self, set_aside: tuple[Card, ...], rng: random.Random | None) -> None:
        """Shuffle the discard pile into a new deck, keeping ``set_aside`` out (RULES.md, deck runs out)."""
        pile = [c for c in self.discard_pile if c not in set_aside]
        if self._recorded:
            new_deck = self._recorded.pop(0)
            if sorted(new_deck) != sorted(pile):
                raise RecordError("a recorded reshuffle does not hold the discarded cards")
        else:
            rng = rng or random.Random(0)
            new_deck = list(pile)
            rng.shuffle(new_deck)
        self.reshuffles.append(list(new_deck))
        self.discard_pile = [c for c in self.discard_pile if c in set_aside]
        self.deck = list(new_deck)
