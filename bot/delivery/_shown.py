"""What this worker last drew on each slot (:class:`ShownCache`), so that an unchanged view costs no call.

A cache: losing it is harmless (at worst a few redundant edits, which the platform answers "not modified").
Other workers draw the same slots too, so a versioned view compares the version it remembers with the one the
store last saw offered (:mod:`bot.delivery._drawing`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.kernel import OutMessage

_SHOWN_CAP = 50_000


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

    def __init__(self) -> None:
        """Empty: nothing drawn yet."""
        self._shown: dict[tuple[str, str, str], Shown] = {}

    def get(self, chat_id: str, message: OutMessage) -> Shown | None:
        """What this worker last drew on the slot of ``message``, if it remembers."""
        return self._shown.get(_key(chat_id, message))

    def forget(self, chat_id: str, message: OutMessage) -> None:
        """The slot's message was changed behind this cache (an adapter, or another worker, drew on it)."""
        self._shown.pop(_key(chat_id, message), None)

    def remember(
        self, chat_id: str, message: OutMessage, message_id: str | None = None, *, version: int | None = None
    ) -> None:
        """The slot shows what ``message`` shows now, of its table version unless ``version`` says another
        (and on message ``message_id``, when known: else on the one remembered)."""
        key = _key(chat_id, message)
        if len(self._shown) >= _SHOWN_CAP:
            self._shown.clear()  # a cache: at worst a few redundant edits, answered "not modified"
        if message_id is None and (previous := self._shown.get(key)) is not None:
            message_id = previous.message_id
        shown_version = message.version if version is None else version
        self._shown[key] = Shown(_content(message), shown_version, message_id)


def _key(chat_id: str, message: OutMessage) -> tuple[str, str, str]:
    return (chat_id, message.table, message.slot)


def _content(message: OutMessage) -> tuple[str, object]:
    return (message.text, message.buttons)
