"""Redis implementation of the leaderboard port, on one Redis server or on a Redis Cluster.

Key layout (``P`` is the configurable prefix, ``"mus:"`` by default; ``S`` a scope: a chat key or ``global``;
on a Redis Cluster every ``lb:S:`` below is ``lb:{S}:``, so that the keys of one scope share a hash slot):

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

``move_scope`` (a chat's new key) goes through the old scope's player hashes (``SCAN``) and moves each
player in one script (:data:`_LUA_MOVE_PLAYER`); on a cluster the two scopes are in different slots, so a
player is read, copied to the new scope unless it has an entry there (:data:`_LUA_ADOPT`), then removed from
the old one (:data:`_LUA_DROP`), each step safe to repeat.

``record`` is an optimistic compare-and-set: one Lua script reads the hashes of every player of the result
with a digest of each, the new ratings are computed in Python, and a second script writes the new hashes and
scores only if every digest is unchanged. If another writer touched one of those hashes in between, nothing is
written and the whole thing is retried (bounded, with jittered pauses); after ``max_attempts`` conflicts
:class:`~bot.leaderboard._ports.LeaderboardBusy` is raised. On one server both scopes go in one
compare-and-set (atomic together). On a cluster a script reaches one slot, so the chat's scope and the global
one are two compare-and-sets, one after the other: each is atomic, but a worker that dies (or a
``LeaderboardBusy``) between them leaves the result counted in the chat and not globally. Reads (``top``,
``entry``) are read-only Lua scripts on one scope, so each returns one consistent snapshot. ``top`` builds the
hash keys of the scope from their prefix (not declared in ``KEYS``): on a cluster they share the sorted set's
slot.

The store does not own the client. Clients may use ``decode_responses`` or not.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import Sequence
from typing import Any

from bot.leaderboard._model import (
    MACHINE_PREFIX,
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
from bot.leaderboard._ports import LeaderboardBusy
from bot.store import DEFAULT_PREFIX, AnyRedis, check_key, glob_escape, is_cluster, unavailable_errors

__all__ = ["RedisLeaderboard"]

# A hash's digest: its fields and values, sorted, each length-prefixed (so no two contents share one).
_LUA_DIGEST = """
local function digest(key)
  local flat = redis.call('HGETALL', key)
  local items = {}
  for i = 1, #flat, 2 do
    items[#items + 1] = #flat[i] .. ':' .. flat[i] .. #flat[i + 1] .. ':' .. flat[i + 1]
  end
  table.sort(items)
  return redis.sha1hex(table.concat(items))
end
"""

# KEYS: player hashes. Returns {digest, flat HGETALL array} per key (an empty array for a missing hash).
_LUA_READ = (
    _LUA_DIGEST
    + """
local out = {}
for i, key in ipairs(KEYS) do out[i] = {digest(key), redis.call('HGETALL', key)} end
return out
"""
)

# KEYS: the n player hashes read, then sorted sets; ARGV: n, the n digests read, the writes as JSON
# {"h": [[hash index, [field, value, ...]], ...], "z": [[set index, member, score or false], ...]} (indexes
# into KEYS, 1-based; a false score removes the member). Writes only if no hash changed since it was read.
# Returns 1, or 0 on a conflict (nothing written).
_LUA_WRITE = (
    _LUA_DIGEST
    + """
local n = tonumber(ARGV[1])
for i = 1, n do
  if digest(KEYS[i]) ~= ARGV[i + 1] then return 0 end
end
local writes = cjson.decode(ARGV[n + 2])
for _, h in ipairs(writes.h) do redis.call('HSET', KEYS[h[1]], unpack(h[2])) end
for _, z in ipairs(writes.z) do
  if z[3] then redis.call('ZADD', KEYS[z[1]], z[3], z[2]) else redis.call('ZREM', KEYS[z[1]], z[2]) end
end
return 1
"""
)

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

# Moving a player's entry to another scope. adopt: copy the entry (its hash's fields, its scores) unless the
# scope has one for the player (returns 1 if copied); drop: remove the entry.
_LUA_MOVE_FNS = """
local function adopt(hash, rating_set, wins_set, player, rating, wins, flat)
  if #flat == 0 or redis.call('EXISTS', hash) == 1 then return 0 end
  redis.call('HSET', hash, unpack(flat))
  if rating then redis.call('ZADD', rating_set, rating, player) end
  if wins then redis.call('ZADD', wins_set, wins, player) end
  return 1
end
local function drop(hash, rating_set, wins_set, player)
  redis.call('DEL', hash)
  redis.call('ZREM', rating_set, player)
  redis.call('ZREM', wins_set, player)
end
"""

# One server. KEYS: the old scope's player hash, rating set and wins set, then the new scope's; ARGV[1] the
# player key. Moves the entry unless the new scope has one (then the old one just goes). Returns 1 if moved.
_LUA_MOVE_PLAYER = (
    _LUA_MOVE_FNS
    + """
local flat = redis.call('HGETALL', KEYS[1])
local rating = redis.call('ZSCORE', KEYS[2], ARGV[1])
local wins = redis.call('ZSCORE', KEYS[3], ARGV[1])
local moved = adopt(KEYS[4], KEYS[5], KEYS[6], ARGV[1], rating, wins, flat)
drop(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
return moved
"""
)

# Cluster, the new scope's slot. KEYS: its player hash, rating set and wins set; ARGV: the player key, the
# rating and wins scores read in the old scope ('' for none), the old hash's fields and values. Returns 1 if
# copied, 0 if the new scope had an entry.
_LUA_ADOPT = (
    _LUA_MOVE_FNS
    + """
local rating, wins = ARGV[2], ARGV[3]
if rating == '' then rating = false end
if wins == '' then wins = false end
local flat = {}
for i = 4, #ARGV do flat[#flat + 1] = ARGV[i] end
return adopt(KEYS[1], KEYS[2], KEYS[3], ARGV[1], rating, wins, flat)
"""
)

# Cluster, the old scope's slot. KEYS: its player hash, rating set and wins set; ARGV[1] the player key.
_LUA_DROP = (
    _LUA_MOVE_FNS
    + """
drop(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
return 1
"""
)

_RANK_BY: tuple[RankBy, ...] = ("rating", "wins")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _fields(flat: Sequence[Any]) -> dict[str, str]:
    """Turn a flat HGETALL reply ``[field, value, ...]`` into a dict of strings."""
    return {_text(flat[i]): _text(flat[i + 1]) for i in range(0, len(flat), 2)}


class RedisLeaderboard:
    """:class:`~bot.leaderboard._ports.LeaderboardStore` on Redis or a Redis Cluster (Lua compare-and-set)."""

    def __init__(
        self,
        redis: AnyRedis,
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
        self.cluster = is_cluster(redis)
        self._read = redis.register_script(_LUA_READ)
        self._write = redis.register_script(_LUA_WRITE)
        self._top = redis.register_script(_LUA_TOP)
        self._entry = redis.register_script(_LUA_ENTRY)
        self._move_player = redis.register_script(_LUA_MOVE_PLAYER)
        self._adopt = redis.register_script(_LUA_ADOPT)
        self._drop = redis.register_script(_LUA_DROP)

    def _scope(self, scope: str) -> str:
        """What every key of a scope starts with (on a cluster the scope is their hash tag)."""
        return f"{self.prefix}lb:{{{scope}}}:" if self.cluster else f"{self.prefix}lb:{scope}:"

    def player_key(self, scope: str, player_key: str) -> str:
        """Return the Redis key of a player's hash in a scope."""
        return f"{self._scope(scope)}p:{player_key}"

    def ranking_key(self, scope: str, by: RankBy) -> str:
        """Return the Redis key of a scope's sorted set by rating or by wins."""
        return f"{self._scope(scope)}{by}"

    async def record(self, result: GameResult, now: float) -> None:
        """Apply ``result`` to its chat's and the global leaderboard (on a cluster: one scope, then the
        other), each with an optimistic compare-and-set."""
        if not math.isfinite(now):
            raise ValueError(f"now must be a finite number, not {now!r}")
        groups = [result.scopes[:1], result.scopes[1:]] if self.cluster else [result.scopes]
        for scopes in groups:
            await self._record_in(result, now, scopes)

    async def _record_in(self, result: GameResult, now: float, scopes: Sequence[str]) -> None:
        """Apply ``result`` to ``scopes`` at once: read, compute, write unless a hash changed (then retry)."""
        slots = [(scope, key) for scope in scopes for key in result.player_keys]
        hashes = [self.player_key(scope, key) for scope, key in slots]
        keys = hashes + [self.ranking_key(scope, by) for scope in scopes for by in _RANK_BY]
        index = {key: i for i, key in enumerate(keys, start=1)}  # Lua's KEYS[i]
        with unavailable_errors():
            for attempt in range(1, self.max_attempts + 1):
                reply = await self._read(keys=hashes)
                digests = [_text(digest) for digest, _ in reply]
                current: dict[str, dict[str, PlayerStats | None]] = {s: {} for s in scopes}
                for (scope, key), (_, flat) in zip(slots, reply, strict=True):
                    current[scope][key] = PlayerStats.from_fields(_fields(flat)) if flat else None
                hash_writes: list[list[Any]] = []
                ranking_writes: list[list[Any]] = []
                for scope in scopes:
                    for key, stats in apply_result(result, current[scope], now).items():
                        flat_fields = [item for pair in stats.to_fields().items() for item in pair]
                        hash_writes.append([index[self.player_key(scope, key)], flat_fields])
                        ranked = is_ranked(key)  # rated, not ranked: drops an entry an older version ranked
                        for by in _RANK_BY:
                            score = repr(stats.score(by)) if ranked else False
                            ranking_writes.append([index[self.ranking_key(scope, by)], key, score])
                writes = json.dumps({"h": hash_writes, "z": ranking_writes}, ensure_ascii=False)
                if int(await self._write(keys=keys, args=[len(hashes), *digests, writes])):
                    return
                if attempt < self.max_attempts:  # another writer changed a hash since the read
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

    async def move_scope(self, old: str, new: str) -> int:
        """Move scope ``old``'s entries to ``new``, player by player (``new``'s own entries are kept)."""
        check_chat_scopes(old, new)
        if old == new:
            return 0
        start = self.player_key(old, "")
        moved = 0
        with unavailable_errors():
            async for key in self.redis.scan_iter(match=glob_escape(start) + "*", count=1000):
                moved += await self._move_entry(old, new, _text(key)[len(start) :])
        return moved

    async def _move_entry(self, old: str, new: str, player: str) -> int:
        """Move one player's entry (1 if it moved, 0 if the new scope had one or it was gone)."""
        old_keys = [self.player_key(old, player), *(self.ranking_key(old, by) for by in _RANK_BY)]
        new_keys = [self.player_key(new, player), *(self.ranking_key(new, by) for by in _RANK_BY)]
        if not self.cluster:
            return int(await self._move_player(keys=old_keys + new_keys, args=[player]))
        flat = await self.redis.hgetall(old_keys[0])
        if not flat:
            return 0  # moved meanwhile (another worker moving the same chat)
        scores = [await self.redis.zscore(key, player) for key in old_keys[1:]]
        fields = [item for pair in flat.items() for item in pair]
        ranked = ["" if score is None else repr(float(score)) for score in scores]
        adopted = int(await self._adopt(keys=new_keys, args=[player, *ranked, *fields]))
        await self._drop(keys=old_keys, args=[player])
        return adopted

    async def ping(self) -> None:
        """Health check: return if Redis answers PING, raise ``StoreUnavailable`` otherwise."""
        with unavailable_errors():
            await self.redis.ping()
