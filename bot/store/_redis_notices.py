"""Table notices on Redis pub/sub (the contract: :mod:`bot.store._notices`).

A write is announced with ``PUBLISH P notice:{table_id} {version}``: one small message, sent only to the
connections subscribed to that table, and nearly free when none is (a table nobody watches on the web).
A listener keeps one connection of its own, subscribed to the channel of each table it follows.

On a Redis Cluster the same plain ``PUBLISH`` is used, and the listener subscribes on one node: a cluster
passes every plain publish to every node. (Sharded pub/sub, ``SPUBLISH``/``SSUBSCRIBE``, would keep each
notice on its table's shard; it needs Redis 7, and the servers the bot ships and tests with are Redis 6.2.)

The listener's connection is watched: silent for :data:`PING_INTERVAL` seconds, it is pinged, and a ping
unanswered for as long counts as a broken connection. A broken connection (Redis restarted, the network
cut) is opened again — after :data:`RETRY_DELAY`, doubling up to :data:`RETRY_MAX` while Redis stays away —
every followed table is subscribed again, and ``on_gap`` tells the listener to re-read them, since notices
published meanwhile were lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster

from bot.store._notices import OnGap, OnNotice, TableNotice
from bot.store._ports import DEFAULT_PREFIX, check_key, check_version
from bot.store._redis_client import AnyRedis, as_text, unavailable_errors

__all__ = ["PING_INTERVAL", "RETRY_DELAY", "RETRY_MAX", "RedisNoticeSubscription", "RedisTableNotices"]

log = logging.getLogger(__name__)

#: Seconds of silence after which the listener's connection is pinged (and as long again: taken for dead).
PING_INTERVAL = 15.0
#: Seconds before subscribing again after the connection broke (doubling while Redis stays away).
RETRY_DELAY = 0.2
#: The longest wait between two tries to subscribe again.
RETRY_MAX = 5.0
#: Seconds a ``follow`` waits for the server to confirm the subscription (then it goes on: a listener keeps
#: a safety poll, and a subscription that could not be made reports a gap once it is).
CONFIRM_TIMEOUT = 2.0


class RedisTableNotices:
    """Table notices through Redis pub/sub, shared by every worker on the same Redis (and key prefix)."""

    def __init__(self, redis: AnyRedis, *, prefix: str = DEFAULT_PREFIX) -> None:
        """Publish with ``redis`` (not owned); listeners open connections of their own from its pool."""
        self._redis = redis
        self._prefix = f"{prefix}notice:"

    def channel(self, table_id: str) -> str:
        """The channel of ``table_id``'s notices."""
        return self._prefix + table_id

    async def publish(self, table_id: str, version: int) -> None:
        """Announce that ``table_id`` was written as ``version``; ``StoreUnavailable`` if Redis is away."""
        check_key(table_id, "table id")
        check_version(version)
        with unavailable_errors():
            await self._redis.publish(self.channel(table_id), str(version))

    def subscribe(self, on_notice: OnNotice, on_gap: OnGap) -> RedisNoticeSubscription:
        """A new subscription (its connection opens with its first ``follow``)."""
        return RedisNoticeSubscription(self._redis, self._prefix, on_notice, on_gap)


class RedisNoticeSubscription:
    """One listener's connection and the tables it follows (see the module docstring)."""

    def __init__(
        self,
        redis: AnyRedis,
        channel_prefix: str,
        on_notice: OnNotice,
        on_gap: OnGap,
        *,
        ping_interval: float = PING_INTERVAL,
        retry_delay: float = RETRY_DELAY,
    ) -> None:
        """Listen on a connection of ``redis``'s for the channels ``channel_prefix + table id``."""
        self._redis = redis
        self._prefix = channel_prefix
        self._on_notice = on_notice
        self._on_gap = on_gap
        self._ping_interval = ping_interval
        self._retry_delay = retry_delay
        self._tables: set[str] = set()
        self._pubsub: PubSub | None = None
        """The live connection's, once every followed table is subscribed on it (``None`` in between)."""
        self._waiting: dict[str, list[asyncio.Future[None]]] = {}
        """The ``follow`` calls waiting for their channel's confirmation."""
        self._gap_after: str | None = None
        """The channel whose confirmation ends a resubscription (then ``on_gap`` is called)."""
        self._task: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    async def follow(self, table_id: str) -> None:
        """Hear ``table_id``'s notices; returns once Redis confirmed it (or after :data:`CONFIRM_TIMEOUT`)."""
        channel = self._prefix + check_key(table_id, "table id")
        self._tables.add(table_id)
        confirmed = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(channel, []).append(confirmed)
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        elif self._pubsub is not None:
            await self._send(self._pubsub, "subscribe", channel)
        try:
            await asyncio.wait_for(asyncio.shield(confirmed), CONFIRM_TIMEOUT)
        except TimeoutError:
            waiting = self._waiting.get(channel, [])
            if confirmed in waiting:
                waiting.remove(confirmed)
            if not waiting:
                self._waiting.pop(channel, None)  # (nothing kept for a table that may be unfollowed)

    def unfollow(self, table_id: str) -> None:
        """Stop hearing ``table_id``'s notices (the unsubscription is sent in the background)."""
        self._tables.discard(table_id)
        pubsub = self._pubsub
        if pubsub is None:
            return  # not subscribed on any connection now; the next one subscribes only what is followed

        async def unsubscribe() -> None:
            if table_id not in self._tables:  # (not followed again meanwhile)
                await self._send(pubsub, "unsubscribe", self._prefix + table_id)

        task = asyncio.create_task(unsubscribe())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def close(self) -> None:
        """Stop listening and close the connection."""
        self._tables.clear()
        tasks = [t for t in (self._task, *self._sending) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._task = None
        for waiting in self._waiting.values():  # a follow still waiting returns: nothing more will come
            for confirmed in waiting:
                if not confirmed.done():
                    confirmed.set_result(None)
        self._waiting.clear()

    async def _send(self, pubsub: PubSub, command: str, channel: str) -> None:
        """(Un)subscribe one channel on the live connection; a failure is the reader's to see and mend."""
        with contextlib.suppress(Exception):
            await getattr(pubsub, command)(channel)

    async def _run(self) -> None:
        """Sessions one after the other: a broken connection is opened again, after a pause."""
        delay, gap, failing = self._retry_delay, False, False
        while True:
            try:
                await self._session(gap)
            except Exception as exc:  # broken, refused, restarting: the same answer to each
                if self._pubsub is not None:  # it was subscribed: a new outage, told once
                    delay, failing = self._retry_delay, False
                if not failing:
                    log.warning("table notices: subscription interrupted (%s); subscribing again", exc)
                failing = True
            self._pubsub = None
            gap = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    async def _session(self, gap: bool) -> None:
        """One connection: subscribe every followed table, then hear notices until it breaks."""
        pubsub = await self._open()
        try:
            channels = [self._prefix + t for t in self._tables]
            if channels:
                await pubsub.subscribe(*channels)
            self._pubsub = pubsub  # from now on a new follow subscribes itself
            late = [self._prefix + t for t in self._tables if self._prefix + t not in channels]
            if late:
                await pubsub.subscribe(*late)
            if gap:
                log.info("table notices: subscribed again (%d tables)", len(channels))
                if channels:
                    self._gap_after = channels[-1]  # re-read once the server confirmed them all
                else:
                    self._on_gap()
            await self._listen(pubsub)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # (redis-py < 8.2)

    async def _open(self) -> PubSub:
        """A connection of its own: to the server, or to one node of a cluster."""
        if isinstance(self._redis, RedisCluster):
            with unavailable_errors():
                await self._redis.initialize()
            pubsub: PubSub = self._redis.pubsub(node=self._redis.get_random_node())
        else:
            pubsub = self._redis.pubsub()
        await pubsub.connect()  # type: ignore[no-untyped-call,unused-ignore]  # (redis-py < 8.2)
        return pubsub

    async def _listen(self, pubsub: PubSub) -> None:
        """Hand each message to :meth:`_heard` until the connection breaks or stays silent to a ping."""
        pinged = False
        while True:
            message = await pubsub.get_message(timeout=self._ping_interval)
            if message is None:
                if pinged:
                    raise ConnectionError("the notices' connection did not answer a ping")
                await pubsub.ping()
                pinged = True
                continue
            pinged = False
            self._heard(message)

    def _heard(self, message: dict[str, Any]) -> None:
        """A notice, or a subscription's confirmation."""
        kind, channel = as_text(message["type"]), as_text(message["channel"] or "")
        if kind == "message" and channel.startswith(self._prefix):
            table_id = channel[len(self._prefix) :]
            try:
                version = int(as_text(message["data"]))
            except ValueError:
                return  # not ours: a notice is a version
            if table_id in self._tables and version > 0:
                self._on_notice(TableNotice(table_id, version))
        elif kind == "subscribe":
            for confirmed in self._waiting.pop(channel, []):
                if not confirmed.done():
                    confirmed.set_result(None)
            if channel == self._gap_after:
                self._gap_after = None
                self._on_gap()
