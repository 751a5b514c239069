"""Señas: the eight signals a player may make to its partner, when each is true, and who may make or catch
one and when (plain functions of the records, which a :class:`engine.hand.Hand` keeps).

RULES.md decisions encoded here:

- a seña is true of the player's four cards at that moment (effective ranks: 3 is a rey, 2 an as);
- at most :data:`MAX_SENAS_PER_HAND` (2) señas per player and hand, only at a table with señas on;
- **Decision (ours):** a seña needs four cards: a seat waiting for its replacements cannot make one;
- the partner always knows the seña; a rival knows it only by catching it, within the catch window after it
  was made (the caller's clock: the engine never reads time), once per rival and seña;
- **Decision (ours):** the window belongs to the person: a surface that showed the seña late (a paced move
  feed, a rate-limited chat edit) says when it showed it, and the window counts from then (at most
  :data:`MAX_SHOW_DELAY` after the seña was made; :func:`catch_moment`);
- **Decision (ours):** catches end with the hand: once it is over, a catch is refused even inside the window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.cards import CARD_RANK, Card
from engine.errors import CatchError, HandOverError, SenaError
from engine.evaluation import ParesKind, evaluate

#: A player makes at most this many señas per hand.
MAX_SENAS_PER_HAND = 2
#: Default catch window in seconds.
DEFAULT_CATCH_WINDOW = 3.0
#: The latest, after a seña was made, that a surface's showing it still moves its catch window (seconds): a
#: paced feed or a chat edit is seconds late, never minutes.
MAX_SHOW_DELAY = 30.0

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


def made_by(made: Sequence[SenaRecord], seat: int) -> int:
    """How many of the señas ``made`` this hand ``seat`` made."""
    return sum(1 for s in made if s.seat == seat)


def check_can_make(
    made: Sequence[SenaRecord],
    seat: int,
    sena: Sena | str,
    *,
    over: bool,
    enabled: bool,
    hands: Sequence[Sequence[Card]],
) -> None:
    """Raise :class:`SenaError` (or :class:`HandOverError`) unless ``seat`` may make ``sena`` now, given the
    señas ``made`` so far, whether the hand is ``over``, whether señas are on, and the seats' cards."""
    if over:
        raise HandOverError("the hand is over")
    if seat not in range(4):
        raise SenaError(f"there is no seat {seat!r}")
    if not enabled:
        raise SenaError("señas are off at this table")
    try:
        name = Sena(sena)
    except ValueError:
        raise SenaError(f"unknown seña {sena!r}") from None
    if len(hands[seat]) != 4:
        raise SenaError(f"seat {seat} is waiting for its new cards")
    if made_by(made, seat) >= MAX_SENAS_PER_HAND:
        raise SenaError(f"seat {seat} has made its {MAX_SENAS_PER_HAND} señas this hand")
    if not sena_is_true(name, hands[seat]):
        raise SenaError(f"{name.value} is not true of seat {seat}'s cards")


def new_sena(
    made: Sequence[SenaRecord], seat: int, sena: Sena | str, now: float, after_action: int
) -> SenaRecord:
    """The record of ``seat`` making ``sena`` (already checked) at ``now``, after ``after_action`` actions."""
    if not math.isfinite(now):
        raise SenaError(f"a seña needs a finite time, not {now!r}")
    return SenaRecord(len(made), seat, Sena(sena), float(now), after_action)


def catch_moment(made: Sequence[SenaRecord], sena_index: int, now: float, shown_at: float | None) -> float:
    """``now`` on the clock of seña ``sena_index`` of those ``made``, for a catch pressed on a surface that
    showed it at ``shown_at``: ``now`` less the time the seña took to reach the catcher's screen (none if
    ``shown_at`` is ``None``, or the seña does not exist; at most :data:`MAX_SHOW_DELAY`; never before the
    seña was made). The catch window then counts from when the catcher could see the seña, and a record that
    keeps this moment replays to the same catch."""
    if shown_at is None or not 0 <= sena_index < len(made):
        return now
    return _moment(made[sena_index], now, shown_at)


def _moment(made: SenaRecord, now: float, shown_at: float) -> float:
    if not math.isfinite(shown_at) or not math.isfinite(now) or now < made.made_at:
        return now
    delay = min(max(shown_at - made.made_at, 0.0), MAX_SHOW_DELAY)
    return max(now - delay, made.made_at)


def window_open(made: SenaRecord, now: float, window: float) -> bool:
    """Whether the seña ``made`` can be caught at ``now``, with a catch window of ``window`` seconds."""
    return made.made_at <= now <= made.made_at + window


def check_can_catch(
    made: Sequence[SenaRecord],
    catches: Sequence[CatchRecord],
    seat: int,
    sena_index: int,
    now: float,
    *,
    over: bool,
    window: float,
) -> None:
    """Raise :class:`CatchError` (or :class:`HandOverError`) unless ``seat`` may catch seña ``sena_index`` at
    ``now``: the hand going on (catches end with it), the window of ``window`` seconds open."""
    if over:
        raise HandOverError("the hand is over")
    if not math.isfinite(now):
        raise CatchError(f"a catch needs a finite time, not {now!r}")
    if seat not in range(4):
        raise CatchError(f"there is no seat {seat!r}")
    if not 0 <= sena_index < len(made):
        raise CatchError(f"there is no seña {sena_index!r}")
    if made[sena_index].seat % 2 == seat % 2:
        raise CatchError("only a rival catches a seña; partners see it anyway")
    if any(c.sena_index == sena_index and c.seat == seat for c in catches):
        raise CatchError("already caught")
    if not window_open(made[sena_index], now, window):
        raise CatchError("too late: the catch window has closed")


def known_to(made: Sequence[SenaRecord], catches: Sequence[CatchRecord], seat: int, sena_index: int) -> bool:
    """Whether ``seat`` knows which seña ``sena_index`` was (its own side's, or caught)."""
    if made[sena_index].seat % 2 == seat % 2:
        return True
    return any(c.sena_index == sena_index and c.seat == seat for c in catches)
