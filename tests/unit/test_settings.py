"""Settings: the core's and each adapter's, from the environment; ``.env.example`` names only real ones."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.runner import serve
from adapters.telegram.settings import TelegramSettings
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_of_env_example_is_a_setting() -> None:
    names = [
        line.split("=", 1)[0].strip()
        for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
        if "=" in line and not line.lstrip().startswith("#")
    ]
    core = {name.upper() for name in Settings.model_fields}
    telegram = {f"TELEGRAM_{name.upper()}" for name in TelegramSettings.model_fields}
    assert names and [n for n in names if n not in core | telegram] == []
    assert telegram <= set(names), "every Telegram setting is documented in .env.example"


def test_the_telegram_settings_come_from_telegram_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", "123:secret-token")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_PORT", "9000")
    telegram = TelegramSettings(_env_file=None)  # type: ignore[call-arg]
    assert telegram.token is not None and telegram.token.get_secret_value() == "123:secret-token"
    assert telegram.webhook_port == 9000
    assert "secret-token" not in repr(telegram) and "secret-token" not in str(telegram.model_dump())
    assert not hasattr(Settings(_env_file=None), "telegram_token")  # type: ignore[call-arg]


def test_musbot_run_without_a_token_says_what_to_set(capsys: pytest.CaptureFixture[str]) -> None:
    code = asyncio.run(serve(Settings(_env_file=None), TelegramSettings(_env_file=None)))  # type: ignore[call-arg]
    assert code == 2 and "TELEGRAM_TOKEN" in capsys.readouterr().err
