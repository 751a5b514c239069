"""Removing the buttons of a superseded message, or deleting a second copy of one (:class:`Clearer`): the
calls a lane makes that draw no view.

Several workers may decide that one message loses its buttons: the worker that posted the message that
supersedes it, and a worker whose call on it landed once it was superseded. And a message may have none left
to remove (its last view was drawn without buttons, on any worker). So a strip first asks the store what the
message is known to show, and claims the strip
(:meth:`~bot.delivery._surfaces.SurfaceStore.claim_strip`): a message known to have no buttons costs no call
— a call the platform would only answer "not modified" — and while another worker's strip of it is on its way
(its claim holds: renewed while a rate limiter keeps the call waiting), this one looks again once that claim
runs out (by then the other strip landed and the message is known bare; if its worker died, this one strips).
A strip that landed is recorded as any other call
(:meth:`~bot.delivery._surfaces.SurfaceStore.landed`), so that the other workers know it. And a strip may wait
seconds for its turn in the bot's budget while another worker's last edit of the message, drawn without
buttons, lands: the transport asks once the turn came (:data:`~bot.delivery._transport.StillNeeded`), and a
message known bare by then costs no call (:class:`~bot.delivery._transport.Unneeded`).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace

from bot.delivery._claims import TurnCheck, claim_kept, unless_bare
from bot.delivery._pending import CallLater, CallNext, DeleteCopy, FollowUps, Pending, StripButtons
from bot.delivery._surfaces import SurfaceStore
from bot.delivery._transport import (
    DeliveryError,
    MessageGone,
    NotModified,
    RateLimited,
    Transport,
    Unneeded,
)
from bot.kernel import OutMessage
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

#: Seconds after another worker's claim on a strip runs out before looking again.
STRIP_RECHECK_MARGIN = 0.1


class Clearer:
    """Removes buttons and deletes copies through one platform's transport; counts them in ``stats``."""

    def __init__(
        self, transport: Transport, surfaces: SurfaceStore, stats: dict[str, int], *, token: str
    ) -> None:
        """Call ``transport``; ask ``surfaces`` what a message shows and claim strips there as ``token`` (this
        worker's name in the store's claims); count calls in ``stats``."""
        self.transport = transport
        self.surfaces = surfaces
        self.stats = stats
        self.token = token

    async def clear(self, chat_id: str, message: OutMessage, kind: StripButtons | DeleteCopy) -> FollowUps:
        """Remove the buttons of a superseded message of the slot of ``message``, or delete a second copy
        (its buttons go if the platform will not delete it); a message gone or already bare is fine as it
        is. What the lane does next: look again later if another worker's strip of it is on its way. A rate
        limit is the lane's to wait out."""
        begun: int | None = -1
        claimed = False
        try:
            if isinstance(kind, DeleteCopy) and await self._delete_copy(chat_id, kind.message_id):
                return ()
            if isinstance(kind, StripButtons) and kind.since is not None:
                begun, elsewhere = await self._begin_strip(chat_id, message, kind.message_id, kind.since)
                if elsewhere > 0:  # another worker's strip is on its way: look again after it
                    return (CallLater(Pending(message, kind), elsewhere + STRIP_RECHECK_MARGIN),)
                if begun is None:
                    self.stats["skipped"] += 1
                    return ()
                claimed = begun >= 0
            check = self._check(chat_id, message, kind)
            await self._strip(chat_id, message, kind, check, renew=claimed)
            if check is not None and begun is not None:
                begun = check.begun(begun)  # (when the call was sent, if its turn came late)
            self.stats["stripped"] += 1
        except Unneeded:  # bare by the time its turn came (another worker's call landed): no call made
            self.stats["skipped"] += 1
            return ()
        except (NotModified, MessageGone) as exc:  # no buttons left, or deleted: nothing to do
            log.info("buttons of message %s in chat %s stay: %s", kind.message_id, chat_id, exc)
        except RateLimited:
            raise
        except DeliveryError as exc:
            log.warning("could not remove the buttons of a message in chat %s: %s", chat_id, exc)
            return ()
        if not isinstance(kind, StripButtons) or kind.since is None or begun is None or begun < 0:
            return ()
        if not await self._landed(chat_id, message, kind.message_id, kind.since, begun) and not kind.again:
            # Another call on the message crossed this strip, and the message is not known bare: that call's
            # worker may have left its own strip to this one (the claim) while its call, with buttons, landed
            # after it. Once more, then.
            return (CallNext(Pending(message, replace(kind, again=True))),)
        return ()

    def _check(self, chat_id: str, message: OutMessage, kind: StripButtons | DeleteCopy) -> TurnCheck | None:
        """A strip's check once its turn came (none for a message of no epoch, or a copy's)."""
        if isinstance(kind, StripButtons) and kind.since is not None:
            return unless_bare(self.surfaces, chat_id, kind.message_id, message, kind.since)
        return None

    async def _strip(
        self,
        chat_id: str,
        message: OutMessage,
        kind: StripButtons | DeleteCopy,
        check: TurnCheck | None,
        *,
        renew: bool,
    ) -> None:
        """The call that removes the buttons; this worker's claim on the strip is renewed while it waits, and
        once its turn came it goes only if ``check`` finds the message not known bare by then."""
        renewing = None
        if renew and isinstance(kind, StripButtons) and kind.since is not None:
            since, token = kind.since, self.token
            renewing = claim_kept(self.surfaces, chat_id, message, token, since=since, strip=True)
        try:
            await self.transport.clear_buttons(chat_id, kind.message_id, check)
        finally:
            if renewing is not None:
                renewing.cancel()

    async def _begin_strip(
        self, chat_id: str, message: OutMessage, message_id: str, since: int
    ) -> tuple[int | None, float]:
        """How many calls on the message have landed (``None`` if it is known to have no buttons: no call to
        make; -1: not known, or the store did not answer: the buttons go all the same), and how long another
        worker's strip of it still holds its claim (0: none does; else the strip is this worker's)."""
        try:
            claim = await self.surfaces.claim_strip(
                message.table, chat_id, message.slot, message_id, since=since, worker=self.token
            )
        except StoreUnavailable:
            return -1, 0.0
        state = claim.state
        if state.shows is not None and not state.shows.buttons:
            return None, 0.0
        if claim.held_elsewhere > 0:
            self.stats["left"] += 1  # (its strip left to the worker whose call is on its way)
        return state.landed, claim.held_elsewhere

    async def _landed(
        self, chat_id: str, message: OutMessage, message_id: str, since: int, begun: int
    ) -> bool:
        """Record the strip for the other workers (lost if the store does not answer: one more strip, at
        worst, answered "not modified"); whether the message is known bare now (else the strip crossed
        another call on the message, which may have put buttons back)."""
        with contextlib.suppress(StoreUnavailable):
            newest = await self.surfaces.landed(
                message.table,
                chat_id,
                message.slot,
                message_id,
                since=since,
                digest="",
                buttons=False,
                begun=begun,
            )
            return newest.known
        return True

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
