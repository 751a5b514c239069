"""What :class:`bot.delivery._surfaces.SurfaceStore` answers: an offer of a view (:class:`Offer`), a message
recorded (:class:`Recorded`), an epoch's newest view (:class:`Newest`), and what a message is known to show
(:class:`Shows`, :class:`MessageState`), a claim to remove a message's buttons (:class:`StripClaim`), the
same from Redis and from memory."""

from __future__ import annotations

from typing import NamedTuple


class Shows(NamedTuple):
    """What an epoch's message is known to show: the last call on it landed after every other call on it."""

    digest: str
    """The digest of the view it shows ('' after its buttons were removed: its text stays, unnamed)."""
    buttons: bool
    """Whether it has buttons."""


class MessageState(NamedTuple):
    """What :meth:`SurfaceStore.state` knows of a message of an epoch."""

    landed: int
    """How many calls on it have landed (-1: it is not its epoch's message, of which nothing is kept)."""
    shows: Shows | None
    """What it shows, if known."""


class StripClaim(NamedTuple):
    """The answer to :meth:`SurfaceStore.claim_strip`."""

    state: MessageState
    """What the message is known to show, and how many calls on it have landed (as
    :meth:`SurfaceStore.state`)."""
    held_elsewhere: float = 0.0
    """How long (seconds) another worker's claim to remove its buttons still holds (0: none does; the claim is
    the asking worker's, unless the message is known to have none or is not its epoch's)."""


class Offer(NamedTuple):
    """The answer to :meth:`SurfaceStore.offer`."""

    accepted: bool
    """No newer view of the slot's epoch was offered before: this one is now the epoch's newest."""
    previous: int
    """The version offered before for that epoch (0: none)."""
    message_id: str | None = None
    """The message of that epoch (``None``: not posted yet)."""
    current: int = 0
    """The slot's newest epoch: its message is the one with live buttons."""
    same: bool = False
    """Not taken because the epoch's newest view shows the same (its ``digest``): its worker shows it."""
    claimed: bool = False
    """The epoch has no message, and the offering ``poster`` now holds the claim to post it: with this
    view, or (not accepted) with the epoch's newest view."""
    claim_left: float = 0.0
    """How long (seconds) another worker's claim to post the epoch's message still holds (0: none does)."""
    landed: int = 0
    """How many calls on the epoch's message have landed: a call begun now lands after them
    (:meth:`SurfaceStore.landed`)."""
    shows: Shows | None = None
    """What the epoch's message is known to show (``None``: not known, or no message)."""

    @property
    def posting_elsewhere(self) -> bool:
        """The epoch has no message and another worker holds the claim to post it: that worker shows the
        epoch's newest view once it posted, so this one leaves its view to it (and looks again when the
        claim runs out, in case that worker died posting)."""
        return self.claim_left > 0


class Recorded(NamedTuple):
    """The answer to :meth:`SurfaceStore.record`."""

    taken: bool
    """The message is its epoch's (else another worker posted that epoch's message first)."""
    replaced: str | None
    """Taken: the message it supersedes (the slot's until then; for an epoch older than the slot's
    message, that epoch's). Not taken: the epoch's message, recorded first."""
    replaced_since: int | None = None
    """The epoch of the message replaced (``None``: not known)."""
    replaced_bare: bool = False
    """The message replaced is known to have no buttons (none to remove)."""


class Newest(NamedTuple):
    """What a message must show: its epoch's newest view offered, and the slot's newest epoch."""

    version: int
    view: str | None
    """The view as :meth:`bot.kernel._views.OutMessage.to_json` wrote it."""
    message_id: str | None
    """The message of that epoch."""
    current: int
    """The slot's newest epoch."""
    known: bool = True
    """(:meth:`SurfaceStore.landed`) What the message shows once the call landed is known: the call began
    after every other call on the message had landed, or those it crossed drew the same (False: it crossed a
    call that drew otherwise, or nothing was known, or the message is not its epoch's)."""
