"""One hand of Mus as an explicit phase machine.

``MUS`` → (all four say mus) ``DISCARD`` → ``MUS`` … → (someone cuts) ``GRANDE`` → ``CHICA`` → ``PARES`` →
``JUEGO`` or ``PUNTO`` → ``COUNT`` → ``OVER``. A lance without betting is passed through at once; a deje that
reaches the target, or an accepted órdago, jumps straight to ``OVER``.

Each action has a check (:meth:`Hand.check`) raising a precise :class:`~engine.errors.MusError`, a query
(:meth:`Hand.can_act`) and the action itself (:meth:`Hand.act`) returning an immutable
:class:`~engine.hand_types.ActionRecord` appended to the hand's log. A failed check changes nothing.

RULES.md decisions encoded here: the mus round (the first ``no_mus`` cuts; four ``mus`` open the discards,
then the replacements); declarations public before pares and before juego or punto; a deje paid at once,
winning the game if it reaches the target; an accepted órdago ending the hand, cards shown; the count
stopping once a team reaches the target (later lines shown, never paid). The other rules it applies live in
:mod:`engine.betting`, :mod:`engine.lances`, :mod:`engine.stock` and :mod:`engine.senas`; its records and
options in :mod:`engine.hand_types`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine import lances, senas, stock
from engine.actions import Action, ActionKind
from engine.betting import BetStatus, Betting
from engine.cards import Card
from engine.errors import HandOverError, IllegalActionError, MusError, NotYourTurnError, RecordError
from engine.evaluation import HandEval, Lance, evaluate
from engine.hand_types import (
    LANCE_OF_PHASE,
    PHASE_OF_LANCE,
    ActionRecord,
    CountLine,
    HandConfig,
    LanceResult,
    OrdagoResult,
    Phase,
)
from engine.senas import CatchRecord, Sena, SenaRecord

if TYPE_CHECKING:
    from engine.views import SeatView

# Re-exported: the engine's public face (``engine/__init__.py`` and many callers) names them from here.
__all__ = ["Hand", "HandConfig", "Phase"]


class Hand:
    """The state of one hand. Create it with :meth:`deal` (random) or directly with explicit cards."""

    def __init__(
        self,
        *,
        mano: int,
        hands: Sequence[Sequence[Card]],
        deck: Sequence[Card],
        scores: Sequence[int] = (0, 0),
        config: HandConfig | None = None,
        rng: random.Random | None = None,
        reshuffles: Sequence[Sequence[Card]] = (),
    ) -> None:
        """Start a hand from explicit cards; ``deck`` is the undealt cards, top first.

        ``rng`` is used only when the deck runs out during replacements; ``reshuffles`` replays the decks
        such reshuffles produced before (from a record).
        """
        stock.check_deal(mano, hands, deck, scores)
        self.config = config or HandConfig()
        if self.config.target < 1:
            raise RecordError("the target must be at least 1 stone")
        self.mano = mano
        self.start_scores: tuple[int, int] = (scores[0], scores[1])
        self.initial_hands: tuple[tuple[Card, ...], ...] = tuple(tuple(h) for h in hands)
        self.initial_deck: tuple[Card, ...] = tuple(deck)
        self.rng = rng

        self.hands: list[list[Card]] = [list(h) for h in hands]
        self._stock = stock.Stock(deck, reshuffles)
        self.latest_discards: list[tuple[Card, ...]] = [(), (), (), ()]
        self.discard_counts: list[list[int]] = []
        """Per mus round, how many cards each seat discarded (public)."""
        self._round_discards: dict[int, tuple[Card, ...]] = {}
        self.mus_round = 0
        self._speakers_done = 0

        self.phase = Phase.MUS
        self.scores: list[int] = [scores[0], scores[1]]
        self.points: dict[Lance, list[int]] = {lance: [0, 0] for lance in Lance}
        self.evals: list[HandEval] | None = None
        self.betting: Betting | None = None
        self.results: dict[Lance, LanceResult] = {}
        self.count_lines: list[CountLine] = []
        self.uncounted: list[CountLine] = []
        """Lines the count did not pay because a team had already reached the target."""
        self.winner: int | None = None
        """The team that won the game during this hand, if any."""
        self.ordago: OrdagoResult | None = None
        self.shown = False
        """Whether the cards were shown (count or accepted órdago)."""
        self._declared: set[Lance] = set()
        self.log: list[ActionRecord] = []
        self.journal: list[tuple[int, str, float | None]] = []
        """Every accepted action, seña and catch in order, as record entries ``(seat, word, time)``."""
        self.senas: list[SenaRecord] = []
        self.catches: list[CatchRecord] = []

    # --- construction ------------------------------------------------------------------------------

    @classmethod
    def deal(
        cls,
        rng: random.Random,
        *,
        mano: int = 0,
        scores: Sequence[int] = (0, 0),
        config: HandConfig | None = None,
    ) -> Hand:
        """Shuffle with ``rng`` and deal four cards to each seat, one at a time, starting with the mano."""
        hands, deck = stock.deal(rng, mano)
        return cls(mano=mano, hands=hands, deck=deck, scores=scores, config=config, rng=rng)

    # --- queries ------------------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        """Whether the hand has ended."""
        return self.phase is Phase.OVER

    @property
    def lance(self) -> Lance | None:
        """The lance being bet, if any."""
        return LANCE_OF_PHASE.get(self.phase)

    @property
    def turn(self) -> int | None:
        """The seat that must act now, or ``None`` when the hand is over."""
        if self.phase in (Phase.MUS, Phase.DISCARD):
            return (self.mano + self._speakers_done) % 4
        if self.betting is not None and not self.betting.closed:
            return self.betting.turn
        return None

    @property
    def deck(self) -> list[Card]:
        """The undealt cards, top first."""
        return self._stock.deck

    @property
    def discard_pile(self) -> list[Card]:
        """Discarded cards not yet shuffled back into a deck."""
        return self._stock.discard_pile

    @property
    def reshuffles(self) -> list[list[Card]]:
        """Every deck a reshuffle made in this hand, in order (a record keeps them)."""
        return self._stock.reshuffles

    def pending_reshuffles(self) -> int:
        """Recorded reshuffles not yet used by the replay (a record with any left over is inconsistent)."""
        return self._stock.pending_reshuffles

    def speaking_order(self) -> list[int]:
        """Seats from the mano: mano, mano+1, mano+2, mano+3."""
        return [(self.mano + i) % 4 for i in range(4)]

    def declarations(self, lance: Lance) -> list[bool] | None:
        """Per seat, whether it holds pares (or juego); ``None`` before that declaration is public."""
        if self.evals is None or lance not in self._declared:
            return None
        if lance is Lance.PARES:
            return [ev.has_pares for ev in self.evals]
        return [ev.has_juego for ev in self.evals]

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now (empty when it may not act)."""
        if self.over or seat != self.turn:
            return []
        if self.phase is Phase.MUS:
            return [Action(ActionKind.MUS), Action(ActionKind.NO_MUS)]
        if self.phase is Phase.DISCARD:
            combos = stock.subsets(self.hands[seat])
            if self._speakers_done == 3:  # the last discard must leave the deck able to replace them all
                combos = [c for c in combos if self._can_replace(seat, c)]
            return [Action(ActionKind.DISCARD, cards=combo) for combo in combos]
        assert self.betting is not None
        return self.betting.legal_actions(seat)

    def view_for(self, seat: int) -> SeatView:
        """What ``seat`` may see of this hand: its own cards and what is public, nothing hidden."""
        from engine.views import hand_view  # views build on this module

        return hand_view(self, seat)

    def check(self, seat: int, action: Action) -> None:
        """Raise the precise domain error if ``seat`` may not take ``action`` now; change nothing."""
        if self.over:
            raise HandOverError("the hand is over")
        if seat not in range(4):
            raise IllegalActionError(f"there is no seat {seat!r}")
        if self.phase in (Phase.MUS, Phase.DISCARD):
            if seat != self.turn:
                raise NotYourTurnError(f"it is seat {self.turn}'s turn, not seat {seat}'s")
            if self.phase is Phase.MUS:
                if action.kind not in (ActionKind.MUS, ActionKind.NO_MUS):
                    raise IllegalActionError(f"in the mus round say mus or no_mus, not {action.word}")
                return
            stock.check_discard(seat, action, self.hands[seat])
            if self._speakers_done == 3 and not self._can_replace(seat, action.cards):
                # Only a hand built from a short explicit deck can get here; a dealt hand always can.
                raise RecordError("the deck holds too few cards to replace these discards")
            return
        assert self.betting is not None
        self.betting.check(seat, action)

    def can_act(self, seat: int, action: Action) -> bool:
        """Whether :meth:`act` would accept this action."""
        try:
            self.check(seat, action)
        except MusError:
            return False
        return True

    # --- actions ------------------------------------------------------------------------------------

    def act(self, seat: int, action: Action) -> ActionRecord:
        """Take an action for ``seat`` and return its record; if illegal, raise and change nothing."""
        self.check(seat, action)
        record = ActionRecord(len(self.log), seat, self.phase, action)
        self.log.append(record)
        self.journal.append((seat, action.word, None))
        kind = action.kind
        if self.phase is Phase.MUS:
            if kind is ActionKind.NO_MUS:
                self._cut()
            else:
                self._speakers_done += 1
                if self._speakers_done == 4:
                    self._speakers_done = 0
                    self.phase = Phase.DISCARD
        elif self.phase is Phase.DISCARD:
            self._round_discards[seat] = action.cards
            self.hands[seat] = [c for c in self.hands[seat] if c not in action.cards]
            self._speakers_done += 1
            if self._speakers_done == 4:
                self._replace()
        else:
            assert self.betting is not None
            self.betting.apply(seat, action)
            if self.betting.closed:
                self._close_lance()
        return record

    # --- señas (they take no turn; the rules of making and catching are in engine.senas) ---------------

    def make_sena(self, seat: int, sena: Sena | str, now: float = 0.0) -> SenaRecord:
        """Make a seña for ``seat`` at time ``now`` (the caller's clock); takes no turn."""
        self.check_sena(seat, sena)
        record = senas.new_sena(self.senas, seat, sena, now, len(self.log))
        self.senas.append(record)
        self.journal.append((seat, f"sena {record.sena.value}", record.made_at))
        return record

    def check_sena(self, seat: int, sena: Sena | str) -> None:
        """Raise :class:`SenaError` (or :class:`HandOverError`) unless ``seat`` may make this seña now."""
        senas.check_can_make(
            self.senas, seat, sena, over=self.over, enabled=self.config.senas, hands=self.hands
        )

    def catch_sena(
        self, seat: int, sena_index: int, now: float, *, shown_at: float | None = None
    ) -> CatchRecord:
        """A rival catches seña ``sena_index`` at ``now``, within the window and before the hand ends (which
        counts from ``shown_at``, when the catcher's screen showed the seña: :func:`senas.catch_moment`)."""
        window = self.config.catch_window
        now = senas.catch_moment(self.senas, sena_index, now, shown_at)
        senas.check_can_catch(self.senas, self.catches, seat, sena_index, now, over=self.over, window=window)
        record = CatchRecord(sena_index, seat, float(now))
        self.catches.append(record)
        self.journal.append((seat, f"catch {sena_index}", record.caught_at))
        return record

    def catch_window_open(self, sena_index: int, now: float) -> bool:
        """Whether seña ``sena_index`` can still be caught at ``now``: hand going on, window open."""
        made = self.senas[sena_index]
        return not self.over and senas.window_open(made, now, self.config.catch_window)

    def senas_made(self, seat: int) -> int:
        """How many señas ``seat`` has made this hand."""
        return senas.made_by(self.senas, seat)

    def sena_known_to(self, seat: int, sena_index: int) -> bool:
        """Whether ``seat`` knows which seña ``sena_index`` was (its own side's, or caught)."""
        return senas.known_to(self.senas, self.catches, seat, sena_index)

    # --- transitions --------------------------------------------------------------------------------

    def _cut(self) -> None:
        self.evals = [evaluate(h) for h in self.hands]
        self._open_lance(Lance.GRANDE)

    def _can_replace(self, seat: int, cards: tuple[Card, ...]) -> bool:
        """Whether the deck can replace this round's discards if ``seat``, the last, discards ``cards``."""
        return self._stock.can_replace(self.speaking_order(), {**self._round_discards, seat: cards})

    def _replace(self) -> None:
        """Deal replacements in speaking order, reshuffling discards if the deck runs out."""
        round_discards = self._round_discards
        self.discard_counts.append([len(round_discards[s]) for s in range(4)])
        order = self.speaking_order()
        for seat in order:
            self.latest_discards[seat] = round_discards[seat]
        self._stock.replace(order, round_discards, self.hands, self.rng)
        self._round_discards = {}
        self._speakers_done = 0
        self.mus_round += 1
        self.phase = Phase.MUS

    def _open_lance(self, lance: Lance) -> None:
        assert self.evals is not None
        while True:
            self.phase = PHASE_OF_LANCE[lance]
            if lance in (Lance.PARES, Lance.JUEGO, Lance.PUNTO):
                # Declarations are public before the lance (before punto: nobody has juego).
                self._declared.add(Lance.PARES if lance is Lance.PARES else Lance.JUEGO)
            seats = lances.participants(lance, self.evals, self.speaking_order())
            self.betting = Betting(lance, seats, self.config.bet_cap)
            if not self.betting.closed:
                return
            self._record_result()
            following = lances.next_lance(lance, self.evals)
            if following is None:
                self._count()
                return
            lance = following

    def _record_result(self) -> None:
        assert self.betting is not None
        self.results[self.betting.lance] = LanceResult.of(self.betting)

    def _close_lance(self) -> None:
        b = self.betting
        assert b is not None and self.evals is not None
        self._record_result()
        if b.status is BetStatus.REFUSED:
            team = b.proposer_team
            assert team is not None
            if self._pay(b.lance, team, b.deje):
                self._finish(shown=False)
                return
        elif b.status is BetStatus.ORDAGO:
            self.ordago = lances.ordago_result(b.lance, self.evals, self.mano, b.participants)
            self.winner = self.ordago.team
            self._finish(shown=True)
            return
        following = lances.next_lance(b.lance, self.evals)
        if following is None:
            self._count()
        else:
            self._open_lance(following)

    def _pay(self, lance: Lance, team: int, stones: int) -> bool:
        """Pay stones to a team; return whether that team has reached the target (and so won)."""
        self.points[lance][team] += stones
        self.scores[team] += stones
        if self.scores[team] >= self.config.target:
            self.winner = team
            return True
        return False

    def _count(self) -> None:
        """Score the lances in order, stopping as soon as a team reaches the target."""
        assert self.evals is not None
        self.phase = Phase.COUNT
        self.betting = None
        for line in lances.count_lines(self.results, self.evals, self.mano):
            if self.winner is not None:
                self.uncounted.append(line)  # the game was already won: shown to players, never paid
                continue
            self.count_lines.append(line)
            self._pay(line.lance, line.team, line.stones)
        self._finish(shown=True)

    def _finish(self, *, shown: bool) -> None:
        self.phase = Phase.OVER
        self.shown = shown
        if self.betting is not None and not self.betting.closed:
            self.betting = None

    # --- accounting ---------------------------------------------------------------------------------

    def all_cards(self) -> list[Card]:
        """Every card of the deck wherever it is now (hands, deck, discard pile, pending discards)."""
        pending = [c for cards in self._round_discards.values() for c in cards]
        return [*(c for h in self.hands for c in h), *self.deck, *self.discard_pile, *pending]

    def points_by_lance(self) -> dict[str, list[int]]:
        """Stones each team took from each lance in this hand (dejes included)."""
        return {lance.value: list(pts) for lance, pts in self.points.items()}
