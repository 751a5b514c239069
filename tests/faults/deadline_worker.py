"""A deadline worker process as ``musbot run`` runs one, for fault tests: the core built by
:func:`bot.ops._bootstrap.build_app` from the environment (``REDIS_URL``, ``REDIS_PREFIX``…) and its deadline
loop (:func:`bot.ops._bootstrap.run_deadlines`), without any chat platform.

Run as ``python tests/faults/deadline_worker.py`` from the repository. Besides the core's settings it reads:

``FAULT_LEASE``
    The deadline store's lease, in seconds (production: 30).
``FAULT_DIE_AFTER_CLAIM``
    ``1``: the process kills itself with SIGKILL right after its first claim that returned keys, before it
    fires any of them — a worker dying between its claim and the save of the firing.

It writes one JSON line per event on stdout: ``ready`` (the loop runs), ``claimed`` (``keys``, ``at``: the
claim's moment) and ``fired`` (``table``, ``ok``, ``at``: when a fired deadline's outcome came back). SIGTERM
stops the loop and the process exits with 0.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.kernel import Outcome
from bot.ops import Settings, build_app
from bot.ops._bootstrap import run_deadlines
from bot.store._ports import check_lease


def emit(event: str, **fields: Any) -> None:
    """One event, one line, flushed at once (the process may be killed right after)."""
    sys.stdout.write(json.dumps({"event": event, "pid": os.getpid(), **fields}) + "\n")
    sys.stdout.flush()


async def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    app = await build_app(Settings(_env_file=None))  # type: ignore[call-arg]
    store: Any = app.service.deps.deadlines
    if "FAULT_LEASE" in os.environ:
        store.lease_seconds = check_lease(float(os.environ["FAULT_LEASE"]))
    die = os.environ.get("FAULT_DIE_AFTER_CLAIM") == "1"
    claim = store.claim_due

    async def claim_due(now: float, limit: int = 100) -> list[str]:
        keys: list[str] = await claim(now, limit)
        if keys:
            emit("claimed", keys=keys, at=now)
            if die:
                os.kill(os.getpid(), signal.SIGKILL)
        return keys

    store.claim_due = claim_due

    async def on_outcome(outcome: Outcome) -> None:
        emit("fired", table=outcome.table, ok=outcome.ok, at=time.time())

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    emit("ready")
    try:
        await run_deadlines(app.service, on_outcome, stop)
    finally:
        await app.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
