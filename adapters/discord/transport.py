"""The Discord calls behind :class:`bot.delivery._lanes.Delivery`: send, edit, clear the buttons, delete.

Views become messages through :mod:`adapters.discord.layout`; a private view goes to the person's direct
messages (the DM channel is opened once and remembered). Discord's failures become the core's typed
delivery errors: an unknown message is :class:`~bot.delivery._transport.MessageGone`; closed direct messages
(error 50007), an unknown or forbidden channel are :class:`~bot.delivery._transport.Unreachable`; a rate limit
longer than discord.py waits by itself is :class:`~bot.delivery._transport.RateLimited`. Discord accepts an
edit that changes nothing, so ``NotModified`` never comes from here.

A person whose direct messages are closed is not asked again for :data:`CLOSED_DM_RETRY` seconds: their
private views fail at once (no call), and they read their hand with "My cards", ephemerally.

A table's message is an embed (:mod:`adapters.discord.embeds`); a channel that refuses it for want of Embed
Links (a server that denies it per channel, or took it away during a game) is written to in plain text
instead — the same words — for :data:`PLAIN_RETRY` seconds before an embed is tried again: its game goes
on, as it did before tables were embeds. (A new table there is refused at ``/mus newgame``, saying what is
missing.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import aiohttp
import discord

from adapters.discord.embeds import edited_as, embedded, sent_as
from adapters.discord.ids import parse_key
from adapters.discord.layout import NO_MENTIONS, files_of, view_of
from bot.delivery import MessageGone, RateLimited, Refused, StillNeeded, Unreachable
from bot.kernel import LruCache, OutMessage

_T = TypeVar("_T")

#: Seconds before writing again to someone whose direct messages were closed.
CLOSED_DM_RETRY = 600.0
#: DM channels and closed DMs remembered at most (then forgotten all at once: they are only a cache).
MAX_REMEMBERED = 50_000
#: Seconds a channel that refused an embed is written to in plain text before an embed is tried again.
PLAIN_RETRY = 600.0
#: Channels remembered as refusing embeds (the least recently used forgotten: at worst one refused call).
PLAIN_CHANNELS = 10_000
MISSING_PERMISSIONS = 50013
CANNOT_MESSAGE_USER = 50007
UNKNOWN_MESSAGE = 10008
UNKNOWN_CHANNEL = 10003
CHANNEL_ERRORS = frozenset({UNKNOWN_CHANNEL, 50001, 50013})  # unknown channel, missing access, permissions


async def _call(call: Callable[[], Awaitable[_T]]) -> _T:
    """Run one call, its failures as the core's delivery errors."""
    try:
        return await call()
    except discord.RateLimited as exc:
        raise RateLimited(exc.retry_after) from exc
    except discord.NotFound as exc:
        if exc.code == UNKNOWN_MESSAGE:
            raise MessageGone(str(exc)) from exc
        raise Unreachable(str(exc)) from exc
    except discord.Forbidden as exc:
        raise Unreachable(str(exc)) from exc
    except discord.HTTPException as exc:
        if exc.code in CHANNEL_ERRORS:
            raise Unreachable(str(exc)) from exc
        raise Refused(str(exc)) from exc
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise Refused(f"no answer from Discord: {exc!r}") from exc


class DiscordTransport:
    """Sends, edits and clears the buttons of messages through one discord.py client."""

    def __init__(
        self,
        client: discord.Client,
        clock: Callable[[], float] = time.monotonic,
        commands: Callable[[int], Mapping[str, str] | None] = lambda channel_id: None,
    ) -> None:
        """Call Discord through ``client`` (its HTTP session and rate limiter); ``commands`` says how commands
        are written in a channel (:func:`adapters.discord.mentions.names`)."""
        self.client = client
        self.clock = clock
        self.commands = commands
        self._dm_channels: dict[int, int] = {}
        self._closed: dict[int, float] = {}
        self._dm_lock = asyncio.Lock()
        self._plain: LruCache[int, float] = LruCache(PLAIN_CHANNELS)
        """Channels that refused an embed, and since when (see the module's docstring)."""

    def owns(self, chat: str) -> bool:
        """Whether ``chat`` is a Discord channel or person (``dc:…``) — servers are not destinations."""
        parsed = parse_key(chat)
        return parsed is not None and parsed[0] in ("", "u")

    def closed(self, user: str) -> bool:
        """Whether the person with that key (``dc:u…``) was found with closed direct messages recently."""
        parsed = parse_key(user)
        return parsed is not None and parsed[0] == "u" and self.dms_closed(parsed[1])

    def dms_closed(self, user_id: int) -> bool:
        """Whether that person's direct messages were found closed recently."""
        since = self._closed.get(user_id)
        return since is not None and self.clock() - since < CLOSED_DM_RETRY

    async def _channel_id(self, chat: str) -> int:
        parsed = parse_key(chat)
        if parsed is None or parsed[0] == "g":
            raise Refused(f"not a Discord channel or person: {chat!r}")
        kind, ident = parsed
        if kind == "":
            return ident
        if self.dms_closed(ident):
            raise Unreachable("direct messages closed")
        known = self._dm_channels.get(ident)
        if known is None:
            async with self._dm_lock:
                known = self._dm_channels.get(ident)
                if known is None:
                    dm = await _call(lambda: self.client.create_dm(discord.Object(id=ident)))
                    if len(self._dm_channels) >= MAX_REMEMBERED:
                        self._dm_channels.clear()  # bounded: at worst a DM channel is asked for again
                    known = self._dm_channels[ident] = dm.id
        return known

    def _channel(self, channel_id: int) -> discord.PartialMessageable:
        return self.client.get_partial_messageable(channel_id)

    async def _guarded(self, chat: str, call: Callable[[], Awaitable[_T]]) -> _T:
        """Remember a person whose direct messages refuse us (so as not to knock again at once)."""
        try:
            return await _call(call)
        except Unreachable as exc:
            parsed = parse_key(chat)
            cause = exc.__cause__
            closed = isinstance(cause, discord.HTTPException) and cause.code == CANNOT_MESSAGE_USER
            if parsed is not None and parsed[0] == "u" and closed:
                if len(self._closed) >= MAX_REMEMBERED:
                    self._closed.clear()
                self._closed[parsed[1]] = self.clock()
            raise

    async def send(self, chat: str, message: OutMessage) -> str:
        """Post a new message (a table's as an embed; with its file as an attachment, if it has one); its
        id."""
        channel_id = await self._channel_id(chat)
        view = view_of(message)
        extra: dict[str, Any] = {} if view is None else {"view": view}
        extra.update(files_of(message))
        commands = self.commands(channel_id)

        async def post(embeds: bool) -> discord.Message:
            shown = sent_as(message, commands, embeds=embeds)
            return await self._guarded(
                chat, lambda: self._channel(channel_id).send(allowed_mentions=NO_MENTIONS, **extra, **shown)
            )

        sent = await self._embed_or_text(channel_id, message, post)
        return str(sent.id)

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        """Make a message show a view's text (a table's as an embed: :mod:`adapters.discord.embeds`) and
        components (none when the view has no buttons)."""
        channel_id = await self._channel_id(chat)
        partial = self._channel(channel_id).get_partial_message(int(message_id))
        commands, view = self.commands(channel_id), view_of(message)

        async def change(embeds: bool) -> None:
            shown = edited_as(message, commands, embeds=embeds)
            await self._guarded(chat, lambda: partial.edit(**shown, view=view, allowed_mentions=NO_MENTIONS))

        await self._embed_or_text(channel_id, message, change)

    async def _embed_or_text(
        self, channel_id: int, message: OutMessage, call: Callable[[bool], Awaitable[_T]]
    ) -> _T:
        """``call`` with the table as an embed where the channel lets the bot embed, else as text; a refusal
        for want of a permission that an embed meets is tried once more as text, and remembered."""
        since = self._plain.get(channel_id)
        plain = since is not None and self.clock() - since < PLAIN_RETRY
        try:
            return await call(not plain)
        except Unreachable as exc:
            cause = exc.__cause__
            refused = isinstance(cause, discord.Forbidden) and cause.code == MISSING_PERMISSIONS
            if plain or not refused or not embedded(message):
                raise
        self._plain.put(channel_id, self.clock())
        return await call(False)

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        """Remove a message's components (its text stays). The bot's budget is booked before this
        transport (:class:`~bot.delivery.BudgetedTransport`, which asks ``check``): no wait here."""
        channel_id = await self._channel_id(chat)
        partial = self._channel(channel_id).get_partial_message(int(message_id))
        await self._guarded(chat, lambda: partial.edit(view=None))

    async def delete(self, chat: str, message_id: str) -> None:
        """Delete a message of the bot (an unknown message is gone)."""
        channel_id = await self._channel_id(chat)
        partial = self._channel(channel_id).get_partial_message(int(message_id))
        await self._guarded(chat, partial.delete)
