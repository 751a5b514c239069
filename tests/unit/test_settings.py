"""Settings: the core's and each adapter's, from the environment; ``.env.example`` names only real ones."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.discord.settings import DiscordSettings
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
    discord = {f"DISCORD_{name.upper()}" for name in DiscordSettings.model_fields}
    assert names and [n for n in names if n not in core | telegram | discord] == []
    assert telegram <= set(names), "every Telegram setting is documented in .env.example"
    assert discord <= set(names), "every Discord setting is documented in .env.example"


def test_the_telegram_settings_come_from_telegram_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", "123:secret-token")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_PORT", "9000")
    telegram = TelegramSettings(_env_file=None)  # type: ignore[call-arg]
    assert telegram.token is not None and telegram.token.get_secret_value() == "123:secret-token"
    assert telegram.webhook_port == 9000
    assert "secret-token" not in repr(telegram) and "secret-token" not in str(telegram.model_dump())
    assert not hasattr(Settings(_env_file=None), "telegram_token")  # type: ignore[call-arg]


def test_musbot_run_without_a_token_says_what_to_set(capsys: pytest.CaptureFixture[str]) -> None:
    code = asyncio.run(
        serve(
            Settings(_env_file=None),  # type: ignore[call-arg]
            TelegramSettings(_env_file=None),  # type: ignore[call-arg]
            DiscordSettings(_env_file=None),  # type: ignore[call-arg]
        )
    )
    err = capsys.readouterr().err
    assert code == 2 and "TELEGRAM_TOKEN" in err and "DISCORD_TOKEN" in err


def test_discord_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", "discord-secret")
    monkeypatch.setenv("DISCORD_GUILD_IDS", "111, 222")
    monkeypatch.setenv("DISCORD_SHARD_COUNT", "4")
    monkeypatch.setenv("DISCORD_SHARD_IDS", "2 3")
    settings = DiscordSettings(_env_file=None)  # type: ignore[call-arg]
    assert settings.guild_ids == [111, 222] and settings.shard_count == 4 and settings.shard_ids == [2, 3]
    assert "discord-secret" not in repr(settings) and "discord-secret" not in str(settings.model_dump())


@pytest.mark.parametrize(
    "env",
    [
        {"DISCORD_SHARD_IDS": "0"},  # shards without a count
        {"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "2"},  # a shard beyond the count
        {"DISCORD_SHARD_COUNT": "0"},
        {"DISCORD_GUILD_IDS": "12, abc"},
        {"DISCORD_MIN_INTERVAL": "-1"},
    ],
)
def test_malformed_discord_settings_are_refused(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError):
        DiscordSettings(_env_file=None)  # type: ignore[call-arg]


def test_env_example_copied_as_is_configures_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A host's first step is often `cp .env.example .env`: its empty `VAR=` lines must mean "unset".
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert TelegramSettings().token is None and DiscordSettings().token is None
    assert Settings().redis_url is None and DiscordSettings().shard_count is None
