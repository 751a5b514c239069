"""One call a delivery lane will make (:class:`Pending`) and what kind of call it is (:data:`Kind`), the
calls the drawer says come next (:data:`FollowUp`), how views of one slot compare: the same message
(:func:`same_slot`), an older table version (:func:`older_than`), an edit (:func:`as_edit`), what they show
(:func:`view_digest`), as the store keeps them (:func:`stored_view`); and the newest view queued for each
slot (:class:`LatestViews`).

The lanes (:mod:`bot.delivery._lanes`) queue these; the drawer (:mod:`bot.delivery._drawing`) makes the calls
and answers with the follow-ups, which the lanes queue in turn.
"""

from __future__ import annotations

import enum
import hashlib
import logging
from dataclasses import dataclass, replace

from bot.kernel import LruCache, OutMessage

log = logging.getLogger(__name__)


class ViewCall(enum.Enum):
    """What a lane does with a pending view (:attr:`Pending.message`): draw it, one of four ways, or only
    check it."""

    DRAW = "draw"
    """This worker's view: drawn unless its slot shows it already or a newer view of its epoch is due."""
    DRAW_FORCED = "draw forced"
    """Drawn even if the cache says the slot shows it (the adapter changed the message behind the cache)."""
    RESHOW = "reshow"
    """Another worker's newer view, shown again in case this worker's call went over it: an edit only,
    whatever the cache says (the worker whose view begins a new message posts it)."""
    RECHECK = "recheck"
    """Left to another worker's post of its epoch's message: drawn only if that message still does not exist
    once the worker's claim ran out (it died posting); else that worker drew the newest."""
    CHECK = "check"
    """Not a view to send: the adapter showed it itself; check that it was not over a newer one."""


@dataclass(frozen=True, slots=True)
class StripButtons:
    """Not a view to send: remove the buttons of this superseded message (the pending view says whose
    slot)."""

    message_id: str
    since: int | None = None
    """The epoch the message began (``None``: not known): what the store knows it shows is kept by epoch."""
    again: bool = False
    """Made again: the strip before crossed another call on the message (which may have landed after it,
    with buttons, its worker leaving the strip to this one): made once more, whatever this one lands as."""


@dataclass(frozen=True, slots=True)
class DeleteCopy:
    """Not a view to send: delete this second copy of its epoch's message (two workers posted it at once);
    remove its buttons if the platform will not delete it."""

    message_id: str


Kind = ViewCall | StripButtons | DeleteCopy
"""What kind of call a :class:`Pending` is."""

_SENDING = frozenset({ViewCall.DRAW, ViewCall.DRAW_FORCED, ViewCall.RESHOW, ViewCall.RECHECK})


@dataclass
class Pending:
    """One call a lane will make: a view to draw, buttons to remove, a copy to delete, or a check."""

    message: OutMessage
    kind: Kind = ViewCall.DRAW
    attempts: int = 0
    queued: float = 0.0
    """When the lane queued it (by the delivery's clock): an answer waits for the game's calls that long."""

    @property
    def sends(self) -> bool:
        """A view to send (not a strip, not a check): a newer view of its slot may take its place."""
        return self.kind in _SENDING

    @property
    def forced(self) -> bool:
        """Drawn whatever the cache says the slot shows."""
        return self.kind in (ViewCall.DRAW_FORCED, ViewCall.RESHOW)

    def force(self) -> None:
        """Draw it even if the cache says the slot shows it (the adapter changed the message behind the
        cache). A view left to another worker's post stays so: it is drawn only as a post, which no cache
        skips."""
        if self.kind is ViewCall.DRAW:
            self.kind = ViewCall.DRAW_FORCED

    def take(self, newer: OutMessage) -> None:
        """Send ``newer`` instead. A view shown again for another worker becomes this worker's own (that one
        would only edit, and ``newer`` may have to begin a new message), still drawn whatever the cache
        says; so does a view left to another worker's post (a recheck draws only if that post never came:
        this worker's newer view must be drawn either way, and is left again if the post is still under
        way). Keep "post a new message" if this one asked
        for it to post its epoch's message again (``/newgame`` during a game). A view that began its epoch
        needs no keeping: its epoch's message is posted if no view of the epoch posted it yet, and edited if
        one did (posting it again would show the hand twice).

        An older view does not take the place of a newer one: a redraw loaded before the last write (a
        refused press) may reach the lane after that write's views."""
        if older_than(newer, self.message):
            return
        if self.message.again and not newer.again:
            newer = replace(newer, fresh=True, again=True)
        self.message = newer
        if self.kind is ViewCall.RESHOW:
            self.kind = ViewCall.DRAW_FORCED
        elif self.kind is ViewCall.RECHECK:
            self.kind = ViewCall.DRAW


@dataclass(frozen=True, slots=True)
class CallNext:
    """Make this call next, before anything waiting in the lane (paced like any other call)."""

    call: Pending


@dataclass(frozen=True, slots=True)
class CallLater:
    """Queue this call again in ``seconds``, unless a newer view of its slot is waiting then."""

    call: Pending
    seconds: float


FollowUp = CallNext | CallLater
"""A call the drawer decided on after one of its own: the lane queues it."""
FollowUps = tuple[FollowUp, ...]
"""What the lane does after a drawer's call, in order (the calls to make next, in the order they are made)."""


def same_slot(a: OutMessage, b: OutMessage) -> bool:
    """Views of one message: the same slot, and the same epoch (a new hand's view never takes the place of
    the last hand's final one, which its own message must still show)."""
    return a.slot == b.slot and a.table == b.table and a.since == b.since


def as_edit(message: OutMessage) -> OutMessage:
    """The view as an edit of its slot's message (neither a new message nor one posted again)."""
    return replace(message, fresh=False, again=False)


def older_than(a: OutMessage, b: OutMessage) -> bool:
    """Whether view ``a`` shows an older table version than ``b`` (both knowing theirs)."""
    return versioned(a) and versioned(b) and a.version < b.version


def stored_view(chat_id: str, raw: str | None) -> OutMessage | None:
    """A view the store kept (:meth:`OutMessage.to_json`); ``None`` if there is none or it is unreadable."""
    if raw is None:
        return None
    try:
        return OutMessage.from_json(raw)
    except ValueError:
        log.warning("a stored view of chat %s cannot be read", chat_id)
        return None


def view_digest(message: OutMessage) -> str:
    """A short digest of what a view shows (its text, buttons and format), to compare across workers."""
    # (a button that presses keeps the pair every version digested: a view that did not change is not drawn)
    buttons = [
        [(b.label, b.url, b.kind) if b.opens else (b.label, b.token) for b in row] for row in message.buttons
    ]
    shown = (message.text, buttons, message.markdown)
    return hashlib.blake2b(repr(shown).encode(), digest_size=8).hexdigest()


def versioned(message: OutMessage) -> bool:
    """A view of a kept slot that knows its table version (views of table commands do)."""
    return message.version > 0 and message.kept


#: Slots whose newest queued view is remembered per worker: 50,000 active chats, then the idlest forgotten.
LATEST_CAP = 50_000


class LatestViews:
    """The newest view queued for each kept slot (of a chat, a table): what the slot must end up showing.

    Bounded (:data:`LATEST_CAP`, least recently queued forgotten first): a forgotten slot's older view, shown
    by an adapter, is not replaced by the newest — the chat's next view draws the newest anyway.
    """

    def __init__(self, capacity: int = LATEST_CAP) -> None:
        """None yet; at most ``capacity`` slots remembered."""
        self._views: LruCache[tuple[str, str, str], OutMessage] = LruCache(capacity)

    def note(self, chat_id: str, message: OutMessage) -> None:
        """Remember ``message`` as the newest view queued for its slot, unless a newer one was (a late
        redraw, loaded before the last write)."""
        key = (chat_id, message.table, message.slot)
        if not older_than(message, self._views.get(key) or message):
            self._views.put(key, message)

    def get(self, chat_id: str, message: OutMessage) -> OutMessage | None:
        """The newest view queued for the slot of ``message``, if remembered."""
        return self._views.get((chat_id, message.table, message.slot))

    def __len__(self) -> int:
        """How many slots it remembers."""
        return len(self._views)
