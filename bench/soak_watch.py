"""bench/soak.py's watch on the stored tables: every table's version read from Redis every 50 ms, from which
come the tables' progress (and the stuck ones), the deadlines' lag and when each person's turn began."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import redis.exceptions
from redis.asyncio import Redis

from bench.soak_people import Table
from tests.e2e.fake_telegram import FakeTelegram

PREFIX = "mus:"
POLL_INTERVAL = 0.05
STUCK_MARGIN = 10.0


@dataclass
class Lag:
    """A deadline that fired: its kind (machine, deal, turn), its table, when it was due and how late."""

    kind: str
    table: str
    due: float
    """Due time on the fake server's clock."""
    seconds: float


class Watcher:
    """Reads the stored tables and keeps what their versions tell."""

    def __init__(self, tg: FakeTelegram, tables: dict[str, Table], turn_timeout: float) -> None:
        self.tg = tg
        self.tables = tables
        self.turn_timeout = turn_timeout
        self.lags: list[Lag] = []
        self.unattributed = 0
        """Deadline firings not measured: versions missed between two polls."""
        self.epoch_offset = 0.0
        """``time.time()`` minus the fake server's clock."""
        self.polling = True

    async def poll(self, client: Redis) -> None:
        """Read every table's version every ``POLL_INTERVAL``; a new version is observed."""
        while self.polling:
            tables = list(self.tables.values())
            try:
                pipe = client.pipeline(transaction=False)
                for table in tables:
                    pipe.hmget(f"{PREFIX}table:{table.id}", "v", "data")
                rows = await pipe.execute()
            except (redis.exceptions.RedisError, OSError):
                await asyncio.sleep(0.2)
                continue
            now = self.tg.now()
            for table, (version, data) in zip(tables, rows, strict=True):
                if version is not None and int(version) != table.version:
                    self.observe(table, int(version), json.loads(data), now)
            await asyncio.sleep(POLL_INTERVAL)

    def observe(self, table: Table, version: int, state: dict[str, Any], now: float) -> None:
        """A new stored version of a table, read at ``now``."""
        previous = table.state
        if previous is not None:
            if version == table.version + 1:
                self.deadline_fired(table, previous, state)
            elif previous.get("due_key") != state.get("due_key"):
                self.unattributed += 1  # versions missed between two polls: this firing is not measured
        key, due = state.get("due_key"), state.get("due")
        if key is not None and due is not None and key.split("|")[1] == "turn":
            began = float(due) - self.turn_timeout - self.epoch_offset
            table.turns.setdefault(f"{table.id}.{key.split('|')[2]}", began)
        signature = (state.get("status"), state.get("hand_no"), state.get("due_key"))
        if signature != table.signature:
            if table.signature is not None and table.signature[0] == "playing":
                self.gap(table, now)
            table.signature = signature
            table.last_progress = now
        table.version, table.state = version, state
        if state.get("status") in ("finished", "cancelled") and not table.ended.is_set():
            table.ended_at = now
            table.ended.set()

    def gap(self, table: Table, now: float) -> None:
        """The table made progress at ``now`` (or the play ended): the gap since its last progress."""
        seconds = now - table.last_progress
        if seconds > table.longest[1]:
            table.longest = (table.last_progress, seconds)
        if seconds > self.turn_timeout + STUCK_MARGIN:
            table.stuck.append((table.last_progress, seconds))

    def deadline_fired(self, table: Table, before: dict[str, Any], after: dict[str, Any]) -> None:
        """If ``after`` is the firing of ``before``'s deadline, how late it fired."""
        key, due = before.get("due_key"), before.get("due")
        if key is None or due is None or after.get("due_key") == key:
            return
        kind = key.split("|")[1]
        fired = float(after.get("updated_at", 0.0))
        if kind not in ("machine", "deal", "turn") or fired < due - 0.005:
            return  # a press acted before the deadline
        if kind == "turn":

            def timeouts(state: dict[str, Any]) -> int:
                return sum(int(s.get("timeouts", 0)) + int(bool(s.get("autopilot"))) for s in state["seats"])

            if timeouts(after) <= timeouts(before):
                return  # a press, late but before the deadline fired
        self.lags.append(Lag(kind, table.id, float(due) - self.epoch_offset, fired - float(due)))
