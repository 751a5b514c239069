"""The ``/mus`` slash commands and their translations from our catalogues.

One group, ``/mus``, with ``newgame``, ``leaderboard``, ``stats``, ``rules``, ``language`` (one's own),
``dms`` (one's cards by direct message too), ``history``, ``learn`` (the lessons, shown to the learner
alone), ``cancel`` and ``help``: one entry in a server's command list, whatever other bots there are. It
works in servers and in the bot's direct messages (a solo game), not in group DMs. The server's settings are
another top-level command, for admins (:mod:`adapters.discord.admin`). Command names stay English (Discord
matches what a person types against them); descriptions are translated for the locales Discord has and we
speak (Spanish, French, Brazilian Portuguese — Basque and Galician servers choose their language with
``/mus-admin language``, which is what the bot speaks in that server whatever each client shows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str

from adapters.discord import lessons
from adapters.discord.ids import language_of
from adapters.discord.interactions import DiscordHandlers
from adapters.discord.mentions import commands_in
from adapters.discord.permissions import missing_for_table, missing_text, moderates
from adapters.discord.private_hands import DMS, DMS_OFF, DMS_ON
from bot.app import COMMAND_LIST
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.kernel import ChatRef, Outcome, OutMessage, UserRef
from bot.store import StoreUnavailable

_ = N_

GROUP_DESCRIPTION = _("Play Mus with 8 kings, in pairs")
FULL_DESCRIPTION = _("All the rules, shown only to you")
EVERYONE_DESCRIPTION = _("Everyone who played with this bot, not just this channel")
LANGUAGE_DESCRIPTION = _("The language; leave it empty to choose from buttons")
OWN_LANGUAGE = _("Your own language: your cards and what only you see")
OWN_LANGUAGE_OPTION = _("The language you read")
DMS_DESCRIPTION = _("Your cards by direct message too, or only under My cards")
DMS_OPTION = _("True: by direct message too; False: only under My cards")
#: Where ``/mus`` works: servers, and the bot's own direct messages (the solo game); installed in servers.
CONTEXTS = app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=False)
INSTALLS = app_commands.AppInstallationType(guild=True, user=False)
LESSON_DESCRIPTION = _("Which lesson, 1 to 10; leave it empty to go on where you were")
# Translators: a line of /mus help after the server language; {command} is the command (/mus language).
HELP_OWN_LANGUAGE = _("{command} — your own language: your cards and what only you see")
# Translators: a line of /mus help; {command} is the command, e.g. /mus dms.
HELP_DMS = _("{command} — your cards by direct message too, or only under 🂠 My cards")
#: The line of the core's help that the personal commands follow (each of its lines begins with its command).
LANGUAGE_LINE = "/language"
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


def language_choices() -> list[Choice[str]]:
    """Our languages, each named in itself."""
    return [Choice(name=LANGUAGE_NAMES[c], value=c) for c in LANGUAGES]


def _own_chat(user: UserRef) -> ChatRef:
    """A person's private chat with the bot, whose language is theirs (its key is the person's)."""
    return ChatRef(user.key, private=True, title=user.name)


def with_personal_commands(outcome: Outcome, lang: str, written: Mapping[str, str] | None) -> Outcome:
    """The core's ``/help`` with the commands Discord adds, each person's own: ``/mus language`` and
    ``/mus dms``, after the server's language (``written``: how commands are written where it is shown,
    :func:`adapters.discord.mentions.names`; the paths as typed without it)."""
    t = translator(lang)
    added = [
        t.format(HELP_OWN_LANGUAGE, command=(written or {}).get("mus language", "/mus language")),
        t.format(HELP_DMS, command=(written or {}).get("dms", "/mus dms")),
    ]

    def extended(view: OutMessage) -> OutMessage:
        lines = view.text.split("\n")
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith(LANGUAGE_LINE)), len(lines))
        return replace(view, text="\n".join([*lines[:at], *added, *lines[at:]]))

    return replace(outcome, messages=tuple(extended(m) if m.slot == "help" else m for m in outcome.messages))


def mus_group(handlers: DiscordHandlers) -> app_commands.Group:
    """The ``/mus`` group, each command calling the service through ``handlers``."""
    service = handlers.service
    group = app_commands.Group(
        name="mus",
        description=locale_str(GROUP_DESCRIPTION),
        allowed_contexts=CONTEXTS,
        allowed_installs=INSTALLS,
    )

    async def _has_table(chat: ChatRef) -> bool:
        try:
            return await service.table_of_chat(chat) is not None
        except StoreUnavailable:
            return False  # (refused all the same: no table opens where it cannot be posted)

    @group.command(name="newgame", description=_describe("newgame"))
    async def newgame(interaction: discord.Interaction[Any]) -> None:
        missing = missing_for_table(interaction)

        async def work(chat: ChatRef, user: UserRef) -> Outcome:
            # A table already here is shown (or, paused, says what it waits for: access.py); a new one is
            # not opened where it could not be posted.
            if not missing or await _has_table(chat):
                return await service.new_table(chat, user)
            lang = await service.chats.language_of(chat, user)  # the table's language
            return Outcome(answer=missing_text(lang, missing), ok=False)

        await handlers.command(interaction, work)

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

    @group.command(name="language", description=locale_str(OWN_LANGUAGE))
    @app_commands.describe(language=locale_str(OWN_LANGUAGE_OPTION))
    @app_commands.choices(language=language_choices())
    async def language(interaction: discord.Interaction[Any], language: Choice[str]) -> None:
        # One's own: the cards, the answers to oneself (the server's is its admins': /mus-admin language).
        await handlers.command(
            interaction, lambda chat, user: service.languages.own(user, language.value), personal=True
        )

    @group.command(name="dms", description=locale_str(DMS_DESCRIPTION))
    @app_commands.describe(on=locale_str(DMS_OPTION))
    async def dms(interaction: discord.Interaction[Any], on: bool) -> None:
        async def work(chat: ChatRef, user: UserRef) -> Outcome:
            kept = await service.chats.set_preference(user.key, DMS, on)
            lang = await service.chats.language_of(_own_chat(user), user)
            if not kept:
                return Outcome(answer=translator(lang).gettext(msg.STORE_UNAVAILABLE), ok=False)
            if on:  # (closed DMs are told again, once, after this)
                await handlers.hands.asked_for_dms(user.key)
            return Outcome(answer=translator(lang).gettext(DMS_ON if on else DMS_OFF))

        await handlers.command(interaction, work, personal=True)

    @group.command(name="history", description=_describe("history"))
    async def history(interaction: discord.Interaction[Any]) -> None:
        await handlers.command(interaction, service.history.recent)

    @group.command(name="cancel", description=_describe("cancel"))
    async def cancel(interaction: discord.Interaction[Any]) -> None:
        moderator = moderates(interaction)  # Manage Messages: any table of the channel
        await handlers.command(
            interaction, lambda chat, user: service.cancel(chat, user, moderator=moderator)
        )

    @group.command(name="learn", description=_describe("learn"))
    @app_commands.describe(lesson=locale_str(LESSON_DESCRIPTION))
    async def learn(
        interaction: discord.Interaction[Any], lesson: app_commands.Range[int, 1, 10] | None = None
    ) -> None:
        await lessons.learn(handlers, interaction, lesson)

    @group.command(name="help", description=_describe("help"))
    async def help_(interaction: discord.Interaction[Any]) -> None:
        async def work(chat: ChatRef, user: UserRef) -> Outcome:
            helped = await service.chats.help(chat, user)
            lang = await service.chats.language_of(chat, user)
            return with_personal_commands(helped, lang, commands_in(interaction))

        await handlers.command(interaction, work)

    return group
