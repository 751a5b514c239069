"""What the service is wired with: stores, clock, randomness, machine players, and the production sources
of randomness and table ids (see :mod:`bot.ops._bootstrap`)."""

from __future__ import annotations

import random
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.app._throttle import Throttle
from bot.history import HistoryStore, MemoryHistory
from bot.kernel import WebAccess
from bot.leaderboard import LeaderboardStore, ResultQueue
from bot.lessons import MemoryProgress, ProgressStore
from bot.store import (
    DeadlineStore,
    MemoryOnce,
    MemoryTableNotices,
    OnceStore,
    PreferencesStore,
    TableNotices,
    TableStore,
)
from bot.table import FlowSettings
from engine.ai.policy import Policy, make_policy

_ID_ALPHABET = string.ascii_lowercase + string.digits


def secure_rng() -> random.Random:
    """A fresh generator seeded from the operating system (production)."""
    return random.Random(secrets.randbits(128))


def secure_table_id() -> str:
    """A random table id: 8 characters of ``[a-z0-9]``."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))


@dataclass
class ServiceDeps:
    """What the service is wired with (see :mod:`bot.ops._bootstrap`)."""

    tables: TableStore
    deadlines: DeadlineStore
    prefs: PreferencesStore
    leaderboard: LeaderboardStore | None = None
    settings: FlowSettings = field(default_factory=FlowSettings)
    clock: Callable[[], float] = time.time
    rng_factory: Callable[[], random.Random] = secure_rng
    id_factory: Callable[[], str] = secure_table_id
    policy: Callable[[str], Policy] = make_policy
    cas_attempts: int = 5
    results: ResultQueue | None = None
    """Finished results wait here to be rated off the command path; ``None``: rate them inline."""
    atomic_deadlines: bool = False
    """The table store changes deadlines in the same atomic write (Redis: one script, one round trip)."""
    cache_size: int = 2048
    """Tables kept parsed in memory by version, so that a command does not replay its match."""
    throttle: Throttle = field(default_factory=Throttle)
    """How often one person may use commands in one chat (see :meth:`ChatCommands.admit`)."""
    once: OnceStore = field(default_factory=MemoryOnce)
    """Delivery ids already acted on (see :meth:`ChatCommands.first_delivery`)."""
    repost_interval: float = 30.0
    """``/newgame`` during a game posts the table again at most once per this many seconds."""
    lessons: ProgressStore = field(default_factory=MemoryProgress)
    """Where each learner is in the lessons (``/learn``, :mod:`bot.lessons`)."""
    history: HistoryStore = field(default_factory=MemoryHistory)
    """Where every finished hand is kept (``/history``, see :mod:`bot.app._history_commands`)."""
    notices: TableNotices = field(default_factory=MemoryTableNotices)
    """Where every table write is announced (its id and version): the web table's pages hear it at once."""
    web: WebAccess | None = None
    """The web table as the chats offer it (its links, each platform's door); ``None``: no web table, no
    button to it anywhere, and ``/history`` links to no replay."""
