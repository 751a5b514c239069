"""The host's window on a running bot: a small HTTP listener on ``HEALTH_PORT``.

- ``GET /healthz`` — 200 while the process runs (a container's liveness check);
- ``GET /readyz`` — 200 when every readiness check passes (Redis answers a PING, each chat platform is
  connected), else 503; the body names each check and its state, as JSON;
- ``GET /metrics`` — the Prometheus exposition of :mod:`bot.kernel._metrics` and the process.

It shares the bot's event loop (aiohttp). Checks are small async callables registered by whoever starts the
platforms (:mod:`adapters.runner`); each gets a short timeout, so a frozen Redis reads "not ready" instead of
hanging the probe.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

log = logging.getLogger(__name__)

#: A readiness check: true when that part is ready.
Check = Callable[[], Awaitable[bool]]
CHECK_TIMEOUT = 2.0


class HealthServer:
    """``/healthz``, ``/readyz`` and ``/metrics`` on ``host:port`` (port 0: any free port, for tests)."""

    def __init__(self, host: str, port: int, checks: dict[str, Check] | None = None) -> None:
        """A listener not started yet; ``checks`` may be added to until it is."""
        self.host = host
        self.port = port
        self.checks: dict[str, Check] = dict(checks or {})
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Bind and serve in the background."""
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        addresses = self._runner.addresses  # the bound port, when 0 asked for any
        if addresses:
            self.port = int(addresses[0][1])
        log.info("health and metrics on http://%s:%s", self.host, self.port)

    async def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def readiness(self) -> dict[str, bool]:
        """Every check's result (a check that raises or times out is not ready)."""
        results: dict[str, bool] = {}
        for name, check in self.checks.items():
            try:
                results[name] = bool(await asyncio.wait_for(check(), CHECK_TIMEOUT))
            except Exception:  # not ready, whatever the reason: the probe must answer
                results[name] = False
        return results

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        results = await self.readiness()
        ready = all(results.values())
        body = json.dumps({"ready": ready, "checks": results}) + "\n"
        return web.Response(text=body, status=200 if ready else 503, content_type="application/json")

    async def _metrics(self, request: web.Request) -> web.Response:
        response = web.Response(body=generate_latest(REGISTRY))
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response
