"""The Telegram adapter's settings (``TELEGRAM_*`` in the environment or ``.env``; ``.env.example`` documents
each one). The core's own settings are :class:`bot.ops._settings.Settings`; both are checked the same way (one
line per bad value, naming the variable)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.ops import env_config, port_number, url_with_scheme

#: A Bot API token as @BotFather gives it: the bot's id, a colon, the secret.
TOKEN_SHAPE = re.compile(r"\d+:[\w-]+")
#: What Telegram accepts as a webhook's secret token.
SECRET_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,256}")
#: A Mini App's short name as @BotFather's ``/newapp`` accepts it (the ``<app>`` of ``t.me/<bot>/<app>``).
MINIAPP_SHAPE = re.compile(r"[A-Za-z0-9_]{3,30}")


class TelegramSettings(BaseSettings):
    """How to reach Telegram. Secrets are :class:`SecretStr`: they never print."""

    model_config = env_config("TELEGRAM_")

    token: SecretStr | None = Field(default=None, description="The bot's token from @BotFather")
    api_base_url: str | None = Field(default=None, description="Another Bot API server (a local one, tests)")
    webhook_url: str | None = Field(default=None, description="Receive updates by webhook at this URL")
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "0.0.0.0"
    webhook_port: Annotated[int, BeforeValidator(port_number)] = 8443
    miniapp_name: str | None = Field(
        default=None, description="The Mini App's short name from @BotFather's /newapp: groups link to it"
    )

    @field_validator("token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not TOKEN_SHAPE.fullmatch(value.get_secret_value().strip()):
            raise ValueError("must look like 123456789:ABC-def_123, the token @BotFather gave")
        return None if value is None else SecretStr(value.get_secret_value().strip())

    @field_validator("miniapp_name")
    @classmethod
    def _miniapp_name(cls, value: str | None) -> str | None:
        if value is not None and not MINIAPP_SHAPE.fullmatch(value.strip()):
            raise ValueError("must be the Mini App's short name from /newapp: 3 to 30 of A-Z, a-z, 0-9 and _")
        return None if value is None else value.strip()

    @field_validator("api_base_url")
    @classmethod
    def _api_base_url(cls, value: str | None) -> str | None:
        return url_with_scheme("http", "https", example="http://127.0.0.1:8081")(value)

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        # Telegram only calls webhooks over HTTPS.
        return url_with_scheme("https", example="https://mus.example.org/tg-5f0c1e9a")(value)

    @field_validator("webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not SECRET_SHAPE.fullmatch(value.get_secret_value()):
            raise ValueError("must be 1 to 256 characters among A-Z, a-z, 0-9, _ and -")
        return value
