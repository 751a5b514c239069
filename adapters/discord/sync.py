"""The slash commands registered with Discord on demand, not at every start.

A sync is a bulk overwrite of the application's commands (globally, or on each server of
``DISCORD_GUILD_IDS`` in development). Discord limits how many a day an application may do, and every
worker of every restart used to do one. Now:

- at start-up (``DISCORD_SYNC_COMMANDS=true``, the default) a worker syncs only when the commands it would
  send — names, options, descriptions and their translations, exactly the payload — differ from the last
  ones synced: their fingerprint (SHA-256 of the payload as canonical JSON) is kept in the store's marks
  (:class:`bot.store.MarkStore`, shared by every worker), one per application and set of servers;
- ``musbot discord-sync`` syncs at once, whatever the mark says (a command deleted by hand in the
  Developer Portal, a doubt), and keeps the new mark.

The mark also keeps the ids Discord gave the commands, so that a worker that did not sync can still name a
command as Discord mentions it (``</mus help:123…>``, :mod:`adapters.discord.mentions`) without asking.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.store import MarkStore, StoreUnavailable

if TYPE_CHECKING:
    from adapters.discord.settings import DiscordSettings
    from bot.ops import Settings

log = logging.getLogger(__name__)

#: Where the commands of all servers go (as opposed to a server's id).
GLOBAL = "global"


@dataclass
class Registered:
    """The commands as Discord has them: the payloads' fingerprint, and each command's id per target
    (``"global"`` or a server's id) and name."""

    fingerprint: str = ""
    ids: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> str:
        """As the mark keeps it."""
        return json.dumps({"fingerprint": self.fingerprint, "ids": self.ids}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Registered:
        """A kept mark (nothing registered when there is none, or it cannot be read)."""
        try:
            data = json.loads(text or "{}")
            ids = {str(t): {str(n): int(i) for n, i in c.items()} for t, c in data.get("ids", {}).items()}
            return cls(str(data.get("fingerprint", "")), ids)
        except (ValueError, TypeError, AttributeError):
            return cls()


def mark_name(application_id: int, guild_ids: Sequence[int]) -> str:
    """The mark of an application's commands on a set of servers (or global ones)."""
    where = ",".join(str(g) for g in sorted(guild_ids)) or GLOBAL
    return f"discord:commands:{application_id}:{where}"


def fingerprint(payloads: dict[str, list[dict[str, Any]]]) -> str:
    """SHA-256 of the payloads as canonical JSON."""
    canonical = json.dumps(payloads, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CommandSync:
    """Syncs one client's command tree when it changed (see the module docstring)."""

    def __init__(
        self, tree: app_commands.CommandTree[Any], marks: MarkStore, guild_ids: Sequence[int]
    ) -> None:
        """Sync ``tree`` to ``guild_ids`` (none: globally), remembering it in ``marks``."""
        self.tree = tree
        self.marks = marks
        self.guild_ids = list(guild_ids)

    def _targets(self) -> dict[str, discord.Object | None]:
        if not self.guild_ids:
            return {GLOBAL: None}
        return {str(g): discord.Object(id=g) for g in self.guild_ids}

    async def payloads(self) -> dict[str, list[dict[str, Any]]]:
        """What a sync sends to each target, translated (as :meth:`CommandTree.sync` builds it)."""
        translator = self.tree.translator
        out: dict[str, list[dict[str, Any]]] = {}
        for name, guild in self._targets().items():
            commands = self.tree.get_commands(guild=guild)
            if translator is None:
                out[name] = [c.to_dict(self.tree) for c in commands]
            else:
                out[name] = [await c.get_translated_payload(self.tree, translator) for c in commands]
        return out

    async def known(self, application_id: int) -> Registered:
        """The commands as the last sync left them (nothing when none was kept, or the store cannot say:
        then a sync is due, which costs one call and loses nothing)."""
        try:
            kept = await self.marks.get_mark(mark_name(application_id, self.guild_ids))
        except StoreUnavailable as exc:
            log.warning("which discord commands were synced last is unknown (%s)", exc)
            return Registered()
        return Registered.from_json(kept)

    async def run(self, application_id: int, *, force: bool = False) -> tuple[bool, Registered]:
        """Sync if the payloads changed since the last sync (or ``force``); whether it synced, and the
        commands as Discord now has them."""
        kept = await self.known(application_id)
        wanted = fingerprint(await self.payloads())
        if kept.fingerprint == wanted and not force:
            log.info("discord commands unchanged since their last sync: not synced")
            return False, kept
        registered = Registered(wanted)
        for target, guild in self._targets().items():
            synced = await self.tree.sync(guild=guild)
            registered.ids[target] = {c.name: c.id for c in synced}
            log.info("discord commands synced to %s: %s", target, ", ".join(sorted(registered.ids[target])))
        try:
            await self.marks.set_mark(mark_name(application_id, self.guild_ids), registered.to_json())
        except StoreUnavailable as exc:  # the next start syncs once more: nothing else is lost
            log.warning("the discord commands' sync could not be remembered (%s)", exc)
        return True, registered


def sync_now(settings: Settings, discord_settings: DiscordSettings) -> int:
    """``musbot discord-sync``: register the commands with Discord now; the exit status (a failure is told
    in one line on stderr)."""
    return asyncio.run(_sync_now(settings, discord_settings))


async def _sync_now(settings: Settings, discord_settings: DiscordSettings) -> int:
    from adapters.discord.app import MusClient, point_at, startup_error  # (it builds on this module)
    from bot.delivery import RedisSurfaces
    from bot.ops import StartupError, build_app
    from bot.store import RedisMarks

    if discord_settings.token is None:
        print("DISCORD_TOKEN: not set; it is needed to register the commands", file=sys.stderr)
        return 2
    try:
        app = await build_app(settings)
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return exc.exit_status
    marks = RedisMarks(app.redis, settings.redis_prefix)
    point_at(discord_settings)
    surfaces = RedisSurfaces(app.redis, settings.redis_prefix)
    quiet = discord_settings.model_copy(update={"sync_commands": False})  # (this one syncs by force)
    client = MusClient(app.service, quiet, surfaces, marks=marks)
    try:
        await client.login(discord_settings.token.get_secret_value())
        assert client.application_id is not None  # (login sets it)
        _, registered = await client.command_sync.run(client.application_id, force=True)
    except (discord.DiscordException, OSError) as exc:
        failure = startup_error(exc, 0)
        print(str(failure) if failure.exit_status == 2 else f"musbot: {failure}", file=sys.stderr)
        return failure.exit_status
    finally:
        await client.close()
        await app.close()
    for target, ids in registered.ids.items():
        where = "every server (global commands)" if target == GLOBAL else f"server {target}"
        print(f"synced {', '.join('/' + n for n in sorted(ids))} to {where}")
    return 0
