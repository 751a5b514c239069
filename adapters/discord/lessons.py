"""``/mus learn`` on Discord: the lessons shown to the learner alone, in an ephemeral message (or in a DM).

The command's reply is the lesson's step, ephemeral in a server (only the learner sees it; no channel is
flooded); each press of a lesson button answers by updating that same message with the next step, or with
the step again under a short explanation after a wrong choice. A stale, forged or foreign press gets an
ephemeral answer and changes nothing (the core checks it: :mod:`bot.app._lesson_commands`).
"""

from __future__ import annotations

from typing import Any

import discord

from adapters.discord.ids import user_ref
from adapters.discord.interactions import DONE, DiscordHandlers
from bot.kernel import ChatRef, Outcome, UserRef
from bot.lessons import SLOT


async def learn(handlers: DiscordHandlers, interaction: discord.Interaction[Any], number: int | None) -> None:
    """``/mus learn [lesson]``: the learner's step, shown to them alone."""
    user = user_ref(interaction)
    # Wherever it is asked, a lesson is private: the learner's own place, answered ephemerally in a server.
    private = ChatRef(user.key, private=True, title=user.name)

    async def work(chat: ChatRef, asker: UserRef) -> Outcome:
        return await handlers.service.lessons.learn(private, asker, number)

    await handlers.command(interaction, work)


async def answer_press(
    handlers: DiscordHandlers, interaction: discord.Interaction[Any], user: UserRef, outcome: Outcome
) -> None:
    """A lesson button was pressed: the pressed message shows the next step (or the step again); a press
    that changed nothing and shows nothing is answered ephemerally."""
    view = next((m for m in outcome.messages if m.user == user.key and m.slot == SLOT), None)
    if view is None:
        await handlers._say(interaction, outcome.answer or DONE)
        return
    await handlers._update(interaction, view)
