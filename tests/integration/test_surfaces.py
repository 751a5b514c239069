"""One contract for where views live (``bot.store.surfaces``), run against memory and a real Redis."""

from __future__ import annotations

import pytest

from bot.store.redis_store import AnyRedis
from bot.store.surfaces import MemorySurfaces, RedisSurfaces, SurfaceStore


@pytest.fixture(params=["memory", "redis"])
def surfaces(request: pytest.FixtureRequest, redis_client: AnyRedis, key_prefix: str) -> SurfaceStore:
    if request.param == "memory":
        return MemorySurfaces()
    return RedisSurfaces(redis_client, key_prefix)


async def test_a_slot_shows_one_message_per_chat_and_platform(surfaces: SurfaceStore) -> None:
    assert await surfaces.get("t0000001", "tg:-100", "table") is None
    await surfaces.set("t0000001", "tg:-100", "table", "41")
    await surfaces.set("t0000001", "tg:7", "hand", "9")
    await surfaces.set("t0000001", "dc:-100", "table", "1234567890123")  # another platform, same local id
    assert await surfaces.get("t0000001", "tg:-100", "table") == "41"
    assert await surfaces.get("t0000001", "dc:-100", "table") == "1234567890123"
    assert await surfaces.get("t0000001", "tg:7", "hand") == "9"
    assert await surfaces.get("t0000002", "tg:-100", "table") is None
    await surfaces.set("t0000001", "tg:-100", "table", "42")  # a new message now shows it
    assert await surfaces.get("t0000001", "tg:-100", "table") == "42"
    await surfaces.forget("t0000001", "tg:-100", "table")
    assert await surfaces.get("t0000001", "tg:-100", "table") is None
    assert await surfaces.get("t0000001", "dc:-100", "table") == "1234567890123"


async def test_who_can_be_written_to_privately(surfaces: SurfaceStore) -> None:
    assert not await surfaces.reachable("tg:7")
    await surfaces.set_reachable("tg:7", True)
    assert await surfaces.reachable("tg:7") and not await surfaces.reachable("dc:7")
    await surfaces.set_reachable("tg:7", False)
    assert not await surfaces.reachable("tg:7")


async def test_the_redis_layout_is_the_one_deployed_before(redis_client: AnyRedis, key_prefix: str) -> None:
    """Message ids and reachable users written by earlier versions are still found (no table loses its
    messages on an upgrade): ``{prefix}tg:surf:{table}`` → ``{chat id}:{slot}``, ``{prefix}tg:reachable``."""
    await redis_client.hset(f"{key_prefix}tg:surf:t0000009", "-100:table", 77)
    await redis_client.sadd(f"{key_prefix}tg:reachable", "5")
    surfaces = RedisSurfaces(redis_client, key_prefix)
    assert await surfaces.get("t0000009", "tg:-100", "table") == "77"
    assert await surfaces.reachable("tg:5")
    await surfaces.set("t0000009", "tg:-100", "hand", "78")
    assert 0 < await redis_client.ttl(f"{key_prefix}tg:surf:t0000009") <= 7 * 86400


async def test_a_slot_keeps_its_newest_view_by_version(surfaces: SurfaceStore) -> None:
    """Two workers offering views of one slot: the newest version stays, whatever the order of the offers."""
    assert await surfaces.newest("t0000001", "tg:-100", "table") == (0, None, None)
    assert await surfaces.offer("t0000001", "tg:-100", "table", 5, '{"v":5}') == (True, 0, None, 0, False)
    assert await surfaces.offer("t0000001", "tg:-100", "table", 7, '{"v":7}') == (True, 5, None, 0, False)
    await surfaces.set("t0000001", "tg:-100", "table", "41")
    # The older one, late: refused, and the slot still has the newer (and says which message shows it).
    assert await surfaces.offer("t0000001", "tg:-100", "table", 6, '{"v":6}') == (False, 7, "41", 0, False)
    # The same version again (a redraw) is taken.
    assert await surfaces.offer("t0000001", "tg:-100", "table", 7, '{"v":7b}') == (True, 7, "41", 0, False)
    assert await surfaces.newest("t0000001", "tg:-100", "table") == (7, '{"v":7b}', "41")
    # Other slots, chats and platforms are apart.
    assert (await surfaces.newest("t0000001", "tg:-100", "lobby")).version == 0
    assert (await surfaces.newest("t0000001", "dc:-100", "table")).version == 0
    assert await surfaces.offer("t0000001", "tg:7", "hand", 1, "{}") == (True, 0, None, 0, False)
    # Forgetting a deleted message keeps the newest view (the next call posts it again).
    await surfaces.forget("t0000001", "tg:-100", "table")
    assert await surfaces.newest("t0000001", "tg:-100", "table") == (7, '{"v":7b}', None)


async def test_workers_share_a_chats_pacing(surfaces: SurfaceStore) -> None:
    """Each booking of a chat's next call comes one interval after the previous one; other chats are free."""
    waits = [await surfaces.pace("tg:-100", 0.5) for _ in range(3)]
    assert waits[0] < 0.05
    assert 0.4 < waits[1] <= 0.5 and 0.9 < waits[2] <= 1.0, waits
    assert await surfaces.pace("tg:-200", 0.5) < 0.05
    assert await surfaces.pace("dc:-100", 0.5) < 0.05


async def test_a_message_of_a_newer_epoch_is_not_replaced_by_an_older_one(surfaces: SurfaceStore) -> None:
    """Two workers posting a slot's message at once (a new hand's table, begun at version 10, and a later
    view of it): the first message of the newest epoch stays, and each answer says which message it
    replaced or lost to; ``set`` (a message of no epoch) is always taken."""
    t, chat = "t0000001", "tg:-100"
    assert await surfaces.record(t, chat, "table", "40", since=1, replacing=None) == (True, None)
    assert await surfaces.record(t, chat, "table", "50", since=10, replacing="40") == (True, "40")
    assert (await surfaces.offer(t, chat, "table", 11, "{}")).posted == 10
    # An older epoch, or the same one posted over the same old message by a second worker: refused.
    assert await surfaces.record(t, chat, "table", "49", since=3, replacing="40") == (False, "50")
    assert await surfaces.record(t, chat, "table", "51", since=10, replacing="40") == (False, "50")
    assert await surfaces.get(t, chat, "table") == "50"
    # The same epoch posted again over the message now showing it (the table posted again): taken; a newer
    # epoch is taken whatever it thought it replaced (it says what it did replace).
    assert await surfaces.record(t, chat, "table", "52", since=10, replacing="50") == (True, "50")
    assert await surfaces.record(t, chat, "table", "53", since=12, replacing="40") == (True, "52")
    assert await surfaces.get(t, chat, "table") == "53"
    await surfaces.set(t, chat, "table", "54")
    assert (await surfaces.offer(t, chat, "table", 12, "{}")).posted == 0
    await surfaces.record(t, chat, "table", "55", since=14, replacing="54")
    await surfaces.forget(t, chat, "table")
    assert (await surfaces.offer(t, chat, "table", 15, "{}"))[2:4] == (None, 0)
    assert (await surfaces.record(t, chat, "table", "56", since=2, replacing="55")).taken  # nothing shows it


async def test_a_view_that_shows_what_the_newest_shows_is_left_to_its_worker(surfaces: SurfaceStore) -> None:
    """With a digest of what it shows, a newer view identical to the newest offered is not taken (that one's
    worker shows it; taking this one would make that worker drop it as superseded)."""
    assert (await surfaces.offer("t0000001", "tg:7", "hand", 5, '{"a":5}', digest="aaaa")).accepted
    same = await surfaces.offer("t0000001", "tg:7", "hand", 6, '{"a":6}', digest="aaaa")
    assert same == (False, 5, None, 0, True)
    assert await surfaces.newest("t0000001", "tg:7", "hand") == (5, '{"a":5}', None)
    # Older than the newest: superseded, whatever it shows; something else, or no digest: taken.
    assert (await surfaces.offer("t0000001", "tg:7", "hand", 4, "{}", digest="aaaa"))[0::4] == (False, False)
    assert (await surfaces.offer("t0000001", "tg:7", "hand", 7, '{"b":7}', digest="bbbb")).accepted
    assert (await surfaces.offer("t0000001", "tg:7", "hand", 8, '{"b":8}')).accepted
    assert (await surfaces.offer("t0000001", "tg:7", "hand", 9, '{"b":9}', digest="bbbb")).accepted
