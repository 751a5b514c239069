"""The Redis preferences keep the yes/no contract (:mod:`prefs_contract`) on a real Redis."""

from __future__ import annotations

from prefs_contract import check_yes_no_preferences

from bot.store import AnyRedis, RedisPreferences


async def test_redis_preferences_keep_yes_and_no(redis_client: AnyRedis, key_prefix: str) -> None:
    await check_yes_no_preferences(RedisPreferences(redis_client, key_prefix))
