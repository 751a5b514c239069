"""The bot removed from a group mid-game, or blocked by a player (issue 21, item 4), with the real
python-telegram-bot Application against the fake Bot API server.

The server tells the bot with ``my_chat_member`` updates and refuses every write to a group the bot was
removed from (403), and every private message to someone who blocked it, as Telegram does. The table of a
group the bot left is paused — no deadline fires, nothing is sent there — and resumes where it was when the
bot is added back in time (:mod:`bot.table._pause` has the rule); a player who blocked the bot is told once
in the group how to fix it, and gets their hand when they unblock it.
"""

from __future__ import annotations

import asyncio
import re

from bot.app._drawn import RESUMED
from bot.kernel import TableStatus
from bot.table import FlowSettings

from .conftest import BOT_USERNAME, RunningBot, Table, memory_service, start_bot
from .fake_telegram import FakeChat, FakeTelegram, FakeUser

NAMES = ("Ane", "Brais", "Camille", "Dani")
#: Quick turns (a deadline that fired during the pause would show within a second), a short pause limit.
FLOW = FlowSettings(
    turn_timeout=1.0, machine_delay=0.02, next_hand_delay=0.05, catch_window=0.5, lobby_timeout=60
)
LINK = re.compile(rf"https://t\.me/{BOT_USERNAME}\?start=(h[a-z0-9]{{8}})")


async def started(tg: FakeTelegram, bot: RunningBot, humans: tuple[int, ...]) -> Table:
    """A started single game in a new English group: the humans of ``humans`` (who opened the bot), machines
    in the other seats."""
    group = tg.add_group("Mus")
    users = {seat: tg.add_user(NAMES[seat], language_code="en") for seat in humans}
    table = Table(tg, bot, group, players=users)
    for user in users.values():
        tg.user_starts_bot(user)
    await table.settle()
    await table.command(users[0], "/language en")
    await table.command(users[0], "/newgame")
    lobby = table.lobby_message()
    table.table_id = lobby.buttons[0][1].split(".")[0]  # type: ignore[union-attr]
    for seat in humans[1:]:
        await table.press(users[seat], lobby, f"{table.table_id}.L.seat{seat}")
    await table.press(users[0], lobby, f"{table.table_id}.L.o_mode")
    await table.press(users[0], lobby, f"{table.table_id}.L.start")
    return table


async def at_turn_of(table: Table, seat: int) -> None:
    """Wait until it is ``seat``'s turn (machines and deadlines play the rest)."""

    async def turn() -> bool:
        _, match = await table.state()
        return match is not None and match.hand is not None and match.hand.turn == seat

    for _ in range(500):
        if await turn():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"seat {seat} never got the turn")


async def paused(table: Table) -> int:
    """Wait until the table is paused; its stored version then."""
    for _ in range(500):
        stored = await table.bot.service.deps.tables.load(table.table_id)
        state, _ = await table.state()
        if stored is not None and state.paused is not None:
            return stored.version
        await asyncio.sleep(0.01)
    raise AssertionError("the table was never paused")


def writes_to(tg: FakeTelegram, chat: FakeChat, since: int) -> list[str]:
    """The calls made to ``chat`` after the first ``since`` calls of the bot."""
    return [c.method for c in tg.calls()[since:] if c.params.get("chat_id") == chat.id]


async def test_removed_mid_game_the_table_waits_and_resumes_when_added_back(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    bot = await start_bot(tg, memory_service(FLOW))
    bots.append(bot)
    table = await started(tg, bot, humans=(0,))
    await at_turn_of(table, 0)
    before, match = await table.state()
    assert match is not None and match.hand is not None
    log = list(match.hand.log)
    await table.settle()  # Ane's turn on screen, no call in flight

    tg.remove_bot_from(table.chat)
    version = await paused(table)
    await bot.sender.flush()
    since = len(tg.calls())
    await asyncio.sleep(4 * FLOW.turn_timeout)  # Ane's turn would have run out four times over
    assert writes_to(tg, table.chat, since) == []  # nothing sent, nothing retried
    state, match = await table.state()
    stored = await bot.service.deps.tables.load(table.table_id)
    assert stored is not None and stored.version == version  # no deadline fired
    assert match is not None and match.hand is not None and match.hand.log == log
    assert state.seats[0].timeouts == 0 and state.status is TableStatus.PLAYING
    assert not [c for c in tg.calls() if c.params.get("chat_id") == table.chat.id and not c.ok]  # no try

    tg.add_bot_back(table.chat)
    notice = await tg.wait_for(lambda: RESUMED in tg.group_texts(table.chat), timeout=5.0)
    assert notice
    await bot.sender.flush()
    messages = tg.bot_messages(table.chat)
    resumed_at = next(i for i, m in enumerate(messages) if m.text == RESUMED)
    fresh = [m for m in messages[resumed_at:] if f"{table.table_id}.{before.hand_no}.cards" in str(m.buttons)]
    assert len(fresh) == 1, "the table is posted afresh below the notice"
    assert [c for _, c in fresh[0].buttons if "-" in c.split(".")[1]], "with Ane's turn buttons"
    state, match = await table.state()
    assert state.paused is None
    assert match is not None and match.hand is not None and match.hand.log == log  # where it was

    # Fresh deadlines: Ane's turn runs out a whole turn after the resume, as usual.
    await tg.wait_for(lambda: any("ran out of time" in t for t in tg.group_texts(table.chat)), timeout=5.0)
    assert (await table.state())[0].seats[0].timeouts >= 1


async def test_a_post_refused_because_the_bot_was_removed_pauses_the_table(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    """The bot missed the update (it was away longer than Telegram keeps them): its next post is refused
    with 403, and that alone pauses the table — one refused call, then nothing, until it is back."""
    bot = await start_bot(tg, memory_service(FLOW))
    bots.append(bot)
    table = await started(tg, bot, humans=(0,))
    await at_turn_of(table, 0)
    since = len(tg.calls())
    table.chat.bot_is_member = False  # removed, and the update lost
    await paused(table)  # Ane's turn runs out: the machine's move is refused, the table paused
    await asyncio.sleep(3 * FLOW.turn_timeout)
    refused = [c for c in tg.calls()[since:] if c.params.get("chat_id") == table.chat.id]
    assert 1 <= len(refused) <= 2 and all(c.status == 403 for c in refused), refused
    assert any(c.description == "Forbidden: bot is not a member of the supergroup chat" for c in refused)

    tg.add_bot_back(table.chat)
    await tg.wait_for(lambda: RESUMED in tg.group_texts(table.chat), timeout=5.0)
    assert (await table.state())[0].paused is None


async def test_a_table_whose_group_never_takes_the_bot_back_is_closed(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    flow = FlowSettings(
        turn_timeout=1.0, machine_delay=0.02, next_hand_delay=0.05, lobby_timeout=60, pause_limit=1.0
    )
    bot = await start_bot(tg, memory_service(flow))
    bots.append(bot)
    table = await started(tg, bot, humans=(0,))
    await at_turn_of(table, 0)
    tg.remove_bot_from(table.chat, banned=True)
    await paused(table)
    since = len(tg.calls())
    for _ in range(300):
        if (await table.state())[0].status is TableStatus.CANCELLED:
            break
        await asyncio.sleep(0.01)
    assert (await table.state())[0].status is TableStatus.CANCELLED  # closed, without rating
    assert await bot.service.deps.leaderboard.top(f"tg:{table.chat.id}", 10) == []  # type: ignore[union-attr]
    assert writes_to(tg, table.chat, since) == []

    tg.add_bot_back(table.chat)  # too late: a new game starts afresh
    await table.command(table.players[0], "/newgame")
    assert "🂠 Mus · new table" in tg.group_texts(table.chat)[-1]


async def test_a_player_who_blocked_the_bot_is_told_once_and_gets_the_hand_back(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    bot = await start_bot(tg, memory_service())
    bots.append(bot)
    table = await started(tg, bot, humans=(0, 3))
    dani: FakeUser = table.players[3]
    tg.user_blocks_bot(dani)
    told = await tg.wait_for(
        lambda: [t for t in tg.group_texts(table.chat) if t.startswith("Dani, you blocked me")], timeout=5.0
    )
    assert len(told) == 1 and LINK.search(told[0]) is not None, told
    assert LINK.search(told[0]).group(1) == f"h{table.table_id}"  # type: ignore[union-attr]

    # The game goes on without Dani's private messages (turns run out, machines play): told once only.
    await table.play(until=lambda s, m: s.hand_no >= 3, timeout=20.0)
    await bot.sender.flush()
    blocked = [t for t in tg.group_texts(table.chat) if "you blocked me" in t]
    assert blocked == told
    assert all(c.status == 403 for c in tg.calls() if c.params.get("chat_id") == dani.id and not c.ok)

    # Dani unblocks the bot: the current hand comes at once, and a new block would be told again.
    hand_no = (await table.state())[0].hand_no
    tg.user_unblocks_bot(dani)
    await tg.wait_for(lambda: table.hand_message(3, hand_no) is not None, timeout=5.0)


async def test_a_bot_forbidden_to_post_pauses_the_table_until_allowed_again(
    tg: FakeTelegram, bots: list[RunningBot]
) -> None:
    """An admin restricts the bot (it stays in the group, but may not post): paused, as if removed; the
    restriction lifted, the table resumes."""
    bot = await start_bot(tg, memory_service(FLOW))
    bots.append(bot)
    table = await started(tg, bot, humans=(0,))
    await at_turn_of(table, 0)
    await table.settle()
    tg.restrict_bot(table.chat, can_post=False)
    version = await paused(table)
    await asyncio.sleep(3 * FLOW.turn_timeout)
    stored = await bot.service.deps.tables.load(table.table_id)
    assert stored is not None and stored.version == version
    assert not [c for c in tg.calls() if c.params.get("chat_id") == table.chat.id and not c.ok]
    tg.restrict_bot(table.chat, can_post=True)
    await tg.wait_for(lambda: RESUMED in tg.group_texts(table.chat), timeout=5.0)
    assert (await table.state())[0].paused is None
