"""Games, vacas and the match around the hands.

A game is won at the target (40 stones by default); a vaca by the first team to win ``games_per_vaca``
games (2); the match by the first team to win ``vacas_per_match`` vacas (2). Scores restart at 0 for each
game; the mano moves to the next seat every hand, across games too. A table may choose a single game
(``games_per_vaca=1, vacas_per_match=1``) or other targets.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.actions import Action, ActionKind
from engine.errors import HandOverError, MusError
from engine.evaluation import hand_code
from engine.hand import Hand
from engine.hand_types import DEFAULT_TARGET, LANCE_OF_PHASE, ActionRecord, HandConfig, Phase
from engine.senas import DEFAULT_CATCH_WINDOW, CatchRecord, Sena, SenaRecord
from engine.views import PublicAnswer, SeatView, hand_view

#: Stones in one amarraco.
STONES_PER_AMARRACO = 5


def amarracos(stones: int) -> tuple[int, int]:
    """Stones as (amarracos, loose piedras): 13 → (2, 3)."""
    return divmod(stones, STONES_PER_AMARRACO)


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """The table's options."""

    target: int = DEFAULT_TARGET
    games_per_vaca: int = 2
    vacas_per_match: int = 2
    senas: bool = False
    catch_window: float = DEFAULT_CATCH_WINDOW
    max_bet: int = 0

    def __post_init__(self) -> None:
        if self.target < 1 or self.games_per_vaca < 1 or self.vacas_per_match < 1:
            raise ValueError("targets must be at least 1")
        if self.catch_window <= 0:
            raise ValueError("the catch window must be positive")

    def hand_config(self) -> HandConfig:
        """The options a hand needs."""
        return HandConfig(
            target=self.target, senas=self.senas, catch_window=self.catch_window, max_bet=self.max_bet
        )


@dataclass(frozen=True, slots=True)
class HandOutcome:
    """What a finished hand changed at match level."""

    hand_number: int
    game_winner: int | None
    vaca_winner: int | None
    match_winner: int | None
    scores: tuple[int, int]
    """Scores at the end of the hand (before a new game resets them)."""


BIG_BET = 11
"""An envite or raise of this many stones or more, made with at least this many stones still needed, is a
*big bet*: sensible players rarely make one, so the table remembers who does (:attr:`Match.big_bets`)."""


def is_big_bet(amount: int, needed: int) -> bool:
    """Whether an envite or raise of ``amount`` stones, by a team ``needed`` stones short of the target, is
    a big bet (:data:`BIG_BET`)."""
    return amount >= BIG_BET and needed >= BIG_BET


def big_bets_of(hand: Hand) -> tuple[int, int]:
    """How many big bets (:data:`BIG_BET`) each team made in ``hand``, judged by its starting scores."""
    counts = [0, 0]
    for record in hand.log:
        team = record.seat % 2
        needed = hand.config.target - hand.start_scores[team]
        betting = record.action.kind in (ActionKind.ENVIDO, ActionKind.SUBE)
        if betting and is_big_bet(record.action.amount, needed):
            counts[team] += 1
    return counts[0], counts[1]


#: How many answers of the earlier hands the match remembers (the latest ones).
ANSWERS_KEPT = 48


def answers_of(hand: Hand) -> tuple[PublicAnswer, ...]:
    """Every answer to a standing bet or órdago in a finished ``hand``, with the answering seat's hand code
    when the cards were shown (public table talk, and public cards once shown).

    ``quiero`` and a raise (``sube``, ``ordago``) take the stake; ``no_quiero`` refuses it.
    """
    answers: list[PublicAnswer] = []
    standing: int | None = None
    phase: Phase | None = None
    for record in hand.log:
        lance = LANCE_OF_PHASE.get(record.phase)
        if lance is None:
            continue
        if record.phase is not phase:
            phase, standing = record.phase, None
        kind = record.action.kind
        seat = record.seat
        if standing is not None and kind in _ANSWERS:
            code = hand_code(hand.hands[seat]) if hand.shown else -1
            answers.append(PublicAnswer(seat, lance, standing, kind is not ActionKind.NO_QUIERO, code))
        if kind is ActionKind.ENVIDO:
            standing = record.action.amount
        elif kind is ActionKind.SUBE:
            standing = (standing or 0) + record.action.amount
        elif kind is ActionKind.ORDAGO:
            standing = 0
        elif kind is ActionKind.QUIERO:
            standing = None
    return tuple(answers)


_ANSWERS = (ActionKind.QUIERO, ActionKind.NO_QUIERO, ActionKind.SUBE, ActionKind.ORDAGO)


class Match:
    """A match of Mus: the current hand plus scores, games and vacas."""

    def __init__(self, config: MatchConfig | None = None, *, first_mano: int = 0) -> None:
        """A new match; call :meth:`new_hand` to deal the first hand."""
        if first_mano not in range(4):
            raise ValueError("first_mano must be a seat 0..3")
        self.config = config or MatchConfig()
        self.scores: list[int] = [0, 0]
        """Scores at the start of the current hand (the live ones are the hand's)."""
        self.games: list[int] = [0, 0]
        """Games won in the current vaca."""
        self.vacas: list[int] = [0, 0]
        self.games_total: list[int] = [0, 0]
        self.next_mano = first_mano
        self.hands_played = 0
        self.game_number = 1
        self.winner: int | None = None
        self.hand: Hand | None = None
        self.last_outcome: HandOutcome | None = None
        self.big_bets: list[int] = [0, 0]
        """Big bets (:data:`BIG_BET`) each team made in the finished hands of this match: public table
        talk that every player remembers (the machine players read a team that makes them as erratic)."""
        self.answers: list[PublicAnswer] = []
        """The latest answers to bets and órdagos in the finished hands (:func:`answers_of`, at most
        :data:`ANSWERS_KEPT`): who took or refused what, and the hand shown; the machine players learn from
        it how each rival answers."""

    @property
    def over(self) -> bool:
        """Whether the match has a winner."""
        return self.winner is not None

    @property
    def vaca_number(self) -> int:
        """The vaca being played, counting from 1."""
        return sum(self.vacas) + (0 if self.over else 1)

    def live_scores(self) -> tuple[int, int]:
        """The scores now, with the current hand's stones counted."""
        if self.hand is None or self.hand.over:
            return self.scores[0], self.scores[1]
        return self.hand.scores[0], self.hand.scores[1]

    def new_hand(self, rng: random.Random) -> Hand:
        """Deal the next hand with ``rng``; the previous one must be over and the match not."""
        if self.over:
            raise HandOverError("the match is over")
        if self.hand is not None and not self.hand.over:
            raise MusError("the current hand is still being played")
        self.hand = Hand.deal(rng, mano=self.next_mano, scores=self.scores, config=self.config.hand_config())
        return self.hand

    def start_hand(self, hand: Hand) -> None:
        """Use an explicitly built hand (its mano and scores must match the match's)."""
        if self.over or (self.hand is not None and not self.hand.over):
            raise MusError("cannot start a hand now")
        if hand.mano != self.next_mano or list(hand.start_scores) != self.scores:
            raise MusError("the hand does not continue this match")
        self.hand = hand

    def _current(self) -> Hand:
        if self.hand is None:
            raise HandOverError("no hand has been dealt")
        return self.hand

    def legal_actions(self, seat: int) -> list[Action]:
        """The current hand's legal actions for ``seat``."""
        return [] if self.hand is None else self.hand.legal_actions(seat)

    def view_for(self, seat: int) -> SeatView:
        """What ``seat`` may see: the current hand's view plus games, vacas and the match winner."""
        return replace(
            hand_view(self._current(), seat),
            games=(self.games[0], self.games[1]),
            vacas=(self.vacas[0], self.vacas[1]),
            games_per_vaca=self.config.games_per_vaca,
            vacas_per_match=self.config.vacas_per_match,
            match_winner=self.winner,
            big_bets=(self.big_bets[0], self.big_bets[1]),
            answers=tuple(self.answers),
        )

    def act(self, seat: int, action: Action) -> ActionRecord:
        """Act in the current hand; when the hand ends, settle it into the match."""
        hand = self._current()
        record = hand.act(seat, action)
        if hand.over:
            self._settle(hand)
        return record

    def make_sena(self, seat: int, sena: Sena | str, now: float) -> SenaRecord:
        """Make a seña in the current hand."""
        return self._current().make_sena(seat, sena, now)

    def catch_sena(
        self, seat: int, sena_index: int, now: float, *, shown_at: float | None = None
    ) -> CatchRecord:
        """Catch a seña in the current hand (the window counting from ``shown_at``, when given)."""
        return self._current().catch_sena(seat, sena_index, now, shown_at=shown_at)

    def _settle(self, hand: Hand) -> None:
        self.hands_played += 1
        for team, count in enumerate(big_bets_of(hand)):
            self.big_bets[team] += count
        self.answers = [*self.answers, *answers_of(hand)][-ANSWERS_KEPT:]
        self.next_mano = (hand.mano + 1) % 4
        final = (hand.scores[0], hand.scores[1])
        game_winner = hand.winner
        vaca_winner = match_winner = None
        if game_winner is None:
            self.scores = list(final)
        else:
            self.scores = [0, 0]
            self.games[game_winner] += 1
            self.games_total[game_winner] += 1
            self.game_number += 1
            if self.games[game_winner] >= self.config.games_per_vaca:
                vaca_winner = game_winner
                self.vacas[game_winner] += 1
                self.games = [0, 0]
                if self.vacas[game_winner] >= self.config.vacas_per_match:
                    match_winner = game_winner
                    self.winner = game_winner
        self.last_outcome = HandOutcome(self.hands_played, game_winner, vaca_winner, match_winner, final)

    def restore_counters(
        self,
        *,
        scores: Sequence[int],
        games: Sequence[int],
        vacas: Sequence[int],
        games_total: Sequence[int],
        next_mano: int,
        hands_played: int,
        game_number: int,
        winner: int | None,
        big_bets: Sequence[int] = (0, 0),
        answers: Sequence[PublicAnswer] = (),
    ) -> None:
        """Set the match-level counters (used when loading a saved match)."""
        self.scores = list(scores)
        self.games = list(games)
        self.vacas = list(vacas)
        self.games_total = list(games_total)
        self.next_mano = next_mano
        self.hands_played = hands_played
        self.game_number = game_number
        self.winner = winner
        self.big_bets = list(big_bets)
        self.answers = list(answers)[-ANSWERS_KEPT:]
