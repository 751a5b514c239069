"""What only a Redis Cluster has: keys of one script in one slot, ``redis+cluster://`` URLs, creates in steps,
index entries written beside the scripts, a master that stops answering.

Everything else (the stores' contracts, the leaderboard, the service, the sweep) runs on the cluster too:
the fixtures of ``conftest.py`` run every Redis test on one server and on the cluster (``[single]``,
``[cluster]``).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import string
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from redis.asyncio.cluster import RedisCluster
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from redis_servers import LocalCluster

from bot.leaderboard import GLOBAL_SCOPE, RedisLeaderboard
from bot.ops import Settings
from bot.store import (
    ChatBusy,
    DeadlineChanges,
    RedisDeadlineStore,
    RedisTableStore,
    StoreUnavailable,
    connect,
)
from bot.store._redis_client import CLIENT_TIMEOUT, client_for_url, client_options
from bot.store._redis_layout import CLUSTER_SHARDS, KeyLayout, shard_tags
from bot.store._redis_store import PENDING_TTL_SECONDS

UNUSED = Path("/nonexistent/musbot-data")  # connect's data directory: not used with a URL


def slot(key: str) -> int:
    return key_slot(key.encode())


def test_every_script_reaches_one_slot() -> None:
    """A table, its shard of the live set and of the deadlines (where its deadline keys go) share a slot;
    the keys of one leaderboard scope share a slot; the shards spread over the slot space."""
    layout = KeyLayout("mus:", cluster=True)
    rng = random.Random(5)
    shards_seen = set()
    for _ in range(500):
        table = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(8))
        shard = layout.table_shard(table)
        shards_seen.add(shard)
        assert slot(layout.table(table)) == slot(layout.live(shard)) == slot(layout.deadlines(shard))
        for key in (f"{table}|turn|3-7", f"{table}|flash|2|0", f"{table}|lobby|0"):
            assert layout.deadlines(layout.deadline_shard(key)) == layout.deadlines(shard)
    assert shards_seen == set(range(CLUSTER_SHARDS))
    width = REDIS_CLUSTER_HASH_SLOTS // CLUSTER_SHARDS
    assert [slot(f"{{{tag}}}") // width for tag in shard_tags()] == list(range(CLUSTER_SHARDS))
    single = KeyLayout("mus:", cluster=False)  # one server: the layout of earlier versions
    assert (single.table("abc"), single.live(0), single.deadlines(0)) == (
        "mus:table:abc",
        "mus:tables:live",
        "mus:deadlines",
    )


async def test_leaderboard_keys_of_a_scope_share_a_slot(cluster_url: str) -> None:
    client = client_for_url(cluster_url)
    try:
        board = RedisLeaderboard(client, prefix="mus:")
        for scope in ("tg:-100123", "dc:42", GLOBAL_SCOPE):
            slots = {slot(board.player_key(scope, p)) for p in ("tg:1", "machine:normal:nerea", "dc:9")}
            slots |= {slot(board.ranking_key(scope, "rating")), slot(board.ranking_key(scope, "wins"))}
            assert len(slots) == 1, scope
    finally:
        await client.aclose()


@pytest.fixture
async def cluster_client(cluster_url: str, key_prefix: str) -> AsyncIterator[RedisCluster]:
    """A client of the session's cluster as ``bot.store.connect`` makes it; the test's keys are deleted."""
    client, server = await connect(cluster_url, UNUSED)
    assert server is None and isinstance(client, RedisCluster)
    try:
        yield client
    finally:
        keys = [key async for key in client.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_connect_takes_a_cluster_url(cluster_client: RedisCluster) -> None:
    assert len(cluster_client.get_primaries()) >= 3
    kwargs = cluster_client.get_connection_kwargs()
    assert kwargs["socket_timeout"] == kwargs["socket_connect_timeout"] == CLIENT_TIMEOUT
    assert cluster_client.retry.get_retries() == 0  # a frozen master costs one timeout, not several
    assert await cluster_client.ping()


async def test_connect_refuses_a_plain_url_to_a_cluster_node_and_an_unreachable_cluster(
    cluster_url: str,
) -> None:
    node = cluster_url.replace("redis+cluster://", "redis://")
    with pytest.raises(
        StoreUnavailable, match=r"is a node of a Redis Cluster: write the URL as redis\+cluster"
    ):
        await connect(node, UNUSED)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as info:
        await connect(f"redis+cluster://user:hunter2@127.0.0.1:{port}/0", UNUSED)
    message = str(info.value)
    assert message.startswith(f"cannot reach Redis at redis+cluster://user:***@127.0.0.1:{port}/0: ")
    assert "hunter2" not in message and "\n" not in message
    assert time.monotonic() - started < 3
    # A store on a cluster client that never reached the cluster says "unavailable", like one server's.
    client = client_for_url(f"redis+cluster://127.0.0.1:{port}/0", **client_options())
    try:
        with pytest.raises(StoreUnavailable):
            await RedisTableStore(client).load("t1")
    finally:
        await client.aclose()


async def test_a_create_that_died_after_writing_its_table_blocks_nothing(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    """Step 1 of a create on a cluster writes the table with a short TTL; nothing names it until step 2."""
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    await store._create_pending(keys=[store.table_key("dead")], args=["x", "c1", PENDING_TTL_SECONDS, "u1"])
    assert 0 < await cluster_client.ttl(store.table_key("dead")) <= PENDING_TTL_SECONDS
    assert await store.table_for_chat("c1") is None and await store.live_tables() == []
    await store.create("t1", "a", chat_key="c1", user_keys=["u1"])  # the chat is free
    assert await store.table_for_chat("c1") == "t1" and await store.table_for_user("u1") == "t1"
    assert await store.live_tables() == ["t1"]


async def test_a_create_that_died_after_claiming_its_chat_keeps_the_chat_until_it_expires_or_is_written(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    await store._create_pending(keys=[store.table_key("half")], args=["x", "c1", PENDING_TTL_SECONDS])
    await cluster_client.set(store.chat_key("c1"), "half")  # step 2 done, then the worker died
    assert await store.table_for_chat("c1") == "half"  # the chat shows it ("a table is open")
    with pytest.raises(ChatBusy) as info:
        await store.create("t2", "b", chat_key="c1", user_keys=[])
    assert info.value.existing_table_id == "half"
    assert await store.load("t2") is None
    await store.compare_and_set("half", 1, "y", chat_key=None, user_keys=["u1"], finished=False)
    assert await cluster_client.ttl(store.table_key("half")) == -1  # its first write made it a table
    assert await store.live_tables() == ["half"] and await store.table_for_user("u1") == "half"


async def test_index_entries_naming_a_finished_or_vanished_table_are_ignored_and_removed(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    """A crash between a finishing write and the removal of its entries leaves them: readers skip them."""
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    await store.create("old", "a", chat_key="c1", user_keys=["u1"])
    await store.compare_and_set("old", 1, "end", chat_key=None, user_keys=["u1"], finished=True)
    await cluster_client.set(store.chat_key("c1"), "old")  # as if the removal never ran
    await cluster_client.set(store.user_key("u1"), "old")
    await cluster_client.set(store.user_key("u2"), "gone")  # a table deleted by hand
    assert await store.table_for_chat("c1") is None
    assert await store.table_for_user("u1") is None and await store.table_for_user("u2") is None
    for entry in (store.chat_key("c1"), store.user_key("u1"), store.user_key("u2")):
        assert await cluster_client.get(entry) is None  # tidied
    await cluster_client.set(store.chat_key("c1"), "old")
    await store.create("new", "b", chat_key="c1", user_keys=["u1"])  # a stale entry is no busy chat
    assert await store.table_for_chat("c1") == "new" and await store.table_for_user("u1") == "new"


async def test_a_write_that_changes_neither_chat_nor_users_leaves_the_entries_alone(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    """Most writes (a bet, a discard) keep the table's chat and people: no entry is written again, so a person
    listed since by another table stays with it until this table's people or chat change."""
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1", "u2"], finished=False)
    await store.create("t2", "v1", chat_key="c2", user_keys=["u1"])  # u1 sits at a second table
    await store.compare_and_set("t1", 2, "v3", chat_key=None, user_keys=["u1", "u2"], finished=False)
    assert await store.table_for_user("u1") == "t2" and await store.table_for_user("u2") == "t1"
    assert await store.table_for_chat("c1") == "t1"
    await store.compare_and_set("t1", 3, "v4", chat_key=None, user_keys=["u1", "u2", "u3"], finished=False)
    assert [await store.table_for_user(u) for u in ("u1", "u2", "u3")] == ["t1", "t1", "t1"]
    assert await cluster_client.hget(store.table_key("t1"), "ix") is None  # every entry written


async def test_entries_a_dead_worker_did_not_write_are_written_by_the_next_write(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    """A write's script marks its entries pending (``ix``) until the store has written them: a worker dying
    in between leaves the mark, and the next write of the table, even one changing nothing, writes all."""
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1"], finished=False)
    args = store._cas_args("t1", 2, "v3", None, False, DeadlineChanges())
    reply = await store._cas(keys=list(store._keys("t1")), args=[*args, "u1", "u2"])  # then the worker died
    assert int(reply[0]) == 1 and int(reply[5]) == 1
    assert await store.table_for_user("u2") is None
    assert await cluster_client.hget(store.table_key("t1"), "ix") == "3"
    await store.compare_and_set("t1", 3, "v4", chat_key=None, user_keys=["u1", "u2"], finished=False)
    assert await store.table_for_user("u2") == "t1" and await store.table_for_user("u1") == "t1"
    assert await cluster_client.hget(store.table_key("t1"), "ix") is None


async def test_a_create_of_the_previous_version_that_died_is_completed_by_the_first_write(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    """Rolling upgrade: a worker of the previous version (its pending create marks nothing) died after
    claiming the chat; the first write of this version, listing the same people, completes the table."""
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    key = store.table_key("old")
    await cluster_client.hset(key, mapping={"v": 1, "data": "x", "chat": "c1", "users": '["u1"]', "fin": "0"})
    await cluster_client.expire(key, PENDING_TTL_SECONDS)
    await cluster_client.set(store.chat_key("c1"), "old")
    await store.compare_and_set("old", 1, "y", chat_key=None, user_keys=["u1"], finished=False)
    assert await cluster_client.ttl(key) == -1 and await store.live_tables() == ["old"]
    assert await store.table_for_user("u1") == "old" and await store.table_for_chat("c1") == "old"


async def test_a_write_changes_its_own_deadlines_atomically_and_another_tables_right_after(
    cluster_client: RedisCluster, key_prefix: str
) -> None:
    store = RedisTableStore(cluster_client, prefix=key_prefix)
    deadlines = RedisDeadlineStore(cluster_client, prefix=key_prefix)
    other = next(t for t in (f"o{i}" for i in range(100)) if deadlines.layout.table_shard(t) != 0)
    mine = next(t for t in (f"m{i}" for i in range(100)) if deadlines.layout.table_shard(t) == 0)
    await store.create(mine, "v1", chat_key="c", user_keys=[])
    changes = DeadlineChanges(schedule=((f"{mine}|turn|1-0", 5.0), (f"{other}|turn|1-0", 6.0)))
    await store.compare_and_set(mine, 1, "v2", chat_key=None, user_keys=[], finished=False, deadlines=changes)
    assert await deadlines.scheduled(f"{mine}|turn|1-0") == 5.0
    assert await deadlines.scheduled(f"{other}|turn|1-0") == 6.0
    assert deadlines.shard_key(f"{mine}|turn|1-0") != deadlines.shard_key(f"{other}|turn|1-0")
    assert await deadlines.claim_due(10.0) == [f"{mine}|turn|1-0", f"{other}|turn|1-0"]  # across shards


async def test_a_frozen_master_makes_the_stores_unavailable_within_the_timeout_then_they_recover(
    redis_cluster: LocalCluster | None, cluster_url: str, key_prefix: str
) -> None:
    if redis_cluster is None:
        pytest.skip("REDIS_CLUSTER_URL: the test does not stop someone else's node")
    client = client_for_url(cluster_url, **{**client_options(), "socket_timeout": 0.5})
    await client.initialize()
    store = RedisTableStore(client, prefix=key_prefix)
    try:
        await store.create("t1", "v1", chat_key="c1", user_keys=[])
        port = client.get_node_from_key(store.table_key("t1")).port
        (node,) = [n for n, p in zip(redis_cluster.nodes, redis_cluster.ports, strict=True) if p == int(port)]
        assert node.pid is not None
        os.kill(node.pid, signal.SIGSTOP)  # briefly: well within the cluster's node timeout (5 s)
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable):
                await store.load("t1")
            assert time.monotonic() - started < 2
        finally:
            os.kill(node.pid, signal.SIGCONT)
        for _ in range(50):  # the client learns the layout again at its next command
            try:
                loaded = await store.load("t1")
                break
            except StoreUnavailable:
                await asyncio.sleep(0.05)
        assert loaded is not None and loaded.data == "v1"
    finally:
        await store.delete("t1")
        await client.aclose()


@pytest.mark.parametrize(
    ("url", "taken"),
    [
        ("redis+cluster://10.0.0.5:6379/0", True),
        ("rediss+cluster://user:secret@cache.example.org:6380", True),
        ("redis+cluster://10.0.0.5:6379/2", False),  # a cluster has database 0 only
        ("redis+cluster://", False),
        ("redis+cluster://10.0.0.5:99999/0", False),
    ],
)
def test_the_settings_take_a_cluster_url_with_database_0(url: str, taken: bool) -> None:
    if taken:
        assert Settings(redis_url=url).redis_url == url
    else:
        with pytest.raises(ValidationError, match="must name a node of the cluster and database 0"):
            Settings(redis_url=url)
