"""An interaction that failed before, or outside, our handlers is still answered, in the person's language.

The handlers answer everything that happens inside them (:mod:`adapters.discord.interactions`). What
discord.py rejects before calling them used to end in a log line and, for the person, Discord's "The
application did not respond": a command the bot no longer has or whose options changed since Discord last
showed it (the commands registered are an older version's: ``CommandNotFound``,
``CommandSignatureMismatch``, a choice no longer offered — ``TransformerError``), a check that refused, an
error escaping a command or a component's callback.

:func:`answer_error` is the one answer to all of those: the failure logged once (with its traceback when it
is a bug or the commands are out of date; one line when a check refused, as a refusal is no fault), and an
ephemeral message to the person in their client's language — as a follow-up when the interaction was
already answered or deferred. It is ``tree.on_error``, and :func:`guarded` wraps what components call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord import app_commands

from adapters.discord.ids import user_ref
from adapters.discord.layout import NO_MENTIONS
from adapters.discord.permissions import permission_names
from bot.i18n import Translator, normalize_language, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_

log = logging.getLogger(__name__)
_ = N_

COMMAND_CHANGED = _(
    "This command has changed since Discord showed it to you: try again in a minute (or reload Discord)."
)
NOT_ALLOWED = _("You cannot use this command here.")
# Translators: {permissions} are Discord's names of permissions, e.g. "Manage Server".
YOU_NEED = _("You need the {permissions} permission for this.")
# Translators: {permissions} are Discord's names of permissions, e.g. "Embed Links".
I_NEED = _("I need the {permissions} permission in this channel for this.")
SERVER_ONLY = _("This command works only in a server's channel.")
#: The same words as the core's answer to too many commands (one translation for both).
SLOW_DOWN = _("Slow down, please: too many commands at once. Try again in a few seconds.")

#: The errors that mean the commands Discord shows are not this version's (a sync is due).
OUT_OF_DATE = (
    app_commands.CommandNotFound,
    app_commands.CommandSignatureMismatch,
    app_commands.TransformerError,
)


def explain(error: Exception, t: Translator) -> str:
    """What to tell the person about ``error``, in ``t``'s language."""
    if isinstance(error, OUT_OF_DATE):
        return t.gettext(COMMAND_CHANGED)
    if isinstance(error, app_commands.MissingPermissions):
        return t.format(YOU_NEED, permissions=permission_names(t, error.missing_permissions))
    if isinstance(error, app_commands.BotMissingPermissions):
        return t.format(I_NEED, permissions=permission_names(t, error.missing_permissions))
    if isinstance(error, app_commands.NoPrivateMessage):
        return t.gettext(SERVER_ONLY)
    if isinstance(error, app_commands.CommandOnCooldown):
        return t.gettext(SLOW_DOWN)
    if isinstance(error, app_commands.CheckFailure):
        return t.gettext(NOT_ALLOWED)
    return t.gettext(msg.INTERNAL_ERROR)


def _log(interaction: discord.Interaction[Any], error: Exception) -> None:
    """Log ``error`` once: one line for a refusing check, the traceback for the rest."""
    what = _what(interaction)
    if isinstance(error, app_commands.CheckFailure):
        log.info("%s refused by a check: %s", what, error)
    elif isinstance(error, OUT_OF_DATE):
        log.warning(
            "%s does not match this version's commands (run `musbot discord-sync`): %s",
            what,
            error,
            exc_info=error,
        )
    else:
        original = getattr(error, "original", None) or error  # (CommandInvokeError wraps the cause)
        log.error("%s failed", what, exc_info=original)


def _what(interaction: discord.Interaction[Any]) -> str:
    """The interaction in a few words: ``/mus newgame`` or ``a press on <custom id>``."""
    data: Any = interaction.data or {}
    if interaction.type is not discord.InteractionType.application_command:
        return f"a press on {str(data.get('custom_id', '?'))[:100]!r}"
    words = [str(data.get("name", "?"))]
    options = data.get("options") or []
    while options and options[0].get("type") in (1, 2):  # a sub-command (group): its name, and inside it
        words.append(str(options[0].get("name", "?")))
        options = options[0].get("options") or []
    return "/" + " ".join(words)


async def answer_error(interaction: discord.Interaction[Any], error: Exception) -> None:
    """Log ``error`` once and tell the person, ephemerally, in their language (a follow-up when the
    interaction was already answered); an answer Discord refuses (the interaction expired) is only logged."""
    _log(interaction, error)
    text = explain(error, translator(normalize_language(user_ref(interaction).lang)))
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
        else:
            await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as exc:
        log.info("the error could not be told to the person: %s", exc)


PressHandler = Callable[[discord.Interaction[Any], str], Awaitable[None]]


def guarded(handler: Callable[[], PressHandler]) -> PressHandler:
    """A press handler that answers whatever escapes the one ``handler()`` returns at the press (looked up
    then, so that it may be replaced) — discord.py would only log it, unanswered."""

    async def press(interaction: discord.Interaction[Any], data: str) -> None:
        try:
            await handler()(interaction, data)
        except Exception as exc:  # the person is answered whatever went wrong
            await answer_error(interaction, exc)

    return press
