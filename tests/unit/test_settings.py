"""Settings: the core's and each adapter's, from the environment; ``.env.example`` names only real ones."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from adapters import cli
from adapters.discord.settings import DiscordSettings
from adapters.runner import serve
from adapters.telegram.settings import TelegramSettings
from adapters.web.settings import WebSettings
from bot.ops import Settings, SettingsInvalid, data_dir_problem, read_settings

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
    web = {f"WEB_{name.upper()}" for name in WebSettings.model_fields}
    assert names and [n for n in names if n not in core | telegram | discord | web] == []
    assert telegram <= set(names), "every Telegram setting is documented in .env.example"
    assert discord <= set(names), "every Discord setting is documented in .env.example"
    assert web <= set(names), "every web table setting is documented in .env.example"


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


# --- every value is checked, and told one line per problem --------------------------------------------------


def refused(monkeypatch: pytest.MonkeyPatch, cls: type[BaseSettings], **env: str) -> list[str]:
    """The lines ``read_settings`` tells for ``env`` (read in an empty directory: no ``.env``)."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsInvalid) as info:
        read_settings(cls)
    return info.value.problems


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in list(os.environ):
        if name.startswith(("REDIS_", "TELEGRAM_", "DISCORD_")) or name in CORE_VARIABLES:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


CORE_VARIABLES = {name.upper() for name in Settings.model_fields}
TIMINGS = {
    "TURN_TIMEOUT": (1, 86400),
    "MACHINE_DELAY": (0, 60),
    "NEXT_HAND_DELAY": (0, 600),
    "CATCH_WINDOW": (0.5, 60),
    "LOBBY_TIMEOUT": (1, 604800),
    "PAUSE_LIMIT": (60, 2592000),
}


@pytest.mark.parametrize("name", sorted(TIMINGS))
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "1e300", "-1", "soon", ""])
def test_timings_are_finite_and_within_bounds(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, name: str, value: str
) -> None:
    low, high = TIMINGS[name]
    if value == "":  # empty means unset: the default
        monkeypatch.setenv(name, value)
        assert getattr(read_settings(Settings), name.lower()) == Settings.model_fields[name.lower()].default
        return
    assert refused(monkeypatch, Settings, **{name: value}) == [
        f"{name}: must be a finite number of seconds between {low:g} and {high:g}"
    ]


def test_timings_at_their_bounds_are_taken(monkeypatch: pytest.MonkeyPatch, clean_env: Path) -> None:
    for name, (low, high) in TIMINGS.items():
        monkeypatch.setenv(name, f"{low:g}")
        assert getattr(read_settings(Settings), name.lower()) == low
        monkeypatch.setenv(name, f" {high:g} ")
        assert getattr(read_settings(Settings), name.lower()) == high
    settings = read_settings(Settings)
    assert settings.flow().turn_timeout == 86400


@pytest.mark.parametrize(
    "url",
    ["garbage", "localhost:6379", "http://localhost:6379", "redis://", "redis://host:99999/0", "unix://"],
)
def test_redis_url_must_be_a_redis_url(monkeypatch: pytest.MonkeyPatch, clean_env: Path, url: str) -> None:
    assert refused(monkeypatch, Settings, REDIS_URL=url) == [
        "REDIS_URL: must be a URL starting with redis://, rediss:// or unix://, e.g. redis://localhost:6379/0"
    ]  # and no more: the value is not echoed (it may hold a password)


@pytest.mark.parametrize(
    "url", ["redis://localhost:6379/0", "rediss://user:pw@cache.example.org:6380/2", "unix:///run/redis.sock"]
)
def test_redis_urls_that_are_taken(monkeypatch: pytest.MonkeyPatch, clean_env: Path, url: str) -> None:
    monkeypatch.setenv("REDIS_URL", url)
    assert read_settings(Settings).redis_url == url


PREFIX_REFUSED = (
    "REDIS_PREFIX: must be a non-empty prefix without spaces, control characters or braces "
    "({ } would make a Redis Cluster hash tag), e.g. mus:"
)


@pytest.mark.parametrize(
    "prefix", ["mus prod:", "mus:\n", "mus:\nprod:", "mus\t:", "{mus}:", "mus{", "mus}:", "mus\x00:", " mus:"]
)
def test_a_redis_prefix_that_would_corrupt_keys_is_refused(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, prefix: str
) -> None:
    # (issue 24) A space or a newline splits keys in redis-cli and scripts; braces make a cluster hash tag.
    # A NUL cannot even be set in an environment: it comes from .env.
    if "\x00" in prefix:
        (clean_env / ".env").write_text(f"REDIS_PREFIX={prefix}\n", encoding="utf-8")
        told = refused(monkeypatch, Settings)
    else:
        told = refused(monkeypatch, Settings, REDIS_PREFIX=prefix)
    assert told == [PREFIX_REFUSED]  # and no more: the value is not echoed


@pytest.mark.parametrize("prefix", ["mus:", "mus:prod:", "e2e:0a1b2c:", "bot/mus-1.2_x:", "mús:"])
def test_redis_prefixes_that_are_taken(monkeypatch: pytest.MonkeyPatch, clean_env: Path, prefix: str) -> None:
    monkeypatch.setenv("REDIS_PREFIX", prefix)
    assert read_settings(Settings).redis_prefix == prefix


def test_data_dir_must_be_writable_when_the_embedded_redis_keeps_it(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path
) -> None:
    blocker = clean_env / "a-file"
    blocker.write_text("")
    assert refused(monkeypatch, Settings, DATA_DIR=str(blocker / "data")) == [
        f"DATA_DIR: cannot keep data in {blocker / 'data'}: {blocker} is not a directory"
    ]
    assert data_dir_problem(clean_env / "new" / "deeper") is None  # created when needed
    assert not (clean_env / "new").exists()  # checking creates nothing
    monkeypatch.setenv("REDIS_URL", "redis://localhost:6379/0")
    assert read_settings(Settings).data_dir == blocker / "data"  # not used with REDIS_URL


def test_a_read_only_data_dir_is_refused(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = clean_env / "locked"
    locked.mkdir(mode=0o500)
    if os.geteuid() == 0:  # root writes everywhere (as in CI): let the system say what it says to others
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != locked and real_access(p, mode))
    assert (
        data_dir_problem(locked / "data")
        == f"cannot keep data in {locked / 'data'}: {locked} is not writable"
    )


@pytest.mark.parametrize("port", ["99999", "0", "-1", "65536", "http", "8443.5"])
def test_webhook_port_is_a_port(monkeypatch: pytest.MonkeyPatch, clean_env: Path, port: str) -> None:
    assert refused(monkeypatch, TelegramSettings, TELEGRAM_WEBHOOK_PORT=port) == [
        "TELEGRAM_WEBHOOK_PORT: must be a port number between 1 and 65535"
    ]


@pytest.mark.parametrize("token", ["abc", "123456", "123456:", ":abc", "12a:abc", "123:abc def", "123:abc/x"])
def test_telegram_token_shape(monkeypatch: pytest.MonkeyPatch, clean_env: Path, token: str) -> None:
    assert refused(monkeypatch, TelegramSettings, TELEGRAM_TOKEN=token) == [
        "TELEGRAM_TOKEN: must look like 123456789:ABC-def_123, the token @BotFather gave"
    ]  # and no more: a token is never echoed


def test_telegram_values_that_are_taken(monkeypatch: pytest.MonkeyPatch, clean_env: Path) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", " 123456:AAE-x_9 ")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://mus.example.org/tg-5f0c1e9a")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_PORT", "65535")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "s3cret_-X")
    telegram = read_settings(TelegramSettings)
    assert telegram.token is not None and telegram.token.get_secret_value() == "123456:AAE-x_9"
    assert telegram.webhook_port == 65535


@pytest.mark.parametrize("url", ["http://mus.example.org/hook", "mus.example.org/hook", "https://"])
def test_webhook_url_is_https(monkeypatch: pytest.MonkeyPatch, clean_env: Path, url: str) -> None:
    [line] = refused(monkeypatch, TelegramSettings, TELEGRAM_WEBHOOK_URL=url)
    assert line.startswith("TELEGRAM_WEBHOOK_URL: must be a URL starting with https://")


def test_webhook_secret_is_what_telegram_accepts(monkeypatch: pytest.MonkeyPatch, clean_env: Path) -> None:
    [line] = refused(monkeypatch, TelegramSettings, TELEGRAM_WEBHOOK_SECRET="not/allowed")
    assert line.startswith("TELEGRAM_WEBHOOK_SECRET: ") and "not/allowed" not in line


@pytest.mark.parametrize(
    ("env", "told"),
    [
        ({"DISCORD_MIN_INTERVAL": "inf"}, "DISCORD_MIN_INTERVAL: must be a finite number of seconds"),
        ({"DISCORD_TOKEN": "two words"}, "DISCORD_TOKEN: must be the bot's token"),
        ({"DISCORD_GUILD_IDS": "12, abc"}, "DISCORD_GUILD_IDS: must be numbers separated by commas"),
        ({"DISCORD_GATEWAY_URL": "http://127.0.0.1/gateway"}, "DISCORD_GATEWAY_URL: must be a URL starting"),
        ({"DISCORD_SHARD_IDS": "0"}, "DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT"),
    ],
)
def test_discord_problems_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, env: dict[str, str], told: str
) -> None:
    [line] = refused(monkeypatch, DiscordSettings, **env)
    assert line.startswith(told)


def test_musbot_tells_every_bad_setting_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CATCH_WINDOW", "nan")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_PORT", "99999")
    monkeypatch.setenv("DISCORD_MIN_INTERVAL", "-inf")
    assert cli.main(["run"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in err] == [
        "CATCH_WINDOW",
        "TELEGRAM_WEBHOOK_PORT",
        "DISCORD_MIN_INTERVAL",
    ]
    assert cli.main(["play", "--auto"]) == 2  # play reads only the core's settings
    assert capsys.readouterr().err.splitlines() == [
        "CATCH_WINDOW: must be a finite number of seconds between 0.5 and 60"
    ]
    assert not (clean_env / "data").exists()  # nothing was started
