"""The Discord client: slash commands, persistent components, the delivery lanes, start and stop.

``MusClient`` is an :class:`discord.AutoShardedClient` (one shard, or Discord's recommendation, or the
``DISCORD_SHARD_COUNT`` / ``DISCORD_SHARD_IDS`` split across processes sharing one Redis) that needs no
privileged intent: everything arrives as interactions. At start-up it registers the ``/mus`` commands
(to ``DISCORD_GUILD_IDS`` for development — instant — or globally) and the two persistent component
templates, so that buttons drawn by any worker, before any restart, still act.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands

from adapters.discord.commands import CatalogTranslator, mus_group
from adapters.discord.ids import PREFIX
from adapters.discord.interactions import DiscordHandlers
from adapters.discord.layout import MENU_PREFIX, NO_MENTIONS, TokenButton, TokenMenu
from adapters.discord.settings import DiscordSettings
from adapters.discord.transport import DiscordTransport
from bot.app import Service
from bot.delivery import BudgetedTransport, Delivery, MemoryOutbox, Outbox, RedisSurfaces, SurfaceStore
from bot.ops import App, DeadlineLoop, SettingRefused, Settings, StartupError
from bot.store import BotRate, CallBudget, RedisCallBudget

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
        calls: CallBudget | None = None,
        **options: Any,
    ) -> None:
        """A client for ``service``; ``surfaces`` remembers which message shows what; the delivery's calls
        are drawn from ``calls``, the bot's budget every worker shares (``None``: discord.py's own limits
        only); ``options`` go to discord.py (tests shorten ``guild_ready_timeout``)."""
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
        self.transport = DiscordTransport(self)
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
        self.handlers = DiscordHandlers(service, self.sender, dms_closed=self.transport.closed)
        #: What :class:`TokenButton` and :class:`TokenMenu` call.
        self.press_handler = self.handlers.press
        self.tree: app_commands.CommandTree[MusClient] = app_commands.CommandTree(self)
        self.tree.add_command(mus_group(self.handlers))
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]

    async def setup_hook(self) -> None:
        """Register the persistent components and the commands' translations; sync the commands."""
        self.add_dynamic_items(TokenButton, TokenMenu)
        await self.tree.set_translator(CatalogTranslator())
        if not self.settings.sync_commands:
            return
        if self.settings.guild_ids:
            for guild_id in self.settings.guild_ids:
                guild = discord.Object(id=guild_id)
                self.tree.copy_global_to(guild=guild)
                await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """A press on a component its message does not carry (forged, or from a message since changed) is
        answered too: no component item will see it."""
        if interaction.type is not discord.InteractionType.component or interaction.data is None:
            return
        custom_id = str(interaction.data.get("custom_id", ""))
        if not _carries(interaction.message, custom_id):
            await self.handlers.press(interaction, "" if custom_id.startswith(MENU_PREFIX) else custom_id)

    async def _on_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        log.error("slash command error: %s", error)

    async def on_shard_ready(self, shard_id: int) -> None:
        """Log each shard as it connects."""
        log.info("discord shard %s ready as %s", shard_id, self.user)


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
        """Whether every shard of this process is connected."""
        return self.client.is_ready() and not self.client.is_closed()

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
    client = client_class(service, settings, surfaces, **options)
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
    calls = RedisCallBudget(app.redis, settings.redis_prefix)  # one budget for every worker of the bot
    return await start_client(
        app.service, discord_settings, surfaces, deadlines=deadlines, outbox=app.outbox, calls=calls
    )
