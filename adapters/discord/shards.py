"""Whether each gateway shard of this process is connected: told in the log, counted, and this process's
readiness.

discord.py reconnects a shard by itself (a RESUME that keeps the session, else a new IDENTIFY after a
backoff) and tells of each step by an event: ``shard_connect`` (READY: a new session), ``shard_resumed``,
``shard_disconnect``. While a shard is down, the interactions of its servers are not delivered to us —
Discord's users see "This interaction failed" — so the process is not ready (``/readyz`` 503) until every
shard it runs is connected again.

:class:`ShardWatch` keeps each shard's state from those events:

- a disconnect is logged and counted once per outage (a reconnect that fails tells ``shard_disconnect``
  again at every attempt: those are one outage, logged at DEBUG);
- a connect or a resume after an outage says how long the shard was down;
- ``mus_gateway_shard_events_total{platform="discord", shard, event}`` counts ``connect``, ``resume`` and
  ``disconnect``; ``mus_gateway_shards_down{platform="discord"}`` is the number of this process's shards down
  now (every watch of the process together).

discord.py itself logs every failed attempt to reconnect at ERROR with a traceback; :func:`quiet_reconnects`
makes each of those one line (the cause at its end) at WARNING: an outage reads as a few lines, not as
tracebacks by the hundred.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Literal

from bot.kernel import SHARD_EVENTS, SHARDS_DOWN

log = logging.getLogger(__name__)

PLATFORM = "discord"
#: discord.py's logger of shard reconnects, and how its record of a failed attempt starts.
SHARD_LOGGER = "discord.shard"
RECONNECT_RECORD = "Attempting a reconnect"

_watches: weakref.WeakSet[ShardWatch] = weakref.WeakSet()


class ShardWatch:
    """The connection state of the shards one client runs (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """No shard seen yet: each one is down until it connects."""
        self.clock = clock
        self._up: dict[int, bool] = {}
        self._down_since: dict[int, float] = {}
        self._ever_up: set[int] = set()
        self.closing = False
        """Set when the client stops on purpose: its shards' disconnects are then no outage."""
        _watches.add(self)

    def expect(self, shard_ids: Iterable[int]) -> None:
        """The shards this process runs (each down until its first connect)."""
        now = self.clock()
        for shard_id in shard_ids:
            if shard_id not in self._up:
                self._up[shard_id] = False
                self._down_since[shard_id] = now

    def connected(self, shard_id: int, how: Literal["connect", "resume"]) -> None:
        """Shard ``shard_id`` got a session (``connect``) or resumed its own (``resume``)."""
        SHARD_EVENTS.labels(PLATFORM, str(shard_id), how).inc()
        was_up = self._up.get(shard_id)
        since = self._down_since.pop(shard_id, None)
        self._up[shard_id] = True
        if was_up is False and since is not None and shard_id in self._ever_up:
            verb = "resumed its session" if how == "resume" else "connected with a new session"
            log.warning("discord shard %s %s after %.1f s down", shard_id, verb, self.clock() - since)
        else:
            log.info("discord shard %s %s", shard_id, "resumed" if how == "resume" else "connected")
        self._ever_up.add(shard_id)

    def disconnected(self, shard_id: int) -> None:
        """Shard ``shard_id`` lost its connection (or failed to connect again)."""
        if self.closing:
            return
        if self._up.get(shard_id) is False:
            log.debug("discord shard %s: another attempt to connect failed", shard_id)
            return
        self._up[shard_id] = False
        self._down_since[shard_id] = self.clock()
        SHARD_EVENTS.labels(PLATFORM, str(shard_id), "disconnect").inc()
        log.warning("discord shard %s disconnected: reconnecting", shard_id)

    def down(self) -> list[int]:
        """The shards not connected now, in order."""
        return sorted(s for s, up in self._up.items() if not up)

    def ready(self) -> bool:
        """Whether every shard this process runs is connected (and there is at least one), the client not
        stopping."""
        return not self.closing and bool(self._up) and not self.down()


class _OneLineReconnects(logging.Filter):
    """discord.py's "Attempting a reconnect" records in one line at WARNING, their cause appended."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite a reconnect record (every record passes)."""
        if isinstance(record.msg, str) and record.msg.startswith(RECONNECT_RECORD) and record.exc_info:
            error = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(error).__name__}: {error})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def quiet_reconnects() -> None:
    """Install the one-line reconnect records on discord.py's shard logger (once per process)."""
    shard_log = logging.getLogger(SHARD_LOGGER)
    if not any(isinstance(f, _OneLineReconnects) for f in shard_log.filters):
        shard_log.addFilter(_OneLineReconnects())


SHARDS_DOWN.labels(PLATFORM).set_function(
    lambda: float(sum(len(w.down()) for w in list(_watches) if not w.closing))
)
