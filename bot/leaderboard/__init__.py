"""Leaderboards of the bot core: per chat and global, built from finished games, vacas and matches.

* :mod:`bot.leaderboard._model` — :class:`PlayerRef`, :class:`GameResult`, :class:`LeaderboardEntry`, the
  per-scope :class:`PlayerStats` and the rating math (openskill Plackett-Luce, team against team);
* :mod:`bot.leaderboard._ports` — the :class:`LeaderboardStore` protocol and :class:`LeaderboardBusy`;
* :mod:`bot.leaderboard._redis_store` — :class:`RedisLeaderboard` (a Lua compare-and-set, bounded retries);
* :mod:`bot.leaderboard._memory` — :class:`MemoryLeaderboard`, same semantics, for unit tests.

Importing this package creates no client.
"""

from bot.leaderboard._memory import MemoryLeaderboard
from bot.leaderboard._model import (
    GLOBAL_SCOPE,
    MACHINE_PREFIX,
    GameResult,
    LeaderboardEntry,
    PlayerRef,
    PlayerStats,
    RankBy,
    display_rating,
)
from bot.leaderboard._ports import LeaderboardBusy, LeaderboardStore
from bot.leaderboard._queue import RedisResultQueue, ResultQueue
from bot.leaderboard._redis_store import RedisLeaderboard

__all__ = [
    "GLOBAL_SCOPE",
    "MACHINE_PREFIX",
    "GameResult",
    "LeaderboardBusy",
    "LeaderboardEntry",
    "LeaderboardStore",
    "MemoryLeaderboard",
    "PlayerRef",
    "PlayerStats",
    "RankBy",
    "RedisLeaderboard",
    "RedisResultQueue",
    "ResultQueue",
    "display_rating",
]
