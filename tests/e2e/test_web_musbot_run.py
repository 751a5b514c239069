"""``musbot run`` with ``WEB_SECRET`` set serves the web table beside Telegram, in the same process: the
group's table links to the Mini App (``TELEGRAM_MINIAPP_NAME``) and each private hand opens it; a page of a
group's table, opened with a signed link, acts with the chat buttons' tokens, and the group's table message
tells the move as the page does; a press in the group reaches the pages at once, pushed through Redis (the
safety poll is set to a minute). The key never appears in the log."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.kernel import UserRef, sign_link

from .fake_telegram import FakeTelegram, StoredMessage
from .test_musbot_run import TG_TOKEN, free_port, musbot_run

WEB_SECRET = "musbot-run-web-secret-0123456789"


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TG_TOKEN, bot_username="musbot_web") as fake:
        yield fake


async def frames(stream: aiohttp.ClientResponse) -> AsyncIterator[dict[str, object]]:
    import json

    async for line in stream.content:
        if line.startswith(b"data: "):
            yield json.loads(line[6:])


async def test_a_press_on_the_page_moves_the_groups_table(tg: FakeTelegram, tmp_path: Path) -> None:
    web_port = free_port()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_", "WEB_"))
    }
    env.update(
        {
            "PYTHONIOENCODING": "utf-8",
            "DATA_DIR": str(tmp_path / "data"),
            "LOG_LEVEL": "INFO",
            "TELEGRAM_TOKEN": TG_TOKEN,
            "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{tg.port}",
            "WEB_SECRET": WEB_SECRET,
            "WEB_PORT": str(web_port),
            "WEB_PUBLIC_URL": "https://mus.example.org",
            "TELEGRAM_MINIAPP_NAME": "mus",
            "WEB_SAFETY_POLL": "60",  # a frame that comes sooner was pushed
            "MACHINE_DELAY": "0.2",
        }
    )
    ane, brais = tg.add_user("Ane"), tg.add_user("Brais")
    group = tg.add_group("Mus", members=[ane, brais])
    for user in (ane, brais):
        tg.user_starts_bot(user)
    log = tmp_path / "musbot.log"
    base = f"http://127.0.0.1:{web_port}"
    async with musbot_run(env, log) as process, aiohttp.ClientSession() as http:
        tg.user_sends(ane, group, "/newgame")
        await tg.wait_for(lambda: tg.bot_messages(group), timeout=30.0)
        lobby = tg.bot_messages(group)[-1]
        seat = next(d for _, d in lobby.buttons if d and d.endswith(".L.seat1"))
        sat = tg.user_presses(brais, lobby, seat)
        await tg.wait_for(lambda: tg.callbacks[sat].answered, timeout=30.0)
        start = next(d for _, d in lobby.buttons if d and d.endswith(".L.start"))
        started = tg.user_presses(ane, lobby, start)
        await tg.wait_for(lambda: tg.callbacks[started].answered, timeout=30.0)
        table = start.split(".")[0]

        def opens() -> dict[str, object]:
            """Where the buttons that open an address lead: the group's table, and Ane's hand."""
            shown = {}
            for chat in (group.id, ane.id):
                for message in tg.bot_messages(chat):
                    for button in (b for row in message.keyboard for b in row):
                        if "url" in button or "web_app" in button:
                            shown[button.get("url") or str(button["web_app"])] = chat
            return shown

        # The chats lead to the web table: the group to the Mini App's direct link, the hand into the app.
        direct = f"https://t.me/musbot_web/mus?startapp={table}"
        app = str({"url": f"https://mus.example.org/t/{table}"})
        assert await tg.wait_for(lambda: opens() == {direct: group.id, app: ane.id}, timeout=30.0)

        pages = {}
        for user in (ane, brais):
            link = sign_link(
                WEB_SECRET.encode(), UserRef(f"tg:{user.id}", user.first_name, "es"), table, time.time() + 600
            )
            async with http.post(f"{base}/api/session", json={"table": table, "link": link}) as response:
                assert response.status == 200
                pages[user.id] = (await response.json())["page"]
        streams = {uid: await http.get(f"{base}/api/events", params={"page": p}) for uid, p in pages.items()}

        async def on_turn() -> tuple[int, dict[str, object]]:
            queue: asyncio.Queue[tuple[int, dict[str, object]]] = asyncio.Queue()

            async def read(uid: int) -> None:
                async for frame in frames(streams[uid]):
                    if frame.get("moves") and frame.get("live"):
                        await queue.put((uid, frame))

            readers = [asyncio.create_task(read(uid)) for uid in streams]
            try:
                return await asyncio.wait_for(queue.get(), 30.0)
            finally:
                for reader in readers:
                    reader.cancel()

        uid, frame = await on_turn()
        moves = frame["moves"]
        assert isinstance(moves, dict)
        call = moves["calls"][0]
        async with http.post(
            f"{base}/api/act", json={"page": pages[uid], "token": call["token"]}
        ) as response:
            assert (await response.json())["ok"] is True
        name = "Ane" if uid == ane.id else "Brais"

        def told() -> bool:
            texts = [m.text for m in tg.bot_messages(group)]
            return any(f"{name}: {call['label'].lower()}" in text for text in texts)

        await tg.wait_for(told, timeout=30.0)  # the group's table tells the word said on the page

        # Now a word said in the group: the page is told at once, through the write's notice.
        uid, frame = await on_turn()
        moves = frame["moves"]
        assert isinstance(moves, dict)
        token = moves["calls"][0]["token"]
        user = ane if uid == ane.id else brais

        def carrying() -> list[StoredMessage]:
            return [m for m in tg.bot_messages(group) if token in [d for _, d in m.buttons]]

        await tg.wait_for(lambda: bool(carrying()), timeout=30.0)
        pressed = tg.user_presses(user, carrying()[-1], token)
        await tg.wait_for(lambda: tg.callbacks[pressed].answered, timeout=30.0)

        async def newer() -> dict[str, object]:
            async for shown in frames(streams[uid]):
                if int(shown["v"]) > int(frame["v"]):  # type: ignore[call-overload]
                    return shown
            raise EOFError("the stream ended")

        moved = await asyncio.wait_for(newer(), 10.0)
        assert (moved["hand"], moved["k"]) > (frame["hand"], frame["k"])  # type: ignore[operator]  # the word
        for stream in streams.values():
            stream.close()
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), timeout=30.0) == 0
    output = log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in output, output
    assert f"web table on 127.0.0.1:{web_port}" in output
    assert WEB_SECRET not in output and TG_TOKEN not in output and "#k=" not in output
