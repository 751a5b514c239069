"""The table as an embed: its header line as the title, the rest as the description, a colour per phase.

A table's own messages in a channel — the lobby, the table of a hand, the count — are shown as one embed
(:data:`EMBED_SLOTS`), their buttons staying components under it: Discord draws an embed as a card with a
coloured edge, which sets the table apart from the chat around it, and gives it 4,096 characters instead of
a message's 2,000. The colour says where the game is (:data:`PHASE_COLOURS`, by
:attr:`bot.kernel.OutMessage.phase`): the lobby blurple, the mus green, the discards teal, a lance's bets
orange, the count gold, an ended hand grey, a cancelled table red. Everything else — answers, notices, the
rules, a player's private hand ("My cards", DMs) — stays text.

Discord's limits hold whatever the text (``title`` 256 characters, ``description`` 4,096, 6,000 in all): a
title too long ends in "…"; a description too long loses the oldest lines of the hand's story, replaced by
one "…" line, so that the scores at the top and the stake and the turn at the bottom stay in view.

Posting an embed in a server's channel takes *Embed Links* (:mod:`adapters.discord.permissions`): without
it Discord refuses a message that is only an embed (403 Missing Permissions), and the table is paused like
one that cannot be posted at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import discord

from adapters.discord.layout import text_of, written
from bot.kernel import OutMessage

#: The slots shown as an embed: a table's own messages in its channel.
EMBED_SLOTS = frozenset({"lobby", "table", "showdown"})
MAX_TITLE = 256
MAX_DESCRIPTION = 4096
#: Lines of the description always kept when it is too long: the two teams' scores and who is mano.
KEPT_HEAD = 3
ELLIPSIS = "…"

#: The embed's colour by the view's phase (:attr:`bot.kernel.OutMessage.phase`).
PHASE_COLOURS: dict[str, discord.Colour] = {
    "lobby": discord.Colour.blurple(),
    "started": discord.Colour.dark_grey(),
    "mus": discord.Colour.green(),
    "discard": discord.Colour.teal(),
    "grande": discord.Colour.orange(),
    "chica": discord.Colour.orange(),
    "pares": discord.Colour.orange(),
    "juego": discord.Colour.orange(),
    "punto": discord.Colour.orange(),
    "count": discord.Colour.gold(),
    "over": discord.Colour.light_grey(),
    "cancelled": discord.Colour.red(),
}
#: A phase without a colour of its own (a view of a newer version).
DEFAULT_COLOUR = discord.Colour.blurple()


def embedded(message: OutMessage) -> bool:
    """Whether a view is shown as an embed: a table's own message in a channel, without a file."""
    return message.slot in EMBED_SLOTS and message.user is None and message.document is None


def colour_of(phase: str) -> discord.Colour:
    """The colour of a table in that phase."""
    return PHASE_COLOURS.get(phase, DEFAULT_COLOUR)


def fit_title(line: str) -> str:
    """The header line within an embed title's 256 characters."""
    return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1] + ELLIPSIS


def fit_description(text: str) -> str:
    """``text`` within an embed description's 4,096 characters: the oldest lines after the first
    :data:`KEPT_HEAD` go first (one "…" line in their place); a text that still does not fit is cut."""
    if len(text) <= MAX_DESCRIPTION:
        return text
    lines = text.split("\n")
    head, tail = lines[:KEPT_HEAD], lines[KEPT_HEAD:]
    size = len("\n".join([*head, ELLIPSIS, *tail]))
    while tail and size > MAX_DESCRIPTION:
        size -= len(tail.pop(0)) + 1
    fitted = "\n".join([*head, ELLIPSIS, *tail])
    return fitted if len(fitted) <= MAX_DESCRIPTION else fitted[: MAX_DESCRIPTION - 1] + ELLIPSIS


def embed_of(message: OutMessage, text: str) -> discord.Embed:
    """The embed showing a table's view whose text, written for Discord, is ``text``: its first line as the
    title, the rest as the description, coloured by the view's phase."""
    title, _, rest = text.partition("\n")
    description = fit_description(rest.strip("\n"))
    return discord.Embed(
        title=fit_title(title) or ELLIPSIS, description=description or None, colour=colour_of(message.phase)
    )


def sent_as(message: OutMessage, commands: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What a post of the view carries: ``{"embed": …}`` for a table's message, else ``{"content": …}``
    (``commands``: how commands are written there, :func:`adapters.discord.mentions.names`)."""
    if embedded(message):
        return {"embed": embed_of(message, written(message, commands))}
    return {"content": text_of(message, commands)}


def edited_as(message: OutMessage, commands: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What an edit of the view's message sets: the embed and no text for a table's message (one posted as
    text by an older version becomes an embed), else the text and no embed."""
    if embedded(message):
        return {"content": None, "embeds": [embed_of(message, written(message, commands))]}
    return {"content": text_of(message, commands), "embeds": []}
