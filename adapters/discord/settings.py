"""The Discord adapter's settings (``DISCORD_*`` in the environment or ``.env``; ``.env.example`` documents
each one). The core's own settings are :class:`bot.ops._settings.Settings`; both are checked the same way (one
line per bad value, naming the variable)."""

from __future__ import annotations

import re
from typing import Annotated, Self

from pydantic import BeforeValidator, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode

from bot.ops import env_config, seconds_between, url_with_scheme

#: A bot token: dot-separated base64url parts, no spaces.
TOKEN_SHAPE = re.compile(r"[\w.-]+")


def _ids(value: object) -> object:
    """``"1, 2"`` or ``"1 2"`` (the environment's form) as a list of ints; lists pass through."""
    if isinstance(value, str):
        try:
            return [int(part) for part in value.replace(",", " ").split()]
        except ValueError:
            raise ValueError("must be numbers separated by commas, e.g. 111,222") from None
    return value


class DiscordSettings(BaseSettings):
    """How to reach Discord. The token is a :class:`SecretStr`: it never prints."""

    model_config = env_config("DISCORD_")

    token: SecretStr | None = Field(default=None, description="The bot's token (Developer Portal → Bot)")
    api_base_url: str | None = Field(
        default=None, description="Another HTTP API, e.g. http://127.0.0.1:8080/api/v10 (tests)"
    )
    gateway_url: str | None = Field(default=None, description="Another gateway websocket (tests)")
    guild_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list,
        description="Sync the slash commands to these servers only (instant; for development). "
        "Empty: sync globally (production).",
    )
    shard_count: int | None = Field(default=None, ge=1, description="Total shards across every process")
    shard_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, description="The shards this process runs (needs DISCORD_SHARD_COUNT)"
    )
    sync_commands: bool = Field(
        default=True,
        description="Register the slash commands at start-up when they changed since their last "
        "registration (false: only `musbot discord-sync` registers them)",
    )
    min_interval: Annotated[float, BeforeValidator(seconds_between(0, 60))] = Field(
        default=1.0, description="Seconds between two calls to one channel (Discord allows ~5 per 5 s)"
    )

    @field_validator("token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not TOKEN_SHAPE.fullmatch(value.get_secret_value().strip()):
            raise ValueError(
                "must be the bot's token from the Developer Portal (letters, digits, '.', '-', '_')"
            )
        return None if value is None else SecretStr(value.get_secret_value().strip())

    @field_validator("api_base_url")
    @classmethod
    def _api_base_url(cls, value: str | None) -> str | None:
        return url_with_scheme("http", "https", example="http://127.0.0.1:8080/api/v10")(value)

    @field_validator("gateway_url")
    @classmethod
    def _gateway_url(cls, value: str | None) -> str | None:
        return url_with_scheme("ws", "wss", example="ws://127.0.0.1:8080/gateway")(value)

    @field_validator("guild_ids", "shard_ids", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _ids(value)

    @model_validator(mode="after")
    def _shards_agree(self) -> Self:
        if self.shard_ids and self.shard_count is None:
            raise ValueError("DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT")
        if self.shard_count is not None and any(not 0 <= s < self.shard_count for s in self.shard_ids):
            raise ValueError("every DISCORD_SHARD_IDS entry must be below DISCORD_SHARD_COUNT")
        return self
