"""A Telegram group upgraded to a supergroup: its table, language, leaderboard and history follow it.

Telegram gives the supergroup a new chat id and tells the bot in two ways, either of which may come first,
on any worker, more than once:

* service messages — ``migrate_to_chat_id`` in the old group, ``migrate_from_chat_id`` in the supergroup
  (:meth:`ChatMover.service_message`). One is believed only once Telegram confirms it: a chat action sent to
  the old id must be refused with that very new id (an update that says otherwise moves nothing);
* a call to the old id refused with ``ChatMigrated`` (PTB's error for ``parameters.migrate_to_chat_id``):
  :class:`~adapters.telegram.transport.TelegramTransport` tells :meth:`ChatMover.refused`, then fails the
  call with :class:`~adapters.telegram.transport.ChatMoved`, which the lane drops like any refusal.

Either way the core moves what it keeps for the chat (:class:`bot.app.Service` ``.moves.chat_moved``), and
the mover delivers the table drawn afresh in the supergroup, takes the buttons off the table's messages in
the old group (the bot may still edit them, and clients show the old group's history above the new one) and
forgets them, and sends a refused message that was no table view (a showdown, an answer) to the new chat.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace

from telegram import Bot, Update
from telegram.constants import ChatAction
from telegram.error import ChatMigrated, TelegramError
from telegram.ext import ContextTypes

from adapters.telegram.ids import PREFIX
from bot.app import Service
from bot.delivery import Delivery, MessageGone, NotModified, RateLimited, Refused, SurfaceStore, Unreachable
from bot.kernel import ChatRef, LruCache, OutMessage
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

#: Moves this worker remembers having completed (a refused call to a chat known to have moved skips the core).
#: Past it the move used least recently is forgotten: a later refused call to that old group asks the core to
#: move it once more, which finds it moved already and changes nothing (one store round trip, no harm).
_KNOWN_MOVES = 1000


#: Supergroup and channel ids are ``-10¹² - n``; basic group ids are ``-n`` above that (TDLib's rule).
SUPERGROUP_IDS_BELOW = -1_000_000_000_000


def is_basic_group(chat_id: int) -> bool:
    """Whether a Telegram chat id is a basic group's (``-n``, ``n`` < 10¹²)."""
    return SUPERGROUP_IDS_BELOW < chat_id < 0


def is_supergroup(chat_id: int) -> bool:
    """Whether a Telegram chat id is a supergroup's (or a channel's): ``-100…`` and 13 digits or more."""
    return chat_id < SUPERGROUP_IDS_BELOW


@dataclass
class ChatMover:
    """Moves a chat's table to its supergroup when Telegram says the group was upgraded."""

    service: Service
    sender: Delivery
    surfaces: SurfaceStore
    _known: LruCache[int, int] = field(default_factory=lambda: LruCache(_KNOWN_MOVES))
    """Upgrades this worker has moved already: old id → new id."""

    async def service_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A ``migrate_to_chat_id`` or ``migrate_from_chat_id`` service message: move the chat, once
        Telegram confirms it."""
        message = update.effective_message
        if message is None:
            return
        if message.migrate_to_chat_id:
            old, new = message.chat.id, message.migrate_to_chat_id
        elif message.migrate_from_chat_id:
            old, new = message.migrate_from_chat_id, message.chat.id
        else:
            return
        if self._known.get(old) == new:
            return  # the other service message, after this worker moved the chat
        if not await self._confirmed(context.bot, old, new):
            log.warning("an update says chat %s became %s; Telegram does not confirm it: ignored", old, new)
            return
        await self.moved(old, new, message.chat.title or "")

    async def refused(self, old: int, new: int, message: OutMessage) -> None:
        """Telegram refused ``message`` for chat ``old``: it is now ``new``."""
        try:
            if message.chat == f"{PREFIX}{old}" and not message.kept:  # (first: a showdown before the next
                self.sender.deliver([replace(message, chat=f"{PREFIX}{new}")])  # hand's table, as it was)
            if self._known.get(old) != new:
                await self.moved(old, new, "")
        except Exception:  # the lane that called must go on whatever happens here
            log.exception("chat %s became %s, and moving its table failed", old, new)

    async def moved(self, old: int, new: int, title: str) -> None:
        """Move the chat ``old`` to ``new`` in the core; show its table there, retire it in the old group."""
        old_key = f"{PREFIX}{old}"
        outcome = await self.service.moves.chat_moved(old_key, ChatRef(f"{PREFIX}{new}", title=title))
        self.sender.deliver(outcome.messages)
        if outcome.ok and not outcome.failed:
            self._known.put(old, new)
        if outcome.ok and outcome.table is not None:
            live = {view.slot for view in outcome.messages if view.buttons}
            await self._retire(outcome.table, old_key, live)

    async def _retire(self, table_id: str, old_key: str, live: set[str]) -> None:
        """The table's messages in the old group are forgotten, and those of a slot whose buttons now live in
        the new chat lose theirs (one live keyboard per table and slot); a message that cannot be edited any
        more stays as it is."""
        with contextlib.suppress(StoreUnavailable):
            shown = await self.surfaces.forget_chat(table_id, old_key)
            for slot, message_id in shown.items():
                drawn = self.sender.drawer.shown.get(old_key, OutMessage(slot=slot, text="", table=table_id))
                if slot not in live or (drawn is not None and drawn.bare(message_id)):
                    continue  # no buttons to take off (this worker drew it without)
                try:
                    await self.sender.transport.clear_buttons(old_key, message_id)
                except (MessageGone, NotModified, RateLimited, Refused, Unreachable) as exc:
                    log.info("message %s of the old group %s keeps its buttons: %s", message_id, old_key, exc)

    @staticmethod
    async def _confirmed(bot: Bot, old: int, new: int) -> bool:
        """Whether Telegram says that the basic group ``old`` is now the supergroup ``new``: a chat action
        to the old id is refused with the new id (it writes nothing anyone sees)."""
        if not (is_basic_group(old) and is_supergroup(new)):
            return False
        try:
            await bot.send_chat_action(old, ChatAction.TYPING)
        except ChatMigrated as exc:
            return exc.new_chat_id == new
        except TelegramError:
            return False
        return False
