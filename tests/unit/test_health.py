"""The host's window: /healthz, /readyz, /metrics, and log lines as JSON with tokens redacted."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp

from adapters.cli import JsonLines, Redacting
from bot.kernel._metrics import COMMANDS
from bot.ops import HealthServer


async def ok() -> bool:
    return True


async def down() -> bool:
    return False


async def broken() -> bool:
    raise ConnectionError("refused")


async def frozen() -> bool:
    await asyncio.sleep(60)
    return True


async def test_health_ready_and_metrics() -> None:
    server = HealthServer("127.0.0.1", 0, {"redis": ok, "telegram": ok})
    await server.start()
    COMMANDS.labels("newgame", "ok").inc()
    try:
        async with aiohttp.ClientSession(f"http://127.0.0.1:{server.port}") as http:
            async with http.get("/healthz") as r:
                assert r.status == 200 and (await r.text()).strip() == "ok"
            async with http.get("/readyz") as r:
                assert r.status == 200 and await r.json() == {
                    "ready": True,
                    "checks": {"redis": True, "telegram": True},
                }
            async with http.get("/metrics") as r:
                text = await r.text()
                assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain")
            assert 'mus_commands_total{command="newgame",outcome="ok"}' in text
            for name in ("mus_handling_seconds", "mus_deadline_lag_seconds", "mus_delivery_queue_depth"):
                assert name in text
            server.checks["discord"] = down
            async with http.get("/readyz") as r:
                assert r.status == 503 and (await r.json())["checks"]["discord"] is False
    finally:
        await server.stop()


async def test_a_check_that_fails_or_hangs_reads_not_ready(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("bot.ops._health.CHECK_TIMEOUT", 0.1)
    server = HealthServer("127.0.0.1", 0, {"redis": frozen, "telegram": broken, "discord": ok})
    assert await server.readiness() == {"redis": False, "telegram": False, "discord": True}


def record(message: str, **extra: object) -> logging.LogRecord:
    rec = logging.LogRecord("bot.delivery._lanes", logging.WARNING, __file__, 1, message, (), None)
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def test_json_lines_carry_table_and_chat_and_never_a_token() -> None:
    token = "123456:SECRET-token-value"
    formatter = Redacting(JsonLines(), [token, "short"])
    line = formatter.format(record(f"GET https://api.telegram.org/bot{token}/getMe failed", chat="tg:-100"))
    entry = json.loads(line)
    assert (
        entry["level"] == "WARNING"
        and entry["logger"] == "bot.delivery._lanes"
        and entry["chat"] == "tg:-100"
    )
    assert token not in line and "bot***/getMe" in entry["message"]
    assert "table" not in entry
    text = Redacting(logging.Formatter("%(message)s"), [token]).format(record(f"token={token}"))
    assert text == "token=***"
