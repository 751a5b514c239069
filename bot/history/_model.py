"""A finished hand as history keeps it: its full record (replayable), the table around it, a short summary.

A :class:`KeptHand` is built once, when a hand is over (:func:`kept_hand`), and stored as JSON in the
history store (:mod:`bot.history._store`). It holds everything needed to tell the hand again in any
language, without the table it was played at (which may be gone): the seats' names, the options, where the
hand stood in the match, the engine's record (deal, deck order, every action, señas and catches with their
times) and the summary — who won each lance and how, the score after, and what the hand won (a game, a
vaca, the match). Only finished hands are ever kept, so every card in it is one the table may see.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.kernel import HandPosition, Seat, TableOptions, TableState
from engine.betting import BetStatus
from engine.hand import Hand
from engine.match import Match
from engine.record import HandRecord, record_of, replay

FORMAT: Literal["mus-history/1"] = "mus-history/1"


class KeptSeat(BaseModel):
    """A seat as the hand saw it: a person's name, or a machine."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str = ""
    machine: bool = False


class LanceSummary(BaseModel):
    """How one lance of the hand went: how its betting ended, who won it, the stones each team took."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    lance: str
    """The lance (``grande``, ``chica``, ``pares``, ``juego`` or ``punto``)."""
    status: str
    """How its betting ended (``paso``, ``accepted``, ``refused``, ``ordago``, ``no_bet``)."""
    amount: int = 0
    """The accepted bet (accepted), or the deje (refused)."""
    proposer_team: int | None = None
    """The team whose proposal was refused (refused)."""
    team: int | None = None
    """The team that won the lance (``None``: nobody, e.g. nobody held pares)."""
    stones: tuple[int, int] = (0, 0)
    """Stones each team took from the lance in this hand (dejes included)."""


class KeptHand(BaseModel):
    """One finished hand, as kept (``mus-history/1``)."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["mus-history/1"] = FORMAT
    table: str
    chat: str
    chat_title: str = ""
    lang: str = "es"
    hand_no: int = Field(ge=1)
    at: float = 0.0
    """When the hand ended (epoch seconds)."""
    seats: list[KeptSeat]
    options: TableOptions = Field(default_factory=TableOptions)
    position: HandPosition = Field(default_factory=HandPosition)
    record: HandRecord
    lances: list[LanceSummary] = Field(default_factory=list)
    scores: tuple[int, int] = (0, 0)
    """The scores after the hand, uncapped (as ``engine.replay`` says them)."""
    ordago: tuple[str, int] | None = None
    """An accepted órdago: its lance and the team that won it."""
    game_winner: int | None = None
    vaca_winner: int | None = None
    match_winner: int | None = None

    def table_state(self, lang: str | None = None) -> TableState:
        """A table to render this hand with (names, options, position), read in ``lang``."""
        seats = [Seat(name=s.name, machine=s.machine) for s in self.seats]
        return TableState(
            id=self.table,
            chat=self.chat,
            chat_title=self.chat_title,
            creator="",
            lang=lang or self.lang,
            seats=seats,
            options=self.options,
            hand_no=self.hand_no,
            position=self.position,
        )

    def replayed(self) -> Hand:
        """The hand rebuilt from its record (raises a domain error should the record be illegal)."""
        return replay(self.record)


def lance_summaries(hand: Hand) -> list[LanceSummary]:
    """Who won each lance of a finished hand, and how: from its results, its count and its órdago."""
    points = hand.points_by_lance()
    paid = {line.lance: line for line in (*hand.count_lines, *hand.uncounted)}
    out: list[LanceSummary] = []
    for result in hand.results.values():
        team: int | None
        if result.status is BetStatus.REFUSED:
            team, amount = result.proposer_team, result.deje
        elif result.status is BetStatus.ORDAGO:
            team, amount = (hand.ordago.team if hand.ordago is not None else None), 0
        else:
            line = paid.get(result.lance)
            team, amount = (None if line is None else line.team), result.amount
        stones = points.get(result.lance.value, [0, 0])
        out.append(
            LanceSummary(
                lance=result.lance.value,
                status=result.status.value,
                amount=amount,
                proposer_team=result.proposer_team,
                team=team,
                stones=(stones[0], stones[1]),
            )
        )
    return out


def kept_hand(table: TableState, match: Match, at: float) -> KeptHand:
    """The current (finished) hand of ``table``'s match, as history keeps it."""
    hand = match.hand
    assert hand is not None and hand.over, "only a finished hand is kept"
    outcome = match.last_outcome
    return KeptHand(
        table=table.id,
        chat=table.chat,
        chat_title=table.chat_title,
        lang=table.lang,
        hand_no=table.hand_no,
        at=at,
        seats=[KeptSeat(name=s.name, machine=s.machine) for s in table.seats],
        options=table.options,
        position=table.position,
        record=record_of(hand),
        lances=lance_summaries(hand),
        scores=(hand.scores[0], hand.scores[1]),
        ordago=None if hand.ordago is None else (hand.ordago.lance.value, hand.ordago.team),
        game_winner=None if outcome is None else outcome.game_winner,
        vaca_winner=None if outcome is None else outcome.vaca_winner,
        match_winner=None if outcome is None else outcome.match_winner,
    )
