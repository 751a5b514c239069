"""Removing the buttons of a superseded message, or deleting a second copy of one (:class:`Clearer`): the
calls a lane makes that draw no view.

Several workers may decide that one message loses its buttons: the worker that posted the message that
supersedes it, and a worker whose call on it landed once it was superseded. And a message may have none left
to remove (its last view was drawn without buttons, on any worker). So a strip first asks the store what the
message is known to show (:meth:`~bot.delivery._surfaces.SurfaceStore.state`): a message known to have no
buttons costs no call — a call the platform would only answer "not modified". A strip that landed is recorded
as any other call (:meth:`~bot.delivery._surfaces.SurfaceStore.landed`), so that the other workers know it.
"""

from __future__ import annotations

import contextlib
import logging

from bot.delivery._pending import DeleteCopy, StripButtons
from bot.delivery._surfaces import SurfaceStore
from bot.delivery._transport import DeliveryError, MessageGone, NotModified, RateLimited, Transport
from bot.kernel import OutMessage
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)


class Clearer:
    """Removes buttons and deletes copies through one platform's transport; counts them in ``stats``."""

    def __init__(self, transport: Transport, surfaces: SurfaceStore, stats: dict[str, int]) -> None:
        """Call ``transport``; ask ``surfaces`` what a message shows; count calls in ``stats``."""
        self.transport = transport
        self.surfaces = surfaces
        self.stats = stats

    async def clear(self, chat_id: str, message: OutMessage, kind: StripButtons | DeleteCopy) -> None:
        """Remove the buttons of a superseded message of the slot of ``message``, or delete a second copy
        (its buttons go if the platform will not delete it); a message gone or already bare is fine as it
        is. A rate limit is the lane's to wait out."""
        begun: int | None = -1
        try:
            if isinstance(kind, DeleteCopy) and await self._delete_copy(chat_id, kind.message_id):
                return
            if isinstance(kind, StripButtons) and kind.since is not None:
                begun = await self._begin_strip(chat_id, message, kind.message_id, kind.since)
                if begun is None:
                    self.stats["skipped"] += 1
                    return
            await self.transport.clear_buttons(chat_id, kind.message_id)
            self.stats["stripped"] += 1
        except (NotModified, MessageGone) as exc:  # no buttons left, or deleted: nothing to do
            log.info("buttons of message %s in chat %s stay: %s", kind.message_id, chat_id, exc)
        except RateLimited:
            raise
        except DeliveryError as exc:
            log.warning("could not remove the buttons of a message in chat %s: %s", chat_id, exc)
            return
        if isinstance(kind, StripButtons) and kind.since is not None and begun is not None and begun >= 0:
            await self._landed(chat_id, message, kind.message_id, kind.since, begun)

    async def _begin_strip(
        self, chat_id: str, message: OutMessage, message_id: str, since: int
    ) -> int | None:
        """``None`` if the message is known to have no buttons (no call to make); else how many calls on it
        have landed (-1: not known, or the store did not answer: the buttons go all the same)."""
        try:
            state = await self.surfaces.state(message.table, chat_id, message.slot, message_id, since=since)
        except StoreUnavailable:
            return -1
        if state.shows is not None and not state.shows.buttons:
            return None
        return state.landed

    async def _landed(
        self, chat_id: str, message: OutMessage, message_id: str, since: int, begun: int
    ) -> None:
        """Record the strip for the other workers (lost if the store does not answer: one more strip, at
        worst, answered "not modified")."""
        with contextlib.suppress(StoreUnavailable):
            await self.surfaces.landed(
                message.table,
                chat_id,
                message.slot,
                message_id,
                since=since,
                digest="",
                buttons=False,
                begun=begun,
            )

    async def _delete_copy(self, chat_id: str, message_id: str) -> bool:
        """Delete a second copy of a message; False if the platform will not. A rate limit or a message
        already gone is the caller's to handle, as for any strip."""
        try:
            await self.transport.delete(chat_id, message_id)
        except (MessageGone, RateLimited):
            raise
        except DeliveryError as exc:
            log.info("a second copy of a message in chat %s stays, without buttons: %s", chat_id, exc)
            return False
        self.stats["deleted"] += 1
        return True
