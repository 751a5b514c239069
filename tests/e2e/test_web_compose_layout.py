"""The layout of ``deploy/compose.yaml``: one ``musbot web`` process serves the web table while the bot's
worker (``musbot run`` with ``WEB_SERVE=false``) serves the chats, both on one Redis. The worker listens on no
web port, yet its chats lead to the table and it announces every write; a press on a page reaches the
group's table through the platform's outbox, and a press in the group reaches the page at once."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.kernel import UserRef, sign_link

from .fake_telegram import FakeTelegram
from .test_musbot_run import TG_TOKEN, free_port, musbot_run
from .test_web_musbot_run import frames

WEB_SECRET = "compose-layout-web-secret-0123456789"


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TG_TOKEN, bot_username="musbot_web") as fake:
        yield fake


async def first_turn(
    stream: aiohttp.ClientResponse, http: aiohttp.ClientSession, base: str, page: str
) -> dict[str, object]:
    """The first frame where the page's person is on turn with words to say; a discard on the way is made
    on the page (one card), as a player would, rather than left to the turn's timeout (a minute: when all
    four go mus, the person's next turn is a discard)."""
    sent: set[str] = set()
    async for frame in frames(stream):
        moves = frame.get("moves")
        if isinstance(moves, dict) and moves.get("calls") and frame.get("live"):
            return frame
        discard = frame.get("discard")
        if isinstance(discard, dict) and not discard.get("ready") and frame.get("live"):
            confirm, picks = discard.get("confirm"), discard.get("picks")
            token = confirm["token"] if isinstance(confirm, dict) else None
            if token is None and isinstance(picks, dict) and not discard.get("picked"):
                token = next(iter(picks.values()))
            if token is not None and token not in sent:  # (a pick twice would put the card back)
                sent.add(token)
                async with http.post(f"{base}/api/act", json={"page": page, "token": token}) as response:
                    assert response.status == 200
    raise EOFError("the stream ended")


async def listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    return True


async def test_one_web_process_beside_a_worker_that_does_not_serve(
    tg: FakeTelegram, redis_url: str, tmp_path: Path
) -> None:
    worker_port, web_port = free_port(), free_port()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_", "WEB_"))
    }
    env.update(
        {
            "PYTHONIOENCODING": "utf-8",
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"compose{random.Random().getrandbits(40):010x}:",
            "LOG_LEVEL": "INFO",
            "TELEGRAM_TOKEN": TG_TOKEN,
            "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{tg.port}",
            "WEB_SECRET": WEB_SECRET,
            "WEB_PUBLIC_URL": "https://mus.example.org",
            "TELEGRAM_MINIAPP_NAME": "mus",
            "WEB_SAFETY_POLL": "60",  # a frame that comes sooner was pushed
            "MACHINE_DELAY": "0.2",
            # A word may end the hand: the next one is dealt soon, and the page shows the moves quickly.
            "NEXT_HAND_DELAY": "0.5",
            "WEB_MOVE_PAUSE": "0.1",
        }
    )
    ane = tg.add_user("Ane")
    group = tg.add_group("Mus", members=[ane])
    tg.user_starts_bot(ane)
    logs = tmp_path / "worker.log", tmp_path / "web.log"
    base = f"http://127.0.0.1:{web_port}"
    async with (
        musbot_run({**env, "WEB_SERVE": "false", "WEB_PORT": str(worker_port)}, logs[0]) as worker,
        musbot_run({**env, "WEB_PORT": str(web_port)}, logs[1], "web") as server,
        aiohttp.ClientSession() as http,
    ):
        tg.user_sends(ane, group, "/newgame")
        await tg.wait_for(lambda: tg.bot_messages(group), timeout=30.0)
        lobby = tg.bot_messages(group)[-1]
        start = next(d for _, d in lobby.buttons if d and d.endswith(".L.start"))
        started = tg.user_presses(ane, lobby, start)
        await tg.wait_for(lambda: tg.callbacks[started].answered, timeout=30.0)
        table = start.split(".")[0]

        # The worker's chats lead to the web table, though it serves none itself.
        def direct_link_shown() -> bool:
            buttons = (b for m in tg.bot_messages(group) for row in m.keyboard for b in row)
            return any(b.get("url") == f"https://t.me/musbot_web/mus?startapp={table}" for b in buttons)

        assert await tg.wait_for(direct_link_shown, timeout=30.0)
        assert not await listening(worker_port)

        for _ in range(100):
            if await listening(web_port):
                break
            await asyncio.sleep(0.1)
        link = sign_link(WEB_SECRET.encode(), UserRef(f"tg:{ane.id}", "Ane", "es"), table, time.time() + 600)
        async with http.post(f"{base}/api/session", json={"table": table, "link": link}) as response:
            assert response.status == 200
            page = (await response.json())["page"]
        stream = await http.get(f"{base}/api/events", params={"page": page})

        # A word said on the page: the web process writes it, the worker shows it in the group (its outbox).
        frame = await asyncio.wait_for(first_turn(stream, http, base, page), 60.0)
        moves = frame["moves"]
        assert isinstance(moves, dict)
        call = moves["calls"][0]
        async with http.post(f"{base}/api/act", json={"page": page, "token": call["token"]}) as response:
            assert (await response.json())["ok"] is True

        def told() -> bool:
            return any(f"Ane: {call['label'].lower()}" in m.text for m in tg.bot_messages(group))

        assert await tg.wait_for(told, timeout=30.0)

        # A word said in the group: the worker's write is announced, and the page is told long before the
        # safety poll (a minute) would have read it.
        frame = await asyncio.wait_for(first_turn(stream, http, base, page), 60.0)
        moves = frame["moves"]
        assert isinstance(moves, dict)
        token = moves["calls"][0]["token"]

        def carrying() -> list[object]:
            return [m for m in tg.bot_messages(group) if token in [d for _, d in m.buttons]]

        assert await tg.wait_for(lambda: bool(carrying()), timeout=30.0)
        pressed = tg.user_presses(ane, carrying()[-1], token)  # type: ignore[arg-type]
        await tg.wait_for(lambda: tg.callbacks[pressed].answered, timeout=30.0)

        async def newer() -> dict[str, object]:
            async for shown in frames(stream):
                if int(shown["v"]) > int(frame["v"]):  # type: ignore[call-overload]
                    return shown
            raise EOFError("the stream ended")

        await asyncio.wait_for(newer(), 10.0)
        stream.close()
        for process in (worker, server):
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), timeout=30.0) == 0
    worker_log, web_log = (log.read_text(encoding="utf-8", errors="replace") for log in logs)
    assert "Traceback" not in worker_log + web_log, worker_log + web_log
    assert "web table on" not in worker_log
    for output in (worker_log, web_log):
        assert WEB_SECRET not in output and TG_TOKEN not in output and "#k=" not in output
