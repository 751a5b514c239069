"""How the chats lead to the web table (issue 22, "Who is who"), as the core draws it: every worker sets every
platform's door from the settings alone — whichever platforms it serves, a deadline it fires draws another
platform's views too, and they must not flip a button on and off — and the table and the hands carry the
way in only where the platform has one."""

from __future__ import annotations

import io
from typing import Any, cast

import pytest
from pydantic import SecretStr
from service_helpers import ANE, BRAIS, GROUP, Harness, english

from adapters.console.screen.controls import pressable
from adapters.console.table import ConsoleTable
from adapters.runner import web_access
from adapters.telegram.settings import TelegramSettings
from adapters.web.settings import WebSettings
from bot.kernel import Button, ChatRef, Outcome, OutMessage, UserRef, WebAccess, WebDoor

SECRET = SecretStr("doors-secret-0123456789abcdef")
CHANNEL = ChatRef("dc:c5", False, "mus")


def access(public: str | None, *, secret: SecretStr | None = SECRET) -> WebAccess | None:
    return web_access(WebSettings(secret=secret, public_url=public), TelegramSettings())


def test_every_worker_sets_every_platforms_door_from_the_settings_alone() -> None:
    web = access("https://mus.example.org")  # (a process without any platform's token: the same)
    assert web is not None and web.links.base_url == "https://mus.example.org"
    assert web.doors == {"tg": WebDoor(app=True), "dc": WebDoor(on_press=True)}
    lan = access("http://192.168.1.20:8080")
    assert lan is not None and lan.doors == {"tg": WebDoor(), "dc": WebDoor(on_press=True)}  # no app on http
    assert access(None) is None  # a link to where it listens leads nowhere from a phone
    assert access("https://mus.example.org", secret=None) is None  # not served


def ways_in(buttons: list[Button]) -> list[tuple[str, str, str]]:
    return [
        (b.label, b.kind, b.url or b.token.rsplit(".", 1)[-1]) for b in buttons if b.opens or "web" in b.token
    ]


@pytest.mark.parametrize("public", ["https://mus.example.org", None])
async def test_the_table_and_the_hands_carry_the_way_in_where_the_platform_has_one(
    public: str | None,
) -> None:
    h = Harness()
    await english(h, GROUP, CHANNEL)
    h.deps.web = access(public)
    telegram = await h.started(GROUP, ANE, (BRAIS, 1))
    discord = await h.started(CHANNEL, UserRef("dc:u1", "Ane", "en"), (UserRef("dc:u2", "Uxue", "en"), 1))
    page = f"https://mus.example.org/t/{telegram}"
    if public is None:
        assert ways_in(h.on_screen(telegram, "table", GROUP.key)) == []
        assert ways_in(h.on_screen(discord, "table", CHANNEL.key)) == []
        return
    app = ("🃏 Open the table", "web_app", page)
    assert ways_in(h.on_screen(telegram, "table", GROUP.key)) == [app]
    assert ways_in(h.on_screen(telegram, "hand", ANE.key)) == [app]
    assert ways_in(h.on_screen(discord, "table", CHANNEL.key)) == [("🃏 Table", "press", "web")]
    assert ways_in(h.on_screen(discord, "hand", "dc:u1")) == []  # the link comes on a press, to the presser


async def test_a_terminal_lists_no_link_among_the_buttons_it_numbers() -> None:
    """A terminal opens no address: a view that carries one (from a chat's table) still numbers only the
    buttons a key presses, in the line mode and on the full screen."""
    view = OutMessage(
        slot="table",
        text="Ane's turn",
        chat="console:me",
        table="abcdefgh",
        buttons=(
            (Button("Paso", "abcdefgh.1-0.paso"),),
            (Button.link("🃏 Open the table", "https://mus.example.org/t/abcdefgh", web_app=True),),
        ),
    )
    lines = ConsoleTable(cast(Any, None), UserRef("console:me", "Ane", "en"), io.StringIO())
    await lines.show(Outcome(messages=(view,)), draw=False)
    assert [b.label for b in lines.choices()] == ["Paso"]
    assert [b.label for b in pressable([view])] == ["Paso"]
