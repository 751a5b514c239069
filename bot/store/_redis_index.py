"""The chat and user index entries of :class:`~bot.store._redis_store.RedisTableStore` on a Redis Cluster.

There each entry is a key of its own slot, which no table script can reach (:mod:`bot.store._redis_layout`):
:class:`ClusterIndex` claims a chat's entry for a table with a compare-and-set (a create, a table moving to
another chat), writes the entries a table's write changed right after its script, and tells whether an entry
still names a live table. On a single server the table scripts keep the entries themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.store._ports import ChatBusy, DeadlineChanges, StoreUnavailable
from bot.store._redis_client import AnyRedis, as_text, unavailable_errors
from bot.store._redis_layout import KeyLayout
from bot.store._redis_table_scripts import LUA_CLAIM_INDEX, LUA_DEL_IF, LUA_HDEL_IF

__all__ = ["ClusterIndex"]

log = logging.getLogger(__name__)

#: Compare-and-sets a claim tries before it gives up on an entry that keeps changing under it.
CLAIM_ATTEMPTS = 10


class ClusterIndex:
    """The index entries of the tables on a Redis Cluster (single-key commands and scripts)."""

    def __init__(self, redis: AnyRedis, layout: KeyLayout) -> None:
        """Use ``redis`` (not owned) with the store's key ``layout``."""
        self.redis = redis
        self.layout = layout
        self._claim_index = redis.register_script(LUA_CLAIM_INDEX)
        self._del_if = redis.register_script(LUA_DEL_IF)

    async def is_live(self, table_id: str) -> bool:
        """Whether a table is stored and not finished (before an index entry naming it is trusted)."""
        fin = await self.redis.hget(self.layout.table(table_id), "fin")
        return fin is not None and as_text(fin) == "0"

    async def claim(self, table_id: str, chat_key: str) -> None:
        """Point the chat's entry at the table with a compare-and-set, unless it names another live table
        (:class:`ChatBusy`, nothing changed). Call inside ``unavailable_errors``."""
        entry = self.layout.chat(chat_key)
        for _attempt in range(CLAIM_ATTEMPTS):
            seen = await self.redis.get(entry)
            other = None if seen is None else as_text(seen)
            if other is not None and other != table_id and await self.is_live(other):
                raise ChatBusy(table_id, chat_key, other)
            if int(await self._claim_index(keys=[entry], args=[table_id, other or ""])):
                return
        raise StoreUnavailable(f"chat {chat_key!r}: its entry kept changing")

    async def drop_if(self, entry: str, table_id: str) -> None:
        """Remove an index entry if it still names the table. Call inside ``unavailable_errors``."""
        await self._del_if(keys=[entry], args=[table_id])

    async def reindex(
        self,
        table_id: str,
        ops: Sequence[tuple[str, str]],
        deadlines: DeadlineChanges | None = None,
        *,
        written: int | None = None,
    ) -> None:
        """After a table's script, set (``"set"``) or remove if it still names the table (``"del_if"``)
        index entries, and change the deadlines of other shards, in one pipeline; with ``written`` (the
        version whose script marked its entries pending), the table's mark goes too, if no later write
        replaced it.

        The table is written already: if Redis fails now, the entries are left for the next write to set
        (the mark stays: the next write sets them all again) and for the readers to ignore
        (``table_for_chat`` checks the table), and the failure is logged.
        """
        changes = deadlines or DeadlineChanges()
        if not ops and not changes and written is None:
            return
        layout = self.layout
        try:
            with unavailable_errors():
                async with self.redis.pipeline(transaction=False) as pipe:
                    for op, key in ops:
                        if op == "set":
                            pipe.set(key, table_id)
                        else:
                            pipe.eval(LUA_DEL_IF, 1, key, table_id)
                    for key in changes.cancel:
                        pipe.zrem(layout.deadlines(layout.deadline_shard(key)), key)
                    for key, due in changes.schedule:
                        pipe.zadd(layout.deadlines(layout.deadline_shard(key)), {key: float(due)})
                    if written is not None:  # (last: the entries before it are written when it runs)
                        pipe.eval(LUA_HDEL_IF, 1, layout.table(table_id), "ix", str(written))
                    await pipe.execute()
        except StoreUnavailable as exc:
            log.warning("table %s is written, but its indexes could not follow: %s", table_id, exc)
