"""Commands named as Discord writes them: a mention a person can click, with the real option names.

The core's texts name commands the way a chat types them: ``/newgame``, ``/rules full``, ``/learn 5``. On
Discord they are sub-commands (``/mus newgame``) whose options have names (``full:True``,
``lesson:5``), and a message can hold a *command mention*, ``</mus newgame:ID>``, which Discord draws as the
command itself: one click fills it in. The ids come from the last sync (:mod:`adapters.discord.sync`): one
per top-level command, globally or per server in development. Without them (never synced) a command is
written ``/mus newgame``, as a person would type it.

:func:`command_paths` finds where each core command lives in the client's tree (``newgame`` → ``mus
newgame``), so that a command moved to another group is still named right; :func:`rewrite` puts it in a
text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import discord
from discord import app_commands

from adapters.discord.sync import GLOBAL, Registered
from bot.app import COMMAND_LIST, leaderboard_scope, wants_full_rules

#: A core command in a text (``/newgame``), not inside a word or a path.
_COMMAND_RE = re.compile(r"(?<![\w/<])/(" + "|".join(name for name, _ in COMMAND_LIST) + r")\b")
#: A core command with its argument (``/rules full``, ``/leaderboard global``, ``/learn 5``).
_ARGUMENT_RE = re.compile(r"(?<![\w/<])/(rules|leaderboard|learn)[ \u00a0](\w+)")


def command_paths(tree: app_commands.CommandTree[Any]) -> dict[str, tuple[str, str]]:
    """Each command of the tree by its own name: its top-level command and its full path (``"newgame"`` →
    ``("mus", "mus newgame")``), the first one found winning; and each by its full path too (``"mus
    language"``, one's own, whereas ``"language"`` is the server's ``/mus-admin language``)."""
    paths: dict[str, tuple[str, str]] = {}
    for command in tree.get_commands(type=discord.AppCommandType.chat_input):
        if isinstance(command, app_commands.Group):
            for sub in command.walk_commands():
                if isinstance(sub, app_commands.Command):
                    paths.setdefault(sub.name, (command.name, sub.qualified_name))
                    paths.setdefault(sub.qualified_name, (command.name, sub.qualified_name))
        else:
            paths.setdefault(command.name, (command.name, command.name))
    return paths


def names(
    paths: Mapping[str, tuple[str, str]], registered: Registered, guild_id: int | None
) -> dict[str, str]:
    """How each command is written in a message seen in ``guild_id`` (``None``: a DM): a mention when its
    id is known there, else ``/path``."""
    ids = (registered.ids.get(str(guild_id)) if guild_id is not None else None) or registered.ids.get(
        GLOBAL, {}
    )
    out: dict[str, str] = {}
    for name, (root, path) in paths.items():
        root_id = ids.get(root)
        out[name] = f"</{path}:{root_id}>" if root_id else f"/{path}"
    return out


def _option(command: str, word: str) -> str | None:
    """The option a core argument stands for (``rules full`` → ``full:True``), ``None`` if none."""
    if command == "rules" and wants_full_rules([word]):
        return "full:True"
    if command == "leaderboard" and leaderboard_scope([word]) == "global":
        return "everyone:True"
    if command == "learn" and word.isdigit():
        return f"lesson:{word}"
    return None


def rewrite(text: str, written: Mapping[str, str] | None) -> str:
    """``text`` with each core command as Discord writes it (``written``: by :func:`names`; without it,
    ``/mus <name>``), arguments as the option they set."""

    def command(name: str) -> str:
        return (written or {}).get(name) or f"/mus {name}"

    def with_argument(match: re.Match[str]) -> str:
        option = _option(match[1], match[2])
        return f"{command(match[1])} {option}" if option else f"{command(match[1])} {match[2]}"

    text = _ARGUMENT_RE.sub(with_argument, text)
    return _COMMAND_RE.sub(lambda match: command(match[1]), text)


def commands_in(interaction: discord.Interaction[Any]) -> dict[str, str] | None:
    """How commands are written in an answer to ``interaction`` (``None``: as the fallback does, when the
    client has no commands to name — a test's bare client)."""
    written = getattr(interaction.client, "written", None)
    return None if written is None else written(interaction.guild_id)
