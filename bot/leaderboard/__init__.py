"""Leaderboards of the bot core: per chat and global, built from finished games, vacas and matches.

* :mod:`bot.leaderboard.model` — :class:`PlayerRef`, :class:`GameResult`, :class:`LeaderboardEntry`, the
  per-scope :class:`PlayerStats` and the rating math (openskill Plackett-Luce, team against team);
* :mod:`bot.leaderboard.ports` — the :class:`LeaderboardStore` protocol and :class:`LeaderboardBusy`;
* :mod:`bot.leaderboard.redis_store` — :class:`RedisLeaderboard` (a Lua compare-and-set, bounded retries);
* :mod:`bot.leaderboard.memory` — :class:`MemoryLeaderboard`, same semantics, for unit tests.

Importing this package creates no client.
"""

from bot.leaderboard.memory import MemoryLeaderboard
from bot.leaderboard.model import (
    DISPLAY_BASE,
    DISPLAY_SCALE,
    GLOBAL_SCOPE,
    MACHINE_PREFIX,
    GameResult,
    LeaderboardEntry,
    PlayerRef,
    PlayerStats,
    RankBy,
    ResultKind,
    display_rating,
    is_ranked,
)
from bot.leaderboard.ports import LeaderboardBusy, LeaderboardStore
from bot.leaderboard.redis_store import RedisLeaderboard

__all__ = [
    "DISPLAY_BASE",
    "DISPLAY_SCALE",
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
    "ResultKind",
    "display_rating",
    "is_ranked",
]
