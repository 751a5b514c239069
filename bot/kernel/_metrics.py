"""What a host watches: Prometheus metrics of the bot core and its deliveries (``/metrics``, see
:mod:`bot.ops._health`).

Every metric lives in prometheus-client's default registry, beside its process metrics (memory, CPU, open
files). Names start with ``mus_``:

- ``mus_commands_total{command, outcome}`` and ``mus_presses_total{action, outcome}`` — outcome ``ok``,
  ``refused`` (a clear answer, nothing changed) or ``failed`` (the store was down);
- ``mus_handling_seconds{kind}`` — how long the core took for a command or a press (``kind``: command, press);
- ``mus_deadline_lag_seconds`` — how late a deadline fired (machine moves, deals, timeouts);
- ``mus_tables_live`` — tables stored and not finished (counted by the deadline sweep, every minute);
- ``mus_delivery_queue_depth`` — views waiting in every delivery lane of this process;
- ``mus_platform_errors_total{platform, kind}``, ``mus_rate_limited_total{platform}`` and
  ``mus_retry_after_seconds_total{platform}`` — what the chat platforms refused, and the waits they asked for;
- ``mus_delivery_dropped_total{platform, reason}`` — views a delivery lane dropped unsent: an answer a newer
  one of its command replaced (``coalesced``), one the chat just got (``repeated``), the same one waiting
  already (``duplicates``), one more than a lane holds (``dropped``);
- ``mus_store_errors_total`` — Redis calls that failed (unreachable, timed out);
- ``mus_platform_last_heard_timestamp_seconds{platform}`` — when a platform last answered (a deaf bot's age),
  and ``mus_telegram_webhook_pending_updates`` — what Telegram holds for the webhook;
- ``mus_gateway_shard_events_total{platform, shard, event}`` — a platform's gateway connections (Discord's
  shards): ``connect`` (a new session), ``resume`` (the session kept), ``disconnect`` (once per outage), and
  ``mus_gateway_shards_down{platform}`` — this process's shards not connected now (readiness is false then);
- ``mus_build_info{version, python}`` — always 1: which musbot and which Python this process runs (a rolling
  upgrade shows its workers' versions side by side).

Labels are bounded: command and action names, platforms, reasons, shard numbers, a version; never a chat,
user or table id.
"""

from __future__ import annotations

import functools
import platform
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from prometheus_client import Counter, Gauge, Histogram

from bot.kernel._views import Outcome

COMMANDS = Counter("mus_commands_total", "Commands handled, by command and outcome", ["command", "outcome"])
PRESSES = Counter("mus_presses_total", "Button presses handled, by action and outcome", ["action", "outcome"])
HANDLING = Histogram(
    "mus_handling_seconds",
    "Time the core took to handle a command or a press",
    ["kind"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
DEADLINE_LAG = Histogram(
    "mus_deadline_lag_seconds",
    "How late deadlines fired after their due time",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0),
)
TABLES_LIVE = Gauge("mus_tables_live", "Tables stored and not finished (counted by the deadline sweep)")
QUEUE_DEPTH = Gauge("mus_delivery_queue_depth", "Views waiting in the delivery lanes of this process")
PLATFORM_ERRORS = Counter(
    "mus_platform_errors_total", "Calls a chat platform refused, by kind", ["platform", "kind"]
)
RATE_LIMITED = Counter("mus_rate_limited_total", "Rate limits a platform answered", ["platform"])
RETRY_AFTER = Counter("mus_retry_after_seconds_total", "Seconds of waiting platforms asked for", ["platform"])
DELIVERY_DROPPED = Counter(
    "mus_delivery_dropped_total", "Views a delivery lane dropped unsent, by why", ["platform", "reason"]
)
STORE_ERRORS = Counter("mus_store_errors_total", "Redis calls that failed (unreachable, timed out)")
LAST_HEARD = Gauge(
    "mus_platform_last_heard_timestamp_seconds",
    "When a chat platform last answered a call or sent an update (Unix time): its age tells a deaf bot",
    ["platform"],
)
SHARD_EVENTS = Counter(
    "mus_gateway_shard_events_total",
    "Gateway connections of a platform's shards: connect, resume, disconnect (once per outage)",
    ["platform", "shard", "event"],
)
SHARDS_DOWN = Gauge(
    "mus_gateway_shards_down", "Gateway shards of this process that are not connected now", ["platform"]
)
BUILD_INFO = Gauge(
    "mus_build_info", "The musbot and Python versions this process runs (always 1)", ["version", "python"]
)


class _Queued(Protocol):
    def pending_count(self) -> int: ...


_deliveries: weakref.WeakSet[Any] = weakref.WeakSet()


def watch_queue(delivery: _Queued) -> None:
    """Count ``delivery``'s pending views in ``mus_delivery_queue_depth`` while it lives."""
    _deliveries.add(delivery)


QUEUE_DEPTH.set_function(lambda: float(sum(d.pending_count() for d in list(_deliveries))))


def outcome_label(outcome: Outcome) -> str:
    """``ok``, ``refused`` or ``failed``."""
    if outcome.failed:
        return "failed"
    return "ok" if outcome.ok else "refused"


_O = TypeVar("_O", bound=Outcome)


def measured_command(name: str) -> Callable[[Callable[..., Awaitable[_O]]], Callable[..., Awaitable[_O]]]:
    """Count and time a service command (``/newgame``…) under ``name``."""

    def wrap(method: Callable[..., Awaitable[_O]]) -> Callable[..., Awaitable[_O]]:
        @functools.wraps(method)
        async def measured(*args: Any, **kwargs: Any) -> _O:
            started = time.perf_counter()
            outcome = await method(*args, **kwargs)
            HANDLING.labels("command").observe(time.perf_counter() - started)
            COMMANDS.labels(name, outcome_label(outcome)).inc()
            return outcome

        return measured

    return wrap


def record_press(action: str, outcome: Outcome, seconds: float) -> None:
    """Count and time one press (``action``: the kind of button, e.g. ``TurnAction``; ``forged``)."""
    HANDLING.labels("press").observe(seconds)
    PRESSES.labels(action, outcome_label(outcome)).inc()


def record_build(version: str) -> None:
    """Set ``mus_build_info{version, python}`` to 1 for ``version`` of musbot on this interpreter."""
    BUILD_INFO.labels(version=version, python=platform.python_version()).set(1)
