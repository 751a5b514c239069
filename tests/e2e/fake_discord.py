"""A fake Discord (HTTP API v10 and the gateway websocket) on 127.0.0.1 for end-to-end tests.

``FakeDiscord`` answers ``/api/v10/...`` and ``/gateway`` like discord.com and gateway.discord.gg do for the
bot under test, so that the real, unmodified discord.py client runs against it. It keeps guilds, channels,
users, messages, application commands, interactions and gateway sessions the way Discord would, and records
every request (accepted or rejected) for the tests to inspect::

    async with FakeDiscord(token=TOKEN) as dc:
        guild = dc.add_guild("Mus club", locale="es-ES")
        channel = dc.add_channel(guild, "mus")
        ane = dc.add_user("Ane", locale="es-ES", guilds=[guild])
        with dc.point_discord_py():  # Route.BASE and DiscordWebSocket.DEFAULT_GATEWAY, restored on exit
            ...start the bot, wait until it is ready...
            inter = dc.slash(ane, channel, "mus", "newgame")
            await dc.wait_answered(inter)
        assert dc.rejected() == []

Every REST request is checked against Discord's OpenAPI description of the API
(``tests/data/discord-api-spec/openapi.json``, see :mod:`.fake_discord_spec`):

* the route must exist (404 ``{"code": 0, "message": "404: Not Found"}``) and have that method (405);
* ``Authorization: Bot <token>`` must match where the spec asks for the bot token (401
  ``401: Unauthorized``); interaction callbacks and webhook-token routes need none, as on Discord;
* path parameters (snowflakes), declared query parameters and the JSON body (or ``payload_json`` of a
  multipart body) must match the spec's schemas, ``$ref``s resolved; a bad body is a 400 code 50035
  ``Invalid Form Body`` with Discord's nested ``errors``; invalid JSON is a 400 code 50109;
* Discord's limits the spec does not carry (content ≤ 2000 characters, ≤ 5 action rows of ≤ 5 buttons, a
  select menu alone in its row, ≤ 25 options, ``custom_id`` 1–100 characters and unique in a message, button
  label ≤ 80, the flags a message may carry, command names and descriptions, locales, ≤ 25 options), and an
  empty message is a 400 code 50006 ``Cannot send an empty message``.

Two deviations from the spec are applied on purpose, where the spec is stricter than Discord and discord.py
relies on Discord's leniency: snowflakes in bodies may be integers, and ``default_member_permissions`` of a
command may be a string of digits (as Discord documents it).

State kept like Discord:

* messages (ids are increasing snowflakes, strings in JSON): channel, author, content, components as sent,
  embeds, flags, ``ephemeral_for`` (the one user who sees an ephemeral message), creation time, edit count,
  every version; ``PATCH`` only on the bot's own messages (403 50005), unknown or ephemeral ones through the
  channel routes are 404 10008 ``Unknown Message``; a ``PATCH`` without ``components`` keeps them,
  ``components: []`` clears them; deleted messages are gone (10008);
* channels: guild text channels and DM channels; ``POST /users/@me/channels`` returns a user's DM channel
  (the same id each time); sending into the DM of a user whose DMs are closed is 403 50007 ``Cannot send
  messages to this user``; each guild channel has the bot's permissions in it (``bot_permissions``, sent as
  ``app_permissions``): a post without View Channel and Send Messages, or a file without Attach Files, is 403
  50013 ``Missing Permissions`` (interaction answers need none, as on Discord); without Embed Links, a post or
  edit whose only text is in its embeds is 403 50013 too, and one with content loses its embeds silently;
  a thread (``add_thread``) takes Send Messages in Threads instead of Send Messages;
* guilds: ``features`` (a ``COMMUNITY`` server reports its locale; any other always reports en-US, as
  Discord does), each member's permissions (``member.permissions`` of an interaction); a command with
  ``default_member_permissions`` is offered only to members who have them (or Administrator), unless an
  admin's override (``command_overrides``) lets a member see it — the bot must check again itself;
* application commands, global and per guild: bulk overwrites keep the ids of commands that keep their name;
* interactions (:class:`FakeInteraction`): dispatched as ``INTERACTION_CREATE`` with the payload Discord
  sends, answered at most once (then 400 40060 ``Interaction has already been acknowledged.``) and within
  ``interaction_timeout`` seconds (then 404 10062 ``Unknown interaction``); callback types 4 (a message,
  ephemeral with flag 64), 5 (a "thinking" placeholder with flag 128 LOADING, filled by ``PATCH
  @original`` or by the first followup), 6 and 7 (components and modals opened from them only: 7 edits the
  message the component is on, ephemeral ones included), 8 (autocomplete) and 9 (modal) are accepted and
  recorded; ``/webhooks/{application_id}/{token}/...`` (followups, ``@original``) work for
  ``token_lifetime`` seconds (15 minutes) after the interaction, only once it was answered (else 404 10015
  ``Unknown Webhook``), and then 401 50027 ``Invalid Webhook Token``;
* rate limits: every success carries ``X-RateLimit-Limit/Remaining/Reset/Reset-After/Bucket`` (generous:
  the bucket never runs out) — unless the server is made with ``limits=DiscordLimits()``: then Discord's
  per-route buckets and global limit are enforced and reported (:mod:`.fake_discord_limits`), and
  :meth:`FakeDiscord.limited` lists the requests refused with a 429 (not counted as rejected);
  :meth:`FakeDiscord.inject_429` makes chosen requests answer 429 with Discord's
  body and headers (``Retry-After``, ``X-RateLimit-*``, ``Via``: discord.py treats a 429 without ``Via`` as a
  Cloudflare ban), recorded as injected, not as rejected.

The gateway (``ws://127.0.0.1:PORT/gateway?v=10&encoding=json&compress=zlib-stream``): HELLO (heartbeat
interval ``heartbeat_interval_ms``), IDENTIFY (token, ``shard``, intents — privileged intents not enabled in
``privileged_intents`` close with 4014, a wrong token with 4004, a bad shard with 4010) → READY (user,
``session_id``, ``resume_gateway_url`` = this server, application, the shard's guilds as unavailable) →
``GUILD_CREATE`` for each guild with ``(guild_id >> 22) % shard_count == shard_id``; HEARTBEAT →
HEARTBEAT_ACK; RESUME replays the missed dispatches and answers RESUMED, or INVALID_SESSION when the
session cannot be resumed (closed by the client with 1000/1001, or unknown); REQUEST_GUILD_MEMBERS →
``GUILD_MEMBERS_CHUNK``. Frames are zlib-stream compressed when asked (zstd-stream too if ``zstandard`` is
installed). ``INTERACTION_CREATE`` goes to the live session of the guild's shard (DMs: shard 0), or is kept
for a session of that shard that lost its connection and may still RESUME; with neither, the interaction is
recorded as not delivered (on Discord the user sees "This interaction failed"). ``GUILD_CREATE`` lists every
member only with the GUILD_MEMBERS intent (else just the bot). The server outlives its clients: a new client
can connect after one disconnects. No ``MESSAGE_CREATE`` events are sent. With
:attr:`FakeDiscord.identify_spacing` set, an IDENTIFY less than that after the last session started (by any
connection) gets op 9 INVALID_SESSION, as Discord's session start limit does. A slow gateway:
:attr:`FakeDiscord.gateway_lag` delays every ``INTERACTION_CREATE`` after the interaction's creation (its
3 s count from its creation). An outage: :meth:`FakeDiscord.drop_shard` closes a shard's connection and,
while :attr:`FakeDiscord.gateway_down`, the gateway answers every new connection 503 (the client backs off
and tries again).

Test modules in this package import it relatively (``from .fake_discord import FakeDiscord``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime as dtm
import hashlib
import itertools
import json
import math
import re
import secrets
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import WSMsgType, web

from .fake_discord_limits import DiscordLimits, RateLimits
from .fake_discord_spec import (
    EPHEMERAL,
    IS_COMPONENTS_V2,
    LOADING,
    SUPPRESS_EMBEDS,
    DiscordError,
    DiscordSpec,
    FieldError,
    Operation,
    check_command,
    check_commands,
    check_message,
    form_error,
    is_empty_message,
)

try:  # pragma: no cover - depends on the environment
    import zstandard
except ImportError:  # pragma: no cover
    zstandard = None

__all__ = [
    "BOT_PERMISSIONS",
    "PERMISSION_BITS",
    "USER_PERMISSIONS",
    "Call",
    "FakeChannel",
    "FakeDiscord",
    "FakeGuild",
    "FakeInteraction",
    "FakeUser",
    "GatewaySession",
    "MessageVersion",
    "StoredMessage",
]

JSON = dict[str, Any]
_T = TypeVar("_T")

DISCORD_EPOCH_MS = 1_420_070_400_000
#: Fixed objects (guilds, channels, users, commands) get snowflakes from this instant on, one millisecond
#: apart per kind: a multiple of 2520 (= lcm(1..10)), so guild number n falls in shard n % shard_count.
_PAST_MS = (1_704_067_200_000 - DISCORD_EPOCH_MS) // 2520 * 2520

# Permission bits.
_VIEW_CHANNEL = 1 << 10
_SEND_MESSAGES = 1 << 11
_EMBED_LINKS = 1 << 14
_ATTACH_FILES = 1 << 15
_READ_HISTORY = 1 << 16
_ADD_REACTIONS = 1 << 6
_EXTERNAL_EMOJIS = 1 << 18
_USE_COMMANDS = 1 << 31
_SEND_IN_THREADS = 1 << 38
_MANAGE_MESSAGES = 1 << 13
_MANAGE_GUILD = 1 << 5
_ADMINISTRATOR = 1 << 3
USER_PERMISSIONS = (
    _VIEW_CHANNEL
    | _SEND_MESSAGES
    | _EMBED_LINKS
    | _ATTACH_FILES
    | _READ_HISTORY
    | _ADD_REACTIONS
    | _EXTERNAL_EMOJIS
    | _USE_COMMANDS
    | _SEND_IN_THREADS
)
BOT_PERMISSIONS = USER_PERMISSIONS
#: Permission bits by discord.py's names (tests take some away from the bot or give some to a member).
PERMISSION_BITS = {
    "view_channel": _VIEW_CHANNEL,
    "send_messages": _SEND_MESSAGES,
    "embed_links": _EMBED_LINKS,
    "attach_files": _ATTACH_FILES,
    "read_message_history": _READ_HISTORY,
    "send_messages_in_threads": _SEND_IN_THREADS,
    "manage_messages": _MANAGE_MESSAGES,
    "manage_guild": _MANAGE_GUILD,
    "administrator": _ADMINISTRATOR,
}
#: ``app_permissions`` in a DM with the bot.
_DM_APP_PERMISSIONS = _VIEW_CHANNEL | _SEND_MESSAGES | _EMBED_LINKS | _ATTACH_FILES | _READ_HISTORY

# Gateway intents that must be enabled for the application ("privileged").
GUILD_MEMBERS = 1 << 1
GUILD_PRESENCES = 1 << 8
MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = GUILD_MEMBERS | GUILD_PRESENCES | MESSAGE_CONTENT

_CALLBACKS_FOR: dict[int, frozenset[int]] = {
    2: frozenset({4, 5, 9}),
    3: frozenset({4, 5, 6, 7, 9}),
    4: frozenset({8}),
    5: frozenset({4, 5, 6, 7}),
}
_OPTION_TYPES = {bool: 5, int: 4, float: 10, str: 3}
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024


def _iso(wall: float | None) -> str | None:
    if wall is None:
        return None
    return dtm.datetime.fromtimestamp(wall, dtm.UTC).isoformat()


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class FakeUser:
    """A Discord user (the bot is one too)."""

    id: int
    name: str
    locale: str = "en-US"
    dms_open: bool = True
    bot: bool = False

    def to_api(self) -> JSON:
        """The user object (``UserResponse``)."""
        data: JSON = {
            "id": str(self.id),
            "username": self.name.lower().replace(" ", "_"),
            "global_name": self.name,
            "avatar": None,
            "discriminator": "0",
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "avatar_decoration_data": None,
            "collectibles": None,
            "primary_guild": None,
        }
        if self.bot:
            data["bot"] = True
        return data

    def __repr__(self) -> str:
        return f"<FakeUser {self.id} {self.name!r}>"


@dataclass(eq=False)
class FakeChannel:
    """A guild text channel (type 0), a public thread in one (type 11, ``parent_id`` set) or a DM channel
    (type 1, ``recipient`` set)."""

    id: int
    guild_id: int | None
    name: str
    type: int = 0
    recipient: FakeUser | None = None
    position: int = 0
    bot_can_send: bool = True
    last_message_id: int | None = None
    bot_permissions: int = BOT_PERMISSIONS
    parent_id: int | None = None
    """What the bot may do here (its roles and the channel's overwrites resolved): ``app_permissions`` of
    every interaction in the channel; a post without View Channel and Send Messages, with a file and
    without Attach Files, or with its text only in embeds and without Embed Links, is refused (403 50013) as
    on Discord."""

    @property
    def is_dm(self) -> bool:
        """A DM channel between the bot and ``recipient``."""
        return self.type == 1

    @property
    def is_thread(self) -> bool:
        """A thread (posting in it takes Send Messages in Threads, not Send Messages)."""
        return self.type in (10, 11, 12)

    def to_api(self, *, with_guild_id: bool = True) -> JSON:
        """The channel object (``GuildChannelResponse`` / ``PrivateChannelResponse``)."""
        last = None if self.last_message_id is None else str(self.last_message_id)
        if self.is_dm:
            assert self.recipient is not None
            return {
                "id": str(self.id),
                "type": 1,
                "last_message_id": last,
                "flags": 0,
                "recipients": [self.recipient.to_api()],
            }
        data: JSON = {
            "id": str(self.id),
            "type": self.type,
            "name": self.name,
            "position": self.position,
            "permission_overwrites": [],
            "parent_id": None,
            "topic": None,
            "nsfw": False,
            "last_message_id": last,
            "rate_limit_per_user": 0,
            "flags": 0,
        }
        if with_guild_id:
            data["guild_id"] = str(self.guild_id)
        if self.is_thread:
            data.pop("position")
            data.pop("permission_overwrites")
            data.update(
                parent_id=str(self.parent_id),
                owner_id=str(self.id >> 22 << 22),  # (someone's: threads are opened by members)
                message_count=0,
                member_count=1,
                thread_metadata={
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": _iso(time.time()),
                    "locked": False,
                },
            )
        return data

    def __repr__(self) -> str:
        if self.is_dm:
            return f"<FakeChannel DM {self.id} with {self.recipient!r}>"
        return f"<FakeChannel {self.id} #{self.name}>"


@dataclass(eq=False)
class FakeGuild:
    """A guild (server) the bot is in."""

    id: int
    name: str
    locale: str = "en-US"
    channels: list[FakeChannel] = field(default_factory=list)
    members: list[FakeUser] = field(default_factory=list)
    bot_role_id: int = 0
    joined_at: float = field(default_factory=time.time)
    features: list[str] = field(default_factory=list)
    """Guild features (``COMMUNITY``…): only a Community server has a preferred locale of its own."""
    member_permissions: dict[int, int] = field(default_factory=dict)
    """Each member's permissions, by user id (``USER_PERMISSIONS`` if not set here)."""
    command_overrides: dict[str, set[int]] = field(default_factory=dict)
    """Members an admin let see a command despite its ``default_member_permissions`` (Server settings →
    Integrations), by command name."""

    @property
    def community(self) -> bool:
        """A Community server (only these choose a preferred locale; others always report en-US)."""
        return "COMMUNITY" in self.features

    @property
    def reported_locale(self) -> str:
        """The ``guild_locale`` / ``preferred_locale`` Discord reports for it."""
        return self.locale if self.community else "en-US"

    def permissions_of(self, user: FakeUser) -> int:
        """What ``user`` may do in this server."""
        return self.member_permissions.get(user.id, USER_PERMISSIONS)

    def __repr__(self) -> str:
        return f"<FakeGuild {self.id} {self.name!r}>"


def shown_text(content: str, embeds: Sequence[Any]) -> str:
    """Every word a message shows a reader: its content, then each embed's author, title, description,
    fields (name and value) and footer, one per line — what a test reads for leaks, repeats and stale text,
    so that nothing hides in an embed."""
    parts = [content]
    for embed in embeds:
        if not isinstance(embed, dict):
            continue
        author, footer = embed.get("author"), embed.get("footer")
        parts.append(author.get("name") if isinstance(author, dict) else None)
        parts.extend([embed.get("title"), embed.get("description")])
        for f in embed.get("fields") or []:
            if isinstance(f, dict):
                parts.extend([f.get("name"), f.get("value")])
        parts.append(footer.get("text") if isinstance(footer, dict) else None)
    return "\n".join(str(p) for p in parts if p)


@dataclass(frozen=True)
class MessageVersion:
    """One state of a message (the first one is how it was created)."""

    content: str
    components: list[Any]
    embeds: list[Any]
    flags: int
    at: float
    via: str

    @property
    def text(self) -> str:
        """What this version showed: its content and its embeds' words (:func:`shown_text`)."""
        return shown_text(self.content, self.embeds)


@dataclass(eq=False)
class StoredMessage:
    """A message as Discord keeps it."""

    id: int
    channel: FakeChannel
    author: FakeUser
    content: str
    components: list[Any]
    embeds: list[Any]
    flags: int
    created_at: float
    created_wall: float
    ephemeral_for: int | None = None
    type: int = 0
    webhook_id: int | None = None
    interaction: FakeInteraction | None = None
    attachments: list[JSON] = field(default_factory=list)
    edits: int = 0
    edited_wall: float | None = None
    deleted: bool = False
    history: list[str] = field(default_factory=list)
    """What the message showed (:attr:`text`), version after version."""
    versions: list[MessageVersion] = field(default_factory=list)

    @property
    def channel_id(self) -> int:
        """The id of the channel the message is in."""
        return self.channel.id

    @property
    def text(self) -> str:
        """What the message shows now: its content and its embeds' words (:func:`shown_text`)."""
        return shown_text(self.content, self.embeds)

    @property
    def ephemeral(self) -> bool:
        """Only ``ephemeral_for`` sees it."""
        return self.ephemeral_for is not None

    @property
    def loading(self) -> bool:
        """A deferred interaction response not filled yet ("Bot is thinking...")."""
        return bool(self.flags & LOADING)

    def _all_components(self) -> Iterator[JSON]:
        def walk(items: Iterable[Any]) -> Iterator[JSON]:
            for item in items:
                if isinstance(item, dict):
                    yield item
                    yield from walk(item.get("components") or [])
                    for key in ("accessory", "component"):
                        if isinstance(item.get(key), dict):
                            yield from walk([item[key]])

        return walk(self.components)

    def buttons(self) -> list[tuple[str | None, str | None, bool]]:
        """``(label, custom_id, disabled)`` of every button, row by row."""
        return [
            (c.get("label"), c.get("custom_id"), bool(c.get("disabled")))
            for c in self._all_components()
            if c.get("type") == 2
        ]

    def button(self, label: str) -> str:
        """The ``custom_id`` of the button labelled ``label`` (KeyError if none)."""
        for text, custom_id, _ in self.buttons():
            if text == label and custom_id is not None:
                return custom_id
        raise KeyError(f"no button {label!r} on message {self.id}: {self.buttons()}")

    def select_options(self) -> list[tuple[str, str]]:
        """``(label, value)`` of every option of every string select menu."""
        return [
            (o.get("label"), o.get("value"))
            for c in self._all_components()
            if c.get("type") == 3
            for o in c.get("options") or []
        ]

    def component(self, custom_id: str) -> JSON | None:
        """The component with that ``custom_id``, if the message shows one."""
        return next((c for c in self._all_components() if c.get("custom_id") == custom_id), None)

    def custom_ids(self) -> list[str]:
        """Every ``custom_id`` on the message."""
        return [c["custom_id"] for c in self._all_components() if isinstance(c.get("custom_id"), str)]

    def to_api(self) -> JSON:
        """The message object (``MessageResponse``)."""
        data: JSON = {
            "type": self.type,
            "content": self.content,
            "mentions": [],
            "mention_roles": [],
            "attachments": list(self.attachments),
            "embeds": [_render_embed(e) for e in self.embeds if isinstance(e, dict)],
            "timestamp": _iso(self.created_wall),
            "edited_timestamp": _iso(self.edited_wall),
            "flags": self.flags,
            "components": _render_components(self.components),
            "id": str(self.id),
            "channel_id": str(self.channel.id),
            "author": self.author.to_api(),
            "pinned": False,
            "mention_everyone": False,
            "tts": False,
        }
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
            data["application_id"] = str(self.webhook_id)
        inter = self.interaction
        if inter is not None:
            data["interaction_metadata"] = inter.metadata()
            if inter.type == 2:
                data["interaction"] = {
                    "id": str(inter.id),
                    "type": 2,
                    "name": inter.full_command,
                    "user": inter.user.to_api(),
                }
        return data

    def __repr__(self) -> str:
        where = f"ephemeral for {self.ephemeral_for}" if self.ephemeral else f"in {self.channel.id}"
        state = " deleted" if self.deleted else (" loading" if self.loading else "")
        return f"<StoredMessage {self.id} {where}{state} {self.text[:60]!r} buttons={len(self.buttons())}>"


def _render_embed(embed: JSON) -> JSON:
    data: JSON = {"type": "rich", **_drop_none(embed)}
    return data


def _render_components(components: Sequence[Any]) -> list[Any]:
    """Components as Discord answers them: nulls dropped, numeric ids assigned, select defaults filled."""
    counter = itertools.count(1)
    used = {c.get("id") for c in _walk(components) if isinstance(c.get("id"), int)}

    def render(item: Any) -> Any:
        if not isinstance(item, dict):
            return item
        out = _drop_none(copy.deepcopy(item))
        if "id" not in out:
            n = next(counter)
            while n in used:
                n = next(counter)
            out["id"] = n
        if out.get("type") in (3, 5, 6, 7, 8):
            out.setdefault("min_values", 1)
            out.setdefault("max_values", 1)
        if out.get("type") == 3:
            out["options"] = [
                {k: v for k, v in o.items() if k in ("label", "value", "description", "emoji", "default")}
                for o in out.get("options", [])
            ]
        if out.get("type") == 3:
            out.pop("required", None)
        if isinstance(out.get("components"), list):
            out["components"] = [render(c) for c in item.get("components") or []]
        for key in ("accessory", "component"):
            if isinstance(item.get(key), dict):
                out[key] = render(item[key])
        return out

    return [render(c) for c in components]


def _walk(components: Iterable[Any]) -> Iterator[JSON]:
    for item in components:
        if isinstance(item, dict):
            yield item
            yield from _walk(item.get("components") or [])


@dataclass(eq=False)
class FakeInteraction:
    """An interaction sent to the bot, and how (whether) it was answered."""

    id: int
    token: str
    type: int  # 2 slash command, 3 component, 4 autocomplete, 5 modal submit
    user: FakeUser
    channel: FakeChannel
    guild: FakeGuild | None
    payload: JSON
    dispatched_at: float
    command: str | None = None
    sub: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    message: StoredMessage | None = None  # the message the component is on
    custom_id: str | None = None
    values: list[str] | None = None
    session: GatewaySession | None = None  # the session it was dispatched to (maybe kept for a RESUME)
    delivered_at: float | None = None  # when it went out on a live connection
    answered: bool = False
    callback_type: int | None = None
    answered_at: float | None = None
    callback: JSON | None = None
    response: StoredMessage | None = None  # what @original refers to
    ephemeral: bool = False
    followups: list[StoredMessage] = field(default_factory=list)
    modal: JSON | None = None
    choices: list[Any] | None = None
    late_callbacks: int = 0
    opened_by: FakeInteraction | None = None  # for a modal submission: the interaction answered with it

    @property
    def delivered(self) -> bool:
        """The ``INTERACTION_CREATE`` went out on a live gateway connection (maybe on a RESUME)."""
        return self.delivered_at is not None

    @property
    def answered_after(self) -> float | None:
        """Seconds between the dispatch and the callback."""
        return None if self.answered_at is None else self.answered_at - self.dispatched_at

    @property
    def full_command(self) -> str:
        """``mus newgame`` for a slash command, else the custom id."""
        if self.command is None:
            return self.custom_id or ""
        return f"{self.command} {self.sub}" if self.sub else self.command

    def metadata(self) -> JSON:
        """``interaction_metadata`` of the messages answering this interaction."""
        data: JSON = {
            "id": str(self.id),
            "type": self.type,
            "user": self.user.to_api(),
            "authorizing_integration_owners": _owners(self.guild),
        }
        if self.response is not None and self.response.interaction is self:
            data["original_response_message_id"] = str(self.response.id)
        if self.type == 2:
            data["name"] = self.full_command
            data["command_type"] = 1
        if self.type == 3 and self.message is not None:
            data["interacted_message_id"] = str(self.message.id)
        if self.type == 5 and self.opened_by is not None:
            data["triggering_interaction_metadata"] = self.opened_by.metadata()
        return data

    def __repr__(self) -> str:
        what = f"/{self.full_command}" if self.type == 2 else f"{self.custom_id!r}"
        state = (
            f"answered {self.callback_type} after {self.answered_after:.3f} s"
            if self.answered and self.answered_after is not None
            else "unanswered"
        )
        return f"<FakeInteraction {self.id} type {self.type} {what} by {self.user.name} {state}>"


def _owners(guild: FakeGuild | None) -> JSON:
    return {"0": str(guild.id) if guild is not None else "0"}


@dataclass(eq=False)
class Call:
    """One HTTP request received by the fake (in arrival order)."""

    seq: int
    method: str
    path: str  # relative to /api/v10
    route_template: str | None
    query: dict[str, str]
    json: Any
    at: float
    status: int | None = None
    code: int | None = None  # Discord's error code of an error answer
    injected: bool = False
    rejected: bool = False
    response: Any = None
    detail: str | None = None
    finished: float | None = None

    @property
    def ok(self) -> bool:
        """Answered with a 2xx."""
        return self.status is not None and 200 <= self.status < 300

    def __repr__(self) -> str:
        state = "pending" if self.status is None else str(self.status)
        text = f"<Call #{self.seq} {self.method} {self.path} {state}"
        if self.code is not None:
            text += f" code {self.code}"
        if self.detail:
            text += f" ({self.detail})"
        return text + (" [injected]" if self.injected else "") + ">"


@dataclass(eq=False)
class GatewaySession:
    """A gateway session (from IDENTIFY on; it survives reconnections that RESUME it)."""

    session_id: str
    shard_id: int
    shard_count: int
    intents: int | None
    identify: JSON
    started_at: float
    identified: bool = False
    closed: bool = False  # no live connection now
    resumable: bool = True
    close_code: int | None = None
    seq: int = 0
    events: list[tuple[int, str, JSON]] = field(default_factory=list)
    guild_ids: list[int] = field(default_factory=list)
    resumes: int = 0
    heartbeats: int = 0
    presence: JSON | None = None
    compress: str | None = None  # the connection's ``compress`` query parameter (zlib-stream for discord.py)
    _conn: _Connection | None = field(default=None, repr=False)

    @property
    def shard(self) -> tuple[int, int]:
        """``(shard_id, shard_count)``."""
        return (self.shard_id, self.shard_count)

    @property
    def live(self) -> bool:
        """Identified and connected."""
        return self.identified and self._conn is not None and not self._conn.closing

    def dispatched(self, event: str) -> list[JSON]:
        """The ``d`` of every dispatch of that event name, in order."""
        return [d for _, t, d in self.events if t == event]

    def __repr__(self) -> str:
        state = "live" if self.live else ("closed" if self.closed else "idle")
        return (
            f"<GatewaySession {self.session_id[:8]} shard {self.shard_id}/{self.shard_count} {state} "
            f"seq={self.seq} close={self.close_code}>"
        )


@dataclass
class _Close:
    code: int
    reason: str


class _Connection:
    """One websocket connection and its ordered, compressed output."""

    def __init__(self, ws: web.WebSocketResponse, compress: str | None) -> None:
        self.ws = ws
        self.compress = compress
        self.outbox: asyncio.Queue[JSON | _Close] = asyncio.Queue()
        self.session: GatewaySession | None = None
        self.closing = False
        self.closed_by_server: int | None = None
        self._zlib = zlib.compressobj() if compress == "zlib-stream" else None
        self._zstd = (
            zstandard.ZstdCompressor().compressobj()
            if compress == "zstd-stream" and zstandard is not None
            else None
        )
        self.writer: asyncio.Task[None] | None = None

    def send(self, payload: JSON) -> None:
        if not self.closing:
            self.outbox.put_nowait(payload)

    def close(self, code: int, reason: str) -> None:
        if not self.closing:
            self.closing = True
            self.closed_by_server = code
            self.outbox.put_nowait(_Close(code, reason))

    def _encode(self, payload: JSON) -> bytes | str:
        text = json.dumps(payload, separators=(",", ":"))
        if self._zlib is not None:
            return self._zlib.compress(text.encode()) + self._zlib.flush(zlib.Z_SYNC_FLUSH)
        if self._zstd is not None:  # pragma: no cover - needs zstandard
            return bytes(
                self._zstd.compress(text.encode()) + self._zstd.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
            )
        return text

    async def run_writer(self) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            while True:
                item = await self.outbox.get()
                if isinstance(item, _Close):
                    await self.ws.close(code=item.code, message=item.reason.encode())
                    return
                data = self._encode(item)
                if isinstance(data, bytes):
                    await self.ws.send_bytes(data)
                else:
                    await self.ws.send_str(data)


@dataclass
class _Injected429:
    method: str | None
    path_regex: re.Pattern[str] | None
    remaining: int
    retry_after: float
    global_: bool


@dataclass
class _Ctx:
    request: web.Request
    call: Call
    params: dict[str, str]
    query: JSON
    body: Any
    files: list[JSON]


# --------------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------------


class FakeDiscord:
    """The fake Discord API and gateway (see the module docstring)."""

    def __init__(
        self,
        token: str = "fake.discord.token",
        *,
        interaction_timeout: float = 3.0,
        token_lifetime: float = 900.0,
        heartbeat_interval_ms: int = 41_250,
        recommended_shards: int = 1,
        privileged_intents: int = 0,
        bot_name: str = "Mus Bot",
        spec: DiscordSpec | None = None,
        limits: DiscordLimits | None = None,
    ) -> None:
        self.token = token
        self.rate_limits = None if limits is None else RateLimits(limits, self.now)
        """Discord's rate limits, when enforced (see :mod:`.fake_discord_limits`)."""
        self.interaction_timeout = interaction_timeout
        self.token_lifetime = token_lifetime
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.recommended_shards = recommended_shards
        self.privileged_intents = privileged_intents
        self.spec = spec or DiscordSpec.load()
        self.port = 0
        self._counters: dict[int, itertools.count[int]] = {}
        self._last_live = 0
        self.application_id = self._past_snowflake(6)
        self.bot_user = FakeUser(self.application_id, bot_name, bot=True)
        self.owner = FakeUser(self._past_snowflake(3), "Owner")
        self.guilds: dict[int, FakeGuild] = {}
        self.channels: dict[int, FakeChannel] = {}
        self.users: dict[int, FakeUser] = {self.bot_user.id: self.bot_user}
        self.messages: dict[int, StoredMessage] = {}
        self.uploads: dict[str, bytes] = {}
        """The content of every attachment uploaded, by attachment id."""
        self.interactions: list[FakeInteraction] = []
        self.sessions: list[GatewaySession] = []
        self._commands: dict[int | None, list[JSON]] = {}
        self._dms: dict[int, FakeChannel] = {}
        self._interactions: dict[int, FakeInteraction] = {}
        self._by_token: dict[str, FakeInteraction] = {}
        self._calls: list[Call] = []
        self._injected: list[_Injected429] = []
        self._connections: set[_Connection] = set()
        self._changed = asyncio.Event()
        self._t0 = time.monotonic()
        self._runner: web.AppRunner | None = None
        self.gateway_down = False
        """While true, the gateway refuses new connections (503 to the websocket upgrade, as Discord's edge
        does in an outage); live connections are untouched (:meth:`drop_shard` closes one)."""
        self.refused_connections = 0
        """Connections refused so far because the gateway was down."""
        self.identify_spacing = 0.0
        """Seconds a started session keeps the next IDENTIFY out (Discord's 5 s for ``max_concurrency`` 1,
        across every connection of the token); 0: no limit. A refused IDENTIFY gets op 9 INVALID_SESSION."""
        self.refused_identifies = 0
        self._last_identify: float | None = None
        self.gateway_lag = 0.0
        """Seconds between an interaction's creation and its ``INTERACTION_CREATE`` (a slow gateway): its
        3 s to be answered count from its creation, as on Discord."""

    # -- lifecycle -------------------------------------------------------------------------------------

    @property
    def api_base(self) -> str:
        """discord.py's ``Route.BASE``: ``http://127.0.0.1:PORT/api/v10``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The gateway: ``ws://127.0.0.1:PORT/gateway`` (also the ``resume_gateway_url``)."""
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def start(self) -> None:
        """Bind a free port on 127.0.0.1 and start serving."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("GET", "/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._api)
        app.router.add_route("*", "/{tail:.*}", self._outside_api)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        self._t0 = time.monotonic()

    async def stop(self) -> None:
        """Close the gateway connections (1001) and shut the server down."""
        for conn in list(self._connections):
            conn.close(1001, "Discord is going away")
        writers = [c.writer for c in self._connections if c.writer is not None]
        if writers:
            await asyncio.wait(writers, timeout=1.0)
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def now(self) -> float:
        """Seconds since the server started (the clock of calls, messages and interactions)."""
        return time.monotonic() - self._t0

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @contextlib.contextmanager
    def point_discord_py(self) -> Iterator[None]:
        """Point discord.py here (``Route.BASE``, ``DiscordWebSocket.DEFAULT_GATEWAY``), restored on exit."""
        import yarl
        from discord.gateway import DiscordWebSocket
        from discord.http import Route

        base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
        Route.BASE = self.api_base
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)
        try:
            yield
        finally:
            Route.BASE = base
            DiscordWebSocket.DEFAULT_GATEWAY = gateway

    # -- snowflakes ------------------------------------------------------------------------------------

    def _past_snowflake(self, worker: int) -> int:
        """A snowflake for a fixed object: kind ``worker``, n-th of its kind at ``_PAST_MS + n``."""
        n = next(self._counters.setdefault(worker, itertools.count()))
        return ((_PAST_MS + n) << 22) | (worker << 17)

    def _live_snowflake(self) -> int:
        """A fresh, increasing snowflake with the current time (messages, interactions, DM channels)."""
        now = ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (7 << 17)
        self._last_live = max(now, self._last_live + 1)
        return self._last_live

    # -- guilds, channels, users -----------------------------------------------------------------------

    def add_guild(
        self,
        name: str,
        *,
        locale: str = "en-US",
        guild_id: int | None = None,
        community: bool = False,
        features: Iterable[str] = (),
    ) -> FakeGuild:
        """A guild the bot is in (guild number n falls in shard ``n % shard_count``). Its ``locale`` is
        reported only if it is a Community server (``community``): others always report en-US."""
        guild = FakeGuild(guild_id or self._past_snowflake(1), name, locale)
        guild.features = sorted({*features, *(["COMMUNITY"] if community else [])})
        guild.bot_role_id = self._past_snowflake(4)
        guild.members.append(self.bot_user)
        self.guilds[guild.id] = guild
        return guild

    def add_channel(self, guild: FakeGuild, name: str, *, channel_id: int | None = None) -> FakeChannel:
        """A text channel of ``guild``."""
        channel = FakeChannel(
            channel_id or self._past_snowflake(2), guild.id, name, position=len(guild.channels)
        )
        guild.channels.append(channel)
        self.channels[channel.id] = channel
        return channel

    def add_thread(self, parent: FakeChannel, name: str) -> FakeChannel:
        """A public thread in ``parent`` (not in the guild's channel list, as Discord keeps threads apart)."""
        thread = FakeChannel(self._past_snowflake(2), parent.guild_id, name, type=11, parent_id=parent.id)
        thread.bot_permissions = parent.bot_permissions
        self.channels[thread.id] = thread
        return thread

    def add_user(
        self,
        name: str,
        *,
        locale: str = "en-US",
        dms_open: bool = True,
        guilds: Iterable[FakeGuild] = (),
        user_id: int | None = None,
    ) -> FakeUser:
        """A user (member of ``guilds``); ``dms_open=False``: the bot cannot DM them (403 50007)."""
        if locale not in self.spec.locales:
            raise ValueError(f"{locale!r} is not a Discord locale: {sorted(self.spec.locales)}")
        user = FakeUser(user_id or self._past_snowflake(3), name, locale, dms_open)
        self.users[user.id] = user
        for guild in guilds:
            self.join(user, guild)
        return user

    def join(self, user: FakeUser, guild: FakeGuild) -> None:
        """``user`` becomes a member of ``guild``."""
        if user not in guild.members:
            guild.members.append(user)

    def dm_channel(self, user: FakeUser) -> FakeChannel:
        """The DM channel between the bot and ``user`` (created on first use; the same id afterwards)."""
        channel = self._dms.get(user.id)
        if channel is None:
            channel = FakeChannel(self._live_snowflake(), None, "", type=1, recipient=user)
            self._dms[user.id] = channel
            self.channels[channel.id] = channel
        return channel

    def _guild_of(self, channel: FakeChannel) -> FakeGuild | None:
        return None if channel.guild_id is None else self.guilds[channel.guild_id]

    # -- users act -------------------------------------------------------------------------------------

    def slash(
        self,
        user: FakeUser,
        channel: FakeChannel,
        command: str,
        sub: str | None = None,
        *,
        options: Mapping[str, Any] | None = None,
        check_registered: bool = True,
    ) -> FakeInteraction:
        """``user`` runs ``/command [sub] [options]`` in ``channel`` (a guild channel or a DM channel).

        ``sub`` may be ``"group sub"``. With ``check_registered`` the command must be registered where the
        user is (guild commands of the guild, or global ones allowed in that context) and the options must
        fit its definition (names, types, choices, required ones), as the Discord client ensures; the
        option types come from the definition.
        """
        guild = self._guild_of(channel)
        definition = self._find_command(command, guild) if check_registered else None
        if check_registered and definition is None:
            where = f"guild {guild.name!r}" if guild else "a DM"
            raise ValueError(f"/{command} is not registered for {where}: {self._command_names(guild)}")
        if check_registered and definition is not None and guild is not None:
            self._check_visible(definition, guild, user)
        parts = sub.split() if sub else []
        level_def = definition
        for part in parts:
            if level_def is not None:
                found = next((o for o in level_def.get("options") or [] if o["name"] == part), None)
                if found is None or found["type"] not in (1, 2):
                    raise ValueError(f"/{command} has no subcommand {part!r}")
                level_def = found
        resolved: JSON = {}
        leaf = self._options_payload(level_def, dict(options or {}), guild, resolved, check_registered)
        for depth in reversed(range(len(parts))):
            leaf = [{"name": parts[depth], "type": 1 if depth == len(parts) - 1 else 2, "options": leaf}]
        data: JSON = {
            "id": definition["id"] if definition else str(self._past_snowflake(5)),
            "name": command,
            "type": 1,
        }
        if leaf:
            data["options"] = leaf
        if resolved:
            data["resolved"] = resolved
        if definition is not None and definition.get("guild_id"):
            data["guild_id"] = definition["guild_id"]
        inter = self._new_interaction(2, user, channel, data)
        inter.command, inter.sub, inter.options = command, sub, dict(options or {})
        return self._dispatch_interaction(inter)

    def _check_visible(self, definition: JSON, guild: FakeGuild, user: FakeUser) -> None:
        """The Discord client offers a command only to members with its ``default_member_permissions``
        (Administrator has them all), unless an admin's override lets that member see it."""
        needed = int(definition.get("default_member_permissions") or 0)
        if definition.get("default_member_permissions") is None:
            return
        has = guild.permissions_of(user)
        if has & _ADMINISTRATOR or (needed and has & needed == needed):
            return
        if user.id in guild.command_overrides.get(definition["name"], set()):
            return
        raise ValueError(f"{user!r} cannot see /{definition['name']} in {guild!r} (needs {needed})")

    def press(self, user: FakeUser, message: StoredMessage, custom_id: str) -> FakeInteraction:
        """``user`` presses the component ``custom_id`` of ``message`` (a forged id is dispatched anyway)."""
        component = self._pressable(user, message, custom_id)
        kind = component.get("type", 2) if component else 2
        return self._component_interaction(user, message, {"custom_id": custom_id, "component_type": kind})

    def choose(
        self, user: FakeUser, message: StoredMessage, custom_id: str, values: Sequence[str]
    ) -> FakeInteraction:
        """``user`` picks ``values`` in the select menu ``custom_id`` of ``message``.

        When the message shows that string select, the values must be among its options and their number
        within ``min_values``–``max_values`` (the client allows nothing else); a forged id goes as is.
        """
        component = self._pressable(user, message, custom_id)
        kind = component.get("type", 3) if component else 3
        if component is not None and kind == 3:
            offered = {o.get("value") for o in component.get("options") or []}
            lo, hi = component.get("min_values", 1), component.get("max_values", 1)
            lo, hi = 1 if lo is None else lo, 1 if hi is None else hi
            if not set(values) <= offered or not lo <= len(values) <= hi:
                raise ValueError(
                    f"{list(values)} is not a valid choice of {custom_id!r} ({offered}, {lo}-{hi})"
                )
        data = {"custom_id": custom_id, "component_type": kind, "values": list(values)}
        inter = self._component_interaction(user, message, data)
        inter.values = list(values)
        return inter

    def submit_modal(
        self, user: FakeUser, opened_by: FakeInteraction, values: Mapping[str, str | Sequence[str]]
    ) -> FakeInteraction:
        """``user`` submits the modal that ``opened_by`` answered with (callback type 9)."""
        modal = opened_by.modal
        if modal is None:
            raise ValueError(f"{opened_by!r} did not open a modal")
        counter = itertools.count(1)

        def submitted(component: JSON) -> JSON:
            custom_id = component.get("custom_id")
            out: JSON = {"type": component.get("type"), "id": component.get("id") or next(counter)}
            if custom_id is not None:
                out["custom_id"] = custom_id
                value = values.get(custom_id, "")
                if component.get("type") == 4:
                    out["value"] = value if isinstance(value, str) else ",".join(value)
                else:
                    out["values"] = [value] if isinstance(value, str) else list(value)
            return out

        rows: list[JSON] = []
        for item in modal.get("components") or []:
            if item.get("type") == 1:
                rows.append(
                    {"type": 1, "id": next(counter), "components": [submitted(c) for c in item["components"]]}
                )
            elif item.get("type") == 18 and isinstance(item.get("component"), dict):
                rows.append({"type": 18, "id": next(counter), "component": submitted(item["component"])})
        inter = self._new_interaction(
            5, user, opened_by.channel, {"custom_id": modal.get("custom_id"), "components": rows}
        )
        if opened_by.message is not None:
            inter.message = opened_by.message
            inter.payload["message"] = opened_by.message.to_api()
        inter.custom_id = modal.get("custom_id")
        inter.opened_by = opened_by
        return self._dispatch_interaction(inter)

    def _pressable(self, user: FakeUser, message: StoredMessage, custom_id: str) -> JSON | None:
        if message.deleted:
            raise ValueError(f"message {message.id} was deleted")
        if message.ephemeral_for not in (None, user.id):
            raise ValueError(f"{user!r} cannot see the ephemeral message {message.id}")
        return message.component(custom_id)

    def _component_interaction(self, user: FakeUser, message: StoredMessage, data: JSON) -> FakeInteraction:
        inter = self._new_interaction(3, user, message.channel, data)
        inter.message = message
        inter.custom_id = data["custom_id"]
        inter.payload["message"] = message.to_api()
        return self._dispatch_interaction(inter)

    def _new_interaction(
        self, kind: int, user: FakeUser, channel: FakeChannel, data: JSON
    ) -> FakeInteraction:
        guild = self._guild_of(channel)
        if guild is not None:
            self.join(user, guild)
        self.users.setdefault(user.id, user)
        interaction_id = self._live_snowflake()
        token = f"aW50ZXJhY3Rpb246{interaction_id}:{secrets.token_urlsafe(24)}"
        payload: JSON = {
            "id": str(interaction_id),
            "application_id": str(self.application_id),
            "type": kind,
            "data": data,
            "token": token,
            "version": 1,
            "channel": self._interaction_channel(channel, user),
            "channel_id": str(channel.id),
            "locale": user.locale,
            "app_permissions": str(self._app_permissions(channel)),
            "entitlements": [],
            "entitlement_sku_ids": [],
            "authorizing_integration_owners": _owners(guild),
            "context": 0 if guild is not None else 1,
            "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
        }
        if guild is not None:
            payload["guild_id"] = str(guild.id)
            payload["guild_locale"] = guild.reported_locale
            payload["guild"] = {
                "id": str(guild.id),
                "locale": guild.reported_locale,
                "features": list(guild.features),
            }
            payload["member"] = {**self._member(guild, user), "permissions": str(guild.permissions_of(user))}
        else:
            payload["user"] = user.to_api()
        inter = FakeInteraction(
            id=interaction_id,
            token=token,
            type=kind,
            user=user,
            channel=channel,
            guild=guild,
            payload=payload,
            dispatched_at=self.now(),
        )
        self.interactions.append(inter)
        self._interactions[interaction_id] = inter
        self._by_token[token] = inter
        return inter

    @staticmethod
    def _app_permissions(channel: FakeChannel) -> int:
        """The bot's permissions in ``channel`` as an interaction reports them (``bot_permissions``): without
        Send Messages (in Threads) where it may not post (``bot_can_send`` false, whose posts answer 403
        50013)."""
        if channel.is_dm:
            return _DM_APP_PERMISSIONS
        if channel.bot_can_send:
            return channel.bot_permissions
        return channel.bot_permissions & ~(_SEND_MESSAGES | _SEND_IN_THREADS)

    def _interaction_channel(self, channel: FakeChannel, user: FakeUser) -> JSON:
        data = channel.to_api()
        guild = self._guild_of(channel)
        if guild is not None:
            data["permissions"] = str(guild.permissions_of(user))
        return data

    def _dispatch_interaction(self, inter: FakeInteraction) -> FakeInteraction:
        if self.gateway_lag > 0:  # created now (its snowflake and its 3 s count from now), delivered later
            asyncio.get_running_loop().call_later(self.gateway_lag, self._deliver_interaction, inter)
            return inter
        return self._deliver_interaction(inter)

    def _deliver_interaction(self, inter: FakeInteraction) -> FakeInteraction:
        session = self._session_for(inter.guild.id if inter.guild is not None else None)
        inter.session = session
        if session is not None and self._dispatch(session, "INTERACTION_CREATE", inter.payload):
            inter.delivered_at = self.now()
        self._notify()
        return inter

    def _options_payload(
        self,
        definition: JSON | None,
        options: dict[str, Any],
        guild: FakeGuild | None,
        resolved: JSON,
        strict: bool,
    ) -> list[JSON]:
        defs = {o["name"]: o for o in (definition or {}).get("options") or [] if o.get("type") not in (1, 2)}
        out: list[JSON] = []
        for name, value in options.items():
            spec_option = defs.get(name)
            if strict and spec_option is None:
                raise ValueError(f"no option {name!r}; the command takes {sorted(defs)}")
            kind = spec_option["type"] if spec_option else _OPTION_TYPES.get(type(value), 3)
            if isinstance(value, FakeUser):
                kind = kind if spec_option else 6
                resolved.setdefault("users", {})[str(value.id)] = value.to_api()
                if guild is not None:
                    member = self._member(guild, value)
                    member.pop("user", None)
                    resolved.setdefault("members", {})[str(value.id)] = member
                value = str(value.id)
            elif strict and not _option_value_fits(kind, value):
                raise ValueError(f"option {name!r} (type {kind}) cannot take {value!r}")
            choices = (spec_option or {}).get("choices")
            if strict and choices and value not in [c["value"] for c in choices]:
                raise ValueError(f"option {name!r} must be one of {[c['value'] for c in choices]}")
            out.append({"name": name, "type": kind, "value": value})
        if strict:
            missing = [n for n, o in defs.items() if o.get("required") and n not in options]
            if missing:
                raise ValueError(f"required options missing: {missing}")
        return out

    # -- commands --------------------------------------------------------------------------------------

    def commands(self, guild: FakeGuild | None = None) -> list[JSON]:
        """The registered application commands: global ones, or those of ``guild``."""
        return copy.deepcopy(self._commands.get(guild.id if guild is not None else None, []))

    def _command_names(self, guild: FakeGuild | None) -> list[str]:
        names = [c["name"] for c in self._commands.get(None, [])]
        if guild is not None:
            names += [c["name"] for c in self._commands.get(guild.id, [])]
        return names

    def _find_command(self, name: str, guild: FakeGuild | None) -> JSON | None:
        candidates = [
            *(self._commands.get(guild.id, []) if guild is not None else []),
            *self._commands.get(None, []),
        ]
        for command in candidates:
            if command["name"] != name or command.get("type", 1) != 1:
                continue
            context = 0 if guild is not None else 1
            contexts = command.get("contexts")
            if contexts is not None and context not in contexts:
                continue
            if guild is None and command.get("dm_permission") is False:
                continue
            return command
        return None

    def _store_commands(self, guild_id: int | None, commands: Sequence[JSON], *, replace: bool) -> list[JSON]:
        existing = {(c.get("type", 1), c["name"]): c for c in self._commands.get(guild_id, [])}
        stored: list[JSON] = [] if replace else list(self._commands.get(guild_id, []))
        result: list[JSON] = []
        for raw in commands:
            kind = raw.get("type") or 1
            old = existing.get((kind, raw["name"]))
            command = self._command_response(raw, guild_id, old["id"] if old else None)
            if not replace:
                stored = [c for c in stored if (c.get("type", 1), c["name"]) != (kind, raw["name"])]
            stored.append(command)
            result.append(command)
        self._commands[guild_id] = stored
        self._notify()
        return result

    def _command_response(self, raw: JSON, guild_id: int | None, command_id: str | None) -> JSON:
        permissions = raw.get("default_member_permissions")
        data: JSON = {
            "id": command_id or str(self._past_snowflake(5)),
            "application_id": str(self.application_id),
            "version": str(self._live_snowflake()),
            "default_member_permissions": None if permissions is None else str(permissions),
            "type": raw.get("type") or 1,
            "name": raw["name"],
            "description": raw.get("description") or "",
            "nsfw": bool(raw.get("nsfw")),
            "contexts": raw.get("contexts"),
            "integration_types": raw.get("integration_types") or [0],
        }
        for key in ("name_localizations", "description_localizations"):
            if raw.get(key) is not None:
                data[key] = dict(raw[key])
        if raw.get("options"):
            data["options"] = _drop_none(copy.deepcopy(raw["options"]))
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
        else:
            data["dm_permission"] = raw.get("dm_permission") is not False
        return data

    # -- recorded state --------------------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every HTTP request, in arrival order."""
        return list(self._calls)

    def find_calls(
        self, method: str | None = None, route: str | None = None, *, ok: bool | None = None
    ) -> list[Call]:
        """Calls filtered by method, route template (``/channels/{channel_id}/messages``) and success."""
        return [
            c
            for c in self._calls
            if (method is None or c.method == method.upper())
            and (route is None or c.route_template == route)
            and (ok is None or (c.status is not None and c.ok == ok))
        ]

    def rejected(self) -> list[Call]:
        """Calls refused for a reason other than a 429 (injected, or the limits') or closed DMs (50007)."""
        return [c for c in self._calls if c.rejected and c.code != 50007 and c.status != 429]

    def limited(self) -> list[Call]:
        """Calls the rate limits refused with a 429 (see :mod:`.fake_discord_limits`)."""
        return [c for c in self._calls if c.status == 429 and not c.injected]

    def channel_messages(self, channel: FakeChannel) -> list[StoredMessage]:
        """The messages of a channel everyone sees (no ephemerals, no deleted ones), oldest first."""
        return [
            m
            for m in self.messages.values()
            if m.channel is channel and not m.deleted and m.ephemeral_for is None
        ]

    def ephemerals(self, user: FakeUser) -> list[StoredMessage]:
        """The ephemeral messages shown to ``user`` (not deleted), oldest first."""
        return [m for m in self.messages.values() if m.ephemeral_for == user.id and not m.deleted]

    def dm_messages(self, user: FakeUser) -> list[StoredMessage]:
        """The messages of the DM channel with ``user`` (no ephemerals), oldest first."""
        channel = self._dms.get(user.id)
        return [] if channel is None else self.channel_messages(channel)

    def live_sessions(self) -> list[GatewaySession]:
        """Gateway sessions identified and connected now."""
        return [s for s in self.sessions if s.live]

    async def wait_for(
        self, predicate: Callable[[], _T], timeout: float = 5.0, *, interval: float = 0.01
    ) -> _T:
        """Wait until ``predicate()`` is truthy (checked on every recorded change and every ``interval``).

        Returns the truthy value; raises ``AssertionError`` listing the last calls after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            changed = self._changed
            value = predicate()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                recent = "\n  ".join(repr(c) for c in self._calls[-10:])
                raise AssertionError(f"condition not met within {timeout} s; last calls:\n  {recent}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(remaining, interval))

    async def wait_answered(self, interaction: FakeInteraction, timeout: float = 5.0) -> FakeInteraction:
        """Wait until ``interaction`` got its callback."""
        try:
            await self.wait_for(lambda: interaction.answered, timeout)
        except AssertionError as exc:
            raise AssertionError(f"{interaction!r} not answered within {timeout} s\n{exc}") from None
        return interaction

    # -- injected failures -----------------------------------------------------------------------------

    def inject_429(
        self,
        method: str | None = None,
        path_regex: str | None = None,
        count: int = 1,
        retry_after: float = 0.25,
        global_: bool = False,
    ) -> None:
        """Answer the next ``count`` requests matching ``method`` and ``path_regex`` (searched in the path
        after ``/api/v10``) with a 429: Discord's body and headers; recorded as injected, not rejected."""
        regex = re.compile(path_regex) if path_regex is not None else None
        self._injected.append(
            _Injected429(method.upper() if method else None, regex, count, retry_after, global_)
        )

    def _take_429(self, method: str, path: str, bucket: str) -> DiscordError | None:
        for rule in self._injected:
            if rule.remaining <= 0:
                continue
            if rule.method is not None and rule.method != method:
                continue
            if rule.path_regex is not None and not rule.path_regex.search(path):
                continue
            rule.remaining -= 1
            retry = rule.retry_after
            headers = {
                "Retry-After": str(max(1, math.ceil(retry))),
                "X-RateLimit-Scope": "global" if rule.global_ else "user",
                "Via": "1.1 google",
            }
            if rule.global_:
                headers["X-RateLimit-Global"] = "true"
            else:
                headers.update(
                    {
                        "X-RateLimit-Limit": "50",
                        "X-RateLimit-Remaining": "0",
                        "X-RateLimit-Reset": f"{time.time() + retry:.3f}",
                        "X-RateLimit-Reset-After": f"{retry:.3f}",
                        "X-RateLimit-Bucket": bucket,
                    }
                )
            error = DiscordError(
                429,
                0,
                "You are being rate limited.",
                extra={"retry_after": retry, "global": rule.global_},
                headers=headers,
                detail="injected 429",
            )
            error.injected = True
            return error
        return None

    # -- gateway ---------------------------------------------------------------------------------------

    async def disconnect(self, session: GatewaySession | None = None, *, code: int = 4000) -> None:
        """Close the live connection of ``session`` (every live one if ``None``) with ``code``, as Discord
        drops a connection; with a resumable code (4000) the client RESUMEs."""
        targets = [session] if session is not None else self.live_sessions()
        for s in targets:
            if s._conn is not None:
                s._conn.close(code, "Disconnected by FakeDiscord")
        await asyncio.sleep(0)

    async def drop_shard(self, session: GatewaySession) -> None:
        """An outage of one shard: its connection closes (1006-like, resumable) and the gateway refuses every
        new connection until :attr:`gateway_down` is set false again (the client retries with a backoff)."""
        self.gateway_down = True
        await self.disconnect(session, code=4000)

    def request_reconnect(self, session: GatewaySession) -> None:
        """Send op 7 RECONNECT to a session (the client closes and RESUMEs)."""
        if session._conn is not None:
            session._conn.send({"op": 7, "d": None})

    def _session_for(self, guild_id: int | None) -> GatewaySession | None:
        candidates = [s for s in self.sessions if s.identified and (s.live or (s.resumable and s.closed))]
        for live in (True, False):
            for s in reversed(candidates):
                if s.live != live:
                    continue
                shard = 0 if guild_id is None else (guild_id >> 22) % s.shard_count
                if shard == s.shard_id:
                    return s
        return None

    def _dispatch(self, session: GatewaySession, event: str, data: JSON) -> bool:
        """Number and keep a dispatch; send it if the session is connected (True if it was)."""
        session.seq += 1
        session.events.append((session.seq, event, data))
        if session._conn is None or session._conn.closing:
            return False
        session._conn.send({"op": 0, "t": event, "s": session.seq, "d": data})
        return True

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=16 * 1024 * 1024)
        if not ws.can_prepare(request).ok:
            return await self._outside_api(request)
        if self.gateway_down:
            self.refused_connections += 1
            return web.Response(status=503, text="upstream connect error")
        await ws.prepare(request)
        conn = _Connection(ws, request.query.get("compress"))
        self._connections.add(conn)
        conn.writer = asyncio.create_task(conn.run_writer())
        if request.query.get("v") != "10":
            conn.close(4012, "Invalid API version")
        elif request.query.get("encoding", "json") != "json":
            conn.close(4002, "Decode error (FakeDiscord speaks JSON only)")
        elif conn.compress not in (None, "zlib-stream") and not (
            conn.compress == "zstd-stream" and zstandard
        ):
            conn.close(4002, f"Unsupported compression {conn.compress}")
        else:
            conn.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms, "_trace": ["fake"]}})
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    self._on_gateway_message(conn, msg.data)
                elif msg.type == WSMsgType.BINARY:
                    conn.close(4002, "Decode error")
        finally:
            self._on_disconnect(conn, ws.close_code)
            if conn.writer is not None and not conn.writer.done():
                conn.closing = True
                conn.outbox.put_nowait(_Close(1000, ""))
                with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(conn.writer), 1.0)
                conn.writer.cancel()
            self._connections.discard(conn)
        return ws

    def _on_disconnect(self, conn: _Connection, code: int | None) -> None:
        session = conn.session
        if session is None or session._conn is not conn:
            return
        session._conn = None
        session.closed = True
        session.close_code = conn.closed_by_server or code
        by_client = conn.closed_by_server is None
        if (by_client and code in (1000, 1001)) or (not by_client and session.close_code not in (4000, 1006)):
            session.resumable = False
        self._notify()

    def _on_gateway_message(self, conn: _Connection, text: str) -> None:
        try:
            msg = json.loads(text)
            op, d = msg["op"], msg.get("d")
        except (ValueError, KeyError, TypeError):
            conn.close(4002, "Decode error")
            return
        session = conn.session
        if op == 1:
            conn.send({"op": 11})
            if session is not None:
                session.heartbeats += 1
        elif op == 2:
            self._identify(conn, d if isinstance(d, dict) else {})
        elif op == 6:
            self._resume(conn, d if isinstance(d, dict) else {})
        elif session is None:
            conn.close(4003, "Not authenticated.")
        elif op == 3:
            session.presence = d
        elif op == 4:
            pass  # voice state update: no voice here
        elif op == 8:
            self._request_members(session, d if isinstance(d, dict) else {})
        else:
            conn.close(4001, "Unknown opcode.")

    def _identify(self, conn: _Connection, d: JSON) -> None:
        if conn.session is not None:
            conn.close(4005, "Already authenticated.")
            return
        last, now = self._last_identify, self.now()
        if self.identify_spacing and last is not None and now - last < self.identify_spacing:
            self.refused_identifies += 1  # over max_concurrency (1 per window): the session is not started
            conn.send({"op": 9, "d": False})
            self._notify()
            return
        shard = d.get("shard") or [0, 1]
        shard_id, count = [*shard, 0, 0][:2] if isinstance(shard, list) else (-1, 0)
        session = GatewaySession(
            session_id=secrets.token_hex(16),
            shard_id=shard_id,
            shard_count=count,
            intents=d.get("intents"),
            identify={k: v for k, v in d.items() if k != "token"},
            started_at=self.now(),
            compress=conn.compress,
        )
        self.sessions.append(session)
        failure: tuple[int, str] | None = None
        intents = d.get("intents")
        if d.get("token") != self.token:
            failure = (4004, "Authentication failed.")
        elif not (isinstance(count, int) and isinstance(shard_id, int) and 0 <= shard_id < count):
            failure = (4010, "Invalid shard.")
        elif not isinstance(intents, int) or intents < 0:
            failure = (4013, "Invalid intent(s).")
        elif intents & PRIVILEGED_INTENTS & ~self.privileged_intents:
            failure = (4014, "Disallowed intent(s).")
        if failure is not None:
            session.closed, session.resumable, session.close_code = True, False, failure[0]
            conn.close(*failure)
            self._notify()
            return
        session.identified = True
        self._last_identify = now
        conn.session = session
        session._conn = conn
        guilds = [g for g in self.guilds.values() if (g.id >> 22) % count == shard_id]
        ready: JSON = {
            "v": 10,
            "user": {**self.bot_user.to_api(), "verified": True, "mfa_enabled": False, "email": None},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.application_id), "flags": self._application_flags()},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "user_settings": {},
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["madrid", "rotterdam"],
            "_trace": ["fake-discord"],
        }
        if "shard" in d:
            ready["shard"] = [shard_id, count]
        self._dispatch(session, "READY", ready)
        for guild in guilds:
            self._dispatch(session, "GUILD_CREATE", self._guild_create(guild, int(intents or 0)))
            session.guild_ids.append(guild.id)
        self._notify()

    def _resume(self, conn: _Connection, d: JSON) -> None:
        session = next((s for s in self.sessions if s.session_id == d.get("session_id")), None)
        if d.get("token") != self.token:
            conn.close(4004, "Authentication failed.")
            return
        if session is None or not session.identified or not session.resumable:
            conn.send({"op": 9, "d": False})
            return
        if session._conn is not None and session._conn is not conn:
            old = session._conn
            session._conn = None
            old.session = None
            old.close(4009, "Session resumed elsewhere")
        conn.session = session
        session._conn = conn
        session.closed = False
        session.resumes += 1
        session.compress = conn.compress
        seq = d.get("seq") or 0
        for s, event, data in session.events:
            if s > seq:
                conn.send({"op": 0, "t": event, "s": s, "d": data})
                replayed = self._interactions.get(int(data["id"])) if event == "INTERACTION_CREATE" else None
                if replayed is not None and replayed.delivered_at is None:
                    replayed.delivered_at = self.now()
        self._dispatch(session, "RESUMED", {"_trace": ["fake-discord"]})
        self._notify()

    def _request_members(self, session: GatewaySession, d: JSON) -> None:
        guild = self.guilds.get(int(d.get("guild_id") or 0))
        if guild is None:
            return
        members = guild.members
        if d.get("user_ids"):
            wanted = {int(u) for u in d["user_ids"]}
            members = [m for m in members if m.id in wanted]
        elif d.get("query"):
            members = [m for m in members if m.name.lower().startswith(str(d["query"]).lower())]
        limit = d.get("limit") or 0
        if limit:
            members = members[:limit]
        chunk: JSON = {
            "guild_id": str(guild.id),
            "members": [self._member(guild, m) for m in members],
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [],
        }
        if d.get("nonce") is not None:
            chunk["nonce"] = d["nonce"]
        self._dispatch(session, "GUILD_MEMBERS_CHUNK", chunk)

    def _application_flags(self) -> int:
        flags = 1 << 23  # APPLICATION_COMMAND_BADGE
        if self.privileged_intents & GUILD_PRESENCES:
            flags |= 1 << 13
        if self.privileged_intents & GUILD_MEMBERS:
            flags |= 1 << 15
        if self.privileged_intents & MESSAGE_CONTENT:
            flags |= 1 << 19
        return flags

    def _member(self, guild: FakeGuild, user: FakeUser) -> JSON:
        return {
            "user": user.to_api(),
            "roles": [str(guild.bot_role_id)] if user is self.bot_user else [],
            "nick": None,
            "avatar": None,
            "banner": None,
            "premium_since": None,
            "joined_at": _iso(guild.joined_at),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
            "unusual_dm_activity_until": None,
        }

    def _roles(self, guild: FakeGuild) -> list[JSON]:
        def role(role_id: int, name: str, permissions: int, position: int, managed: bool) -> JSON:
            data: JSON = {
                "id": str(role_id),
                "name": name,
                "description": None,
                "permissions": str(permissions),
                "position": position,
                "color": 0,
                "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
                "hoist": False,
                "managed": managed,
                "mentionable": False,
                "icon": None,
                "unicode_emoji": None,
                "flags": 0,
            }
            if managed:
                data["tags"] = {"bot_id": str(self.application_id)}
            return data

        return [
            role(guild.id, "@everyone", USER_PERMISSIONS, 0, False),
            role(guild.bot_role_id, self.bot_user.name, BOT_PERMISSIONS, 1, True),
        ]

    def _guild_api(self, guild: FakeGuild) -> JSON:
        return {
            "id": str(guild.id),
            "name": guild.name,
            "icon": None,
            "description": None,
            "home_header": None,
            "splash": None,
            "discovery_splash": None,
            "features": list(guild.features),
            "banner": None,
            "owner_id": str(self.owner.id),
            "application_id": None,
            "region": "deprecated",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "system_channel_id": str(guild.channels[0].id) if guild.channels else None,
            "system_channel_flags": 0,
            "widget_enabled": False,
            "widget_channel_id": None,
            "verification_level": 0,
            "roles": self._roles(guild),
            "default_message_notifications": 1,
            "mfa_level": 0,
            "explicit_content_filter": 0,
            "max_presences": None,
            "max_members": 25_000_000,
            "max_stage_video_channel_users": 50,
            "max_video_channel_users": 25,
            "vanity_url_code": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": guild.reported_locale,
            "rules_channel_id": None,
            "safety_alerts_channel_id": None,
            "public_updates_channel_id": None,
            "premium_progress_bar_enabled": False,
            "nsfw": False,
            "nsfw_level": 0,
            "emojis": [],
            "stickers": [],
            "incidents_data": None,
        }

    def _guild_create(self, guild: FakeGuild, intents: int) -> JSON:
        members = guild.members if intents & GUILD_MEMBERS else [self.bot_user]
        return {
            **self._guild_api(guild),
            "joined_at": _iso(guild.joined_at),
            "large": False,
            "unavailable": False,
            "member_count": len(guild.members),
            "voice_states": [],
            "members": [self._member(guild, m) for m in members],
            "channels": [c.to_api(with_guild_id=False) for c in guild.channels],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "lazy": True,
        }

    # -- HTTP plumbing ---------------------------------------------------------------------------------

    async def _outside_api(self, request: web.Request) -> web.StreamResponse:
        call = Call(
            len(self._calls), request.method, request.path, None, dict(request.query), None, self.now()
        )
        self._calls.append(call)
        error = DiscordError(404, 0, "404: Not Found", detail=f"{request.path} is not under /api/v10")
        return self._finish(call, error.status, error.payload(), {}, error=error)

    def _finish(
        self,
        call: Call,
        status: int,
        body: Any,
        headers: Mapping[str, str],
        *,
        error: DiscordError | None = None,
    ) -> web.Response:
        call.status = status
        call.response = body
        call.finished = self.now()
        if error is not None:
            call.code = error.code
            call.detail = error.detail
            call.injected = error.injected
            call.rejected = not error.injected
        self._notify()
        if body is None:
            return web.Response(status=status, headers=dict(headers))
        return web.Response(
            status=status,
            body=json.dumps(body).encode(),
            headers={**headers, "Content-Type": "application/json"},
        )

    async def _read_body(self, request: web.Request) -> tuple[Any, str, list[JSON]]:
        if request.method in ("GET", "HEAD", "DELETE") or not request.can_read_body:
            await request.read()
            return None, "application/json", []
        ctype = request.content_type
        if ctype == "multipart/form-data":
            form = await request.post()
            body: Any = {}
            files: list[JSON] = []
            for key, value in form.items():
                if isinstance(value, web.FileField):
                    content = value.file.read()
                    files.append(
                        {"field": key, "filename": value.filename, "size": len(content), "content": content}
                    )
                elif key == "payload_json":
                    text = value if isinstance(value, str) else bytes(value).decode()
                    body = self._parse_json(text)
                else:
                    body[key] = value
            return body, ctype, files
        raw = await request.read()
        if not raw:
            return None, "application/json", []
        return self._parse_json(raw.decode("utf-8", errors="replace")), "application/json", []

    @staticmethod
    def _parse_json(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            raise DiscordError(
                400, 50109, "The request body contains invalid JSON.", detail=str(exc)
            ) from exc

    def _ratelimit_headers(self, template: str, params: Mapping[str, str]) -> tuple[dict[str, str], str]:
        major = next(
            (params[k] for k in ("channel_id", "guild_id", "webhook_id", "interaction_id") if k in params), ""
        )
        bucket = hashlib.sha1(f"{template}:{major}".encode()).hexdigest()[:32]
        headers = {
            "X-RateLimit-Limit": "50",
            "X-RateLimit-Remaining": "49",
            "X-RateLimit-Reset": f"{time.time() + 1:.3f}",
            "X-RateLimit-Reset-After": "1.000",
            "X-RateLimit-Bucket": bucket,
        }
        return headers, bucket

    def _check_auth(self, request: web.Request, op: Operation) -> None:
        header = request.headers.get("Authorization")
        needed = op.bot_token == "required" or (op.bot_token == "optional" and header is not None)
        if needed and header != f"Bot {self.token}":
            raise DiscordError(401, 0, "401: Unauthorized", detail="missing or wrong Authorization header")

    async def _api(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        call = Call(len(self._calls), request.method, path, None, dict(request.query), None, self.now())
        self._calls.append(call)
        headers: dict[str, str] = {}
        try:
            body, ctype, files = await self._read_body(request)
            call.json = body
            match = self.spec.match(request.method, path)
            call.route_template = match.template
            headers, bucket = self._ratelimit_headers(match.template, match.params)
            self._check_auth(request, match.operation)
            injected = self._take_429(request.method, path, bucket)
            if injected is not None:
                raise injected
            if self.rate_limits is not None:
                headers = self.rate_limits.admit(request.method, match.template, match.params, headers)
            query, errors = self.spec.validate_query(match.operation, request.query)
            errors = self.spec.validate_path_params(match.operation, match.params) + errors
            if errors:
                raise form_error(errors)
            self._validate_body(match.operation, body, ctype)
            handler = self._handlers().get((request.method, match.template))
            if handler is None:
                raise DiscordError(
                    501, 0, "501: Not Implemented", detail=f"FakeDiscord does not implement {match.template}"
                )
            ctx = _Ctx(request, call, match.params, query, body, files)
            status, result = await handler(ctx)
        except DiscordError as exc:
            return self._finish(call, exc.status, exc.payload(), {**headers, **exc.headers}, error=exc)
        except Exception as exc:  # a bug of the fake: answer 500 and keep it visible in rejected()
            error = DiscordError(500, 0, "500: Internal Server Error", detail=f"FakeDiscord crashed: {exc!r}")
            return self._finish(call, 500, error.payload(), headers, error=error)
        return self._finish(call, status, result, headers)

    def _validate_body(self, op: Operation, body: Any, ctype: str) -> None:
        if not op.body_types:
            return
        for_schema = _spec_workarounds(op, body)
        explicit = self._explicit_checks(op, body)
        paths = {tuple(map(str, e.path)) for e in explicit}
        schema = [
            e for e in self.spec.validate_body(op, for_schema, ctype) if tuple(map(str, e.path)) not in paths
        ]
        errors = explicit + schema
        if errors:
            raise form_error(errors)

    def _explicit_checks(self, op: Operation, body: Any) -> list[FieldError]:
        oid = op.operation_id
        if not isinstance(body, (dict, list)):
            return []
        if oid in ("bulk_set_application_commands", "bulk_set_guild_application_commands"):
            return check_commands(body if isinstance(body, list) else [], self.spec.locales)
        if not isinstance(body, dict):
            return []
        if oid in ("create_application_command", "create_guild_application_command"):
            return check_command(body, self.spec.locales)
        if oid in ("update_application_command", "update_guild_application_command"):
            return check_command({"name": "x", "description": "x", **body}, self.spec.locales)
        if oid == "create_message":
            return check_message(body, "create")
        if oid == "update_message":
            return check_message(body, "edit")
        if oid == "execute_webhook":
            return check_message(body, "followup")
        if oid in ("update_original_webhook_message", "update_webhook_message"):
            return check_message(body, "webhook_edit")
        if oid == "create_interaction_response" and isinstance(body.get("data"), dict):
            kind = body.get("type")
            if kind in (4, 5):
                return check_message(body["data"], "interaction", prefix=("data",))
            if kind == 7:
                return check_message(body["data"], "update", prefix=("data",))
        if oid == "create_dm" and not body.get("recipient_id"):
            return [FieldError(("recipient_id",), "BASE_TYPE_REQUIRED", "This field is required")]
        return []

    def _handlers(self) -> dict[tuple[str, str], Callable[[_Ctx], Any]]:
        cmds = "/applications/{application_id}/commands"
        gcmds = "/applications/{application_id}/guilds/{guild_id}/commands"
        msgs = "/channels/{channel_id}/messages"
        hook = "/webhooks/{webhook_id}/{webhook_token}"
        return {
            ("GET", "/users/@me"): self._get_me,
            ("GET", "/users/{user_id}"): self._get_user,
            ("GET", "/oauth2/applications/@me"): self._get_application,
            ("GET", "/applications/@me"): self._get_application,
            ("GET", "/gateway"): self._get_gateway,
            ("GET", "/gateway/bot"): self._get_gateway_bot,
            ("GET", cmds): self._list_commands,
            ("PUT", cmds): self._put_commands,
            ("POST", cmds): self._post_command,
            ("GET", cmds + "/{command_id}"): self._get_command,
            ("PATCH", cmds + "/{command_id}"): self._patch_command,
            ("DELETE", cmds + "/{command_id}"): self._delete_command,
            ("GET", gcmds): self._list_commands,
            ("PUT", gcmds): self._put_commands,
            ("POST", gcmds): self._post_command,
            ("GET", gcmds + "/{command_id}"): self._get_command,
            ("PATCH", gcmds + "/{command_id}"): self._patch_command,
            ("DELETE", gcmds + "/{command_id}"): self._delete_command,
            ("POST", "/users/@me/channels"): self._create_dm,
            ("GET", "/channels/{channel_id}"): self._get_channel,
            ("GET", msgs): self._list_messages,
            ("POST", msgs): self._post_message,
            ("GET", msgs + "/{message_id}"): self._get_message,
            ("PATCH", msgs + "/{message_id}"): self._patch_message,
            ("DELETE", msgs + "/{message_id}"): self._delete_message,
            ("POST", "/channels/{channel_id}/typing"): self._typing,
            ("POST", "/interactions/{interaction_id}/{interaction_token}/callback"): self._callback,
            ("POST", hook): self._followup,
            ("GET", hook + "/messages/@original"): self._get_webhook_message,
            ("PATCH", hook + "/messages/@original"): self._patch_webhook_message,
            ("DELETE", hook + "/messages/@original"): self._delete_webhook_message,
            ("GET", hook + "/messages/{message_id}"): self._get_webhook_message,
            ("PATCH", hook + "/messages/{message_id}"): self._patch_webhook_message,
            ("DELETE", hook + "/messages/{message_id}"): self._delete_webhook_message,
            ("GET", "/guilds/{guild_id}"): self._get_guild,
            ("GET", "/guilds/{guild_id}/channels"): self._get_guild_channels,
            ("GET", "/guilds/{guild_id}/roles"): self._get_guild_roles,
            ("GET", "/guilds/{guild_id}/members/{user_id}"): self._get_member,
        }

    # -- lookups ---------------------------------------------------------------------------------------

    def _channel(self, ctx: _Ctx) -> FakeChannel:
        channel = self.channels.get(int(ctx.params["channel_id"]))
        if channel is None:
            raise DiscordError(404, 10003, "Unknown Channel")
        return channel

    def _guild(self, ctx: _Ctx) -> FakeGuild:
        guild = self.guilds.get(int(ctx.params["guild_id"]))
        if guild is None:
            raise DiscordError(404, 10004, "Unknown Guild")
        return guild

    def _channel_message(self, ctx: _Ctx, channel: FakeChannel) -> StoredMessage:
        message = self.messages.get(int(ctx.params["message_id"]))
        if message is None or message.deleted or message.channel is not channel or message.ephemeral:
            raise DiscordError(404, 10008, "Unknown Message")
        return message

    def _check_application(self, ctx: _Ctx) -> int | None:
        if int(ctx.params["application_id"]) != self.application_id:
            raise DiscordError(403, 50001, "Missing Access", detail="another application's commands")
        if "guild_id" in ctx.params:
            guild = self.guilds.get(int(ctx.params["guild_id"]))
            if guild is None:
                raise DiscordError(403, 50001, "Missing Access", detail="the bot is not in that guild")
            return guild.id
        return None

    # -- users, application, gateway -------------------------------------------------------------------

    async def _get_me(self, ctx: _Ctx) -> tuple[int, Any]:
        me = {
            **self.bot_user.to_api(),
            "mfa_enabled": False,
            "locale": "en-US",
            "verified": True,
            "email": None,
        }
        return 200, me

    async def _get_user(self, ctx: _Ctx) -> tuple[int, Any]:
        user = self.users.get(int(ctx.params["user_id"]))
        if user is None:
            raise DiscordError(404, 10013, "Unknown User")
        return 200, user.to_api()

    async def _get_application(self, ctx: _Ctx) -> tuple[int, Any]:
        flags = self._application_flags()
        return 200, {
            "id": str(self.application_id),
            "name": self.bot_user.name,
            "icon": None,
            "description": "",
            "type": None,
            "bot": self.bot_user.to_api(),
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": flags,
            "flags_new": str(flags),
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "role_connections_verification_url": None,
            "owner": self.owner.to_api(),
            "approximate_guild_count": len(self.guilds),
            "approximate_user_install_count": 0,
            "approximate_user_authorization_count": 0,
            "explicit_content_filter": 0,
            "team": None,
            "eligible_oauth2_scopes": ["bot", "applications.commands"],
            "rpc_origins": [],
            "tags": [],
            "integration_types_config": {"0": {}},
        }

    async def _get_gateway(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, {"url": self.gateway_url}

    async def _get_gateway_bot(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, {
            "url": self.gateway_url,
            "shards": self.recommended_shards,
            "session_start_limit": {
                "total": 1000,
                "remaining": 999,
                "reset_after": 86_400_000,
                "max_concurrency": 1,
            },
        }

    # -- commands --------------------------------------------------------------------------------------

    async def _list_commands(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, copy.deepcopy(self._commands.get(self._check_application(ctx), []))

    async def _put_commands(self, ctx: _Ctx) -> tuple[int, Any]:
        guild_id = self._check_application(ctx)
        return 200, self._store_commands(guild_id, ctx.body or [], replace=True)

    async def _post_command(self, ctx: _Ctx) -> tuple[int, Any]:
        guild_id = self._check_application(ctx)
        kind = ctx.body.get("type") or 1
        exists = any(
            (c.get("type", 1), c["name"]) == (kind, ctx.body["name"])
            for c in self._commands.get(guild_id, [])
        )
        return (200 if exists else 201), self._store_commands(guild_id, [ctx.body], replace=False)[0]

    def _command(self, ctx: _Ctx) -> tuple[int | None, JSON]:
        guild_id = self._check_application(ctx)
        for command in self._commands.get(guild_id, []):
            if command["id"] == ctx.params["command_id"]:
                return guild_id, command
        raise DiscordError(404, 10063, "Unknown application command")

    async def _get_command(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, copy.deepcopy(self._command(ctx)[1])

    async def _patch_command(self, ctx: _Ctx) -> tuple[int, Any]:
        guild_id, command = self._command(ctx)
        merged = {**command, **{k: v for k, v in ctx.body.items() if k != "id"}}
        updated = self._command_response(merged, guild_id, command["id"])
        self._commands[guild_id] = [updated if c is command else c for c in self._commands[guild_id]]
        return 200, updated

    async def _delete_command(self, ctx: _Ctx) -> tuple[int, Any]:
        guild_id, command = self._command(ctx)
        self._commands[guild_id] = [c for c in self._commands[guild_id] if c is not command]
        return 204, None

    # -- channels and messages -------------------------------------------------------------------------

    async def _create_dm(self, ctx: _Ctx) -> tuple[int, Any]:
        user = self.users.get(int(ctx.body["recipient_id"]))
        if user is None or user.bot:
            raise DiscordError(400, 50033, "Invalid Recipient(s)")
        return 200, self.dm_channel(user).to_api()

    async def _get_channel(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, self._channel(ctx).to_api()

    async def _typing(self, ctx: _Ctx) -> tuple[int, Any]:
        self._writable(self._channel(ctx))
        return 204, None

    def _writable(self, channel: FakeChannel) -> None:
        if channel.is_dm:
            assert channel.recipient is not None
            if not channel.recipient.dms_open:
                raise DiscordError(403, 50007, "Cannot send messages to this user")
        elif not channel.bot_can_send or ~channel.bot_permissions & (
            _VIEW_CHANNEL | (_SEND_IN_THREADS if channel.is_thread else _SEND_MESSAGES)
        ):
            raise DiscordError(403, 50013, "Missing Permissions")

    async def _list_messages(self, ctx: _Ctx) -> tuple[int, Any]:
        channel = self._channel(ctx)
        messages = list(reversed(self.channel_messages(channel)))
        if "before" in ctx.query:
            messages = [m for m in messages if m.id < int(ctx.query["before"])]
        if "after" in ctx.query:
            messages = [m for m in messages if m.id > int(ctx.query["after"])]
        limit = ctx.query.get("limit", 50)
        return 200, [m.to_api() for m in messages[:limit]]

    async def _post_message(self, ctx: _Ctx) -> tuple[int, Any]:
        channel = self._channel(ctx)
        self._writable(channel)
        if ctx.files and not channel.is_dm and not channel.bot_permissions & _ATTACH_FILES:
            raise DiscordError(403, 50013, "Missing Permissions", detail="a file without Attach Files")
        body: JSON = self._embeds_allowed(channel, ctx.body or {})
        attachments = [self._attachment(f) for f in ctx.files]
        if is_empty_message(body) and not attachments:
            raise DiscordError(400, 50006, "Cannot send an empty message")
        reference = body.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id"):
            target = self.messages.get(int(reference["message_id"]))
            if (target is None or target.deleted) and reference.get("fail_if_not_exists") is not False:
                raise form_error(
                    [
                        FieldError(
                            ("message_reference",), "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
                        )
                    ]
                )
        message = self._create_message(channel, body, attachments=attachments, via="channel")
        return 200, message.to_api()

    @staticmethod
    def _embeds_allowed(channel: FakeChannel, body: JSON) -> JSON:
        """A post's or an edit's body as Discord takes it in a channel where the bot lacks Embed Links: a
        message whose only text is in its embeds is refused (403 50013), the embeds of one with content are
        dropped silently (its content and components stay)."""
        if not body.get("embeds") or channel.is_dm or channel.bot_permissions & _EMBED_LINKS:
            return body
        if not body.get("content"):
            raise DiscordError(403, 50013, "Missing Permissions", detail="an embed without Embed Links")
        return {**body, "embeds": []}

    async def _get_message(self, ctx: _Ctx) -> tuple[int, Any]:
        channel = self._channel(ctx)
        return 200, self._channel_message(ctx, channel).to_api()

    async def _patch_message(self, ctx: _Ctx) -> tuple[int, Any]:
        channel = self._channel(ctx)
        message = self._channel_message(ctx, channel)
        if message.author is not self.bot_user:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        body = ctx.body or {}
        if body.get("embeds") and not channel.is_dm and not channel.bot_permissions & _EMBED_LINKS:
            body = self._embeds_allowed(channel, {"content": message.content, **body})
        self._apply_edit(message, body, via="channel", files=ctx.files)
        return 200, message.to_api()

    async def _delete_message(self, ctx: _Ctx) -> tuple[int, Any]:
        channel = self._channel(ctx)
        message = self._channel_message(ctx, channel)
        if message.author is not self.bot_user:
            if channel.is_dm:
                raise DiscordError(403, 50003, "Cannot execute action on a DM channel")
            raise DiscordError(403, 50013, "Missing Permissions")
        message.deleted = True
        return 204, None

    def _attachment(self, file: JSON) -> JSON:
        attachment_id = self._live_snowflake()
        self.uploads[str(attachment_id)] = file.get("content", b"")
        url = f"https://cdn.discordapp.com/attachments/0/{attachment_id}/{file['filename']}"
        return {
            "id": str(attachment_id),
            "filename": file["filename"],
            "size": file["size"],
            "url": url,
            "proxy_url": url,
        }

    def _create_message(
        self,
        channel: FakeChannel,
        data: JSON,
        *,
        via: str,
        ephemeral_for: int | None = None,
        interaction: FakeInteraction | None = None,
        loading: bool = False,
        message_type: int = 0,
        attachments: Sequence[JSON] = (),
    ) -> StoredMessage:
        flags = (data.get("flags") or 0) & (SUPPRESS_EMBEDS | IS_COMPONENTS_V2)
        if ephemeral_for is not None:
            flags |= EPHEMERAL
        if loading:
            flags |= LOADING
        message = StoredMessage(
            id=self._live_snowflake(),
            channel=channel,
            author=self.bot_user,
            content=data.get("content") or "",
            components=copy.deepcopy(data.get("components") or []),
            embeds=copy.deepcopy(data.get("embeds") or []),
            flags=flags,
            created_at=self.now(),
            created_wall=time.time(),
            ephemeral_for=ephemeral_for,
            type=message_type,
            webhook_id=self.application_id if interaction is not None else None,
            interaction=interaction,
            attachments=list(attachments),
        )
        self._record_version(message, via)
        self.messages[message.id] = message
        if ephemeral_for is None:
            channel.last_message_id = message.id
        self._notify()
        return message

    def _record_version(self, message: StoredMessage, via: str) -> None:
        message.history.append(message.text)
        message.versions.append(
            MessageVersion(
                message.content,
                copy.deepcopy(message.components),
                copy.deepcopy(message.embeds),
                message.flags,
                self.now(),
                via,
            )
        )

    def _apply_edit(
        self, message: StoredMessage, data: JSON, *, via: str, files: Sequence[JSON] = ()
    ) -> None:
        content = (data.get("content") or "") if "content" in data else message.content
        components = (data.get("components") or []) if "components" in data else message.components
        embeds = (data.get("embeds") or []) if "embeds" in data else message.embeds
        attachments = message.attachments
        if "attachments" in data:
            keep = {str(a.get("id")) for a in data.get("attachments") or [] if isinstance(a, dict)}
            attachments = [a for a in message.attachments if a["id"] in keep]
        attachments = [*attachments, *(self._attachment(f) for f in files)]
        if (
            is_empty_message({"content": content, "components": components, "embeds": embeds})
            and not attachments
        ):
            raise DiscordError(400, 50006, "Cannot send an empty message")
        was_loading = message.loading
        message.content = content
        message.components = copy.deepcopy(components)
        message.embeds = copy.deepcopy(embeds)
        message.attachments = attachments
        if data.get("flags") is not None:
            settable = SUPPRESS_EMBEDS | IS_COMPONENTS_V2
            message.flags = (message.flags & ~settable) | (data["flags"] & settable)
        message.flags &= ~LOADING
        if not was_loading:
            message.edits += 1
            message.edited_wall = time.time()
        self._record_version(message, via)
        self._notify()

    # -- interactions ----------------------------------------------------------------------------------

    async def _callback(self, ctx: _Ctx) -> tuple[int, Any]:
        inter = self._interactions.get(int(ctx.params["interaction_id"]))
        if inter is None or inter.token != ctx.params["interaction_token"]:
            raise DiscordError(404, 10062, "Unknown interaction", detail="no such interaction id and token")
        if inter.answered:
            raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
        age = self.now() - inter.dispatched_at
        if age > self.interaction_timeout:
            inter.late_callbacks += 1
            raise DiscordError(
                404, 10062, "Unknown interaction", detail=f"answered {age:.3f} s after the dispatch"
            )
        body: JSON = ctx.body
        kind = body["type"]
        allowed = set(_CALLBACKS_FOR.get(inter.type, frozenset()))
        if inter.type == 5 and inter.message is None:
            allowed -= {6, 7}
        if kind not in allowed:
            raise form_error(
                [
                    FieldError(
                        ("type",),
                        "INTERACTION_CALLBACK_TYPE_INVALID",
                        f"Callback type {kind} is not valid for an interaction of type {inter.type}",
                    )
                ]
            )
        data: JSON = body.get("data") or {}
        if kind in (4, 5):
            if kind == 4 and is_empty_message(data):
                raise DiscordError(400, 50006, "Cannot send an empty message")
            ephemeral = bool((data.get("flags") or 0) & EPHEMERAL)
            inter.response = self._create_message(
                inter.channel,
                data if kind == 4 else {"flags": data.get("flags")},
                via=f"callback {kind}",
                ephemeral_for=inter.user.id if ephemeral else None,
                interaction=inter,
                loading=kind == 5,
                message_type=20 if inter.type == 2 else 0,
            )
            inter.ephemeral = ephemeral
        elif kind in (6, 7):
            assert inter.message is not None
            if kind == 7 and data:
                self._apply_edit(inter.message, data, via="callback 7")
            inter.response = inter.message
            inter.ephemeral = inter.message.ephemeral
        elif kind == 8:
            inter.choices = list(data.get("choices") or [])
        elif kind == 9:
            inter.modal = copy.deepcopy(data)
        inter.answered = True
        inter.callback_type = kind
        inter.answered_at = self.now()
        inter.callback = copy.deepcopy(body)
        self._notify()
        if not ctx.query.get("with_response"):
            return 204, None
        result: JSON = {"id": str(inter.id), "type": inter.type}
        if inter.guild is not None:
            result["guild_id"] = str(inter.guild.id)
        result["channel_id"] = str(inter.channel.id)
        answer: JSON = {"interaction": result}
        if kind in (4, 5, 7) and inter.response is not None:
            result["response_message_id"] = str(inter.response.id)
            result["response_message_loading"] = kind == 5
            result["response_message_ephemeral"] = inter.response.ephemeral
        if kind in (4, 7) and inter.response is not None:
            answer["resource"] = {"type": kind, "message": inter.response.to_api()}
        return 200, answer

    def _webhook_interaction(self, ctx: _Ctx) -> FakeInteraction:
        if int(ctx.params["webhook_id"]) != self.application_id:
            raise DiscordError(404, 10015, "Unknown Webhook", detail="not this application's id")
        inter = self._by_token.get(ctx.params["webhook_token"])
        if inter is None:
            raise DiscordError(401, 50027, "Invalid Webhook Token")
        if self.now() - inter.dispatched_at > self.token_lifetime:
            raise DiscordError(401, 50027, "Invalid Webhook Token", detail="the interaction token expired")
        if not inter.answered or inter.callback_type in (8, 9):
            raise DiscordError(404, 10015, "Unknown Webhook", detail="the interaction was not answered yet")
        return inter

    def _webhook_message(self, ctx: _Ctx, inter: FakeInteraction) -> StoredMessage:
        if "message_id" not in ctx.params:
            message = inter.response
        else:
            wanted = int(ctx.params["message_id"])
            candidates = [inter.response, *inter.followups]
            message = next((m for m in candidates if m is not None and m.id == wanted), None)
        if message is None or message.deleted:
            raise DiscordError(404, 10008, "Unknown Message")
        return message

    async def _followup(self, ctx: _Ctx) -> tuple[int, Any]:
        inter = self._webhook_interaction(ctx)
        data: JSON = ctx.body or {}
        attachments = [self._attachment(f) for f in ctx.files]
        if is_empty_message(data) and not attachments:
            raise DiscordError(400, 50006, "Cannot send an empty message")
        original = inter.response
        if inter.callback_type == 5 and original is not None and original.loading and not inter.followups:
            # The first followup after a deferred response fills the "thinking" message.
            self._apply_edit(original, data, via="followup", files=ctx.files)
            message = original
        else:
            ephemeral = bool((data.get("flags") or 0) & EPHEMERAL)
            message = self._create_message(
                inter.channel,
                data,
                via="followup",
                ephemeral_for=inter.user.id if ephemeral else None,
                interaction=inter,
                attachments=attachments,
            )
        inter.followups.append(message)
        if not ctx.query.get("wait"):
            return 204, None
        return 200, message.to_api()

    async def _get_webhook_message(self, ctx: _Ctx) -> tuple[int, Any]:
        inter = self._webhook_interaction(ctx)
        return 200, self._webhook_message(ctx, inter).to_api()

    async def _patch_webhook_message(self, ctx: _Ctx) -> tuple[int, Any]:
        inter = self._webhook_interaction(ctx)
        message = self._webhook_message(ctx, inter)
        self._apply_edit(message, ctx.body or {}, via="webhook", files=ctx.files)
        return 200, message.to_api()

    async def _delete_webhook_message(self, ctx: _Ctx) -> tuple[int, Any]:
        inter = self._webhook_interaction(ctx)
        message = self._webhook_message(ctx, inter)
        message.deleted = True
        self._notify()
        return 204, None

    # -- guilds ----------------------------------------------------------------------------------------

    async def _get_guild(self, ctx: _Ctx) -> tuple[int, Any]:
        guild = self._guild(ctx)
        data = self._guild_api(guild)
        if ctx.query.get("with_counts"):
            data["approximate_member_count"] = len(guild.members)
            data["approximate_presence_count"] = 0
        return 200, data

    async def _get_guild_channels(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, [c.to_api() for c in self._guild(ctx).channels]

    async def _get_guild_roles(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, self._roles(self._guild(ctx))

    async def _get_member(self, ctx: _Ctx) -> tuple[int, Any]:
        guild = self._guild(ctx)
        user = next((u for u in guild.members if u.id == int(ctx.params["user_id"])), None)
        if user is None:
            raise DiscordError(404, 10007, "Unknown Member")
        return 200, self._member(guild, user)


def _option_value_fits(kind: int, value: Any) -> bool:
    if kind == 5:
        return isinstance(value, bool)
    if kind == 4:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == 10:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == 3:
        return isinstance(value, str)
    return isinstance(value, (str, int))


def _spec_workarounds(op: Operation, body: Any) -> Any:
    """The body as the spec should see it where the spec is wrong (see the module docstring)."""
    if op.operation_id not in (
        "bulk_set_application_commands",
        "bulk_set_guild_application_commands",
        "create_application_command",
        "create_guild_application_command",
        "update_application_command",
        "update_guild_application_command",
    ):
        return body

    def fix(command: Any) -> Any:
        if isinstance(command, dict) and isinstance(command.get("default_member_permissions"), str):
            value = command["default_member_permissions"]
            if value.isdigit():
                return {**command, "default_member_permissions": int(value)}
        return command

    return [fix(c) for c in body] if isinstance(body, list) else fix(body)
