"""The ``/mus`` slash commands and their translations from our catalogues.

One group, ``/mus``, with ``newgame``, ``leaderboard``, ``stats``, ``rules``, ``language``, ``history``,
``learn`` (the lessons, shown to the learner alone), ``cancel`` and ``help``: one entry in a server's
command list, whatever other bots there are. Command names stay English (Discord matches what a person
types against them); descriptions are translated for the locales Discord has and we speak (Spanish, French,
Brazilian Portuguese — Basque and Galician servers choose their language with ``/mus language``, which is
what the bot speaks in that server whatever each client shows).
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str

from adapters.discord import lessons
from adapters.discord.ids import language_of
from adapters.discord.interactions import DiscordHandlers
from bot.app import COMMAND_LIST
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.i18n.markers import N_

_ = N_

GROUP_DESCRIPTION = _("Play Mus with 8 kings, in pairs")
FULL_DESCRIPTION = _("All the rules, shown only to you")
EVERYONE_DESCRIPTION = _("Everyone who played with this bot, not just this channel")
LANGUAGE_DESCRIPTION = _("The language; leave it empty to choose from buttons")
LESSON_DESCRIPTION = _("Which lesson, 1 to 10; leave it empty to go on where you were")
DESCRIPTIONS: dict[str, str] = dict(COMMAND_LIST)


class CatalogTranslator(app_commands.Translator):
    """Descriptions from our catalogues, for the Discord locales we speak (English is the source)."""

    async def translate(
        self, string: locale_str, locale: discord.Locale, context: app_commands.TranslationContextTypes
    ) -> str | None:
        """The description in ``locale``'s language; ``None`` (Discord shows the source) otherwise."""
        if context.location in (
            app_commands.TranslationContextLocation.command_name,
            app_commands.TranslationContextLocation.group_name,
            app_commands.TranslationContextLocation.parameter_name,
            app_commands.TranslationContextLocation.choice_name,  # language names are written in their own
        ):
            return None
        lang = language_of(locale)
        if lang is None or lang == "en":
            return None
        text = translator(lang).gettext(string.message)
        return text[:100] if text != string.message else None


def _describe(name: str) -> locale_str:
    return locale_str(DESCRIPTIONS[name])


def mus_group(handlers: DiscordHandlers) -> app_commands.Group:
    """The ``/mus`` group, each command calling the service through ``handlers``."""
    service = handlers.service
    group = app_commands.Group(name="mus", description=locale_str(GROUP_DESCRIPTION))

    @group.command(name="newgame", description=_describe("newgame"))
    async def newgame(interaction: discord.Interaction[Any]) -> None:
        await handlers.command(interaction, service.new_table)

    @group.command(name="leaderboard", description=_describe("leaderboard"))
    @app_commands.describe(everyone=locale_str(EVERYONE_DESCRIPTION))
    async def leaderboard(interaction: discord.Interaction[Any], everyone: bool = False) -> None:
        scope = "global" if everyone else "chat"
        await handlers.command(interaction, lambda chat, user: service.chats.leaderboard(chat, user, scope))

    @group.command(name="stats", description=_describe("stats"))
    async def stats(interaction: discord.Interaction[Any]) -> None:
        await handlers.command(interaction, service.chats.stats)

    @group.command(name="rules", description=_describe("rules"))
    @app_commands.describe(full=locale_str(FULL_DESCRIPTION))
    async def rules(interaction: discord.Interaction[Any], full: bool = False) -> None:
        await handlers.command(interaction, lambda chat, user: service.chats.rules(chat, user, full))

    @group.command(name="language", description=_describe("language"))
    @app_commands.describe(language=locale_str(LANGUAGE_DESCRIPTION))
    @app_commands.choices(language=[Choice(name=LANGUAGE_NAMES[c], value=c) for c in LANGUAGES])
    async def language(interaction: discord.Interaction[Any], language: Choice[str] | None = None) -> None:
        code = None if language is None else language.value
        await handlers.command(interaction, lambda chat, user: service.set_language(chat, user, code))

    @group.command(name="history", description=_describe("history"))
    async def history(interaction: discord.Interaction[Any]) -> None:
        await handlers.command(interaction, service.history.recent)

    @group.command(name="cancel", description=_describe("cancel"))
    async def cancel(interaction: discord.Interaction[Any]) -> None:
        await handlers.command(interaction, service.cancel)

    @group.command(name="learn", description=_describe("learn"))
    @app_commands.describe(lesson=locale_str(LESSON_DESCRIPTION))
    async def learn(
        interaction: discord.Interaction[Any], lesson: app_commands.Range[int, 1, 10] | None = None
    ) -> None:
        await lessons.learn(handlers, interaction, lesson)

    @group.command(name="help", description=_describe("help"))
    async def help_(interaction: discord.Interaction[Any]) -> None:
        await handlers.command(interaction, service.chats.help)

    return group
