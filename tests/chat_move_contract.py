"""The contract every store keeps when a chat moves to a new key (a Telegram group upgraded to a supergroup):
run against the in-memory fakes (tests/unit) and Redis, one server and a cluster (tests/integration).

Each operation is safe to repeat (Telegram may say twice that a chat moved, on two workers) and never takes
what the new chat has of its own.
"""

from __future__ import annotations

import pytest

from bot.history import HistoryStore
from bot.leaderboard import GLOBAL_SCOPE, GameResult, LeaderboardStore, PlayerRef
from bot.store import ChatBusy, PreferencesStore, TableStore, VersionConflict

OLD, NEW, BUSY = "tg:-4001", "tg:-1004001", "tg:-1004002"
ANE, BRAIS, CAMILLE = PlayerRef("tg:1", "Ane"), PlayerRef("tg:2", "Brais"), PlayerRef("tg:3", "Camille")
MACHINE, MACHINE2 = PlayerRef("machine:normal", "Nerea"), PlayerRef("machine:hard", "Koldo")


async def check_a_table_moves_to_another_chat(store: TableStore) -> None:
    """A write naming another chat moves the table's chat index there, unless that chat has a live table."""
    await store.create("t1", "v1", chat_key=OLD, user_keys=["u1"])
    await store.compare_and_set("t1", 1, "v2", chat_key=NEW, user_keys=["u1"], finished=False)
    assert await store.table_for_chat(OLD) is None and await store.table_for_chat(NEW) == "t1"
    assert await store.table_for_user("u1") == "t1"
    # Written again (the recorded chat, or the same chat named again), it stays there.
    await store.compare_and_set("t1", 2, "v3", chat_key=None, user_keys=["u1"], finished=False)
    await store.compare_and_set("t1", 3, "v4", chat_key=NEW, user_keys=["u1"], finished=False)
    assert await store.table_for_chat(NEW) == "t1"
    # A stale version moves nothing.
    with pytest.raises(VersionConflict):
        await store.compare_and_set("t1", 3, "stale", chat_key=OLD, user_keys=[], finished=False)
    assert await store.table_for_chat(OLD) is None
    # A chat whose index names another live table takes no table: nothing changes.
    await store.create("t2", "w1", chat_key=BUSY, user_keys=[])
    with pytest.raises(ChatBusy) as busy:
        await store.compare_and_set("t1", 4, "v5", chat_key=BUSY, user_keys=["u1"], finished=False)
    assert (busy.value.chat_key, busy.value.existing_table_id) == (BUSY, "t2")
    stored = await store.load("t1")
    assert stored is not None and (stored.version, stored.data) == (4, "v4")
    assert await store.table_for_chat(BUSY) == "t2" and await store.table_for_chat(NEW) == "t1"
    # Once that table is finished, the chat is free.
    await store.compare_and_set("t2", 1, "w2", chat_key=None, user_keys=[], finished=True)
    await store.compare_and_set("t1", 4, "v5", chat_key=BUSY, user_keys=["u1"], finished=False)
    assert await store.table_for_chat(BUSY) == "t1" and await store.table_for_chat(NEW) is None
    # Finishing the moved table frees the chat it is in now.
    await store.compare_and_set("t1", 5, "v6", chat_key=None, user_keys=["u1"], finished=True)
    assert await store.table_for_chat(BUSY) is None and await store.table_for_user("u1") is None
    assert await store.live_tables() == []


async def check_a_language_follows_its_chat(prefs: PreferencesStore) -> None:
    """The old key's language becomes the new key's, unless the new chat chose its own."""
    await prefs.set_language(OLD, "eu")
    await prefs.move_language(OLD, NEW)
    assert await prefs.get_language(NEW) == "eu" and await prefs.get_language(OLD) is None
    await prefs.move_language(OLD, NEW)  # again: nothing changes
    assert await prefs.get_language(NEW) == "eu"
    await prefs.set_language("tg:-4002", "fr")
    await prefs.set_language(BUSY, "gl")
    await prefs.move_language("tg:-4002", BUSY)
    assert await prefs.get_language(BUSY) == "gl" and await prefs.get_language("tg:-4002") is None
    await prefs.move_language("tg:-4003", "tg:-1004003")  # a chat that chose nothing
    assert await prefs.get_language("tg:-1004003") is None


def game(chat: str, winner: int, *players: PlayerRef) -> GameResult:
    """A game in ``chat``: seats 0 and 2 against 1 and 3."""
    first, second, third, fourth = players
    return GameResult(chat, ((first, third), (second, fourth)), winner)


async def check_a_leaderboard_follows_its_chat(board: LeaderboardStore, now: float) -> None:
    """Every entry of the old scope moves (machines too); an entry the new scope has is kept; global stays."""
    await board.record(game(OLD, 0, ANE, BRAIS, CAMILLE, MACHINE), now)
    await board.record(game(OLD, 1, ANE, BRAIS, CAMILLE, MACHINE), now + 1)
    before, global_before = await board.top(OLD), await board.top(GLOBAL_SCOPE)
    assert await board.move_scope(OLD, NEW) == 4
    assert await board.top(NEW) == before and await board.top(OLD) == []
    assert await board.entry(OLD, ANE.key) is None
    assert await board.top(GLOBAL_SCOPE) == global_before
    assert await board.move_scope(OLD, NEW) == 0  # again: nothing moves, nothing doubles
    assert await board.top(NEW) == before
    # The new chat already rated Ane: her entry there is kept (never the sum), the others move.
    await board.record(game("tg:-4002", 0, ANE, BRAIS, CAMILLE, MACHINE), now)
    await board.record(game(BUSY, 0, ANE, MACHINE, MACHINE2, MACHINE), now)
    ane_before = await board.entry(BUSY, ANE.key)
    assert await board.move_scope("tg:-4002", BUSY) == 2  # Brais and Camille (the machine was there)
    assert await board.entry(BUSY, ANE.key) == ane_before
    brais = await board.entry(BUSY, BRAIS.key)
    assert brais is not None and (brais.games, brais.games_won) == (1, 0)
    assert await board.top("tg:-4002") == []
    with pytest.raises(ValueError):
        await board.move_scope(GLOBAL_SCOPE, NEW)


async def check_a_history_follows_its_chat(store: HistoryStore, now: float) -> None:
    """The new chat lists the old one's matches (a match listed by both at its latest time)."""
    await store.keep("m0000001", OLD, 1, now + 1, "one")
    await store.keep("m0000002", OLD, 1, now + 2, "two")
    await store.keep("m0000003", NEW, 1, now + 3, "three")
    await store.keep("m0000001", NEW, 2, now + 5, "one, hand 2")  # listed by both, later in the new
    await store.move_chat(OLD, NEW)
    assert await store.matches(NEW, now + 6) == ["m0000001", "m0000003", "m0000002"]
    assert await store.matches(OLD, now + 6) == []
    await store.move_chat(OLD, NEW)  # again: nothing changes
    assert await store.matches(NEW, now + 6) == ["m0000001", "m0000003", "m0000002"]
    assert await store.hands("m0000001") == [(1, "one"), (2, "one, hand 2")]  # hands are the match's
    await store.move_chat("tg:-4009", "tg:-1004009")  # a chat that kept nothing
    assert await store.matches("tg:-1004009", now + 4) == []
