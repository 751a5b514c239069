"""Web table benchmark: one worker with many open pages; prints figures, asserts nothing.

    python bench/web.py [--tables 250] [--pages-per-table 4] [--moves 400]

One process serves the web table (the production :class:`adapters.web.server.WebTable` and
:class:`adapters.web.feed.Hub`, ``WEB_MOVE_PAUSE`` 0 so that only the pushing is timed) on the production
service and the embedded Redis, with ``--tables`` group tables of four people each. A second process (this
script with ``--clients``) opens one page per seat (``--pages-per-table``) — a session and its event stream,
as the page's script does — and records when each frame arrives and its size. The serving process then plays
``--moves`` moves, one at a time on random tables, alternately as a page's press (the web table's own
service) and as a chat's press on another service (its own cache, on the same Redis: another worker). Either
way the pages learn of it only from the write's notice (Redis pub/sub); the hub's safety poll is set to a
minute, so it plays no part.

Figures:

- push latency p50/p99, for the page presses and for the chat presses: from the change's write (its
  compare-and-set answered) to its frame's arrival at each page of the table (target p99 <= 50 ms);
- store reads per change: the hub's reads of a table, per change pushed (one: all its pages share it);
- memory per open page: the serving process's resident memory after the pages opened, less before, per page
  (target <= 50 KB);
- first load: the page, its script, card art and style, and the first frame (target <= 150 KB);
- bytes per update: the mean size of a frame after a page's first (target <= 1 KB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp
from aiohttp import web

from adapters.web.feed import Hub
from adapters.web.frames import page
from adapters.web.server import STATIC_FILES, WebTable
from bot.app import Service
from bot.kernel import ChatRef, UserRef, lobby_stamp, make_token, sign_link
from bot.ops import Settings, build_app
from bot.table import FlowSettings

SECRET = b"bench-web-secret-0123456789abcdef"


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


async def clients(base: str, pages: list[dict[str, str]], out: Path) -> None:
    """The second process: one session and stream per page; every frame's arrival, table, version, size."""
    received: list[tuple[float, str, int, int, int]] = []
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        opening = asyncio.Semaphore(64)  # pages arrive over a moment, not all in the same millisecond

        async def session(item: dict[str, str]) -> str:
            body = {"table": item["table"], "link": item["link"]}
            async with opening:
                for _attempt in range(20):  # as the page's script: a store not answering yet is tried again
                    async with http.post(f"{base}/api/session", json=body) as r:
                        if r.status == 200:
                            return str((await r.json())["page"])
                    await asyncio.sleep(0.5)
            raise RuntimeError(f"no session: {r.status}")

        async def one(index: int, item: dict[str, str]) -> None:
            page = await session(item)
            async with http.get(f"{base}/api/events", params={"page": page}) as stream:
                first = True
                async for line in stream.content:
                    if line.startswith(b"data: "):
                        frame = json.loads(line[6:])
                        received.append((time.time(), item["table"], frame["v"], len(line), int(first)))
                        first = False

        tasks = [asyncio.create_task(one(i, item)) for i, item in enumerate(pages)]
        sys.stdout.write("open\n")
        sys.stdout.flush()
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # until told to stop
        failed = [t.exception() for t in tasks if t.done() and not t.cancelled() and t.exception()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if failed:
            print(f"{len(failed)} pages failed, e.g. {failed[0]!r}", file=sys.stderr)
    out.write_text(json.dumps(received))


def timed_writes(store: Any) -> dict[tuple[str, int], float]:
    """When each write of ``store`` was stored (its compare-and-set answered): the state change's moment."""
    writes: dict[tuple[str, int], float] = {}
    compare_and_set = store.compare_and_set

    async def timed(*args: Any, **kwargs: Any) -> Any:
        stored = await compare_and_set(*args, **kwargs)
        writes[(stored.table_id, stored.version)] = time.time()
        return stored

    store.compare_and_set = timed
    return writes


async def seat_tables(service, tables: int) -> list[tuple[str, list[UserRef]]]:  # type: ignore[no-untyped-def]
    made = []
    for t in range(tables):
        users = [UserRef(f"b:{t}:{s}", f"P{t}-{s}", "en") for s in range(4)]
        chat = ChatRef(f"b:chat{t}", private=False, title=f"Bench {t}")
        outcome = await service.new_table(chat, users[0])
        tid = outcome.table
        for s in (1, 2, 3):
            await service.press(users[s], make_token(tid, lobby_stamp(), f"seat{s}"))
        await service.press(users[0], make_token(tid, lobby_stamp(), "start"))
        made.append((tid, users))
    return made


async def serve(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as data:
        flow = FlowSettings(machine_delay=0, next_hand_delay=3600, turn_timeout=3600, lobby_timeout=3600)
        app = await build_app(Settings(data_dir=Path(data)), flow=flow, web_notices=True)
        hub = Hub(app.service, pause=0.0, poll=60.0)
        # Another worker on the same Redis (a chat's presses): its writes reach the hub by notice only.
        chat_worker = Service(replace(app.service.deps))
        writes = timed_writes(app.service.deps.tables)
        server = WebTable(app.service, hub, SECRET)
        runner = web.AppRunner(server.app(), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port = runner.addresses[0][1]
        base = f"http://127.0.0.1:{port}"
        hub.start()
        tables = await seat_tables(app.service, args.tables)
        pages = [
            {"table": tid, "link": sign_link(SECRET, users[s], tid, time.time() + 3600)}
            for tid, users in tables
            for s in range(args.pages_per_table)
        ]
        first_load = 0
        async with aiohttp.ClientSession() as http:
            for path in [f"/t/{tables[0][0]}"] + [f"/static/{n}" for n in STATIC_FILES]:
                async with http.get(base + path) as r:
                    first_load += len(await r.read())
        before = rss_kb()
        out = Path(data) / "frames.json"
        child = subprocess.Popen(
            [sys.executable, __file__, "--clients", base, "--out", str(out)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps(pages) + "\n")
        child.stdin.flush()
        child.stdout.readline()
        for _ in range(600):  # every page open and sent its first frame (a minute at most)
            if len(hub.pages) >= len(pages) and all(p.sent is not None for p in hub.pages.values()):
                break
            await asyncio.sleep(0.1)
        else:
            print(f"only {len(hub.pages)} of {len(pages)} pages opened", file=sys.stderr)
            args.moves = 0
        await asyncio.sleep(1.0)
        after = rss_kb()
        written: dict[tuple[str, int], float] = {}
        by_chat: set[tuple[str, int]] = set()
        reads = hub.reads
        rng = random.Random(1)
        for move in range(args.moves):
            tid, users = rng.choice(tables)
            feed = hub.feeds.get(tid)
            if feed is None or feed.newest is None or feed.newest.match is None:
                continue
            table, hand = feed.newest.table, feed.newest.hand
            if hand is None or hand.over or hand.turn is None:
                continue
            # The page of the seat on turn carries the tokens: its first move is pressed (a discard: a card).
            view = page(table, feed.newest.match, hand, hand.turn, lang="en", version=0, live=True, now=0.0)
            moves, discard = view.get("moves") or {}, view.get("discard")
            choices = [c["token"] for c in moves.get("calls", [])] + [
                a["token"] for a in moves.get("amounts", [])
            ]
            if discard:
                choices = (
                    [discard["confirm"]["token"]] if discard["picked"] else list(discard["picks"].values())
                )
            if not choices:
                continue
            from_chat = move % 2 == 1
            service = chat_worker if from_chat else app.service
            outcome = await service.press(users[hand.turn], choices[0])
            if not outcome.ok:
                continue
            stored = await app.service.deps.tables.load(tid)  # (the version it wrote: one writer at a time)
            assert stored is not None
            version = stored.version
            written[(tid, version)] = writes[(tid, version)]
            if from_chat:
                by_chat.add((tid, version))
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)
        child.stdin.write("stop\n")
        child.stdin.flush()
        child.wait(60)
        frames = json.loads(out.read_text())
        reads = hub.reads - reads
        updates = [size for _, _, _, size, first in frames if not first]
        firsts = [size for _, _, _, size, first in frames if first]
        print(
            f"pages {len(pages)} on {len(tables)} tables · moves timed {len(written)} "
            f"({len(by_chat)} from a chat) · frames {len(frames)}"
        )
        for label, chat in (("page presses", False), ("chat presses", True)):
            latencies = [
                1000 * (at - written[(tid, v)])
                for at, tid, v, _, _ in frames
                if (tid, v) in written and ((tid, v) in by_chat) == chat
            ]
            q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
            print(f"push latency, {label}: p50 {q[49]:.1f} ms · p99 {q[98]:.1f} ms (target p99 <= 50 ms)")
        print(f"store reads per change: {reads / max(1, len(written)):.2f}")
        print(f"memory per open page: {(after - before) / len(pages):.1f} KB (target <= 50 KB)")
        first_frame = statistics.mean(firsts) if firsts else 0
        print(
            f"first load: {(first_load + first_frame) / 1024:.1f} KB "
            f"(the page, its script, cards and style {first_load / 1024:.1f} KB + the first frame "
            f"{first_frame / 1024:.1f} KB; target <= 150 KB)"
        )
        print(f"bytes per update: {statistics.mean(updates) if updates else 0:.0f} B (target <= 1 KB)")
        await hub.stop()
        await runner.cleanup()
        await app.close()


def main() -> None:
    # A thousand streams are a thousand sockets in each process: more than the usual soft limit of 1,024.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=250)
    parser.add_argument("--pages-per-table", type=int, default=4, choices=range(1, 5))
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--clients", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.clients:
        pages = json.loads(sys.stdin.readline())
        asyncio.run(clients(args.clients, pages, Path(args.out)))
        return
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
