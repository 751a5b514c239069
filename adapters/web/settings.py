"""The web table's settings (``WEB_*`` in the environment or ``.env``, each one in ``.env.example``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.kernel import WebAccess, WebLinks
from bot.ops import env_config, port_number, seconds_between, url_with_scheme

#: The shortest ``WEB_SECRET`` accepted: it signs every link to a table (HMAC-SHA256).
MIN_SECRET_LENGTH = 16


class WebSettings(BaseSettings):
    """Where the web table listens, the address people reach it by, and the key that signs its links."""

    model_config = env_config("WEB_")

    public_url: str | None = Field(
        default=None, description="The address people open (https://mus.example.org), behind the proxy"
    )
    host: str = "127.0.0.1"
    port: Annotated[int, BeforeValidator(port_number)] = 8090
    """Not 8080: that is where deploy/ serves the health endpoints (`HEALTH_PORT`)."""
    secret: SecretStr | None = Field(default=None, description="Signs the links to a table (HMAC-SHA256)")
    move_pause: Annotated[float, BeforeValidator(seconds_between(0.0, 5.0))] = 0.7
    """The pause between two moves shown on a page, so that a run of machine moves is seen move by move."""
    link_hours: Annotated[float, BeforeValidator(seconds_between(0.01, 24 * 30))] = 12.0
    """How long a signed link to a table stays valid (hours)."""
    initdata_max_age: Annotated[float, BeforeValidator(seconds_between(10.0, 7 * 86400))] = 86400.0
    """How old a Telegram Mini App's ``initData`` may be (seconds since its ``auth_date``)."""
    serve: bool = True
    """Whether ``musbot run`` serves the web table itself when ``WEB_SECRET`` is set. ``false`` where another
    process serves it (``musbot web``, the ``web`` service of ``deploy/compose.yaml``): the workers then only
    write links to it and announce their writes."""
    safety_poll: Annotated[float, BeforeValidator(seconds_between(0.5, 600.0))] = 5.0
    """Seconds between two reads of every watched table that no notice asked for (a lost notice's cover)."""

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        checked = url_with_scheme("http", "https", example="https://mus.example.org")(value)
        return None if checked is None else checked.rstrip("/")

    @field_validator("secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_SECRET_LENGTH:
            raise ValueError(f"must be at least {MIN_SECRET_LENGTH} characters (e.g. `openssl rand -hex 32`)")
        return value

    def base_url(self) -> str:
        """The address of the server's root as people reach it: ``WEB_PUBLIC_URL``, else where it listens."""
        if self.public_url:
            return self.public_url
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"

    def links(self, secret: bytes) -> WebLinks:
        """How links to the web table are written: to :meth:`base_url`, signed with ``secret``."""
        return WebLinks(self.base_url(), secret, self.link_hours)

    def access(self) -> WebAccess | None:
        """The chats' way to the web table: only where it is served (``WEB_SECRET``) at an address people
        reach (``WEB_PUBLIC_URL``: a link to 127.0.0.1 leads nowhere from a phone); each chat platform's
        adapter then sets its door."""
        if self.secret is None or not self.public_url:
            return None
        return WebAccess(self.links(self.secret.get_secret_value().encode()))
