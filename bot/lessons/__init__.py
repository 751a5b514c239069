"""Ten short lessons to learn Mus: prepared deals, scripted moves, a decision at each step (``/learn``).

:mod:`bot.lessons._model` reads the lessons (data), :mod:`bot.lessons._play` plays them through the engine,
:mod:`bot.lessons._texts` has their words in every language, :mod:`bot.lessons._progress` remembers where
each learner is, :mod:`bot.lessons._render` draws a step and :mod:`bot.app._lesson_commands` runs ``/learn``
and the lesson buttons."""

from bot.lessons._model import Lesson, lesson, lessons
from bot.lessons._play import after_right, position
from bot.lessons._progress import MemoryProgress, Progress, ProgressStore, RedisProgress
from bot.lessons._render import SLOT, TRY_AGAIN, done_view, move_lines, step_view
from bot.lessons._texts import lesson_text

__all__ = [
    "SLOT",
    "TRY_AGAIN",
    "Lesson",
    "MemoryProgress",
    "Progress",
    "ProgressStore",
    "RedisProgress",
    "after_right",
    "done_view",
    "lesson",
    "lesson_text",
    "lessons",
    "move_lines",
    "position",
    "step_view",
]
