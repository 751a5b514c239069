"""Who is who on the web table: a signed, expiring link bound to one user and one table, or a Telegram Mini
App's ``initData`` checked as Telegram specifies. Either gives a :class:`Visitor`; the table then says what
they may see (their seat's view, or the public one) and do.

A **link** is ``{payload}.{signature}``: the payload is base64url JSON (user key, name, language, table,
expiry), the signature base64url HMAC-SHA256 of it keyed with ``WEB_SECRET``. It is compared in constant
time; a link whose signature, table or expiry does not hold is refused, and nothing in it is trusted before
its signature is. Links are credentials: they are never logged (the server logs no query string).

**initData** (Telegram Mini Apps): ``secret = HMAC_SHA256(key="WebAppData", msg=bot_token)``; the hash is
``hex(HMAC_SHA256(key=secret, msg=data_check_string))`` where the data-check string is every other field
``key=value``, sorted by key, joined by newlines. An ``auth_date`` older than the set limit is refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from bot.kernel import UserRef

#: Signatures are domain-separated: a link's HMAC can never be mistaken for another use of ``WEB_SECRET``.
_LINK_DOMAIN = b"musbot-web-link/1\n"
#: A link longer than this is not one of ours (names are at most a few hundred bytes).
MAX_LINK_LENGTH = 2048
#: initData longer than this is not Telegram's.
MAX_INIT_DATA_LENGTH = 8192
#: The key Telegram derives a Mini App's secret with.
WEB_APP_DATA = b"WebAppData"


class Refused(Exception):
    """A credential that does not hold: ``reason`` is for the log and tests, never for the page."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Visitor:
    """Someone the server knows: who (a :class:`UserRef`) and the table they came for."""

    user: UserRef
    table: str
    expires: float
    """When the credential stops being valid (seconds since the epoch)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(secret: bytes, payload: str) -> str:
    return _b64(hmac.new(secret, _LINK_DOMAIN + payload.encode("ascii"), hashlib.sha256).digest())


def sign_link(secret: bytes, user: UserRef, table: str, expires: float) -> str:
    """A link credential for ``user`` at ``table`` until ``expires``."""
    body = {"u": user.key, "n": user.name, "l": user.lang, "t": table, "e": int(expires)}
    payload = _b64(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return f"{payload}.{_signature(secret, payload)}"


def check_link(secret: bytes, link: str, table: str, now: float) -> Visitor:
    """The visitor a link names, if its signature holds, it is for ``table`` and it has not expired;
    :class:`Refused` otherwise."""
    if not isinstance(link, str) or len(link) > MAX_LINK_LENGTH or link.count(".") != 1:
        raise Refused("not a link")
    payload, signature = link.split(".")
    try:
        payload.encode("ascii")
        signature.encode("ascii")
    except UnicodeEncodeError:
        raise Refused("not a link") from None
    if not hmac.compare_digest(_signature(secret, payload), signature):
        raise Refused("bad signature")
    try:
        body = json.loads(_unb64(payload))
        user = UserRef(str(body["u"]), str(body["n"]), None if body["l"] is None else str(body["l"]))
        linked, expires = str(body["t"]), float(body["e"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise Refused("unreadable payload") from None
    if linked != table:
        raise Refused("another table's link")
    if not math.isfinite(expires) or now > expires:
        raise Refused("expired")
    return Visitor(user, table, expires)


def telegram_visitor(init_data: str, bot_token: str, table: str, now: float, max_age: float) -> Visitor:
    """The Telegram user a Mini App's ``initData`` names, if its hash holds and its ``auth_date`` is at most
    ``max_age`` seconds old; :class:`Refused` otherwise. The table is ``start_param`` when Telegram gives one
    (the ``startapp`` of the link that opened the app), else ``table``."""
    if not isinstance(init_data, str) or not init_data or len(init_data) > MAX_INIT_DATA_LENGTH:
        raise Refused("no initData")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise Refused("unreadable initData") from None
    fields = dict(pairs)
    if len(fields) != len(pairs) or "hash" not in fields:
        raise Refused("unreadable initData")
    received = fields.pop("hash")
    check_string = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(WEB_APP_DATA, bot_token.encode("utf-8"), hashlib.sha256).digest()
    expected = hmac.new(secret, check_string.encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, received.lower()):
        raise Refused("bad hash")
    try:
        auth_date = int(fields["auth_date"])
        person = json.loads(fields["user"])
        key = f"tg:{int(person['id'])}"
        name = str(person.get("first_name") or person.get("username") or person["id"])[:32]
        lang = person.get("language_code")
    except (KeyError, ValueError, TypeError):
        raise Refused("unreadable initData") from None
    if now - auth_date > max_age:
        raise Refused("old auth_date")
    wanted = fields.get("start_param") or table
    return Visitor(UserRef(key, name, lang if isinstance(lang, str) else None), wanted, now + max_age)


def telegram_init_data(bot_token: str, fields: dict[str, str]) -> str:
    """``initData`` signed as Telegram signs it (for tests and the screenshots: a page opened as if by
    Telegram)."""
    check_string = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(WEB_APP_DATA, bot_token.encode("utf-8"), hashlib.sha256).digest()
    digest = hmac.new(secret, check_string.encode("utf-8"), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})
