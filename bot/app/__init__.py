"""The bot's commands: what adapters call, platform-neutral, every table change one unit of work.

* :mod:`bot.app._service` — :class:`Service`, the entry adapters use (``/newgame``, presses, invitations,
  ``/cancel``, ``/language``, deadlines, and the chat, history and lesson commands);
* :mod:`bot.app._unit_of_work` — load, run one step of :mod:`bot.table`, draw, compare-and-set;
* :mod:`bot.app._drawn` — what a command shows, answers, keeps in the history and rates, made in one place
  from what its step recorded (:func:`~bot.app._drawn.drawn`);
* :mod:`bot.app._deadline_work` — claim due deadlines and fire them through the unit of work;
  :mod:`bot.app._wakes` — when the deadline loop looks again (a deadline due sooner than it waits for);
* :mod:`bot.app._chat_commands`, :mod:`bot.app._history_commands`, :mod:`bot.app._lesson_commands` — the
  commands about a chat, the hand history and the lessons;
* :mod:`bot.app._chat_moves` — a chat that moved to a new key (a group upgraded to a supergroup): its table,
  language, leaderboard and history follow it;
* :mod:`bot.app._pauses` — a chat the bot cannot reach (its table paused, then resumed or closed) and a
  player who blocked the bot;
* :mod:`bot.app._languages` — a chat's language (``/language``) and a person's own;
* :mod:`bot.app._deps` — :class:`ServiceDeps`, what the service is wired with;
* :mod:`bot.app._throttle` — how often one person may use commands in one chat.
"""

from bot.app._chat_commands import COMMAND_LIST, leaderboard_scope, wants_full_rules
from bot.app._deadline_work import DeadlineWork
from bot.app._deps import ServiceDeps, secure_rng, secure_table_id
from bot.app._history_commands import parse_kept
from bot.app._lesson_commands import learn_link_text, lesson_number
from bot.app._service import Service
from bot.app._unit_of_work import TableWork

__all__ = [
    "COMMAND_LIST",
    "DeadlineWork",
    "Service",
    "ServiceDeps",
    "TableWork",
    "leaderboard_scope",
    "learn_link_text",
    "lesson_number",
    "parse_kept",
    "secure_rng",
    "secure_table_id",
    "wants_full_rules",
]
