"""A table whose chat the bot cannot reach, on both stores (the in-memory fakes and Redis): paused in the
store with its one deadline, the one that closes it; resumed on another worker (a restart) with fresh
deadlines; closed without rating when the chat stays out of reach; its deadline armed again by the sweep.

(The platforms' side — Telegram's ``my_chat_member``, a refused post, Discord's permissions — is in
``tests/e2e/test_paused_tables.py``.)
"""

from __future__ import annotations

import pytest
from service_helpers import ANE, GROUP, Harness, english

from bot.app._drawn import ABANDONED, RESUMED
from bot.kernel import TableStatus
from bot.leaderboard import MemoryLeaderboard, RedisLeaderboard
from bot.ops._sweep import rearm_lost_deadlines
from bot.store import AnyRedis, MemoryDeadlineStore, MemoryTableStore, RedisPreferences
from bot.store._prefs import MemoryPreferences
from bot.store._redis_deadlines import RedisDeadlineStore
from bot.store._redis_store import RedisTableStore
from bot.table import FlowSettings
from bot.table._pause import PAUSED

LIMIT = 3600.0
FLOW = FlowSettings(turn_timeout=60, machine_delay=2, next_hand_delay=4, lobby_timeout=900, pause_limit=LIMIT)


@pytest.fixture(params=["memory", "redis"])
def stores(request: pytest.FixtureRequest, redis_client: AnyRedis, key_prefix: str) -> dict[str, object]:
    """The stores one worker and its restart share: the in-memory fakes or Redis (the same contract)."""
    if request.param == "memory":
        return {
            "tables": MemoryTableStore(),
            "deadlines": MemoryDeadlineStore(lease_seconds=30.0),
            "prefs": MemoryPreferences(),
            "leaderboard": MemoryLeaderboard(),
        }
    return {
        "tables": RedisTableStore(redis_client, prefix=key_prefix),
        "deadlines": RedisDeadlineStore(redis_client, prefix=key_prefix, lease_seconds=30.0),
        "prefs": RedisPreferences(redis_client, prefix=key_prefix),
        "leaderboard": RedisLeaderboard(redis_client, prefix=key_prefix),
    }


def worker(stores: dict[str, object], seed: int, clock: list[float] | None = None) -> Harness:
    """A service on the shared stores (a Redis one wired as in production: deadlines written atomically)."""
    h = Harness(settings=FLOW, seed=seed, **stores, **({} if clock is None else {"clock": clock}))  # type: ignore[arg-type]
    h.deps.atomic_deadlines = isinstance(stores["tables"], RedisTableStore)
    return h


async def paused_at_a_human_turn(h: Harness) -> str:
    """A game in GROUP with Ane and three machines, at Ane's turn, then the bot loses GROUP: the table id."""
    await english(h, GROUP)
    tid = await h.started(GROUP, ANE)
    await h.wait_for_human(tid)
    lost = await h.service.pauses.chat_lost(GROUP.key)
    assert lost.ok and lost.table == tid and not lost.messages
    return tid


async def test_a_paused_table_waits_with_no_deadline_but_its_closing(stores: dict[str, object]) -> None:
    h = worker(stores, seed=81)
    tid = await paused_at_a_human_turn(h)
    paused = await h.load(tid)
    assert paused.table.paused == h.now
    assert paused.table.status is TableStatus.PLAYING
    assert paused.table.due_key == f"{tid}|paused|{int(h.now)}"
    assert paused.table.due == h.now + LIMIT
    assert await h.deadlines.next_due() == h.now + LIMIT  # the turn's deadline is gone
    assert await h.service.deps.tables.table_for_chat(GROUP.key) == tid  # still the chat's table

    again = await h.service.pauses.chat_lost(GROUP.key)  # told again (another refused post): no change
    assert again.ok and (await h.load(tid)).version == paused.version
    h.advance(LIMIT - 1)  # far past every turn, machine and deal deadline
    assert await h.fire_due() == []
    refused = await h.press(ANE, h.turn_tokens(tid, GROUP.key)[0])
    assert not refused.ok and refused.paused and refused.answer == PAUSED and not refused.messages
    shown = await h.service.new_table(GROUP, ANE)  # /newgame where the table waits: said so, nothing drawn
    assert shown.paused and shown.answer == PAUSED and not shown.messages
    assert (await h.load(tid)).version == paused.version


async def test_a_paused_table_resumes_after_a_restart_with_fresh_deadlines(stores: dict[str, object]) -> None:
    h = worker(stores, seed=82)
    tid = await paused_at_a_human_turn(h)
    before = await h.load(tid)
    h.advance(LIMIT / 2)
    restarted = worker(stores, seed=83, clock=h.clock)  # another process, on the same stores
    back = restarted.record(await restarted.service.pauses.chat_back(GROUP))
    assert back.ok
    notices = [m.text for m in back.messages if m.slot == "notice"]
    assert notices == [RESUMED]
    table_views = [m for m in back.messages if m.slot == "table"]
    assert len(table_views) == 1 and table_views[0].fresh  # posted afresh at the bottom of the chat
    assert any(b for row in table_views[0].buttons for b in row)
    after = await restarted.load(tid)
    assert after.table.paused is None
    assert after.match is not None and before.match is not None
    assert after.match.hand is not None and before.match.hand is not None
    assert after.match.hand.log == before.match.hand.log  # where it was
    assert after.table.due == h.now + FLOW.turn_timeout  # a whole turn again
    assert await restarted.deadlines.next_due() == after.table.due
    assert (await restarted.service.pauses.chat_back(GROUP)).ok is False  # not paused any more

    h.set_time(after.table.due)
    fired = await restarted.fire_due()  # the turn runs out as usual: a machine plays for Ane
    assert len(fired) == 1 and fired[0].ok
    assert (await restarted.load(tid)).table.seats[0].timeouts == 1


async def test_a_table_whose_chat_never_comes_back_is_closed_without_rating(
    stores: dict[str, object],
) -> None:
    h = worker(stores, seed=84)
    tid = await paused_at_a_human_turn(h)
    h.advance(LIMIT)
    fired = await h.fire_due()
    assert len(fired) == 1 and fired[0].ok and not fired[0].messages  # nothing could reach the chat
    closed = await h.load(tid)
    assert closed.table.status is TableStatus.CANCELLED
    assert await h.service.deps.tables.table_for_chat(GROUP.key) is None  # free for a /newgame
    assert await h.deadlines.next_due() is None
    assert h.leaderboard is not None and await h.leaderboard.top(GROUP.key, 10) == []
    assert not (await h.service.pauses.chat_back(GROUP)).ok  # back after that: no table


async def test_a_chat_back_too_late_is_told_its_table_was_closed(stores: dict[str, object]) -> None:
    h = worker(stores, seed=85)
    tid = await paused_at_a_human_turn(h)
    h.advance(LIMIT + 5)  # no worker fired the closing yet (all were down)
    back = await h.service.pauses.chat_back(GROUP)
    assert back.ok
    assert [m.text for m in back.messages if m.slot == "notice"] == [ABANDONED]
    assert not [b for m in back.messages for row in m.buttons for b in row]  # the table without buttons
    assert (await h.load(tid)).table.status is TableStatus.CANCELLED
    h.advance(LIMIT)
    assert await h.fire_due() == []  # its closing went with the write that closed it


async def test_a_paused_lobby_gets_its_whole_time_again(stores: dict[str, object]) -> None:
    h = worker(stores, seed=86)
    await english(h, GROUP)
    tid = await h.lobby(GROUP, ANE)
    h.advance(800)
    assert (await h.service.pauses.chat_lost(GROUP.key)).ok
    h.advance(1000)  # the lobby would have expired meanwhile
    assert await h.fire_due() == []
    back = await h.service.pauses.chat_back(GROUP)
    assert [(m.slot, m.fresh) for m in back.messages] == [("lobby", True), ("notice", True)]
    assert (await h.load(tid)).table.due == h.now + FLOW.lobby_timeout


async def test_the_sweep_arms_a_lost_closing_again(stores: dict[str, object]) -> None:
    h = worker(stores, seed=87)
    tid = await paused_at_a_human_turn(h)
    key = (await h.load(tid)).table.due_key
    assert key is not None
    await h.deadlines.cancel(key)  # lost (an older version's claim, a restore)
    assert await rearm_lost_deadlines(h.service.deps.tables, h.deadlines) == [key]
    h.advance(LIMIT)
    assert len(await h.fire_due()) == 1
    assert (await h.load(tid)).table.status is TableStatus.CANCELLED
