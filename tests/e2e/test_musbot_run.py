"""``musbot run`` as a real process serving Telegram and Discord at once, killed with SIGKILL and restarted.

The process is ``python -m adapters.cli run`` with nothing but environment variables (as a host runs it): the
embedded Redis under a temporary ``DATA_DIR``, ``TELEGRAM_*`` pointing at the fake Bot API and ``DISCORD_*``
at the fake Discord, both served by this test's event loop. What only a real process shows: the runner
starts every platform that has a token on one core, a ``kill -9`` loses no table, the buttons drawn before it
act on the next process, SIGTERM stops it cleanly, and no traceback is ever logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import signal
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from .fake_discord import FakeDiscord
from .fake_telegram import FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
TG_TOKEN = "123456:RUN-token"
DC_TOKEN = "fake.discord.run-token"
#: The version the process must tell: pyproject.toml's, its one source.
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


@pytest.fixture
async def fakes() -> AsyncIterator[tuple[FakeTelegram, FakeDiscord]]:
    async with (
        FakeTelegram(token=TG_TOKEN, bot_username="musbot_run") as tg,
        FakeDiscord(token=DC_TOKEN) as dc,
    ):
        yield tg, dc


def environment(tg: FakeTelegram, dc: FakeDiscord, data_dir: Path, guild_id: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_"))}
    env.update(
        {
            "PYTHONIOENCODING": "utf-8",
            "DATA_DIR": str(data_dir),
            "LOG_LEVEL": "INFO",
            "TELEGRAM_TOKEN": TG_TOKEN,
            "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{tg.port}",
            "DISCORD_TOKEN": DC_TOKEN,
            "DISCORD_API_BASE_URL": dc.api_base,
            "DISCORD_GATEWAY_URL": dc.gateway_url,
            "DISCORD_GUILD_IDS": str(guild_id),
        }
    )
    return env


@contextlib.asynccontextmanager
async def musbot_run(
    env: dict[str, str], log: Path, command: str = "run"
) -> AsyncIterator[asyncio.subprocess.Process]:
    """The process (``musbot run``, or another sub-command), its output appended to ``log``; killed if
    still running afterwards."""
    with log.open("ab") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapters.cli", command, cwd=ROOT, env=env, stdout=out, stderr=out
        )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_both_platforms_in_one_process_survive_a_kill_9(
    fakes: tuple[FakeTelegram, FakeDiscord], tmp_path: Path
) -> None:
    tg, dc = fakes
    guild = dc.add_guild("Mus club", locale="es-ES", community=True)
    channel = dc.add_channel(guild, "mus")
    ane, brais = (dc.add_user(n, locale="es-ES", guilds=[guild]) for n in ("Ane", "Brais"))
    tg_ane, tg_brais = tg.add_user("Ane"), tg.add_user("Brais")
    group = tg.add_group("Mus", members=[tg_ane, tg_brais])
    for user in (tg_ane, tg_brais):
        tg.user_sends(user, None, "/start")  # both opened the bot: no deep links needed
    env = environment(tg, dc, tmp_path / "data", guild.id)
    log = tmp_path / "musbot.log"

    async with musbot_run(env, log) as first:
        await dc.wait_for(lambda: dc.commands(guild) and dc.live_sessions(), timeout=30.0)
        opened = dc.slash(ane, channel, "mus", "newgame")
        await dc.wait_answered(opened, timeout=10.0)
        tg.user_sends(tg_ane, group, "/newgame")
        await tg.wait_for(lambda: tg.bot_messages(group), timeout=30.0)
        first.kill()  # SIGKILL: no goodbye
        await first.wait()

    dc_lobby = opened.response
    assert dc_lobby is not None and not dc_lobby.ephemeral
    tg_lobby = tg.bot_messages(group)[-1]
    async with musbot_run(env, log) as second:
        # (Its IDENTIFY waits until 5 s passed since the killed process's: Discord's session start limit.)
        await dc.wait_for(
            lambda: len([s for s in dc.sessions if s.identified]) >= 2 and dc.live_sessions(), timeout=20.0
        )
        seat = next(c for c in dc_lobby.custom_ids() if c.endswith(".L.seat1"))
        pressed = dc.press(brais, dc_lobby, seat)
        await dc.wait_answered(pressed, timeout=10.0)
        await dc.wait_for(lambda: "Brais" in dc_lobby.text, timeout=10.0)
        data = next(d for _, d in tg_lobby.buttons if d and d.endswith(".L.seat1"))
        query = tg.user_presses(tg_brais, tg_lobby, data)
        await tg.wait_for(lambda: tg.callbacks[query].answered, timeout=30.0)
        await tg.wait_for(lambda: "Brais" in tg.bot_messages(group)[-1].text, timeout=30.0)
        second.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(second.wait(), timeout=30.0) == 0

    output = log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in output and "WARNING" not in output, output
    assert output.count("discord adapter running") >= 1 and output.count("telegram adapter running") == 2
    assert TG_TOKEN not in output and DC_TOKEN not in output
    assert dc.rejected() == [], dc.rejected()
    assert [c for c in tg.rejected() if c.method != "getUpdates"] == []


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_health_metrics_json_logs_and_a_graceful_stop(
    fakes: tuple[FakeTelegram, FakeDiscord], tmp_path: Path
) -> None:
    import json

    import aiohttp

    tg, _ = fakes
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_"))}
    env.update(
        {
            "DATA_DIR": str(tmp_path / "data"),
            "LOG_LEVEL": "INFO",
            "LOG_FORMAT": "json",
            "HEALTH_PORT": str(port),
            "HEALTH_HOST": "127.0.0.1",
            "TELEGRAM_TOKEN": TG_TOKEN,
            "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{tg.port}",
        }
    )
    ane, brais = tg.add_user("Ane"), tg.add_user("Brais")
    group = tg.add_group("Mus", members=[ane, brais])
    for user in (ane, brais):
        tg.user_starts_bot(user)
    log = tmp_path / "musbot.log"
    async with musbot_run(env, log) as process, aiohttp.ClientSession(f"http://127.0.0.1:{port}") as http:

        async def get(path: str) -> tuple[int, str]:
            try:
                async with http.get(path) as response:
                    return response.status, await response.text()
            except aiohttp.ClientError:
                return 0, ""

        async def ready() -> bool:
            return (await get("/readyz"))[0] == 200

        for _ in range(300):
            if await ready():
                break
            await asyncio.sleep(0.1)
        status, body = await get("/readyz")
        assert status == 200 and json.loads(body)["checks"] == {"redis": True, "telegram": True}
        assert (await get("/healthz"))[0] == 200
        tg.user_sends(ane, group, "/newgame")
        await tg.wait_for(lambda: tg.bot_messages(group), timeout=30.0)
        lobby = tg.bot_messages(group)[-1]
        _, metrics = await get("/metrics")
        assert 'mus_commands_total{command="newgame",outcome="ok"} 1.0' in metrics
        assert f'mus_build_info{{python="{platform.python_version()}",version="{VERSION}"}} 1.0' in metrics
        # A press, then SIGTERM at once: the press is answered and the lobby's edit (paced one call a second
        # per chat, so still queued) goes out before the process exits 0.
        data = next(d for _, d in lobby.buttons if d and d.endswith(".L.seat1"))
        query = tg.user_presses(brais, lobby, data)
        await tg.wait_for(lambda: tg.callbacks[query].answered, timeout=30.0)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), timeout=30.0) == 0
    assert "Brais" in lobby.text
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    assert {"time", "level", "logger", "message"} <= set(entries[0])
    assert entries[0]["message"] == f"musbot {VERSION} starting (Python {platform.python_version()})"
    assert [e["message"] for e in entries][-1] == "stopped"
    assert not any("traceback" in e for e in entries) and TG_TOKEN not in log.read_text(encoding="utf-8")
