"""In-process leaderboard with the same semantics as the Redis one, for unit tests of the service.

``record`` never awaits while it reads and writes, so it is atomic with respect to other tasks.
"""

from __future__ import annotations

from bot.leaderboard._model import (
    GameResult,
    LeaderboardEntry,
    PlayerStats,
    RankBy,
    apply_result,
    check_chat_scopes,
    check_rank_by,
    is_ranked,
    rank_entries,
)
from bot.store import check_key

__all__ = ["MemoryLeaderboard"]


class MemoryLeaderboard:
    """In-memory :class:`~bot.leaderboard._ports.LeaderboardStore`."""

    def __init__(self) -> None:
        self._scopes: dict[str, dict[str, PlayerStats]] = {}

    async def record(self, result: GameResult, now: float) -> None:
        """Apply ``result`` to its chat's and the global leaderboard."""
        updates: list[tuple[str, dict[str, PlayerStats]]] = []
        for scope in result.scopes:  # compute both scopes first: nothing is written if one raises
            players = self._scopes.get(scope, {})
            current = {key: players.get(key) for key in result.player_keys}
            updates.append((scope, apply_result(result, current, now)))
        for scope, new in updates:
            self._scopes.setdefault(scope, {}).update(new)

    def _sorted(self, scope: str, by: RankBy) -> list[tuple[str, float, PlayerStats]]:
        players = self._scopes.get(scope, {})
        rows = [(key, stats.score(by), stats) for key, stats in players.items() if is_ranked(key)]
        rows.sort(key=lambda row: (row[1], row[0].encode()), reverse=True)
        return rows

    async def top(self, scope: str, n: int = 10, by: RankBy = "rating") -> list[LeaderboardEntry]:
        """Return up to ``n`` entries of ``scope``, best first."""
        check_key(scope, "scope")
        by = check_rank_by(by)
        if n <= 0:
            return []
        return rank_entries(self._sorted(scope, by)[:n])

    async def entry(self, scope: str, player_key: str, by: RankBy = "rating") -> LeaderboardEntry | None:
        """Return the player's entry in ``scope`` with its rank, or ``None``."""
        check_key(scope, "scope")
        check_key(player_key, "player key")
        by = check_rank_by(by)
        players = self._scopes.get(scope, {})
        stats = players.get(player_key)
        if stats is None or not is_ranked(player_key):
            return None
        score = stats.score(by)
        ahead = sum(1 for key, other in players.items() if is_ranked(key) and other.score(by) > score)
        return stats.to_entry(player_key, ahead + 1)

    async def move_scope(self, old: str, new: str) -> int:
        """Move scope ``old``'s entries to ``new`` (``new``'s own entries are kept); how many moved."""
        check_chat_scopes(old, new)
        if old == new:
            return 0
        players = self._scopes.pop(old, {})
        target = self._scopes.setdefault(new, {})
        moved = [key for key in players if key not in target]
        for key in moved:
            target[key] = players[key]
        return len(moved)

    async def ping(self) -> None:
        """Health check: always answers."""
