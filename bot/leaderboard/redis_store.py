"""Redis implementation of the leaderboard port.

Key layout (``P`` is the configurable prefix, ``"mus:"`` by default; ``S`` a scope: a chat key or ``global``):

``P lb:S:p:{player_key}``
    A hash per player and scope: ``name`` (latest display name), ``mu`` and ``sigma`` (floats written with
    ``repr``, exact), ``games``, ``games_won``, ``vacas``, ``vacas_won``, ``matches``, ``matches_won``
    (integers) and ``last`` (epoch seconds of the latest result).
``P lb:S:rating``
    A sorted set: member = player key, score = the conservative rating μ − 3σ (unrounded).
``P lb:S:wins``
    A sorted set: member = player key, score = games won.

The sorted sets are derived from the hashes and always written in the same transaction. They hold people
only: machines keep their hashes (their ratings take part in their opponents' updates) but are never added to
the sorted sets, so ranks and ``ZCOUNT`` count people alone. Sorted sets written before that rule may still
hold machine keys: ``record`` removes those of each result's machines, and ``top`` skips any it meets.

``record`` is an optimistic transaction: WATCH the hashes of every player of the result in both scopes, read
them (one Lua call), compute the new ratings in Python, then MULTI/EXEC the new hashes and scores. If another
writer touched one of those hashes in between, EXEC fails and the whole thing is retried (bounded, with
jittered pauses); after ``max_attempts`` conflicts :class:`~bot.leaderboard.ports.LeaderboardBusy` is raised.
Reads (``top``, ``entry``) are read-only Lua scripts, so each returns one consistent snapshot. The scripts
build hash keys from the prefix (not declared in ``KEYS``): fine on a standalone Redis, not on Redis Cluster.

The store does not own the client. Clients may use ``decode_responses`` or not.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from typing import Any

import redis.exceptions
from redis.asyncio import Redis
from redis.typing import EncodableT, FieldT

from bot.leaderboard.model import (
    MACHINE_PREFIX,
    GameResult,
    LeaderboardEntry,
    PlayerStats,
    RankBy,
    apply_result,
    check_rank_by,
    is_ranked,
    rank_entries,
)
from bot.leaderboard.ports import LeaderboardBusy
from bot.store.ports import DEFAULT_PREFIX, check_key
from bot.store.redis_store import unavailable_errors

__all__ = ["RedisLeaderboard"]

# KEYS: player hashes. Returns one flat HGETALL array per key (empty for a missing hash).
_LUA_READ = """
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('HGETALL', key) end
return out
"""

# KEYS[1] sorted set; ARGV: hash key prefix of the scope, n, machine key prefix. Returns member, score,
# HGETALL triples of the first n members that are not machines (older sets may still hold some).
_LUA_TOP = """
local n, machine = tonumber(ARGV[2]), ARGV[3]
local out, found, start = {}, 0, 0
while found < n do
  local rows = redis.call('ZREVRANGE', KEYS[1], start, start + n - 1, 'WITHSCORES')
  if #rows == 0 then break end
  for i = 1, #rows, 2 do
    if found < n and string.sub(rows[i], 1, #machine) ~= machine then
      out[#out + 1] = rows[i]
      out[#out + 1] = rows[i + 1]
      out[#out + 1] = redis.call('HGETALL', ARGV[1] .. rows[i])
      found = found + 1
    end
  end
  start = start + n
end
return out
"""

# KEYS[1] sorted set, KEYS[2] player hash; ARGV[1] player key.
# Returns {number of members with a strictly higher score, HGETALL}, or nil if the player is not ranked.
_LUA_ENTRY = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return nil end
return {redis.call('ZCOUNT', KEYS[1], '(' .. score, '+inf'), redis.call('HGETALL', KEYS[2])}
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _fields(flat: Sequence[Any]) -> dict[str, str]:
    """Turn a flat HGETALL reply ``[field, value, ...]`` into a dict of strings."""
    return {_text(flat[i]): _text(flat[i + 1]) for i in range(0, len(flat), 2)}


class RedisLeaderboard:
    """:class:`~bot.leaderboard.ports.LeaderboardStore` on Redis (WATCH/MULTI writes, Lua reads)."""

    def __init__(
        self,
        redis: Redis,
        prefix: str = DEFAULT_PREFIX,
        *,
        max_attempts: int = 50,
        backoff_seconds: float = 0.002,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, not {max_attempts}")
        self.redis = redis
        self.prefix = prefix
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self._top = redis.register_script(_LUA_TOP)
        self._entry = redis.register_script(_LUA_ENTRY)

    def player_key(self, scope: str, player_key: str) -> str:
        """Return the Redis key of a player's hash in a scope."""
        return f"{self.prefix}lb:{scope}:p:{player_key}"

    def ranking_key(self, scope: str, by: RankBy) -> str:
        """Return the Redis key of a scope's sorted set by rating or by wins."""
        return f"{self.prefix}lb:{scope}:{by}"

    async def record(self, result: GameResult, now: float) -> None:
        """Apply ``result`` to its chat's and the global leaderboard in one optimistic transaction."""
        if not math.isfinite(now):
            raise ValueError(f"now must be a finite number, not {now!r}")
        slots = [(scope, key) for scope in result.scopes for key in result.player_keys]
        hashes = [self.player_key(scope, key) for scope, key in slots]
        with unavailable_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                for attempt in range(1, self.max_attempts + 1):
                    try:
                        await pipe.watch(*hashes)
                        reply = await pipe.eval(_LUA_READ, len(hashes), *hashes)
                        current: dict[str, dict[str, PlayerStats | None]] = {s: {} for s in result.scopes}
                        for (scope, key), flat in zip(slots, reply, strict=True):
                            current[scope][key] = PlayerStats.from_fields(_fields(flat)) if flat else None
                        updates = {
                            scope: apply_result(result, current[scope], now) for scope in result.scopes
                        }
                        pipe.multi()  # type: ignore[no-untyped-call]
                        for scope, new in updates.items():
                            for key, stats in new.items():
                                fields: dict[FieldT, EncodableT] = {
                                    f: v for f, v in stats.to_fields().items()
                                }
                                pipe.hset(self.player_key(scope, key), mapping=fields)
                                if is_ranked(key):
                                    pipe.zadd(self.ranking_key(scope, "rating"), {key: stats.ordinal})
                                    pipe.zadd(self.ranking_key(scope, "wins"), {key: stats.games_won})
                                else:  # rated, not ranked; drops an entry an older version ranked
                                    pipe.zrem(self.ranking_key(scope, "rating"), key)
                                    pipe.zrem(self.ranking_key(scope, "wins"), key)
                        await pipe.execute()
                        return
                    except redis.exceptions.WatchError:
                        pass  # another writer changed a hash, or the connection dropped (the pipe is reset)
                    if attempt < self.max_attempts:
                        pause = min(self.backoff_seconds * attempt, 0.05)
                        await asyncio.sleep(random.uniform(0.0, pause) if pause > 0 else 0)
        raise LeaderboardBusy(
            f"leaderboard: result in {result.chat_key!r} still conflicting after {self.max_attempts} attempts"
        )

    async def top(self, scope: str, n: int = 10, by: RankBy = "rating") -> list[LeaderboardEntry]:
        """Return up to ``n`` entries of ``scope``, best first."""
        check_key(scope, "scope")
        by = check_rank_by(by)
        if n <= 0:
            return []
        with unavailable_errors():
            reply = await self._top(
                keys=[self.ranking_key(scope, by)], args=[self.player_key(scope, ""), n, MACHINE_PREFIX]
            )
        rows: list[tuple[str, float, PlayerStats]] = []
        for i in range(0, len(reply), 3):
            if reply[i + 2]:  # a member without a hash (deleted by hand) is skipped
                rows.append(
                    (_text(reply[i]), float(reply[i + 1]), PlayerStats.from_fields(_fields(reply[i + 2])))
                )
        return rank_entries(rows)

    async def entry(self, scope: str, player_key: str, by: RankBy = "rating") -> LeaderboardEntry | None:
        """Return the player's entry in ``scope`` with its rank, or ``None``."""
        check_key(scope, "scope")
        check_key(player_key, "player key")
        by = check_rank_by(by)
        if not is_ranked(player_key):
            return None
        with unavailable_errors():
            reply = await self._entry(
                keys=[self.ranking_key(scope, by), self.player_key(scope, player_key)], args=[player_key]
            )
        if reply is None or not reply[1]:
            return None
        return PlayerStats.from_fields(_fields(reply[1])).to_entry(player_key, int(reply[0]) + 1)

    async def ping(self) -> None:
        """Health check: return if Redis answers PING, raise ``StoreUnavailable`` otherwise."""
        with unavailable_errors():
            await self.redis.ping()
