"""A channel the bot may no longer post in: its table paused, the players told ephemerally, resumed when the
rights come back.

Discord tells every interaction what the bot may do where it happened (``app_permissions``, the bot's
permissions in that channel, overwrites included). A press or a command comes through even where the bot
cannot post — interactions are answered through their own webhook — so the players keep pressing a table
that could never be drawn again. Here:

* an interaction in a server channel where the bot lacks a permission it needs to post the table (View
  Channel, and Send Messages — Send Messages in Threads in a thread) pauses the channel's table
  (:meth:`bot.app.Service.pauses`); if it had one, the presser is told ephemerally which permission is
  missing, and the press goes no further;
* a post refused for the same reason (403 Missing Access / Missing Permissions, 50001 / 50013) pauses the
  table through the delivery (:mod:`adapters.discord.transport`); the last person who pressed something in
  that channel is told at once by an ephemeral follow-up of their press (while its token lives), and every
  player at their next press, as above;
* an interaction at a paused table (:attr:`~bot.kernel.Outcome.paused`) from a channel where the bot may post
  again resumes it (or closes it, if it waited too long: :mod:`bot.table._pause` has the rule): the table is
  posted afresh, and the interaction answered with that.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import discord

from adapters.discord.layout import NO_MENTIONS
from adapters.discord.permissions import POST_NEEDS, missing_for_table
from bot.i18n import normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import ChatRef, LruCache, Outcome, OutMessage, UserRef

if TYPE_CHECKING:
    from adapters.discord.interactions import DiscordHandlers

_ = N_

CANNOT_POST = _(
    "I cannot post in this channel: I am missing {permissions}. The table waits here until a server admin "
    "gives that back (channel settings → Permissions); then press any button of the table or type "
    "/mus newgame."
)
NO_LONGER_POST = _(
    "I can no longer post in this channel: a server admin took View Channel, Send Messages or Embed Links "
    "away from me. The table waits here until I have them again; then press any button of the table or "
    "type /mus newgame."
)
#: How long after its press an interaction may still carry a follow-up (Discord: 15 minutes), with a margin.
FOLLOW_UP_WINDOW = dt.timedelta(minutes=14)
#: Channels whose last press is remembered at most. Past it the channel pressed least recently is forgotten
#: (an idle one's, whose press's token has most likely expired anyway): if that channel then refuses a post,
#: nobody is followed up at once, and each player is told at their next press there instead.
MAX_REMEMBERED = 10_000


def cannot_post(user: UserRef, missing: list[str]) -> str:
    """What the presser is told: the bot cannot post here, and which permissions (msgids) it lacks."""
    t = translator(normalize_language(user.lang))
    names = ", ".join(t.gettext(name) for name in missing)
    return t.format(CANNOT_POST, permissions=names)


class LastPresses:
    """The last press in each channel, whose token can still carry a follow-up to its presser."""

    def __init__(self, capacity: int = MAX_REMEMBERED) -> None:
        """Remember the last press of at most ``capacity`` channels."""
        self._presses: LruCache[str, tuple[discord.Interaction[Any], UserRef]] = LruCache(capacity)

    def note(self, chat: str, interaction: discord.Interaction[Any], user: UserRef) -> None:
        """``user`` pressed something in ``chat`` (a channel key)."""
        self._presses.put(chat, (interaction, user))

    def take(self, chat: str) -> tuple[discord.Interaction[Any], UserRef] | None:
        """The last press in ``chat`` if a follow-up can still reach its presser (then forgotten)."""
        last = self._presses.pop(chat)
        if last is None or discord.utils.utcnow() - last[0].created_at > FOLLOW_UP_WINDOW:
            return None
        return last


async def refused(
    handlers: DiscordHandlers, interaction: discord.Interaction[Any], chat: ChatRef, user: UserRef
) -> bool:
    """Before a press (noted, for a follow-up if the channel refuses a post later): if the bot may not post
    here, pause the channel's table and, if there was one, tell the presser what is missing (then the
    interaction is answered: ``True``)."""
    if not chat.private:
        handlers.last_presses.note(chat.key, interaction, user)
    missing = missing_for_table(interaction, POST_NEEDS)
    if not missing:
        return False
    lost = await handlers.service.pauses.chat_lost(chat.key)
    if not lost.ok:
        return False  # no table here: the press goes on (its answers are ephemeral anyway)
    await handlers._say(interaction, cannot_post(user, missing))
    return True


async def resumed(
    handlers: DiscordHandlers,
    interaction: discord.Interaction[Any],
    chat: ChatRef,
    user: UserRef,
    outcome: Outcome,
) -> Outcome:
    """After an interaction's work: refused at a paused table, the table resumes if the bot may post here
    again (the outcome of that), else the asker is told what is missing."""
    if not outcome.paused:
        return outcome
    missing = missing_for_table(interaction, POST_NEEDS)
    if missing:
        return replace(outcome, answer=cannot_post(user, missing))
    back = await handlers.service.pauses.chat_back(chat)
    return back if back.ok else outcome


async def chat_lost(handlers: DiscordHandlers, view: OutMessage) -> None:
    """The channel refused a post of ``view`` (the delivery says so): its table is paused, and the last person
    who pressed something there is told by an ephemeral follow-up of that press."""
    if view.chat is None:
        return
    lost = await handlers.service.pauses.chat_lost(view.chat)
    last = handlers.last_presses.take(view.chat) if lost.ok else None
    if last is None:
        return
    interaction, user = last
    text = translator(normalize_language(user.lang)).gettext(NO_LONGER_POST)
    with contextlib.suppress(discord.HTTPException):
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
