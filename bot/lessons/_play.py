"""A lesson's path through the engine: the hand at a step, a learner's choice played, the engine's answers.

There is no second rules path: a lesson's hand is :func:`engine.record.start_hand` of its deal's record, and
every scripted move and every move the learner chooses goes through :func:`engine.record.apply_entry`, as a
replayed record does. A learner's progress is only ``(lesson, step)``: the hand at a step is rebuilt by
replaying the deal's moves and the right choices of the steps before it (a few dozen actions at most).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.lessons._model import LEARNER, Deal, Lesson, Step, is_engine_word
from engine.cards import effective_rank, parse_card
from engine.errors import MusError
from engine.evaluation import Lance, compare, evaluate
from engine.hand import Hand
from engine.record import Entry, apply_entry, record_of, replay, start_hand

#: Effective ranks (:func:`engine.cards.effective_rank`) of a rey and of an as under 8 reyes.
REY_RANK = 7
AS_RANK = 0


@dataclass(frozen=True, slots=True)
class Position:
    """Where a learner is: the deal and step, the hand as the step shows it, and what led there."""

    deal: Deal
    step: Step
    hand: Hand
    shown_from: int
    """Index in the hand's log of the first action the step's message tells: what happened since the
    learner last chose (their move, the previous step's ``then`` and this step's moves)."""
    first_of_deal: bool


def learner_entry(step: Step, choice: str) -> Entry:
    """The record entry of the learner's move ``choice`` (señas and catches carry the step's time)."""
    head = choice.split(" ", 1)[0]
    return (LEARNER, choice, step.at) if head in ("sena", "catch") else (LEARNER, choice)


def play_choice(hand: Hand, step: Step, choice: str) -> None:
    """Play the learner's move ``choice`` on ``hand`` (a :class:`MusError` if the engine refuses it)."""
    apply_entry(hand, learner_entry(step, choice))


def position(lesson: Lesson, index: int) -> Position:
    """The hand at step ``index`` of ``lesson`` (from 0), after the step's scripted moves.

    Raises :class:`IndexError` for a step the lesson does not have, and a :class:`MusError` if the data is
    not a legal path (the tests make sure it is).
    """
    steps = lesson.steps
    if not 0 <= index < len(steps):
        raise IndexError(f"lesson {lesson.number} has no step {index}")
    deal, step = steps[index]
    hand = start_hand(deal.record)
    before = [s for d, s in steps[:index] if d is deal]
    shown_from = 0
    for earlier in before:
        for entry in earlier.moves:
            apply_entry(hand, entry)
        shown_from = len(hand.log)  # the learner's own move is told too, with what followed it
        if is_engine_word(earlier.right):
            play_choice(hand, earlier, earlier.right)
        for entry in earlier.then:
            apply_entry(hand, entry)
    for entry in step.moves:
        apply_entry(hand, entry)
    return Position(deal, step, hand, shown_from, not before)


def after_right(pos: Position) -> Hand:
    """The step's hand once the right choice and its ``then`` moves are played (a copy is not kept: the
    position's hand is advanced)."""
    hand = pos.hand
    if is_engine_word(pos.step.right):
        play_choice(hand, pos.step, pos.step.right)
    for entry in pos.step.then:
        apply_entry(hand, entry)
    return hand


def engine_answer(step: Step, hand: Hand) -> str | None:
    """The right answer to the step's question as the engine computes it (``None`` for a step of moves).

    The lesson data states its answer; the tests check it against this, so an explanation never claims a
    winner the engine would not give.
    """
    ask = step.ask
    mine = hand.hands[LEARNER]
    if ask is None:
        return None
    if ask in ("rey", "as"):
        wanted = REY_RANK if ask == "rey" else AS_RANK
        cards = [c for c in step.choices if effective_rank(parse_card(c.split()[1])) == wanted]
        return cards[0] if len(cards) == 1 else None
    if ask == "total":
        return f"total {evaluate(mine).total}"
    if ask == "pares_kind":
        return f"pares {evaluate(mine).pares_kind.name.lower()}"
    if ask in ("grande", "chica", "pares", "juego", "punto"):
        winner = compare(Lance(ask), dict(enumerate(hand.hands)), hand.mano)
        return None if winner is None else f"seat {winner}"
    if ask == "winner":
        return None if hand.winner is None else f"team {hand.winner}"
    if ask == "decided":
        # The count stops at the line that took a team to the target: the last line it paid.
        return f"lance {hand.count_lines[-1].lance.value}" if hand.winner is not None else None
    if ask == "deje":
        result = hand.results.get(Lance(step.lance or ""))
        return None if result is None else f"stones {result.deje}"
    if ask == "paid":  # what the count paid for the lance (a refused bet's deje was paid before it)
        return f"stones {sum(line.stones for line in hand.count_lines if line.lance.value == step.lance)}"
    if ask == "caught":
        caught = [c for c in hand.catches if c.seat == LEARNER]
        return f"signal {hand.senas[caught[-1].sena_index].sena.value}" if caught else None
    return None


def legal(hand: Hand, step: Step, choice: str) -> bool:
    """Whether the learner's move ``choice`` is legal on ``hand``, tried on a copy rebuilt from the hand's
    own record (``hand`` itself is left as it was)."""
    try:
        play_choice(replay(record_of(hand)), step, choice)
    except MusError:
        return False
    return True
