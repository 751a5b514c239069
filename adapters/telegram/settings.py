"""The Telegram adapter's settings (``TELEGRAM_*`` in the environment or ``.env``; ``.env.example`` documents
each one). The core's own settings are :class:`bot.settings.Settings`."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from bot.settings import env_config


class TelegramSettings(BaseSettings):
    """How to reach Telegram. Secrets are :class:`SecretStr`: they never print."""

    model_config = env_config("TELEGRAM_")

    token: SecretStr | None = Field(default=None, description="The bot's token from @BotFather")
    api_base_url: str | None = Field(default=None, description="Another Bot API server (a local one, tests)")
    webhook_url: str | None = Field(default=None, description="Receive updates by webhook at this URL")
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "0.0.0.0"
    webhook_port: int = 8443
