"""A chat that moves to a new key (a Telegram group upgraded to a supergroup) on Redis, one server and a
cluster: the stores' contract (:mod:`chat_move_contract`), and the steps a cluster takes apart."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from chat_move_contract import ANE as ANE_P
from chat_move_contract import BRAIS as BRAIS_P
from chat_move_contract import (
    MACHINE,
    MACHINE2,
    check_a_history_follows_its_chat,
    check_a_language_follows_its_chat,
    check_a_leaderboard_follows_its_chat,
    check_a_table_moves_to_another_chat,
    game,
)
from service_helpers import ANE, BRAIS, ZERO

from bot.history import RedisHistory
from bot.kernel import ChatRef
from bot.leaderboard import RedisLeaderboard
from bot.ops._bootstrap import redis_service
from bot.store import AnyRedis, RedisPreferences, RedisTableStore

ClientFactory = Callable[..., Awaitable[AnyRedis]]
OLD_GROUP = ChatRef("tg:-4001", title="Mus")
NEW_GROUP = ChatRef("tg:-1004001", title="Mus")


async def test_the_redis_stores_keep_the_contract(redis_client: AnyRedis, key_prefix: str) -> None:
    now = time.time()
    await check_a_table_moves_to_another_chat(RedisTableStore(redis_client, key_prefix))
    await check_a_language_follows_its_chat(RedisPreferences(redis_client, key_prefix))
    await check_a_leaderboard_follows_its_chat(RedisLeaderboard(redis_client, key_prefix), now)
    await check_a_history_follows_its_chat(RedisHistory(redis_client, key_prefix), now)


async def test_two_workers_told_at_once_move_a_chat_once(make_client: ClientFactory, key_prefix: str) -> None:
    """Two workers (two clients) hear of one move at once (the two service messages): the table moves once,
    with its chat's language, leaderboard and history; the old chat keeps nothing."""
    workers = [redis_service(await make_client(), key_prefix, ZERO) for _ in range(2)]
    first = workers[0]
    await first.set_language(OLD_GROUP, ANE, "eu")
    played = await first.new_machine_table(OLD_GROUP, ANE, single_game=True)  # its hands are kept
    board = first.deps.leaderboard
    assert board is not None and played.table is not None
    await board.record(game(OLD_GROUP.key, 0, ANE_P, BRAIS_P, MACHINE, MACHINE2), time.time())
    lobby = await first.new_table(OLD_GROUP, ANE)
    assert lobby.ok and lobby.table is not None

    outcomes = await asyncio.gather(*(w.moves.chat_moved(OLD_GROUP.key, NEW_GROUP) for w in workers))
    assert [o.table for o in outcomes].count(lobby.table) == 1 and all(o.ok for o in outcomes)
    (views,) = [o.messages for o in outcomes if o.table]
    assert [(m.slot, m.chat) for m in views] == [("lobby", NEW_GROUP.key)]
    for worker in workers:
        assert await worker.deps.tables.table_for_chat(NEW_GROUP.key) == lobby.table
        assert await worker.deps.tables.table_for_chat(OLD_GROUP.key) is None
    assert await first.deps.prefs.get_language(NEW_GROUP.key) == "eu"
    assert [e.key for e in await board.top(NEW_GROUP.key)] == [ANE.key, BRAIS.key]
    assert await first.deps.history.matches(NEW_GROUP.key, time.time()) == [played.table]
    assert await board.top(OLD_GROUP.key) == []
    assert await first.deps.history.matches(OLD_GROUP.key, time.time()) == []
    table = await first.load_table(lobby.table)
    assert table is not None and table.chat == NEW_GROUP.key


async def test_on_a_cluster_a_losing_move_gives_its_claim_up_but_not_the_winners(
    redis_client: AnyRedis, key_prefix: str, on_cluster: bool
) -> None:
    """Two workers move one table at once: both claim the new chat's entry (it names the table), one writes,
    the other's write is stale. The loser gives its claim up only if the table did not move there."""
    if not on_cluster:
        return  # one server: the move and its index are one script
    store = RedisTableStore(redis_client, key_prefix)
    await store.create("t1", "v1", chat_key="tg:-4001", user_keys=[])
    await store.index.claim("t1", "tg:-1004001")  # the loser's claim, before the winner's script
    await store.compare_and_set("t1", 1, "v2", chat_key="tg:-1004001", user_keys=[], finished=False)
    await store._give_up_claim("t1", "tg:-1004001")  # the loser's stale write failed
    assert await store.table_for_chat("tg:-1004001") == "t1"
    # A claim for a move that did not happen goes.
    await store.index.claim("t1", "tg:-1004002")
    await store._give_up_claim("t1", "tg:-1004002")
    assert await redis_client.get(store.chat_key("tg:-1004002")) is None
    # Should a move to that chat have landed in between, its entry is gone: the table's next write, even one
    # that changes nothing, sets it again.
    await store.compare_and_set("t1", 2, "v3", chat_key="tg:-1004002", user_keys=[], finished=False)
    await store._give_up_claim("t1", "tg:-1004003")  # (the check passed before the move above)
    await redis_client.delete(store.chat_key("tg:-1004002"))  # ...and its removal came after it
    await store.compare_and_set("t1", 3, "v4", chat_key=None, user_keys=[], finished=False)
    assert await store.table_for_chat("tg:-1004002") == "t1"
