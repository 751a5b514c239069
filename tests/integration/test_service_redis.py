"""The bot service on a real Redis: restarts, outages, concurrent workers, a whole match.

Services are built like :func:`bot.ops._bootstrap.build_app` does (Redis tables, deadlines, preferences and
leaderboard) on the session server and on the session cluster of ``conftest.py`` with the test's key prefix,
or on an :class:`~bot.store._embedded.EmbeddedRedis` of the test's own when the test stops and restarts the
server. Two services on two clients stand for two workers of the bot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from service_helpers import (
    ANE,
    BRAIS,
    GROUP,
    ZERO,
    Harness,
    buttons_of,
    code_of,
    english,
)

from bot.i18n import translator
from bot.kernel import TableStatus, UserRef
from bot.leaderboard import GLOBAL_SCOPE, RedisLeaderboard
from bot.store import AnyRedis, RedisPreferences
from bot.store._embedded import EmbeddedRedis
from bot.store._redis_deadlines import RedisDeadlineStore
from bot.store._redis_store import RedisTableStore
from bot.table import FlowSettings

ClientFactory = Callable[..., Awaitable[AnyRedis]]
UNAVAILABLE = "The game store is unavailable right now; try again in a moment."
PAUSED = FlowSettings(turn_timeout=60, machine_delay=2, next_hand_delay=4, catch_window=3, lobby_timeout=900)
USERS = {ANE.key: ANE, BRAIS.key: BRAIS}


def quick_client(url: str, **options: Any) -> Redis:
    """A client that gives up fast when the server is gone (the default retries for seconds)."""
    settings: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": 2.0,
        "socket_connect_timeout": 2.0,
        "retry": Retry(ExponentialBackoff(cap=0.05, base=0.005), 2),
    }
    return Redis.from_url(url, **{**settings, **options})


def worker(client: AnyRedis, prefix: str, *, settings: FlowSettings = ZERO, **kwargs: Any) -> Harness:
    """A service on Redis, wired like bootstrap.build_app (fake clock, seeded randomness)."""
    return Harness(
        tables=RedisTableStore(client, prefix=prefix),
        deadlines=RedisDeadlineStore(client, prefix=prefix),
        prefs=RedisPreferences(client, prefix=prefix),
        leaderboard=RedisLeaderboard(client, prefix=prefix),
        settings=settings,
        **kwargs,
    )


def on_turn(state: Any) -> UserRef:
    key = state.user_on_turn()
    assert key in USERS, f"a machine is on turn: {key}"
    return USERS[key]


async def test_a_restarted_bot_and_redis_resume_the_game_and_old_buttons_work(tmp_path: Path) -> None:
    data = tmp_path / "redis"
    server = EmbeddedRedis(data, appendonly=True, if_running="fail").start()
    client = quick_client(server.url)
    restarted: EmbeddedRedis | None = None
    client2: Redis | None = None
    try:
        h = worker(client, "mus:", settings=PAUSED, seed=31)
        await english(h)
        tid = await h.started(GROUP, ANE, (BRAIS, 1))
        for _ in range(4):  # a few actions: the humans play, the machines' pauses fire
            state = await h.wait_for_human(tid)
            assert (await h.press(on_turn(state), h.turn_tokens(tid, GROUP.key)[0])).ok
        state = await h.wait_for_human(tid)
        screen_token = h.turn_tokens(tid, GROUP.key)[0]
        pending = await h.deadlines.next_due()
        old_pid = server.pid
        await client.aclose()
        server.stop()  # SIGTERM: Redis writes its AOF and exits (the bot process "dies" with it)

        restarted = EmbeddedRedis(data, appendonly=True, if_running="fail").start()
        assert restarted.pid != old_pid and not restarted.reused
        client2 = quick_client(restarted.url)
        h2 = worker(client2, "mus:", settings=PAUSED, seed=32, clock=h.clock)  # a new bot process
        after = await h2.load(tid)
        assert after.version == state.version
        assert after.stored.data == state.stored.data
        assert after.table.hand_no == state.table.hand_no
        assert after.match.hand.hands == state.match.hand.hands
        assert await h2.tables.table_for_chat(GROUP.key) == tid
        assert await h2.deadlines.next_due() == pending  # the turn's deadline survived too
        assert (await h2.prefs.get_language(GROUP.key)) == "en"

        o = await h2.press(on_turn(after), screen_token)  # the button drawn before the restart
        assert o.ok, o.answer
        assert any(m.slot == "table" for m in o.messages)
        moved = await h2.load(tid)
        assert moved.version > after.version
        assert moved.match.hand.log[len(after.match.hand.log)].seat == after.turn
        # And the deadlines scheduled before the restart fire on the new process.
        again = await h2.wait_for_human(tid)
        assert again.version >= moved.version
    finally:
        if client2 is not None:
            await client2.aclose()
        if restarted is not None:
            restarted.stop()
        server.stop()


async def test_an_outage_is_answered_and_play_continues_after_it(tmp_path: Path) -> None:
    data = tmp_path / "redis"
    server = EmbeddedRedis(data, appendonly=True, if_running="fail").start()
    client = quick_client(server.url)
    restarted: EmbeddedRedis | None = None
    try:
        h = worker(client, "mus:", seed=41)
        await english(h)
        tid = await h.started(GROUP, ANE, (BRAIS, 1))
        state = await h.load(tid)
        user = on_turn(state)
        token = h.turn_tokens(tid, GROUP.key)[0]
        url = server.url
        server.stop()

        o = await h.press(user, token)
        assert (o.ok, o.answer) == (False, UNAVAILABLE)
        o = await h.service.new_table(GROUP, BRAIS)  # the chat's language is unknown: Spanish, the default
        assert not o.ok and o.answer in (UNAVAILABLE, translator("es").gettext(UNAVAILABLE))
        assert await h.service.deadlines.fire_due(h.now + 1000) == []
        o = await h.service.chats.leaderboard(GROUP, ANE)
        assert not o.ok and o.answer in (UNAVAILABLE, translator("es").gettext(UNAVAILABLE))

        restarted = EmbeddedRedis(data, appendonly=True, if_running="fail").start()
        assert restarted.url == url  # the same unix socket
        o = await h.press(user, token)  # the same client reconnects to the same socket
        assert o.ok, o.answer
        after = await h.load(tid)
        assert after.version == state.version + 1
    finally:
        await client.aclose()
        if restarted is not None:
            restarted.stop()
        server.stop()


async def test_two_workers_pressing_the_same_button_apply_it_once(
    make_client: ClientFactory, key_prefix: str
) -> None:
    w1 = worker(await make_client(), key_prefix, seed=51)
    w2 = worker(await make_client(), key_prefix, seed=52, clock=w1.clock, id_prefix="u")
    await english(w1)
    tid = await w1.started(GROUP, ANE, (BRAIS, 1))
    rounds = 0
    for _round in range(6):
        state = await w1.load(tid)
        if state.table.status is not TableStatus.PLAYING:
            break
        if state.user_on_turn() is None or state.match.hand.phase.value == "discard":
            break
        rounds += 1
        user = on_turn(state)
        token = sorted(w1.turn_tokens(tid, GROUP.key))[0]
        a, b = await asyncio.gather(w1.press(user, token), w2.press(user, token))
        assert sorted([a.ok, b.ok]) == [False, True], (a.answer, b.answer)
        loser = b if a.ok else a
        assert loser.answer in ("Already played.", "Not your turn."), loser.answer
        after = await w1.load(tid)
        assert after.version == state.version + 1
        if after.table.hand_no == state.table.hand_no:
            assert after.match.hand.log[len(state.match.hand.log)].seat == state.turn
        winner = a if a.ok else b
        for w in (w1, w2):
            w.record(winner)
    assert rounds >= 2


async def test_two_workers_pressing_different_buttons_of_one_turn_apply_one(
    make_client: ClientFactory, key_prefix: str
) -> None:
    w1 = worker(await make_client(), key_prefix, seed=61)
    w2 = worker(await make_client(), key_prefix, seed=62, clock=w1.clock)
    await english(w1)
    tid = await w1.started(GROUP, ANE, (BRAIS, 1))
    state = await w1.load(tid)
    user = on_turn(state)
    tokens = sorted(w1.turn_tokens(tid, GROUP.key))
    assert len(tokens) >= 2
    a, b = await asyncio.gather(w1.press(user, tokens[0]), w2.press(user, tokens[1]))
    assert sorted([a.ok, b.ok]) == [False, True], (a.answer, b.answer)
    after = await w1.load(tid)
    assert after.version == state.version + 1
    played = after.match.hand.log[len(state.match.hand.log)]
    assert played.seat == state.turn
    won = tokens[0] if a.ok else tokens[1]
    assert played.action.kind.value.replace("_", "") == code_of(won), (played, won)


async def test_a_deadline_claimed_by_two_workers_fires_once(
    make_client: ClientFactory, key_prefix: str
) -> None:
    w1 = worker(await make_client(), key_prefix, settings=PAUSED, seed=71)
    w2 = worker(await make_client(), key_prefix, settings=PAUSED, seed=72, clock=w1.clock)
    await english(w1)
    tid = await w1.started(GROUP, ANE)
    checked = {"machine": 0, "turn": 0}
    for _ in range(60):
        state = await w1.load(tid)
        kind = state.table.due_key.split("|")[1]
        w1.set_time(state.table.due)
        steps = len(state.match.hand.log)
        if kind in checked and checked[kind] < 2:
            if checked[kind] % 2 == 0:  # both workers' loops claim at the same moment
                outs = await asyncio.gather(w1.fire_due(), w2.fire_due())
                fired = [o for batch in outs for o in batch]
            else:  # or both got hold of the key and fire it
                key = state.table.due_key
                fired = list(await asyncio.gather(w1.fire(key), w2.fire(key)))
                fired = [o for o in fired if o.messages]
            assert len(fired) == 1, [o.answer for o in fired]
            after = await w1.load(tid)
            assert after.version == state.version + 1
            if after.table.hand_no == state.table.hand_no:
                # One firing (one write, above): the seat on turn played, then the machines after it.
                played = after.match.hand.log[steps:]
                assert played and played[0].seat == state.turn
            checked[kind] += 1
            if all(v >= 2 for v in checked.values()):
                return
        else:
            await w1.fire_due()
    pytest.fail(f"not enough deadlines seen: {checked}")


async def test_a_four_machine_match_on_redis_ends_with_a_winner_and_leaderboards(
    redis_client: AnyRedis, key_prefix: str
) -> None:
    h = worker(redis_client, key_prefix, seed=81)
    await english(h)
    o = await h.service.new_machine_table(GROUP, ANE)
    assert o.ok, o.answer
    state = await h.load(o.table)
    assert state.table.status is TableStatus.FINISHED
    assert state.table.match.winner in (0, 1)
    assert await h.tables.table_for_chat(GROUP.key) is None
    ttl = await redis_client.ttl(RedisTableStore(redis_client, key_prefix).table_key(o.table))
    assert 0 < ttl <= 7 * 86400  # finished tables expire
    # Machine seats are not players: never listed on a leaderboard.
    assert await h.leaderboard.top(GROUP.key) == [] and await h.leaderboard.top(GLOBAL_SCOPE) == []
    text = (await h.service.chats.leaderboard(GROUP, ANE, "global")).messages[0].text
    assert "🤖" not in text
    assert any(m.slot == "showdown" and "win the match" in m.text for m in o.messages)
    assert not buttons_of(m for m in o.messages if m.slot == "showdown")
