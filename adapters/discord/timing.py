"""Each Discord interaction is handled under one time budget from its creation, so a frozen Redis never
costs an acknowledgement (issue 24).

Discord drops an interaction's first answer (a message, an update, a deferral) later than 3 s after it was
created — not after it reached the bot: the gateway's delay counts. So an interaction is timed from
``interaction.created_at`` (its snowflake's time): all its store calls — the act-once check, the work, what
the answer looks up — share the budget of :data:`DISCORD` (:func:`bot.store.store_budget`), and if its work
still runs at its answer time it is deferred first (:func:`bot.ops.answer_in_time`), then answered by a
follow-up.

The numbers (:data:`DISCORD`): 1.5 s from creation for all store calls (at least 0.4 s from when the handling
starts, however late the interaction reached the bot), and a deferral at 2.2 s from creation at the latest:
Discord's round trip takes some of the 3 s. With Redis frozen, a press or a command is answered "store
unavailable" about 1.5 s after its creation.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import discord

from bot.ops import AnswerWindow, UpdateTimes

#: Seconds Discord gives an interaction's first answer, from its creation.
INTERACTION_WINDOW = 3.0
#: How Discord interactions are timed (see the module docstring).
DISCORD = AnswerWindow(store=1.5, least=0.4, margin=0.5, latest=2.2)


def interaction_times(interaction: discord.Interaction[Any], window: AnswerWindow = DISCORD) -> UpdateTimes:
    """The times of ``interaction``, counted from its creation (event-loop time).

    Its creation comes from Discord's clock, its age from ours: an age below zero (a clock behind Discord's)
    counts as zero, one beyond the window (a clock ahead) as the window — the interaction is then deferred
    at once, which costs a call and loses nothing.
    """
    age = time.time() - interaction.created_at.timestamp()
    arrival = asyncio.get_running_loop().time() - min(max(age, 0.0), INTERACTION_WINDOW)
    return window.times(arrival)


def shown_at(interaction: discord.Interaction[Any]) -> float | None:
    """When the pressed message was last drawn (its edit time, else its creation): a ⚡'s catch window
    counts from it. ``None`` unless the message still carries the pressed component (a press on one since
    removed is judged by the core's clock alone)."""
    message = interaction.message
    custom_id = interaction.data.get("custom_id") if interaction.data is not None else None
    if message is None or not any(
        getattr(child, "custom_id", None) == custom_id
        for row in message.components
        for child in getattr(row, "children", ())
    ):
        return None
    return (message.edited_at or message.created_at).timestamp()
