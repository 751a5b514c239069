"""Where each view lives on a chat platform, and who can be written to privately.

A table's slots (``lobby``, ``table``, ``hand``…) map to the message that shows them in each chat, so that a
restarted worker edits the same messages. Users who can receive private views are remembered too (those who
opened the bot, or whose direct messages are open: the adapter says which). Both live in Redis (or memory for
tests: :mod:`bot.delivery._surfaces_memory`), never only in a process.

Chats and users are the core's platform keys (``tg:-100123``, ``dc:4567``); message ids are strings, whatever
the platform uses. In Redis every platform has its own namespace: ``{prefix}{platform}:surf:{table}`` (a hash
``{chat}:{slot}`` → message id, expiring with the table) and ``{prefix}{platform}:reachable`` (a set).

Several workers may deliver views of one slot at once (a press on one, a machine's deadline on another), and
their calls may reach the platform in either order. So each slot also keeps, in the same hash, the newest
view offered for it by table version (``{chat}:{slot}:v``, ``…:view``, and ``…:h`` a digest of what it
shows) and the epoch of the message that shows it (``…:p``: the version at which that message's hand, or
cards, began). :meth:`SurfaceStore.offer` takes a view only if no newer one is there (nor the same one, which
its worker shows) and lets one worker at a time post an epoch's message (the others wait for it, to edit it),
:meth:`SurfaceStore.record` takes a posted message only if no message of its epoch or a newer one was
recorded first — each one script on one key (:mod:`bot.delivery._surface_scripts`) — and a worker looks at
:meth:`SurfaceStore.newest`
after its call: if a newer view came meanwhile, its own call may have landed last, and it shows the newest
again (:class:`bot.delivery._lanes.Delivery`). Workers also share each chat's pacing
(``{prefix}{platform}:pace:{chat}``: the time, on Redis's clock, from which the next call may go), so that
N workers do not write to a chat N times as often as the platform allows.
"""

from __future__ import annotations

from typing import Protocol

from bot.delivery import _surface_scripts as scripts
from bot.delivery._surface_answers import MessageState, Newest, Offer, Recorded, Shows, StripClaim
from bot.store import AnyRedis, unavailable_errors

#: How long a table's message ids are kept after its last new hand or message (a week: longer than a game).
SURFACE_TTL = 7 * 86400


def split_key(key: str) -> tuple[str, str]:
    """``("tg", "-100123")`` for ``"tg:-100123"``: the platform and its own id."""
    platform, _, local = key.partition(":")
    return platform, local


class SurfaceStore(Protocol):
    """Message ids per (table, chat, slot), and the users the bot may write to privately."""

    post_claim: float
    """Seconds a claim to post an epoch's message holds unless renewed (:meth:`renew`)."""

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing ``slot`` of ``table`` in ``chat``."""
        ...

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot."""
        ...

    async def forget(self, table: str, chat: str, slot: str, since: int | None = None) -> None:
        """That message (of epoch ``since``, if it is known) is gone: the next view posts a new one."""
        ...

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
        """Make ``view`` (of table ``version``, of the slot's epoch ``since``) its epoch's newest, unless a
        newer version of that epoch was offered — or, ``shares`` and with a ``digest`` of what it shows,
        unless the newest offered shows the same (then its worker, which shows it, stays responsible for
        it). The digest is kept whether or not it is compared: a view that must be drawn anyway (a new
        message) still tells the other workers what it shows. Only the two newest epochs of a slot are
        kept: a view of an older one is refused.

        ``poster`` (a worker's token) will post the epoch's message if it has none: the first such offer,
        taken or not, claims the post (:attr:`Offer.claimed`) until its message is recorded, for
        :data:`~bot.delivery._surface_scripts.POST_CLAIM` seconds at most; other workers' offers meanwhile are
        told so (:attr:`Offer.posting_elsewhere`) and leave their views to it rather than post a copy."""
        ...

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
        """Renew ``poster``'s claim to post the epoch's message (``strip``: to remove its buttons) while its
        call is on its way (a rate limiter may hold it longer than the claim), for :attr:`post_claim` seconds
        and ``hold`` more from now; False if the claim is no longer its own (or its message was recorded, or
        its strip landed)."""
        ...

    async def claim_strip(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, worker: str
    ) -> StripClaim:
        """Before removing the buttons of ``message_id`` (of the slot's epoch ``since``): what it is known to
        show (as :meth:`state`) and, unless it is known to have none, ``worker``'s claim to remove them, for
        :attr:`post_claim` seconds unless renewed — or how long another worker's claim still holds (that
        worker's call is on its way: a second would only be answered "not modified"). A message that is
        not its epoch's is neither known nor claimed. The claim ends when a strip on it lands
        (:meth:`landed` with no buttons)."""
        ...

    async def record(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, replacing: str | None
    ) -> Recorded:
        """Remember the message just posted for the slot's epoch ``since``, in place of ``replacing`` (the
        epoch's message when the view was offered, if any). Taken unless another message of that epoch was
        recorded first (of two workers posting at once, the first stays); it then shows the slot unless a
        newer epoch's message does."""
        ...

    async def newest(self, table: str, chat: str, slot: str, since: int) -> Newest:
        """The newest view offered for the slot's epoch ``since``, its message, and the newest epoch."""
        ...

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
        """A call on ``message_id`` (of the slot's epoch ``since``) landed: it now shows the view of
        ``digest`` ('' after a strip), with ``buttons`` or none — known if the call began after every other
        call on it landed (``begun``: :attr:`Offer.landed` or :attr:`MessageState.landed` read before the
        call; -1 if not known), else nothing is (two calls crossed). Then :meth:`newest`, in the same step,
        and whether what the message shows is known after the call (:attr:`Newest.known`)."""
        ...

    async def state(self, table: str, chat: str, slot: str, message_id: str, *, since: int) -> MessageState:
        """What ``message_id``, of the slot's epoch ``since``, is known to show, and how many calls on it
        have landed (read before a call on it: :meth:`landed`'s ``begun``)."""
        ...

    async def forget_chat(self, table: str, chat: str) -> dict[str, str]:
        """Forget every slot of ``table`` in ``chat`` (a chat that moved to a new key: the table is posted
        afresh there); the message that showed each slot, by slot (for its buttons to go). Atomic; done
        again, it finds nothing."""
        ...

    async def pace(self, chat: str, interval: float) -> float:
        """Book the chat's next call, ``interval`` seconds after the one booked before: the wait until it."""
        ...

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        ...

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record that the user can (or cannot) be written to privately."""
        ...


class RedisSurfaces:
    """Surfaces in Redis, one namespace per platform (the layout in :mod:`bot.delivery._surface_scripts`)."""

    def __init__(
        self, redis: AnyRedis, prefix: str = "mus:", *, post_claim: float = scripts.POST_CLAIM
    ) -> None:
        """Use ``redis`` (not owned) under ``prefix``; a claim to post a message holds ``post_claim`` s."""
        self._redis = redis
        self._prefix = prefix
        self.post_claim = post_claim
        self._post_claim_ms = round(post_claim * 1000)
        self._offer = redis.register_script(scripts.OFFER)
        self._record = redis.register_script(scripts.RECORD)
        self._pace = redis.register_script(scripts.PACE)
        self._renew = redis.register_script(scripts.RENEW)
        self._forget_chat = redis.register_script(scripts.FORGET_CHAT)
        self._landed = redis.register_script(scripts.LANDED)
        self._strip = redis.register_script(scripts.STRIP)

    def _hash(self, table: str, chat: str) -> tuple[str, str]:
        platform, local = split_key(chat)
        return f"{self._prefix}{platform}:surf:{table}", local

    def _slot(self, table: str, chat: str, slot: str) -> tuple[str, str]:
        """The table's hash and the slot's field in it (``{chat}:{slot}``; its other fields extend it)."""
        key, local = self._hash(table, chat)
        return key, f"{local}:{slot}"

    def _reachable_set(self, user: str) -> tuple[str, str]:
        platform, local = split_key(user)
        return f"{self._prefix}{platform}:reachable", local

    async def get(self, table: str, chat: str, slot: str) -> str | None:
        """The message showing ``slot`` of ``table`` in ``chat``."""
        key, f = self._slot(table, chat, slot)
        with unavailable_errors():
            return _text(await self._redis.hget(key, f))

    async def set(self, table: str, chat: str, slot: str, message_id: str) -> None:
        """Remember the message showing a slot (the table's hash expires a week after its last change)."""
        key, f = self._slot(table, chat, slot)
        with unavailable_errors():
            await self._record(keys=[key], args=[f, message_id, -1, SURFACE_TTL, ""])

    async def forget(self, table: str, chat: str, slot: str, since: int | None = None) -> None:
        """Forget a deleted message."""
        key, f = self._slot(table, chat, slot)
        fields = [f, f"{f}:p"]
        if since is not None:
            fields.append(f"{_epoch(f, since)}:m")
        with unavailable_errors():
            await self._redis.hdel(key, *fields)

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
        """One script on the table's hash (the layout in :mod:`bot.delivery._surface_scripts`)."""
        key, f = self._slot(table, chat, slot)
        args: list[str | int] = [f, version, view, SURFACE_TTL, digest, since, poster, self._post_claim_ms]
        args.append(1 if shares else 0)
        with unavailable_errors():
            taken, previous, message_id, current, claim, left, landed, shows, buttons = await self._offer(
                keys=[key], args=args
            )
        return Offer(
            taken == 1,
            int(previous),
            _text(message_id),
            int(current),
            same=taken == 2,
            claimed=claim == 1,
            claim_left=int(left) / 1000 if claim == 2 else 0.0,
            landed=int(landed),
            shows=_shows(shows, buttons),
        )

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
        """One script on the table's hash."""
        key, f = self._slot(table, chat, slot)
        args = [_epoch(f, since), poster, "strip" if strip else "post", round(hold * 1000)]
        with unavailable_errors():
            return bool(await self._renew(keys=[key], args=args))

    async def claim_strip(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, worker: str
    ) -> StripClaim:
        """One script on the table's hash (the layout in :mod:`bot.delivery._surface_scripts`)."""
        key, f = self._slot(table, chat, slot)
        args: list[str | int] = [_epoch(f, since), message_id, worker, self._post_claim_ms]
        with unavailable_errors():
            landed, shows, buttons, left = await self._strip(keys=[key], args=args)
        state = MessageState(int(landed), _shows(shows, buttons))
        return StripClaim(state, int(left) / 1000)

    async def record(
        self, table: str, chat: str, slot: str, message_id: str, *, since: int, replacing: str | None
    ) -> Recorded:
        """One script on the table's hash (the layout in :mod:`bot.delivery._surface_scripts`)."""
        key, f = self._slot(table, chat, slot)
        with unavailable_errors():
            taken, current, epoch, bare = await self._record(
                keys=[key], args=[f, message_id, since, SURFACE_TTL, replacing or ""]
            )
        return Recorded(bool(taken), _text(current), None if int(epoch) < 0 else int(epoch), bare == 1)

    async def newest(self, table: str, chat: str, slot: str, since: int) -> Newest:
        """One read of the epoch's fields."""
        key, f = self._slot(table, chat, slot)
        g = _epoch(f, since)
        with unavailable_errors():
            version, view, message_id, current = await self._redis.hmget(
                key, [f"{g}:v", f"{g}:view", f"{g}:m", f"{f}:e"]
            )
        return Newest(int(version or 0), _text(view), _text(message_id), int(current or 0))

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
        """One script on the table's hash (the layout in :mod:`bot.delivery._surface_scripts`)."""
        key, f = self._slot(table, chat, slot)
        args: list[str | int] = [f, since, message_id, digest, 1 if buttons else 0, begun]
        with unavailable_errors():
            version, view, shown_on, current, known = await self._landed(keys=[key], args=args)
        return Newest(int(version or 0), _text(view), _text(shown_on), int(current or 0), known == 1)

    async def state(self, table: str, chat: str, slot: str, message_id: str, *, since: int) -> MessageState:
        """One read of the epoch's fields."""
        key, f = self._slot(table, chat, slot)
        g = _epoch(f, since)
        with unavailable_errors():
            epoch_message, landed, shows, buttons, gone = await self._redis.hmget(
                key, [f"{g}:m", f"{g}:n", f"{g}:d", f"{g}:b", f"{f}:gone"]
            )
        if _text(epoch_message) != message_id:  # (known bare if among the slot's forgotten bare messages)
            bare = message_id in (_text(gone) or "").split()
            return MessageState(-1, Shows("", False) if bare else None)
        return MessageState(int(landed or 0), _shows(shows, buttons))

    async def forget_chat(self, table: str, chat: str) -> dict[str, str]:
        """One script on the table's hash: every field of the chat's slots goes."""
        key, local = self._hash(table, chat)
        with unavailable_errors():
            found = await self._forget_chat(keys=[key], args=[f"{local}:"])
        return {str(_text(found[i])): str(_text(found[i + 1])) for i in range(0, len(found), 2)}

    async def pace(self, chat: str, interval: float) -> float:
        """Book the next call on Redis's clock (one script, shared by every worker)."""
        platform, local = split_key(chat)
        with unavailable_errors():
            wait_ms = await self._pace(
                keys=[f"{self._prefix}{platform}:pace:{local}"], args=[round(interval * 1000)]
            )
        return max(0.0, int(wait_ms) / 1000)

    async def reachable(self, user: str) -> bool:
        """Whether the user can be written to privately."""
        key, local = self._reachable_set(user)
        with unavailable_errors():
            return bool(await self._redis.sismember(key, local))

    async def set_reachable(self, user: str, value: bool) -> None:
        """Record whether the user can be written to privately."""
        key, local = self._reachable_set(user)
        with unavailable_errors():
            if value:
                await self._redis.sadd(key, local)
            else:
                await self._redis.srem(key, local)


def _epoch(slot_field: str, since: int) -> str:
    """The prefix of an epoch's fields in the table's hash (``{chat}:{slot}@{since}``)."""
    return f"{slot_field}@{since}"


def _shows(digest: object, buttons: object) -> Shows | None:
    """What a message shows, as its epoch's fields keep it (``None``: not known)."""
    if digest is None or buttons is None:
        return None
    return Shows(str(_text(digest)), _text(buttons) == "1")


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)
