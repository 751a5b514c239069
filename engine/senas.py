"""Señas: the eight signals a player may make to its partner, and when each is true."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.cards import CARD_RANK, Card
from engine.evaluation import ParesKind, evaluate

#: A player makes at most this many señas per hand.
MAX_SENAS_PER_HAND = 2
#: Default catch window in seconds.
DEFAULT_CATCH_WINDOW = 3.0

_REY = 7
_AS = 0


class Sena(StrEnum):
    """The señas of RULES.md."""

    DOS_REYES = "dos_reyes"
    TRES_REYES = "tres_reyes"
    DOS_ASES = "dos_ases"
    TRES_ASES = "tres_ases"
    MEDIAS = "medias"
    DUPLES = "duples"
    TREINTA_Y_UNA = "treinta_y_una"
    CIEGO = "ciego"


def sena_is_true(sena: Sena, cards: Sequence[Card]) -> bool:
    """Whether ``sena`` is true of these four cards (effective ranks: 3 is a rey, 2 an as)."""
    ranks = [CARD_RANK[c] for c in cards]
    if sena is Sena.DOS_REYES:
        return ranks.count(_REY) == 2
    if sena is Sena.TRES_REYES:
        return ranks.count(_REY) == 3
    if sena is Sena.DOS_ASES:
        return ranks.count(_AS) == 2
    if sena is Sena.TRES_ASES:
        return ranks.count(_AS) == 3
    ev = evaluate(cards)
    if sena is Sena.MEDIAS:
        return ev.pares_kind is ParesKind.MEDIAS
    if sena is Sena.DUPLES:
        return ev.pares_kind is ParesKind.DUPLES
    if sena is Sena.TREINTA_Y_UNA:
        return ev.total == 31
    return not ev.has_pares and not ev.has_juego


def true_senas(cards: Sequence[Card]) -> list[Sena]:
    """Every seña that is true of these four cards."""
    return [s for s in Sena if sena_is_true(s, cards)]


@dataclass(frozen=True, slots=True)
class SenaRecord:
    """A seña made: who, which, when (the caller's clock), and after how many logged actions."""

    index: int
    seat: int
    sena: Sena
    made_at: float
    after_action: int


@dataclass(frozen=True, slots=True)
class CatchRecord:
    """A rival caught the seña ``sena_index`` at ``caught_at``."""

    sena_index: int
    seat: int
    caught_at: float
