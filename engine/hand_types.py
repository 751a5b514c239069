"""The vocabulary of a hand: its phases, the table options it plays under, and the immutable records it
hands out (each action, each closed lance, an accepted órdago, each line of the count).

Pure data: the phase machine that produces these is :class:`engine.hand.Hand`. Rule decisions encoded here:

- the phase order ``MUS`` → ``DISCARD`` → ``MUS`` … → ``GRANDE`` → ``CHICA`` → ``PARES`` → ``JUEGO`` or
  ``PUNTO`` → ``COUNT`` → ``OVER``, and which phases are the betting of a lance (:data:`LANCE_OF_PHASE`);
- a game is won at 40 stones by default (:data:`DEFAULT_TARGET`);
- **Decision (ours, RULES.md is silent):** the standing bet is capped, by the target unless the table sets
  ``max_bet`` (:attr:`HandConfig.bet_cap`);
- an accepted órdago is won by a team (its identity); the winning seat is kept for showing only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from engine.actions import Action
from engine.betting import BetStatus, Betting
from engine.evaluation import Lance
from engine.senas import DEFAULT_CATCH_WINDOW

#: Stones to win a game, by default.
DEFAULT_TARGET = 40


class Phase(StrEnum):
    """Phases of a hand."""

    MUS = "mus"
    DISCARD = "discard"
    GRANDE = "grande"
    CHICA = "chica"
    PARES = "pares"
    JUEGO = "juego"
    PUNTO = "punto"
    COUNT = "count"
    """Transient: the cards are shown and the lances scored; no seat acts."""
    OVER = "over"


#: The betting phases, with their lance.
LANCE_OF_PHASE: dict[Phase, Lance] = {
    Phase.GRANDE: Lance.GRANDE,
    Phase.CHICA: Lance.CHICA,
    Phase.PARES: Lance.PARES,
    Phase.JUEGO: Lance.JUEGO,
    Phase.PUNTO: Lance.PUNTO,
}
#: The betting phase of each lance.
PHASE_OF_LANCE: dict[Lance, Phase] = {lance: phase for phase, lance in LANCE_OF_PHASE.items()}


@dataclass(frozen=True, slots=True)
class HandConfig:
    """Table options that matter inside a hand."""

    target: int = DEFAULT_TARGET
    senas: bool = False
    catch_window: float = DEFAULT_CATCH_WINDOW
    max_bet: int = 0
    """Cap on the standing bet (an envido, or the total after a raise); 0 means the target."""

    @property
    def bet_cap(self) -> int:
        """The effective cap on an envido or raise."""
        return self.max_bet or self.target


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """An action as it entered the hand's log."""

    index: int
    seat: int
    phase: Phase
    action: Action


@dataclass(frozen=True, slots=True)
class LanceResult:
    """How the betting of a lance ended (public once closed)."""

    lance: Lance
    status: BetStatus
    participants: tuple[int, ...]
    amount: int
    """Accepted bet (0 unless accepted)."""
    deje: int
    """Stones paid at once on a refusal (0 otherwise)."""
    proposer_team: int | None

    @classmethod
    def of(cls, betting: Betting) -> LanceResult:
        """How ``betting``, closed, ended."""
        b = betting
        return cls(b.lance, b.status, b.participants, b.amount, b.deje, b.proposer_team)


@dataclass(frozen=True, slots=True)
class OrdagoResult:
    """An accepted órdago: the lance it was in and the team whose hand won it."""

    lance: Lance
    team: int
    seat: int = field(default=-1, compare=False)
    """The seat whose hand won it (not part of the result's identity: that is the lance and the team)."""


@dataclass(frozen=True, slots=True)
class CountLine:
    """One line of the count: a lance, the team it paid and how many stones (bet and bonuses apart).

    ``bet`` is the accepted bet, or the 1 stone of an en paso grande or chica; ``bonus`` the pares or juego
    bonuses (``bonuses`` says which seat brought how many) or punto's extra stone.
    """

    lance: Lance
    team: int
    bet: int
    bonus: int
    bonuses: tuple[tuple[int, int], ...] = ()
    """``(seat, stones)`` for each player of the winning team whose pares or juego paid a bonus."""

    @property
    def stones(self) -> int:
        """Stones this line paid."""
        return self.bet + self.bonus
