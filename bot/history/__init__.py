"""The hand history: every finished hand kept, told again as a story, exported as text or JSON.

* :mod:`bot.history._model` — :class:`KeptHand`, made from a finished hand;
* :mod:`bot.history._text` — its story, summaries and exports in the reader's language;
* :mod:`bot.history._store` — :class:`HistoryStore` (Redis, with a retention; and in memory).
"""

from bot.history._model import KeptHand, kept_hand
from bot.history._store import MATCHES_PER_CHAT, HistoryStore, MemoryHistory, RedisHistory
from bot.history._text import (
    export_json,
    export_text,
    match_title,
    result_lines,
    story_text,
    summary_lines,
)

__all__ = [
    "MATCHES_PER_CHAT",
    "HistoryStore",
    "KeptHand",
    "MemoryHistory",
    "RedisHistory",
    "export_json",
    "export_text",
    "kept_hand",
    "match_title",
    "result_lines",
    "story_text",
    "summary_lines",
]
