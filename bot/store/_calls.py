"""One budget of platform calls per bot, shared by every worker: the bot's call rate, and each chat's window.

A platform limits what one *bot* may send, however many processes send it: Telegram takes about 30 calls a
second that write to a chat, and at most 20 new messages a minute in one group; Discord 50 requests a second.
A limiter in each worker would let N workers send N times that (and answer each other's excess with 429s), so
every worker draws each call from one :class:`CallBudget` in the store:

* **the bot's rate** (:class:`BotRate`): a booking, not a refusal. :meth:`CallBudget.draw` books the call's
  turn on one clock (Redis's) and says how long to wait until it: a worker that is over the rate waits its
  own share, first come first served across workers, and nothing else waits (never a pause of the whole bot).
  Turns are spaced ``1 / per_second`` apart, with ``burst`` of them at once after a quiet moment (a
  generic cell rate: in any second at most ``per_second + burst - 1`` calls);
* **a chat's window** (:class:`ChatWindow`, for a call that posts a new message in a group): at most
  ``limit`` in any ``seconds``, counted as the platform counts them (a sliding window of the posts' turns).
  A post the window has no room for is refused (:attr:`Drawn.granted` false, with the wait until it has)
  and books nothing — not the bot's turn either: a post waiting for its group never holds the other chats'
  calls. The caller asks again after the wait, or leaves the post to its lane (whose edits go on);
* **a turn is kept, or booked again** (:func:`take_turn`): a call goes within :data:`MAX_LATE` of its turn,
  or books a new one. A worker starved of CPU (or that heard the store's answer late) would otherwise send
  every call whose turn passed meanwhile at once, on top of the other workers' calls of that moment: late by
  up to ``MAX_LATE``, at most ``per_second × (1 + MAX_LATE) + burst`` calls reach the platform in a second.

In Redis (:class:`RedisCallBudget`) one script books both at once, on two keys that share a hash tag (the
bot's), so a cluster runs it on one node: ``{prefix}calls:{bot}`` (the bot's next turn, in ms on Redis's
clock) and ``{prefix}calls:{bot}:{chat}`` (a list of the chat's latest turns, newest first, at most
``limit``); both expire when nothing is left to remember. In memory (:class:`MemoryCallBudget`): the same
rules on one process's clock (tests; a worker's own fallback when the store does not answer).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from bot.store._ports import DEFAULT_PREFIX
from bot.store._redis_client import AnyRedis, unavailable_errors

# KEYS[1] the bot's next turn, KEYS[2] the chat's window (absent: a call that counts in no window); ARGV: the
# bot's interval between turns (ms), how far a burst may book ahead of the steady rate (ms), the chat's
# limit, its window (ms). Returns {1, wait in ms, the turn in ms on Redis's clock} once booked, or {0, wait in
# ms, 0} when the chat's window has no room until then (nothing booked).
_DRAW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, window = tonumber(ARGV[3]), tonumber(ARGV[4])
if #KEYS > 1 then
  local turns = redis.call('LRANGE', KEYS[2], 0, limit - 1)
  if #turns >= limit and tonumber(turns[limit]) + window > now then
    return {0, tonumber(turns[limit]) + window - now, 0}
  end
end
local interval, ahead = tonumber(ARGV[1]), tonumber(ARGV[2])
local next_turn = tonumber(redis.call('GET', KEYS[1]) or '0')
local turn = math.max(now, next_turn - ahead)
local after = math.max(next_turn, now) + interval
redis.call('SET', KEYS[1], after, 'PX', after - now + 1000)
if #KEYS > 1 then
  redis.call('LPUSH', KEYS[2], turn)
  redis.call('LTRIM', KEYS[2], 0, limit - 1)
  redis.call('PEXPIRE', KEYS[2], turn - now + window + 1000)
end
return {1, turn - now, turn}
"""


#: Chats whose windows the memory budget keeps before it forgets those with nothing in their window.
_WINDOWS_BEFORE_SWEEP = 10_000
#: How late (seconds) a call may go after its booked turn before it books a new one (see the module's
#: docstring: at 24 calls a second, at most 28 reach the platform in one second).
MAX_LATE = 0.15
#: Turns a call books at most, the first included: then it goes, however late (a worker that is never on time
#: still sends).
MAX_BOOKINGS = 3


async def take_turn(
    book: Callable[[bool], Awaitable[float]], at_turn: Callable[[float], Awaitable[None]] | None = None
) -> None:
    """Book a call's turn and wait for it — ``book(again)`` does both and says how long it waited (``again``:
    a new turn, for a call that woke too late for the one before) — until the call wakes within
    :data:`MAX_LATE` of its turn (at most :data:`MAX_BOOKINGS` turns). Lateness is measured from before the
    booking, as the store's answer may have waited for this worker too: a call on time may seem a little late
    (a turn booked again for nothing), never the reverse. ``at_turn(waited)``, if given, runs once each turn
    came (``waited``: seconds since the first booking) and counts in the call's lateness — a last look at
    whether the call is still needed, which raises to stop it: a slow look books a new turn rather than send
    the call late."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    for booking in range(MAX_BOOKINGS):
        asked = loop.time()
        wait = await book(booking > 0)
        if at_turn is not None:
            await at_turn(loop.time() - started)
        if loop.time() - asked - wait <= MAX_LATE:
            return


@dataclass(frozen=True, slots=True)
class BotRate:
    """A bot's calls: ``per_second`` on average, ``burst`` of them at once after a quiet moment."""

    per_second: float
    burst: int = 1

    def __post_init__(self) -> None:
        """Refuse a rate that books nothing."""
        if self.per_second <= 0 or self.burst < 1:
            raise ValueError(f"a rate of {self.per_second}/s with a burst of {self.burst} books no call")


@dataclass(frozen=True, slots=True)
class ChatWindow:
    """At most ``limit`` calls of a kind (new messages) in one chat in any ``seconds``."""

    limit: int
    seconds: float


class Drawn(NamedTuple):
    """The answer to :meth:`CallBudget.draw`."""

    granted: bool
    """The call's turn is booked (else the chat's window is full for longer than the caller would wait)."""
    wait: float
    """Seconds until the booked turn (granted), or until the chat's window has room (refused)."""
    turn: float = 0.0
    """The booked turn on the budget's own clock (seconds; Redis's for the store's budget), 0 when refused:
    what another worker's turns are spaced from, whatever delayed either answer."""


class CallBudget(Protocol):
    """Every worker's calls of one bot, drawn from one budget (see the module's docstring)."""

    async def draw(
        self,
        bot: str,
        rate: BotRate,
        chat: str | None = None,
        window: ChatWindow | None = None,
    ) -> Drawn:
        """Book one call of ``bot`` at ``rate`` — in ``chat``'s ``window`` too when both are given (a new
        message in a group), unless that window has no room now (then nothing is booked). The caller waits
        :attr:`Drawn.wait` before it calls (granted), or before it asks again (refused)."""
        ...


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


class RedisCallBudget:
    """The budget in Redis, shared by every worker on it (keys in the module's docstring)."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._prefix = f"{prefix}calls:"
        self._draw = redis.register_script(_DRAW)

    async def draw(
        self,
        bot: str,
        rate: BotRate,
        chat: str | None = None,
        window: ChatWindow | None = None,
    ) -> Drawn:
        """One script: the chat's window checked and booked with the bot's turn."""
        bot_key = f"{self._prefix}{{{bot}}}"  # the bot's hash tag: its chats' windows share its node
        keys = [bot_key] if chat is None or window is None else [bot_key, f"{bot_key}:{chat}"]
        interval = 1000 / rate.per_second
        limit, seconds = (window.limit, window.seconds) if window is not None else (0, 0.0)
        args = [round(interval), round(interval * (rate.burst - 1)), limit, _ms(seconds)]
        with unavailable_errors():
            granted, wait_ms, turn_ms = await self._draw(keys=keys, args=args)
        return Drawn(bool(granted), max(0, int(wait_ms)) / 1000, int(turn_ms) / 1000)


class MemoryCallBudget:
    """The same budget on one process's clock (tests; a worker's fallback when the store fails)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Count on ``clock`` (seconds)."""
        self.clock = clock
        self._next_turn: dict[str, float] = {}
        self._windows: dict[tuple[str, str], deque[float]] = {}

    async def draw(
        self,
        bot: str,
        rate: BotRate,
        chat: str | None = None,
        window: ChatWindow | None = None,
    ) -> Drawn:
        """As :class:`RedisCallBudget` does, in this process."""
        now = self.clock()
        turns: deque[float] | None = None
        if chat is not None and window is not None:
            if len(self._windows) >= _WINDOWS_BEFORE_SWEEP:
                self._sweep(now, window.seconds)
            turns = self._windows.setdefault((bot, chat), deque(maxlen=window.limit))
            while turns and turns[0] <= now - window.seconds:
                turns.popleft()  # forgotten once out of the window: the memory stays small
            if len(turns) >= window.limit:
                return Drawn(False, turns[0] + window.seconds - now)
        interval = 1 / rate.per_second
        next_turn = self._next_turn.get(bot, -math.inf)
        turn = max(now, next_turn - interval * (rate.burst - 1))
        self._next_turn[bot] = max(next_turn, now) + interval
        if turns is not None:
            turns.append(turn)
        return Drawn(True, turn - now, turn)

    def _sweep(self, now: float, seconds: float) -> None:
        """Forget the chats whose latest turn left the window (a window kept for every chat ever posted to
        would grow without end)."""
        self._windows = {k: t for k, t in self._windows.items() if t and t[-1] > now - seconds}
