"""Private hands where Discord users look: an ephemeral "My cards" first, direct messages if they ask.

Discord users read what is meant for them alone in ephemeral messages, under the table they play at; many
servers close direct messages from members. So a player's private view (their cards, discard picks, señas,
the amounts of "More…") is shown by "🂠 My cards": the press answers ephemerally, and that ephemeral
message is then kept up to date — a new hand, the cards after the discards, a partner's seña — by editing
it through the interaction's token (``PATCH /webhooks/{application_id}/{token}/messages/{id}``) while the
token lives (15 minutes; every press on it renews the token). Which message mirrors a player's hand, with
its token and when it expires, is kept with the table's surfaces (Redis: any worker can edit it).

Direct messages are an opt-in (``/mus dms on:True``, per person, kept in the core's preferences): only then
do private views go to the person's DMs as well. A person who opted in but whose DMs are closed (error
50007) is told once, ephemerally, on their next interaction (:data:`DMS_CLOSED`), and plays from "My cards":
once across every worker and restart — a mark in the store says they were told (:data:`TOLD_MARK`), until
they ask for direct messages again (``/mus dms on:True``), which is worth telling again if theirs are still
closed.

:class:`PrivateHands` is the delivery's transport: channels go through :class:`DiscordTransport` as they
are; a private view goes to the live "My cards" of its table and, if wanted, to the DMs. Shown nowhere else
(no DMs), its message id is :data:`NOWHERE`, and an edit of it later costs no call — until the person opts
in, when it is posted to their DMs.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord

from adapters.discord.ids import parse_key
from adapters.discord.layout import NO_MENTIONS, text_of, view_of
from adapters.discord.transport import DiscordTransport
from bot.app import Service
from bot.delivery import (
    MessageGone,
    NotModified,
    RateLimited,
    Refused,
    StillNeeded,
    SurfaceStore,
    Unreachable,
)
from bot.i18n import normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import OutMessage, UserRef
from bot.store import MarkStore, StoreUnavailable

_ = N_
log = logging.getLogger(__name__)

#: The preference (a yes/no per person) that sends private views by direct message too.
DMS = "dms"
#: The surfaces slot remembering which ephemeral message mirrors a person's hand at a table.
MIRROR_SLOT = "mycards"
#: The slots of a table's own message: a table played in someone's direct messages has one there.
TABLE_SLOTS = ("table", "lobby")
#: The private view that "My cards" mirrors.
HAND_SLOT = "hand"
#: The store's mark saying that a person was told that their direct messages are closed (by their key).
TOLD_MARK = "discord:dms-closed-told:{user}"
#: The message id of a private view shown nowhere (no DMs wanted, no "My cards" alive).
NOWHERE = "-"
#: How long an interaction's token lets its messages be edited, and the margin kept before that.
TOKEN_LIFETIME = 15 * 60.0
TOKEN_MARGIN = 30.0
#: Statuses of an edit through a token that will never work again (401: invalid token; 404: unknown).
GONE = frozenset({401, 404})

DMS_ON = _("Your cards will also come to you by direct message.")
DMS_OFF = _("Your cards will no longer come by direct message: press 🂠 My cards on the table.")
# Translators: "Privacy Settings" and "Direct Messages" are Discord's own names for these settings.
DMS_CLOSED = _(
    "I cannot send you direct messages: this server's members cannot write to you. Your cards are under "
    "🂠 My cards on the table. To get them by direct message, allow them in the server's Privacy Settings "
    "(Direct Messages)."
)


@dataclass(frozen=True, slots=True)
class Mirror:
    """The ephemeral message that shows a person's hand, and the token that lets it be edited until
    ``expires`` (Unix time)."""

    message_id: int
    expires: float
    token: str

    def stored(self) -> str:
        """As kept with the surfaces."""
        return f"{self.message_id} {self.expires:.0f} {self.token}"

    @classmethod
    def parse(cls, raw: str | None) -> Mirror | None:
        """A stored mirror (``None`` for nothing, or anything unreadable)."""
        parts = (raw or "").split(" ", 2)
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            return None
        return cls(int(parts[0]), float(parts[1]), parts[2])


class NoHands:
    """No private hands (a handler tested alone): every view is shown where its interaction is answered."""

    async def sees(self, interaction: discord.Interaction[Any], view: OutMessage) -> bool:
        """Always: no new ephemeral is needed."""
        return True

    async def remember(
        self, interaction: discord.Interaction[Any], user: str, view: OutMessage, message_id: str | None
    ) -> None:
        """Nothing to remember."""

    async def tell_if_closed(self, interaction: discord.Interaction[Any], user: UserRef) -> None:
        """Nobody to tell."""

    async def asked_for_dms(self, user: str) -> None:
        """Nobody was told anything."""


class PrivateHands:
    """The delivery's transport on Discord: channels as :class:`DiscordTransport` does, a person's private
    views to their live "My cards" and, if they asked for them, to their direct messages."""

    def __init__(
        self,
        inner: DiscordTransport,
        surfaces: SurfaceStore,
        service: Service,
        marks: MarkStore,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Post through ``inner``; ``surfaces`` keeps the mirrors; the ``service``'s preferences keep who
        asked for direct messages, ``marks`` whom the bot told that theirs are closed (its act-once store
        makes two workers that find out together tell them once)."""
        self.inner = inner
        self.client: discord.Client = inner.client
        self.surfaces = surfaces
        self.chats = service.chats
        self.marks = marks
        self.clock = clock

    def owns(self, chat: str) -> bool:
        """Whether ``chat`` is a Discord channel or person."""
        return self.inner.owns(chat)

    async def gets_dms(self, user: str) -> bool:
        """Whether private views reach that person by direct message: they asked, and their DMs are open."""
        return not self.inner.closed(user) and await self.chats.preference(user, DMS)

    async def tell_if_closed(self, interaction: discord.Interaction[Any], user: UserRef) -> None:
        """After answering ``interaction``: someone who asked for direct messages but whose DMs are closed
        (as this worker found them) is told so, once, whichever worker found out first or finds out later:
        the store's mark remembers it; if the store cannot say, they are told at a later interaction."""
        if not self.inner.closed(user.key) or not interaction.response.is_done():
            return
        told = TOLD_MARK.format(user=user.key)
        try:
            if await self.marks.get_mark(told):
                return
            if not await self.chats.first_delivery(told):
                return  # another worker is telling them right now
            await self.marks.set_mark(told, str(round(self.clock())))
        except StoreUnavailable:
            return
        text = translator(normalize_language(user.lang)).gettext(DMS_CLOSED)
        with contextlib.suppress(discord.HTTPException):
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)

    async def asked_for_dms(self, user: str) -> None:
        """``user`` asked for direct messages (again): if theirs are closed, that is worth telling them again
        (the mark is cleared; a store that cannot say now leaves it)."""
        with contextlib.suppress(StoreUnavailable):
            await self.marks.set_mark(TOLD_MARK.format(user=user), "")

    @staticmethod
    def _private(chat: str, message: OutMessage) -> bool:
        """Whether ``message`` is a person's private view (not a table played in their direct messages)."""
        parsed = parse_key(chat)
        return message.user is not None and parsed is not None and parsed[0] == "u"

    async def _by_dm(self, chat: str, message: OutMessage) -> bool:
        """Whether a private view goes by direct message: anything but a hand (what the person asked for in
        their DMs: the full rules, a lesson; in a server those are shown ephemerally), or a hand of someone
        who asked for DMs, or who plays this table in their direct messages (a solo game)."""
        if message.slot != HAND_SLOT or await self.gets_dms(chat):
            return True
        if not message.table:
            return False
        try:
            for slot in TABLE_SLOTS:
                if await self.surfaces.get(message.table, chat, slot) is not None:
                    return True
        except StoreUnavailable:
            return False  # ("My cards" shows it all the same)
        return False

    # --- the mirror ----------------------------------------------------------------------------------

    async def remember(
        self, interaction: discord.Interaction[Any], user: str, view: OutMessage, message_id: str | None
    ) -> None:
        """``message_id``, an ephemeral answer to ``interaction``, now shows ``user``'s hand ``view``: the
        hand's next views edit it (through the interaction's token) while it can be edited."""
        if message_id is None or not message_id.isdigit() or not view.table:
            return
        expires = interaction.created_at.timestamp() + TOKEN_LIFETIME - TOKEN_MARGIN
        mirror = Mirror(int(message_id), expires, interaction.token)
        try:
            await self.surfaces.set(view.table, user, MIRROR_SLOT, mirror.stored())
        except StoreUnavailable:
            log.info("surfaces store unavailable: a hand's ephemeral will not follow the game")

    async def _live(self, table: str, user: str) -> Mirror | None:
        """The ephemeral that shows ``user``'s hand at ``table``, if it can still be edited."""
        try:
            mirror = Mirror.parse(await self.surfaces.get(table, user, MIRROR_SLOT))
        except StoreUnavailable:
            return None
        return None if mirror is None or self.clock() >= mirror.expires else mirror

    async def sees(self, interaction: discord.Interaction[Any], view: OutMessage) -> bool:
        """Whether the presser sees their private ``view`` without a new ephemeral: in their DMs (they play
        there, or asked for DMs), or on their "My cards" that follows the game."""
        if interaction.guild_id is None or view.user is None:
            return True
        if view.slot == HAND_SLOT and await self._live(view.table, view.user) is not None:
            return True
        return await self.gets_dms(view.user)

    async def _mirror(self, chat: str, message: OutMessage) -> None:
        """Show a hand's view on its player's live "My cards" too (nothing if there is none)."""
        if message.slot != HAND_SLOT or not message.table or not self._private(chat, message):
            return
        mirror = await self._live(message.table, chat)
        if mirror is None:
            return
        application_id = self.client.application_id
        if application_id is None:
            return
        webhook = discord.Webhook.partial(application_id, mirror.token, client=self.client)
        try:
            await webhook.edit_message(
                mirror.message_id,
                content=text_of(message),
                view=view_of(message),
                allowed_mentions=NO_MENTIONS,
            )
        except discord.HTTPException as exc:
            if exc.status not in GONE:  # a rate limit or a hiccup: the hand's next view edits it again
                log.info("a hand's ephemeral in chat %s was not updated: %s", chat, exc, extra={"chat": chat})
                return
            # Dismissed by its reader, or its token no longer valid: the next "My cards" makes a new one.
            log.info("a hand's ephemeral in chat %s can no longer be edited", chat, extra={"chat": chat})
            with contextlib.suppress(StoreUnavailable):
                await self.surfaces.set(message.table, chat, MIRROR_SLOT, "")
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:  # (its text may hold the URL: the token)
            log.info("a hand's ephemeral in chat %s was not updated: %s", chat, type(exc).__name__)

    # --- the transport -------------------------------------------------------------------------------

    async def send(self, chat: str, message: OutMessage) -> str:
        """Post a view: in a channel; for a person, on their live "My cards" and, if wanted, by DM."""
        if not self._private(chat, message):
            return await self.inner.send(chat, message)
        await self._mirror(chat, message)
        if await self._by_dm(chat, message):
            return await self.inner.send(chat, message)
        return NOWHERE

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        """Make a message show a view; a person's view shown nowhere is posted by DM once they want it."""
        if not self._private(chat, message):
            await self.inner.edit(chat, message_id, message)
            return
        await self._mirror(chat, message)
        wanted = await self._by_dm(chat, message)
        if message_id == NOWHERE:
            if wanted:
                raise MessageGone("now wanted by direct message")  # (the delivery posts it there)
            return
        if not wanted:  # the DM keeps its text, not its buttons; the view is shown nowhere from now on
            with contextlib.suppress(MessageGone, NotModified, RateLimited, Refused, Unreachable):
                await self.inner.clear_buttons(chat, message_id)
            raise MessageGone("no longer wanted by direct message")
        await self.inner.edit(chat, message_id, message)

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        """Remove a message's buttons (a view shown nowhere has none)."""
        if message_id != NOWHERE:
            await self.inner.clear_buttons(chat, message_id, check)

    async def delete(self, chat: str, message_id: str) -> None:
        """Delete a message of the bot (a view shown nowhere is gone already)."""
        if message_id == NOWHERE:
            raise MessageGone("shown nowhere")
        await self.inner.delete(chat, message_id)
