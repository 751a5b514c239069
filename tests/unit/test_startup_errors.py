"""What a platform's failed start tells the host (issue 27): each library error becomes one line, without the
token, and an exit status — 2 for a token the platform rejects (the systemd units do not restart on it), 1 for
the rest (they do). ``tests/e2e/test_musbot_run_failures.py`` runs the real process for the common cases;
these are the ones the fakes cannot stage (a gateway that rejects the token, a timeout, a 5xx), and the
redaction of every form of a token."""

from __future__ import annotations

import json
import logging
import sys
import urllib.parse
from collections.abc import Iterator
from types import SimpleNamespace

import aiohttp
import discord
import pytest
from pydantic import SecretStr
from telegram.error import BadRequest, InvalidToken, NetworkError, TimedOut

from adapters import runner
from adapters.cli import JsonLines, Redacting, redact, secret_forms
from adapters.discord.app import startup_error as discord_error
from adapters.telegram.app import startup_error as telegram_error
from adapters.telegram.settings import TelegramSettings
from bot.kernel import UserRef, WebLinks
from bot.ops import SettingRefused, StartupError

TG_TOKEN = "123456:AAE-Secret_part-9x"
DC_TOKEN = "MTIzNDU2.Gx1AbC.Signed-Secret_part-7y"


def telegram(**extra: object) -> TelegramSettings:
    return TelegramSettings(token=SecretStr(TG_TOKEN), _env_file=None, **extra)  # type: ignore[call-arg, arg-type]


def rejected_by_telegram(said: str) -> InvalidToken:
    """What python-telegram-bot raises from ``initialize()``: the server's answer as the cause."""
    try:
        raise InvalidToken(f"The token `{TG_TOKEN}` was rejected by the server.") from InvalidToken(said)
    except InvalidToken as exc:
        return exc


@pytest.mark.parametrize("said", ["Unauthorized", "Not Found"])
def test_a_token_telegram_rejects_is_a_refused_setting(said: str) -> None:
    error = telegram_error(rejected_by_telegram(said), telegram())
    assert isinstance(error, SettingRefused) and error.exit_status == 2
    assert str(error).startswith(
        f"TELEGRAM_TOKEN: rejected by the Bot API at https://api.telegram.org ({said})"
    )
    assert "TELEGRAM_API_BASE_URL" not in str(error)  # not set: not a suspect
    assert TG_TOKEN.split(":")[1] not in str(error) and "123456" not in str(error)
    other_server = telegram_error(rejected_by_telegram(said), telegram(api_base_url="http://bot-api:8081/"))
    assert "at http://bot-api:8081 (" in str(other_server) and "TELEGRAM_API_BASE_URL" in str(other_server)


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (TimedOut(), "cannot reach the Telegram Bot API at https://api.telegram.org (Timed out)"),
        (
            NetworkError("httpx.ConnectError: boom"),
            "cannot reach the Telegram Bot API at https://api.telegram.org",
        ),
        (BadRequest("Bad webhook: failed to resolve host"), "refused to start the bot (Bad webhook: failed"),
        (OSError(13, "Permission denied"), "the Telegram adapter cannot start (Permission denied)"),
    ],
)
def test_other_telegram_failures_are_worth_a_restart(error: Exception, line: str) -> None:
    told = telegram_error(error, telegram())  # type: ignore[arg-type]
    assert type(told) is StartupError and told.exit_status == 1 and line in str(told)


class _Socket:
    close_code = 4004


def test_a_token_discord_rejects_at_login_or_at_the_gateway_is_a_refused_setting() -> None:
    for error in (
        discord.LoginFailure("Improper token has been passed."),
        discord.ConnectionClosed(_Socket(), shard_id=0),  # type: ignore[arg-type]
    ):
        told = discord_error(error, 60)
        assert isinstance(told, SettingRefused) and told.exit_status == 2
        assert str(told).startswith("DISCORD_TOKEN: rejected by Discord at ")


def test_other_discord_failures_are_worth_a_restart() -> None:
    unavailable = discord.DiscordServerError(
        SimpleNamespace(status=503, reason="Service Unavailable"),  # type: ignore[arg-type]
        {"code": 0, "message": "upstream"},
    )
    socket = _Socket()
    socket.close_code = 4000
    for error, line in [
        (aiohttp.ClientConnectionError("boom"), "cannot reach Discord at "),
        (discord.GatewayNotFound(), "cannot reach Discord at "),
        (unavailable, "refused a start-up call (503 Service Unavailable (error code: 0): upstream)"),
        (TimeoutError(), "Discord's gateway did not get ready within 60 s"),
        (discord.ConnectionClosed(socket, shard_id=0), "gateway closed the connection (4000"),  # type: ignore[arg-type]
    ]:
        told = discord_error(error, 60)
        assert type(told) is StartupError and told.exit_status == 1 and line in str(told), str(told)


def test_every_form_of_a_token_is_redacted() -> None:
    secret = TG_TOKEN.split(":")[1]
    forms = secret_forms([TG_TOKEN, DC_TOKEN, "short"])
    assert {TG_TOKEN, secret, DC_TOKEN, "Signed-Secret_part-7y"} <= set(forms)
    assert "short" not in forms and "123456" not in forms  # too short to redact; the bot id is public
    quoted = urllib.parse.quote(TG_TOKEN, safe="")
    text = f"a {TG_TOKEN} b {secret} c {quoted} d {DC_TOKEN}"
    assert redact(text, forms) == "a *** b *** c *** d ***"


def test_a_signed_links_credential_is_redacted_wherever_a_library_logs_it() -> None:
    """python-telegram-bot logs every call's parameters at DEBUG: a /history answer's replay link too."""
    link = WebLinks("https://mus.example.org", b"k" * 32, hours=12).replay(
        UserRef("tg:-5", "", "es"), "abcd1234", 0
    )
    credential = link.split("#k=")[1]
    line = f"Calling Bot API endpoint `sendMessage` with parameters `{{'text': 'Repetición: {link}'}}`"
    shown = redact(line, [])
    assert credential not in shown and "https://mus.example.org/r/abcd1234#k=***" in shown


def test_a_traceback_in_a_json_line_is_redacted_too() -> None:
    try:
        raise InvalidToken(f"The token `{TG_TOKEN}` was rejected by the server.")
    except InvalidToken:
        rec = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed: %s", (TG_TOKEN,), sys.exc_info())
    line = Redacting(JsonLines(), [TG_TOKEN]).format(rec)
    entry = json.loads(line)
    assert "The token `***` was rejected" in entry["traceback"] and entry["message"] == "failed: ***"
    assert TG_TOKEN.split(":")[1] not in line


@pytest.fixture
def root_logger() -> Iterator[None]:
    """The root logger as it was after the test (``runner.run`` configures logging for the process)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_an_unexpected_error_is_logged_redacted_not_left_to_python(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], root_logger: None
) -> None:
    async def broken(*args: object) -> int:
        raise RuntimeError(f"a bug that quotes {TG_TOKEN}")

    monkeypatch.setattr(runner, "serve", broken)
    code = runner.run(
        runner.Settings(_env_file=None),  # type: ignore[call-arg]
        telegram(),
        runner.DiscordSettings(_env_file=None),  # type: ignore[call-arg]
    )
    err = capsys.readouterr().err
    assert code == 1 and "musbot stopped on an unexpected error" in err and "a bug that quotes ***" in err
    assert TG_TOKEN.split(":")[1] not in err
