"""How often one person may use commands in one chat: a token bucket per (person, chat), in memory.

A burst of commands is fine (a few at once); past it, the first refused command is told to slow down and the
rest of the run is ignored without a word, so that flooding a chat costs the bot nothing and the chat no
messages. Each worker keeps its own buckets (no Redis round trip on the command path): with several workers a
flood is allowed a few times over, never unbounded. The buckets are bounded: the least recently used go first.
"""

from __future__ import annotations

import enum
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


class Verdict(enum.Enum):
    """What to do with one command."""

    ALLOW = "allow"
    WARN = "warn"
    """Refused, and this is the first refusal of the run: say "slow down" once."""
    QUIET = "quiet"
    """Refused again: say nothing."""


@dataclass
class _Bucket:
    tokens: float
    at: float
    warned: bool = False


class Throttle:
    """Token buckets of ``burst`` commands, refilled at ``per_second``, for at most ``capacity`` keys."""

    def __init__(
        self,
        *,
        burst: int = 5,
        per_second: float = 0.5,
        capacity: int = 20_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """A throttle allowing ``burst`` commands at once, then one every ``1 / per_second`` seconds."""
        self.burst = burst
        self.per_second = per_second
        self.capacity = capacity
        self.clock = clock
        self._buckets: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()

    def check(self, user: str, chat: str) -> Verdict:
        """Take one command from ``user``'s bucket in ``chat``."""
        now = self.clock()
        key = (user, chat)
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.per_second)
        bucket.at = now
        self._buckets[key] = bucket  # most recently used last
        while len(self._buckets) > self.capacity:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            bucket.warned = False
            return Verdict.ALLOW
        if bucket.warned:
            return Verdict.QUIET
        bucket.warned = True
        return Verdict.WARN

    def __len__(self) -> int:
        return len(self._buckets)
