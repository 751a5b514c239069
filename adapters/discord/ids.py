"""Discord identities as the bot core's platform-neutral keys.

A channel is ``dc:<channel id>``; a person is ``dc:u<user id>``; a server is ``dc:g<guild id>`` (the
community whose channels share a language). As on every platform, a person's private chat has the person's
own key: a table opened in a direct message lives at ``dc:u<id>``, and the transport finds the DM channel.
"""

from __future__ import annotations

import re

import discord

from bot.kernel import ChatRef, UserRef

PREFIX = "dc:"
_KEY_RE = re.compile(r"^dc:(?P<kind>[ug]?)(?P<id>\d{1,20})$")

#: Discord's locales as our languages (English is the source text; the rest fall back to the default).
LOCALE_LANGUAGES: dict[str, str] = {
    "es-ES": "es",
    "es-419": "es",
    "fr": "fr",
    "pt-BR": "pt",
    "en-US": "en",
    "en-GB": "en",
}


def language_of(locale: discord.Locale | str | None) -> str | None:
    """Our language code for a Discord locale (``None`` when we do not speak it)."""
    if locale is None:
        return None
    return LOCALE_LANGUAGES.get(str(locale))


def user_key(user_id: int) -> str:
    """``dc:u<id>``."""
    return f"{PREFIX}u{user_id}"


def channel_key(channel_id: int) -> str:
    """``dc:<id>``."""
    return f"{PREFIX}{channel_id}"


def guild_key(guild_id: int) -> str:
    """``dc:g<id>``."""
    return f"{PREFIX}g{guild_id}"


def parse_key(key: str) -> tuple[str, int] | None:
    """``("u", id)`` for a person, ``("", id)`` for a channel, ``("g", id)`` for a server; ``None`` for
    another platform's key or anything malformed."""
    match = _KEY_RE.match(key)
    if match is None:
        return None
    return match["kind"], int(match["id"])


def user_ref(interaction: discord.Interaction) -> UserRef:
    """Whoever interacted, as a :class:`UserRef` (``dc:u<id>``, display name, client language)."""
    user = interaction.user
    name = user.display_name or user.name or str(user.id)
    return UserRef(user_key(user.id), name[:32], language_of(interaction.locale))


def community_locale(interaction: discord.Interaction) -> str | None:
    """Our language for the server's preferred locale — only a Community server has one of its own: any
    other always reports en-US, which says nothing about its members."""
    guild = interaction.guild
    if guild is None or "COMMUNITY" not in guild.features:
        return None
    return language_of(interaction.guild_locale)


def chat_ref(interaction: discord.Interaction) -> ChatRef:
    """Where the interaction happened: a server channel (its server is the language community; until
    ``/mus-admin language``, its language is a Community server's preferred locale, else the asker's own:
    any other server reports en-US, whoever its members are), or the person's direct messages (a private
    chat: the solo game)."""
    if interaction.guild_id is None:
        return ChatRef(user_key(interaction.user.id), private=True, title=interaction.user.display_name)
    channel = interaction.channel
    title = getattr(channel, "name", None) or "Mus"
    return ChatRef(
        channel_key(interaction.channel_id or 0),
        private=False,
        title=str(title),
        community=guild_key(interaction.guild_id),
        lang=community_locale(interaction) or language_of(interaction.locale),
    )
