"""The Discord client: slash commands, persistent components, the delivery lanes, start and stop.

``MusClient`` is an :class:`discord.AutoShardedClient` (one shard, or Discord's recommendation, or the
``DISCORD_SHARD_COUNT`` / ``DISCORD_SHARD_IDS`` split across processes sharing one Redis, which take turns
to IDENTIFY — :mod:`adapters.discord.identify` — and are ready while their shards are connected —
:mod:`adapters.discord.shards`) that needs no privileged intent: everything arrives as interactions. At
start-up it registers the ``/mus`` commands (to ``DISCORD_GUILD_IDS`` for development — instant — or
globally) when they changed since their last sync (:mod:`adapters.discord.sync`), and the two persistent
component templates, so that buttons drawn by any worker, before any restart, still act.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands

from adapters.discord import access
from adapters.discord.admin import admin_group, guard_settings
from adapters.discord.commands import CatalogTranslator, mus_group
from adapters.discord.errors import answer_error, guarded
from adapters.discord.identify import IdentifyGate
from adapters.discord.ids import PREFIX
from adapters.discord.interactions import DiscordHandlers
from adapters.discord.layout import MENU_PREFIX, NO_MENTIONS, TokenButton, TokenMenu
from adapters.discord.mentions import command_paths, names
from adapters.discord.private_hands import PrivateHands
from adapters.discord.settings import DiscordSettings
from adapters.discord.shards import ShardWatch, quiet_reconnects
from adapters.discord.sync import CommandSync, Registered
from adapters.discord.transport import DiscordTransport
from bot.app import Service
from bot.delivery import BudgetedTransport, Delivery, MemoryOutbox, Outbox, RedisSurfaces, SurfaceStore
from bot.ops import App, DeadlineLoop, SettingRefused, Settings, StartupError
from bot.store import (
    BotRate,
    CallBudget,
    LeaseStore,
    MarkStore,
    MemoryLeases,
    MemoryMarks,
    RedisCallBudget,
    RedisLeases,
    RedisMarks,
)

log = logging.getLogger(__name__)

#: The gateway's close code for a token it does not accept.
AUTHENTICATION_FAILED = 4004
#: discord.py waits out shorter rate limits itself; longer ones come back to the delivery lane (≥ 30 s).
MAX_RATELIMIT_WAIT = 30.0
#: The delivery's calls, every worker together: Discord's global limit is 50 requests a second per bot;
#: kept with a margin (interactions' own answers are not counted by Discord, nor here).
BOT_RATE = BotRate(40, burst=5)


def point_at(settings: DiscordSettings) -> None:
    """Send REST calls and the gateway connection elsewhere (a local fake in tests) when settings say so.

    Both are class attributes of discord.py: one destination per process.
    """
    if settings.api_base_url:
        discord.http.Route.BASE = settings.api_base_url.rstrip("/")
    if settings.gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway_url)


def _carries(message: discord.Message | None, custom_id: str) -> bool:
    """Whether ``custom_id`` is one of the message's components (else no component item handles it)."""
    if message is None:
        return False
    for row in message.components:
        for child in getattr(row, "children", ()):
            if getattr(child, "custom_id", None) == custom_id:
                return True
    return False


class MusClient(discord.AutoShardedClient):
    """The bot on Discord: one service, one delivery (lanes per channel), the ``/mus`` command tree."""

    def __init__(
        self,
        service: Service,
        settings: DiscordSettings,
        surfaces: SurfaceStore,
        *,
        marks: MarkStore | None = None,
        leases: LeaseStore | None = None,
        calls: CallBudget | None = None,
        **options: Any,
    ) -> None:
        """A client for ``service``; ``surfaces`` remembers which message shows what, ``marks`` which
        commands were last synced and who was told their direct messages are closed, ``leases`` whose turn
        it is to IDENTIFY (both in this process only, when not given); the delivery's calls are drawn from
        ``calls``, the bot's budget every worker shares (``None``: discord.py's own limits only); ``options``
        go to discord.py (tests shorten ``guild_ready_timeout``)."""
        # The bot never speaks in voice channels: no warning about voice libraries it does not need.
        discord.VoiceClient.warn_nacl = False
        discord.VoiceClient.warn_dave = False
        shards: dict[str, Any] = {}
        if settings.shard_count is not None:
            shards["shard_count"] = settings.shard_count
            if settings.shard_ids:
                shards["shard_ids"] = settings.shard_ids
        super().__init__(
            intents=discord.Intents.none() | discord.Intents(guilds=True),
            max_ratelimit_timeout=MAX_RATELIMIT_WAIT,
            allowed_mentions=NO_MENTIONS,
            **shards,
            **options,
        )
        self.settings = settings
        marks = marks or MemoryMarks()
        inner = DiscordTransport(self, commands=self.written_in)
        self.transport = PrivateHands(inner, surfaces, service, marks)
        # Discord's 50 requests a second are the bot's, whatever the number of workers: one budget.
        token = "" if settings.token is None else settings.token.get_secret_value()
        bot = f"dc:{token.partition('.')[0]}"  # the token's public part: the bot's id
        self.sender = Delivery(
            self.transport if calls is None else BudgetedTransport(self.transport, calls, bot, BOT_RATE),
            surfaces,
            min_interval=settings.min_interval,
            platform="discord",
            key_platform=PREFIX.rstrip(":"),
        )
        self.handlers = DiscordHandlers(service, self.sender, hands=self.transport)
        # A channel that refused a post (no right to post there any more) has its table paused: access.py.
        self.sender.on_chat_lost = functools.partial(access.chat_lost, self.handlers)
        settings_guard = guard_settings(self.handlers)  # (a server's settings buttons: its admins' only)
        #: What :class:`TokenButton` and :class:`TokenMenu` call (whatever escapes it is answered too).
        self.press_handler = guarded(lambda: settings_guard)
        self.tree: app_commands.CommandTree[MusClient] = app_commands.CommandTree(self)
        # The server's settings first: a chat's /language in the core's texts is /mus-admin language (the
        # first command of a name wins in mentions.command_paths; /mus language is one's own).
        self.tree.add_command(admin_group(self.handlers))
        self.tree.add_command(mus_group(self.handlers))
        self.paths = command_paths(self.tree)
        """Each command's top-level command and path: the tree is fixed from here on (not walked per post)."""
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]
        self.command_sync = CommandSync(self.tree, marks, settings.guild_ids)
        self.commands = Registered()
        """The commands as Discord has them (their ids, for mentions), once logged in."""
        self.identify_gate = IdentifyGate(leases or MemoryLeases())
        """One IDENTIFY per 5 s across every process on the token (:mod:`adapters.discord.identify`)."""
        self.shard_watch = ShardWatch()
        """Which of this process's shards are connected (its readiness)."""
        quiet_reconnects()

    async def setup_hook(self) -> None:
        """Register the persistent components and the commands' translations; sync the commands if they
        changed since their last sync (:mod:`adapters.discord.sync`), and learn their ids."""
        self.add_dynamic_items(TokenButton, TokenMenu)
        await self.tree.set_translator(CatalogTranslator())
        for guild_id in self.settings.guild_ids:
            self.tree.copy_global_to(guild=discord.Object(id=guild_id))
        if self.application_id is None:  # (set by the login, which runs this hook)
            return
        if self.settings.sync_commands:
            _, self.commands = await self.command_sync.run(self.application_id)
        else:
            self.commands = await self.command_sync.known(self.application_id)

    def written(self, guild_id: int | None) -> dict[str, str]:
        """How each core command is written in a message seen in ``guild_id`` (``None``: a DM): a mention
        of the command as synced (:mod:`adapters.discord.mentions`)."""
        return names(self.paths, self.commands, guild_id)

    def written_in(self, channel_id: int) -> dict[str, str]:
        """:meth:`written` for a channel (its server from the cache; a DM's is none)."""
        guild = getattr(self.get_channel(channel_id), "guild", None)
        return self.written(None if guild is None else guild.id)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """A press on a component its message does not carry (forged, or from a message since changed) is
        answered too: no component item will see it."""
        if interaction.type is not discord.InteractionType.component or interaction.data is None:
            return
        custom_id = str(interaction.data.get("custom_id", ""))
        if not _carries(interaction.message, custom_id):
            await self.press_handler(interaction, "" if custom_id.startswith(MENU_PREFIX) else custom_id)

    async def _on_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        """A command discord.py could not run (out of date, refused by a check, failed): logged once, and
        the person told ephemerally (:func:`adapters.discord.errors.answer_error`)."""
        await answer_error(interaction, error)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Wait for this token's turn to start a session, whichever process had the last one (instead of
        discord.py's 5 s between the shards of this process alone)."""
        await self.identify_gate.wait(self.application_id or 0, shard_id or 0)

    async def on_shard_connect(self, shard_id: int) -> None:
        """A shard got a new session (READY)."""
        self.shard_watch.connected(shard_id, "connect")

    async def on_shard_resumed(self, shard_id: int) -> None:
        """A shard resumed its session (the events it missed are replayed)."""
        self.shard_watch.connected(shard_id, "resume")

    async def on_shard_disconnect(self, shard_id: int) -> None:
        """A shard lost its connection; discord.py connects it again."""
        self.shard_watch.disconnected(shard_id)

    async def on_shard_ready(self, shard_id: int) -> None:
        """Log each shard once its servers arrived."""
        log.info("discord shard %s ready as %s", shard_id, self.user)

    def expected_shards(self) -> list[int]:
        """The shards this process runs (all of them when it runs them all)."""
        if self.shard_ids:
            return list(self.shard_ids)
        return list(range(self.shard_count or 1))

    async def close(self) -> None:
        """Close on purpose: the shards' disconnects that follow are no outage."""
        self.shard_watch.closing = True
        await super().close()


class DiscordRuntime:
    """A started client: its connection task, and the deadline loop when it runs alone on its service."""

    def __init__(self, client: MusClient, task: asyncio.Task[None]) -> None:
        """Wrap a logged-in client whose ``connect()`` runs in ``task``."""
        self.client = client
        self.task = task
        self.deadlines: DeadlineLoop | None = None

    @property
    def sender(self) -> Delivery:
        """The client's delivery lanes."""
        return self.client.sender

    async def ready(self) -> bool:
        """Whether every shard of this process is connected now (false while one is down: the
        interactions of its servers are not reaching us)."""
        client = self.client
        client.shard_watch.expect(client.expected_shards())
        return client.is_ready() and not client.is_closed() and client.shard_watch.ready()

    async def stop(self) -> None:
        """Stop gracefully: the deadline loop, the interactions in hand, the last views (bounded), the
        connection."""
        if self.deadlines is not None:
            await self.deadlines.stop()
        with contextlib.suppress(TimeoutError):
            await self.client.handlers.wait_idle(timeout=5.0)
        with contextlib.suppress(TimeoutError):
            await self.sender.flush(timeout=5.0)
        await self.sender.close()
        await self.client.close()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task


async def start_client(
    service: Service,
    settings: DiscordSettings,
    surfaces: SurfaceStore,
    *,
    deadlines: bool = True,
    ready_timeout: float = 60.0,
    client_class: type[MusClient] = MusClient,
    outbox: Outbox | None = None,
    marks: MarkStore | None = None,
    leases: LeaseStore | None = None,
    calls: CallBudget | None = None,
    **options: Any,
) -> DiscordRuntime:
    """Log in, connect every shard of this process and wait until they are ready (with ``deadlines``,
    fire them too; views for another platform wait in ``outbox``).

    A start that fails closes the client and is told as a :class:`~bot.ops.StartupError` in one line (see
    :func:`startup_error`).
    """
    if settings.token is None:
        raise ValueError("DISCORD_TOKEN is not set")
    point_at(settings)
    client = client_class(service, settings, surfaces, marks=marks, leases=leases, calls=calls, **options)
    try:
        await client.login(settings.token.get_secret_value())
        task = asyncio.create_task(client.connect(reconnect=True), name="discord-gateway")
        await _until_ready(client, task, ready_timeout)
    except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
        with contextlib.suppress(Exception):
            await client.close()  # (its HTTP session too, opened by the login)
        raise startup_error(exc, ready_timeout) from None
    runtime = DiscordRuntime(client, task)
    if deadlines:
        runtime.deadlines = DeadlineLoop(service, [runtime.sender], outbox=outbox or MemoryOutbox())
        runtime.deadlines.start()
    log.info("discord adapter running as %s", client.user)
    return runtime


async def _until_ready(client: MusClient, task: asyncio.Task[None], timeout: float) -> None:
    """Wait until every shard is ready; the gateway task's error if it ends first, ``TimeoutError`` if
    neither happens within ``timeout`` seconds (the task keeps reconnecting an unreachable gateway)."""
    ready = asyncio.create_task(client.wait_until_ready())
    await asyncio.wait({task, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if ready.done():
        return
    ready.cancel()
    error = task.exception() if task.done() and not task.cancelled() else None
    if error is not None:
        raise error
    task.cancel()
    raise TimeoutError


def startup_error(exc: Exception, ready_timeout: float) -> StartupError:
    """What a failed start means for the host, in one line without the token: a rejected token (at login,
    or by the gateway: close code 4004) is a :class:`~bot.ops.SettingRefused` (exit status 2, no restart),
    the rest a :class:`~bot.ops.StartupError` (exit status 1: the service manager restarts it)."""
    where = discord.http.Route.BASE
    rejected = isinstance(exc, discord.LoginFailure) or (
        isinstance(exc, discord.ConnectionClosed) and exc.code == AUTHENTICATION_FAILED
    )
    if rejected:
        return SettingRefused(
            "DISCORD_TOKEN",
            f"rejected by Discord at {where} (401 Unauthorized): revoked or mistyped? The Developer Portal "
            "gives a new one (your application → Bot → Reset Token)",
        )
    if isinstance(exc, discord.ConnectionClosed):
        return StartupError(
            f"Discord's gateway closed the connection ({exc.code}: {exc.reason or 'no reason'})"
        )
    if isinstance(exc, discord.HTTPException):  # (its text is Discord's: status, code and message)
        return StartupError(f"Discord at {where} refused a start-up call ({exc})")
    if isinstance(exc, TimeoutError):
        return StartupError(f"Discord's gateway did not get ready within {ready_timeout:g} s")
    if isinstance(exc, discord.DiscordException) and not isinstance(exc, discord.GatewayNotFound):
        return StartupError(f"the Discord adapter cannot start ({type(exc).__name__}: {exc})")
    return StartupError(f"cannot reach Discord at {where} ({type(exc).__name__}: {exc})")


async def start_discord(
    app: App, settings: Settings, discord_settings: DiscordSettings, *, deadlines: bool = True
) -> DiscordRuntime:
    """Start the Discord adapter on a running core (its surfaces in the core's Redis)."""
    surfaces = RedisSurfaces(app.redis, settings.redis_prefix)
    marks, leases = (
        RedisMarks(app.redis, settings.redis_prefix),
        RedisLeases(app.redis, settings.redis_prefix),
    )
    return await start_client(
        app.service,
        discord_settings,
        surfaces,
        deadlines=deadlines,
        outbox=app.outbox,
        marks=marks,
        leases=leases,
        calls=RedisCallBudget(app.redis, settings.redis_prefix),  # one budget for every worker of the bot
    )
