"""The service as production wires it (bot.ops._bootstrap.redis_service): atomic deadlines, queued results."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from bot.kernel import ChatRef, TableStatus, UserRef, lobby_stamp, make_token
from bot.leaderboard import GameResult, PlayerRef, RedisResultQueue
from bot.ops._bootstrap import redis_service
from bot.store import AnyRedis, DeadlineChanges, RedisDeadlineStore, RedisTableStore, VersionConflict
from bot.table import FlowSettings

USER = UserRef("t:1", "Ane", "en")


def _service(redis: AnyRedis, prefix: str, flow: FlowSettings):  # type: ignore[no-untyped-def]
    seeds = itertools.count(1)
    ids = (f"w{i:07d}" for i in itertools.count())
    return redis_service(
        redis, prefix, flow, rng_factory=lambda: random.Random(next(seeds)), id_factory=lambda: next(ids)
    )


async def test_deadlines_change_with_the_write_and_only_if_it_succeeds(
    table_store: RedisTableStore, deadline_store: RedisDeadlineStore
) -> None:
    await table_store.create("tab00001", "v1", chat_key="c", user_keys=[])
    await deadline_store.schedule("old", 5.0)
    changes = DeadlineChanges(schedule=(("new", 7.5),), cancel=("old",))
    with pytest.raises(VersionConflict):
        await table_store.compare_and_set(
            "tab00001", 9, "x", chat_key=None, user_keys=[], finished=False, deadlines=changes
        )
    assert await deadline_store.claim_due(100.0) == ["old"]  # the failed write changed no deadline
    await deadline_store.schedule("old", 5.0)
    written = await table_store.compare_and_set(
        "tab00001", 1, "v2", chat_key=None, user_keys=[], finished=False, deadlines=changes
    )
    assert written.version == 2
    assert await deadline_store.next_due() == 7.5
    assert await deadline_store.claim_due(100.0) == ["new"]


async def test_results_queue_round_trips_and_skips_garbage(redis_client: AnyRedis, key_prefix: str) -> None:
    queue = RedisResultQueue(redis_client, key_prefix)
    a, b, c, d = (PlayerRef(f"k{i}", f"N{i}") for i in range(4))
    result = GameResult("chat", ((a, c), (b, d)), 1, "vaca")
    await queue.push([result])
    await redis_client.rpush(queue.key, "not json")
    await queue.push([result])
    assert await queue.pop(10) == [result, result]
    assert await queue.pop(10) == []


async def test_a_machine_match_is_rated_once_its_queued_results_are_drained(
    redis_client: AnyRedis, key_prefix: str
) -> None:
    service = _service(redis_client, key_prefix, FlowSettings(machine_delay=0, next_hand_delay=0))
    chat = ChatRef("t:chat", private=False, title="T")
    outcome = await service.new_machine_table(chat, USER, single_game=True)
    table = await service.load_table(outcome.table or "")
    assert table is not None and table.status is TableStatus.FINISHED
    board = await service.chats.leaderboard(chat, USER)
    assert "🤖" not in board.messages[0].text  # rated off the command path: nothing yet
    assert await service.tables.drain_results() == 1  # one game (a single-game table: no vaca, no match)
    board = await service.chats.leaderboard(chat, USER)
    assert "🤖" not in board.messages[0].text  # rated, but machine seats are never listed


async def test_two_workers_with_their_own_copies_never_lose_a_move(make_client, key_prefix: str) -> None:  # type: ignore[no-untyped-def]
    """Each worker keeps its newest copy of a table; a press on the other worker must still be seen."""
    flow = FlowSettings(machine_delay=0, next_hand_delay=0, turn_timeout=3600)
    tables = RedisTableStore(await make_client(), prefix=key_prefix)
    a = _service(await make_client(), key_prefix, flow)
    b = _service(await make_client(), key_prefix, flow)
    chat = ChatRef("t:solo", private=True, title="Solo")
    lobby = await a.new_table(chat, USER)
    table_id = lobby.table or ""
    (start,) = [
        b.token for m in lobby.messages for row in m.buttons for b in row if b.token.endswith(".start")
    ]
    assert (await a.press(USER, start)).ok
    rng = random.Random(3)
    applied = 0
    for i in range(80):
        worker = (a, b)[i % 2]  # alternate workers: each one's own copy is stale half the time
        stored = await tables.load(table_id)
        assert stored is not None
        shown = await worker.show_table(table_id, USER)
        tokens = [
            button.token
            for m in shown.messages
            for row in m.buttons
            for button in row
            if "-" in button.token.split(".")[1] or "pick" in button.token or button.token.endswith("discard")
        ]
        if not tokens:
            break  # the match is over
        result = await worker.press(USER, rng.choice(tokens))
        after = await tables.load(table_id)
        assert after is not None
        if result.ok:
            applied += 1
            assert after.version == stored.version + 1, "an applied press must be one new stored version"
        else:
            assert after.version == stored.version, "a refused press must change nothing"
    assert applied >= 10  # both workers really played (a random match may end early)


@pytest.mark.parametrize("web_notices", [False, True])
async def test_table_writes_are_announced_on_redis_only_for_a_bot_with_a_web_table(
    redis_client: AnyRedis, key_prefix: str, web_notices: bool
) -> None:
    """A bot without a web table spends no Redis command on notices nobody would hear."""
    from bot.store import RedisTableNotices, TableNotice

    heard: list[TableNotice] = []
    listener = RedisTableNotices(redis_client, prefix=key_prefix).subscribe(heard.append, lambda: None)
    service = redis_service(
        redis_client, key_prefix, FlowSettings(), id_factory=lambda: "note0001", web_notices=web_notices
    )
    try:
        await listener.follow("note0001")
        outcome = await service.new_table(ChatRef("tg:-5", title="G"), USER)
        assert outcome.table == "note0001"
        await service.press(USER, make_token("note0001", lobby_stamp(), "start"))  # a write (v2)
        for _ in range(100):  # a notice crosses Redis in a few ms
            if heard:
                break
            await asyncio.sleep(0.01)
        assert [(n.table_id, n.version) for n in heard] == ([("note0001", 2)] if web_notices else [])
    finally:
        await listener.close()
