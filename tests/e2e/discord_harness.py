"""The real Discord adapter (discord.py 2.7, unmodified) against :class:`FakeDiscord`, and a table driver.

:func:`start_discord_bot` starts the production client (:func:`adapters.discord.app.start_client`) on a
service with in-process stores, pointed at the fake server by the same two settings a host would use
(``DISCORD_API_BASE_URL``, ``DISCORD_GATEWAY_URL``). :class:`DiscordTable` plays a table the way members do:
it finds buttons on the messages the fake holds (the channel's, each member's DMs and ephemerals), presses
them and waits until the interaction was answered and the delivery lanes are idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from adapters.discord.app import DiscordRuntime, MusClient, start_client
from adapters.discord.settings import DiscordSettings
from bot.app import Service
from bot.delivery import SurfaceStore
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import TableState, TableStatus
from bot.store import LeaseStore, MarkStore
from engine.cards import SUIT_SYMBOLS, card_name
from engine.hand_types import Phase
from engine.match import Match

from .conftest import code_of, default_choice, record_cards, stamp_of, watch_writes
from .fake_discord import FakeChannel, FakeDiscord, FakeInteraction, FakeUser, StoredMessage


class QuickStartClient(MusClient):
    """The production client without the 5 s pause between shards' IDENTIFYs (the fake has no limit)."""

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """No pause."""


def discord_settings_for(dc: FakeDiscord, **extra: Any) -> DiscordSettings:
    """The adapter's settings pointing at the fake server (nothing read from the environment)."""
    values: dict[str, Any] = {
        "token": SecretStr(dc.token),
        "api_base_url": dc.api_base,
        "gateway_url": dc.gateway_url,
        "min_interval": 0.0,
    }
    values.update(extra)
    return DiscordSettings(_env_file=None, **values)  # type: ignore[call-arg]


async def start_discord_bot(
    dc: FakeDiscord,
    service: Service,
    surfaces: SurfaceStore | None = None,
    *,
    marks: MarkStore | None = None,
    leases: LeaseStore | None = None,
    client_class: type[MusClient] = QuickStartClient,
    **settings: Any,
) -> DiscordRuntime:
    """The production client, logged in and ready, with its deadline loop (``marks``: what the commands'
    last sync was, ``leases``: whose turn it is to IDENTIFY — both shared with other starts)."""
    return await start_client(
        service,
        discord_settings_for(dc, **settings),
        surfaces if surfaces is not None else MemorySurfaces(),
        marks=marks,
        leases=leases,
        client_class=client_class,
        ready_timeout=10.0,
        guild_ready_timeout=0.05,
    )


def has_card(text: str) -> bool:
    """Whether a text shows any card (every card carries one suit symbol)."""
    return any(symbol in text for symbol in SUIT_SYMBOLS.values())


def ever_ids(message: StoredMessage) -> set[str]:
    """Every custom id (and menu value) a message ever showed, in any version."""
    found: set[str] = set()

    def walk(items: Any) -> None:
        for item in items or []:
            if isinstance(item, dict):
                if isinstance(item.get("custom_id"), str):
                    found.add(item["custom_id"])
                for option in item.get("options") or []:
                    if isinstance(option, dict) and isinstance(option.get("value"), str):
                        found.add(option["value"])
                walk(item.get("components"))

    for version in message.versions:
        walk(version.components)
    walk(message.components)
    return found


@dataclass
class DiscordTable:
    """A table in one channel (or a DM) driven through the fake server."""

    dc: FakeDiscord
    bot: DiscordRuntime
    service: Service
    channel: FakeChannel
    players: dict[int, FakeUser] = field(default_factory=dict)
    table_id: str = ""
    interactions: list[FakeInteraction] = field(default_factory=list)
    #: Every card each seat held in each hand, from every state the bot stored (hand → seat → labels).
    seen: dict[int, dict[int, set[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.watch(self.service)

    def watch(self, service: Service) -> None:
        """Record every table state ``service`` stores (a restarted bot is watched again)."""
        self.service = service
        watch_writes(service, self, lambda: self.table_id, self._record)

    def _record(self, table: TableState) -> Match | None:
        return record_cards(self.seen, table)

    @classmethod
    async def open(
        cls, dc: FakeDiscord, bot: DiscordRuntime, channel: FakeChannel, users: list[FakeUser]
    ) -> DiscordTable:
        """``/mus newgame`` by ``users[0]`` in ``channel``: the lobby is the reply; seats by index."""
        table = cls(dc, bot, bot.client.handlers.service, channel, players=dict(enumerate(users)))
        created = await table.slash(users[0], "newgame")
        assert created.callback_type == 4 and not created.ephemeral and created.response is not None, created
        table.table_id = created.response.custom_ids()[0].split(".")[0]
        return table

    # -- state ----------------------------------------------------------------------------------------

    async def state(self) -> tuple[TableState, Match | None]:
        """The stored table and its match (replayed)."""
        table = await self.service.load_table(self.table_id)
        assert table is not None, f"table {self.table_id} is not stored"
        return table, self._record(table)

    # -- acting ---------------------------------------------------------------------------------------

    async def settle(self) -> None:
        """Wait until the delivery lanes are idle."""
        with contextlib.suppress(TimeoutError):
            await self.bot.sender.flush(timeout=10.0)

    async def answered(self, interaction: FakeInteraction) -> FakeInteraction:
        """Wait for the interaction's answer, then for the views it sent."""
        self.interactions.append(interaction)
        await self.dc.wait_answered(interaction, timeout=5.0)
        await self.bot.client.handlers.wait_idle()  # its follow-ups too
        await self.settle()
        return interaction

    async def slash(
        self,
        user: FakeUser,
        sub: str,
        options: dict[str, Any] | None = None,
        channel: FakeChannel | None = None,
    ) -> FakeInteraction:
        """``user`` runs ``/mus <sub>``."""
        return await self.answered(self.dc.slash(user, channel or self.channel, "mus", sub, options=options))

    async def press(self, user: FakeUser, message: StoredMessage, custom_id: str) -> FakeInteraction:
        """``user`` presses a component of ``message``."""
        if custom_id in dict(message.select_options()).values():
            menu = next(c["custom_id"] for c in _selects(message) if custom_id in _values(c))
            return await self.answered(self.dc.choose(user, message, menu, [custom_id]))
        return await self.answered(self.dc.press(user, message, custom_id))

    # -- finding messages -----------------------------------------------------------------------------

    def lobby_message(self) -> StoredMessage:
        """The message showing this table's lobby."""
        for m in reversed(self.dc.channel_messages(self.channel)):
            if any(stamp_of(c) == "L" and c.startswith(self.table_id) for c in ever_ids(m)):
                return m
        raise AssertionError("no lobby message")

    def find_table_message(self, hand_no: int) -> StoredMessage | None:
        """The newest channel message that ever carried this hand's "My cards"."""
        wanted = f"{self.table_id}.{hand_no}.cards"
        found = [m for m in self.dc.channel_messages(self.channel) if wanted in ever_ids(m)]
        return found[-1] if found else None

    def private_messages(self, user: FakeUser) -> list[StoredMessage]:
        """What only ``user`` sees: their DMs and their ephemerals, oldest first."""
        return sorted(self.dc.dm_messages(user) + self.dc.ephemerals(user), key=lambda m: m.id)

    async def private_with(self, user: FakeUser, custom_id: str) -> StoredMessage:
        """A private message of ``user`` showing ``custom_id`` now (their DM, or their "My cards", which the
        game keeps up to date: pressed if they have none showing it)."""

        def find() -> StoredMessage | None:
            for m in reversed(self.private_messages(user)):
                if custom_id in m.custom_ids() or custom_id in dict(m.select_options()).values():
                    return m
            return None

        found = find()
        if found is None and not (user.dms_open and await self.gets_dms(user)):
            table, _ = await self.state()  # (their last "My cards" expired, or they never pressed it)
            await self.my_cards(user, table.hand_no)
        return await self.dc.wait_for(find, timeout=5.0)

    async def gets_dms(self, user: FakeUser) -> bool:
        """Whether the bot sends ``user``'s private views by DM (they asked, and their DMs are open)."""
        return await self.bot.client.handlers.service.chats.preference(f"dc:u{user.id}", "dms")

    async def ask_for_dms(self, *users: FakeUser) -> None:
        """``/mus dms on:True`` by each of ``users``: their cards come by DM too."""
        for user in users:
            asked = await self.slash(user, "dms", {"on": True})
            assert asked.ephemeral, asked

    async def my_cards(self, user: FakeUser, hand_no: int) -> FakeInteraction:
        """``user`` presses "My cards" on the table."""
        message = self.find_table_message(hand_no)
        assert message is not None
        return await self.press(user, message, f"{self.table_id}.{hand_no}.cards")

    # -- playing --------------------------------------------------------------------------------------

    async def seat_everyone(self) -> None:
        """Players take their seats (the creator, seat 0, is seated by ``/mus newgame``)."""
        for seat, user in self.players.items():
            if seat == 0:
                continue
            lobby = self.lobby_message()
            await self.press(user, lobby, f"{self.table_id}.L.seat{seat}")

    async def discard(self, seat: int, picks: list[int]) -> None:
        """``seat`` picks cards on its private view, then confirms."""
        table, match = await self.state()
        user = self.players[seat]
        assert match is not None and match.hand is not None
        cards = list(match.hand.hands[seat])
        for index in picks:
            custom_id = f"{self.table_id}.{table.hand_no}.pick_{card_name(cards[index])}"
            await self.press(user, await self.private_with(user, custom_id), custom_id)
        confirm = f"{self.table_id}.{table.hand_no}.discard"
        await self.press(user, await self.private_with(user, confirm), confirm)

    async def play(
        self,
        choose: Callable[[TableState, Match, int, list[str]], str | None] | None = None,
        *,
        until: Callable[[TableState, Match | None], bool],
        timeout: float = 15.0,
    ) -> None:
        """Members act on their turns until ``until``; machine seats are left to the deadlines."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            table, match = await self.state()
            if until(table, match):
                return
            assert table.status is TableStatus.PLAYING, table.status
            assert match is not None and match.hand is not None
            hand = match.hand
            seat = hand.turn
            if hand.over or seat not in self.players or table.seats[seat].autopilot:
                await asyncio.sleep(0.01)
                continue
            if hand.phase is Phase.DISCARD:
                await self.discard(seat, [0])
                continue
            stamp = f"{table.hand_no}-{len(hand.log)}"

            def turn_buttons(hand_no: int = table.hand_no, stamp: str = stamp) -> list[str]:
                message = self.find_table_message(hand_no)
                if message is None:
                    return []
                return [code_of(c) for c in message.custom_ids() if stamp_of(c) == stamp]

            codes = await self.dc.wait_for(turn_buttons, timeout=5.0)
            code = (choose(table, match, seat, codes) if choose else None) or default_choice(codes)
            message = self.find_table_message(table.hand_no)
            assert message is not None
            custom_id = next(c for c in message.custom_ids() if code_of(c) == code and stamp_of(c) == stamp)
            await self.press(self.players[seat], message, custom_id)
        raise AssertionError("the game did not reach the expected point in time")


def _selects(message: StoredMessage) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(items: Any) -> None:
        for item in items or []:
            if isinstance(item, dict):
                if item.get("type") == 3:
                    found.append(item)
                walk(item.get("components"))

    walk(message.components)
    return found


def _values(select: dict[str, Any]) -> list[str]:
    return [o.get("value") for o in select.get("options") or []]


SHOWDOWN = re.compile(r"^🂡 ")


def audit_no_card_leaks(dc: FakeDiscord, table: DiscordTable) -> int:
    """No channel message ever showed a card outside a showdown (text or components); no private message
    (DM or ephemeral) showed another seat's card. Returns the number of message versions checked."""
    checked = 0
    for channel in dc.channels.values():
        if channel.is_dm:
            continue
        for message in dc.channel_messages(channel):
            for version in message.versions:
                checked += 1
                labels_ = _component_labels(version.components)
                assert not any(has_card(label) for label in labels_), f"a card on a channel button: {labels_}"
                if not SHOWDOWN.match(version.text):
                    assert not has_card(version.text), f"a card shows before its showdown: {version.text!r}"
    for seat, user in table.players.items():
        for message in table.private_messages(user):
            for version in message.versions:
                checked += 1
                text = version.text + "".join(_component_labels(version.components))
                if SHOWDOWN.match(version.text) or not has_card(text):
                    continue
                number = re.search(r"(\d+)\D*$", version.text.splitlines()[0])  # ("1. banaketa")
                assert number is not None, f"a private text with cards but no hand number: {text!r}"
                cards = table.seen[int(number.group(1))]
                others = set().union(*(cards[s] for s in range(4) if s != seat)) - cards[seat]
                assert not [c for c in others if c in text], f"{user.name} saw another seat's card: {text!r}"
    return checked


def _component_labels(components: Any) -> list[str]:
    out: list[str] = []
    for item in components or []:
        if isinstance(item, dict):
            if isinstance(item.get("label"), str):
                out.append(item["label"])
            for option in item.get("options") or []:
                out.append(str(option.get("label", "")))
            out.extend(_component_labels(item.get("components")))
    return out
