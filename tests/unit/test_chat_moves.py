"""A chat that moves to a new key (a Telegram group upgraded to a supergroup), on the in-memory stores: the
stores' contract (:mod:`chat_move_contract`), then the service's ``chat_moved``."""

from __future__ import annotations

import time

from chat_move_contract import (
    check_a_history_follows_its_chat,
    check_a_language_follows_its_chat,
    check_a_leaderboard_follows_its_chat,
    check_a_table_moves_to_another_chat,
)

from bot.history import MemoryHistory
from bot.leaderboard import MemoryLeaderboard
from bot.store import MemoryTableStore
from bot.store._prefs import MemoryPreferences


async def test_the_memory_stores_keep_the_contract() -> None:
    now = time.time()
    await check_a_table_moves_to_another_chat(MemoryTableStore())
    await check_a_language_follows_its_chat(MemoryPreferences())
    await check_a_leaderboard_follows_its_chat(MemoryLeaderboard(), now)
    await check_a_history_follows_its_chat(MemoryHistory(), now)
