"""The Discord adapter as a platform host meets it (issue 21, items 10–12; issue 27, shard state): shards
that drop and come back, readiness and metrics that follow them, errors answered, commands synced on demand,
and what the table message carries (a live countdown, buttons coloured by meaning).

The real discord.py client runs against the fake Discord (:mod:`.fake_discord`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import TypeVar

import aiohttp
import pytest
from prometheus_client import REGISTRY

from adapters.discord.app import DiscordRuntime
from bot.ops import HealthServer

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import start_discord_bot
from .fake_discord import FakeDiscord

_T = TypeVar("_T")


def shard_events(shard: int, event: str) -> float:
    """``mus_gateway_shard_events_total`` for one Discord shard and event (0 before the first)."""
    labels = {"platform": "discord", "shard": str(shard), "event": event}
    return REGISTRY.get_sample_value("mus_gateway_shard_events_total", labels) or 0.0


async def fetch(health: HealthServer, path: str, read: Callable[[int, str], _T]) -> _T:
    """``GET path`` of the health listener, read by ``read(status, body)``."""
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{health.port}{path}") as got:
        return read(got.status, await got.text())


async def readyz(health: HealthServer) -> tuple[int, dict[str, bool]]:
    """What ``GET /readyz`` answers: its status and each check."""
    return await fetch(health, "/readyz", lambda status, body: (status, json.loads(body)["checks"]))


async def until_ready(health: HealthServer, ready: bool, timeout: float = 15.0) -> None:
    """Wait until ``/readyz`` says ``ready`` (or fail after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while (await readyz(health))[0] != (200 if ready else 503):
        assert time.monotonic() < deadline, f"/readyz never said ready={ready}"
        await asyncio.sleep(0.05)


@pytest.fixture
async def health() -> HealthServer:
    server = HealthServer("127.0.0.1", 0)
    await server.start()
    yield server  # type: ignore[misc]
    await server.stop()


async def test_readiness_and_metrics_follow_a_shard_that_drops_and_comes_back(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], health: HealthServer
) -> None:
    guilds = [dc.add_guild(f"Club {i}") for i in range(2)]
    channels = [dc.add_channel(g, "mus") for g in guilds]
    runtime = await start_discord_bot(dc, memory_service(FAST), shard_count=2)  # both shards, one process
    discord_bots.append(runtime)
    health.checks["discord"] = runtime.ready
    assert await readyz(health) == (200, {"discord": True})
    sessions = {s.shard_id: s for s in dc.live_sessions()}
    assert sorted(sessions) == [0, 1]
    down, connects = shard_events(1, "disconnect"), shard_events(1, "connect")
    resumes = shard_events(0, "resume")

    await dc.drop_shard(sessions[1])  # shard 1 is cut off: the gateway refuses it for now
    await until_ready(health, False)
    assert await readyz(health) == (503, {"discord": False})
    assert REGISTRY.get_sample_value("mus_gateway_shards_down", {"platform": "discord"}) == 1.0
    await dc.wait_for(lambda: dc.refused_connections >= 2, timeout=10.0)  # it keeps trying, refused
    assert shard_events(1, "disconnect") == down + 1  # one outage, however many attempts failed
    ane = dc.add_user("Ane", guilds=guilds)
    other = next(c for g, c in zip(guilds, channels, strict=True) if (g.id >> 22) % 2 == 0)
    await dc.wait_answered(dc.slash(ane, other, "mus", "help"))  # shard 0's servers still play

    dc.gateway_down = False  # the outage ends: shard 1 connects again (a new session)
    await until_ready(health, True)
    assert shard_events(1, "connect") == connects + 1
    assert REGISTRY.get_sample_value("mus_gateway_shards_down", {"platform": "discord"}) == 0.0

    await dc.disconnect(sessions[0], code=4000)  # a short drop: shard 0 resumes its session
    await dc.wait_for(lambda: sessions[0].resumes == 1 and sessions[0].live, timeout=10.0)
    await until_ready(health, True)
    assert shard_events(0, "resume") == resumes + 1
    exposed = await fetch(health, "/metrics", lambda status, body: body)
    assert 'mus_gateway_shard_events_total{event="disconnect",platform="discord",shard="1"}' in exposed
    assert_interactions_answered(dc)
