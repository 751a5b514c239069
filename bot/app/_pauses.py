"""A chat the bot cannot reach, and a player who blocked it: what the adapters tell the core, what it does.

The adapters translate the platform's news into these calls and nothing more (the rule itself is
:mod:`bot.table._pause`'s):

* :meth:`Pauses.chat_lost` — the bot was removed from a chat or may not post there (Telegram's
  ``my_chat_member``, a post refused because of it: :class:`~bot.delivery.Unreachable` for a chat; a Discord
  interaction whose ``app_permissions`` lack the right to post): the chat's table is paused;
* :meth:`Pauses.chat_back` — the bot may post there again (added back, or a press that came from the chat
  with the rights to post, at a table the core said is paused: :attr:`~bot.kernel.Outcome.paused`): the table
  resumes, or is closed if it waited too long;
* :meth:`Pauses.player_blocked` / :meth:`Pauses.player_back` — a person blocked the bot (their cards cannot
  reach them; the game goes on: their turns run out and a machine plays them) or unblocked it: the group is
  told once, with the adapter's link; once back, they get their hand again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.app._deps import ServiceDeps
from bot.app._invitations import Invitations
from bot.app._unit_of_work import TableWork
from bot.i18n import common as msg
from bot.kernel import ChatRef, Invitation, Outcome, UserRef, measured_command
from bot.store import StoreUnavailable
from bot.table import Answer, Refusal, TableContext, pause, resume

log = logging.getLogger(__name__)


class Pauses:
    """Pauses and resumes the tables of chats the bot cannot reach (a member of :class:`bot.app.Service`)."""

    def __init__(
        self,
        deps: ServiceDeps,
        tables: TableWork,
        invitations: Invitations,
        show_hand: Callable[[UserRef, str], Awaitable[Outcome]],
    ) -> None:
        """Use the service's stores and unit of work; ``show_hand`` sends a player their hand again."""
        self.deps = deps
        self.tables = tables
        self.invitations = invitations
        self.show_hand = show_hand

    @measured_command("chat_lost")
    async def chat_lost(self, chat: str) -> Outcome:
        """The bot cannot reach ``chat`` (a key): pause its table. ``ok`` with ``table`` when the chat has a
        live table, now paused (it may have been already); ``ok=False`` when it has none; no views."""
        table_id = await self._table_of(chat)
        if table_id is None:
            return Outcome(ok=False)
        outcome = await self.tables.run(table_id, None, _pause)
        if outcome.ok:
            log.info("table %s paused: chat %s out of reach", table_id, chat, extra={"table": table_id})
        return Outcome(ok=outcome.ok, table=table_id, failed=outcome.failed)

    @measured_command("chat_back")
    async def chat_back(self, chat: ChatRef) -> Outcome:
        """The bot reaches ``chat`` again: its paused table resumes, posted afresh with a notice, or is closed
        with a notice if it waited too long (:mod:`bot.table._pause`). ``ok=False`` and no views when the chat
        has no paused table."""
        table_id = await self._table_of(chat.key)
        if table_id is None:
            return Outcome(ok=False)
        outcome = await self.tables.run(table_id, None, _resume)
        if outcome.ok:
            log.info("table %s: chat %s reached again", table_id, chat.key, extra={"table": table_id})
        return outcome

    async def _table_of(self, chat: str) -> str | None:
        try:
            return await self.deps.tables.table_for_chat(chat)
        except StoreUnavailable:
            log.warning("store unavailable: the table of chat %s was not paused or resumed", chat)
            return None

    async def player_blocked(self, user_key: str) -> Invitation | None:
        """A person blocked the bot: whom to tell in their table's group, once, that their cards cannot reach
        them and how to fix it (``None``: nobody, or told already; see :class:`Invitations`)."""
        try:
            table_id = await self.deps.tables.table_for_user(user_key)
        except StoreUnavailable:
            return None
        if table_id is None:
            return None
        return await self.invitations.invitation(user_key, table_id, blocked=True)

    async def player_back(self, user: UserRef) -> Outcome:
        """A person unblocked the bot: a later block is told again, and they get their hand at once."""
        self.invitations.forget(user.key)
        try:
            table_id = await self.deps.tables.table_for_user(user.key)
        except StoreUnavailable:
            return Outcome(ok=False, failed=True)
        if table_id is None:
            return Outcome(ok=False)
        return await self.show_hand(user, table_id)


def _pause(ctx: TableContext) -> Answer:
    if not pause(ctx) and ctx.table.paused is None:
        raise Refusal(msg.STALE_BUTTON)  # nothing to pause: finished, or gone
    return None


def _resume(ctx: TableContext) -> Answer:
    if not resume(ctx):
        raise Refusal(msg.STALE_BUTTON)  # not paused
    return None
