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
