"""Tests of the fake Discord: raw HTTP requests, and the real discord.py client against it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import discord
import pytest
from discord import app_commands
from discord.gateway import DiscordWebSocket
from discord.http import Route

from .fake_discord import PERMISSION_BITS, Call, FakeChannel, FakeDiscord, FakeGuild, FakeUser, StoredMessage
from .fake_discord_spec import DiscordSpec, check_commands

TOKEN = "MTE5MTE2ODkwNTE2ODI4OTc5Mg.fake.discord-token"

JSON = dict[str, Any]


# ---------------------------------------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(token=TOKEN) as fake:
        yield fake
    leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert leftover == [], leftover


@pytest.fixture
def pointed(dc: FakeDiscord) -> Iterator[FakeDiscord]:
    """discord.py pointed at the fake; ``Route.BASE`` and ``DEFAULT_GATEWAY`` restored afterwards."""
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    with dc.point_discord_py():
        assert dc.api_base == Route.BASE
        yield dc
    assert (base, gateway) == (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture(autouse=True)
def no_discord_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """discord.py logs no error (the e2e conftest already fails on any record with a traceback)."""
    caplog.set_level(logging.INFO, logger="discord")
    yield
    errors = [
        r for r in caplog.get_records("call") if r.name.startswith("discord") and r.levelno >= logging.ERROR
    ]
    assert errors == [], [r.getMessage() for r in errors]


@pytest.fixture
def club(dc: FakeDiscord) -> tuple[FakeGuild, FakeChannel, FakeUser]:
    guild = dc.add_guild("Mus club", locale="es-ES", community=True)
    channel = dc.add_channel(guild, "mus")
    ane = dc.add_user("Ane", locale="es-ES", guilds=[guild])
    return guild, channel, ane


async def api(
    http: aiohttp.ClientSession,
    dc: FakeDiscord,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = TOKEN,
    params: dict[str, str] | None = None,
) -> tuple[int, Any, Any]:
    """A raw request like discord.py makes it: ``Authorization: Bot <token>``, a JSON body."""
    headers = {"Authorization": f"Bot {token}"} if token is not None else {}
    kwargs: dict[str, Any] = {"headers": headers, "params": params}
    if body is not None:
        kwargs["json"] = body
    async with http.request(method, dc.api_base + path, **kwargs) as resp:
        data = await resp.json() if resp.content_type == "application/json" else None
        return resp.status, data, resp.headers


def row(*buttons: JSON) -> JSON:
    return {"type": 1, "components": list(buttons)}


def button(custom_id: str, label: str = "Go") -> JSON:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


def errors_at(body: JSON, *path: str | int) -> list[str]:
    """The error codes Discord reports at ``path`` of ``errors``."""
    node = body["errors"]
    for key in path:
        node = node[str(key)]
    return [e["code"] for e in node["_errors"]]


def assert_answers_follow_spec(dc: FakeDiscord) -> None:
    """Every 2xx and 429 answer of the fake has the shape the spec documents for it.

    (Error bodies are left out: the spec types field error codes as integers, Discord sends strings.)
    """
    spec = DiscordSpec.load()
    for call in dc.calls:
        if call.route_template is None or not (call.ok or call.status == 429):
            continue
        problems = spec.response_errors(call.method, call.route_template, call.status or 0, call.response)
        assert problems == [], (call, problems)


class Press(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=r"(?P<game>[a-z]+)\.(?P<n>\d+)\.mus"
):
    """A persistent button whose state lives in its custom id."""

    def __init__(self, game: str, n: int) -> None:
        super().__init__(discord.ui.Button(label=f"Go {n}", custom_id=f"{game}.{n}.mus"))
        self.game, self.n = game, n

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Press:
        return cls(match["game"], int(match["n"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"pressed {self.game} {self.n}", ephemeral=True)


class MusBot(discord.AutoShardedClient):
    """A small bot: ``/mus ping`` (a message with a persistent button), ``/mus slow`` (defer + followup)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(intents=discord.Intents.default(), guild_ready_timeout=0.05, **options)
        self.tree = app_commands.CommandTree(self)
        self.responses: list[discord.InteractionCallbackResponse[Any]] = []
        group = app_commands.Group(name="mus", description="Mus a 8 reyes")

        @group.command(name="ping", description="Answer with a button")
        async def ping(interaction: discord.Interaction, full: bool = False) -> None:
            view = discord.ui.View(timeout=None)
            view.add_item(Press("abc", 1))
            response = await interaction.response.send_message(f"pong full={full}", view=view)
            self.responses.append(response)

        @group.command(name="slow", description="Think first")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await interaction.followup.send("done thinking", ephemeral=True)

        self.tree.add_command(group)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(Press)
        await self.tree.sync()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """No 5 s pause between the shards' IDENTIFYs (the fake has no identify rate limit)."""


@contextlib.asynccontextmanager
async def running(bot: discord.Client) -> AsyncIterator[discord.Client]:
    """The bot logged in and connected (ready); closed and awaited afterwards."""
    task = asyncio.create_task(bot.start(TOKEN))
    try:
        ready = asyncio.create_task(bot.wait_until_ready())
        done, _ = await asyncio.wait({ready, task}, timeout=5.0, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if task.done():
                task.result()
            raise AssertionError("the bot did not get ready within 5 s")
        yield bot
    finally:
        await bot.close()
        await asyncio.wait_for(task, 5.0)


# ---------------------------------------------------------------------------------------------------------
# Raw HTTP: routes, auth, bodies
# ---------------------------------------------------------------------------------------------------------


async def test_unknown_route_and_method_are_rejected(dc: FakeDiscord, http: aiohttp.ClientSession) -> None:
    status, body, _ = await api(http, dc, "GET", "/no/such/route")
    assert (status, body) == (404, {"message": "404: Not Found", "code": 0})
    status, body, _ = await api(http, dc, "PUT", "/users/@me")
    assert (status, body["message"]) == (405, "405: Method Not Allowed")
    async with http.get(f"http://127.0.0.1:{dc.port}/api/v9/users/@me") as resp:
        assert resp.status == 404
    assert [c.status for c in dc.rejected()] == [404, 405, 404]
    assert all(c.rejected and not c.injected for c in dc.rejected())


async def test_bot_token_is_checked(dc: FakeDiscord, http: aiohttp.ClientSession) -> None:
    status, body, headers = await api(http, dc, "GET", "/users/@me")
    assert status == 200 and body["id"] == str(dc.bot_user.id) and body["bot"] is True
    assert headers["Content-Type"] == "application/json"  # exactly: discord.py compares it as a string
    assert headers["X-RateLimit-Remaining"] != "0" and "X-RateLimit-Bucket" in headers
    status, body, _ = await api(http, dc, "GET", "/users/@me", token="wrong")
    assert (status, body) == (401, {"message": "401: Unauthorized", "code": 0})
    status, _, _ = await api(http, dc, "GET", "/users/@me", token=None)
    assert status == 401
    assert [c.status for c in dc.rejected()] == [401, 401]


async def test_path_parameters_must_be_snowflakes(dc: FakeDiscord, http: aiohttp.ClientSession) -> None:
    status, body, _ = await api(http, dc, "GET", "/channels/general")
    assert (status, body["code"]) == (400, 50035)
    assert errors_at(body, "channel_id") == ["NUMBER_TYPE_COERCE"]


@pytest.mark.parametrize(
    ("payload", "path", "code"),
    [
        ({"content": "x" * 2001}, ("content",), "BASE_TYPE_MAX_LENGTH"),
        ({"content": "rows", "components": [row(button(f"b{i}")) for i in range(6)]}, ("components",), None),
        (
            {"content": "six", "components": [row(*(button(f"b{i}") for i in range(6)))]},
            ("components", 0, "components"),
            None,
        ),
        (
            {"content": "long id", "components": [row(button("x" * 101))]},
            ("components", 0, "components", 0, "custom_id"),
            None,
        ),
        (
            {"content": "no style", "components": [row({"type": 2, "label": "a", "custom_id": "a"})]},
            ("components", 0, "components", 0, "style"),
            "BASE_TYPE_REQUIRED",
        ),
        (
            {"content": "label", "components": [row(button("a", "y" * 81))]},
            ("components", 0, "components", 0, "label"),
            "BASE_TYPE_MAX_LENGTH",
        ),
        (
            {"content": "twice", "components": [row(button("a")), row(button("a"))]},
            ("components", 1, "components", 0, "custom_id"),
            "COMPONENT_CUSTOM_ID_DUPLICATED",
        ),
        (
            {
                "content": "select and button",
                "components": [
                    row({"type": 3, "custom_id": "s", "options": [{"label": "a", "value": "a"}]}, button("b"))
                ],
            },
            ("components", 0, "components"),
            "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
        ),
        (
            {
                "content": "26",
                "components": [
                    row(
                        {
                            "type": 3,
                            "custom_id": "s",
                            "options": [{"label": str(i), "value": str(i)} for i in range(26)],
                        }
                    )
                ],
            },
            ("components", 0, "components", 0, "options"),
            None,
        ),
        ({"content": "ephemeral", "flags": 64}, ("flags",), "MESSAGE_FLAGS_INVALID"),
        ({"content": 5}, ("content",), "BASE_TYPE_STRING"),
    ],
    ids=[
        "content-2001",
        "6-rows",
        "6-buttons",
        "custom-id-101",
        "missing-style",
        "label-81",
        "duplicate-id",
        "select-not-alone",
        "26-options",
        "ephemeral-channel-message",
        "content-type",
    ],
)
async def test_bad_message_bodies_are_invalid_form_body(
    dc: FakeDiscord,
    http: aiohttp.ClientSession,
    club: tuple[FakeGuild, FakeChannel, FakeUser],
    payload: JSON,
    path: tuple[str | int, ...],
    code: str | None,
) -> None:
    _, channel, _ = club
    status, body, _ = await api(http, dc, "POST", f"/channels/{channel.id}/messages", payload)
    assert (status, body["code"], body["message"]) == (400, 50035, "Invalid Form Body"), body
    codes = errors_at(body, *path)
    assert code is None or code in codes, body
    assert dc.channel_messages(channel) == []
    [call] = dc.rejected()
    assert (call.status, call.code, call.route_template) == (400, 50035, "/channels/{channel_id}/messages")


async def test_empty_message_and_unknown_channel(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    _, channel, _ = club
    status, body, _ = await api(http, dc, "POST", f"/channels/{channel.id}/messages", {"content": ""})
    assert (status, body) == (400, {"message": "Cannot send an empty message", "code": 50006})
    status, body, _ = await api(http, dc, "POST", "/channels/123/messages", {"content": "hi"})
    assert (status, body["code"]) == (404, 10003)


async def test_messages_are_kept_like_discord(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    _, channel, _ = club
    base = f"/channels/{channel.id}/messages"
    select = {
        "type": 3,
        "custom_id": "pick",
        "options": [{"label": "Oros", "value": "o"}, {"label": "Copas", "value": "c"}],
    }
    status, sent, _ = await api(
        http, dc, "POST", base, {"content": "hello", "components": [row(button("a", "A")), row(select)]}
    )
    assert status == 200 and sent["content"] == "hello" and sent["author"]["id"] == str(dc.bot_user.id)
    [message] = dc.channel_messages(channel)
    assert message.buttons() == [("A", "a", False)]
    assert message.select_options() == [("Oros", "o"), ("Copas", "c")]
    assert message.id == int(sent["id"]) and message.edits == 0 and not message.ephemeral
    status, _, _ = await api(http, dc, "PATCH", f"{base}/{message.id}", {"content": "edited"})
    assert status == 200 and message.buttons() == [("A", "a", False)]  # no components: kept
    status, _, _ = await api(http, dc, "PATCH", f"{base}/{message.id}", {"components": []})
    assert status == 200 and message.components == [] and message.content == "edited"
    assert (message.edits, message.history) == (2, ["hello", "edited", "edited"])
    status, got, _ = await api(http, dc, "GET", f"{base}/{message.id}")
    assert status == 200 and got["content"] == "edited" and got["edited_timestamp"] is not None
    status, _, _ = await api(http, dc, "DELETE", f"{base}/{message.id}")
    assert status == 204 and dc.channel_messages(channel) == []
    for method in ("GET", "PATCH"):
        status, body, _ = await api(
            http, dc, method, f"{base}/{message.id}", {"content": "x"} if method == "PATCH" else None
        )
        assert (status, body["code"], body["message"]) == (404, 10008, "Unknown Message")
    _, second, _ = await api(http, dc, "POST", base, {"content": "second"})
    assert int(second["id"]) > message.id
    assert_answers_follow_spec(dc)


async def test_dm_channels_and_closed_dms(dc: FakeDiscord, http: aiohttp.ClientSession) -> None:
    open_user = dc.add_user("Ane")
    closed_user = dc.add_user("Beñat", dms_open=False)
    _, first, _ = await api(http, dc, "POST", "/users/@me/channels", {"recipient_id": str(open_user.id)})
    _, again, _ = await api(http, dc, "POST", "/users/@me/channels", {"recipient_id": str(open_user.id)})
    assert first["id"] == again["id"] == str(dc.dm_channel(open_user).id) and first["type"] == 1
    status, _, _ = await api(http, dc, "POST", f"/channels/{first['id']}/messages", {"content": "kaixo"})
    assert status == 200 and [m.content for m in dc.dm_messages(open_user)] == ["kaixo"]
    _, closed, _ = await api(http, dc, "POST", "/users/@me/channels", {"recipient_id": str(closed_user.id)})
    status, body, _ = await api(http, dc, "POST", f"/channels/{closed['id']}/messages", {"content": "kaixo"})
    assert (status, body) == (403, {"message": "Cannot send messages to this user", "code": 50007})
    assert dc.rejected() == []  # a closed DM is the user's choice, not a bad request
    assert [c.code for c in dc.calls if c.rejected] == [50007]
    status, body, _ = await api(http, dc, "POST", "/users/@me/channels", {})
    assert status == 400 and errors_at(body, "recipient_id") == ["BASE_TYPE_REQUIRED"]
    assert_answers_follow_spec(dc)


async def test_injected_429_has_discords_shape(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    _, channel, _ = club
    dc.inject_429("POST", r"^/channels/\d+/messages$", count=1, retry_after=0.25)
    status, body, headers = await api(http, dc, "POST", f"/channels/{channel.id}/messages", {"content": "hi"})
    assert (status, body) == (
        429,
        {"message": "You are being rate limited.", "code": 0, "retry_after": 0.25, "global": False},
    )
    assert headers["Retry-After"] == "1" and headers["X-RateLimit-Remaining"] == "0"
    assert headers["X-RateLimit-Reset-After"] == "0.250" and headers["X-RateLimit-Scope"] == "user"
    assert "X-RateLimit-Bucket" in headers and "Via" in headers
    status, _, _ = await api(http, dc, "POST", f"/channels/{channel.id}/messages", {"content": "hi"})
    assert status == 200
    [limited, sent] = dc.calls
    assert (limited.injected, limited.rejected, sent.injected) == (True, False, False)
    assert dc.rejected() == []
    dc.inject_429(global_=True, retry_after=0.5)
    status, body, headers = await api(http, dc, "GET", "/users/@me")
    assert status == 429 and body["global"] is True and headers["X-RateLimit-Global"] == "true"
    assert_answers_follow_spec(dc)


async def test_application_commands_are_validated_and_kept(
    dc: FakeDiscord, http: aiohttp.ClientSession
) -> None:
    path = f"/applications/{dc.application_id}/commands"
    good = {
        "name": "mus",
        "description": "Mus a 8 reyes",
        "description_localizations": {"es-ES": "Mus a 8 reyes", "en-GB": "Mus with 8 kings"},
        "options": [{"type": 1, "name": "newgame", "description": "New game"}],
    }
    status, stored, _ = await api(http, dc, "PUT", path, [good])
    assert status == 200 and [c["name"] for c in dc.commands()] == ["mus"]
    status, again, _ = await api(http, dc, "PUT", path, [good, {**good, "name": "stats"}])
    assert again[0]["id"] == stored[0]["id"] and again[1]["id"] != stored[0]["id"]  # ids kept by name
    status, listed, _ = await api(http, dc, "GET", path)
    assert [c["name"] for c in listed] == ["mus", "stats"]
    bad_cases: list[tuple[JSON, tuple[str | int, ...]]] = [
        ({**good, "name": "Mus"}, (0, "name")),
        ({**good, "name": "mus game"}, (0, "name")),
        ({**good, "description": ""}, (0, "description")),
        ({**good, "description": "d" * 101}, (0, "description")),
        ({**good, "name_localizations": {"es": "mus"}}, (0, "name_localizations", "es")),
        (
            {**good, "options": [{"type": 3, "name": f"o{i}", "description": "x"} for i in range(26)]},
            (0, "options"),
        ),
    ]
    for command, where in bad_cases:
        status, body, _ = await api(http, dc, "PUT", path, [command])
        assert (status, body["code"]) == (400, 50035), command
        assert errors_at(body, *where), body
    assert len(dc.rejected()) == len(bad_cases)
    assert [c["name"] for c in dc.commands()] == ["mus", "stats"]
    status, body, _ = await api(http, dc, "PUT", "/applications/1/commands", [good])
    assert (status, body["code"]) == (403, 50001)
    assert check_commands([good], DiscordSpec.load().locales) == []
    assert_answers_follow_spec(dc)


# ---------------------------------------------------------------------------------------------------------
# Raw HTTP: interactions
# ---------------------------------------------------------------------------------------------------------


def callback_path(inter: Any) -> str:
    return f"/interactions/{inter.id}/{inter.token}/callback"


async def test_callback_once_and_in_time(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    _, channel, ane = club
    inter = dc.slash(ane, channel, "mus", "ping", check_registered=False)
    assert not inter.delivered  # no bot connected
    payload = inter.payload
    assert payload["member"]["user"]["id"] == str(ane.id) and payload["locale"] == "es-ES"
    assert (payload["guild_locale"], payload["context"], payload["version"]) == ("es-ES", 0, 1)
    assert payload["data"]["options"] == [{"name": "ping", "type": 1, "options": []}]
    answer = {"type": 4, "data": {"content": "pong", "components": [row(button("abc.1.mus"))]}}
    status, body, _ = await api(
        http, dc, "POST", callback_path(inter), answer, token=None, params={"with_response": "1"}
    )
    assert status == 200, body
    assert inter.response is not None
    assert body["interaction"]["response_message_id"] == str(inter.response.id)
    assert body["resource"]["type"] == 4 and body["resource"]["message"]["content"] == "pong"
    assert (inter.answered, inter.callback_type, inter.ephemeral) == (True, 4, False)
    assert inter.answered_after is not None and inter.answered_after < 1
    assert dc.channel_messages(channel) == [inter.response]
    status, body, _ = await api(http, dc, "POST", callback_path(inter), answer, token=None)
    assert (status, body) == (400, {"message": "Interaction has already been acknowledged.", "code": 40060})
    assert [c.code for c in dc.rejected()] == [40060]
    assert_answers_follow_spec(dc)


async def test_callback_after_the_timeout_is_unknown(
    http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser], dc: FakeDiscord
) -> None:
    _, channel, ane = club
    dc.interaction_timeout = 0.05
    inter = dc.slash(ane, channel, "mus", "ping", check_registered=False)
    await asyncio.sleep(0.1)
    status, body, _ = await api(http, dc, "POST", callback_path(inter), {"type": 5}, token=None)
    assert (status, body) == (404, {"message": "Unknown interaction", "code": 10062})
    assert not inter.answered and inter.late_callbacks == 1
    status, body, _ = await api(http, dc, "POST", "/interactions/1/nope/callback", {"type": 5}, token=None)
    assert (status, body["code"]) == (404, 10062)


async def test_deferred_answer_followups_and_webhook_edits(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    _, channel, ane = club
    inter = dc.slash(ane, channel, "mus", "ping", check_registered=False)
    hook = f"/webhooks/{dc.application_id}/{inter.token}"
    status, body, _ = await api(http, dc, "POST", hook, {"content": "too early"}, token=None)
    assert (status, body["code"]) == (404, 10015)
    status, body, _ = await api(
        http,
        dc,
        "POST",
        callback_path(inter),
        {"type": 5, "data": {"flags": 64}},
        token=None,
        params={"with_response": "1"},
    )
    assert status == 200 and body["interaction"]["response_message_loading"] is True
    thinking = inter.response
    assert thinking is not None and thinking.loading and thinking.ephemeral_for == ane.id
    status, _, _ = await api(
        http, dc, "PATCH", f"{hook}/messages/@original", {"content": "ready"}, token=None
    )
    assert status == 200 and not thinking.loading and thinking.content == "ready" and thinking.edits == 0
    status, sent, _ = await api(
        http, dc, "POST", hook, {"content": "for everyone"}, token=None, params={"wait": "true"}
    )
    assert status == 200 and sent["content"] == "for everyone"
    assert [m.content for m in dc.channel_messages(channel)] == ["for everyone"]
    assert [m.content for m in dc.ephemerals(ane)] == ["ready"]
    status, _, _ = await api(
        http, dc, "PATCH", f"{hook}/messages/{sent['id']}", {"content": "edited"}, token=None
    )
    assert status == 200 and dc.channel_messages(channel)[0].edits == 1
    # An ephemeral message is not reachable through the channel routes.
    status, body, _ = await api(
        http, dc, "PATCH", f"/channels/{channel.id}/messages/{thinking.id}", {"content": "x"}
    )
    assert (status, body["code"]) == (404, 10008)
    status, _, _ = await api(http, dc, "DELETE", f"{hook}/messages/@original", token=None)
    assert status == 204 and dc.ephemerals(ane) == []
    dc.token_lifetime = 0.0
    status, body, _ = await api(http, dc, "POST", hook, {"content": "late"}, token=None)
    assert (status, body["code"]) == (401, 50027)
    assert [c.code for c in dc.rejected()] == [10015, 10008, 50027]
    assert_answers_follow_spec(dc)


async def test_component_presses_and_updates(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    guild, channel, ane = club
    other = dc.add_user("Other", guilds=[guild])
    slash = dc.slash(ane, channel, "mus", "ping", check_registered=False)
    answer = {
        "type": 4,
        "data": {"content": "hand", "flags": 64, "components": [row(button("pick.1"), button("pick.2"))]},
    }
    status, _, _ = await api(http, dc, "POST", callback_path(slash), answer, token=None)
    assert status == 204  # without with_response
    hand = slash.response
    assert hand is not None and hand.ephemeral_for == ane.id and dc.channel_messages(channel) == []
    with pytest.raises(ValueError, match="cannot see"):
        dc.press(other, hand, "pick.1")
    press = dc.press(ane, hand, "pick.1")
    payload = press.payload
    assert payload["type"] == 3 and payload["data"] == {"custom_id": "pick.1", "component_type": 2}
    assert payload["message"]["id"] == str(hand.id) and payload["message"]["flags"] & 64
    update = {"type": 7, "data": {"content": "picked 1", "components": [row(button("pick.2"))]}}
    status, body, _ = await api(
        http, dc, "POST", callback_path(press), update, token=None, params={"with_response": "1"}
    )
    assert status == 200 and body["resource"]["type"] == 7
    assert (press.callback_type, press.response, press.ephemeral) == (7, hand, True)
    assert hand.content == "picked 1" and hand.buttons() == [("Go", "pick.2", False)] and hand.edits == 1
    forged = dc.press(ane, hand, "not.on.the.message")
    status, _, _ = await api(http, dc, "POST", callback_path(forged), {"type": 6}, token=None)
    assert status == 204 and forged.callback_type == 6 and hand.content == "picked 1"
    slash_update = dc.slash(ane, channel, "mus", "ping", check_registered=False)
    status, body, _ = await api(
        http, dc, "POST", callback_path(slash_update), {"type": 7, "data": {"content": "x"}}, token=None
    )
    assert status == 400 and errors_at(body, "type") == ["INTERACTION_CALLBACK_TYPE_INVALID"]
    modal = {
        "type": 9,
        "data": {
            "custom_id": "bet",
            "title": "Bet",
            "components": [row({"type": 4, "custom_id": "amount", "style": 1, "label": "Amount"})],
        },
    }
    status, _, _ = await api(http, dc, "POST", callback_path(slash_update), modal, token=None)
    assert status == 204 and slash_update.modal is not None
    submitted = dc.submit_modal(ane, slash_update, {"amount": "5"})
    assert submitted.payload["data"]["components"][0]["components"][0]["value"] == "5"
    assert_answers_follow_spec(dc)


# ---------------------------------------------------------------------------------------------------------
# The real discord.py client
# ---------------------------------------------------------------------------------------------------------


async def test_discord_py_logs_in_syncs_and_answers(
    pointed: FakeDiscord, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    dc = pointed
    guild, channel, ane = club
    bot = MusBot()
    async with running(bot):
        [session] = dc.live_sessions()
        assert session.shard == (0, 1) and session.guild_ids == [guild.id]
        assert session.intents == discord.Intents.default().value and session.compress == "zlib-stream"
        assert [g.id for g in bot.guilds] == [guild.id]
        [command] = dc.commands()
        assert command["name"] == "mus" and [o["name"] for o in command["options"]] == ["ping", "slow"]

        inter = await dc.wait_answered(dc.slash(ane, channel, "mus", "ping", options={"full": True}))
        assert inter.callback_type == 4 and inter.response is not None
        assert inter.response.content == "pong full=True"
        assert inter.response.buttons() == [("Go 1", "abc.1.mus", False)]
        # The callback reaches the fake before discord.py hands its response back to the command.
        [response] = await dc.wait_for(lambda: bot.responses)
        assert response.message_id == inter.response.id  # discord.py stores views under this id
        assert isinstance(response.resource, discord.InteractionMessage)

        press = await dc.wait_answered(dc.press(ane, inter.response, "abc.1.mus"))
        assert press.callback_type == 4 and press.ephemeral
        assert [m.content for m in dc.ephemerals(ane)] == ["pressed abc 1"]
        assert dc.channel_messages(channel) == [inter.response]

        slow = await dc.wait_answered(dc.slash(ane, channel, "mus", "slow"))
        await dc.wait_for(lambda: slow.followups)
        assert slow.callback_type == 5 and slow.response is slow.followups[0]
        assert slow.response.content == "done thinking" and not slow.response.loading and slow.ephemeral

        dm = await dc.wait_answered(dc.slash(ane, dc.dm_channel(ane), "mus", "ping"))
        assert "user" in dm.payload and "member" not in dm.payload and dm.payload["context"] == 1
        assert [m.content for m in dc.dm_messages(ane)] == ["pong full=False"]
    assert session.closed and not session.resumable and session.close_code == 1000
    assert [c.route_template for c in dc.calls[:4]] == [
        "/users/@me",
        "/oauth2/applications/@me",
        "/applications/{application_id}/commands",
        "/gateway/bot",
    ]
    assert dc.rejected() == []
    assert_answers_follow_spec(dc)


async def test_press_after_a_restart(
    pointed: FakeDiscord, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    dc = pointed
    _, channel, ane = club
    async with running(MusBot()):
        inter = await dc.wait_answered(dc.slash(ane, channel, "mus", "ping"))
    message = inter.response
    assert message is not None
    lost = dc.press(ane, message, "abc.1.mus")
    assert not lost.delivered  # nobody connected: Discord would say "This interaction failed"
    async with running(MusBot()):
        press = await dc.wait_answered(dc.press(ane, message, "abc.1.mus"))
        assert press.ephemeral and press.response is not None and press.response.content == "pressed abc 1"
    assert [s.identified and s.closed for s in dc.sessions] == [True, True]
    assert dc.rejected() == []


async def test_discord_py_ignores_a_dynamic_id_missing_from_the_message(
    pointed: FakeDiscord, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    """discord.py rebuilds the view from the interaction's message: an id not on it reaches no DynamicItem."""
    dc = pointed
    _, channel, ane = club
    async with running(MusBot()):
        inter = await dc.wait_answered(dc.slash(ane, channel, "mus", "ping"))
        assert inter.response is not None
        forged = dc.press(ane, inter.response, "abc.2.mus")  # matches the template, not on the message
        await asyncio.sleep(0.2)
        assert forged.delivered and not forged.answered
    assert dc.rejected() == []


async def test_discord_py_waits_out_an_injected_429(
    pointed: FakeDiscord, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    dc = pointed
    _, channel, _ = club
    async with running(MusBot()) as bot:
        text_channel = bot.get_channel(channel.id)
        assert isinstance(text_channel, discord.TextChannel)
        dc.inject_429("POST", r"^/channels/\d+/messages$", retry_after=0.2)
        started = time.monotonic()
        sent = await asyncio.wait_for(text_channel.send("after the limit"), 5.0)
        assert time.monotonic() - started >= 0.2
    assert [m.content for m in dc.channel_messages(channel)] == ["after the limit"]
    assert sent.id == dc.channel_messages(channel)[0].id
    posts = dc.find_calls("POST", "/channels/{channel_id}/messages")
    assert [(c.status, c.injected) for c in posts] == [(429, True), (200, False)]
    assert dc.rejected() == []


class BetModal(discord.ui.Modal, title="Bet"):
    """A modal with one text input."""

    amount: discord.ui.TextInput[BetModal] = discord.ui.TextInput(
        label="Amount", custom_id="amount", max_length=3
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"bet {self.amount.value}", ephemeral=True)


class TourBot(MusBot):
    """MusBot plus ``/mus tour``: the everyday interaction calls of discord.py, one after the other."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        group = self.tree.get_command("mus")
        assert isinstance(group, app_commands.Group)

        @group.command(name="tour", description="Edit, follow up, update, pick")
        async def tour(interaction: discord.Interaction) -> None:
            view = discord.ui.View(timeout=None)  # a timeout would leave its task running after close()
            select = discord.ui.Select[discord.ui.View](
                custom_id="suit",
                options=[
                    discord.SelectOption(label="Oros", value="o"),
                    discord.SelectOption(label="Copas", value="c"),
                ],
            )
            update = discord.ui.Button[discord.ui.View](label="Update", custom_id="update")

            async def picked(inter: discord.Interaction) -> None:
                await inter.response.defer()  # type 6 on a component
                await inter.edit_original_response(content=f"picked {select.values}")

            async def updated(inter: discord.Interaction) -> None:
                await inter.response.edit_message(content="updated", view=None)

            select.callback = picked  # type: ignore[method-assign,assignment]
            update.callback = updated  # type: ignore[method-assign,assignment]
            view.add_item(select)
            view.add_item(update)
            await interaction.response.send_message("first", view=view)
            await interaction.edit_original_response(content="second")
            note = await interaction.followup.send("third", ephemeral=True, wait=True)
            await note.edit(content="third edited")

        @group.command(name="bet", description="Open a modal")
        async def bet(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(BetModal())


async def test_discord_py_everyday_calls_fit_the_spec(
    pointed: FakeDiscord, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    dc = pointed
    guild, channel, ane = club
    closed = dc.add_user("Closed", dms_open=False, guilds=[guild])
    async with running(TourBot()) as bot:
        # Interactions: edit the original, a followup, a select answered with defer + edit, a button update.
        tour = await dc.wait_answered(dc.slash(ane, channel, "mus", "tour"))
        await dc.wait_for(lambda: tour.followups and tour.followups[0].edits)
        first = tour.response
        assert first is not None and first.history == ["first", "second"]
        assert [m.content for m in dc.ephemerals(ane)] == ["third edited"]
        with pytest.raises(ValueError, match="not a valid choice"):
            dc.choose(ane, first, "suit", ["x"])
        pick = await dc.wait_answered(dc.choose(ane, first, "suit", ["c"]))
        await dc.wait_for(lambda: first.content == "picked ['c']")
        assert pick.callback_type == 6
        update = await dc.wait_answered(dc.press(ane, first, "update"))
        assert update.callback_type == 7 and first.content == "updated" and first.components == []

        # A modal, and its submission.
        opened = await dc.wait_answered(dc.slash(ane, channel, "mus", "bet"))
        assert opened.callback_type == 9 and opened.modal is not None and opened.modal["title"] == "Bet"
        submitted = await dc.wait_answered(dc.submit_modal(ane, opened, {"amount": "5"}))
        assert (
            submitted.response is not None and submitted.response.content == "bet 5" and submitted.ephemeral
        )

        # Plain REST: send with an embed, reply, edit, a file, typing, fetches, DMs, delete.
        text = bot.get_channel(channel.id)
        assert isinstance(text, discord.TextChannel)
        sent = await text.send("hello", embed=discord.Embed(title="Mus", description="8 reyes"))
        reply = await sent.reply("a reply", mention_author=False)
        await sent.edit(content="hello again")
        with_file = await text.send("a file", file=discord.File(io.BytesIO(b"abc"), filename="cards.txt"))
        async with text.typing():
            pass
        assert (await text.fetch_message(sent.id)).content == "hello again"
        assert (await bot.fetch_user(ane.id)).name == "ane"
        assert (await bot.fetch_channel(channel.id)).id == channel.id
        fetched = await bot.fetch_guild(guild.id)
        assert fetched.preferred_locale == discord.Locale.spain_spanish
        assert (await fetched.fetch_member(ane.id)).id == ane.id
        discord_user = await bot.fetch_user(ane.id)
        await discord_user.send("a DM")
        with pytest.raises(discord.Forbidden) as refused:
            await (await bot.fetch_user(closed.id)).send("a DM")
        assert refused.value.code == 50007
        await reply.delete()
        assert [m.content for m in dc.dm_messages(ane)] == ["a DM"]
        assert [m.content for m in dc.channel_messages(channel)] == ["updated", "hello again", "a file"]
        assert dc.messages[with_file.id].attachments[0]["filename"] == "cards.txt"
    assert dc.rejected() == []
    assert_answers_follow_spec(dc)


async def test_two_shards_each_get_their_guilds(pointed: FakeDiscord) -> None:
    dc = pointed
    guilds = [dc.add_guild(f"Club {i}") for i in range(4)]
    channels = [dc.add_channel(g, "mus") for g in guilds]
    ane = dc.add_user("Ane", guilds=guilds)
    async with running(MusBot(shard_count=2)) as bot:
        sessions = sorted(dc.live_sessions(), key=lambda s: s.shard_id)
        assert [s.shard for s in sessions] == [(0, 2), (1, 2)]
        for s in sessions:
            expected = [g.id for g in guilds if (g.id >> 22) % 2 == s.shard_id]
            assert s.guild_ids == expected and expected
        assert sorted(g.id for g in bot.guilds) == sorted(g.id for g in guilds)
        for channel in channels:
            inter = await dc.wait_answered(dc.slash(ane, channel, "mus", "ping"))
            assert inter.session is not None and inter.session.shard_id == (channel.guild_id or 0) >> 22 & 1
        dm = await dc.wait_answered(dc.slash(ane, dc.dm_channel(ane), "mus", "ping"))
        assert dm.session is sessions[0]
    assert dc.rejected() == []


async def test_discord_py_resumes_after_a_dropped_connection(
    pointed: FakeDiscord, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    dc = pointed
    _, channel, ane = club
    async with running(MusBot()):
        [session] = dc.live_sessions()
        await dc.disconnect(code=4000)
        await dc.wait_for(lambda: session.closed)
        missed = dc.slash(ane, channel, "mus", "ping")  # kept for the session, replayed on RESUME
        assert missed.session is session
        await dc.wait_answered(missed)
        assert missed.delivered
        assert session.resumes == 1 and session.live and dc.sessions == [session]
        dc.request_reconnect(session)  # op 7: the client closes and RESUMEs
        await dc.wait_for(lambda: session.resumes == 2 and session.live)
        assert len(session.dispatched("RESUMED")) == 2 and dc.sessions == [session]
        await dc.wait_answered(dc.slash(ane, channel, "mus", "ping"))
    assert dc.rejected() == []


async def test_gateway_handshake_errors(dc: FakeDiscord, http: aiohttp.ClientSession) -> None:
    async def handshake(query: str, *frames: JSON) -> list[Any]:
        """Connect, send ``frames`` after HELLO, collect what comes back until the server closes."""
        got: list[Any] = []
        async with http.ws_connect(dc.gateway_url + query) as ws:
            for frame in frames:
                await ws.send_json(frame)
            async for msg in ws:
                got.append(msg.json() if msg.type == aiohttp.WSMsgType.TEXT else msg.type)
                if len(got) > len(frames):
                    break
            if ws.closed:
                got.append(ws.close_code)
        return got

    query = "?v=10&encoding=json"
    hello, ack, invalid = await handshake(
        query, {"op": 1, "d": None}, {"op": 6, "d": {"token": TOKEN, "session_id": "nope", "seq": 3}}
    )
    assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] == 41_250
    assert (ack, invalid) == ({"op": 11}, {"op": 9, "d": False})
    identify = {"token": TOKEN, "intents": 1 << 15, "properties": {}, "shard": [0, 1]}
    assert (await handshake(query, {"op": 2, "d": {**identify, "token": "wrong"}}))[-1] == 4004
    assert (await handshake(query, {"op": 2, "d": identify}))[-1] == 4014  # MESSAGE_CONTENT not enabled
    assert (await handshake(query, {"op": 2, "d": {**identify, "intents": 0, "shard": [2, 2]}}))[-1] == 4010
    assert (await handshake("?v=9&encoding=json"))[-1] == 4012
    assert [(s.identified, s.close_code) for s in dc.sessions] == [
        (False, 4004),
        (False, 4014),
        (False, 4010),
    ]


async def test_gateway_replays_missed_dispatches_on_resume(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    guild, channel, ane = club
    identify = {"token": TOKEN, "intents": 1, "properties": {}}
    async with http.ws_connect(dc.gateway_url + "?v=10&encoding=json") as ws:
        assert (await ws.receive_json())["op"] == 10
        await ws.send_json({"op": 2, "d": identify})
        ready, guild_create = await ws.receive_json(), await ws.receive_json()
        assert (ready["t"], ready["s"], guild_create["t"], guild_create["s"]) == (
            "READY",
            1,
            "GUILD_CREATE",
            2,
        )
        assert ready["d"]["resume_gateway_url"] == dc.gateway_url and "shard" not in ready["d"]
        assert ready["d"]["guilds"] == [{"id": str(guild.id), "unavailable": True}]
        assert [m["user"]["id"] for m in guild_create["d"]["members"]] == [str(dc.bot_user.id)]  # no intent
        await ws.close(code=4000)
    [session] = dc.sessions
    await dc.wait_for(lambda: session.closed)
    missed = dc.slash(ane, channel, "mus", "ping", check_registered=False)
    assert missed.session is session and not missed.delivered
    async with http.ws_connect(dc.gateway_url + "?v=10&encoding=json") as ws:
        assert (await ws.receive_json())["op"] == 10
        await ws.send_json({"op": 6, "d": {"token": TOKEN, "session_id": session.session_id, "seq": 2}})
        replay, resumed = await ws.receive_json(), await ws.receive_json()
        assert (replay["t"], replay["s"], replay["d"]["id"]) == ("INTERACTION_CREATE", 3, str(missed.id))
        assert (resumed["t"], resumed["s"]) == ("RESUMED", 4)
        assert missed.delivered and session.live and session.resumes == 1


async def test_embeds_are_read_as_text_and_need_embed_links_in_a_channel(
    dc: FakeDiscord, http: aiohttp.ClientSession, club: tuple[FakeGuild, FakeChannel, FakeUser]
) -> None:
    _, channel, _ = club
    embed = {"title": "🂠 Mus", "description": "Ane · 4", "fields": [{"name": "Bet", "value": "2"}]}
    embed |= {"footer": {"text": "⏱"}, "author": {"name": "Mus"}}
    status, sent, _ = await api(http, dc, "POST", f"/channels/{channel.id}/messages", {"embeds": [embed]})
    assert status == 200 and sent["content"] == "" and sent["embeds"][0]["type"] == "rich"
    shown = dc.messages[int(sent["id"])]
    assert shown.text == "Mus\n🂠 Mus\nAne · 4\nBet\n2\n⏱" and shown.history == [shown.text]
    assert shown.versions[0].text == shown.text
    too_long = {"title": "x" * 257, "description": "y" * 4097}
    status, body, _ = await api(http, dc, "POST", f"/channels/{channel.id}/messages", {"embeds": [too_long]})
    assert status == 400 and set(body["errors"]["embeds"]["0"]) == {"title", "description"}, body

    # Without Embed Links: an embed alone is refused, an embed with text loses the embed.
    channel.bot_permissions &= ~PERMISSION_BITS["embed_links"]
    path = f"/channels/{channel.id}/messages"
    status, body, _ = await api(http, dc, "POST", path, {"embeds": [embed]})
    assert (status, body["code"]) == (403, 50013)
    status, kept, _ = await api(http, dc, "POST", path, {"content": "hi", "embeds": [embed]})
    assert status == 200 and kept["embeds"] == [] and dc.messages[int(kept["id"])].text == "hi"
    status, body, _ = await api(
        http, dc, "PATCH", f"{path}/{sent['id']}", {"content": None, "embeds": [embed]}
    )
    assert (status, body["code"]) == (403, 50013) and shown.edits == 0
    status, _, _ = await api(http, dc, "PATCH", f"{path}/{sent['id']}", {"content": "now text"})
    assert status == 200 and shown.text == "now text\nMus\n🂠 Mus\nAne · 4\nBet\n2\n⏱"
    # A DM needs no permission of a server's.
    status, dm, _ = await api(
        http, dc, "POST", f"/channels/{dc.dm_channel(club[2]).id}/messages", {"embeds": [embed]}
    )
    assert status == 200 and dm["embeds"]


def test_stored_message_helpers() -> None:
    channel = FakeChannel(1, 2, "mus")
    user = FakeUser(3, "Bot", bot=True)
    message = StoredMessage(
        id=4,
        channel=channel,
        author=user,
        content="x",
        components=[
            row(button("a", "A"), {"type": 2, "style": 5, "label": "Web", "url": "https://example.org"})
        ],
        embeds=[],
        flags=0,
        created_at=0.0,
        created_wall=0.0,
    )
    assert message.buttons() == [("A", "a", False), ("Web", None, False)]
    assert message.button("A") == "a" and message.custom_ids() == ["a"]
    rendered = message.to_api()["components"][0]
    assert rendered["id"] == 1 and [c["id"] for c in rendered["components"]] == [2, 3]
    assert isinstance(Call(0, "GET", "/", None, {}, None, 0.0), Call)
