"""A chat that moves to a new key (a Telegram group upgraded to a supergroup) on Redis, one server and a
cluster: the stores' contract (:mod:`chat_move_contract`), and the steps a cluster takes apart."""

from __future__ import annotations

import time

from chat_move_contract import (
    check_a_history_follows_its_chat,
    check_a_language_follows_its_chat,
    check_a_leaderboard_follows_its_chat,
    check_a_table_moves_to_another_chat,
)

from bot.history import RedisHistory
from bot.leaderboard import RedisLeaderboard
from bot.store import AnyRedis, RedisPreferences, RedisTableStore


async def test_the_redis_stores_keep_the_contract(redis_client: AnyRedis, key_prefix: str) -> None:
    now = time.time()
    await check_a_table_moves_to_another_chat(RedisTableStore(redis_client, key_prefix))
    await check_a_language_follows_its_chat(RedisPreferences(redis_client, key_prefix))
    await check_a_leaderboard_follows_its_chat(RedisLeaderboard(redis_client, key_prefix), now)
    await check_a_history_follows_its_chat(RedisHistory(redis_client, key_prefix), now)
