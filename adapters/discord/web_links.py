""" "🃏 Table" on Discord: the presser's own signed link to the table's web page, answered ephemerally.

Discord has no Mini App to say who opens a page, so the core answers the press with a link bound to the
presser and the table, which expires (:class:`bot.app._web_entry.WebEntry`). It is a credential: shown
under a link button in an ephemeral reply, seen by the presser alone — never posted in the channel, never
in a direct message, never logged. A refused press (a stale button, another channel's table) is answered
as any refusal is.
"""

from __future__ import annotations

from typing import Any

import discord

from adapters.discord.ids import PREFIX
from adapters.discord.layout import MAX_LABEL, NO_MENTIONS
from adapters.discord.mentions import commands_in, rewrite
from bot.kernel import Outcome, WebAccess, WebDoor

#: The answer to a press that got nothing to say (never empty: Discord refuses that).
_DONE = "✓"


def open_door(web: WebAccess | None) -> WebDoor | None:
    """Set (and return) Discord's door to the web table ``web`` serves: "🃏 Table" and its ephemeral link.
    Every worker sets it, whichever platforms it serves, so that all draw Discord's views alike."""
    if web is None:
        return None
    door = WebDoor(on_press=True)
    web.doors[PREFIX.rstrip(":")] = door
    return door


def link_view(outcome: Outcome) -> discord.ui.View | None:
    """The link button of an outcome's link (``None`` without one)."""
    link = outcome.link
    if link is None:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label=link.label[:MAX_LABEL] or "·", url=link.url))
    return view


async def answer_link(interaction: discord.Interaction[Any], outcome: Outcome) -> None:
    """Answer "🃏 Table" ephemerally: the core's answer and, when the press held, the link button."""
    text = rewrite(outcome.answer or _DONE, commands_in(interaction))[:2000]
    extra: dict[str, Any] = {}
    view = link_view(outcome)
    if view is not None:
        extra["view"] = view
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra)
