"""A chat that moves to a new key (a Telegram group upgraded to a supergroup), on the in-memory stores: the
stores' contract (:mod:`chat_move_contract`), then the service's ``chat_moved``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from chat_move_contract import ANE as ANE_P
from chat_move_contract import BRAIS as BRAIS_P
from chat_move_contract import (
    MACHINE,
    MACHINE2,
    check_a_history_follows_its_chat,
    check_a_language_follows_its_chat,
    check_a_leaderboard_follows_its_chat,
    check_a_table_moves_to_another_chat,
    game,
)
from service_helpers import ANE, BRAIS, CAMILLE, Harness, snapshot

from bot.app._chat_moves import TABLE_STAYED
from bot.history import MemoryHistory
from bot.i18n import translator
from bot.kernel import ChatRef, Outcome, history_token
from bot.leaderboard import MemoryLeaderboard
from bot.store import MemoryTableStore, StoreUnavailable
from bot.store._prefs import MemoryPreferences


async def test_the_memory_stores_keep_the_contract() -> None:
    now = time.time()
    await check_a_table_moves_to_another_chat(MemoryTableStore())
    await check_a_language_follows_its_chat(MemoryPreferences())
    await check_a_leaderboard_follows_its_chat(MemoryLeaderboard(), now)
    await check_a_history_follows_its_chat(MemoryHistory(), now)


# ---------------------------------------------------------------------------------------------------------
# The service: Service.moves.chat_moved
# ---------------------------------------------------------------------------------------------------------

OLD_GROUP = ChatRef("tg:-4001", title="Mus")
NEW_GROUP = ChatRef("tg:-1004001", title="Mus")


async def started_in_old_group(h: Harness) -> str:
    """A table started in the old group by Ane and Brais (machines in the other seats), in Basque."""
    await h.service.set_language(OLD_GROUP, ANE, "eu")
    return await h.started(OLD_GROUP, ANE, (BRAIS, 1))


async def test_a_table_in_play_follows_its_chat_with_its_language_leaderboard_and_history() -> None:
    h = Harness()
    table_id = await started_in_old_group(h)
    board = h.deps.leaderboard
    assert board is not None
    await board.record(game(OLD_GROUP.key, 0, ANE_P, BRAIS_P, MACHINE, MACHINE2), h.now)
    await h.deps.history.keep("m0000009", OLD_GROUP.key, 1, h.now, "an earlier match")
    before = await h.load(table_id)

    moved = h.record(await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP))
    assert moved.ok and moved.table == table_id
    (table_view,) = [m for m in moved.messages if m.slot == "table"]
    assert table_view.chat == NEW_GROUP.key and table_view.fresh and table_view.buttons
    assert all(m.chat == NEW_GROUP.key for m in moved.messages)
    assert "Ane" in table_view.text
    after = await h.load(table_id)
    assert after.table.chat == NEW_GROUP.key and after.version == before.version + 1
    assert after.table.match == before.table.match and after.table.lang == "eu"
    assert not [slot for slot in after.table.since if slot.endswith(OLD_GROUP.key)]
    assert await h.tables.table_for_chat(NEW_GROUP.key) == table_id
    assert await h.tables.table_for_chat(OLD_GROUP.key) is None
    assert await h.prefs.get_language(NEW_GROUP.key) == "eu"
    assert [e.key for e in await board.top(NEW_GROUP.key)] == [ANE.key, BRAIS.key]
    assert await board.top(OLD_GROUP.key) == []
    assert await h.deps.history.matches(NEW_GROUP.key, h.now) == ["m0000009"]

    # Play goes on: the next press draws in the new chat.
    state = await h.wait_for_human(table_id)
    user = {ANE.key: ANE, BRAIS.key: BRAIS}[state.user_on_turn() or ""]
    pressed = await h.press(user, h.turn_tokens(table_id, NEW_GROUP.key)[0])
    assert pressed.ok and {m.chat for m in pressed.messages if m.chat} == {NEW_GROUP.key}

    # Telegram says it again (the other service message, a refused call): nothing moves, nothing is drawn.
    written = await snapshot(h, table_id)
    again = await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    assert (again.ok, again.table, again.messages) == (True, None, ())
    assert await snapshot(h, table_id) == written
    assert [e.games for e in await board.top(NEW_GROUP.key)] == [1, 1]


class InterleavedTables(MemoryTableStore):
    """A store whose every read lets other tasks run first (as a network round trip does)."""

    async def load(self, table_id: str):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0)
        return await super().load(table_id)

    async def table_for_chat(self, chat_key: str) -> str | None:
        await asyncio.sleep(0)
        return await super().table_for_chat(chat_key)


async def test_reports_of_one_move_at_once_move_it_once() -> None:
    h = Harness(tables=InterleavedTables())
    table_id = await started_in_old_group(h)
    version = (await h.load(table_id)).version
    outcomes = await asyncio.gather(*(h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP) for _ in range(4)))
    assert [o.table for o in outcomes].count(table_id) == 1
    assert sum(bool(o.messages) for o in outcomes) == 1 and all(o.ok for o in outcomes)
    assert (await h.load(table_id)).version == version + 1


class RacingTables(MemoryTableStore):
    """A store where another command writes the table just before the move's write (a press on another
    worker)."""

    def __init__(self) -> None:
        super().__init__()
        self.race: Callable[[], Awaitable[object]] | None = None

    async def compare_and_set(self, table_id, expected_version, data, *, chat_key, **kwargs):  # type: ignore[no-untyped-def]
        if chat_key is not None and self.race is not None:
            race, self.race = self.race, None
            await race()
        return await super().compare_and_set(table_id, expected_version, data, chat_key=chat_key, **kwargs)


async def test_a_press_written_while_the_table_moves_is_kept() -> None:
    tables = RacingTables()
    h = Harness(tables=tables)
    table_id = await started_in_old_group(h)
    state = await h.wait_for_human(table_id)
    user = {ANE.key: ANE, BRAIS.key: BRAIS}[state.user_on_turn() or ""]
    token = h.turn_tokens(table_id, OLD_GROUP.key)[0]
    pressed: list[Outcome] = []

    async def press() -> None:
        pressed.append(await h.service.press(user, token))

    tables.race = press
    moved = await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    assert pressed and pressed[0].ok  # the press was written first (its views still named the old chat)
    assert moved.ok and moved.table == table_id
    after = await h.load(table_id)
    assert after.table.chat == NEW_GROUP.key and after.version == state.version + 2
    assert after.match is not None and after.match.hand is not None and state.match is not None
    assert state.match.hand is not None and len(after.match.hand.log) > len(state.match.hand.log)


async def test_forged_moves_change_nothing() -> None:
    h = Harness()
    table_id = await started_in_old_group(h)
    before = await snapshot(h, table_id)
    for new in (
        ChatRef(OLD_GROUP.key, title="Mus"),  # the same chat
        ChatRef("tg:77", private=True, title="Ane"),  # a private chat
        ChatRef("dc:-1004001", title="Mus"),  # another platform
        ChatRef("nokey", title="Mus"),
    ):
        outcome = await h.service.moves.chat_moved(OLD_GROUP.key, new)
        assert (outcome.ok, outcome.messages, outcome.table) == (False, (), None), new
    assert not (await h.service.moves.chat_moved("nokey", NEW_GROUP)).ok
    assert await snapshot(h, table_id) == before
    assert await h.prefs.get_language(OLD_GROUP.key) == "eu"


async def test_a_chat_with_a_table_of_its_own_keeps_it_and_the_other_follows_once_it_is_closed() -> None:
    h = Harness()
    table_id = await started_in_old_group(h)
    theirs = await h.lobby(NEW_GROUP, CAMILLE)
    moved = await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    (notice,) = moved.messages
    assert not moved.ok and moved.table is None
    assert notice.chat == NEW_GROUP.key and notice.text == translator("eu").gettext(TABLE_STAYED)
    assert (await h.load(table_id)).table.chat == OLD_GROUP.key  # it stays, playable, nothing lost
    assert await h.tables.table_for_chat(NEW_GROUP.key) == theirs
    assert await h.tables.table_for_chat(OLD_GROUP.key) == table_id
    # Each refused post of the stranded table asks again: the chat is told once in a while, not each time.
    assert (await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)).messages == ()
    assert (await h.service.cancel(NEW_GROUP, CAMILLE)).ok
    moved = await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    assert moved.ok and moved.table == table_id
    assert await h.tables.table_for_chat(NEW_GROUP.key) == table_id


class DownBoard(MemoryLeaderboard):
    """A leaderboard whose Redis fails the next ``down`` scope moves."""

    def __init__(self) -> None:
        super().__init__()
        self.down = 0

    async def move_scope(self, old: str, new: str) -> int:
        if self.down:
            self.down -= 1
            raise StoreUnavailable("down")
        return await super().move_scope(old, new)


async def test_a_move_that_fails_part_way_is_done_again_whole() -> None:
    board = DownBoard()
    h = Harness(leaderboard=board)
    table_id = await started_in_old_group(h)
    board.down = 1
    failed = await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    assert (failed.ok, failed.failed, failed.messages) == (False, True, ())
    assert (await h.load(table_id)).table.chat == OLD_GROUP.key  # the table goes last: still there
    moved = await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    assert moved.ok and moved.table == table_id
    assert await h.prefs.get_language(NEW_GROUP.key) == "eu"


async def test_the_history_buttons_of_a_moved_chat_act_in_the_new_one() -> None:
    h = Harness()
    outcome = await h.service.new_machine_table(OLD_GROUP, ANE, single_game=True)
    assert outcome.table is not None
    await h.service.moves.chat_moved(OLD_GROUP.key, NEW_GROUP)
    shown = await h.service.history.recent(NEW_GROUP, ANE)
    (view,) = shown.messages
    here = [b.token for row in view.buttons for b in row if b.token.endswith(".histc")]
    story = await h.service.press(ANE, here[0], NEW_GROUP)
    assert story.ok and story.messages[0].chat == NEW_GROUP.key
    exported = await h.service.press(ANE, history_token(outcome.table, 0, "hexp"), NEW_GROUP)
    assert exported.ok and len(exported.messages) == 2
    # A chat that never listed the match still cannot use its buttons.
    assert not (await h.service.press(ANE, here[0], ChatRef("tg:-1009999", title="X"))).ok
