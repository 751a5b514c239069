"""Wiring: one place builds the service from settings. Nothing is created at import time."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.metadata
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis

from bot.app import Service, ServiceDeps, secure_rng, secure_table_id
from bot.delivery import Delivery, MemoryOutbox, Outbox, RedisOutbox, destination, split_key
from bot.history import RedisHistory
from bot.kernel import Outcome, OutMessage, record_build
from bot.leaderboard import RedisLeaderboard, RedisResultQueue
from bot.lessons import RedisProgress
from bot.ops._settings import Settings
from bot.ops._sweep import OUTAGE_ERRORS, SWEEP_INTERVAL, DeadlineSweep, OutageLog
from bot.store import (
    AnyRedis,
    EmbeddedRedis,
    EmbeddedRedisError,
    MemoryTableNotices,
    RedisDeadlineStore,
    RedisOnce,
    RedisPreferences,
    RedisTableNotices,
    RedisTableStore,
    StoreUnavailable,
    connect,
)
from bot.table import FlowSettings

log = logging.getLogger(__name__)

#: The distribution whose metadata holds the version: ``version`` in ``pyproject.toml``, its one source.
DISTRIBUTION = "musbot"


def musbot_version() -> str:
    """This musbot's version, as installed (``pip install`` wrote it from ``pyproject.toml``); ``0+unknown``
    when the code runs without being installed (then nothing says which commit it is)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


class StartupError(RuntimeError):
    """The bot cannot start (Redis or a chat platform unreachable, the embedded server failing): one line,
    where and why, never a secret. ``musbot`` prints ``musbot: <the line>`` and exits with
    :attr:`exit_status`, 1: a service manager restarts it, and it may well start next time."""

    exit_status = 1


class SettingRefused(StartupError):
    """A setting the other side refused (a chat platform rejected its token): restarting will not help, so
    ``musbot`` exits with status 2, as for a bad setting (the systemd units do not restart on 2). The line
    names the variable first, as the settings' own lines do: ``TELEGRAM_TOKEN: rejected by …``."""

    exit_status = 2

    def __init__(self, variable: str, why: str) -> None:
        """``variable`` (e.g. ``TELEGRAM_TOKEN``) was refused because of ``why``, which must not hold it."""
        super().__init__(f"{variable}: {why}")
        self.variable = variable


@dataclass
class App:
    """A running bot core: the service and what it owns."""

    service: Service
    redis: AnyRedis
    """The client: of one server, or of a Redis Cluster (``REDIS_URL=redis+cluster://…``)."""
    server: EmbeddedRedis | None
    outbox: Outbox = field(default_factory=MemoryOutbox)
    """Views a deadline fired here produced for a platform this process does not serve (see
    :mod:`bot.delivery._outbox`): the deadline loop's, shared by every worker through Redis."""
    watchdog: asyncio.Task[None] | None = None
    """Restarts the embedded server if it dies (see :func:`watch_embedded`)."""
    watchdog_stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def ping(self) -> bool:
        """Whether Redis answers (a readiness check)."""
        return bool(await self.redis.ping())

    async def close(self) -> None:
        """Stop the watchdog, close the Redis client and stop an embedded server this app started."""
        if self.watchdog is not None:
            self.watchdog_stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watchdog  # not cancelled: a restart in progress finishes before the stop
            self.watchdog = None
        await self.redis.aclose()
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)


#: Seconds between two looks at the embedded server.
WATCH_INTERVAL = 1.0


async def watch_embedded(
    server: EmbeddedRedis,
    stop: asyncio.Event,
    interval: float = WATCH_INTERVAL,
    *,
    redis: Redis | None = None,
) -> None:
    """Until ``stop`` is set, check every ``interval`` that the embedded server runs; start it again if not.

    The server comes back on the same socket (or port) with its AOF, and the connections ``redis`` pooled to
    the dead one are dropped, so the next commands connect to the new one: an outage lasts about a second,
    during which commands answer "store unavailable". A process that reused another one's server takes it
    over this way when that one exits.
    """
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
        if stop.is_set() or server.alive():
            continue
        try:
            if await asyncio.to_thread(server.revive):
                log.warning("the embedded Redis server had stopped: running again (pid %s)", server.pid)
                if redis is not None:
                    await redis.connection_pool.disconnect()
        except Exception as exc:  # try again in a second; never a traceback per second in the log
            log.error("the embedded Redis server had stopped and could not be started again: %s", exc)


def tune_gc() -> None:
    """Fewer garbage collections for a long-running bot.

    Each worker keeps parsed tables in memory; with Python's default thresholds the collector walks them
    so often that it dominated the tail latency (bench/service.py: p99 144 ms → 30 ms, throughput +25%).
    Objects alive at start-up are frozen out of collection altogether.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 1_000)


async def build_app(
    settings: Settings,
    *,
    flow: FlowSettings | None = None,
    clock: Callable[[], float] = time.time,
    rng_factory: Callable[[], random.Random] = secure_rng,
    id_factory: Callable[[], str] = secure_table_id,
    web_notices: bool = False,
) -> App:
    """Connect to Redis (``REDIS_URL``, or an embedded server under ``DATA_DIR``) and build the service; with
    ``web_notices``, every table write is announced on Redis for the web table's servers (a process that
    serves it, or a worker of a bot that has one).

    Redis must answer first: :class:`StartupError` says why not, in one line. An embedded server is watched
    (and started again if it dies) until :meth:`App.close`.
    """
    tune_gc()
    record_build(musbot_version())
    try:
        redis, server = await connect(settings.redis_url, settings.data_dir)
    except (StoreUnavailable, EmbeddedRedisError) as exc:
        raise StartupError(str(exc)) from exc
    except OSError as exc:  # the data directory cannot be created or written
        reason = exc.strerror or str(exc)
        where = exc.filename or settings.data_dir
        raise StartupError(f"cannot keep the embedded Redis in DATA_DIR ({where}): {reason}") from exc
    service = redis_service(
        redis,
        settings.redis_prefix,
        flow or settings.flow(),
        clock=clock,
        rng_factory=rng_factory,
        id_factory=id_factory,
        history_days=settings.history_days,
        web_notices=web_notices,
    )
    app = App(service, redis, server, outbox=RedisOutbox(redis, prefix=settings.redis_prefix))
    if server is not None and isinstance(redis, Redis):  # (an embedded server is never a cluster)
        app.watchdog = asyncio.create_task(watch_embedded(server, app.watchdog_stop, redis=redis))
    return app


def redis_service(
    redis: AnyRedis,
    prefix: str,
    flow: FlowSettings,
    *,
    clock: Callable[[], float] = time.time,
    rng_factory: Callable[[], random.Random] = secure_rng,
    id_factory: Callable[[], str] = secure_table_id,
    history_days: float = 30,
    web_notices: bool = False,
) -> Service:
    """The service on Redis stores, as production wires it (results rated off the command path); finished
    hands are kept ``history_days`` days. Table writes are announced on Redis with ``web_notices`` only: a
    bot without a web table spends no command on them."""
    deps = ServiceDeps(
        tables=RedisTableStore(redis, prefix=prefix),
        deadlines=RedisDeadlineStore(redis, prefix=prefix),
        prefs=RedisPreferences(redis, prefix=prefix),
        leaderboard=RedisLeaderboard(redis, prefix=prefix),
        results=RedisResultQueue(redis, prefix=prefix),
        once=RedisOnce(redis, prefix=prefix),
        lessons=RedisProgress(redis, prefix=prefix),
        history=RedisHistory(redis, prefix=prefix, retention=history_days * 86400),
        notices=RedisTableNotices(redis, prefix=prefix) if web_notices else MemoryTableNotices(),
        atomic_deadlines=True,
        settings=flow,
        clock=clock,
        rng_factory=rng_factory,
        id_factory=id_factory,
    )
    return Service(deps)


async def run_deadlines(
    service: Service,
    on_outcome: Callable[[Outcome], Awaitable[None]],
    stop: asyncio.Event,
    *,
    clock: Callable[[], float] = time.time,
    max_sleep: float = 0.5,
    sweep_interval: float = SWEEP_INTERVAL,
    drain: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Fire due deadlines until ``stop`` is set; hand each outcome to the adapter to render.

    Every worker runs this loop; the store's atomic claim makes each deadline fire on one worker only (a
    claim is a lease: if this worker dies before the firing is saved, another fires it when the lease ends).
    At start-up, every ``sweep_interval`` seconds and after an outage it arms again the pending deadlines of
    live tables that the store lost (:mod:`bot.ops._sweep`). An outage of the store is logged once, with its
    cause, and once when it ends. ``drain`` runs every round (at most ``max_sleep`` apart).
    """
    sweep = DeadlineSweep(service.deps.tables, service.deps.deadlines, interval=sweep_interval, clock=clock)
    outage = OutageLog(log, "deadline loop")
    wakes = service.tables.wakes
    while not stop.is_set():
        wakes.round_begins()
        try:
            await sweep.run_if_due()
            if drain is not None:
                await drain()  # what other processes fired for the platforms this one serves
            for outcome in await service.deadlines.fire_due():
                await on_outcome(outcome)
            await service.tables.drain_results()
            upcoming = await service.deadlines.next_due()
        except OUTAGE_ERRORS as exc:  # Redis down or restarting: keep trying, quietly
            outage.failed(exc)
            sweep.soon()
            upcoming = None
        except Exception:  # the loop must survive a bad moment (an adapter error)
            log.exception("deadline loop error")
            upcoming = None
        else:
            outage.succeeded()
        wait = max_sleep if upcoming is None else min(max_sleep, max(0.0, upcoming - clock()))
        await wakes.sleep(upcoming, wait, stop)  # or less: a command schedules one due sooner, the stop


@dataclass
class DeadlineLoop:
    """The one deadline loop of a process, handing what fires to every platform's delivery.

    One per service: the loop waits on the service's "deadline added" event, which a second loop would
    steal. Each delivery ignores the views of chats that are not its platform's.
    """

    service: Service
    deliveries: list[Delivery] = field(default_factory=list)
    outbox: Outbox = field(default_factory=MemoryOutbox)
    """Where views for a platform this process does not serve wait for a process that serves it."""
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    async def on_outcome(self, outcome: Outcome) -> None:
        """Render what a fired deadline produced, on whichever platform its chat is: here if this process
        serves it, else through that platform's outbox (:mod:`bot.delivery._outbox`)."""
        for delivery in self.deliveries:
            delivery.deliver(outcome.messages)
        foreign: dict[str, list[OutMessage]] = {}
        for message in outcome.messages:
            chat = destination(message)
            if chat is not None and not any(d.owns(chat) for d in self.deliveries):
                foreign.setdefault(split_key(chat)[0], []).append(message)
        for platform, messages in foreign.items():
            try:
                await self.outbox.push(platform, messages)
            except StoreUnavailable:
                log.warning("views for %s were lost: the store is unavailable", platform)

    async def drain_outboxes(self) -> None:
        """Deliver what other processes' deadlines produced for the platforms this one serves."""
        for delivery in self.deliveries:
            if delivery.key_platform:
                messages = await self.outbox.pop(delivery.key_platform)
                if messages:
                    delivery.deliver(messages)

    def start(self) -> None:
        """Start firing deadlines in the background."""
        self.stop_event.clear()
        self.task = asyncio.create_task(
            run_deadlines(self.service, self.on_outcome, self.stop_event, drain=self.drain_outboxes)
        )

    async def stop(self) -> None:
        """Stop the loop (the deliveries are their owners' to close)."""
        self.stop_event.set()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
