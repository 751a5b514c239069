"""Domain errors raised by the engine. Every illegal input raises one of these and changes nothing."""

from __future__ import annotations


class MusError(Exception):
    """Base class of every rule violation the engine reports."""


class CardError(MusError, ValueError):
    """A card that is not in the notation, repeated, or not held."""


class ActionSyntaxError(MusError, ValueError):
    """An action word that cannot be parsed (unknown word, missing or malformed argument)."""


class HandOverError(MusError):
    """The hand has ended: no action, seña or catch is accepted any more."""


class NotYourTurnError(MusError):
    """The seat that tried to act is not the one whose turn it is."""


class IllegalActionError(MusError):
    """The action is not one of the seat's legal actions in this phase."""


class NotParticipantError(IllegalActionError):
    """The seat takes no part in the current lance (no pares, no juego, or no betting in it)."""


class BadAmountError(IllegalActionError):
    """An envido or a raise below the minimum of 2 stones, or above the table's cap."""


class DiscardError(IllegalActionError):
    """A discard of the wrong number of cards or of a card the seat does not hold."""


class SenaError(MusError):
    """A seña that is unknown, not true of the seat's cards, a third one, or made with señas off."""


class CatchError(MusError):
    """A catch of a seña that does not exist, is the catcher's own side's, or came too late."""


class RecordError(MusError, ValueError):
    """A hand record or saved state that is malformed or inconsistent."""
