"""``/mus-admin``: a server's settings, for those who may manage the server.

Discord lets a server's admins decide who sees each *top-level* command (Server settings → Integrations), so
the settings live in a command of their own rather than inside ``/mus``: ``/mus-admin language`` sets the
language the bot speaks in the whole server (the tables, what it posts in every channel). The command is
offered only to members with *Manage Server* (``default_permissions``) and only in servers; since an
override can show it to anyone, the bot checks the member's permission again itself, on the command and on
the buttons of its language picker (:func:`guard_settings`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str

from adapters.discord.commands import LANGUAGE_DESCRIPTION, language_choices
from adapters.discord.ids import user_ref
from adapters.discord.interactions import DiscordHandlers
from adapters.discord.layout import NO_MENTIONS, PressHandler
from adapters.discord.permissions import NEEDS_MANAGE_SERVER, manages_server
from bot.i18n import normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import ChatRef, Outcome, SetLanguage, UserRef, read_token

_ = N_

ADMIN_DESCRIPTION = _("The server's settings (needs Manage Server)")
SERVER_LANGUAGE = _("The language of the whole server")


def _refusal(user: UserRef) -> str:
    return translator(normalize_language(user.lang)).gettext(NEEDS_MANAGE_SERVER)


def admin_group(handlers: DiscordHandlers) -> app_commands.Group:
    """The ``/mus-admin`` group: servers only, offered to members who may manage the server."""
    service = handlers.service
    group = app_commands.Group(
        name="mus-admin",
        description=locale_str(ADMIN_DESCRIPTION),
        default_permissions=discord.Permissions(manage_guild=True),
        allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=False, private_channel=False),
        allowed_installs=app_commands.AppInstallationType(guild=True, user=False),
    )

    @group.command(name="language", description=locale_str(SERVER_LANGUAGE))
    @app_commands.describe(language=locale_str(LANGUAGE_DESCRIPTION))
    @app_commands.choices(language=language_choices())
    async def language(interaction: discord.Interaction[Any], language: Choice[str] | None = None) -> None:
        allowed = manages_server(interaction)  # (an override may have shown the command to anyone)
        code = None if language is None else language.value

        async def work(chat: ChatRef, user: UserRef) -> Outcome:
            if not allowed:
                return Outcome(answer=_refusal(user), ok=False)
            return await service.set_language(chat, user, code)

        await handlers.command(interaction, work)

    return group


def guard_settings(handlers: DiscordHandlers) -> PressHandler:
    """The press handler, refusing a server's settings buttons (the language picker) to members who may
    not manage the server: anyone in the channel sees the picker, and could press it."""

    async def press(interaction: discord.Interaction[Any], data: str) -> None:
        token = read_token(data)
        settings = token is not None and isinstance(token.command, SetLanguage)
        if settings and interaction.guild_id is not None and not manages_server(interaction):
            text = _refusal(user_ref(interaction))
            with contextlib.suppress(discord.HTTPException):
                await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
        await handlers.press(interaction, data)

    return press
