"""Semantics of the in-process stores (the same contract as the Redis stores, see bot/store/ports.py)."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from bot.store import (
    ChatBusy,
    DeadlineStore,
    MemoryDeadlineStore,
    MemoryTableStore,
    Mutation,
    StoredTable,
    TableExists,
    TableNotFound,
    TableStore,
    VersionConflict,
    update_with_retries,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> MemoryTableStore:
    return MemoryTableStore(clock=clock)


def test_memory_stores_satisfy_the_ports() -> None:
    assert isinstance(MemoryTableStore(), TableStore)
    assert isinstance(MemoryDeadlineStore(), DeadlineStore)


# -- create / load ---------------------------------------------------------------------------------------


async def test_create_then_load(store: MemoryTableStore) -> None:
    created = await store.create("t1", '{"x": "ñ🂠"}', chat_key="c1", user_keys=["u1", "u2"])
    assert created == StoredTable("t1", 1, '{"x": "ñ🂠"}')
    assert await store.load("t1") == created
    assert await store.load("nope") is None
    assert await store.table_for_chat("c1") == "t1"
    assert await store.table_for_user("u1") == "t1"
    assert await store.table_for_user("u2") == "t1"
    assert await store.table_for_user("u3") is None


async def test_create_existing_id_fails_and_changes_nothing(store: MemoryTableStore) -> None:
    await store.create("t1", "a", chat_key="c1", user_keys=["u1"])
    with pytest.raises(TableExists) as info:
        await store.create("t1", "b", chat_key="c2", user_keys=["u2"])
    assert info.value.table_id == "t1"
    assert not isinstance(info.value, ChatBusy)
    assert await store.load("t1") == StoredTable("t1", 1, "a")
    assert await store.table_for_chat("c2") is None
    assert await store.table_for_user("u2") is None


async def test_one_active_table_per_chat(store: MemoryTableStore) -> None:
    await store.create("t1", "a", chat_key="c1", user_keys=[])
    with pytest.raises(ChatBusy) as info:
        await store.create("t2", "b", chat_key="c1", user_keys=["u9"])
    assert isinstance(info.value, TableExists)
    assert info.value.existing_table_id == "t1"
    assert await store.load("t2") is None
    assert await store.table_for_user("u9") is None
    # Once the first table is finished the chat is free again.
    await store.compare_and_set("t1", 1, "a2", chat_key=None, user_keys=[], finished=True)
    await store.create("t2", "b", chat_key="c1", user_keys=[])
    assert await store.table_for_chat("c1") == "t2"


async def test_create_rejects_bad_arguments(store: MemoryTableStore) -> None:
    with pytest.raises(TypeError):
        await store.create("t1", "a", chat_key="c1", user_keys="u1")
    with pytest.raises(ValueError):
        await store.create("", "a", chat_key="c1", user_keys=[])
    with pytest.raises(ValueError):
        await store.create("t1", "a", chat_key="", user_keys=[])
    with pytest.raises(ValueError):
        await store.create("t1", "a", chat_key="c1", user_keys=["u1", ""])
    assert await store.load("t1") is None


# -- compare and set -------------------------------------------------------------------------------------


async def test_compare_and_set_bumps_the_version(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    second = await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1"], finished=False)
    third = await store.compare_and_set("t1", 2, "v3", chat_key="c1", user_keys=["u1"], finished=False)
    assert (second.version, third.version) == (2, 3)
    assert await store.load("t1") == StoredTable("t1", 3, "v3")


async def test_stale_version_conflicts_and_changes_nothing(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u1"], finished=False)
    for stale in (1, 3):
        with pytest.raises(VersionConflict) as info:
            await store.compare_and_set("t1", stale, "bad", chat_key="c9", user_keys=["u9"], finished=True)
        assert (info.value.expected, info.value.actual) == (stale, 2)
        assert info.value.current == StoredTable("t1", 2, "v2")
    assert await store.load("t1") == StoredTable("t1", 2, "v2")
    assert await store.table_for_chat("c1") == "t1"
    assert await store.table_for_chat("c9") is None
    assert await store.table_for_user("u1") == "t1"
    assert await store.table_for_user("u9") is None
    assert store.expires_in("t1") is None


async def test_compare_and_set_on_a_missing_table_conflicts(store: MemoryTableStore) -> None:
    with pytest.raises(VersionConflict) as info:
        await store.compare_and_set("ghost", 1, "x", chat_key="c1", user_keys=["u1"], finished=False)
    assert info.value.actual is None and info.value.current is None
    assert await store.load("ghost") is None
    assert await store.table_for_chat("c1") is None


@pytest.mark.parametrize("version", [0, -1, True])
async def test_compare_and_set_rejects_bad_versions(store: MemoryTableStore, version: int) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=[])
    with pytest.raises((TypeError, ValueError)):
        await store.compare_and_set("t1", version, "x", chat_key=None, user_keys=[], finished=False)


async def test_two_writers_with_the_same_version_one_wins(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=[])
    results = await asyncio.gather(
        store.compare_and_set("t1", 1, "A", chat_key=None, user_keys=[], finished=False),
        store.compare_and_set("t1", 1, "B", chat_key=None, user_keys=[], finished=False),
        return_exceptions=True,
    )
    winners = [r for r in results if isinstance(r, StoredTable)]
    losers = [r for r in results if isinstance(r, VersionConflict)]
    assert len(winners) == 1 and len(losers) == 1
    assert await store.load("t1") == winners[0]


# -- indexes ---------------------------------------------------------------------------------------------


async def test_user_index_follows_the_listed_users(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await store.compare_and_set("t1", 1, "v2", chat_key=None, user_keys=["u2", "u3"], finished=False)
    assert await store.table_for_user("u1") is None
    assert await store.table_for_user("u2") == "t1"
    assert await store.table_for_user("u3") == "t1"
    assert await store.table_for_chat("c1") == "t1"


async def test_chat_index_moves_with_a_new_chat_key(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=[])
    await store.compare_and_set("t1", 1, "v2", chat_key="c2", user_keys=[], finished=False)
    assert await store.table_for_chat("c1") is None
    assert await store.table_for_chat("c2") == "t1"
    # chat_key=None keeps the chat recorded on the table, also when finishing.
    await store.compare_and_set("t1", 2, "v3", chat_key=None, user_keys=[], finished=True)
    assert await store.table_for_chat("c2") is None


async def test_finish_clears_indexes_and_expires(store: MemoryTableStore, clock: FakeClock) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1", "u2"])
    done = await store.compare_and_set("t1", 1, "end", chat_key="c1", user_keys=["u1"], finished=True)
    assert done.version == 2
    assert await store.table_for_chat("c1") is None
    assert await store.table_for_user("u1") is None
    assert await store.table_for_user("u2") is None
    assert store.expires_in("t1") == 7 * 86400
    clock.now += 7 * 86400 - 1
    assert await store.load("t1") == done  # stale buttons can still be answered
    clock.now += 1
    assert await store.load("t1") is None
    assert store.expires_in("t1") is None


async def test_finished_ttl_is_configurable(clock: FakeClock) -> None:
    store = MemoryTableStore(finished_ttl_seconds=60, clock=clock)
    await store.create("t1", "v1", chat_key="c1", user_keys=[])
    await store.compare_and_set("t1", 1, "end", chat_key=None, user_keys=[], finished=True)
    assert store.expires_in("t1") == 60
    with pytest.raises(ValueError):
        MemoryTableStore(finished_ttl_seconds=0)


async def test_reopening_a_finished_table_makes_it_persistent(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    await store.compare_and_set("t1", 1, "end", chat_key=None, user_keys=["u1"], finished=True)
    await store.compare_and_set("t1", 2, "again", chat_key=None, user_keys=["u1"], finished=False)
    assert store.expires_in("t1") is None
    assert await store.table_for_chat("c1") == "t1"
    assert await store.table_for_user("u1") == "t1"


async def test_finishing_an_old_table_keeps_a_newer_tables_index(store: MemoryTableStore) -> None:
    await store.create("old", "v1", chat_key="c1", user_keys=["u1", "u2"])
    await store.create("new", "v1", chat_key="c2", user_keys=["u1"])  # u1 moved on
    assert await store.table_for_user("u1") == "new"
    await store.compare_and_set("old", 1, "end", chat_key=None, user_keys=["u1", "u2"], finished=True)
    assert await store.table_for_user("u1") == "new"
    assert await store.table_for_user("u2") is None
    await store.delete("old")
    assert await store.table_for_user("u1") == "new"
    assert await store.table_for_chat("c2") == "new"


async def test_delete_removes_value_and_indexes(store: MemoryTableStore) -> None:
    await store.create("t1", "v1", chat_key="c1", user_keys=["u1"])
    await store.delete("t1")
    await store.delete("t1")  # idempotent
    assert await store.load("t1") is None
    assert await store.table_for_chat("c1") is None
    assert await store.table_for_user("u1") is None
    await store.create("t1", "fresh", chat_key="c1", user_keys=[])
    assert (await store.load("t1")) == StoredTable("t1", 1, "fresh")


# -- update_with_retries ---------------------------------------------------------------------------------


def _increment(table: StoredTable) -> Mutation:
    state = json.loads(table.data)
    state["n"] += 1
    return Mutation(json.dumps(state), None, ["u1"], False)


async def test_concurrent_updates_all_apply(store: MemoryTableStore) -> None:
    await store.create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=["u1"])

    async def slow_increment(table: StoredTable) -> Mutation:
        await asyncio.sleep(0)  # let the other writers load the same version: real conflicts
        return _increment(table)

    results = await asyncio.gather(
        *(update_with_retries(store, "t1", slow_increment, attempts=60) for _ in range(50))
    )
    final = await store.load("t1")
    assert final is not None
    assert json.loads(final.data) == {"n": 50}
    assert final.version == 51
    assert sorted(r.version for r in results) == list(range(2, 52))


async def test_bounded_retries_give_up_with_version_conflict(store: MemoryTableStore) -> None:
    await store.create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=["u1"])
    calls = 0

    async def always_overtaken(table: StoredTable) -> Mutation:
        nonlocal calls
        calls += 1
        # Someone else writes in between every time.
        await store.compare_and_set(
            "t1", table.version, table.data, chat_key=None, user_keys=[], finished=False
        )
        return _increment(table)

    with pytest.raises(VersionConflict):
        await update_with_retries(store, "t1", always_overtaken, attempts=3)
    assert calls == 3
    final = await store.load("t1")
    assert final is not None and json.loads(final.data) == {"n": 0} and final.version == 4


async def test_update_with_retries_edge_cases(store: MemoryTableStore) -> None:
    with pytest.raises(TableNotFound):
        await update_with_retries(store, "ghost", _increment)
    created = await store.create("t1", json.dumps({"n": 0}), chat_key="c1", user_keys=[])
    assert await update_with_retries(store, "t1", lambda table: None) == created  # nothing to write
    updated = await update_with_retries(store, "t1", lambda t: (t.data + " ", "c1", ["u7"], False))
    assert updated.version == 2
    assert await store.table_for_user("u7") == "t1"
    with pytest.raises(ValueError):
        await update_with_retries(store, "t1", _increment, attempts=0)


# -- deadlines -------------------------------------------------------------------------------------------


async def test_deadlines_schedule_move_cancel_claim() -> None:
    deadlines = MemoryDeadlineStore()
    assert await deadlines.next_due() is None
    assert await deadlines.claim_due(1e12) == []
    await deadlines.schedule("t1:3:turn", 100.0)
    await deadlines.schedule("t2:1:turn", 50.5)
    await deadlines.schedule("t3:9:lobby", 200.0)
    assert await deadlines.next_due() == 50.5
    await deadlines.schedule("t2:1:turn", 150.0)  # re-scheduling moves it
    assert await deadlines.next_due() == 100.0
    await deadlines.cancel("t3:9:lobby")
    await deadlines.cancel("never-scheduled")
    assert await deadlines.claim_due(99.9) == []
    assert await deadlines.claim_due(100.0) == ["t1:3:turn"]  # due exactly now counts
    await deadlines.cancel("t1:3:turn")  # its firing removes it
    assert await deadlines.claim_due(1000.0) == ["t2:1:turn"]
    assert await deadlines.claim_due(1000.0) == []  # leased
    await deadlines.cancel("t2:1:turn")
    assert len(deadlines) == 0


async def test_a_claimed_key_is_leased_until_its_firing_removes_it() -> None:
    """A worker that claims a key and dies before its firing is saved delays the deadline, never loses it."""
    deadlines = MemoryDeadlineStore(lease_seconds=30.0)
    await deadlines.schedule("t1|turn|1-3", 100.0)
    await deadlines.schedule("t2|turn|1-0", 100.0)
    assert await deadlines.claim_due(100.0) == ["t1|turn|1-3", "t2|turn|1-0"]
    assert len(deadlines) == 2  # still scheduled: leased
    assert await deadlines.next_due() == 130.0
    assert await deadlines.claim_due(129.9) == []  # nobody else gets them while the lease lasts
    await deadlines.cancel("t2|turn|1-0")  # t2's firing was saved; the claimer of t1 "died"
    assert await deadlines.claim_due(130.0) == ["t1|turn|1-3"]  # due again when the lease ends
    assert await deadlines.next_due() == 160.0
    await deadlines.schedule("t1|turn|1-3", 500.0)  # a write that moves a leased key moves it
    assert await deadlines.claim_due(400.0) == []
    with pytest.raises(ValueError):
        MemoryDeadlineStore(lease_seconds=0)
    with pytest.raises(ValueError):
        MemoryDeadlineStore(lease_seconds=math.inf)


async def test_schedule_missing_leaves_scheduled_and_leased_keys_alone() -> None:
    deadlines = MemoryDeadlineStore(lease_seconds=30.0)
    await deadlines.schedule("pending", 50.0)
    await deadlines.schedule("leased", 10.0)
    assert await deadlines.claim_due(20.0) == ["leased"]
    added = await deadlines.schedule_missing(
        [("pending", 1.0), ("leased", 1.0), ("lost", 5.0), ("lost", 7.0)]
    )
    assert added == ["lost"]
    assert await deadlines.claim_due(20.0) == ["lost"]  # at 5.0; the others kept their times
    assert await deadlines.claim_due(49.9) == []
    assert await deadlines.claim_due(50.0) == ["leased", "lost", "pending"]  # both leases end at 50
    with pytest.raises(ValueError):
        await deadlines.schedule_missing([("k", math.nan)])


async def test_live_tables_are_the_unfinished_ones(store: MemoryTableStore, clock: FakeClock) -> None:
    assert await store.live_tables() == []
    await store.create("t2", "a", chat_key="c2", user_keys=[])
    await store.create("t1", "a", chat_key="c1", user_keys=[])
    await store.create("t3", "a", chat_key="c3", user_keys=[])
    assert await store.live_tables() == ["t1", "t2", "t3"]
    await store.compare_and_set("t1", 1, "b", chat_key=None, user_keys=[], finished=True)
    await store.delete("t3")
    assert await store.live_tables() == ["t2"]
    await store.compare_and_set("t1", 2, "c", chat_key=None, user_keys=[], finished=False)  # reopened
    assert await store.live_tables() == ["t1", "t2"]


async def test_claim_due_respects_limit_and_order() -> None:
    deadlines = MemoryDeadlineStore()
    for i in range(10):
        await deadlines.schedule(f"k{i}", 10.0 - i)
    await deadlines.schedule("tie-b", 0.5)
    await deadlines.schedule("tie-a", 0.5)
    assert await deadlines.claim_due(100.0, limit=0) == []
    assert await deadlines.claim_due(100.0, limit=4) == ["tie-a", "tie-b", "k9", "k8"]
    assert await deadlines.claim_due(100.0) == [f"k{i}" for i in range(7, -1, -1)]


async def test_claim_due_never_hands_out_a_key_twice() -> None:
    deadlines = MemoryDeadlineStore()
    for i in range(200):
        await deadlines.schedule(f"k{i}", float(i % 7))

    async def worker() -> list[str]:
        claimed: list[str] = []
        while batch := await deadlines.claim_due(10.0, limit=3):
            claimed += batch
            await asyncio.sleep(0)
        return claimed

    a, b = await asyncio.gather(worker(), worker())
    assert len(a) + len(b) == 200
    assert set(a) | set(b) == {f"k{i}" for i in range(200)}


@pytest.mark.parametrize("due", [math.inf, -math.inf, math.nan])
async def test_schedule_rejects_non_finite_times(due: float) -> None:
    with pytest.raises(ValueError):
        await MemoryDeadlineStore().schedule("k", due)
