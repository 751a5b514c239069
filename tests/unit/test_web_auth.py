"""Who is who on the web table: signed links and Telegram's initData, checked as a hostile visitor would
try them (forged, tampered, for another table, expired, old, unreadable)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from adapters.web.auth import telegram_init_data, telegram_visitor
from adapters.web.settings import WebSettings
from bot.kernel import LinkRefused, UserRef, check_link, sign_link

SECRET = b"0123456789abcdef0123456789abcdef"
ANE = UserRef("dc:42", "Ane", "eu")
BOT_TOKEN = "123456:ABC-def_ghi"
NOW = 1_800_000_000.0


def test_a_signed_link_names_its_user_and_table() -> None:
    link = sign_link(SECRET, ANE, "abcd1234", NOW + 60)
    visitor = check_link(SECRET, link, "abcd1234", NOW)
    assert (visitor.user, visitor.table) == (ANE, "abcd1234")


@pytest.mark.parametrize(
    ("mangle", "table", "now", "reason"),
    [
        (lambda link: link, "zzzz9999", NOW, "another table's link"),
        (lambda link: link, "abcd1234", NOW + 61, "expired"),
        (lambda link: link[:-2] + ("AA" if link[-2:] != "AA" else "BB"), "abcd1234", NOW, "bad signature"),
        (lambda link: "x" + link, "abcd1234", NOW, "bad signature"),
        (lambda link: link.replace(".", ".."), "abcd1234", NOW, "not a link"),
        (lambda link: "", "abcd1234", NOW, "not a link"),
        (lambda link: "é." + link.split(".")[1], "abcd1234", NOW, "not a link"),
    ],
)
def test_a_link_that_does_not_hold_is_refused(mangle, table: str, now: float, reason: str) -> None:  # type: ignore[no-untyped-def]
    link = sign_link(SECRET, ANE, "abcd1234", NOW + 60)
    with pytest.raises(LinkRefused) as refused:
        check_link(SECRET, mangle(link), table, now)
    assert refused.value.reason == reason


def test_a_link_signed_with_another_secret_or_rewritten_is_refused() -> None:
    forged = sign_link(b"another secret, not ours at all", ANE, "abcd1234", NOW + 60)
    with pytest.raises(LinkRefused):
        check_link(SECRET, forged, "abcd1234", NOW)
    # Someone else's name put into a real link: the signature no longer holds.
    payload, signature = sign_link(SECRET, ANE, "abcd1234", NOW + 60).split(".")
    import base64

    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["u"] = "dc:666"
    other = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    with pytest.raises(LinkRefused, match="bad signature"):
        check_link(SECRET, f"{other}.{signature}", "abcd1234", NOW)


def init_data(**overrides: str) -> dict[str, str]:
    fields = {
        "auth_date": str(int(NOW) - 30),
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": 279058397, "first_name": "Brais", "language_code": "gl"}),
        "start_param": "abcd1234",
    }
    fields.update(overrides)
    return fields


def test_telegram_init_data_names_the_user_and_the_table_it_was_opened_for() -> None:
    visitor = telegram_visitor(telegram_init_data(BOT_TOKEN, init_data()), BOT_TOKEN, "", NOW, 3600)
    assert (visitor.user.key, visitor.user.name, visitor.user.lang) == ("tg:279058397", "Brais", "gl")
    assert visitor.table == "abcd1234"


def test_init_data_with_a_bad_hash_an_old_date_or_another_bot_is_refused() -> None:
    good = telegram_init_data(BOT_TOKEN, init_data())
    with pytest.raises(LinkRefused, match="bad hash"):  # another bot's initData
        telegram_visitor(good, "999:another-bot", "", NOW, 3600)
    with pytest.raises(LinkRefused, match="bad hash"):  # a field changed after signing
        telegram_visitor(good.replace("abcd1234", "zzzz9999"), BOT_TOKEN, "", NOW, 3600)
    old = telegram_init_data(BOT_TOKEN, init_data(auth_date=str(int(NOW) - 7200)))
    with pytest.raises(LinkRefused, match="old auth_date"):
        telegram_visitor(old, BOT_TOKEN, "", NOW, 3600)
    for garbage in ("", "hash", "a=1&a=2&hash=00", "%%%"):
        with pytest.raises(LinkRefused):
            telegram_visitor(garbage, BOT_TOKEN, "", NOW, 3600)


def test_web_settings_refuse_a_short_secret_and_a_url_without_scheme() -> None:
    with pytest.raises(ValidationError, match="at least 16"):
        WebSettings(secret="short")
    with pytest.raises(ValidationError):
        WebSettings(public_url="mus.example.org")
    ok = WebSettings(public_url="https://mus.example.org/", secret="x" * 32)
    assert ok.base_url() == "https://mus.example.org"
    assert "x" * 32 not in repr(ok)  # a secret never prints
