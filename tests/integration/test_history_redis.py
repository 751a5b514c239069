"""The hand history on Redis, one server and a cluster: the store's contract, its key layout (one slot per
script on a cluster), the expiry of every key, and a service that keeps and exports its hands there."""

from __future__ import annotations

import asyncio
import time

from history_contract import (
    check_a_chat_lists_a_bounded_number_of_matches,
    check_keeps_lists_and_reads_hands,
    check_old_matches_leave_the_list,
)
from redis.asyncio.cluster import RedisCluster
from redis.cluster import key_slot
from service_helpers import ANE, GROUP, ZERO

from bot.app import parse_kept
from bot.history import RedisHistory, export_json
from bot.kernel import history_token
from bot.ops._bootstrap import redis_service
from bot.store import AnyRedis
from engine.replay import run_case


async def test_the_redis_store_keeps_the_contract(redis_client: AnyRedis, key_prefix: str) -> None:
    now = time.time()
    await check_keeps_lists_and_reads_hands(RedisHistory(redis_client, key_prefix), now)
    await check_a_chat_lists_a_bounded_number_of_matches(RedisHistory(redis_client, key_prefix + "b:"), now)
    await check_old_matches_leave_the_list(RedisHistory(redis_client, key_prefix + "c:"), now)


async def test_the_keys_expire_with_the_retention_and_share_a_slot_per_script(
    redis_client: AnyRedis, key_prefix: str, on_cluster: bool
) -> None:
    store = RedisHistory(redis_client, key_prefix, retention=3 * 86400)
    await store.keep("abcd0001", "tg:-100", 1, time.time(), "entry")
    match, listing = store.match_key("abcd0001"), store.chat_key("tg:-100")
    if on_cluster:
        assert match == f"{key_prefix}hist:m:{{abcd0001}}" and listing == f"{key_prefix}hist:c:{{tg:-100}}"
        assert isinstance(redis_client, RedisCluster)
        assert key_slot(match.encode()) == key_slot(b"abcd0001")
    else:
        assert match == f"{key_prefix}hist:m:abcd0001" and listing == f"{key_prefix}hist:c:tg:-100"
    for key in (match, listing):
        ttl = await redis_client.pttl(key)
        assert 3 * 86400 * 1000 - 60_000 < ttl <= 3 * 86400 * 1000, (key, ttl)


async def test_a_kept_match_is_gone_after_its_retention(redis_client: AnyRedis, key_prefix: str) -> None:
    store = RedisHistory(redis_client, key_prefix, retention=1.0)
    await store.keep("abcd0001", "tg:-100", 1, time.time(), "entry")
    assert await store.hand("abcd0001", 1) == "entry"
    await asyncio.sleep(1.3)
    assert await store.hand("abcd0001", 1) is None and await store.hands("abcd0001") == []
    assert await store.matches("tg:-100", time.time()) == []
    assert await redis_client.exists(store.match_key("abcd0001"), store.chat_key("tg:-100")) == 0


async def test_a_service_on_redis_keeps_its_hands_and_exports_them(
    redis_client: AnyRedis, key_prefix: str
) -> None:
    service = redis_service(redis_client, key_prefix, ZERO, history_days=2)
    assert isinstance(service.deps.history, RedisHistory) and service.deps.history.retention == 2 * 86400
    outcome = await service.new_machine_table(GROUP, ANE, single_game=True)
    assert outcome.ok and outcome.table is not None
    shown = await service.history.recent(GROUP, ANE)
    assert shown.messages and shown.messages[0].buttons
    exported = await service.press(ANE, history_token(outcome.table, 0, "hexp"), GROUP)
    json_view = exported.messages[0]
    assert json_view.document is not None
    kept = [k for _, entry in await service.deps.history.hands(outcome.table) if (k := parse_kept(entry))]
    assert json_view.document[1] == export_json(kept)
    for k in kept:
        case = {"id": "x", "type": "hand", **k.record.model_dump(mode="json")}
        assert run_case(case)["result"]["scores"] == list(k.scores)
