"""Telegram's flood limits, as the fake Bot API server enforces them.

Telegram answers a bot that writes too fast with ``429 Too Many Requests: retry after N`` and
``parameters.retry_after``. Its documented limits (core.telegram.org/bots/faq) are modelled here:

* **per group**: at most ``group_messages`` new messages (``send*`` methods but ``sendChatAction``) in any
  ``group_window`` seconds; the 429 asks to wait until the oldest of them leaves the window;
* **per bot**: at most ``bot_per_second`` calls that write to a chat in any second (edits included);
  ``answerCallbackQuery``, ``getUpdates`` and the other calls without a chat are not counted.

A refused call does not count. Tests may shrink the window (``TelegramLimits(group_window=3.0)``) to meet the
limits within seconds instead of minutes: the behaviour is the same, faster.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TelegramLimits:
    """The limits (Telegram's by default)."""

    group_messages: int = 20
    group_window: float = 60.0
    bot_per_second: int = 30


@dataclass
class FloodControl:
    """Counts a bot's calls and says when one is over a limit (see the module docstring)."""

    limits: TelegramLimits
    _groups: dict[int, deque[float]] = field(default_factory=dict)
    _bot: deque[float] = field(default_factory=deque)

    def retry_after(self, method: str, params: dict[str, Any], now: float) -> int | None:
        """Seconds to wait if ``method`` with ``params`` at ``now`` is over a limit; else ``None``, and the
        call is counted."""
        chat_id = params.get("chat_id")
        if chat_id is None:
            return None
        group = chat_id if isinstance(chat_id, int) and chat_id < 0 else None
        counted = group is not None and method.startswith("send") and method != "sendChatAction"
        sent = self._groups.setdefault(group, deque()) if counted and group is not None else None
        wait = self._over(sent, self.limits.group_messages, self.limits.group_window, now)
        wait = max(wait or 0, self._over(self._bot, self.limits.bot_per_second, 1.0, now) or 0)
        if wait:
            return wait
        self._bot.append(now)
        if sent is not None:
            sent.append(now)
        return None

    @staticmethod
    def _over(times: deque[float] | None, limit: int, window: float, now: float) -> int | None:
        """Whole seconds until a call fits in ``times`` (``None``: it fits now)."""
        if times is None:
            return None
        while times and times[0] <= now - window:
            times.popleft()
        if len(times) < limit:
            return None
        return max(1, math.ceil(times[0] + window - now))
