"""Views for another platform's workers: what a deadline fired here produced for a chat this process does not
serve.

Every worker fires due deadlines for every table under its Redis prefix, but a worker serves only some
platforms (a Discord shard process, a Telegram webhook worker). What a firing produced for a chat of a
platform this process has no client for is pushed to that platform's outbox (a Redis list per platform,
``{prefix}outbox:{platform}``, platform as in the chat keys: ``tg``, ``dc``); every worker of that platform
pops from it each round of its deadline loop and delivers. Each view is popped once. An outbox nobody
drains (no worker of that platform runs) is capped at :data:`OUTBOX_CAP` views, the oldest dropped.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any, Protocol

from bot.kernel import OutMessage, buttons_from_json, buttons_to_json
from bot.store import DEFAULT_PREFIX, AnyRedis, unavailable_errors

OUTBOX_CAP = 10_000


def encode(message: OutMessage) -> str:
    """A view as JSON."""
    pressed, links = buttons_to_json(message.buttons)
    data: dict[str, Any] = {
        "slot": message.slot,
        "text": message.text,
        "chat": message.chat,
        "user": message.user,
        "buttons": pressed,
        "links": links,
        "fresh": message.fresh,
        "table": message.table,
        "origin": message.origin,
        "markdown": message.markdown,
        "deadline": message.deadline,
        "phase": message.phase,
        "document": message.document,
    }
    return json.dumps(data, ensure_ascii=False)


def decode(raw: str | bytes) -> OutMessage:
    """A view from :func:`encode`'s JSON."""
    data = json.loads(raw)
    buttons = buttons_from_json(data["buttons"], data.get("links") or ())  # (no links from an older version)
    return OutMessage(
        slot=str(data["slot"]),
        text=str(data["text"]),
        chat=data["chat"],
        user=data["user"],
        buttons=buttons,
        fresh=bool(data["fresh"]),
        table=str(data["table"]),
        origin=data["origin"],
        markdown=bool(data["markdown"]),
        deadline=float(data.get("deadline") or 0.0),  # (absent from what an older version wrote)
        phase=str(data.get("phase") or ""),
        document=_document(data.get("document")),
    )


def _document(data: Any) -> tuple[str, str] | None:
    """A view's file as :func:`encode` wrote it (``[name, content]``), if it has one."""
    if data is None:
        return None
    name, content = data
    return (str(name), str(content))


class Outbox(Protocol):
    """Views waiting for a platform's workers."""

    async def push(self, platform: str, messages: Sequence[OutMessage]) -> None:
        """Queue views for ``platform``'s workers, in order."""
        ...

    async def pop(self, platform: str, limit: int = 200) -> list[OutMessage]:
        """Take up to ``limit`` views queued for ``platform`` (each is taken once)."""
        ...


class RedisOutbox:
    """One Redis list per platform."""

    def __init__(self, redis: AnyRedis, prefix: str = DEFAULT_PREFIX) -> None:
        """Use ``redis`` (not owned) under ``prefix``."""
        self._redis = redis
        self._prefix = f"{prefix}outbox:"

    async def push(self, platform: str, messages: Sequence[OutMessage]) -> None:
        """``RPUSH`` then trim to the cap (a pipeline: one round trip)."""
        if not messages:
            return
        key = self._prefix + platform
        with unavailable_errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.rpush(key, *(encode(m) for m in messages))
                pipe.ltrim(key, -OUTBOX_CAP, -1)
                await pipe.execute()

    async def pop(self, platform: str, limit: int = 200) -> list[OutMessage]:
        """``LPOP key count``."""
        with unavailable_errors():
            raw = await self._redis.lpop(self._prefix + platform, limit)
        if not raw:
            return []
        items = raw if isinstance(raw, list) else [raw]
        return [decode(item) for item in items]


class MemoryOutbox:
    """The same in memory (tests, a single process)."""

    def __init__(self) -> None:
        """Empty outboxes."""
        self._boxes: defaultdict[str, deque[OutMessage]] = defaultdict(lambda: deque(maxlen=OUTBOX_CAP))

    async def push(self, platform: str, messages: Sequence[OutMessage]) -> None:
        """Queue views."""
        self._boxes[platform].extend(messages)

    async def pop(self, platform: str, limit: int = 200) -> list[OutMessage]:
        """Take views."""
        box = self._boxes[platform]
        return [box.popleft() for _ in range(min(limit, len(box)))]
