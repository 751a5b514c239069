"""Saving and loading a whole match as JSON (pydantic v2).

The saved form is the match counters plus the current hand's *record* (deal, deck order, action log, señas
with their times, reshuffled decks); loading replays that record, so a loaded match is the same state by
construction. The JSON carries a schema version.

Saves are read across one version up and down (workers of two versions share the stored tables during a
rolling upgrade): a field this engine does not know is ignored (as :class:`~engine.record.HandRecord` does),
a field it knows but the save lacks takes its default, and a save of a newer schema is read if it parses. A
newer engine therefore adds fields with a default meaning "as before", and changes nothing an older one
reads in another way (that takes two releases: the new field beside the old, then the old one dropped).
"""

from __future__ import annotations

import random
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from engine.errors import MusError, RecordError
from engine.evaluation import Lance
from engine.hand import Hand
from engine.match import HandOutcome, Match, MatchConfig
from engine.record import HandRecord, record_of, replay
from engine.views import PublicAnswer

SCHEMA_VERSION = 1


class OutcomeModel(BaseModel):
    """A saved :class:`~engine.match.HandOutcome`."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    hand_number: int
    game_winner: int | None
    vaca_winner: int | None
    match_winner: int | None
    scores: tuple[int, int]


_LANCES = tuple(Lance)
_STAKES = 64


def pack_answer(answer: PublicAnswer) -> int:
    """A :class:`~engine.views.PublicAnswer` as one integer (the saved form stays small: a match remembers
    dozens of them). Stakes above 63 stones are saved as 63."""
    packed = (answer.shown_code + 1) * 4 + answer.seat
    packed = packed * len(_LANCES) + _LANCES.index(answer.lance)
    packed = packed * _STAKES + min(answer.stake, _STAKES - 1)
    return packed * 2 + int(answer.accepted)


@lru_cache(maxsize=65536)
def unpack_answer(packed: int) -> PublicAnswer:
    """The answer saved by :func:`pack_answer` (cached: a table loads the same answers on every move, and
    the answers are immutable)."""
    packed, accepted = divmod(packed, 2)
    packed, stake = divmod(packed, _STAKES)
    packed, lance = divmod(packed, len(_LANCES))
    code, seat = divmod(packed, 4)
    return PublicAnswer(seat, _LANCES[lance], stake, bool(accepted), code - 1)


class MatchState(BaseModel):
    """A whole match, as saved (read tolerantly: see the module's docstring)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    schema_version: int = Field(default=SCHEMA_VERSION, ge=1)
    """The schema that wrote the save: 1, the first, or a newer one (read as far as understood)."""
    target: int = Field(ge=1)
    games_per_vaca: int = Field(ge=1)
    vacas_per_match: int = Field(ge=1)
    senas: bool
    catch_window: float = Field(gt=0)
    max_bet: int = Field(ge=0)
    scores: tuple[int, int]
    games: tuple[int, int]
    vacas: tuple[int, int]
    games_total: tuple[int, int]
    next_mano: int = Field(ge=0, le=3)
    hands_played: int = Field(ge=0)
    game_number: int = Field(ge=1)
    winner: int | None = None
    hand: HandRecord | None = None
    last_outcome: OutcomeModel | None = None
    big_bets: tuple[NonNegativeInt, NonNegativeInt] = (0, 0)
    answers: tuple[NonNegativeInt, ...] = ()
    """The match's remembered answers, each packed by :func:`pack_answer`."""


def match_state(match: Match) -> MatchState:
    """The saved form of a match."""
    cfg = match.config
    outcome = match.last_outcome
    return MatchState(
        target=cfg.target,
        games_per_vaca=cfg.games_per_vaca,
        vacas_per_match=cfg.vacas_per_match,
        senas=cfg.senas,
        catch_window=cfg.catch_window,
        max_bet=cfg.max_bet,
        scores=(match.scores[0], match.scores[1]),
        games=(match.games[0], match.games[1]),
        vacas=(match.vacas[0], match.vacas[1]),
        games_total=(match.games_total[0], match.games_total[1]),
        next_mano=match.next_mano,
        hands_played=match.hands_played,
        game_number=match.game_number,
        winner=match.winner,
        big_bets=(match.big_bets[0], match.big_bets[1]),
        answers=tuple(pack_answer(a) for a in match.answers),
        hand=None if match.hand is None else record_of(match.hand),
        last_outcome=None
        if outcome is None
        else OutcomeModel(
            hand_number=outcome.hand_number,
            game_winner=outcome.game_winner,
            vaca_winner=outcome.vaca_winner,
            match_winner=outcome.match_winner,
            scores=outcome.scores,
        ),
    )


def dump_match(match: Match) -> str:
    """The match as compact JSON."""
    return match_state(match).model_dump_json(exclude_defaults=False)


def restore_match(state: MatchState, rng: random.Random | None = None) -> Match:
    """Rebuild a match from its saved form (of any schema it parses as); ``rng`` serves later reshuffles of
    the current hand."""
    config = MatchConfig(
        target=state.target,
        games_per_vaca=state.games_per_vaca,
        vacas_per_match=state.vacas_per_match,
        senas=state.senas,
        catch_window=state.catch_window,
        max_bet=state.max_bet,
    )
    match = Match(config)
    match.restore_counters(
        scores=state.scores,
        games=state.games,
        vacas=state.vacas,
        games_total=state.games_total,
        next_mano=state.next_mano,
        hands_played=state.hands_played,
        game_number=state.game_number,
        winner=state.winner,
        big_bets=state.big_bets,
        answers=[unpack_answer(a) for a in state.answers],
    )
    if state.winner not in (None, 0, 1):
        raise RecordError(f"winner must be a team 0 or 1, not {state.winner!r}")
    if state.hand is not None:
        match.hand = replay(state.hand, rng)
        _check_continues(state, match.hand)
    if state.last_outcome is not None:
        o = state.last_outcome
        match.last_outcome = HandOutcome(
            o.hand_number, o.game_winner, o.vaca_winner, o.match_winner, o.scores
        )
    return match


def _check_continues(state: MatchState, played: Hand) -> None:
    """The saved hand must belong to the saved match: same options, its mano and start scores."""
    hand = state.hand
    assert hand is not None
    same_options = (hand.target, hand.senas, hand.catch_window, hand.max_bet) == (
        state.target,
        state.senas,
        state.catch_window,
        state.max_bet,
    )
    if not same_options:
        raise RecordError("the saved hand was played with other table options")
    if played.over:
        # The hand is over and settled: the match has moved on past it.
        if state.next_mano != (hand.mano + 1) % 4:
            raise RecordError("the mano did not move on after the saved hand")
        return
    if state.next_mano != hand.mano or tuple(state.scores) != tuple(hand.scores):
        raise RecordError("the saved hand does not continue the saved match (mano or scores)")


def load_match(data: str | bytes, rng: random.Random | None = None) -> Match:
    """Parse and rebuild a match from JSON; raise :class:`RecordError` on anything malformed or illegal."""
    try:
        state = MatchState.model_validate_json(data)
    except ValidationError as exc:
        raise RecordError(f"malformed match state: {exc.errors()[0].get('msg')}") from None
    try:
        return restore_match(state, rng)
    except MusError as exc:
        raise RecordError(f"saved hand does not replay: {exc}") from None
