"""The bound of a worker's per-chat caches: least recently used first, one at a time (issue 24)."""

from __future__ import annotations

from bot.delivery._pending import LatestViews
from bot.delivery._shown import ShownCache
from bot.kernel import LruCache, OutMessage


def test_a_full_cache_forgets_the_least_recently_used_entry_only() -> None:
    cache: LruCache[str, int] = LruCache(3)
    for key, value in (("a", 1), ("b", 2), ("c", 3)):
        cache.put(key, value)
    assert cache.get("a") == 1  # read: "b" is now the least recently used
    cache.put("d", 4)
    assert len(cache) == 3
    assert "b" not in cache
    assert (cache.get("a"), cache.get("c"), cache.get("d")) == (1, 3, 4)
    cache.put("c", 30)  # rewritten: the most recent again
    cache.put("e", 5)
    assert "a" not in cache and cache.get("c") == 30
    assert cache.pop("c") == 30  # forgotten, and what it held given back
    assert cache.pop("unknown") is None
    assert len(cache) == 2


def _view(chat: int, text: str = "table") -> OutMessage:
    return OutMessage(slot="table", text=text, chat=f"tg:{chat}", table="t", version=1)


def test_what_a_slot_shows_is_forgotten_for_the_idlest_chat_not_for_every_chat() -> None:
    shown = ShownCache(capacity=100)
    for chat in range(100):
        shown.remember(f"tg:{chat}", _view(chat), "m1")
    shown.get("tg:0", _view(0))  # chat 0 plays on: kept
    shown.remember("tg:100", _view(100), "m1")  # one chat too many
    assert len(shown) == 100
    assert shown.get("tg:1", _view(1)) is None, "the least recently used chat is forgotten"
    remembered = [chat for chat in (0, *range(2, 101)) if shown.get(f"tg:{chat}", _view(chat)) is not None]
    assert len(remembered) == 100, "every other chat still costs no redundant edit"


def test_the_newest_queued_view_is_kept_for_active_slots_past_the_bound() -> None:
    latest = LatestViews(capacity=10)
    for chat in range(10):
        latest.note(f"tg:{chat}", _view(chat))
    newer = OutMessage(slot="table", text="newer", chat="tg:0", table="t", version=2)
    latest.note("tg:0", newer)
    latest.note("tg:0", _view(0, "late redraw"))  # version 1 after 2: ignored
    latest.note("tg:10", _view(10))
    assert latest.get("tg:0", newer) == newer
    assert latest.get("tg:1", _view(1)) is None
    assert sum(latest.get(f"tg:{chat}", _view(chat)) is not None for chat in range(11)) == 10
