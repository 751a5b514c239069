"""Delivering views to a chat platform: one lane per chat, latest state wins, within the platform's limits.

* :mod:`bot.delivery._transport` — the :class:`Transport` an adapter implements and its typed failures, and
  :class:`BudgetedTransport`, which books each call in the bot's budget shared by every worker;
* :mod:`bot.delivery._lanes` — :class:`Delivery`: lanes, pacing, retries; :mod:`bot.delivery._queue` — a
  lane's queue, where views of one slot coalesce, and which call goes next;
* :mod:`bot.delivery._budget` — a chat's budget of new messages (:class:`NewMessages`), spent on the game
  first; :mod:`bot.delivery._answers` — answers to commands: the newest of each subject, never twice in a
  row;
* :mod:`bot.delivery._drawing` — one call of a lane: which message shows a view, kept on the newest state
  across workers, answered with the calls that come next; :mod:`bot.delivery._pending` — what kind of call a
  lane queues; :mod:`bot.delivery._shown` — what this worker last drew on each slot;
* :mod:`bot.delivery._surfaces` (Redis) and :mod:`bot.delivery._surfaces_memory` — which message shows each
  slot, with their scripts in :mod:`bot.delivery._surface_scripts`;
* :mod:`bot.delivery._outbox` — views fired here for a platform another process serves.
"""

from bot.delivery._budget import NewMessages
from bot.delivery._lanes import Delivery, destination
from bot.delivery._outbox import MemoryOutbox, Outbox, RedisOutbox
from bot.delivery._queue import COALESCING_SLOTS
from bot.delivery._surfaces import RedisSurfaces, SurfaceStore, split_key
from bot.delivery._transport import (
    BudgetedTransport,
    MessageGone,
    NotModified,
    RateLimited,
    Refused,
    StillNeeded,
    Unneeded,
    Unreachable,
    at_turn,
)

__all__ = [
    "COALESCING_SLOTS",
    "BudgetedTransport",
    "Delivery",
    "MemoryOutbox",
    "MessageGone",
    "NewMessages",
    "NotModified",
    "Outbox",
    "RateLimited",
    "RedisOutbox",
    "RedisSurfaces",
    "Refused",
    "StillNeeded",
    "SurfaceStore",
    "Unneeded",
    "Unreachable",
    "at_turn",
    "destination",
    "split_key",
]
