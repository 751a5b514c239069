"""Buttons whose colour says what they do, read from the token each one carries.

Discord draws a button in one of four colours; players read them before the words. The meaning is the
action's, never the game state's (a colour must not hint at anyone's cards):

- green (success) — to accept: *quiero*, start the game, confirm the discard;
- red (danger) — to refuse or to risk everything: *no quiero*, *órdago*, cancel the table;
- blurple (primary) — to bet or to act on one's own: *envido*, *sube*, take a seat, *My cards*, ⚡ catch,
  🃏 the table's web page;
- grey (secondary) — everything neutral: *paso*, *mus*, *no hay mus*, options, history, lessons.

Every colour carries a word too (the label): colour alone never tells the action.
"""

from __future__ import annotations

import discord

from bot.kernel import (
    CatchSena,
    ConfirmDiscard,
    LobbyAction,
    OpenWeb,
    ShowCards,
    TakeSeat,
    TurnAction,
    read_token,
)
from engine.actions import ActionKind

#: Turn actions by the engine's kind of action (not by how a token spells it).
_TURN_STYLES = {
    ActionKind.QUIERO: discord.ButtonStyle.success,
    ActionKind.NO_QUIERO: discord.ButtonStyle.danger,
    ActionKind.ORDAGO: discord.ButtonStyle.danger,
    ActionKind.ENVIDO: discord.ButtonStyle.primary,
    ActionKind.SUBE: discord.ButtonStyle.primary,
}
_LOBBY_STYLES = {"start": discord.ButtonStyle.success, "cancel": discord.ButtonStyle.danger}


def style_of(token: str) -> discord.ButtonStyle:
    """The colour of a button carrying ``token`` (grey for what is neutral or not ours)."""
    parsed = read_token(token)
    command = None if parsed is None else parsed.command
    if isinstance(command, TurnAction):
        return _TURN_STYLES.get(command.action.kind, discord.ButtonStyle.secondary)
    if isinstance(command, LobbyAction):
        return _LOBBY_STYLES.get(command.name, discord.ButtonStyle.secondary)
    if isinstance(command, ConfirmDiscard):
        return discord.ButtonStyle.success
    if isinstance(command, TakeSeat | ShowCards | CatchSena | OpenWeb):
        return discord.ButtonStyle.primary
    return discord.ButtonStyle.secondary
