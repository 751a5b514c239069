"""A chat's budget of new messages (:class:`NewMessages`, kept by :class:`PostBudget`): the game's first.

Some platforms limit how many *new* messages one chat takes, edits aside: Telegram lets a bot post at most 20
messages a minute in a group, and answers one more with ``429 retry after`` up to a minute. A lane that
posted every answer to a flood of commands would spend that minute's budget on them, and the next hand's
table could not be posted until the minute is over. So the adapter says what budget each chat has (a
:class:`NewMessages`, or none), and each lane keeps its chat's in a :class:`PostBudget`:

* **the game's views first**: a view of a table (:func:`is_game`: its lobby, its table and hands, a showdown,
  a table's notices such as ⏱ and 🤖) may spend the whole budget; an answer to a command (anything else)
  leaves :attr:`NewMessages.reserve` of it to the game (it is posted only while more are left). A post over
  the budget waits in its lane while the lane's other calls (edits above all) go on;
* **a refused post waits, the lane does not**: when the platform refuses a new message and asks to wait
  (:class:`~bot.delivery._transport.RateLimited`), no post goes to that chat until then; edits go on (a
  refused edit still holds the whole lane: see :mod:`bot.delivery._lanes`).

The trade-off: the count is this worker's. Several workers posting to one chat each keep their own budget,
so together they may post more; then the platform's refusal (a 429) says so, and the posts wait as above.
A budget costs at most ``limit`` timestamps; a lane is forgotten only once its budget has nothing to remember.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from bot.kernel import OutMessage


@dataclass(frozen=True, slots=True)
class NewMessages:
    """At most ``limit`` new messages in any ``window`` seconds in one chat, ``reserve`` of them for the game:
    an answer to a command is posted only while more than ``reserve`` are left in the window."""

    limit: int
    window: float
    reserve: int = 0

    def __post_init__(self) -> None:
        """Refuse a budget that could never post an answer."""
        if not 0 <= self.reserve < self.limit or self.window <= 0:
            raise ValueError(f"a budget of {self.limit} per {self.window} s cannot reserve {self.reserve}")


def is_game(message: OutMessage) -> bool:
    """Whether a view is the game's (drawn for a table: lobby, table, hands, showdowns, a table's notices):
    it spends a chat's budget before answers, keeps its order among the game's views, and is never dropped
    as an answer may be."""
    return bool(message.table)


class PostBudget:
    """One chat's new messages in the last window, as this worker posted them, and when the platform last
    asked it to wait before the next one."""

    def __init__(self, rule: NewMessages | None) -> None:
        """Keep ``rule`` (``None``: no budget; a platform's refusal still makes posts wait)."""
        self.rule = rule
        self._posts: deque[float] = deque(maxlen=rule.limit if rule is not None else 0)
        self._refused_until = -math.inf

    def spend(self, at: float) -> None:
        """A new message was posted at ``at``."""
        if self.rule is not None:
            self._posts.append(at)

    def refuse_until(self, until: float) -> None:
        """The platform refused a new message: none goes before ``until``."""
        self._refused_until = max(self._refused_until, until)

    def wait(self, now: float, *, game: bool) -> float:
        """Seconds before a new message may be posted (0: now) — one of the game's, or an answer, which
        leaves the reserve to the game."""
        wait = max(0.0, self._refused_until - now)
        rule = self.rule
        if rule is None:
            return wait
        allowed = rule.limit if game else rule.limit - rule.reserve
        posted = [at for at in self._posts if at > now - rule.window]
        if len(posted) < allowed:
            return wait
        # The post that must leave the window before one more fits: ``allowed`` must remain after it.
        return max(wait, posted[len(posted) - allowed] + rule.window - now)

    def quiet(self, now: float) -> bool:
        """Whether forgetting this budget loses nothing: no post in the window, no refusal to wait out."""
        window = 0.0 if self.rule is None else self.rule.window
        recent = bool(self._posts) and self._posts[-1] > now - window
        return not recent and self._refused_until <= now
