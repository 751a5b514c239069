"""Signed links to the web table: a credential bound to one user and one place (a table, or a match to
replay), valid until it expires. The core makes them (an "Open the table" answer, a ``/history`` replay) and
the web adapter checks them, with one key: ``WEB_SECRET``.

A **link** is ``{payload}.{signature}``: the payload is base64url JSON (user key, name, language, place,
expiry), the signature base64url HMAC-SHA256 of it keyed with the secret, domain-separated so that it can
never be mistaken for another use of that key. It is compared in constant time; a link whose signature, place
or expiry does not hold is refused, and nothing in it is trusted before its signature is. Links are
credentials: they go in an address's fragment (never sent in a request, so never in a server's log) and are
never logged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
from dataclasses import dataclass, field

from bot.kernel._model import UserRef

#: Signatures are domain-separated: a link's HMAC can never be mistaken for another use of ``WEB_SECRET``.
_LINK_DOMAIN = b"musbot-web-link/1\n"
#: A link longer than this is not one of ours (names are at most a few hundred bytes).
MAX_LINK_LENGTH = 2048


class LinkRefused(Exception):
    """A credential that does not hold: ``reason`` is for the log and tests, never for the page."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class WebVisitor:
    """Someone the web table knows: who (a :class:`UserRef`) and the place they came for."""

    user: UserRef
    table: str
    """The table's id, or another place a link names (a match to replay)."""
    expires: float
    """When the credential stops being valid (seconds since the epoch)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(secret: bytes, payload: str) -> str:
    return _b64(hmac.new(secret, _LINK_DOMAIN + payload.encode("ascii"), hashlib.sha256).digest())


def sign_link(secret: bytes, user: UserRef, table: str, expires: float) -> str:
    """A link credential for ``user`` at ``table`` (or another place) until ``expires``."""
    body = {"u": user.key, "n": user.name, "l": user.lang, "t": table, "e": int(expires)}
    payload = _b64(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return f"{payload}.{_signature(secret, payload)}"


def check_link(secret: bytes, link: str, table: str, now: float) -> WebVisitor:
    """The visitor a link names, if its signature holds, it is for ``table`` and it has not expired;
    :class:`LinkRefused` otherwise."""
    if not isinstance(link, str) or len(link) > MAX_LINK_LENGTH or link.count(".") != 1:
        raise LinkRefused("not a link")
    payload, signature = link.split(".")
    try:
        payload.encode("ascii")
        signature.encode("ascii")
    except UnicodeEncodeError:
        raise LinkRefused("not a link") from None
    if not hmac.compare_digest(_signature(secret, payload), signature):
        raise LinkRefused("bad signature")
    try:
        body = json.loads(_unb64(payload))
        user = UserRef(str(body["u"]), str(body["n"]), None if body["l"] is None else str(body["l"]))
        linked, expires = str(body["t"]), float(body["e"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise LinkRefused("unreadable payload") from None
    if linked != table:
        raise LinkRefused("another table's link")
    if not math.isfinite(expires) or now > expires:
        raise LinkRefused("expired")
    return WebVisitor(user, table, expires)


def replay_place(table_id: str) -> str:
    """The place a link to replay ``table_id``'s kept match names: never a table's own id (a table id
    holds no ``/``), so a table's link never opens a replay, nor a replay's link a table."""
    return f"r/{table_id}"


@dataclass(frozen=True, slots=True)
class WebLinks:
    """How the core writes an address of the web table for one person: where people reach the server, the
    key that signs, and how long a link lives."""

    base_url: str
    """The server's root as people reach it (``WEB_PUBLIC_URL``), without a trailing slash."""
    secret: bytes
    hours: float
    """How long a link stays valid (``WEB_LINK_HOURS``)."""

    def table(self, user: UserRef, table_id: str, now: float) -> str:
        """The address of ``table_id``'s page for ``user``: a signed link in the fragment."""
        credential = sign_link(self.secret, user, table_id, now + self.hours * 3600)
        return f"{self.base_url}/t/{table_id}#k={credential}"

    def replay(self, viewer: UserRef, table_id: str, now: float) -> str:
        """The address of the replay of ``table_id``'s kept match for ``viewer`` (``/history`` binds it to
        the chat that keeps the match, not to one person: what a replay shows is the chat's history)."""
        place = replay_place(table_id)
        credential = sign_link(self.secret, viewer, place, now + self.hours * 3600)
        return f"{self.base_url}/{place}#k={credential}"

    def page(self, table_id: str) -> str:
        """The address of ``table_id``'s page without a credential: for a Mini App, whose ``initData`` says
        who opens it."""
        return f"{self.base_url}/t/{table_id}"


@dataclass(frozen=True, slots=True)
class WebDoor:
    """How the people of one chat platform open the web table from its chats (each way only where the
    platform has it; none by default). Worked out from the settings alone, so that every worker draws the
    same views for a platform, whether it serves that platform or fires a deadline for it."""

    app: bool = False
    """The platform opens the table's page as an app inside its chats, and the app proves who opens it (a
    Telegram Mini App): the table message and the private hand carry a ``web_app`` button to the page,
    which the platform's adapter shows as it can in each chat (a Mini App's direct link in a group)."""
    on_press: bool = False
    """The group table offers a button whose press answers the presser alone with their own signed link
    (Discord: an ephemeral reply; a link is a credential, never posted in the channel)."""


#: No way to the web table from a platform's chats.
NO_DOOR = WebDoor()


@dataclass
class WebAccess:
    """The web table as the chats offer it: how its links are written, and each chat platform's door to it
    (keyed by the chat keys' prefix: ``tg``, ``dc``), each set by its adapter from the settings."""

    links: WebLinks
    doors: dict[str, WebDoor] = field(default_factory=dict)

    def door(self, chat_key: str) -> WebDoor:
        """The door of the platform ``chat_key`` belongs to (:data:`NO_DOOR` if it has none)."""
        return self.doors.get(chat_key.split(":", 1)[0], NO_DOOR)
