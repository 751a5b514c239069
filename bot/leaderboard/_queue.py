"""A durable queue of finished results, so that rating them never slows a table's command down.

The service pushes the results of a command (one ``RPUSH``) after its table write; each worker's background
loop pops them and applies them to the leaderboard one at a time, which also removes the write conflicts
that concurrent ratings of the same players (the machine seats) would cause. The queue lives in Redis: a
restart loses nothing queued. (A worker that dies between popping a result and recording it loses that one
result: a window of a few milliseconds, accepted for a leaderboard.)
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from typing import Any, Protocol

from bot.leaderboard._model import GameResult, PlayerRef
from bot.store import DEFAULT_PREFIX, AnyRedis, unavailable_errors


def result_to_json(result: GameResult) -> str:
    """A result as compact JSON."""
    teams = [[[p.key, p.name] for p in team] for team in result.teams]
    return json.dumps({"c": result.chat_key, "t": teams, "w": result.winner, "k": result.kind})


def result_from_json(text: str) -> GameResult:
    """A result back from :func:`result_to_json` (``ValueError`` if malformed)."""
    data: Any = json.loads(text)
    (a, b), (c, d) = ([PlayerRef(key, name) for key, name in team] for team in data["t"])
    return GameResult(data["c"], ((a, b), (c, d)), int(data["w"]), data["k"])


class ResultQueue(Protocol):
    """Finished results waiting to be rated."""

    async def push(self, results: Sequence[GameResult]) -> None:
        """Queue results (in order)."""
        ...

    async def pop(self, n: int) -> list[GameResult]:
        """Take up to ``n`` results, oldest first."""
        ...


class RedisResultQueue:
    """The queue as a Redis list ``{prefix}lb:queue``."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self.key = f"{prefix}lb:queue"

    async def push(self, results: Sequence[GameResult]) -> None:
        """Queue results with one ``RPUSH``."""
        if results:
            with unavailable_errors():
                await self._redis.rpush(self.key, *(result_to_json(r) for r in results))

    async def pop(self, n: int) -> list[GameResult]:
        """Take up to ``n`` results (``LPOP`` with a count); malformed entries are dropped."""
        with unavailable_errors():
            raw = await self._redis.lpop(self.key, n)
        out = []
        for item in raw or []:
            try:
                out.append(result_from_json(item.decode() if isinstance(item, bytes) else str(item)))
            except (ValueError, KeyError, TypeError):
                continue
        return out


class MemoryResultQueue:
    """The queue in process memory, for tests."""

    def __init__(self) -> None:
        """Empty."""
        self.items: deque[GameResult] = deque()

    async def push(self, results: Sequence[GameResult]) -> None:
        """Queue results."""
        self.items.extend(results)

    async def pop(self, n: int) -> list[GameResult]:
        """Take up to ``n`` results."""
        return [self.items.popleft() for _ in range(min(n, len(self.items)))]
