"""Surfaces in memory, for tests and the bench: the same rules as the Redis scripts of
:class:`bot.delivery._surfaces.RedisSurfaces` (:mod:`bot.delivery._surface_scripts`), on one process's
dicts."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.delivery import _surface_scripts as scripts
from bot.delivery._surface_answers import MessageState, Newest, Offer, Recorded, Shows, StripClaim


@dataclass
class _Epoch:
    version: int = 0
    view: str | None = None
    digest: str = ""
    message_id: str | None = None
    poster: str = ""
    claimed: float = 0.0
    landed: int = 0
    shows: Shows | None = None
    stripper: str = ""
    strip_claimed: float = 0.0

    def drawn(self) -> tuple[int, Shows | None]:
        """How many calls on its message landed, and what it is known to show."""
        return self.landed, self.shows


@dataclass
class _Slot:
    message_id: str | None = None
    posted: int = 0
    newest: int = -1
    older: int = -1
    bare: str | None = None
    """The slot's message once its epoch is forgotten, if it was known to have no buttons."""
    gone: list[str] = field(default_factory=list)
    """The last messages of forgotten epochs known to have no buttons, newest first."""
    epochs: dict[int, _Epoch] = field(default_factory=dict)


class MemorySurfaces:
    """In-process surfaces, for tests (the same rules as the Redis scripts)."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, *, post_claim: float = scripts.POST_CLAIM
    ) -> None:
        """Empty; ``clock`` paces the chats and times claims to post, which hold ``post_claim`` s."""
        self.post_claim = post_claim
        self.slots: dict[tuple[str, str, str], _Slot] = {}
        self.users: set[str] = set()
        self.clock = clock
        self._next_call: dict[str, float] = {}

    def _slot(self, table: str, chat: str, slot: str) -> _Slot:
        return self.slots.setdefault((table, chat, slot), _Slot())

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing a slot."""
        return self._slot(table, chat, slot).message_id

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot."""
        state = self._slot(table, chat, slot)
        state.message_id, state.posted = message_id, 0

    async def forget(self, table: str, chat: str, slot: str, since: int | None = None) -> None:
        """Forget a deleted message."""
        state = self._slot(table, chat, slot)
        state.message_id, state.posted = None, 0
        if since is not None and since in state.epochs:
            state.epochs[since].message_id = None

    async def offer(
        self,
        table: str,
        chat: str,
        slot: str,
        version: int,
        view: str,
        *,
        since: int,
        digest: str = "",
        poster: str = "",
        shares: bool = True,
    ) -> Offer:
        """The view becomes its epoch's newest unless a newer one (or, ``shares``, the same view) is there."""
        state = self._slot(table, chat, slot)
        if since > state.newest:
            gone = state.epochs.pop(state.older, None)
            if gone is not None and gone.message_id == state.message_id and gone.shows is not None:
                state.bare = state.message_id if not gone.shows.buttons else state.bare
            if gone is not None and gone.message_id and gone.shows is not None and not gone.shows.buttons:
                kept = [m for m in state.gone if m != gone.message_id][: scripts.GONE_KEPT - 1]
                state.gone = [gone.message_id, *kept]
            state.older, state.newest = state.newest, since
        elif since not in (state.newest, state.older):
            return Offer(False, 0, None, state.newest)
        epoch = state.epochs.setdefault(since, _Epoch())
        if version < epoch.version:
            claim = self._claim(epoch, poster, since == state.newest)
            return Offer(False, epoch.version, epoch.message_id, state.newest, False, *claim, *epoch.drawn())
        if shares and digest and digest == epoch.digest:
            return Offer(
                False, epoch.version, epoch.message_id, state.newest, True, False, 0.0, *epoch.drawn()
            )
        previous = epoch.version
        epoch.version, epoch.view, epoch.digest = version, view, digest
        claim = self._claim(epoch, poster, since == state.newest)
        return Offer(True, previous, epoch.message_id, state.newest, False, *claim, *epoch.drawn())

    def _claim(self, epoch: _Epoch, poster: str, newest: bool) -> tuple[bool, float]:
        """(claimed by ``poster`` now, how long another worker's claim still holds), for the newest epoch's
        message if it has none."""
        if epoch.message_id is not None or not poster or not newest:
            return False, 0.0
        now = self.clock()
        left = self.post_claim - (now - epoch.claimed)
        if epoch.poster and epoch.poster != poster and left > 0:
            return False, left
        epoch.poster, epoch.claimed = poster, now
        return True, 0.0

    async def renew(
        self,
        table: str,
        chat: str,
        slot: str,
        *,
        since: int,
        poster: str,
        strip: bool = False,
        hold: float = 0.0,
    ) -> bool:
        """Renew the claim to post if it is still ``poster``'s and the epoch has no message (``strip``: the
        claim to remove its buttons, if still ``poster``'s), ``hold`` seconds beyond its length (as if taken
        that much later)."""
        epoch = self._slot(table, chat, slot).epochs.get(since)
        if strip:
            if epoch is None or epoch.stripper != poster:
                return False
            epoch.strip_claimed = self.clock() + hold
            return True
        if epoch is None or epoch.message_id is not None or epoch.poster != poster:
            return False
        epoch.claimed = self.clock() + hold
        return True

    def _forgotten(self, table: str, chat: str, slot: str, message_id: str) -> MessageState:
        """A message that is not its epoch's: nothing is kept of it, unless it is known bare."""
        bare = message_id in self._slot(table, chat, slot).gone
        return MessageState(-1, Shows("", False) if bare else None)

    async def claim_strip(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, worker: str
    ) -> StripClaim:
        """What the message is known to show and, unless it is known bare, the claim to strip it (or how long
        another worker's still holds)."""
        epoch = self._slot(table, chat, slot).epochs.get(since)
        if epoch is None or epoch.message_id != message_id:
            return StripClaim(self._forgotten(table, chat, slot, message_id))
        state = MessageState(epoch.landed, epoch.shows)
        if epoch.shows is not None and not epoch.shows.buttons:
            return StripClaim(state)
        now = self.clock()
        left = self.post_claim - (now - epoch.strip_claimed)
        if epoch.stripper and epoch.stripper != worker and left > 0:
            return StripClaim(state, left)
        epoch.stripper, epoch.strip_claimed = worker, now
        return StripClaim(state)

    async def record(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, replacing: str | None
    ) -> Recorded:
        """The message is its epoch's unless another was recorded first."""
        state = self._slot(table, chat, slot)
        epoch = state.epochs.setdefault(since, _Epoch())
        if epoch.message_id is not None and epoch.message_id != replacing:
            return Recorded(False, epoch.message_id, since)
        mine, epoch.message_id, epoch.poster, epoch.shows = epoch.message_id, message_id, "", None
        epoch.stripper = ""
        if since < state.posted:
            return Recorded(True, mine, since)
        current, posted = state.message_id, state.posted
        state.message_id, state.posted = message_id, since
        if current is None:
            return Recorded(True, None)
        replaced, kept_bare, state.bare = state.epochs.get(posted, _Epoch()), state.bare, None
        bare = replaced.message_id == current and replaced.shows is not None and not replaced.shows.buttons
        return Recorded(True, current, posted, bare or kept_bare == current)

    async def newest(self, table: str, chat: str, slot: str, since: int) -> Newest:
        """The epoch's newest view and message, and the newest epoch."""
        state = self._slot(table, chat, slot)
        epoch = state.epochs.get(since, _Epoch())
        return Newest(epoch.version, epoch.view, epoch.message_id, max(state.newest, 0))

    async def landed(
        self,
        table: str,
        chat: str,
        slot: str,
        message_id: str,
        *,
        since: int,
        digest: str,
        buttons: bool,
        begun: int,
    ) -> Newest:
        """Record the call if the message is its epoch's (known if it began after every other landed); then
        :meth:`newest`."""
        state = self._slot(table, chat, slot)
        if buttons and message_id in state.gone:  # drew buttons (or unknown) on a forgotten bare message
            state.gone.remove(message_id)
        epoch = state.epochs.get(since)
        alone = epoch is not None and epoch.message_id == message_id and begun == epoch.landed
        known = alone  # (False for a message that is not the epoch's)
        if epoch is not None and epoch.message_id == message_id:
            before = epoch.shows
            # Crossed others: still known if it drew the same (the view, or a strip of a bare message).
            strip = not digest and not buttons  # ('' with buttons: an edit that timed out, drawn unknown)
            same = before is not None and (
                (digest and before.digest == digest) or (strip and not before.buttons)
            )
            epoch.shows = Shows(digest, buttons) if alone else before if same else None
            known = alone or bool(same)
            epoch.landed += 1
            epoch.stripper = epoch.stripper if buttons else ""  # a strip landed: its claim is over
        return (await self.newest(table, chat, slot, since))._replace(known=known)

    async def state(self, table: str, chat: str, slot: str, message_id: str, *, since: int) -> MessageState:
        """What the epoch's message is known to show, and how many calls on it landed."""
        epoch = self._slot(table, chat, slot).epochs.get(since)
        if epoch is None or epoch.message_id != message_id:
            return self._forgotten(table, chat, slot, message_id)
        return MessageState(epoch.landed, epoch.shows)

    async def forget_chat(self, table: str, chat: str) -> dict[str, str]:
        """Forget the chat's slots of the table; the message that showed each."""
        shown: dict[str, str] = {}
        for key in [k for k in self.slots if k[:2] == (table, chat)]:
            state = self.slots.pop(key)
            if state.message_id is not None:
                shown[key[2]] = state.message_id
        return shown

    async def pace(self, chat: str, interval: float) -> float:
        """Book the chat's next call."""
        now = self.clock()
        at = max(self._next_call.get(chat, now), now)
        self._next_call[chat] = at + interval
        if len(self._next_call) > 50_000:
            self._next_call = {c: t for c, t in self._next_call.items() if t > now}
        return at - now

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        return user in self.users

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record whether the user can be written to privately."""
        if value:
            self.users.add(user)
        else:
            self.users.discard(user)
