"""Table notices (bot/store/_notices.py): one contract, run on the in-process fake and on Redis (one server
and a cluster); and, on Redis, a subscription that outlives a restart of the server."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.store import (
    AnyRedis,
    EmbeddedRedis,
    MemoryTableNotices,
    NoticeSubscription,
    RedisTableNotices,
    StoreUnavailable,
    TableNotice,
    TableNotices,
    connect,
)


@dataclass
class Listener:
    """What one subscription heard."""

    notices: list[TableNotice] = field(default_factory=list)
    gaps: int = 0
    heard: asyncio.Event = field(default_factory=asyncio.Event)

    def on_notice(self, notice: TableNotice) -> None:
        self.notices.append(notice)
        self.heard.set()

    def on_gap(self) -> None:
        self.gaps += 1
        self.heard.set()

    async def until(self, count: int, timeout: float = 5.0) -> list[TableNotice]:
        """The notices heard, once there are ``count`` of them."""
        deadline = time.monotonic() + timeout
        while len(self.notices) < count:
            self.heard.clear()
            await asyncio.wait_for(self.heard.wait(), max(0.01, deadline - time.monotonic()))
        return self.notices

    async def quiet(self, seconds: float = 0.2) -> list[TableNotice]:
        """The notices heard after ``seconds`` without waiting for any in particular."""
        await asyncio.sleep(seconds)
        return self.notices


@pytest.fixture(params=["memory", "redis"])
def notices(request: pytest.FixtureRequest, redis_client: AnyRedis, key_prefix: str) -> TableNotices:
    """Table notices: the in-process fake or Redis (the same contract)."""
    if request.param == "memory":
        return MemoryTableNotices()
    return RedisTableNotices(redis_client, prefix=key_prefix)


@pytest.fixture
async def subscriptions(notices: TableNotices) -> AsyncIterator[list[NoticeSubscription]]:
    """The subscriptions a test made, closed after it."""
    made: list[NoticeSubscription] = []
    yield made
    for subscription in made:
        await subscription.close()


def subscribe(notices: TableNotices, made: list[NoticeSubscription]) -> tuple[NoticeSubscription, Listener]:
    listener = Listener()
    subscription = notices.subscribe(listener.on_notice, listener.on_gap)
    made.append(subscription)
    return subscription, listener


async def test_a_notice_reaches_every_follower_of_its_table_in_order(
    notices: TableNotices, subscriptions: list[NoticeSubscription]
) -> None:
    web_a, heard_a = subscribe(notices, subscriptions)
    web_b, heard_b = subscribe(notices, subscriptions)
    await web_a.follow("tab00001")
    await web_b.follow("tab00001")
    await web_b.follow("tab00002")
    # Published right after follow returned: heard (follow returns once the subscription is in place).
    for version in (2, 3, 4):
        await notices.publish("tab00001", version)
    await notices.publish("tab00002", 7)
    await notices.publish("tab00003", 1)  # followed by nobody: nobody hears it, and it is no error
    assert await heard_a.until(3) == [TableNotice("tab00001", v) for v in (2, 3, 4)]
    # One table's notices come in the order published (two tables' may cross on a cluster).
    assert [n for n in await heard_b.until(4) if n.table_id == "tab00001"] == heard_a.notices
    assert TableNotice("tab00002", 7) in heard_b.notices and len(heard_b.notices) == 4
    assert await heard_a.quiet() == heard_a.notices[:3] and heard_a.gaps == heard_b.gaps == 0


async def test_unfollowing_stops_a_tables_notices_and_following_again_resumes_them(
    notices: TableNotices, subscriptions: list[NoticeSubscription]
) -> None:
    web, heard = subscribe(notices, subscriptions)
    await web.follow("tab00001")
    await web.follow("tab00002")
    web.unfollow("tab00001")
    await asyncio.sleep(0.1)  # (the unsubscription is sent in the background)
    await notices.publish("tab00001", 5)
    await notices.publish("tab00002", 5)
    assert await heard.until(1) == [TableNotice("tab00002", 5)]
    web.unfollow("tab00002")
    await web.follow("tab00002")  # unfollowed and followed again at once: still heard
    await web.follow("tab00001")
    await notices.publish("tab00001", 6)
    await notices.publish("tab00002", 6)
    assert sorted(await heard.until(3), key=lambda n: n.table_id) == [
        TableNotice("tab00001", 6),
        TableNotice("tab00002", 5),
        TableNotice("tab00002", 6),
    ]
    assert len(await heard.quiet()) == 3


async def test_a_closed_subscription_hears_nothing(
    notices: TableNotices, subscriptions: list[NoticeSubscription]
) -> None:
    web, heard = subscribe(notices, subscriptions)
    await web.follow("tab00001")
    await web.close()
    await notices.publish("tab00001", 2)
    assert await heard.quiet() == []


async def test_a_notice_is_a_table_id_and_a_positive_version(notices: TableNotices) -> None:
    for table_id, version in (("", 1), ("tab00001", 0), ("tab00001", -3)):
        with pytest.raises(ValueError):
            await notices.publish(table_id, version)


# -- Redis only: the subscription outlives the server ---------------------------------------------------


async def test_a_subscription_comes_back_after_a_redis_restart_and_says_notices_were_lost(
    tmp_path: Path,
) -> None:
    """Redis killed and started again on the same socket: the subscription reports the gap (the web table
    then re-reads what it shows), follows the same tables again, and hears the next notices."""
    server = EmbeddedRedis(tmp_path / "data").start()
    client, _ = await connect(server.url, tmp_path / "unused")
    notices = RedisTableNotices(client)
    heard = Listener()
    web = notices.subscribe(heard.on_notice, heard.on_gap)
    try:
        await web.follow("tab00001")
        await notices.publish("tab00001", 2)
        assert await heard.until(1) == [TableNotice("tab00001", 2)]
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
        await asyncio.sleep(0.2)
        with pytest.raises(StoreUnavailable):  # a writer meanwhile: its notice cannot be sent
            await notices.publish("tab00001", 3)
        assert server.revive()
        await client.connection_pool.disconnect()  # (as the embedded server's watchdog does)
        deadline = time.monotonic() + 10
        while heard.gaps == 0:
            assert time.monotonic() < deadline, "the subscription never came back"
            await asyncio.sleep(0.05)
        await notices.publish("tab00001", 4)
        assert await heard.until(2) == [TableNotice("tab00001", 2), TableNotice("tab00001", 4)]
        assert heard.gaps == 1
    finally:
        await web.close()
        await client.aclose()
        server.stop()
