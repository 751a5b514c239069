"""Drawing one view on the message of its slot, when several workers may draw the same table at once.

A :class:`Drawer` makes the call for one view (:mod:`bot.delivery._lanes` has the lanes that order and pace
them). A view of a kept slot that knows its table version (:attr:`bot.kernel._views.OutMessage.version`) is
first offered to the store (:class:`bot.delivery._surfaces.SurfaceStore`): it goes out only if no newer view
of its epoch (its message: a hand, or cards) was offered, and one identical to the newest offered is left to
the worker that offered it. An epoch's message is posted by whichever worker draws it first: the store gives
that worker a claim on the post, and other workers leave their views of the epoch to it meanwhile (it shows
the newest offered after its call, and posts the newest if its own view was superseded before it could post
it). A claim lasts until the message is recorded; the worker renews it while its call waits, so it runs out a
few seconds after a worker died posting (then the workers that left their views look again). A second copy
posted all the same is deleted. The message is edited after that. After each call the drawer looks again: a
newer view offered meanwhile is drawn again (this call may have landed after it), and a message that is no
longer its epoch's, or whose hand is over, loses its buttons. Views that know no version (answers, notices)
are drawn as they come.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from bot.delivery._pending import DeleteCopy, Pending, StripButtons, ViewCall, as_edit, versioned
from bot.delivery._surfaces import Offer, SurfaceStore
from bot.delivery._transport import DeliveryError, MessageGone, NotModified, RateLimited, Transport
from bot.kernel import OutMessage
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

_SHOWN_CAP = 50_000
#: Seconds after another worker's claim to post runs out before looking whether it posted.
RECHECK_MARGIN = 0.1


class Drawer:
    """Draws views on their slots' messages through one platform's transport; remembers what it drew."""

    def __init__(
        self,
        transport: Transport,
        surfaces: SurfaceStore,
        stats: dict[str, int],
        later: Callable[[str, Pending, float], None],
    ) -> None:
        """Call ``transport``; keep message ids and views in ``surfaces``; count calls in ``stats``;
        ``later(chat, pending, seconds)`` queues a call again after a while."""
        self.later = later
        self.transport = transport
        self.surfaces = surfaces
        self.stats = stats
        self.token = secrets.token_hex(6)
        """This worker's name in the store's claims to post a message."""
        # What each slot shows now, so that an unchanged view costs no call (a cache: losing it is harmless).
        self._shown: dict[tuple[str, str, str], Shown] = {}

    def cached(self, key: tuple[str, str, str]) -> Shown | None:
        """What this worker last drew on a slot (``(chat, table, slot)``), if it remembers."""
        return self._shown.get(key)

    def forget(self, key: tuple[str, str, str]) -> None:
        """The slot's message was changed behind this cache (an adapter drew on it)."""
        self._shown.pop(key, None)

    def remember(
        self,
        key: tuple[str, str, str],
        content: tuple[str, object],
        version: int,
        message_id: str | None = None,
    ) -> None:
        """Remember what a slot shows now (and on which message, when known)."""
        if len(self._shown) >= _SHOWN_CAP:
            self._shown.clear()  # a cache: at worst a few redundant edits, answered "not modified"
        if message_id is None and (previous := self._shown.get(key)) is not None:
            message_id = previous.message_id
        self._shown[key] = Shown(content, version, message_id)

    async def known(self, chat_id: str, message: OutMessage) -> str | None:
        """The message that shows the view's slot now, if the slot is one that messages are kept for."""
        if not message.kept:
            return None
        return await self.surfaces.get(message.table, chat_id, message.slot)

    async def draw(self, chat_id: str, queue: list[Pending], item: Pending) -> None:
        """Make the chat show one view (a call, or none if it shows it already or a newer one is due);
        follow-up calls (a view shown again, buttons to remove) go to the front of ``queue``."""
        message = item.message
        shown_key = (chat_id, message.table, message.slot)
        content = (message.text, message.buttons)
        shown = self._shown.get(shown_key)
        claimed = False
        if not versioned(message):
            if not item.forced and not message.fresh and shown is not None and shown.content == content:
                self.stats["skipped"] += 1
                return
            known = await self.known(chat_id, message)
            post = message.fresh or known is None
        else:
            # Other workers may show this slot too: only a view at least as new as theirs (of its hand, or
            # cards: its epoch) goes out, and one that shows what the newest offered shows is left to the
            # worker that offered it (it shows it).
            shares = item.kind is ViewCall.DRAW and not message.fresh
            offer = await self.offer(chat_id, message, shares=shares, posts=item.kind is not ViewCall.RESHOW)
            if offer.same:
                # The worker that offered the same view shows it (posts it, or shows the newest again if one
                # of its calls went over another's): a call here would only be answered "not modified".
                self.stats["skipped"] += 1
                if shown is None or shown.content != content:
                    self.forget(shown_key)
                return
            known, claimed = offer.message_id, offer.claimed
            older = message.since < offer.current
            if item.kind is ViewCall.RECHECK and known is not None:
                return  # the worker that posted it drew the newest view after its call
            if offer.posting_elsewhere:
                # Another worker is posting this epoch's message: after its call it shows the epoch's newest
                # view (this one, or a newer one), so a second copy would only have to be deleted. Look
                # again when its claim runs out, in case it died posting.
                self.stats["left"] += 1
                self.later(chat_id, Pending(message, ViewCall.RECHECK), offer.claim_left + RECHECK_MARGIN)
                return
            if not offer.accepted and offer.claimed:
                # A newer view came before this worker could post its epoch's message (a rate limit, a
                # paced lane), and its worker left it to this one: post the newest.
                newest = await self._newest_view(chat_id, message)
                if newest is None:
                    return
                message, content = newest, (newest.text, newest.buttons)
            elif not offer.accepted or (known is None and older):
                # A newer view of its epoch came, or its epoch's message was never posted and a newer
                # hand's is on screen: nothing to draw.
                self.stats["superseded"] += 1
                return
            # A new message begins each epoch (a new hand, new cards), posted by whichever view of it is
            # drawn first, on any worker (a redraw of the new hand may come before the view that dealt it:
            # that one edits); a view posted again, of the newest epoch, posts it anew (at the bottom).
            post = known is None or (message.again and not older)
            if item.kind is ViewCall.RESHOW and post:
                return  # the worker whose view begins a new message posts it; this one only edits
            # Unchanged since this worker showed it, and no other worker showed anything since: no call.
            unchanged = shown is not None and shown.content == content and shown.version == offer.previous
            if not item.forced and not post and unchanged:
                self.stats["skipped"] += 1
                self.remember(shown_key, content, message.version)  # what the slot shows is this version
                return
        if known is not None and not post:
            try:
                await self.transport.edit(chat_id, known, message)
                self.stats["edit"] += 1
            except NotModified:
                self.stats["not_modified"] += 1
            except MessageGone:  # deleted: post it again
                since = message.since if versioned(message) else None
                await self.surfaces.forget(message.table, chat_id, message.slot, since)
                known = None
            if known is not None:
                self.remember(shown_key, content, message.version, known)
                await self.after_call(chat_id, queue, message, known)
                return
        renewing = asyncio.create_task(self._renew(chat_id, message)) if claimed else None
        try:
            sent = await self.transport.send(chat_id, message)
        finally:
            if renewing is not None:
                renewing.cancel()
        self.stats["send"] += 1
        if await self.record_sent(chat_id, queue, message, sent, known):
            await self.after_call(chat_id, queue, message, sent)

    async def _renew(self, chat_id: str, message: OutMessage) -> None:
        """Keep this worker's claim to post the epoch's message while its call waits (a rate limiter may hold
        it longer than a claim lasts): other workers go on leaving their views to it."""
        with contextlib.suppress(StoreUnavailable):
            while True:
                await asyncio.sleep(self.surfaces.post_claim / 2)
                table, slot, since = message.table, message.slot, message.since
                if not await self.surfaces.renew(table, chat_id, slot, since=since, poster=self.token):
                    return

    async def _newest_view(self, chat_id: str, message: OutMessage) -> OutMessage | None:
        """The newest view offered for the epoch of ``message`` (to post or edit: not fresh), if readable."""
        newest = await self.surfaces.newest(message.table, chat_id, message.slot, message.since)
        view = _stored_view(chat_id, newest.view)
        return None if view is None else as_edit(view)

    async def offer(
        self, chat_id: str, message: OutMessage, *, shares: bool = False, posts: bool = False
    ) -> Offer:
        """Offer a versioned view to the store as its epoch's newest (``shares``: unless the newest offered
        shows the same, which its worker shows; ``posts``: this worker posts the epoch's message if it has
        none, unless another worker is posting it)."""
        return await self.surfaces.offer(
            message.table,
            chat_id,
            message.slot,
            message.version,
            message.to_json(),
            since=message.since,
            digest=_digest(message) if shares else "",
            poster=self.token if posts else "",
        )

    async def check_shown(self, chat_id: str, queue: list[Pending], message: OutMessage) -> None:
        """The adapter showed ``message`` on the slot's message itself: record it as the slot's newest, or
        show the newest again if another worker had a newer one (this one may have gone over it)."""
        offer = await self.offer(chat_id, message)
        if offer.message_id is not None:
            await self.after_call(chat_id, queue, message, offer.message_id)

    async def after_call(
        self, chat_id: str, queue: list[Pending], message: OutMessage, message_id: str
    ) -> None:
        """``message_id`` now shows ``message``. If another worker offered a newer view of the slot meanwhile,
        this call may have landed after that worker's: show the newest again (the next call of this lane);
        and if another worker made a new message show the slot, this one loses its buttons."""
        if not versioned(message):
            return
        newest = await self.surfaces.newest(message.table, chat_id, message.slot, message.since)
        # Another worker's message is this epoch's, or a newer hand's is on screen: this one keeps no
        # buttons (an edit of it may have landed after they were removed).
        elsewhere = newest.message_id is not None and newest.message_id != message_id
        if message.buttons and (elsewhere or newest.current > message.since):
            queue.insert(0, Pending(message, StripButtons(message_id)))
        view = _stored_view(chat_id, newest.view) if newest.version > message.version else None
        if view is None:
            return
        key = (chat_id, message.table, message.slot)
        if _digest(view) == _digest(message):
            # It shows what this call showed: whichever call landed last, the message shows the newest.
            self.remember(key, (message.text, message.buttons), newest.version, message_id)
            return
        self.stats["reshown"] += 1
        self.forget(key)
        # An edit of whatever message shows the slot: never a second new message.
        queue.insert(0, Pending(as_edit(view), ViewCall.RESHOW))

    async def clear(self, chat_id: str, kind: StripButtons | DeleteCopy) -> None:
        """Remove the buttons of a superseded message, or delete a second copy (its buttons go if the
        platform will not delete it); a message gone or already bare is fine as it is. A rate limit is the
        lane's to wait out."""
        try:
            if isinstance(kind, DeleteCopy) and await self._delete_copy(chat_id, kind.message_id):
                return
            await self.transport.clear_buttons(chat_id, kind.message_id)
            self.stats["stripped"] += 1
        except (NotModified, MessageGone) as exc:  # no buttons left, or deleted: nothing to do
            log.info("buttons of message %s in chat %s stay: %s", kind.message_id, chat_id, exc)
        except RateLimited:
            raise
        except DeliveryError as exc:
            log.warning("could not remove the buttons of a message in chat %s: %s", chat_id, exc)

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

    async def record_sent(
        self, chat_id: str, queue: list[Pending], message: OutMessage, sent: str, known: str | None
    ) -> bool:
        """``sent`` now shows the view; the message that showed its slot until now loses its buttons.

        False if another worker's message of the same or a newer epoch shows the slot already: then ``sent``
        is the one superseded, and loses its buttons instead.
        """
        shown_key = (chat_id, message.table, message.slot)
        shown = self._shown.get(shown_key)
        replaced, taken = known, True
        if message.kept:
            if versioned(message):
                recorded = await self.surfaces.record(
                    message.table, chat_id, message.slot, sent, since=message.since, replacing=known
                )
                # What the slot showed when the record was made (another worker may have posted since the
                # offer): that one is superseded now, or this one is.
                taken, replaced = recorded
            else:
                await self.surfaces.set(message.table, chat_id, message.slot, sent)
        superseded: str | None = None
        if not taken:
            # A second copy of the epoch's message (the store answers "not taken" for nothing else): it goes,
            # and the first, which its worker brings to the newest view, stays.
            queue.insert(0, Pending(message, DeleteCopy(sent)))
        elif replaced is not None and replaced != sent:
            # A new message supersedes the slot's current one: its buttons go, unless it surely has none
            # (this worker's cache says what it drew on that very message, without buttons).
            bare = shown is not None and shown.message_id == replaced and not shown.content[1]
            superseded = None if bare else replaced
        if taken and message.kept:
            self.remember(shown_key, (message.text, message.buttons), message.version, sent)
        if superseded is not None:
            # The next call of this lane, paced like any other: the new message goes out first.
            queue.insert(0, Pending(message, StripButtons(superseded)))
        if message.user is not None:
            await self.surfaces.set_reachable(chat_id, True)
        return taken


def _stored_view(chat_id: str, raw: str | None) -> OutMessage | None:
    """A view the store kept (:meth:`OutMessage.to_json`); ``None`` if there is none or it is unreadable."""
    if raw is None:
        return None
    try:
        return OutMessage.from_json(raw)
    except ValueError:
        log.warning("a stored view of chat %s cannot be read", chat_id)
        return None


def _digest(message: OutMessage) -> str:
    """A short digest of what a view shows (its text, buttons and format), to compare across workers."""
    shown = (message.text, [[(b.label, b.token) for b in row] for row in message.buttons], message.markdown)
    return hashlib.blake2b(repr(shown).encode(), digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Shown:
    """What this worker last made a slot show, and the table version it was."""

    content: tuple[str, object]
    version: int
    message_id: str | None = None
    """The message it was shown on, when known."""
