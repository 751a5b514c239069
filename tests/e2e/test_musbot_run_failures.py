"""``musbot run`` as a real process whose chat platform will not have it: a rejected token, an API that does
not answer — for Telegram and for Discord, with text and JSON logs.

What a host must see (issue 27): one line on stderr, the last one, naming the variable for a rejected token
(exit status 2, which the systemd units do not restart on) or saying what cannot be reached (exit status 1,
which they restart on); no traceback; and not one byte of the token — nor of its secret part alone — in
anything the process wrote, at ``LOG_LEVEL=DEBUG`` (every library's chatter, httpx's request URLs with the
token in them included). Before this, python-telegram-bot's ``InvalidToken`` traceback quoted the whole token
and the process exited 1, to be restarted every 5 s, writing the token to the journal each time.

The platforms are the fakes of this directory (the fake Bot API answers 401 to another token, the fake
Discord 401 to a REST call with another token); the unreachable API is a closed local port.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .fake_discord import FakeDiscord
from .fake_telegram import FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
#: The tokens the fakes accept, and the ones they refuse.
GOOD_TG, GOOD_DC = "123456:ACCEPTED-telegram-Secret_w8", "MTEx.accepted.DISCORD-Secret_z5"
BAD_TG, BAD_DC = "654321:REVOKED-telegram-Secret_x9", "MTIzNDU2.revoked.DISCORD-Secret_y7"
WEBHOOK_SECRET = "webhook-Secret_v6"
#: What must never be written: each token, its secret part alone (after the colon; the last part), the
#: webhook's secret token.
SECRETS = [WEBHOOK_SECRET]
for _token in (GOOD_TG, BAD_TG, GOOD_DC, BAD_DC):
    SECRETS += [_token, _token.split(":")[-1].split(".")[-1]]

TELEGRAM_REJECTED = (
    "TELEGRAM_TOKEN: rejected by the Bot API at http://127.0.0.1:{tg} (Unauthorized): revoked or mistyped? "
    "@BotFather gives the token (/mybots → API Token); or TELEGRAM_API_BASE_URL is not a Bot API server"
)
DISCORD_REJECTED = (
    "DISCORD_TOKEN: rejected by Discord at http://127.0.0.1:{dc}/api/v10 (401 Unauthorized): revoked or "
    "mistyped? The Developer Portal gives a new one (your application → Bot → Reset Token)"
)
TELEGRAM_UNREACHABLE = (
    "musbot: cannot reach the Telegram Bot API at http://127.0.0.1:{closed} "
    "(cannot connect: [Errno 111] Connect call failed ('127.0.0.1', {closed}))"
)
DISCORD_UNREACHABLE = (
    "musbot: cannot reach Discord at http://127.0.0.1:{closed}/api/v10 (ClientConnectorError: "
)
WEBHOOK_PORT_TAKEN = (
    "musbot: cannot listen for Telegram's webhook on 127.0.0.1:{taken} (Address already in use)"
)
HEALTH_PORT_TAKEN = "musbot: cannot serve HEALTH_PORT on 127.0.0.1:{taken} ("


@dataclass(frozen=True)
class Case:
    """A start that fails: the variables set, the status it must exit with, the line it must end with
    (``{tg}``, ``{dc}``, ``{closed}``: the ports), whole or (``prefix``) its start."""

    env: dict[str, str]
    status: int
    line: str
    prefix: bool = False


CASES = {
    "telegram rejects the token": Case(
        {"TELEGRAM_TOKEN": BAD_TG, "TELEGRAM_API_BASE_URL": "http://127.0.0.1:{tg}"}, 2, TELEGRAM_REJECTED
    ),
    "telegram unreachable": Case(
        {"TELEGRAM_TOKEN": BAD_TG, "TELEGRAM_API_BASE_URL": "http://127.0.0.1:{closed}"},
        1,
        TELEGRAM_UNREACHABLE,
    ),
    "discord rejects the token": Case(
        {"DISCORD_TOKEN": BAD_DC, "DISCORD_API_BASE_URL": "{dc_api}", "DISCORD_GATEWAY_URL": "{dc_gateway}"},
        2,
        DISCORD_REJECTED,
    ),
    "discord unreachable": Case(
        {
            "DISCORD_TOKEN": BAD_DC,
            "DISCORD_API_BASE_URL": "http://127.0.0.1:{closed}/api/v10",
            "DISCORD_GATEWAY_URL": "ws://127.0.0.1:{closed}/gateway",
        },
        1,
        DISCORD_UNREACHABLE,
        prefix=True,
    ),
    # Telegram starts (and must be stopped again, cleanly) before Discord refuses its token.
    "telegram runs, then discord rejects the token": Case(
        {
            "TELEGRAM_TOKEN": GOOD_TG,
            "TELEGRAM_API_BASE_URL": "http://127.0.0.1:{tg}",
            "DISCORD_TOKEN": BAD_DC,
            "DISCORD_API_BASE_URL": "{dc_api}",
            "DISCORD_GATEWAY_URL": "{dc_gateway}",
        },
        2,
        DISCORD_REJECTED,
    ),
    # Ports another process holds (an old worker still stopping): worth a restart, so status 1.
    "telegram's webhook port is taken": Case(
        {
            "TELEGRAM_TOKEN": GOOD_TG,
            "TELEGRAM_API_BASE_URL": "http://127.0.0.1:{tg}",
            "TELEGRAM_WEBHOOK_URL": "https://mus.example.org/tg-5f0c1e9a",
            "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,  # (setWebhook's parameters are logged at DEBUG)
            "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1",
            "TELEGRAM_WEBHOOK_PORT": "{taken}",
        },
        1,
        WEBHOOK_PORT_TAKEN,
    ),
    "the health port is taken": Case(
        {
            "TELEGRAM_TOKEN": GOOD_TG,
            "TELEGRAM_API_BASE_URL": "http://127.0.0.1:{tg}",
            "HEALTH_HOST": "127.0.0.1",
            "HEALTH_PORT": "{taken}",
        },
        1,
        HEALTH_PORT_TAKEN,
        prefix=True,
    ),
}


@pytest.fixture
async def fakes() -> AsyncIterator[tuple[FakeTelegram, FakeDiscord]]:
    async with FakeTelegram(token=GOOD_TG) as tg, FakeDiscord(token=GOOD_DC) as dc:
        yield tg, dc


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def musbot_run(env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """``python -m adapters.cli run`` to its end: its exit status, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "adapters.cli",
        "run",
        cwd=ROOT,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out, err


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("name", sorted(CASES))
async def test_a_platform_that_will_not_start_ends_in_one_line_without_the_token(
    fakes: tuple[FakeTelegram, FakeDiscord], tmp_path: Path, name: str, log_format: str
) -> None:
    tg, dc = fakes
    case = CASES[name]
    taken = socket.create_server(("127.0.0.1", 0))  # listening: nobody else can bind it
    ports = {"tg": str(tg.port), "dc": dc.api_base.split(":")[2].split("/")[0], "closed": str(closed_port())}
    ports["taken"] = str(taken.getsockname()[1])
    ports |= {"dc_api": dc.api_base, "dc_gateway": dc.gateway_url}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "TELEGRAM_", "DISCORD_"))}
    env |= {"PYTHONIOENCODING": "utf-8", "DATA_DIR": str(tmp_path / "data")}
    # DEBUG: every library says all it says (httpx and python-telegram-bot log URLs holding the token).
    env |= {"LOG_LEVEL": "DEBUG", "LOG_FORMAT": log_format}
    env |= {key: value.format(**ports) for key, value in case.env.items()}

    with taken:
        status, out, err = await musbot_run(env)

    written = out + err
    for secret in SECRETS:
        assert secret.encode() not in written, f"{secret!r} was written"
    text = err.decode("utf-8")
    assert status == case.status, text[-3000:]
    assert "Traceback" not in text and out == b""
    lines = [line for line in text.splitlines() if line.strip()]
    expected = case.line.format(**ports)
    assert lines[-1].startswith(expected) if case.prefix else lines[-1] == expected, lines[-1]
    assert sum(expected in line for line in lines) == 1  # said once, in its line, not logged besides
    if log_format == "json":
        records = [json.loads(line) for line in lines[:-1]]  # every other line is one JSON record
        assert records[-1]["message"] == "stopped"  # what had started was stopped first
        assert not any(r["level"] in ("ERROR", "CRITICAL") for r in records), records
