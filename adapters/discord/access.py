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
  table through the delivery (:mod:`adapters.discord.transport`), and the players are told at their next
  interaction, as above;
* an interaction at a paused table (:attr:`~bot.kernel.Outcome.paused`) from a channel where the bot may post
  again resumes it (or closes it, if it waited too long: :mod:`bot.table._pause` has the rule): the table is
  posted afresh, and the interaction answered with that.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import discord

from bot.i18n import normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import ChatRef, Outcome, UserRef

if TYPE_CHECKING:
    from adapters.discord.interactions import DiscordHandlers

_ = N_

CANNOT_POST = _(
    "I cannot post in this channel: I am missing {permissions}. The table waits here until a server admin "
    "gives that back (channel settings → Permissions); then press any button of the table or type "
    "/mus newgame."
)
#: Each permission the table needs, by discord.py's name, with its name in Discord's settings.
PERMISSION_NAMES = {
    "view_channel": _("View Channel"),
    "send_messages": _("Send Messages"),
    "send_messages_in_threads": _("Send Messages in Threads"),
}


def missing_to_post(interaction: discord.Interaction[Any]) -> list[str]:
    """The permissions (discord.py's names) the bot lacks to post the table where ``interaction`` happened
    (none in a direct message)."""
    if interaction.guild_id is None:
        return []
    posting = (
        "send_messages_in_threads" if isinstance(interaction.channel, discord.Thread) else "send_messages"
    )
    granted = interaction.app_permissions
    return [name for name in ("view_channel", posting) if not getattr(granted, name)]


def cannot_post(user: UserRef, missing: list[str]) -> str:
    """What the presser is told: the bot cannot post here, and which permissions it lacks."""
    t = translator(normalize_language(user.lang))
    names = ", ".join(t.gettext(PERMISSION_NAMES[name]) for name in missing)
    return t.format(CANNOT_POST, permissions=names)


async def refused(
    handlers: DiscordHandlers, interaction: discord.Interaction[Any], chat: ChatRef, user: UserRef
) -> bool:
    """Before a press: if the bot may not post here, pause the channel's table and, if there was one, tell
    the presser what is missing (then the interaction is answered: ``True``)."""
    missing = missing_to_post(interaction)
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
    missing = missing_to_post(interaction)
    if missing:
        return replace(outcome, answer=cannot_post(user, missing))
    back = await handlers.service.pauses.chat_back(chat)
    return back if back.ok else outcome
