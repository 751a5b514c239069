"""Who is who on the web table, besides the core's signed links (:func:`bot.kernel.check_link`): a Telegram
Mini App's ``initData``, checked as Telegram specifies. Either gives a :class:`bot.kernel.WebVisitor`; the
table then says what they may see (their seat's view, or the public one) and do.

**initData** (Telegram Mini Apps): ``secret = HMAC_SHA256(key="WebAppData", msg=bot_token)``; the hash is
``hex(HMAC_SHA256(key=secret, msg=data_check_string))`` where the data-check string is every other field
``key=value``, sorted by key, joined by newlines. An ``auth_date`` older than the set limit is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import parse_qsl, urlencode

from bot.kernel import LinkRefused, UserRef, WebVisitor

#: initData longer than this is not Telegram's.
MAX_INIT_DATA_LENGTH = 8192
#: The key Telegram derives a Mini App's secret with.
WEB_APP_DATA = b"WebAppData"


def telegram_visitor(init_data: str, bot_token: str, table: str, now: float, max_age: float) -> WebVisitor:
    """The Telegram user a Mini App's ``initData`` names, if its hash holds and its ``auth_date`` is at most
    ``max_age`` seconds old; :class:`LinkRefused` otherwise. The table is ``start_param`` when Telegram gives
    one (the ``startapp`` of the link that opened the app), else ``table``."""
    if not isinstance(init_data, str) or not init_data or len(init_data) > MAX_INIT_DATA_LENGTH:
        raise LinkRefused("no initData")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise LinkRefused("unreadable initData") from None
    fields = dict(pairs)
    if len(fields) != len(pairs) or "hash" not in fields:
        raise LinkRefused("unreadable initData")
    received = fields.pop("hash")
    check_string = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(WEB_APP_DATA, bot_token.encode("utf-8"), hashlib.sha256).digest()
    expected = hmac.new(secret, check_string.encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, received.lower()):
        raise LinkRefused("bad hash")
    try:
        auth_date = int(fields["auth_date"])
        person = json.loads(fields["user"])
        key = f"tg:{int(person['id'])}"
        name = str(person.get("first_name") or person.get("username") or person["id"])[:32]
        lang = person.get("language_code")
    except (KeyError, ValueError, TypeError):
        raise LinkRefused("unreadable initData") from None
    if now - auth_date > max_age:
        raise LinkRefused("old auth_date")
    wanted = fields.get("start_param") or table
    return WebVisitor(UserRef(key, name, lang if isinstance(lang, str) else None), wanted, now + max_age)


def telegram_init_data(bot_token: str, fields: dict[str, str]) -> str:
    """``initData`` signed as Telegram signs it (for tests and the screenshots: a page opened as if by
    Telegram)."""
    check_string = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(WEB_APP_DATA, bot_token.encode("utf-8"), hashlib.sha256).digest()
    digest = hmac.new(secret, check_string.encode("utf-8"), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})
