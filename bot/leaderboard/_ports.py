"""The leaderboard port: what the service needs from a leaderboard store.

Semantics shared by every :class:`LeaderboardStore` (:class:`~bot.leaderboard._memory.MemoryLeaderboard` and
:class:`~bot.leaderboard._redis_store.RedisLeaderboard` follow them exactly):

* ``record`` applies one :class:`~bot.leaderboard._model.GameResult` to two scopes, the result's chat and
  ``"global"``, atomically: concurrent results for the same players never lose an update. Each scope keeps
  its own rating per player (a player's global rating is not the sum of their chat ratings). On a Redis
  Cluster each scope is updated atomically, the chat's first: a failure in between (the worker dies,
  ``LeaderboardBusy``) leaves the result counted in the chat only.
* Machines (keys starting with ``"machine:"``, :func:`~bot.leaderboard._model.is_ranked`) are rated but not
  ranked: ``top`` never lists them, ``entry`` returns ``None`` for them, and no person's rank counts them.
* ``top`` lists up to ``n`` entries best first: by the conservative rating (unrounded μ − 3σ) or by games
  won; ties are listed in descending byte order of the player key (Redis' ``ZREVRANGE`` order) and share a
  competition rank.
* ``entry`` returns one player's entry with that same rank, or ``None`` if the player has no entry there.
* ``move_scope`` moves a chat's scope to the chat's new key (a group upgraded to a supergroup): every
  player's entry of the old scope, machines included, becomes the new scope's unless the new scope has an
  entry for that player already (the new one is kept: a player's statistics are never added twice); the
  old scope is left empty. Each player moves in one atomic step on one server; on a Redis Cluster the two
  scopes are in different slots, so a player is copied, then removed from the old scope: a worker that dies
  in between leaves the player in both, and doing the move again finishes it (the copy is not repeated). A
  result recorded in the old scope while it moves may stay there: moving it again moves it.
* Failures to reach the backend raise :class:`~bot.store._ports.StoreUnavailable`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bot.leaderboard._model import GameResult, LeaderboardEntry, RankBy
from bot.store import StoreError

__all__ = ["LeaderboardBusy", "LeaderboardStore"]


class LeaderboardBusy(StoreError):
    """``record`` kept conflicting with concurrent writers of the same players and gave up: no change."""


@runtime_checkable
class LeaderboardStore(Protocol):
    """Per-chat and global leaderboards built from finished results."""

    async def record(self, result: GameResult, now: float) -> None:
        """Apply ``result`` (at epoch time ``now``) to its chat's and the global leaderboard, atomically."""
        ...

    async def top(self, scope: str, n: int = 10, by: RankBy = "rating") -> list[LeaderboardEntry]:
        """Return up to ``n`` entries of ``scope`` (a chat key or ``"global"``), best first."""
        ...

    async def entry(self, scope: str, player_key: str, by: RankBy = "rating") -> LeaderboardEntry | None:
        """Return the player's entry in ``scope`` with its rank (ordered ``by``), or ``None``."""
        ...

    async def move_scope(self, old: str, new: str) -> int:
        """Move the entries of chat scope ``old`` to chat scope ``new`` (see the module's semantics); how many
        players' entries moved (not those ``new`` had already). ``ValueError`` for the global scope."""
        ...

    async def ping(self) -> None:
        """Health check: return if the backend answers, raise ``StoreUnavailable`` otherwise."""
        ...
