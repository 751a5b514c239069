"""What this worker last drew on each slot (:class:`ShownCache`), so that an unchanged view costs no call.

A cache: losing an entry is harmless (at worst a redundant edit, which the platform answers "not modified"),
so it is bounded (:data:`SHOWN_CAP` slots, the least recently drawn forgotten first).
Other workers draw the same slots too, so a versioned view compares the version it remembers with the one the
store last saw offered (:mod:`bot.delivery._drawing`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.kernel import LruCache, OutMessage

#: Slots remembered per worker (about 1 KB each): 50,000 active chats, then the idlest are forgotten.
SHOWN_CAP = 50_000


@dataclass(frozen=True, slots=True)
class Shown:
    """What this worker last made a slot show, and the table version it was."""

    content: tuple[str, object]
    version: int
    message_id: str | None = None
    """The message it was shown on, when known."""

    def shows(self, message: OutMessage) -> bool:
        """Whether the slot shows what ``message`` shows (its text and buttons)."""
        return self.content == _content(message)

    def bare(self, message_id: str) -> bool:
        """Whether this worker drew message ``message_id`` without buttons (none to remove)."""
        return self.message_id == message_id and not self.content[1]


class ShownCache:
    """What each slot (``(chat, table, slot)``) shows now, as this worker drew it."""

    def __init__(self, capacity: int = SHOWN_CAP) -> None:
        """Empty: nothing drawn yet; at most ``capacity`` slots remembered."""
        self._shown: LruCache[tuple[str, str, str], Shown] = LruCache(capacity)

    def get(self, chat_id: str, message: OutMessage) -> Shown | None:
        """What this worker last drew on the slot of ``message``, if it remembers."""
        return self._shown.get(_key(chat_id, message))

    def forget(self, chat_id: str, message: OutMessage) -> None:
        """The slot's message was changed behind this cache (an adapter, or another worker, drew on it)."""
        self._shown.pop(_key(chat_id, message))

    def remember(
        self, chat_id: str, message: OutMessage, message_id: str | None = None, *, version: int | None = None
    ) -> None:
        """The slot shows what ``message`` shows now, of its table version unless ``version`` says another
        (and on message ``message_id``, when known: else on the one remembered)."""
        key = _key(chat_id, message)
        if message_id is None and (previous := self._shown.get(key)) is not None:
            message_id = previous.message_id
        shown_version = message.version if version is None else version
        self._shown.put(key, Shown(_content(message), shown_version, message_id))

    def __len__(self) -> int:
        """How many slots it remembers."""
        return len(self._shown)


def _key(chat_id: str, message: OutMessage) -> tuple[str, str, str]:
    return (chat_id, message.table, message.slot)


def _content(message: OutMessage) -> tuple[str, object]:
    return (message.text, message.buttons)
