"""A lesson step as a view: what happened since the learner last chose, the cards, the explanation and
question, and one button per choice (lesson tokens, :func:`bot.kernel._tokens.lesson_token`).

The words of the lesson come from :mod:`bot.lessons._texts`; everything around them (names, cards, moves,
buttons) is an interface string of the catalogues, shared with the tables where it can be.
"""

from __future__ import annotations

from bot.i18n import Translator, translator
from bot.i18n.markers import N_
from bot.kernel import MACHINE_MARK, MACHINE_NAMES, Button, OutMessage, lesson_tag, lesson_token
from bot.lessons._model import LEARNER, Lesson, lessons
from bot.lessons._play import Position
from bot.lessons._texts import lesson_text
from bot.screens import (
    LANCE_NAMES,
    PARES_NAMES,
    PHASE_NAMES,
    SENA_NAMES,
    action_label,
    button_label,
    card_label,
    cards_label,
    labelled,
)
from engine.actions import ActionKind, parse_action
from engine.cards import parse_card, parse_cards
from engine.evaluation import Lance, ParesKind
from engine.hand import Hand
from engine.hand_types import LANCE_OF_PHASE, Phase
from engine.senas import Sena

_ = N_

#: The slot of lesson messages (always new messages: a lesson reads as a conversation).
SLOT = "lesson"

LESSON_HEADER = _("📘 Lesson {n}/{total} · {title} · {step}/{steps}")
YOU = _("You")
PARTNER = _("{name} (partner)")
RIVAL = _("{name} (rival)")
MANO_LINE = _("Mano: {name}")
NEW_HAND = _("🂠 A new hand.")
SCORE_LINE = _("Stones: your team {us}, the rivals {them} · game to {target}")
YOUR_CARDS = _("Your cards: {cards}")
DISCARD_CHOICE = _("Discard {cards}")
SENA_CHOICE = _("Seña: {sena}")
OWN_SENA = _("You made a seña: {sena}")
PARTNER_SENA = _("Your partner {name} made you a seña: {sena}")
CAUGHT_SENA = _("You caught {name}'s seña: {sena}")
FLASH = _("⚡ {name} made a seña!")
CATCH = _("⚡ Catch it")
SKIP = _("Let it go")
TEAM_US = _("Your team")
TEAM_THEM = _("The rivals")
TRY_AGAIN = _("Try again.")
LESSON_DONE = _("🎓 Lesson {n} done: {title}.")
# Translators: /newgame is said in each surface's own terms (a terminal shows the command that plays).
ALL_DONE = _("🎓 You have done all ten lessons. Now play a game: /newgame.")
NEXT_LESSON = _("Next lesson ▶")
AGAIN = _("Once more ↺")


def seat_label(t: Translator, seat: int) -> str:
    """``You``, ``🤖 Iker (partner)``, ``🤖 Maite (rival)``: the four players of every lesson."""
    if seat == LEARNER:
        return t.gettext(YOU)
    name = f"{MACHINE_MARK} {MACHINE_NAMES[seat]}"
    return t.format(PARTNER if seat % 2 == LEARNER % 2 else RIVAL, name=name)


def _name(t: Translator, seat: int) -> str:
    return t.gettext(YOU) if seat == LEARNER else f"{MACHINE_MARK} {MACHINE_NAMES[seat]}"


def choice_label(t: Translator, choice: str) -> str:
    """A choice's button: a move as the table's buttons show it, or an answer (a card, a player, a kind…)."""
    head, _sep, rest = choice.partition(" ")
    if head == "discard":
        return t.format(DISCARD_CHOICE, cards=cards_label(parse_cards(rest.split())))
    if head in ("sena", "signal"):
        return t.format(SENA_CHOICE, sena=t.gettext(SENA_NAMES[Sena(rest)]))
    if head == "catch":
        return t.gettext(CATCH)
    if head == "skip":
        return t.gettext(SKIP)
    if head == "card":
        return card_label(parse_card(rest))
    if head == "seat":
        return seat_label(t, int(rest))
    if head == "team":
        return t.gettext(TEAM_US if int(rest) == LEARNER % 2 else TEAM_THEM)
    if head == "pares":
        return t.gettext(PARES_NAMES[ParesKind[rest.upper()]])
    if head == "total":
        return rest
    if head == "stones":
        return t.nformat("{n} stone", "{n} stones", int(rest))
    if head == "lance":
        return t.gettext(LANCE_NAMES[Lance(rest)])
    return button_label(t, parse_action(choice))


def _phase_name(t: Translator, phase: Phase) -> str:
    lance = LANCE_OF_PHASE.get(phase)
    return t.gettext(LANCE_NAMES[lance] if lance is not None else PHASE_NAMES.get(phase, "MUS"))


def move_lines(t: Translator, hand: Hand, start: int) -> list[str]:
    """One line per action of the hand's log from ``start``: ``GRANDE · 🤖 Maite: paso``."""
    lines = []
    for record in hand.log[start:]:
        action = record.action
        if action.kind is ActionKind.DISCARD:
            n = len(action.cards)  # the learner sees their own cards, of the others only how many
            mine = record.seat == LEARNER
            what = cards_label(action.cards) if mine else t.nformat("{n} card", "{n} cards", n)
        else:
            what = action_label(t, action)
        lines.append(f"{_phase_name(t, record.phase)} · {labelled(t, _name(t, record.seat), what)}")
    return lines


def sena_lines(t: Translator, hand: Hand) -> list[str]:
    """The señas the learner knows of (their own, the partner's, the caught ones) and the flashes."""
    caught = {c.sena_index for c in hand.catches if c.seat == LEARNER}
    lines = []
    for sena in hand.senas:
        name, what = _name(t, sena.seat), t.gettext(SENA_NAMES[sena.sena])
        if sena.seat == LEARNER:
            lines.append(t.format(OWN_SENA, sena=what))
        elif sena.seat % 2 == LEARNER % 2:
            lines.append(t.format(PARTNER_SENA, name=name, sena=what))
        elif sena.index in caught:
            lines.append(t.format(CAUGHT_SENA, name=name, sena=what))
        else:
            lines.append(t.format(FLASH, name=name))
    return lines


def _cards(t: Translator, hand: Hand, show: str) -> list[str]:
    if show != "all":
        return [t.format(YOUR_CARDS, cards=cards_label(hand.hands[LEARNER]))]
    return [labelled(t, seat_label(t, seat), cards_label(hand.hands[seat])) for seat in range(4)]


def step_text(
    lang: str, lesson: Lesson, index: int, pos: Position, note: str | None = None, hint: str | None = None
) -> str:
    """The message of step ``index``: header (and ``hint``, how to open another lesson), ``note`` (the
    answer to the last choice), the cards, what happened, the score when it matters, then the explanation
    and question."""
    t = translator(lang)
    words = lesson_text(lang, lesson.key)
    hand = pos.hand
    lines = [
        t.format(
            LESSON_HEADER,
            n=lesson.number,
            total=len(lessons()),
            title=words.title,
            step=index + 1,
            steps=len(lesson.steps),
        )
    ]
    if hint:
        lines.append(hint)
    if note:
        lines.append(note)
    lines.append("")
    if pos.first_of_deal and index > 0:
        lines.append(t.gettext(NEW_HAND))
    lines.append(t.format(MANO_LINE, name=_name(t, hand.mano)))
    lines.extend(_cards(t, hand, pos.deal.show))
    lines.extend(move_lines(t, hand, pos.shown_from))
    lines.extend(sena_lines(t, hand))
    if hand.start_scores != (0, 0) or hand.over:
        # A question about the hand is asked before its count: the stones as they stood when the hand began
        # (the count's would give the answer away, and disagree with the question's own words).
        scores = hand.start_scores if not pos.step.plays else hand.scores
        us, them = scores[LEARNER % 2], scores[1 - LEARNER % 2]
        lines.append(t.format(SCORE_LINE, us=us, them=them, target=hand.config.target))
    lines.append("")
    lines.append(words.steps[index].say)
    return "\n".join(lines)


def step_view(
    lang: str,
    user_key: str,
    lesson: Lesson,
    index: int,
    pos: Position,
    note: str | None = None,
    hint: str | None = None,
) -> OutMessage:
    """Step ``index`` of ``lesson`` for ``user_key``, with one button per choice (two per row)."""
    t = translator(lang)
    tag = lesson_tag(user_key)
    buttons = [
        Button(choice_label(t, choice), lesson_token(lesson.number, index, tag, f"a{i}"))
        for i, choice in enumerate(pos.step.choices)
    ]
    rows = tuple(tuple(buttons[i : i + 2]) for i in range(0, len(buttons), 2))
    return OutMessage(
        slot=SLOT,
        text=step_text(lang, lesson, index, pos, note, hint),
        user=user_key,
        buttons=rows,
        fresh=True,
    )


def done_view(
    lang: str, user_key: str, lesson: Lesson, note: str | None = None, moves: tuple[str, ...] = ()
) -> OutMessage:
    """The end of a lesson: the last answer and the ``moves`` it led to, "lesson done", and the next
    lesson's button (or the end)."""
    t = translator(lang)
    title = lesson_text(lang, lesson.key).title
    lines = [note, *moves] if note else list(moves)
    lines.append(t.format(LESSON_DONE, n=lesson.number, title=title))
    tag = lesson_tag(user_key)
    # The button's stamp names the finished lesson's last step: a press is checked against the progress.
    stamp_step = len(lesson.steps)
    buttons: list[Button] = []
    if lesson.number < len(lessons()):
        code = f"go{lesson.number + 1}"
        buttons.append(Button(t.gettext(NEXT_LESSON), lesson_token(lesson.number, stamp_step, tag, code)))
    else:
        lines.append(t.gettext(ALL_DONE))
    again = lesson_token(lesson.number, stamp_step, tag, f"go{lesson.number}")
    buttons.append(Button(t.gettext(AGAIN), again))
    return OutMessage(slot=SLOT, text="\n".join(lines), user=user_key, buttons=(tuple(buttons),), fresh=True)
