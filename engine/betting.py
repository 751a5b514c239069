"""Betting within one lance: opening, answers, raises, órdago, and how it ends.

RULES.md decisions encoded here:

- participants open in speaking order; if all pass the lance is *en paso*;
- once a proposal stands, the rival participants answer starting with the seat after the proposer
  (seat + 1, then seat + 3); the first answer that is not ``no_quiero`` binds the pair;
- a raise (``sube N``) or an answering órdago turns the roles round; an órdago is answered only with
  ``quiero`` or ``no_quiero``;
- **Decision (ours, RULES.md is silent):** the standing bet never exceeds the table's cap (the target,
  40 stones, by default): a bet above what wins the game is pointless when órdago exists, and the cap makes
  every lance end (without it two sides could raise for ever);
- refused: the proposing team takes the deje, 1 stone if nothing had been accepted yet, otherwise the
  amount that stood before the refused raise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from engine.actions import Action, ActionKind
from engine.errors import BadAmountError, IllegalActionError, NotParticipantError, NotYourTurnError
from engine.evaluation import Lance

#: The smallest envido or raise, in stones.
MIN_BET = 2


class BetStatus(StrEnum):
    """Where the betting of a lance stands."""

    OPENING = "opening"
    """Participants speak in turn: paso, envido or órdago."""
    ANSWERING = "answering"
    """A proposal stands and the rival participants answer it."""
    PASO = "paso"
    """Everybody passed: the lance is en paso."""
    ACCEPTED = "accepted"
    """A bet was accepted (``quiero``): it is paid at the count."""
    REFUSED = "refused"
    """Every answering participant said ``no_quiero``: the deje was paid at once."""
    NO_BET = "no_bet"
    """The participants are not from both teams: no betting, the lance is scored at the count."""
    ORDAGO = "ordago"
    """An órdago was accepted: the hand, and the game, end at once."""


#: Statuses in which the lance is closed.
CLOSED = frozenset(
    {BetStatus.PASO, BetStatus.ACCEPTED, BetStatus.REFUSED, BetStatus.NO_BET, BetStatus.ORDAGO}
)


_ORDAGO_ANSWERS = (Action(ActionKind.QUIERO), Action(ActionKind.NO_QUIERO))


def deje_of(accepted_before: int) -> int:
    """What refusing the standing proposal pays its team: 1 if nothing was accepted yet, else what stood."""
    return accepted_before if accepted_before > 0 else 1


@lru_cache(maxsize=64)
def _opening_actions(cap: int) -> tuple[Action, ...]:
    """Paso, every envido up to the cap, órdago (cached: actions are immutable)."""
    bets = (Action(ActionKind.ENVIDO, n) for n in range(MIN_BET, cap + 1))
    return (Action(ActionKind.PASO), *bets, Action(ActionKind.ORDAGO))


@lru_cache(maxsize=256)
def _answer_actions(room: int) -> tuple[Action, ...]:
    """Quiero, no quiero, every raise that fits in ``room`` stones, órdago."""
    raises = (Action(ActionKind.SUBE, n) for n in range(MIN_BET, room + 1))
    return (*_ORDAGO_ANSWERS, *raises, Action(ActionKind.ORDAGO))


@dataclass(slots=True)
class Betting:
    """The mutable betting state of one lance (owned by a :class:`engine.hand.Hand`)."""

    lance: Lance
    participants: tuple[int, ...]
    """Seats taking part, in speaking order."""
    max_bet: int
    """The cap on the standing bet: an envido or the total after a raise may not exceed it."""
    status: BetStatus = BetStatus.OPENING
    opening_index: int = 0
    proposal: int = 0
    """The standing proposal in stones (0 for an órdago or when nothing stands)."""
    accepted_before: int = 0
    """What stood before the current proposal (0 = nothing accepted yet)."""
    ordago: bool = False
    proposer: int | None = None
    answerers: tuple[int, ...] = ()
    answer_index: int = 0
    history: list[tuple[int, Action]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len({seat % 2 for seat in self.participants}) < 2:
            self.status = BetStatus.NO_BET

    # --- queries -------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether no more betting happens in this lance."""
        return self.status in CLOSED

    @property
    def turn(self) -> int | None:
        """The seat that must speak now, or ``None`` when the lance is closed."""
        if self.status is BetStatus.OPENING:
            return self.participants[self.opening_index]
        if self.status is BetStatus.ANSWERING:
            return self.answerers[self.answer_index]
        return None

    @property
    def proposer_team(self) -> int | None:
        """The team of the standing (or last) proposal."""
        return None if self.proposer is None else self.proposer % 2

    @property
    def amount(self) -> int:
        """Stones an accepted bet pays at the count (0 unless accepted)."""
        return self.proposal if self.status is BetStatus.ACCEPTED else 0

    @property
    def deje(self) -> int:
        """Stones the proposing team took when the proposal was refused."""
        if self.status is not BetStatus.REFUSED:
            return 0
        return deje_of(self.accepted_before)

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now (empty when it is not its turn)."""
        if self.turn != seat:
            return []
        if self.status is BetStatus.OPENING:
            return list(_opening_actions(self.max_bet))
        if self.ordago:
            return list(_ORDAGO_ANSWERS)
        return list(_answer_actions(self.max_bet - self.proposal))

    def check(self, seat: int, action: Action) -> None:
        """Raise the precise domain error if ``seat`` may not take ``action`` now."""
        if self.closed:
            raise IllegalActionError(f"there is no betting in {self.lance.value} now")
        if seat not in self.participants:
            raise NotParticipantError(f"seat {seat} takes no part in {self.lance.value}")
        if seat != self.turn:
            raise NotYourTurnError(f"it is seat {self.turn}'s turn in {self.lance.value}, not seat {seat}'s")
        kind = action.kind
        if self.status is BetStatus.OPENING:
            allowed = {ActionKind.PASO, ActionKind.ENVIDO, ActionKind.ORDAGO}
        elif self.ordago:
            allowed = {ActionKind.QUIERO, ActionKind.NO_QUIERO}
        else:
            allowed = {ActionKind.QUIERO, ActionKind.NO_QUIERO, ActionKind.SUBE, ActionKind.ORDAGO}
        if kind not in allowed:
            what = "open" if self.status is BetStatus.OPENING else "answer"
            words = ", ".join(sorted(k.value for k in allowed))
            raise IllegalActionError(f"seat {seat} must {what} with one of: {words}; not {action.word}")
        if kind in (ActionKind.ENVIDO, ActionKind.SUBE):
            room = self.max_bet - (self.proposal if kind is ActionKind.SUBE else 0)
            if not MIN_BET <= action.amount <= room:
                if room < MIN_BET:
                    raise BadAmountError(f"the bet stands at the cap of {self.max_bet}: no more raises")
                raise BadAmountError(
                    f"{kind.value} must be between {MIN_BET} and {room} stones, not {action.amount}"
                )

    # --- transitions ---------------------------------------------------------------------------------

    def apply(self, seat: int, action: Action) -> None:
        """Apply an action already validated by :meth:`check`."""
        self.history.append((seat, action))
        kind = action.kind
        if kind is ActionKind.PASO:
            self.opening_index += 1
            if self.opening_index == len(self.participants):
                self.status = BetStatus.PASO
        elif kind is ActionKind.ENVIDO:
            self._propose(seat, action.amount, accepted_before=0, ordago=False)
        elif kind is ActionKind.SUBE:
            self._propose(seat, self.proposal + action.amount, accepted_before=self.proposal, ordago=False)
        elif kind is ActionKind.ORDAGO:
            self._propose(seat, 0, accepted_before=self.proposal, ordago=True)
        elif kind is ActionKind.QUIERO:
            self.status = BetStatus.ORDAGO if self.ordago else BetStatus.ACCEPTED
        elif kind is ActionKind.NO_QUIERO:
            self.answer_index += 1
            if self.answer_index == len(self.answerers):
                self.status = BetStatus.REFUSED

    def _propose(self, seat: int, total: int, *, accepted_before: int, ordago: bool) -> None:
        self.status = BetStatus.ANSWERING
        self.proposal = total
        self.accepted_before = accepted_before
        self.ordago = ordago
        self.proposer = seat
        # Rivals answer starting with the seat after the proposer: seat + 1, then seat + 3.
        self.answerers = tuple(s for s in ((seat + 1) % 4, (seat + 3) % 4) if s in self.participants)
        self.answer_index = 0
