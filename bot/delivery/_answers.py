"""Answers to commands in a chat: what each is about (:func:`subject`), and which ones a chat just saw
(:class:`RecentAnswers`), so that a flood of commands costs the chat a few messages, not one each.

An *answer* is a view of a chat that is not the game's (:func:`~bot.delivery._budget.is_game`) and not a
private one: ``/help``, ``/leaderboard``, ``/rules``, "there is already a table", "slow down"… Two rules:

* **the newest answer of a subject**: while an answer waits in its lane, a newer one of the same subject
  takes its place (a flood of ``/leaderboard`` gets one answer, the newest figures). An answer's subject is
  its slot (the command: ``help``, ``leaderboard``…) and the name of its file, if it has one — and its text
  too for the slots whose views are told apart by it (:data:`PER_TEXT_SLOTS`: the short replies of many
  commands, one person's ``/stats``, a hand's story);
* **never the same answer twice in a row**: an answer identical to the one the lane posted last for its
  subject within ``window`` seconds (60 by default) is not posted again — the chat shows it a few messages
  up.

The trade-off: a newer answer of a subject replaces an older one also when they differed (``/leaderboard``
and ``/leaderboard global`` in the same second: the second), and a ``/help`` asked again within the window
after someone deleted the first gets nothing. The game's views and private views are never coalesced or
dropped here (a showdown, a ⏱ notice, a player's cards, the sections of ``/rules full``).
"""

from __future__ import annotations

from collections import OrderedDict

from bot.delivery._budget import is_game
from bot.kernel import OutMessage

#: Slots whose views are told apart by their text, their subject includes it: the short replies of many
#: commands (``answer``, ``notice``), one person's figures (``stats``), a hand's story (``story``).
PER_TEXT_SLOTS = frozenset({"answer", "notice", "stats", "story"})
#: Seconds an answer identical to the last one a chat got for its subject is not posted again.
REPEAT_WINDOW = 60.0
#: Subjects a lane remembers its last answer of (the least recently posted are forgotten first).
_REMEMBERED = 32

Subject = tuple[str, str, str]
"""What an answer is about: its slot, its text for a slot of :data:`PER_TEXT_SLOTS` (else ``""``), the name
of its file (else ``""``: two files of one export are two answers)."""


def subject(message: OutMessage) -> Subject | None:
    """What an answer is about; ``None`` for a view that is not an answer (the game's, or a private one)."""
    if is_game(message) or message.user is not None:
        return None
    text = message.text if message.slot in PER_TEXT_SLOTS else ""
    return (message.slot, text, "" if message.document is None else message.document[0])


class RecentAnswers:
    """The answer a lane posted last for each subject, and when: a repeat within ``window`` is not posted."""

    def __init__(self, window: float) -> None:
        """Remember answers for ``window`` seconds (0: never skip a repeat)."""
        self.window = window
        self._last: OrderedDict[Subject, tuple[OutMessage, float]] = OrderedDict()

    def posted(self, message: OutMessage, at: float) -> None:
        """The lane posted ``message`` at ``at`` (an answer; other views are not remembered)."""
        about = subject(message)
        if about is None or self.window <= 0:
            return
        self._last.pop(about, None)
        self._last[about] = (message, at)
        while len(self._last) > _REMEMBERED:
            self._last.popitem(last=False)

    def repeats(self, message: OutMessage, now: float) -> bool:
        """Whether ``message`` is the answer its lane posted last for its subject, within the window."""
        about = subject(message)
        last = None if about is None else self._last.get(about)
        return last is not None and last[0] == message and now - last[1] < self.window
