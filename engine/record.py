"""Hand records: the initial deal, the deck order and the action log, in the ``mus-conformance/1`` shape.

A record replays to the same state; it is the persistence format's backbone, the debugging tool and the
conformance interface. Besides the conformance words, a record may carry, as its third element, the time of
a seña (``[seat, "sena dos_reyes", t]``) and catches (``[seat, "catch 0", t]``), and the decks of any
reshuffle, so that a replay is exact.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine.actions import parse_action
from engine.cards import FULL_DECK, card_names, parse_card, parse_cards
from engine.errors import ActionSyntaxError, CardError, RecordError
from engine.hand import Hand
from engine.hand_types import HandConfig
from engine.senas import DEFAULT_CATCH_WINDOW

Entry = tuple[int, str] | tuple[int, str, float]


class HandRecord(BaseModel):
    """A hand as data: enough to rebuild it exactly by replay."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    mano: int = Field(ge=0, le=3)
    scores: tuple[int, int] = (0, 0)
    target: int = Field(default=40, ge=1)
    senas: bool = False
    catch_window: float = DEFAULT_CATCH_WINDOW
    max_bet: int = Field(default=0, ge=0)
    hands: dict[int, list[str]]
    deck: list[str] | None = None
    actions: list[Entry] = Field(default_factory=list)
    reshuffles: list[list[str]] = Field(default_factory=list)

    @field_validator("hands")
    @classmethod
    def _four_seats(cls, value: dict[int, list[str]]) -> dict[int, list[str]]:
        if sorted(value) != [0, 1, 2, 3]:
            raise ValueError("hands must name seats 0, 1, 2 and 3")
        return value

    def config(self) -> HandConfig:
        """The table options this record was played with."""
        return HandConfig(
            target=self.target, senas=self.senas, catch_window=self.catch_window, max_bet=self.max_bet
        )


def record_of(hand: Hand) -> HandRecord:
    """The record of a hand as played so far."""
    cfg = hand.config
    entries: list[Entry] = [
        (seat, word) if at is None else (seat, word, at) for seat, word, at in hand.journal
    ]
    return HandRecord(
        mano=hand.mano,
        scores=hand.start_scores,
        target=cfg.target,
        senas=cfg.senas,
        catch_window=cfg.catch_window,
        max_bet=cfg.max_bet,
        hands={seat: card_names(cards) for seat, cards in enumerate(hand.initial_hands)},
        deck=card_names(hand.initial_deck),
        actions=entries,
        reshuffles=[card_names(d) for d in hand.reshuffles],
    )


def start_hand(record: HandRecord, rng: random.Random | None = None) -> Hand:
    """A hand at its deal, from a record (no action applied)."""
    try:
        hands = [parse_cards(record.hands[seat]) for seat in range(4)]
        dealt = {c for h in hands for c in h}
        deck = [c for c in FULL_DECK if c not in dealt] if record.deck is None else parse_cards(record.deck)
        reshuffles = [parse_cards(d) for d in record.reshuffles]
    except CardError as exc:
        raise RecordError(str(exc)) from None
    return Hand(
        mano=record.mano,
        hands=hands,
        deck=deck,
        scores=record.scores,
        config=record.config(),
        rng=rng,
        reshuffles=reshuffles,
    )


def apply_entry(hand: Hand, entry: Entry) -> None:
    """Apply one record entry (an action, a seña or a catch) to a hand."""
    seat, word = entry[0], entry[1]
    at = float(entry[2]) if len(entry) > 2 else 0.0
    if not isinstance(word, str) or not isinstance(seat, int):
        raise RecordError(f"an entry is [seat, word]: {entry!r}")
    head, _, rest = word.strip().partition(" ")
    if head == "sena":
        hand.make_sena(seat, rest.strip(), at)
    elif head == "catch":
        if not rest.strip().isdigit():
            raise ActionSyntaxError(f"catch takes a seña number: {word!r}")
        hand.catch_sena(seat, int(rest), at)
    else:
        hand.act(seat, parse_action(word))


def hand_after(record: HandRecord, entries: int) -> Hand:
    """The hand as it stood after the first ``entries`` entries of its record (0: as dealt; more than the
    record holds: as it ends). Every surface that shows a hand move by move (the web table's pages, a
    replay of a kept match, the terminal's feed) steps through a record with this, never on its own."""
    hand = start_hand(record)
    for entry in record.actions[: max(0, entries)]:
        apply_entry(hand, entry)
    return hand


def hand_steps(record: HandRecord, first: int = 1) -> Iterator[tuple[int, Hand]]:
    """The hand after each entry of its record from the ``first``-th on (1-based), with how many entries
    it has taken: one replay for a whole run of moves. The same :class:`Hand` is advanced in place, so a
    caller reads what it needs of it (a view) before asking for the next step."""
    hand = hand_after(record, first - 1)
    for done in range(max(1, first), len(record.actions) + 1):
        apply_entry(hand, record.actions[done - 1])
        yield done, hand


def replay(record: HandRecord, rng: random.Random | None = None) -> Hand:
    """Rebuild a hand by replaying its record; raises a domain error where the record is illegal."""
    hand = start_hand(record, rng)
    for entry in record.actions:
        apply_entry(hand, entry)
    if hand.pending_reshuffles():
        raise RecordError("the record carries a reshuffle that its actions never needed")
    return hand


def parse_record(data: Any) -> HandRecord:
    """Validate a record from JSON-like data; raise :class:`RecordError` when malformed."""
    try:
        return HandRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise RecordError(f"malformed record at {where or 'top'}: {first.get('msg')}") from None


def check_card(text: str) -> None:
    """Raise :class:`RecordError` unless ``text`` is a card in the notation."""
    try:
        parse_card(text)
    except CardError as exc:
        raise RecordError(str(exc)) from None
