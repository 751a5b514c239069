"""The web table served over real HTTP on 127.0.0.1 by the production :class:`adapters.web.server.WebTable`,
on a :class:`service_helpers.Harness` (in-process stores, a fake clock), and a page client that talks to it
as the page's script does: it opens a session with a credential, reads its frames from the event stream and
presses the tokens they carry."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from service_helpers import ANE, BRAIS, CAMILLE, DANI, GROUP, Harness, code_of

from adapters.web.feed import Hub
from adapters.web.server import WebTable
from bot.kernel import Outcome, UserRef, sign_link

SECRET = b"web-table-tests-secret-0123456789"
TELEGRAM_TOKEN = "123456:TEST-token"


@dataclass
class WebServer:
    """A running web table; :meth:`link` makes a visitor's credential."""

    harness: Harness
    hub: Hub
    runner: web.AppRunner
    port: int
    base: str

    def link(self, user: UserRef, table: str, *, ttl: float = 3600.0) -> str:
        return sign_link(SECRET, user, table, self.harness.now + ttl)

    async def close(self) -> None:
        await self.hub.stop()
        await self.runner.cleanup()


async def serve(h: Harness, *, pause: float = 0.05, poll: float = 60.0) -> WebServer:
    """The web table on ``h``'s service; what a page's press draws for the chats is recorded by ``h`` (as a
    chat's delivery would show it)."""
    hub = Hub(h.service, pause=pause, poll=poll, clock=lambda: h.now)

    async def to_the_chats(outcome: Outcome) -> None:
        h.record(outcome)

    table = WebTable(
        h.service,
        hub,
        SECRET,
        telegram_token=TELEGRAM_TOKEN,
        clock=lambda: h.now,
        on_outcome=to_the_chats,
    )
    runner = web.AppRunner(table.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    hub.start()
    return WebServer(h, hub, runner, port, f"http://127.0.0.1:{port}")


@dataclass
class PageClient:
    """One page, driven as its script drives it."""

    server: WebServer
    http: aiohttp.ClientSession
    page: str = ""
    frames: list[dict[str, Any]] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)
    """When (monotonic) each frame arrived."""
    _stream: aiohttp.ClientResponse | None = None

    async def open(self, table: str, **credential: str) -> int:
        """Open a session; the HTTP status (200: the page id is kept and the stream opened)."""
        async with self.http.post(
            f"{self.server.base}/api/session", json={"table": table, **credential}
        ) as response:
            if response.status != 200:
                return response.status
            self.page = (await response.json())["page"]
        self._stream = await self.http.get(f"{self.server.base}/api/events", params={"page": self.page})
        return self._stream.status

    async def next_frame(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next frame the server sends this page."""
        assert self._stream is not None
        while True:
            line = await asyncio.wait_for(self._stream.content.readline(), timeout)
            if not line:
                raise EOFError("the stream ended")
            if line.startswith(b"data: "):
                frame = json.loads(line[6:])
                self.frames.append(frame)
                self.arrived.append(time.monotonic())
                return frame

    async def settle(self, quiet: float = 0.4) -> dict[str, Any]:
        """Frames until none comes for ``quiet`` seconds: the newest."""
        while True:
            try:
                await self.next_frame(quiet)
            except TimeoutError:
                return self.frames[-1]

    async def new_game(self) -> tuple[int, dict[str, Any]]:
        """Press the page's "New game"."""
        async with self.http.post(f"{self.server.base}/api/newgame", json={"page": self.page}) as response:
            if response.content_type != "application/json":
                return response.status, {}
            return response.status, await response.json()

    async def act(self, token: object) -> tuple[int, dict[str, Any]]:
        async with self.http.post(
            f"{self.server.base}/api/act", json={"page": self.page, "token": token}
        ) as response:
            if response.content_type != "application/json":  # (a 401 has no JSON)
                return response.status, {}
            return response.status, await response.json()

    async def close(self) -> None:
        if self._stream is not None:
            self._stream.close()


async def sena_table(h: Harness) -> tuple[str, dict[int, UserRef], int, str]:
    """Four people, señas on; (table, users by seat, a seat that holds a true seña, its seña's token)."""
    players = {0: ANE, 1: BRAIS, 2: CAMILLE, 3: DANI}
    tid = await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3), senas=True)
    for seat, user in players.items():
        senas = [b.token for b in h.on_screen(tid, "hand", user.key) if code_of(b.token).startswith("sena_")]
        if senas:
            return tid, players, seat, senas[0]
    raise AssertionError("no seat holds a true seña in this seeded deal")
