"""The service's message bus: which handler answers each kind of command, looked up by the command's type.

As in cosmicpython's message bus, a command is a small typed value (a button's parsed
:class:`~bot.kernel.Token`, an :data:`~bot.kernel.Invite`) and one table maps its type to the one coroutine
that handles it: reading the table answers "who handles this?", and a new kind of command is one line where
the service registers it, instead of one more ``isinstance`` branch somewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from bot.kernel import ChatRef, Outcome, UserRef

M = TypeVar("M")

#: A handler: the user who sent the command, the command, and the chat it came from when the platform says.
Handler = Callable[[UserRef, M, ChatRef | None], Awaitable[Outcome]]


class Bus(Generic[M]):
    """Commands of one family (button tokens, invitations), each handed to the handler registered for the
    type of its routing key (a token's command; an invitation itself)."""

    def __init__(self, key: Callable[[M], object], fallback: Handler[M]) -> None:
        """Route by the type of ``key(command)``; types nobody registered go to ``fallback``."""
        self._key = key
        self._fallback = fallback
        self._handlers: dict[type, Handler[Any]] = {}

    def register(self, handler: Handler[Any], *kinds: type) -> None:
        """Hand commands whose key is of one of ``kinds`` to ``handler`` (one handler per kind; a handler may
        take the narrower type it is registered for, e.g. ``JoinSeat`` of the invitations)."""
        for kind in kinds:
            if kind in self._handlers:
                raise ValueError(f"{kind.__name__} already has a handler")
            self._handlers[kind] = handler

    def handler_for(self, command: M) -> Handler[M]:
        """The handler of ``command``."""
        return self._handlers.get(type(self._key(command)), self._fallback)

    async def handle(self, user: UserRef, command: M, chat: ChatRef | None) -> Outcome:
        """Answer ``command`` with its handler."""
        return await self.handler_for(command)(user, command, chat)

    def kinds(self) -> dict[type, Any]:
        """Every registered kind and its handler (documentation and tests)."""
        return dict(self._handlers)
