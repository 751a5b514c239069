"""End to end on Discord: the real discord.py client against the fake Discord, as members meet the bot.

Every test ends with :func:`assert_clean`: no request refused by the spec or Discord's limits, every
interaction answered once within 3 s, no channel-visible message showing a card.
"""

from __future__ import annotations

import asyncio

import pytest

from adapters.discord.app import DiscordRuntime
from bot.app import Service
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import TableState, TableStatus
from bot.ops import AnswerWindow
from bot.table import FlowSettings
from engine.hand_types import Phase
from engine.match import Match

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, audit_no_card_leaks, has_card, start_discord_bot
from .fake_discord import (
    PERMISSION_BITS,
    USER_PERMISSIONS,
    FakeChannel,
    FakeDiscord,
    FakeGuild,
    StoredMessage,
)


@pytest.fixture
def guild(dc: FakeDiscord) -> FakeGuild:
    return dc.add_guild("Mus club", locale="es-ES", community=True)


@pytest.fixture
def channel(dc: FakeDiscord, guild: FakeGuild) -> FakeChannel:
    return dc.add_channel(guild, "mus")


def assert_clean(dc: FakeDiscord, table: DiscordTable | None = None) -> None:
    """Nothing refused, every interaction answered once within 3 s, no hidden card where others see it."""
    assert_interactions_answered(dc)
    if table is not None:
        assert audit_no_card_leaks(dc, table) > 0


async def new_table(
    dc: FakeDiscord, runtime: DiscordRuntime, channel: FakeChannel, guild: FakeGuild, humans: int
) -> DiscordTable:
    users = [dc.add_user(name, locale="es-ES", guilds=[guild]) for name in ("Ane", "Brais", "Iker", "Uxue")]
    table = await DiscordTable.open(dc, runtime, channel, users)
    table.players = {seat: users[seat] for seat in range(humans)}
    return table


async def test_commands_are_registered_translated_and_the_lobby_is_the_reply(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    mus, admin = sorted(dc.commands(guild), key=lambda c: str(c["name"]))
    assert mus["name"] == "mus"
    subs = {o["name"] for o in mus["options"]}
    assert subs == {
        "newgame",
        "leaderboard",
        "stats",
        "rules",
        "learn",
        "language",
        "dms",
        "history",
        "cancel",
        "help",
    }
    assert mus["description_localizations"]["es-ES"] == "Juega al mus a 8 reyes, por parejas"
    assert mus["contexts"] == [0, 1] and mus["default_member_permissions"] is None  # servers and DMs
    # The server's settings: another top-level command, in servers only, offered to who manages it.
    assert admin["name"] == "mus-admin" and {o["name"] for o in admin["options"]} == {"language"}
    assert admin["contexts"] == [0] and admin["default_member_permissions"] == str(1 << 5)
    table = await new_table(dc, runtime, channel, guild, humans=1)
    lobby = table.lobby_message()
    assert lobby.id == table.interactions[0].response.id  # type: ignore[union-attr]
    assert "Ane" in lobby.text and any(c.endswith(".L.seat1") for c in lobby.custom_ids())
    # The lobby is then edited in place: a seat press changes the reply itself.
    brais = dc.add_user("Brais", guilds=[guild])
    pressed = await table.press(brais, lobby, f"{table.table_id}.L.seat1")
    assert pressed.callback_type in (4, 6)
    assert "Brais" in lobby.text and len(dc.channel_messages(channel)) == 1
    assert_clean(dc)


async def test_a_whole_hand_by_four_members_from_newgame_to_the_count(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await new_table(dc, runtime, channel, guild, humans=4)
    await table.ask_for_dms(*table.players.values())
    table.players[3].dms_open = False  # Uxue asked, but her DMs are closed: she plays from "My cards"
    await table.seat_everyone()
    await table.press(table.players[0], table.lobby_message(), f"{table.table_id}.L.start")
    stored, _ = await table.state()
    assert stored.status is TableStatus.PLAYING

    def mus_then_cut(state: TableState, match: Match, seat: int, codes: list[str]) -> str | None:
        hand = match.hand
        assert hand is not None
        return "mus" if hand.phase is Phase.MUS and hand.mus_round == 0 and "mus" in codes else None

    await table.play(mus_then_cut, until=lambda t, m: t.hand_no >= 2 or t.status is not TableStatus.PLAYING)
    # One message each: the lobby, hand 1's table, its count, hand 2's table (the press that ended hand 1
    # was shown on its own message; hand 2's table is a new message, never hand 1's posted again).
    await table.dc.wait_for(lambda: table.find_table_message(2), timeout=5.0)
    contents = [m.text.splitlines()[0] for m in dc.channel_messages(channel)]
    assert len(contents) == 4 and contents[3].startswith("🂠 Mus · Mano n.º 2"), contents
    # The hand's story and its count stayed on the table message.
    first = table.find_table_message(1)
    assert first is not None and any("GRANDE" in v.text.upper() for v in first.versions)
    # Cards went by DM to the three with open DMs, and to Uxue only ephemerally.
    for seat in range(3):
        assert any(has_card(m.text) for m in dc.dm_messages(table.players[seat]))
    assert dc.dm_messages(table.players[3]) == []
    assert any(has_card(m.text) for m in dc.ephemerals(table.players[3]))
    # She was told once, ephemerally, that her DMs are closed (on her first interaction after the deal).
    told = [
        m
        for m in dc.ephemerals(table.players[3])
        if "cannot send you direct messages" in m.text.lower()
        or "no puedo enviarte mensajes directos" in m.text.lower()
    ]
    assert len(told) == 1, [m.text for m in dc.ephemerals(table.players[3])]
    assert_clean(dc, table)
    await asyncio.sleep(0)


async def started_table(
    dc: FakeDiscord, runtime: DiscordRuntime, channel: FakeChannel, guild: FakeGuild, humans: int = 4
) -> DiscordTable:
    """A table whose members sat down and started; the first hand is dealt."""
    table = await new_table(dc, runtime, channel, guild, humans=humans)
    await table.seat_everyone()
    await table.press(table.players[0], table.lobby_message(), f"{table.table_id}.L.start")
    return table


async def snapshot(table: DiscordTable) -> str:
    state, _ = await table.state()
    return state.model_dump_json()


async def test_presses_by_non_players_doubled_stale_and_forged_change_nothing(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await started_table(dc, runtime, channel, guild)
    state, match = await table.state()
    assert match is not None and match.hand is not None
    turn = match.hand.turn
    message = table.find_table_message(state.hand_no)
    assert message is not None
    mus = next(c for c in message.custom_ids() if c.endswith(".mus"))
    zuri = dc.add_user("Zuri", guilds=[guild])
    other = table.players[(turn + 1) % 4]
    before = await snapshot(table)
    refused = [
        await table.press(zuri, message, mus),  # not seated
        await table.press(other, message, mus),  # not their turn
        await table.press(table.players[turn], message, f"{table.table_id}.L.start"),  # a lobby button, now
        await table.press(zuri, message, "zzzzzzzz.1-0.mus"),  # another table (forged)
        await table.press(zuri, message, "not a token at all"),  # forged
        await table.answered(dc.choose(zuri, message, "menu:3", ["x.1.mus"])),  # a forged menu
    ]
    for interaction in refused:
        assert interaction.callback_type == 4 and interaction.ephemeral, interaction
        assert interaction.response is not None and interaction.response.text
    assert await snapshot(table) == before
    # The player on turn presses twice: one move, and the second press is told so.
    first = await table.press(table.players[turn], message, mus)
    after_first = await snapshot(table)
    second = await table.press(table.players[turn], message, mus)
    assert first.callback_type == 7 and second.callback_type == 4 and second.ephemeral  # shown at once
    assert await snapshot(table) == after_first
    assert_clean(dc, table)


async def test_a_restarted_bot_keeps_the_old_buttons_working(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    service = memory_service(FAST)
    surfaces = MemorySurfaces()
    first = await start_discord_bot(dc, service, surfaces, guild_ids=[guild.id])
    table = await new_table(dc, first, channel, guild, humans=4)
    lobby = table.lobby_message()
    await first.stop()
    # A new process: a new client and service on the same stores (Redis, in production).
    second = await start_discord_bot(dc, Service(service.deps), surfaces, guild_ids=[guild.id])
    discord_bots.append(second)
    table.bot = second
    await table.seat_everyone()
    assert all(name in lobby.text for name in ("Ane", "Brais", "Iker", "Uxue"))
    assert table.lobby_message() is lobby  # edited in place, by the new process
    await table.press(table.players[0], lobby, f"{table.table_id}.L.start")
    state, _ = await table.state()
    assert state.status is TableStatus.PLAYING
    assert_clean(dc, table)


async def test_an_injected_429_is_waited_out_and_the_newest_state_shown(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await new_table(dc, runtime, channel, guild, humans=4)
    dc.inject_429("PATCH", r"/channels/\d+/messages/\d+", count=2, retry_after=0.3)
    await table.seat_everyone()
    await table.settle()
    lobby = table.lobby_message()
    assert all(name in lobby.text for name in ("Ane", "Brais", "Iker", "Uxue"))
    assert len([c for c in dc.calls if c.injected]) == 2
    assert_clean(dc, table)


async def test_a_solo_game_in_direct_messages(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST))  # global commands: DMs have them
    discord_bots.append(runtime)
    ane = dc.add_user("Ane", locale="es-ES", guilds=[guild])
    dm = dc.dm_channel(ane)
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, dm, players={0: ane})
    created = await table.slash(ane, "newgame")
    assert created.response is not None and not created.ephemeral
    table.table_id = created.response.custom_ids()[0].split(".")[0]
    start = next(c for c in created.response.custom_ids() if c.endswith(".L.start"))
    await table.press(ane, created.response, start)
    await table.play(until=lambda t, m: t.hand_no >= 2 or t.status is not TableStatus.PLAYING)
    assert any(has_card(m.text) for m in dc.dm_messages(ane))
    # What she asks for in the DM comes there too (she never asked for her cards by DM: she plays there).
    before = len(dc.dm_messages(ane))
    await table.slash(ane, "rules", {"full": True})
    assert len(dc.dm_messages(ane)) >= before + 4, [m.text[:30] for m in dc.dm_messages(ane)]
    assert dc.rejected() == []


async def test_rules_help_leaderboard_and_a_language_per_server(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST))  # global commands: every server has them
    discord_bots.append(runtime)
    ane = dc.add_user("Ane", locale="en-US", guilds=[guild])
    table = DiscordTable(dc, runtime, runtime.client.handlers.service, channel)
    full = await table.slash(ane, "rules", {"full": True})
    sections = [full.response, *full.followups]
    assert full.ephemeral and len(sections) >= 4 and all(m is not None and m.ephemeral for m in sections)
    assert dc.channel_messages(channel) == [] and dc.dm_messages(ane) == []
    summary = await table.slash(ane, "rules")
    assert not summary.ephemeral and summary.response is not None and "**" in summary.response.text
    helped = await table.slash(ane, "help")
    assert helped.response is not None and "/mus newgame" in helped.response.text
    assert "/mus-admin language" in helped.response.text  # (the server's: /mus language is one's own)
    board = await table.slash(ane, "leaderboard", {"everyone": True})
    assert board.response is not None and not board.ephemeral
    guild.member_permissions[ane.id] = USER_PERMISSIONS | PERMISSION_BITS["manage_guild"]
    picker = await table.answered(dc.slash(ane, channel, "mus-admin", "language"))
    assert picker.response is not None and len(picker.response.buttons()) == 6
    chosen = await table.press(ane, picker.response, picker.response.button("Euskara"))
    assert chosen.ephemeral or chosen.callback_type == 4
    # The language is the server's: another channel of the same server speaks Basque too.
    other = dc.add_channel(guild, "mus-2")
    basque = await table.slash(ane, "help", channel=other)
    assert basque.response is not None and basque.response.text != helped.response.text
    assert "abre una mesa" in helped.response.text  # the server's preferred locale (es-ES) until then
    english = await table.slash(ane, "help", channel=dc.add_channel(dc.add_guild("Other"), "general"))
    assert english.response is not None and "open a table here" in english.response.text
    assert_clean(dc)


async def test_more_opens_every_amount_privately_as_a_menu(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST), guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await started_table(dc, runtime, channel, guild)
    await table.play(until=lambda t, m: m is not None and m.hand is not None and m.hand.phase is Phase.GRANDE)
    state, match = await table.state()
    assert match is not None and match.hand is not None
    seat = match.hand.turn
    user = table.players[seat]
    message = table.find_table_message(state.hand_no)
    assert message is not None
    more = next(c for c in message.custom_ids() if c.endswith(".more"))
    await table.press(user, message, more)
    amounts = await table.private_with(user, next(iter(_amount_values(dc, user))))
    options = dict(amounts.select_options())
    assert len(options) > 5 and all(len(v) <= 100 for v in options.values())
    # The first amounts are buttons (five rows at most), the rest a menu.
    assert any(c.endswith(".env7") for c in amounts.custom_ids())
    twenty = next(v for v in options.values() if v.endswith(".env20"))
    await table.press(user, amounts, twenty)
    state, match = await table.state()
    assert match is not None and match.hand is not None and match.hand.betting is not None
    assert match.hand.betting.proposal == 20
    assert_clean(dc, table)


def _amount_values(dc: FakeDiscord, user: object) -> list[str]:
    shown = dc.dm_messages(user) + dc.ephemerals(user)  # type: ignore[arg-type]
    values = [v for m in shown for _, v in m.select_options() if ".env" in v]
    assert values, "no amount menu shown to the member alone"
    return values


async def test_slow_work_is_deferred_and_still_answered(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime], guild: FakeGuild, channel: FakeChannel
) -> None:
    service = memory_service(FAST)
    runtime = await start_discord_bot(dc, service, guild_ids=[guild.id])
    discord_bots.append(runtime)
    table = await new_table(dc, runtime, channel, guild, humans=2)
    # Deferred 0.05 s after each interaction's creation, however long its store calls may take.
    runtime.client.handlers.window = AnswerWindow(store=1.5, least=0.4, margin=0.5, latest=0.05)
    press, new_table_ = service.press, service.new_table

    async def slow_press(*args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.3)  # a Redis having a bad moment
        return await press(*args, **kwargs)

    async def slow_new_table(*args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.3)
        return await new_table_(*args, **kwargs)

    service.press = slow_press  # type: ignore[method-assign]
    service.new_table = slow_new_table  # type: ignore[method-assign]
    seated = await table.press(table.players[1], table.lobby_message(), f"{table.table_id}.L.seat1")
    assert seated.callback_type == 6 and "Brais" in table.lobby_message().text
    assert seated.followups and seated.followups[0].ephemeral  # "you joined team B", said late
    zuri = dc.add_user("Zuri", guilds=[guild])
    refused = await table.press(zuri, table.lobby_message(), f"{table.table_id}.L.start")
    assert refused.callback_type == 6 and refused.followups and refused.followups[0].ephemeral
    again = await table.slash(zuri, "newgame")  # a table is already open here: said late, ephemerally
    assert again.callback_type == 5 and again.ephemeral and again.response is not None
    assert again.response.text and not again.response.loading
    assert_clean(dc)


async def test_shards_split_across_two_processes_on_one_store(dc: FakeDiscord) -> None:
    first_guild, second_guild = dc.add_guild("Uno"), dc.add_guild("Dos")
    channels = [dc.add_channel(g, "mus") for g in (first_guild, second_guild)]
    service = memory_service(FAST)
    surfaces = MemorySurfaces()
    runtimes = [
        await start_discord_bot(dc, Service(service.deps), surfaces, shard_count=2, shard_ids=[shard])
        for shard in (0, 1)
    ]
    try:
        assert sorted(s.shard for s in dc.live_sessions()) == [(0, 2), (1, 2)]
        for guild, channel in zip((first_guild, second_guild), channels, strict=True):
            ane = dc.add_user(f"Ane {guild.name}", guilds=[guild])
            opened = await asyncio.wait_for(dc.wait_answered(dc.slash(ane, channel, "mus", "newgame")), 5)
            assert opened.session is not None and opened.response is not None
            assert opened.response.custom_ids()  # the lobby, from the process of that shard
        assert {i.session.shard_id for i in dc.interactions if i.session} == {0, 1}  # type: ignore[union-attr]
    finally:
        for runtime in runtimes:
            await runtime.stop()
    assert_clean(dc)


async def test_a_sena_shown_late_is_caught_1_2_s_after_it_appeared(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    """The channel's edit showing the ⚡ lands 2 s late (a 429 discord.py waits out): a rival reacting 1.2 s
    after it appeared — past the window counted from the making — still catches it (issue 23)."""
    guild = dc.add_guild("Mus club", locale="en-US")
    channel = dc.add_channel(guild, "mus")
    window = 3.0
    flow = FlowSettings(turn_timeout=3600, machine_delay=0, next_hand_delay=0, catch_window=window)
    runtime = await start_discord_bot(dc, memory_service(flow, seed=3), guild_ids=[guild.id])
    discord_bots.append(runtime)
    names = ("Ane", "Brais", "Iker", "Uxue")
    users = [dc.add_user(name, guilds=[guild]) for name in names]
    table = await DiscordTable.open(dc, runtime, channel, users)
    await table.ask_for_dms(*users)
    await table.seat_everyone()
    for option in ("o_mode", "o_senas"):
        await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.{option}")
    await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.start")

    def hand_of(seat: int) -> StoredMessage:
        return [m for m in dc.dm_messages(users[seat]) if has_card(m.text)][-1]

    maker = next(s for s in range(4) if any((b[0] or "").startswith("Seña:") for b in hand_of(s).buttons()))
    rival = (maker + 1) % 4
    _, custom_id, _ = next(b for b in hand_of(maker).buttons() if (b[0] or "").startswith("Seña:"))
    state, _ = await table.state()
    on_screen = table.find_table_message(state.hand_no)
    assert on_screen is not None
    label = f"⚡ Catch {names[maker]}'s seña"
    dc.inject_429("PATCH", rf"/channels/{channel.id}/messages/", retry_after=2.0)  # the ⚡ lands 2 s late
    made_at = dc.now()
    await table.press(users[maker], hand_of(maker), custom_id or "")
    await dc.wait_for(lambda: label in [b[0] for b in on_screen.buttons()], timeout=8.0)
    shown_at = next(v.at for v in on_screen.versions if label in str(v.components))
    assert shown_at - made_at >= 1.5, "the 429 held the ⚡ back"
    await asyncio.sleep(max(0.0, shown_at + 1.2 - dc.now()))  # a person's reaction, from seeing it
    assert dc.now() - made_at > window, "pressed after the window counted from the making"
    caught = await table.press(users[rival], on_screen, on_screen.button(label))
    assert caught.response is not None and caught.response.text.startswith(f"Caught! {names[maker]}'s seña")
    assert_clean(dc, table)


async def test_a_sena_reaches_the_partner_and_a_rival_catches_it_ephemerally(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    guild = dc.add_guild("Mus club", locale="en-US")  # the server's language, until /mus language
    channel = dc.add_channel(guild, "mus")
    window = 1.0
    flow = FlowSettings(
        turn_timeout=3600, machine_delay=0, next_hand_delay=0, catch_window=window, catch_lag=0
    )
    runtime = await start_discord_bot(dc, memory_service(flow, seed=3), guild_ids=[guild.id])
    discord_bots.append(runtime)
    names = ("Ane", "Brais", "Iker", "Uxue")
    users = [dc.add_user(name, guilds=[guild]) for name in names]  # English clients
    table = await DiscordTable.open(dc, runtime, channel, users)
    await table.ask_for_dms(*users)
    await table.seat_everyone()
    for option in ("o_mode", "o_senas"):
        await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.{option}")
    await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.start")

    def hand_of(seat: int) -> StoredMessage:
        return [m for m in dc.dm_messages(users[seat]) if has_card(m.text)][-1]

    maker = next(s for s in range(4) if any((b[0] or "").startswith("Seña:") for b in hand_of(s).buttons()))
    partner, rival, other_rival = (maker + 2) % 4, (maker + 1) % 4, (maker + 3) % 4
    label, custom_id, _ = next(b for b in hand_of(maker).buttons() if (b[0] or "").startswith("Seña:"))
    sena = (label or "").removeprefix("Seña: ")
    made = await table.press(users[maker], hand_of(maker), custom_id or "")
    assert made.ephemeral and made.response is not None
    assert made.response.text == "Seña made: your partner sees it."
    assert f"Your partner {names[maker]} made you a seña: {sena}" in hand_of(partner).text
    assert all("seña" not in hand_of(s).text for s in (rival, other_rival))
    state, _ = await table.state()
    on_screen = table.find_table_message(state.hand_no)
    assert on_screen is not None and f"⚡ {names[maker]} made a seña!" in on_screen.text
    catch = on_screen.button(f"⚡ Catch {names[maker]}'s seña")

    caught = await table.press(users[rival], on_screen, catch)
    assert caught.ephemeral and caught.response is not None
    assert caught.response.text == f"Caught! {names[maker]}'s seña: {sena}"
    again = await table.press(users[rival], on_screen, catch)
    assert again.response is not None and again.response.text == "You already caught it."
    mine = await table.press(users[partner], on_screen, catch)
    assert mine.response is not None and "your partner's seña" in mine.response.text
    outsider = await table.press(dc.add_user("Zuri", guilds=[guild]), on_screen, catch)
    assert outsider.response is not None and outsider.response.text == "You are not seated at this table."
    # The window closes: the ⚡ leaves the table; a late press learns nothing.
    await dc.wait_for(lambda: catch not in on_screen.custom_ids(), timeout=window + 3.0)
    late = await table.press(users[other_rival], on_screen, catch)
    assert late.ephemeral and late.response is not None and late.response.text == "Too late!"
    # Nobody but the rival who caught it ever read which seña it was, in the channel or elsewhere.
    for message in dc.channel_messages(channel):
        assert all("seña:" not in v.text for v in message.versions)
    readers = {i.user.name for i in dc.interactions if i.response and f"seña: {sena}" in i.response.text}
    assert readers == {names[rival]}
    assert_clean(dc, table)
