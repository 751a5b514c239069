"""A chat that moved to a new key keeps what the bot keeps for it: its table, language, leaderboard, history.

Telegram moves a basic group to a new chat id when it becomes a supergroup; the adapter learns it from a
service message, or from a call Telegram refused with the new id (:mod:`adapters.telegram.moves`), and calls
:meth:`ChatMoves.chat_moved`. What moves, in steps that are each safe to repeat:

1. the chat's language, its leaderboard and its history list (each store's ``move_*``): whatever the new chat
   already has of its own is kept;
2. the chat's table: one compare-and-set writes it with its new chat and moves its chat index (a press
   written meanwhile makes it read the table again); then the table is drawn afresh in the new chat, where no
   message shows it yet;
3. step 1 again, for what the old chat got while its table was still there (a hand kept, a game rated).

The table goes last: a worker that dies part-way leaves the table in the old chat, where its next post is
refused again and everything moves again. Telegram reports one move several times, on several workers (two
service messages, every refused call): a later report finds nothing left to move and draws nothing.

Refused, with nothing changed: a move to the same key, to a private chat or to another platform (a forged
report; ``ok=False``). A move to a chat that has a live table of its own leaves the moving table where it is
— playable through its messages, losing nothing — and tells the new chat, at most once per
:data:`BUSY_NOTICE_INTERVAL`; the move is tried again at the table's next refused post, once that chat's
table is closed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from pydantic import ValidationError

from bot.app._chat_commands import ChatCommands
from bot.app._deps import ServiceDeps
from bot.app._unit_of_work import announce
from bot.i18n import translator
from bot.i18n.markers import N_
from bot.kernel import ChatRef, LruCache, Outcome, OutMessage, TableState, measured_command
from bot.store import ChatBusy, StoreUnavailable, VersionConflict

log = logging.getLogger(__name__)
_ = N_

TABLE_STAYED = _(
    "This chat already has a table, so the table of the old group could not move here. "
    "Close this one with /cancel and the old table will follow."
)
#: Seconds between two notices that a table could not move to a chat (each of its refused posts retries).
BUSY_NOTICE_INTERVAL = 600.0
_NOTICES_CAP = 10_000


class ChatMoves:
    """Moves what the bot keeps per chat to the chat's new key (a member of :class:`bot.app.Service`)."""

    def __init__(
        self, deps: ServiceDeps, chats: ChatCommands, show: Callable[[str], Awaitable[Outcome]]
    ) -> None:
        """Use the service's stores; ``chats`` says a chat's language; ``show`` draws a table afresh."""
        self.deps = deps
        self.chats = chats
        self.show = show
        self._noticed: LruCache[tuple[str, str], float] = LruCache(_NOTICES_CAP)
        """When a chat was last told that a table could not move there."""

    @measured_command("chat_moved")
    async def chat_moved(self, old: str, new: ChatRef) -> Outcome:
        """The chat ``old`` is now ``new`` (see the module's steps): the views that draw its table there,
        with ``table`` the table moved now; ``ok=False`` for a refused move, ``failed`` if the store failed
        (nothing is lost: the move is tried again at the next report)."""
        refusal = _refusal(old, new)
        if refusal is not None:
            log.warning("chat %s cannot move to %s: %s", old, new.key, refusal)
            return Outcome(ok=False)
        try:
            await self._move_chat_data(old, new)
            table_id = await self._table_of(old, new.key)
            moved = table_id is not None and await self._move_table(table_id, old, new)
            await self._move_chat_data(old, new)
        except ChatBusy as busy:
            return await self._stayed(busy, new)
        except StoreUnavailable as exc:
            log.warning("chat %s could not move to %s yet: %s", old, new.key, exc)
            return Outcome(ok=False, failed=True)
        if not moved or table_id is None:
            return Outcome()
        log.info("table %s moved from chat %s to %s", table_id, old, new.key, extra={"table": table_id})
        shown = await self.show(table_id)
        return Outcome(messages=shown.messages, table=table_id)

    async def _move_chat_data(self, old: str, new: ChatRef) -> None:
        """The language, the leaderboard scope and the history list follow the chat."""
        await self.deps.prefs.move_language(old, new.prefs_key)
        if self.deps.leaderboard is not None:
            await self.deps.leaderboard.move_scope(old, new.key)
        await self.deps.history.move_chat(old, new.key)

    async def _table_of(self, old: str, new: str) -> str | None:
        """The table to move: the old chat's, or one whose move died after claiming the new chat's entry."""
        table_id = await self.deps.tables.table_for_chat(old)
        if table_id is not None:
            return table_id
        claimed = await self.deps.tables.table_for_chat(new)
        table = None if claimed is None else await self._load(claimed)
        return claimed if table is not None and table[1].chat == old else None

    async def _load(self, table_id: str) -> tuple[int, TableState] | None:
        """A stored table and its version (``None``: gone, or unreadable — logged)."""
        stored = await self.deps.tables.load(table_id)
        if stored is None:
            return None
        try:
            return stored.version, TableState.model_validate_json(stored.data)
        except (ValidationError, ValueError) as exc:
            log.error("table %s cannot be loaded: %s", table_id, exc, extra={"table": table_id})
            return None

    async def _move_table(self, table_id: str, old: str, new: ChatRef) -> bool:
        """Write the table with its new chat (again on a concurrent write); whether it moved now (not: it
        was moved already, or is gone). ``ChatBusy`` if the new chat has a live table of its own."""
        for _attempt in range(self.deps.cas_attempts):
            loaded = await self._load(table_id)
            if loaded is None or loaded[1].chat != old:
                return False
            version, table = loaded
            table.chat, table.chat_title = new.key, new.title or table.chat_title
            # Where its messages began belongs to the old chat: the new one posts them afresh.
            table.since = {slot: v for slot, v in table.since.items() if not slot.endswith(f"@{old}")}
            table.updated_at = self.deps.clock()
            finished = table.finished
            try:
                written = await self.deps.tables.compare_and_set(
                    table_id,
                    version,
                    table.model_dump_json(),
                    chat_key=new.key,
                    user_keys=table.humans(),
                    finished=finished,
                )
            except VersionConflict:
                continue
            await announce(self.deps.notices, table_id, written.version)
            return True
        raise StoreUnavailable(f"table {table_id!r} kept changing while it moved")

    async def _stayed(self, busy: ChatBusy, new: ChatRef) -> Outcome:
        """The new chat has a table of its own: the moving one stays; the chat is told (now and then)."""
        log.warning(
            "table %s stays in its old chat: %s has table %s",
            busy.table_id,
            new.key,
            busy.existing_table_id,
            extra={"table": busy.table_id},
        )
        now, key = self.deps.clock(), (busy.table_id, new.key)
        last = self._noticed.get(key)
        if last is not None and now - last < BUSY_NOTICE_INTERVAL:
            return Outcome(ok=False)
        self._noticed.put(key, now)
        text = translator(await self.chats.language_of(new, None)).gettext(TABLE_STAYED)
        return Outcome(messages=(OutMessage(slot="notice", text=text, chat=new.key, fresh=True),), ok=False)


def _refusal(old: str, new: ChatRef) -> str | None:
    """Why a chat cannot move from ``old`` to ``new`` (``None``: it can)."""
    platform, sep, local = old.partition(":")
    if not (sep and platform and local) or ":" not in new.key:
        return "not a chat key"
    if old == new.key:
        return "the same chat"
    if new.private:
        return "a private chat"
    if new.key.partition(":")[0] != platform:
        return "another platform"
    return None
