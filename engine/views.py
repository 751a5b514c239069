"""Per-seat observations: the only thing players, renderers and machine players ever see.

A :class:`SeatView` holds the seat's own cards, what is public (declarations once made, bets, results,
how many cards each seat discarded, that a seña was made), the partner's señas, the señas this seat caught,
and every hand only after the showdown. It never holds another seat's hidden cards: discards of other seats
are counts, not cards.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.actions import Action, ActionKind
from engine.betting import BetStatus, deje_of
from engine.cards import Card
from engine.evaluation import HandEval, Lance, evaluate
from engine.hand import Hand
from engine.hand_types import CountLine, LanceResult, OrdagoResult, Phase
from engine.senas import MAX_SENAS_PER_HAND, Sena


@dataclass(frozen=True, slots=True)
class PublicAction:
    """An action as everyone saw it: a discard shows how many cards, not which."""

    seat: int
    phase: Phase
    kind: ActionKind
    amount: int = 0
    cards: tuple[Card, ...] = ()
    """The discarded cards: only in the discarding seat's own view."""
    count: int = 0
    """Number of cards discarded."""
    total: int = 0
    """For an envido or a raise: the standing bet it made (``sube 5`` over 7 → 12); 0 otherwise."""


@dataclass(frozen=True, slots=True)
class PublicAnswer:
    """An answer to a standing bet or órdago in an earlier hand of the match, as everyone saw it."""

    seat: int
    lance: Lance
    stake: int
    """The bet standing when the seat answered (``0``: an órdago)."""
    accepted: bool
    """Whether the seat took the stake (``quiero``, or a raise over it)."""
    shown_code: int
    """The rank-multiset code (:func:`engine.evaluation.hand_code`) of the hand the seat showed at the end of
    that hand; ``-1`` when the cards were not shown."""


@dataclass(frozen=True, slots=True)
class BettingView:
    """The public state of the lance being bet."""

    lance: Lance
    status: BetStatus
    participants: tuple[int, ...]
    proposal: int
    accepted_before: int
    ordago: bool
    proposer: int | None

    @property
    def deje_if_refused(self) -> int:
        """What the proposing team would take now if its proposal were refused (the stake's other side)."""
        return deje_of(self.accepted_before)


@dataclass(frozen=True, slots=True)
class SenaView:
    """A seña as one seat sees it: ``sena`` is ``None`` when this seat does not know which it was."""

    index: int
    seat: int
    made_at: float
    sena: Sena | None


@dataclass(frozen=True, slots=True)
class SeatView:
    """What seat ``seat`` may know about the hand (and the match around it, when given)."""

    seat: int
    mano: int
    phase: Phase
    turn: int | None
    cards: tuple[Card, ...]
    legal: tuple[Action, ...]
    scores: tuple[int, int]
    start_scores: tuple[int, int]
    target: int
    senas_enabled: bool
    catch_window: float
    mus_round: int
    deck_size: int
    pares_declared: tuple[bool, ...] | None
    juego_declared: tuple[bool, ...] | None
    betting: BettingView | None
    results: tuple[LanceResult, ...]
    actions: tuple[PublicAction, ...]
    senas: tuple[SenaView, ...]
    senas_left: int
    shown: tuple[tuple[Card, ...], ...] | None
    """Every seat's cards, only after the showdown."""
    count: tuple[CountLine, ...]
    uncounted: tuple[CountLine, ...]
    """What the count would have paid after a team reached the target (shown, never paid)."""
    points: tuple[tuple[Lance, int, int], ...]
    winner: int | None
    ordago: OrdagoResult | None
    games: tuple[int, int] = (0, 0)
    vacas: tuple[int, int] = (0, 0)
    games_per_vaca: int = 2
    vacas_per_match: int = 2
    big_bets: tuple[int, int] = (0, 0)
    """Big bets each team made in the earlier hands of the match (:data:`engine.match.BIG_BET`)."""
    answers: tuple[PublicAnswer, ...] = ()
    """Answers to bets and órdagos in the earlier hands of the match (:func:`engine.match.answers_of`)."""
    match_winner: int | None = None

    @property
    def team(self) -> int:
        """This seat's team (``seat % 2``)."""
        return self.seat % 2

    @property
    def partner(self) -> int:
        """The partner's seat."""
        return (self.seat + 2) % 4

    @property
    def on_turn(self) -> bool:
        """Whether this seat must act now."""
        return self.turn == self.seat

    @property
    def lance(self) -> Lance | None:
        """The lance being bet, if any."""
        return None if self.betting is None else self.betting.lance

    @property
    def evaluation(self) -> HandEval | None:
        """The evaluation of this seat's own four cards (``None`` while waiting for replacements)."""
        return evaluate(self.cards) if len(self.cards) == 4 else None

    def partner_senas(self) -> list[Sena]:
        """The señas the partner made this hand."""
        return [s.sena for s in self.senas if s.seat == self.partner and s.sena is not None]


def _standing_totals(hand: Hand) -> list[int]:
    """For each logged action, the bet standing after it when it was an envido or a raise (else 0)."""
    totals: list[int] = []
    standing: dict[Phase, int] = {}
    for r in hand.log:
        kind = r.action.kind
        if kind is ActionKind.ENVIDO:
            standing[r.phase] = r.action.amount
        elif kind is ActionKind.SUBE:
            standing[r.phase] = standing.get(r.phase, 0) + r.action.amount
        totals.append(standing[r.phase] if kind in (ActionKind.ENVIDO, ActionKind.SUBE) else 0)
    return totals


def hand_view(hand: Hand, seat: int) -> SeatView:
    """Build the observation of ``seat`` (0..3)."""
    if seat not in range(4):
        raise ValueError(f"there is no seat {seat!r}")
    b = hand.betting
    betting = None
    if b is not None and not b.closed:
        betting = BettingView(
            b.lance, b.status, b.participants, b.proposal, b.accepted_before, b.ordago, b.proposer
        )
    actions = tuple(
        PublicAction(
            r.seat,
            r.phase,
            r.action.kind,
            r.action.amount,
            r.action.cards if r.seat == seat else (),
            len(r.action.cards),
            total,
        )
        for r, total in zip(hand.log, _standing_totals(hand), strict=True)
    )
    senas = tuple(
        SenaView(s.index, s.seat, s.made_at, s.sena if hand.sena_known_to(seat, s.index) else None)
        for s in hand.senas
    )
    pares = hand.declarations(Lance.PARES)
    juego = hand.declarations(Lance.JUEGO)
    return SeatView(
        seat=seat,
        mano=hand.mano,
        phase=hand.phase,
        turn=hand.turn,
        cards=tuple(hand.hands[seat]),
        legal=tuple(hand.legal_actions(seat)),
        scores=(hand.scores[0], hand.scores[1]),
        start_scores=hand.start_scores,
        target=hand.config.target,
        senas_enabled=hand.config.senas,
        catch_window=hand.config.catch_window,
        mus_round=hand.mus_round,
        deck_size=len(hand.deck),
        pares_declared=None if pares is None else tuple(pares),
        juego_declared=None if juego is None else tuple(juego),
        betting=betting,
        results=tuple(hand.results.values()),
        actions=actions,
        senas=senas,
        senas_left=MAX_SENAS_PER_HAND - hand.senas_made(seat),
        shown=tuple(tuple(h) for h in hand.hands) if hand.shown else None,
        count=tuple(hand.count_lines),
        uncounted=tuple(hand.uncounted),
        points=tuple((lance, pts[0], pts[1]) for lance, pts in hand.points.items()),
        winner=hand.winner,
        ordago=hand.ordago,
    )


__all__ = [
    "BettingView",
    "PublicAction",
    "PublicAnswer",
    "SeatView",
    "SenaView",
    "hand_view",
]
