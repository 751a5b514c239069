"""One hand of Mus as an explicit phase machine.

``MUS`` → (all four say mus) ``DISCARD`` → ``MUS`` … → (someone cuts) ``GRANDE`` → ``CHICA`` → ``PARES`` →
``JUEGO`` or ``PUNTO`` → ``COUNT`` → ``OVER``. A lance without betting is passed through at once; a deje that
reaches the target, or an accepted órdago, jumps straight to ``OVER``.

Each action has a check (:meth:`Hand.check`) raising a precise :class:`~engine.errors.MusError`, a query
(:meth:`Hand.can_act`) and the action itself (:meth:`Hand.act`) returning an immutable
:class:`ActionRecord` appended to the hand's log. A failed check changes nothing.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from engine.actions import Action, ActionKind
from engine.betting import BetStatus, Betting
from engine.cards import DECK_SIZE, FULL_DECK, Card, card_names
from engine.errors import (
    CatchError,
    DiscardError,
    HandOverError,
    IllegalActionError,
    MusError,
    NotYourTurnError,
    RecordError,
    SenaError,
)
from engine.evaluation import HandEval, Lance, best_seat, evaluate
from engine.senas import (
    DEFAULT_CATCH_WINDOW,
    MAX_SENAS_PER_HAND,
    CatchRecord,
    Sena,
    SenaRecord,
    sena_is_true,
)

if TYPE_CHECKING:
    from engine.views import SeatView

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
_PHASE_OF_LANCE = {lance: phase for phase, lance in LANCE_OF_PHASE.items()}


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
        if mano not in range(4):
            raise RecordError(f"mano must be a seat 0..3, not {mano!r}")
        if len(hands) != 4 or any(len(h) != 4 for h in hands):
            raise RecordError("a hand needs four seats of four cards each")
        if len(scores) != 2 or any(not isinstance(s, int) or s < 0 for s in scores):
            raise RecordError(f"scores must be two stones counts, not {scores!r}")
        dealt = [c for h in hands for c in h]
        every = [*dealt, *deck]
        if any(not isinstance(c, int) or not 0 <= c < DECK_SIZE for c in every):
            raise RecordError("a card is out of range")
        if len(set(every)) != len(every):
            raise RecordError(f"a card appears twice: {' '.join(card_names(every))}")
        self.config = config or HandConfig()
        if self.config.target < 1:
            raise RecordError("the target must be at least 1 stone")
        self.mano = mano
        self.start_scores: tuple[int, int] = (scores[0], scores[1])
        self.initial_hands: tuple[tuple[Card, ...], ...] = tuple(tuple(h) for h in hands)
        self.initial_deck: tuple[Card, ...] = tuple(deck)
        self.rng = rng
        self._replay_reshuffles: list[list[Card]] = [list(d) for d in reshuffles]
        self.reshuffles: list[list[Card]] = []

        self.hands: list[list[Card]] = [list(h) for h in hands]
        self.deck: list[Card] = list(deck)
        self.discard_pile: list[Card] = []
        """Discarded cards not yet shuffled back into a deck."""
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
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        hands: list[list[Card]] = [[], [], [], []]
        for i in range(16):
            hands[(mano + i) % 4].append(deck[i])
        return cls(mano=mano, hands=hands, deck=deck[16:], scores=scores, config=config, rng=rng)

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

    def pending_reshuffles(self) -> int:
        """Recorded reshuffles not yet used by the replay (a record with any left over is inconsistent)."""
        return len(self._replay_reshuffles)

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
            combos = _subsets(self.hands[seat])
            if self._speakers_done == 3:  # the last discard must leave the deck able to replace them all
                combos = [c for c in combos if self._can_replace({**self._round_discards, seat: c})]
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
            if action.kind is not ActionKind.DISCARD:
                raise IllegalActionError(f"seat {seat} must discard, not {action.word}")
            cards = action.cards
            if not 1 <= len(cards) <= 4:
                raise DiscardError(f"discard 1 to 4 cards, not {len(cards)}")
            if len(set(cards)) != len(cards):
                raise DiscardError("a card is discarded twice")
            missing = [c for c in cards if c not in self.hands[seat]]
            if missing:
                raise DiscardError(f"seat {seat} does not hold {' '.join(card_names(missing))}")
            if self._speakers_done == 3 and not self._can_replace({**self._round_discards, seat: cards}):
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

    def make_sena(self, seat: int, sena: Sena | str, now: float = 0.0) -> SenaRecord:
        """Make a seña for ``seat`` at time ``now`` (the caller's clock); takes no turn."""
        self.check_sena(seat, sena)
        if not math.isfinite(now):
            raise SenaError(f"a seña needs a finite time, not {now!r}")
        record = SenaRecord(len(self.senas), seat, Sena(sena), float(now), len(self.log))
        self.senas.append(record)
        self.journal.append((seat, f"sena {record.sena.value}", record.made_at))
        return record

    def check_sena(self, seat: int, sena: Sena | str) -> None:
        """Raise :class:`SenaError` (or :class:`HandOverError`) unless ``seat`` may make this seña now."""
        if self.over:
            raise HandOverError("the hand is over")
        if seat not in range(4):
            raise SenaError(f"there is no seat {seat!r}")
        if not self.config.senas:
            raise SenaError("señas are off at this table")
        try:
            name = Sena(sena)
        except ValueError:
            raise SenaError(f"unknown seña {sena!r}") from None
        if len(self.hands[seat]) != 4:
            raise SenaError(f"seat {seat} is waiting for its new cards")
        if self.senas_made(seat) >= MAX_SENAS_PER_HAND:
            raise SenaError(f"seat {seat} has made its {MAX_SENAS_PER_HAND} señas this hand")
        if not sena_is_true(name, self.hands[seat]):
            raise SenaError(f"{name.value} is not true of seat {seat}'s cards")

    def catch_sena(self, seat: int, sena_index: int, now: float) -> CatchRecord:
        """A rival catches seña ``sena_index`` at ``now``, within the window and before the hand ends."""
        if self.over:
            raise HandOverError("the hand is over")
        if not math.isfinite(now):
            raise CatchError(f"a catch needs a finite time, not {now!r}")
        if seat not in range(4):
            raise CatchError(f"there is no seat {seat!r}")
        if not 0 <= sena_index < len(self.senas):
            raise CatchError(f"there is no seña {sena_index!r}")
        made = self.senas[sena_index]
        if made.seat % 2 == seat % 2:
            raise CatchError("only a rival catches a seña; partners see it anyway")
        if any(c.sena_index == sena_index and c.seat == seat for c in self.catches):
            raise CatchError("already caught")
        if not self.catch_window_open(sena_index, now):
            raise CatchError("too late: the catch window has closed")
        record = CatchRecord(sena_index, seat, float(now))
        self.catches.append(record)
        self.journal.append((seat, f"catch {sena_index}", record.caught_at))
        return record

    def catch_window_open(self, sena_index: int, now: float) -> bool:
        """Whether seña ``sena_index`` can still be caught at ``now``: hand going on, window open."""
        made = self.senas[sena_index]
        return not self.over and made.made_at <= now <= made.made_at + self.config.catch_window

    def senas_made(self, seat: int) -> int:
        """How many señas ``seat`` has made this hand."""
        return sum(1 for s in self.senas if s.seat == seat)

    def sena_known_to(self, seat: int, sena_index: int) -> bool:
        """Whether ``seat`` knows which seña ``sena_index`` was (its own side's, or caught)."""
        made = self.senas[sena_index]
        if made.seat % 2 == seat % 2:
            return True
        return any(c.sena_index == sena_index and c.seat == seat for c in self.catches)

    # --- transitions --------------------------------------------------------------------------------

    def _cut(self) -> None:
        self.evals = [evaluate(h) for h in self.hands]
        self._open_lance(Lance.GRANDE)

    def _can_replace(self, round_discards: dict[int, tuple[Card, ...]]) -> bool:
        """Whether :meth:`_replace` would find enough cards (it follows the same steps, counting only)."""
        deck = len(self.deck)
        pile = len(self.discard_pile) + sum(len(c) for c in round_discards.values())
        for position, seat in enumerate(self.speaking_order()):
            needed = len(round_discards[seat])
            taken = min(deck, needed)
            deck -= taken
            if needed > taken:
                set_aside = needed if position == 3 else 0
                deck, pile = pile - set_aside, set_aside
                if deck < needed - taken:
                    return False
                deck -= needed - taken
        return True

    def _replace(self) -> None:
        """Deal replacements in speaking order, reshuffling discards if the deck runs out."""
        order = self.speaking_order()
        round_discards = self._round_discards
        self.discard_counts.append([len(round_discards[s]) for s in range(4)])
        for seat in order:
            self.latest_discards[seat] = round_discards[seat]
            self.discard_pile.extend(round_discards[seat])
        for position, seat in enumerate(order):
            needed = len(round_discards[seat])
            for _ in range(needed):
                if not self.deck:
                    lone_waiter = position == 3
                    self._reshuffle(set_aside=self.latest_discards[seat] if lone_waiter else ())
                self.hands[seat].append(self.deck.pop(0))
        self._round_discards = {}
        self._speakers_done = 0
        self.mus_round += 1
        self.phase = Phase.MUS

    def _reshuffle(self, set_aside: tuple[Card, ...]) -> None:
        """Shuffle the discard pile into a new deck, keeping ``set_aside`` out (RULES.md, deck runs out)."""
        pile = [c for c in self.discard_pile if c not in set_aside]
        if self._replay_reshuffles:
            new_deck = self._replay_reshuffles.pop(0)
            if sorted(new_deck) != sorted(pile):
                raise RecordError("a recorded reshuffle does not hold the discarded cards")
        else:
            rng = self.rng or random.Random(0)
            new_deck = list(pile)
            rng.shuffle(new_deck)
        self.reshuffles.append(list(new_deck))
        self.discard_pile = [c for c in self.discard_pile if c in set_aside]
        self.deck = list(new_deck)

    def _open_lance(self, lance: Lance) -> None:
        assert self.evals is not None
        while True:
            self.phase = _PHASE_OF_LANCE[lance]
            if lance in (Lance.PARES, Lance.JUEGO, Lance.PUNTO):
                # Declarations are public before the lance (before punto: nobody has juego).
                self._declared.add(Lance.PARES if lance is Lance.PARES else Lance.JUEGO)
            order = self.speaking_order()
            if lance is Lance.PARES:
                seats = tuple(s for s in order if self.evals[s].has_pares)
            elif lance is Lance.JUEGO:
                seats = tuple(s for s in order if self.evals[s].has_juego)
            else:
                seats = tuple(order)
            self.betting = Betting(lance, seats, self.config.bet_cap)
            if not self.betting.closed:
                return
            self._record_result()
            following = self._next_lance(lance)
            if following is None:
                self._count()
                return
            lance = following

    def _next_lance(self, lance: Lance) -> Lance | None:
        assert self.evals is not None
        if lance is Lance.GRANDE:
            return Lance.CHICA
        if lance is Lance.CHICA:
            return Lance.PARES
        if lance is Lance.PARES:
            return Lance.JUEGO if any(ev.has_juego for ev in self.evals) else Lance.PUNTO
        return None

    def _record_result(self) -> None:
        b = self.betting
        assert b is not None
        self.results[b.lance] = LanceResult(
            b.lance, b.status, b.participants, b.amount, b.deje, b.proposer_team
        )

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
            keys = [ev.key(b.lance) for ev in self.evals]
            seat = best_seat(keys, self.mano, b.participants)
            assert seat is not None
            self.ordago = OrdagoResult(b.lance, seat % 2, seat)
            self.winner = seat % 2
            self._finish(shown=True)
            return
        following = self._next_lance(b.lance)
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
        for lance in (Lance.GRANDE, Lance.CHICA, Lance.PARES, Lance.JUEGO, Lance.PUNTO):
            result = self.results.get(lance)
            if result is None:
                continue
            line = self._award(result)
            if line is None or line.stones == 0:
                continue
            if self.winner is not None:
                self.uncounted.append(line)  # the game was already won: shown to players, never paid
                continue
            self.count_lines.append(line)
            self._pay(lance, line.team, line.stones)
        self._finish(shown=True)

    def _award(self, result: LanceResult) -> CountLine | None:
        """What a closed lance pays at the count, and to whom (``None`` when it pays nothing)."""
        assert self.evals is not None
        lance, evals = result.lance, self.evals
        if result.status is BetStatus.REFUSED:
            if lance in (Lance.GRANDE, Lance.CHICA):
                return None  # the deje was the whole payment
            team = result.proposer_team
            assert team is not None
        else:
            seat = best_seat([ev.key(lance) for ev in evals], self.mano)
            if seat is None:
                return None  # nobody holds pares (or juego)
            team = seat % 2
        bet = result.amount
        if lance in (Lance.GRANDE, Lance.CHICA):
            return CountLine(lance, team, bet or 1, 0)
        if lance is Lance.PUNTO:
            return CountLine(lance, team, bet, 1)
        mates = (team, team + 2)
        if lance is Lance.PARES:
            bonuses = tuple((s, evals[s].pares_bonus) for s in mates if evals[s].pares_bonus)
        else:
            bonuses = tuple((s, evals[s].juego_bonus) for s in mates if evals[s].juego_bonus)
        return CountLine(lance, team, bet, sum(b for _, b in bonuses), bonuses)

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


def _subsets(cards: Sequence[Card]) -> list[tuple[Card, ...]]:
    """Every non-empty subset of a seat's cards (1 to 4 of them), in a stable order."""
    n = len(cards)
    return [tuple(cards[i] for i in range(n) if mask >> i & 1) for mask in range(1, 1 << n)]
