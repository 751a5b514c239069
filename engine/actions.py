"""Player actions and their words (``mus``, ``discard 12o 3c``, ``envido 2``, ``sube 4``, ``ordago``…)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engine.cards import Card, card_names, parse_cards
from engine.errors import ActionSyntaxError, CardError


class ActionKind(StrEnum):
    """Every kind of action a seat takes on its turn."""

    MUS = "mus"
    NO_MUS = "no_mus"
    DISCARD = "discard"
    PASO = "paso"
    ENVIDO = "envido"
    SUBE = "sube"
    QUIERO = "quiero"
    NO_QUIERO = "no_quiero"
    ORDAGO = "ordago"


#: The kinds that carry an amount of stones.
AMOUNT_KINDS = frozenset({ActionKind.ENVIDO, ActionKind.SUBE})


@dataclass(frozen=True, slots=True)
class Action:
    """One action: its kind, the stones of an envido or raise, the cards of a discard."""

    kind: ActionKind
    amount: int = 0
    cards: tuple[Card, ...] = ()

    @property
    def word(self) -> str:
        """The action in record notation, e.g. ``envido 2`` or ``discard 12o 3c``."""
        if self.kind in AMOUNT_KINDS:
            return f"{self.kind.value} {self.amount}"
        if self.kind is ActionKind.DISCARD:
            return " ".join(["discard", *card_names(self.cards)])
        return self.kind.value

    def __str__(self) -> str:
        return self.word


# Ready-made actions without arguments.
MUS = Action(ActionKind.MUS)
NO_MUS = Action(ActionKind.NO_MUS)
PASO = Action(ActionKind.PASO)
QUIERO = Action(ActionKind.QUIERO)
NO_QUIERO = Action(ActionKind.NO_QUIERO)
ORDAGO = Action(ActionKind.ORDAGO)


def envido(amount: int = 2) -> Action:
    """An opening bet of ``amount`` stones (no range check here; the hand checks it)."""
    return Action(ActionKind.ENVIDO, amount)


def sube(amount: int) -> Action:
    """A raise of ``amount`` stones over the standing bet."""
    return Action(ActionKind.SUBE, amount)


def discard(cards: tuple[Card, ...] | list[Card]) -> Action:
    """A discard of the given cards."""
    return Action(ActionKind.DISCARD, cards=tuple(cards))


def parse_action(text: str) -> Action:
    """Parse an action word; raise :class:`ActionSyntaxError` when it is not one.

    ``envido`` alone means ``envido 2`` (RULES.md). Amount ranges and held cards are checked by the hand.
    """
    if not isinstance(text, str):
        raise ActionSyntaxError(f"an action is a string, not {type(text).__name__}")
    words = text.split()
    if not words:
        raise ActionSyntaxError("empty action")
    head, args = words[0].lower(), words[1:]
    try:
        kind = ActionKind(head)
    except ValueError:
        raise ActionSyntaxError(f"unknown action {head!r}") from None
    if kind in AMOUNT_KINDS:
        if kind is ActionKind.ENVIDO and not args:
            return envido(2)
        if len(args) != 1 or not args[0].isdigit():
            raise ActionSyntaxError(f"{kind.value} takes one whole number of stones: {text!r}")
        return Action(kind, int(args[0]))
    if kind is ActionKind.DISCARD:
        try:
            return discard(parse_cards(args))
        except CardError as exc:
            raise ActionSyntaxError(str(exc)) from None
    if args:
        raise ActionSyntaxError(f"{kind.value} takes no argument: {text!r}")
    return Action(kind)
