"""What the bot needs in a channel, and who may decide what in a server.

A table is played where everybody sees it: ``/mus newgame`` first reads the bot's own permissions in the
channel (``interaction.app_permissions``, sent with every interaction) and, if any is missing, refuses
ephemerally, naming them, in the table's language — rather than deal a game whose table can never be posted.

Who decides: a server's settings (its language) need *Manage Server*; a table someone else opened may be
cancelled by members with *Manage Messages* (the channel's moderators). Discord hides a command from members
without its ``default_permissions``, but an admin's override can show it to anyone: the bot checks the
member's permissions (``interaction.permissions``) itself, on the command and on its buttons.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.i18n import Translator, translator
from bot.i18n.markers import N_

_ = N_

# Translators: the names of Discord's permissions, as Discord's own settings show them in your language.
VIEW_CHANNEL = _("View Channel")
SEND_MESSAGES = _("Send Messages")
SEND_IN_THREADS = _("Send Messages in Threads")
ATTACH_FILES = _("Attach Files")
EMBED_LINKS = _("Embed Links")
READ_MESSAGE_HISTORY = _("Read Message History")
MANAGE_SERVER = _("Manage Server")
MANAGE_MESSAGES = _("Manage Messages")
ADMINISTRATOR = _("Administrator")
# Translators: {permissions} is a list of Discord permission names, e.g. "Send Messages, Attach Files".
MISSING_PERMISSIONS = _(
    "I cannot play in this channel: I am missing {permissions}. Someone who manages the server can give "
    "them to me (the channel's settings → Permissions), or open the table in another channel."
)
# Translators: "Manage Server" is the name of Discord's permission, as Discord shows it in your language.
NEEDS_MANAGE_SERVER = _("Only members with the Manage Server permission can change the server's settings.")

#: What a table needs in a channel (discord.py's names), and how Discord's settings name each permission.
TABLE_NEEDS: tuple[tuple[str, str], ...] = (
    ("view_channel", VIEW_CHANNEL),
    ("send_messages", SEND_MESSAGES),
    ("embed_links", EMBED_LINKS),
    ("attach_files", ATTACH_FILES),  # (a match's export is posted as two files)
)
#: How Discord's settings name the permissions the bot checks or uses, by discord.py's attribute names (a
#: check that reports another one names it in English, as Discord's English client does).
PERMISSION_NAMES: dict[str, str] = {
    "view_channel": VIEW_CHANNEL,
    "read_messages": VIEW_CHANNEL,
    "send_messages": SEND_MESSAGES,
    "send_messages_in_threads": SEND_IN_THREADS,
    "attach_files": ATTACH_FILES,
    "embed_links": EMBED_LINKS,
    "read_message_history": READ_MESSAGE_HISTORY,
    "manage_guild": MANAGE_SERVER,
    "manage_messages": MANAGE_MESSAGES,
    "administrator": ADMINISTRATOR,
}
#: In a thread, posting takes this one instead of Send Messages.
THREAD_NEEDS = ("send_messages_in_threads", SEND_IN_THREADS)
#: Every permission the bot uses in a server: the invite link asks for these (docs/discord.md).
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True, send_messages=True, send_messages_in_threads=True, embed_links=True, attach_files=True
)


def in_thread(interaction: discord.Interaction[Any]) -> bool:
    """Whether the interaction comes from a thread (posting there needs Send Messages in Threads)."""
    return isinstance(interaction.channel, discord.Thread)


#: What posting the table takes at all — it is an embed (adapters.discord.embeds) — a channel lacking these
#: pauses its table (adapters.discord.access).
POST_NEEDS = TABLE_NEEDS[:3]


def missing_for_table(
    interaction: discord.Interaction[Any], needs: tuple[tuple[str, str], ...] = TABLE_NEEDS
) -> list[str]:
    """The permissions of ``needs`` (their msgids) the bot lacks in the interaction's channel to play a
    table there; none in a direct message, where the bot may always write to whoever writes to it."""
    if interaction.guild_id is None:
        return []
    granted = interaction.app_permissions
    if in_thread(interaction):
        needs = tuple(
            THREAD_NEEDS if attribute == "send_messages" else (attribute, name) for attribute, name in needs
        )
    return [name for attribute, name in needs if not getattr(granted, attribute)]


def permission_names(t: Translator, attributes: list[str]) -> str:
    """``["manage_guild", "embed_links"]`` as Discord's settings name them in ``t``'s language: ``Manage
    Server, Embed Links`` in English, ``Gestionar servidor, Insertar enlaces`` in Spanish."""
    return ", ".join(
        t.gettext(PERMISSION_NAMES[a]) if a in PERMISSION_NAMES else a.replace("_", " ").title()
        for a in attributes
    )


def missing_text(lang: str, missing: list[str]) -> str:
    """The refusal naming ``missing`` permissions, in ``lang``."""
    t = translator(lang)
    return t.format(MISSING_PERMISSIONS, permissions=", ".join(t.gettext(name) for name in missing))


def manages_server(interaction: discord.Interaction[Any]) -> bool:
    """Whether the member may change the server's settings (Manage Server, or Administrator)."""
    permissions = interaction.permissions
    return interaction.guild_id is not None and (permissions.manage_guild or permissions.administrator)


def moderates(interaction: discord.Interaction[Any]) -> bool:
    """Whether the member moderates the channel (Manage Messages, or Administrator): they may cancel a
    table they do not sit at."""
    permissions = interaction.permissions
    return interaction.guild_id is not None and (permissions.manage_messages or permissions.administrator)
