"""``/learn`` and the lesson buttons: a learner's way through the ten lessons.

:class:`LessonCommands` is a member of :class:`bot.app.Service` (``service.lessons``, as the chat commands are
``service.chats``): adapters call ``service.lessons.learn`` for the command and ``service.press`` for every
button, whose bus hands lesson tokens to :meth:`LessonCommands.press`.

A lesson is given in a private place (a private chat, a Discord ephemeral or DM, the terminal): ``/learn`` in
a group only says where to go. Each step is a new message; a right choice moves the learner's progress on
(one compare-and-set, :mod:`bot.lessons._progress`) and shows the next step under the answer, a wrong one
shows the step again under a short explanation and changes nothing. Buttons are checked, never trusted: the
learner's tag (someone else's lesson), the step (an earlier message, a double tap) and the choice itself.
"""

from __future__ import annotations

import logging

from bot.app._deps import ServiceDeps
from bot.i18n import DEFAULT_LANGUAGE, normalize_language, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.kernel import (
    ChatRef,
    LessonChoice,
    OpenLesson,
    Outcome,
    OutMessage,
    Token,
    UserRef,
    lesson_tag,
    measured_command,
)
from bot.lessons import (
    TRY_AGAIN,
    Lesson,
    Progress,
    after_right,
    done_view,
    lesson,
    lesson_text,
    lessons,
    move_lines,
    position,
    step_view,
)
from bot.store import StoreUnavailable
from bot.table import say

log = logging.getLogger(__name__)
_ = N_

LEARN_PRIVATELY = _("The lessons are given in a private chat with me: write /learn there.")
# Translators: {link} opens a private chat with the bot, which then starts the lessons.
LEARN_LINK = _("The lessons are given in a private chat with me: {link}")
NO_SUCH_LESSON = _("There are ten lessons: /learn 1 to /learn 10.")
LEARN_HINT = _("/learn 1 to /learn 10 opens any lesson.")
LESSON_STALE = _("That step of the lesson is already behind you.")
LESSON_FOREIGN = _("That lesson is someone else's: type /learn to start your own.")

_RIGHT = "✅"
_WRONG = "❌"


def lesson_number(args: list[str] | tuple[str, ...]) -> int | str | None:
    """The lesson ``/learn`` arguments ask for: a number, ``None`` (resume), or the text given (refused)."""
    if not args:
        return None
    word = args[0].strip()
    return int(word) if word.isdigit() and len(word) <= 3 else word


def learn_link_text(lang: str, link: str) -> str:
    """ "The lessons are given in a private chat with me: {link}", in ``lang``."""
    return translator(lang).format(LEARN_LINK, link=link)


class LessonCommands:
    """``/learn`` and the lesson buttons (see the module docstring)."""

    def __init__(self, deps: ServiceDeps) -> None:
        """Use the service's lesson progress and preferences stores."""
        self.deps = deps

    async def learner_language(self, user: UserRef) -> str:
        """The language of ``user``'s lessons: their private chat's ``/language``, else their client's."""
        try:
            chosen = await self.deps.prefs.get_language(user.key)  # a private chat's key is the user's
        except StoreUnavailable:
            chosen = None
        return normalize_language(chosen or user.lang or DEFAULT_LANGUAGE)

    @measured_command("learn")
    async def learn(
        self, chat: ChatRef, user: UserRef, number: int | str | None = None, *, hint: bool = True
    ) -> Outcome:
        """``/learn [n]``: the current step (or lesson ``n`` from its start), in a private place only; with
        ``hint``, the step says how to open another lesson (the terminal has its own way)."""
        lang = await self.learner_language(user)
        if not chat.private:
            return Outcome(answer=say(lang, LEARN_PRIVATELY), ok=False)
        if number is not None and (not isinstance(number, int) or lesson(number) is None):
            return Outcome(answer=say(lang, NO_SUCH_LESSON), ok=False)
        try:
            for _attempt in range(3):
                progress = await self.deps.lessons.get(user.key)
                new = _opened(progress, number)
                if await self.deps.lessons.replace(user.key, progress, new):
                    break
            else:
                return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False)
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False)
        view = _view_of(lang, user.key, new, say(lang, LEARN_HINT) if hint else None)
        return Outcome(messages=(view,))

    async def press(self, user: UserRef, token: Token, chat: ChatRef | None = None) -> Outcome:
        """A lesson button: checked against the presser's tag and progress, then one step at most (wherever
        it was pressed: ``chat`` changes nothing)."""
        lang = await self.learner_language(user)
        place = token.lesson_place()
        if place is None:
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        number, step, tag = place
        if tag != lesson_tag(user.key):
            return Outcome(answer=say(lang, LESSON_FOREIGN), ok=False)
        current = lesson(number)
        if current is None or step > len(current.steps):
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        try:
            progress = await self.deps.lessons.get(user.key)
            if progress is None or (progress.lesson, progress.step) != (number, step):
                return Outcome(answer=say(lang, LESSON_STALE), ok=False)
            if isinstance(token.command, OpenLesson):
                return await self._open(lang, user, current, progress, token.command.number)
            if isinstance(token.command, LessonChoice):
                return await self._choose(lang, user, current, progress, token.command.index)
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False)
        return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)

    async def _open(
        self, lang: str, user: UserRef, current: Lesson, progress: Progress, number: int
    ) -> Outcome:
        """ "Next lesson" / "Once more": only on a finished lesson's last message."""
        if progress.step != len(current.steps) or lesson(number) is None:
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        new = Progress(number, 0, progress.done)
        if not await self.deps.lessons.replace(user.key, progress, new):
            return Outcome(answer=say(lang, LESSON_STALE), ok=False)
        return Outcome(messages=(_view_of(lang, user.key, new),))

    async def _choose(
        self, lang: str, user: UserRef, current: Lesson, progress: Progress, index: int
    ) -> Outcome:
        """One choice at the current step: wrong → the step again, explained; right → the next step."""
        step = progress.step
        if step >= len(current.steps):
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        pos = position(current, step)
        if index >= len(pos.step.choices):
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        t = translator(lang)
        words = lesson_text(lang, current.key).steps[step]
        if pos.step.choices[index] != pos.step.right:
            note = f"{_WRONG} {words.wrong} {t.gettext(TRY_AGAIN)}"
            view = step_view(lang, user.key, current, step, pos, note)
            return Outcome(answer=t.gettext(TRY_AGAIN), messages=(view,), ok=False)
        last = step + 1 == len(current.steps)
        done = progress.done | {current.number} if last else progress.done
        new = Progress(current.number, step + 1, done)
        if not await self.deps.lessons.replace(user.key, progress, new):
            return Outcome(answer=say(lang, LESSON_STALE), ok=False)  # a double tap: the other one moved on
        note = f"{_RIGHT} {words.right}"
        if last:
            told = len(pos.hand.log)
            moves = move_lines(t, after_right(pos), told)
            return Outcome(messages=(done_view(lang, user.key, current, note, tuple(moves)),))
        following = position(current, step + 1)
        return Outcome(messages=(step_view(lang, user.key, current, step + 1, following, note),))


def _opened(progress: Progress | None, number: int | str | None) -> Progress:
    """The progress after ``/learn [number]``: lesson ``number`` from its start, or where the learner was
    (a finished lesson's end stays there: its message offers the next lesson)."""
    done = frozenset() if progress is None else progress.done
    if isinstance(number, int):
        return Progress(number, 0, done)
    if progress is None or lesson(progress.lesson) is None:
        return Progress(1, 0, done)
    return progress


def _view_of(lang: str, user_key: str, progress: Progress, hint: str | None = None) -> OutMessage:
    """The message for a learner's progress: the step on screen, or the end of a finished lesson."""
    current = lesson(progress.lesson) or lessons()[0]
    if progress.step >= len(current.steps):
        return done_view(lang, user_key, current)
    pos = position(current, progress.step)
    return step_view(lang, user_key, current, progress.step, pos, hint=hint)
