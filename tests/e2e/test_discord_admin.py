"""On Discord as server admins and members meet the bot (issue 21, items 6–9): the real discord.py client
against the fake Discord, which reports the bot's permissions in each channel, members' permissions, guild
features and locales, and closed DMs.

- a table is never opened where the bot cannot post it: ``/mus newgame`` names what is missing;
- the server's language belongs to those who may manage the server (``/mus-admin``), checked by the bot
  itself on the command and its buttons; moderators may cancel a table;
- a Community server's locale is trusted, no other's; a Basque server's members get Basque cards whatever
  their (Spanish) clients say; one's own ``/mus language`` wins for one's cards;
- "My cards" is kept up to date through the interaction's token; direct messages are an opt-in.
"""

from __future__ import annotations

import pytest

from adapters.discord.app import DiscordRuntime
from bot.kernel import TableStatus

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, audit_no_card_leaks, has_card, start_discord_bot
from .fake_discord import (
    BOT_PERMISSIONS,
    PERMISSION_BITS,
    USER_PERMISSIONS,
    FakeChannel,
    FakeDiscord,
    FakeGuild,
    FakeUser,
    StoredMessage,
)


@pytest.fixture
def guild(dc: FakeDiscord) -> FakeGuild:
    return dc.add_guild("Mus club", locale="es-ES", community=True)


@pytest.fixture
def channel(dc: FakeDiscord, guild: FakeGuild) -> FakeChannel:
    return dc.add_channel(guild, "mus")


@pytest.fixture
async def runtime(dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild) -> DiscordRuntime:
    started = await start_discord_bot(dc, memory_service(FAST))  # global commands: DMs have them too
    discord_bots.append(started)
    return started


def grant(guild: FakeGuild, user: FakeUser, *names: str) -> None:
    """Give ``user`` these permissions in ``guild`` (on top of a member's)."""
    extra = 0
    for name in names:
        extra |= PERMISSION_BITS[name]
    guild.member_permissions[user.id] = USER_PERMISSIONS | extra


def members(dc: FakeDiscord, guild: FakeGuild, *names: str, locale: str = "es-ES") -> list[FakeUser]:
    return [dc.add_user(name, locale=locale, guilds=[guild]) for name in names]


def content(interaction: object) -> str:
    response = getattr(interaction, "response", None)
    assert response is not None, interaction
    return str(response.text)


async def test_newgame_names_the_permissions_the_bot_lacks_and_opens_nothing(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, channel: FakeChannel
) -> None:
    (ane,) = members(dc, guild, "Ane")
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel)
    channel.bot_permissions = (
        BOT_PERMISSIONS & ~PERMISSION_BITS["attach_files"] & ~PERMISSION_BITS["embed_links"]
    )
    refused = await table.slash(ane, "newgame")
    assert refused.ephemeral and refused.callback_type == 4
    text = content(refused)  # in the table's language: the Community server's Spanish
    assert "Adjuntar archivos" in text and "Insertar enlaces" in text and "Enviar mensajes" not in text
    service = runtime.client.handlers.service
    assert await service.deps.tables.table_for_chat(f"dc:{channel.id}") is None
    assert dc.channel_messages(channel) == []
    # A channel the bot cannot even write to: it says so (an interaction's answer needs no permission).
    hidden = dc.add_channel(guild, "staff")
    hidden.bot_permissions = BOT_PERMISSIONS & ~PERMISSION_BITS["send_messages"]
    muted = await table.slash(ane, "newgame", channel=hidden)
    assert muted.ephemeral and "Enviar mensajes" in content(muted)
    # Given what it needs, the same command opens the table.
    channel.bot_permissions = BOT_PERMISSIONS
    opened = await table.slash(ane, "newgame")
    assert not opened.ephemeral and opened.response is not None and opened.response.custom_ids()
    # In a thread, posting takes Send Messages in Threads (and only there).
    thread = dc.add_thread(channel, "partida")
    thread.bot_permissions = BOT_PERMISSIONS & ~PERMISSION_BITS["send_messages_in_threads"]
    in_thread = await table.slash(ane, "newgame", channel=thread)
    assert in_thread.ephemeral and "Enviar mensajes en hilos" in content(in_thread)
    thread.bot_permissions = BOT_PERMISSIONS & ~PERMISSION_BITS["send_messages"]  # (not needed there)
    played = await table.slash(ane, "newgame", channel=thread)
    assert not played.ephemeral and played.response is not None and played.response.custom_ids()
    lobby = played.response
    brais = dc.add_user("Brais", locale="es-ES", guilds=[guild])
    await table.press(brais, lobby, next(c for c in lobby.custom_ids() if c.endswith(".L.seat1")))
    assert "Brais" in lobby.text  # (the thread's table is edited like any other)
    assert_interactions_answered(dc)


async def test_the_server_language_is_for_those_who_manage_the_server(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, channel: FakeChannel
) -> None:
    ane, zuri = members(dc, guild, "Ane", "Zuri")
    grant(guild, ane, "manage_guild")
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel)
    service = runtime.client.handlers.service
    server = f"dc:g{guild.id}"
    # Discord offers /mus-admin only to members who may manage the server, and never in DMs.
    with pytest.raises(ValueError, match="cannot see /mus-admin"):
        dc.slash(zuri, channel, "mus-admin", "language")
    with pytest.raises(ValueError, match="not registered"):
        dc.slash(ane, dc.dm_channel(ane), "mus-admin", "language")
    # An admin's override shows it to Zuri: the bot checks her permission itself.
    guild.command_overrides["mus-admin"] = {zuri.id}
    overridden = await table.answered(
        dc.slash(zuri, channel, "mus-admin", "language", options={"language": "eu"})
    )
    assert overridden.ephemeral and "Gestionar servidor" in content(overridden)
    assert await service.chats.chosen_language(server) is None
    # The admin's picker is in the channel, where anyone can press it: only the admin's press counts.
    picker = await table.answered(dc.slash(ane, channel, "mus-admin", "language"))
    assert picker.response is not None and len(picker.response.buttons()) == 6
    euskara = picker.response.button("Euskara")
    pressed = await table.press(zuri, picker.response, euskara)
    assert pressed.ephemeral and "Gestionar servidor" in content(pressed)
    forged = await table.press(zuri, picker.response, "-.C.lang_gl")  # not on that message: refused too
    assert forged.ephemeral and "Gestionar servidor" in content(forged)
    assert await service.chats.chosen_language(server) is None
    await table.press(ane, picker.response, euskara)
    assert await service.chats.chosen_language(server) == "eu"
    assert_interactions_answered(dc)


async def test_moderators_may_cancel_a_table_they_do_not_sit_at(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, channel: FakeChannel
) -> None:
    ane, zuri, mod = members(dc, guild, "Ane", "Zuri", "Mod")
    grant(guild, mod, "manage_messages")
    table = await DiscordTable.open(dc, runtime, channel, [ane])
    refused = await table.slash(zuri, "cancel")
    assert refused.ephemeral
    state, _ = await table.state()
    assert state.status is TableStatus.LOBBY
    cancelled = await table.slash(mod, "cancel")
    assert not cancelled.ephemeral or cancelled.callback_type == 4
    state, _ = await table.state()
    assert state.status is TableStatus.CANCELLED
    assert_interactions_answered(dc)


async def test_only_a_community_server_s_locale_is_trusted(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, channel: FakeChannel
) -> None:
    # A server that is not a Community server reports en-US, whatever its members speak: the bot goes
    # by the asker's own language there, and by the server's preferred locale in a Community server.
    plain = dc.add_guild("Peña", locale="es-ES")
    general = dc.add_channel(plain, "general")
    (marie,) = members(dc, plain, "Marie", locale="fr")
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, general)
    french = await table.slash(marie, "help")
    assert "ouvre une table" in content(french), content(french)
    (ane,) = members(dc, guild, "Ane", locale="en-US")
    spanish = await table.slash(ane, "help", channel=channel)
    assert "abre una mesa" in content(spanish)
    assert_interactions_answered(dc)


def hand_texts(dc: FakeDiscord, user: FakeUser) -> list[str]:
    return [
        v.text for m in dc.ephemerals(user) + dc.dm_messages(user) for v in m.versions if has_card(v.text)
    ]


async def test_a_basque_server_deals_basque_cards_and_one_s_own_language_wins(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, channel: FakeChannel
) -> None:
    ane, brais = members(dc, guild, "Ane", "Brais")  # Spanish clients: Discord has no Basque
    grant(guild, ane, "manage_guild")
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel, players={0: ane, 1: brais})
    chose = await table.answered(dc.slash(ane, channel, "mus-admin", "language", options={"language": "eu"}))
    assert "Euskara" in content(chose)
    own = await table.slash(brais, "language", {"language": "fr"})  # Brais reads French
    assert own.ephemeral
    created = await table.slash(ane, "newgame")
    assert created.response is not None
    table.table_id = created.response.custom_ids()[0].split(".")[0]
    await table.seat_everyone()
    await table.press(ane, table.lobby_message(), f"{table.table_id}.L.start")
    state, _ = await table.state()
    assert state.lang == "eu"
    for user in (ane, brais):
        await table.my_cards(user, state.hand_no)
    assert any("Zure kartak" in t for t in hand_texts(dc, ane))
    assert all("Tus cartas" not in t for t in hand_texts(dc, ane))
    assert any("Tes cartes" in t for t in hand_texts(dc, brais))
    # Mid-game, Ane chooses Galician for herself: her "My cards" follows at once; the table stays Basque.
    chosen = await table.slash(ane, "language", {"language": "gl"})
    assert chosen.ephemeral and "Galego" in content(chosen)
    mine = [m for m in dc.ephemerals(ane) if has_card(m.text)][-1]
    assert "As túas cartas" in mine.text, mine.text
    state, _ = await table.state()
    assert state.lang == "eu" and state.seats[0].lang == "gl"
    assert_interactions_answered(dc)
    assert audit_no_card_leaks(dc, table) > 0


def ephemeral_hands(dc: FakeDiscord, user: FakeUser) -> list[StoredMessage]:
    return [m for m in dc.ephemerals(user) if has_card(m.text)]


async def test_my_cards_follows_the_game_and_dms_are_an_opt_in(
    dc: FakeDiscord, runtime: DiscordRuntime, guild: FakeGuild, channel: FakeChannel
) -> None:
    ane, brais = members(dc, guild, "Ane", "Brais")
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel, players={0: ane, 1: brais})
    created = await table.slash(ane, "newgame")
    assert created.response is not None
    table.table_id = created.response.custom_ids()[0].split(".")[0]
    await table.seat_everyone()
    await table.press(ane, table.lobby_message(), f"{table.table_id}.L.start")
    # Nobody asked for DMs: nothing goes there; each looks at their cards once, with "My cards".
    for user in (ane, brais):
        await table.my_cards(user, 1)
    (shown,) = ephemeral_hands(dc, brais)
    await table.play(until=lambda t, m: t.hand_no >= 2 or t.status is not TableStatus.PLAYING)
    await table.settle()
    assert dc.dm_messages(ane) == [] and dc.dm_messages(brais) == []
    # Brais's one ephemeral followed the game: his discards, then hand 2's cards — edited through the
    # interaction's token, no second "My cards" needed.
    presses = [i for i in table.interactions if i.user is brais and (i.custom_id or "").endswith(".cards")]
    assert len(presses) == 1 and ephemeral_hands(dc, brais) == [shown]
    assert any(v.via == "webhook" for v in shown.versions)
    assert shown.text.splitlines()[0].endswith("2"), shown.text
    webhook_edits = [c for c in dc.calls if c.method == "PATCH" and c.path.startswith("/webhooks/")]
    assert webhook_edits and all(c.ok for c in webhook_edits)
    # Brais asks for DMs: the next cards come there too; then he stops, and the DM keeps no buttons.
    asked = await table.slash(brais, "dms", {"on": True})
    assert asked.ephemeral and "mensaje directo" in content(asked)
    await table.play(until=lambda t, m: t.hand_no >= 3 or t.status is not TableStatus.PLAYING)
    await table.settle()
    assert any(has_card(m.text) for m in dc.dm_messages(brais)) and dc.dm_messages(ane) == []
    stopped = await table.slash(brais, "dms", {"on": False})
    assert stopped.ephemeral
    before = len(dc.dm_messages(brais))
    await table.play(until=lambda t, m: t.hand_no >= 4 or t.status is not TableStatus.PLAYING)
    await table.settle()
    assert len(dc.dm_messages(brais)) == before
    assert not dc.dm_messages(brais)[-1].custom_ids()
    assert_interactions_answered(dc)
    assert audit_no_card_leaks(dc, table) > 0
