"""Web replay benchmark: what replaying a kept match costs the worker and the network; prints figures,
asserts nothing.

    python bench/replay.py [--matches 3] [--requests 200]

Whole machine-only matches with señas are played on the in-process service and kept, then served by the
production :class:`adapters.web.replay.ReplayRoutes` over real HTTP on 127.0.0.1, asked for as the page asks
(``POST /api/replay``, one hand at a time, gzip accepted). Figures:

- frames per hand, and a hand's answer in bytes, as built and as sent (compressed);
- the time to build a hand's answer the first time (replaying its record to every entry and drawing each
  frame, in a thread), and to serve it again (from the cache: a store read and a lookup);
- how late the worker's event loop (which the chats share) woke a 1 ms timer meanwhile: what a replay
  being built costs everything else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)
sys.path.insert(1, str(ROOT / "tests"))

import aiohttp
from aiohttp import web
from service_helpers import ANE, GROUP, Harness

from adapters.web.replay import ReplayRoutes
from bench.figures import ms, percentile
from bot.kernel import ChatRef, UserRef, replay_place, sign_link

SECRET = b"bench-replay-secret-0123456789abcdef"


async def main(matches: int, requests: int) -> None:
    h = Harness()
    tables = []
    for n in range(matches):
        outcome = await h.service.new_machine_table(ChatRef(f"tg:-9{n}", title="Bench"), ANE, senas=True)
        assert outcome.table is not None
        tables.append(outcome.table)
    routes = ReplayRoutes(h.deps.history, SECRET, b"<!doctype html>", pause=0.7, clock=lambda: h.now)
    app = web.Application()
    routes.add_to(app)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    first: list[float] = []
    again: list[float] = []
    sent: list[int] = []
    built: list[int] = []
    frames: list[int] = []
    lag: list[float] = []

    async def ticker() -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            lag.append(time.perf_counter() - started - 0.001)

    ticking = asyncio.create_task(ticker())
    async with aiohttp.ClientSession(auto_decompress=False) as http:

        async def ask(table: str, link: str, hand: int) -> tuple[float, int, bytes]:
            started = time.perf_counter()
            body = {"table": table, "link": link, "lang": "es", "hand": hand}
            async with http.post(f"{base}/api/replay", json=body, headers={"Accept-Encoding": "gzip"}) as r:
                raw = await r.read()
                assert r.status == 200, r.status
            return time.perf_counter() - started, len(raw), raw

        links = {
            table: sign_link(SECRET, UserRef(GROUP.key, "", "es"), replay_place(table), h.now + 3600)
            for table in tables
        }
        numbers = {table: [n for n, _ in await h.deps.history.hands(table)] for table in tables}
        for table in tables:
            for number in numbers[table]:
                took, size, _ = await ask(table, links[table], number)
                first.append(took)
                sent.append(size)
        ticking.cancel()
        for table in tables:
            for i in range(requests):
                took, _, _ = await ask(table, links[table], numbers[table][i % len(numbers[table])])
                again.append(took)
        async with aiohttp.ClientSession() as plain:
            for table in tables:
                link = sign_link(SECRET, UserRef(GROUP.key, "", "es"), replay_place(table), h.now + 3600)
                for number, _ in await h.deps.history.hands(table):
                    body = {"table": table, "link": link, "lang": "es", "hand": number}
                    async with plain.post(f"{base}/api/replay", json=body) as r:
                        answer = await r.json()
                    built.append(len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()))
                    frames.append(len(answer["frames"]))
    await runner.cleanup()
    print(f"matches {matches} · hands {len(first)} · requests again {len(again)}")
    print(f"frames per hand: mean {statistics.mean(frames):.1f} · max {max(frames)}")
    print(
        f"a hand's answer: built {statistics.mean(built) / 1024:.1f} KB mean ({max(built) / 1024:.1f} max) · "
        f"sent gzipped {statistics.mean(sent) / 1024:.1f} KB mean ({max(sent) / 1024:.1f} max)"
    )
    print(
        f"first ask of a hand (replayed and drawn): p50 {ms(percentile(first, 0.5), 1)} · "
        f"p99 {ms(percentile(first, 0.99), 1)}"
    )
    print(
        f"the loop's timer late while hands were first built: p99 {ms(percentile(lag, 0.99), 1)} · "
        f"max {ms(max(lag), 1)}"
    )
    print(f"asked again (cached): p50 {ms(percentile(again, 0.5), 1)} · p99 {ms(percentile(again, 0.99), 1)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.matches, args.requests))
