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
are drawn as they come. Each call that landed on an epoch's message is recorded for every worker
(:meth:`~bot.delivery._surfaces.SurfaceStore.landed`): while the last began after every other landed, what
the message shows is known, and a view it shows already, or a bare message's strip, costs no call.

The drawer never touches a lane's queue: each of its calls answers with what the lane does next
(:data:`~bot.delivery._pending.FollowUps`, in order; none when the view was drawn, skipped or superseded):

* ``CallNext(Pending(view, ViewCall.RESHOW))`` — another worker offered a newer view meanwhile: show it again,
  as an edit of whatever message shows the slot (this call may have landed after that worker's);
* ``CallNext(Pending(view, StripButtons(message_id)))`` — that message is superseded (a new message shows the
  slot, another worker's message is its epoch's, or a newer hand's is on screen): its buttons go;
* ``CallNext(Pending(view, DeleteCopy(message_id)))`` — that message is a second copy of its epoch's, posted
  while another worker posted the first: it goes;
* ``CallLater(Pending(view, ViewCall.RECHECK), seconds)`` — another worker is posting the view's epoch's
  message: look again when its claim runs out.

If the store fails once the platform took a call, :class:`RecordFailed` carries the follow-ups decided.
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass, replace

from bot.delivery._claims import TurnCheck, claim_kept, unless_shown
from bot.delivery._clearing import Clearer
from bot.delivery._pending import (
    CallLater,
    CallNext,
    DeleteCopy,
    FollowUps,
    Pending,
    StripButtons,
    ViewCall,
    as_edit,
    stored_view,
    versioned,
    view_digest,
)
from bot.delivery._shown import ShownCache
from bot.delivery._surface_answers import Newest, Offer
from bot.delivery._surfaces import SurfaceStore
from bot.delivery._transport import MessageGone, NotModified, Refused, Transport, Unneeded
from bot.kernel import OutMessage
from bot.store import StoreUnavailable

#: Seconds after another worker's claim to post runs out before looking whether it posted.
RECHECK_MARGIN = 0.1


class RecordFailed(StoreUnavailable):
    """The platform took a call, then the store failed while it was recorded or looked at again: the
    follow-ups decided until then (``then``) are still to be made."""

    def __init__(self, then: FollowUps) -> None:
        """Carry ``then``, the follow-ups decided before the store failed."""
        super().__init__("the surfaces store failed after a call")
        self.then = then


@dataclass(frozen=True, slots=True)
class _Call:
    """The call that draws a view: an edit of message ``known``, or a post (``post``, or no message yet)."""

    message: OutMessage
    known: str | None
    post: bool
    claimed: bool = False
    """This worker holds the claim to post the view's epoch's message (renewed while the post waits)."""
    begun: int = -1
    """The calls on the epoch's message that had landed when this one began (-1: not known)."""


class Drawer:
    """Draws views on their slots' messages through one platform's transport; remembers what it drew."""

    def __init__(self, transport: Transport, surfaces: SurfaceStore, stats: dict[str, int]) -> None:
        """Call ``transport``; keep message ids and views in ``surfaces``; count calls in ``stats``."""
        self.transport = transport
        self.surfaces = surfaces
        self.stats = stats
        self.token = secrets.token_hex(6)
        """This worker's name in the store's claims to post a message."""
        self.shown = ShownCache()
        """What each slot shows now, as this worker drew it: an unchanged view costs no call."""
        self.clearer = Clearer(transport, surfaces, stats, token=self.token)
        """Removes the buttons of superseded messages, deletes second copies (calls that draw no view)."""

    async def known(self, chat_id: str, message: OutMessage) -> str | None:
        """The message that shows the view's slot now, if the slot is one that messages are kept for."""
        if not message.kept:
            return None
        return await self.surfaces.get(message.table, chat_id, message.slot)

    async def draw(self, chat_id: str, item: Pending) -> FollowUps:
        """Make the chat show one view (a call, or none if it shows it already or a newer one is due); what
        the lane does next."""
        if versioned(item.message):
            call = await self._plan_versioned(chat_id, item)
        else:
            call = await self._plan_unversioned(chat_id, item)
        if isinstance(call, _Call):
            return await self._edit_or_post(chat_id, call)
        return call  # no call: what comes next, if anything

    async def _plan_unversioned(self, chat_id: str, item: Pending) -> _Call | FollowUps:
        """A view that knows no table version is drawn as it comes, unless this worker's cache says its slot
        shows it already."""
        message = item.message
        shown = self.shown.get(chat_id, message)
        if not item.forced and not message.fresh and shown is not None and shown.shows(message):
            self.stats["skipped"] += 1
            return ()
        known = await self.known(chat_id, message)
        return _Call(message, known, post=message.fresh or known is None)

    async def _plan_versioned(self, chat_id: str, item: Pending) -> _Call | FollowUps:
        """Other workers may show this slot too: only a view at least as new as theirs (of its hand, or
        cards: its epoch) goes out, and one that shows what the newest offered shows is left to the worker
        that offered it (it shows it)."""
        message, kind = item.message, item.kind
        shown = self.shown.get(chat_id, message)
        # (A view put back after a rate limit was offered by this worker already: its own offer is no other
        # worker's, and must not make it leave the view to nobody.)
        shares = kind is ViewCall.DRAW and not message.fresh and not item.attempts
        offer = await self.offer(chat_id, message, shares=shares, posts=kind is not ViewCall.RESHOW)
        if offer.same:
            # The worker that offered the same view shows it (posts it, or shows the newest again if one
            # of its calls went over another's): a call here would only be answered "not modified".
            self.stats["skipped"] += 1
            if shown is None or not shown.shows(message):
                self.shown.forget(chat_id, message)
            return ()
        if kind is ViewCall.RECHECK and offer.message_id is not None:
            return ()  # the worker that posted it drew the newest view after its call
        if offer.posting_elsewhere:
            # Another worker is posting this epoch's message: after its call it shows the epoch's newest
            # view (this one, or a newer one), so a second copy would only have to be deleted. Look
            # again when its claim runs out, in case it died posting.
            self.stats["left"] += 1
            return (CallLater(Pending(message, ViewCall.RECHECK), offer.claim_left + RECHECK_MARGIN),)
        view = await self._view_to_draw(chat_id, message, offer)
        if view is None:
            return ()
        # A new message begins each epoch (a new hand, new cards), posted by whichever view of it is
        # drawn first, on any worker (a redraw of the new hand may come before the view that dealt it:
        # that one edits); a view posted again, of the newest epoch, posts it anew (at the bottom).
        post = offer.message_id is None or (view.again and message.since >= offer.current)
        if kind is ViewCall.RESHOW and post:
            return ()  # the worker whose view begins a new message posts it; this one only edits
        if not post and message.since < offer.current and view.buttons:
            # A newer hand's message shows the slot: this one ends its hand without buttons, drawn so at
            # once (else its buttons would come back with this edit, and take another call to remove).
            view = replace(view, buttons=())
        # Unchanged since this worker showed it, and no other worker showed anything since; or the call that
        # landed last on the message, begun after every other landed, drew this very view (a view shown
        # again for another worker that drew it since; not one the adapter drew over, unrecorded): no call.
        unchanged = shown is not None and shown.shows(view) and shown.version == offer.previous
        drawn = offer.shows is not None and offer.shows.digest == view_digest(view)
        if not post and ((not item.forced and unchanged) or (drawn and kind is not ViewCall.DRAW_FORCED)):
            self.stats["skipped"] += 1
            self.shown.remember(chat_id, view)  # what the slot shows is this version
            return ()
        return _Call(view, offer.message_id, post, offer.claimed, offer.landed)

    async def _view_to_draw(self, chat_id: str, message: OutMessage, offer: Offer) -> OutMessage | None:
        """What to draw once ``message`` was offered: itself, the epoch's newest view, or nothing."""
        if not offer.accepted and offer.claimed:
            # A newer view came before this worker could post its epoch's message (a rate limit, a
            # paced lane), and its worker left it to this one: post the newest.
            return await self._newest_view(chat_id, message)
        if not offer.accepted or (offer.message_id is None and message.since < offer.current):
            # A newer view of its epoch came, or its epoch's message was never posted and a newer
            # hand's is on screen: nothing to draw.
            self.stats["superseded"] += 1
            return None
        return message

    async def _edit_or_post(self, chat_id: str, call: _Call) -> FollowUps:
        """Edit the message that shows the view's slot, or post a new one (also when that one is gone)."""
        message, known = call.message, call.known
        if known is not None and not call.post:
            check = unless_shown(self.surfaces, chat_id, known, message) if versioned(message) else None
            if await self._edit(chat_id, known, message, check):
                self.shown.remember(chat_id, message, known)
                begun = call.begun if check is None else check.begun(call.begun)
                return await self.after_call(chat_id, message, known, begun=begun)
            known = None
        sent = await self._send(chat_id, message, renew_claim=call.claimed)
        return await self.posted(chat_id, message, sent, known, begun=call.begun)

    async def _edit(
        self, chat_id: str, message_id: str, message: OutMessage, check: TurnCheck | None
    ) -> bool:
        """Make ``message_id`` show the view (unless ``check`` finds it shown by its turn); False if that
        message is gone (then it is forgotten, and the view posted again)."""
        try:
            await self.transport.edit(chat_id, message_id, message, check)
            self.stats["edit"] += 1
        except Unneeded:  # shown by another worker's call while this one waited: as "not modified", no call
            self.stats["skipped"] += 1
        except NotModified:
            self.stats["not_modified"] += 1
        except MessageGone:
            since = message.since if versioned(message) else None
            await self.surfaces.forget(message.table, chat_id, message.slot, since)
            return False
        except Refused:  # (a timeout too: the edit may have landed all the same, unknown to the others)
            if versioned(message):
                with contextlib.suppress(StoreUnavailable):
                    await self.surfaces.landed(
                        message.table,
                        chat_id,
                        message.slot,
                        message_id,
                        since=message.since,
                        digest="",
                        buttons=True,
                        begun=-1,
                    )
            raise
        return True

    async def _send(self, chat_id: str, message: OutMessage, *, renew_claim: bool) -> str:
        """Post the view as a new message; its id. ``renew_claim``: this worker holds the claim to post it."""
        renewing = None
        if renew_claim:  # the claim to post is kept while the call waits its turn
            renewing = claim_kept(self.surfaces, chat_id, message, self.token, since=message.since)
        try:
            sent = await self.transport.send(chat_id, message)
        finally:
            if renewing is not None:
                renewing.cancel()
        self.stats["send"] += 1
        return sent

    async def _newest_view(self, chat_id: str, message: OutMessage) -> OutMessage | None:
        """The newest view offered for the epoch of ``message`` (to post or edit: not fresh), if readable."""
        newest = await self.surfaces.newest(message.table, chat_id, message.slot, message.since)
        view = stored_view(chat_id, newest.view)
        return None if view is None else as_edit(view)

    async def offer(
        self, chat_id: str, message: OutMessage, *, shares: bool = False, posts: bool = False
    ) -> Offer:
        """Offer a versioned view to the store as its epoch's newest (``shares``: unless the newest offered
        shows the same, which its worker shows; ``posts``: this worker posts the epoch's message if it has
        none, unless another worker is posting it). What it shows is kept either way: another worker that
        offers the same view next leaves it to this one (no edit answered "not modified")."""
        return await self.surfaces.offer(
            message.table,
            chat_id,
            message.slot,
            message.version,
            message.to_json(),
            since=message.since,
            digest=view_digest(message),
            poster=self.token if posts else "",
            shares=shares,
        )

    async def check_shown(self, chat_id: str, message: OutMessage) -> FollowUps:
        """The adapter showed ``message`` on the slot's message itself: record it as the slot's newest, or
        show the newest again if another worker had a newer one (this one may have gone over it)."""
        offer = await self.offer(chat_id, message)
        if offer.message_id is None:
            return ()
        return await self.after_call(chat_id, message, offer.message_id)

    async def adopt(self, chat_id: str, message: OutMessage, message_id: str) -> FollowUps:
        """The adapter posted ``message`` itself, as ``message_id``: it shows the slot as if this worker had
        posted it (:meth:`posted`)."""
        known = await self.known(chat_id, message)
        begun = (await self.offer(chat_id, message)).landed if versioned(message) else -1
        # (A new message: no other call can be on it before it is recorded, so its own is the first.)
        return await self.posted(chat_id, message, message_id, known, begun=begun)

    async def posted(
        self, chat_id: str, message: OutMessage, sent: str, known: str | None, *, begun: int = -1
    ) -> FollowUps:
        """``sent``, a new message, now shows the view: record it as its slot's (the message ``known`` to
        show the slot until now loses its buttons), then look again (:meth:`after_call`; ``begun`` as there).
        :class:`RecordFailed`, with the follow-ups decided so far, if the store fails after the record."""
        taken, then = await self._record(chat_id, message, sent, known)
        try:
            if message.user is not None:
                await self.surfaces.set_reachable(chat_id, True)
            if taken:
                # A newer view shown again goes first, then the buttons to remove (this message's, then
                # those of the message it replaced).
                then = await self.after_call(chat_id, message, sent, begun=begun) + then
        except StoreUnavailable as exc:
            raise RecordFailed(then) from exc
        return then

    async def _record(
        self, chat_id: str, message: OutMessage, sent: str, known: str | None
    ) -> tuple[bool, FollowUps]:
        """Record ``sent`` as the message that shows the slot; whether it was taken, and the follow-ups: the
        message that showed the slot until now loses its buttons — or, not taken (another worker's message of
        the same or a newer epoch shows the slot already), ``sent`` is the one superseded, and goes."""
        shown = self.shown.get(chat_id, message)
        taken, replaced, replaced_since, bare = True, known, None, False
        if versioned(message):
            # What the slot showed when the record was made (another worker may have posted since the
            # offer): that one is superseded now, or this one is.
            taken, replaced, replaced_since, bare = await self.surfaces.record(
                message.table, chat_id, message.slot, sent, since=message.since, replacing=known
            )
        elif message.kept:
            await self.surfaces.set(message.table, chat_id, message.slot, sent)
        if not taken:
            # A second copy of the epoch's message (the store answers "not taken" for nothing else): it goes,
            # and the first, which its worker brings to the newest view, stays.
            return False, (CallNext(Pending(message, DeleteCopy(sent))),)
        if message.kept:
            self.shown.remember(chat_id, message, sent)
        # A new message supersedes the slot's current one: its buttons go, unless it surely has none (the
        # store says the last call on it left none, or this worker drew it bare: :meth:`_bare_here`).
        if replaced is None or replaced == sent or bare:
            return True, ()
        if (
            shown is not None
            and shown.bare(replaced)
            and await self._bare_here(chat_id, message, replaced, replaced_since)
        ):
            return True, ()
        # The next call of this lane, paced like any other: the new message goes out first.
        return True, (CallNext(Pending(message, StripButtons(replaced, replaced_since))),)

    async def _bare_here(self, chat_id: str, message: OutMessage, replaced: str, since: int | None) -> bool:
        """Whether this worker's word that it drew ``replaced`` bare holds: for a versioned view, only where
        the store keeps nothing of that message (its epoch forgotten); what it keeps decides."""
        if not versioned(message) or since is None:
            return True
        try:
            state = await self.surfaces.state(message.table, chat_id, message.slot, replaced, since=since)
        except StoreUnavailable:
            return False  # (the strip goes out: at worst answered "not modified")
        return state.landed < 0 or (state.shows is not None and not state.shows.buttons)

    async def after_call(
        self, chat_id: str, message: OutMessage, message_id: str, *, begun: int = -1
    ) -> FollowUps:
        """``message_id`` now shows ``message`` (recorded for the other workers: what it shows is known if
        the call began once ``begun`` calls on it had landed, and none landed since). If another worker
        offered a newer view of the slot meanwhile, this call may have landed after that worker's: show the
        newest again (the next call of this lane); and if another worker made a new message show the slot,
        this one loses its buttons."""
        if not versioned(message):
            return ()
        table, slot, since = message.table, message.slot, message.since
        newest = await self.surfaces.landed(
            table,
            chat_id,
            slot,
            message_id,
            since=since,
            digest=view_digest(message),
            buttons=bool(message.buttons),
            begun=begun,
        )
        # Another worker's message is this epoch's, or a newer hand's is on screen: this one keeps no
        # buttons (an edit of it may have landed after they were removed).
        elsewhere = newest.message_id is not None and newest.message_id != message_id
        strip: FollowUps = ()
        if message.buttons and (elsewhere or newest.current > message.since):
            strip = (CallNext(Pending(message, StripButtons(message_id, message.since))),)
        return self._show_newest(chat_id, message, message_id, newest) + strip

    def _show_newest(self, chat_id: str, message: OutMessage, message_id: str, newest: Newest) -> FollowUps:
        """Show the epoch's newest view again if it is newer than ``message`` and shows something else."""
        view = stored_view(chat_id, newest.view) if newest.version > message.version else None
        if view is None:
            return ()
        if view_digest(view) == view_digest(message):
            # It shows what this call showed: whichever call landed last, the message shows the newest.
            self.shown.remember(chat_id, message, message_id, version=newest.version)
            return ()
        self.stats["reshown"] += 1
        self.shown.forget(chat_id, message)
        # An edit of whatever message shows the slot: never a second new message.
        return (CallNext(Pending(as_edit(view), ViewCall.RESHOW)),)
