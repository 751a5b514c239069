"""The contract every :class:`bot.history._store.HistoryStore` keeps: run against memory (tests/unit) and
Redis, one server and a cluster (tests/integration)."""

from __future__ import annotations

from bot.history import HistoryStore
from bot.history._store import MATCHES_PER_CHAT


async def check_keeps_lists_and_reads_hands(store: HistoryStore, now: float) -> None:
    """Hands are kept by match and read back by number; each chat lists its matches newest first."""
    assert await store.matches("tg:-1", now) == []
    assert await store.hands("abcd0001") == [] and await store.hand("abcd0001", 1) is None
    for n in (1, 2, 3, 10):  # 10 after 3: read by number, not as text
        await store.keep("abcd0001", "tg:-1", n, now + n, f'{{"n": {n}}}')
    await store.keep("abcd0002", "tg:-1", 1, now + 20, "second match")
    await store.keep("abcd0003", "tg:-2", 1, now + 5, "another chat")
    assert await store.hands("abcd0001") == [(n, f'{{"n": {n}}}') for n in (1, 2, 3, 10)]
    assert await store.hands("abcd0001", last=2) == [(3, '{"n": 3}'), (10, '{"n": 10}')]
    assert await store.hand("abcd0001", 10) == '{"n": 10}' and await store.hand("abcd0001", 4) is None
    assert await store.matches("tg:-1", now + 21) == ["abcd0002", "abcd0001"]
    assert await store.matches("tg:-1", now + 21, limit=1) == ["abcd0002"]
    assert await store.matches("tg:-2", now + 21) == ["abcd0003"]
    # A hand kept again (a retried write) replaces itself; the match moves up its chat's list.
    await store.keep("abcd0001", "tg:-1", 10, now + 30, "again")
    assert await store.hand("abcd0001", 10) == "again"
    assert await store.matches("tg:-1", now + 31) == ["abcd0001", "abcd0002"]


async def check_a_chat_lists_a_bounded_number_of_matches(store: HistoryStore, now: float) -> None:
    """A chat remembers its newest :data:`MATCHES_PER_CHAT` matches."""
    for i in range(MATCHES_PER_CHAT + 3):
        await store.keep(f"m{i:07d}", "tg:-9", 1, now + i, "x")
    listed = await store.matches("tg:-9", now + 100, limit=1000)
    assert len(listed) == MATCHES_PER_CHAT
    assert listed[0] == f"m{MATCHES_PER_CHAT + 2:07d}" and "m0000000" not in listed


async def check_old_matches_leave_the_list(store: HistoryStore, now: float) -> None:
    """A match whose last hand is older than the retention is not listed any more."""
    await store.keep("old00001", "tg:-5", 1, now - store.retention - 1, "old")
    await store.keep("new00001", "tg:-5", 1, now, "new")
    assert await store.matches("tg:-5", now) == ["new00001"]
