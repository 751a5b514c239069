"""Whom to invite privately from a group: a player the bot cannot write to yet (a seat taken, cards dealt)
is asked in the table's group to open the bot, once per table; someone who asked for the full rules, once
per chat. The invitation's deep link is read back by :meth:`bot.app.Service.accept_invite`."""

from __future__ import annotations

from bot.app._chat_commands import ChatCommands
from bot.app._unit_of_work import TableWork
from bot.kernel import Invitation, Invite, JoinSeat, SendHand, TableStatus

#: Invitations this worker remembers; more forget them all (at worst someone is invited once more).
_INVITED_CAP = 10_000


class Invitations:
    """Invitations from a group, each given once by this worker (a member of :class:`bot.app.Service`)."""

    def __init__(self, tables: TableWork, chats: ChatCommands) -> None:
        """Read tables through ``tables``; a chat's language through ``chats``."""
        self.tables = tables
        self.chats = chats
        self._invited: set[tuple[str, str]] = set()
        """(user, table or ``rules:{chat}``) already invited from a group by this worker."""

    async def invitation(self, user_key: str, table_id: str, *, blocked: bool = False) -> Invitation | None:
        """Whom to invite from the table's group, and to what, when a player cannot be written to privately
        (``blocked``: because they blocked the bot, which the invitation says).

        ``None`` when there is nobody to invite: no such table, a private table, a user not seated, or one
        already invited to this table by this worker (a group is told once, until :meth:`forget`).
        """
        if (user_key, table_id) in self._invited:
            return None
        table = await self.tables.load_table(table_id)
        if table is None or table.private:
            return None
        seat = table.seat_of(user_key)
        if seat is None:
            return None
        self._remember_invited((user_key, table_id))
        invite: Invite = JoinSeat(table_id, seat) if table.status is TableStatus.LOBBY else SendHand(table_id)
        return Invitation(table.chat, table_id, table.seats[seat].name, table.lang, invite, blocked)

    def forget(self, user_key: str) -> None:
        """The person can be written to again (they unblocked the bot): a later failure is told again."""
        self._invited = {entry for entry in self._invited if entry[0] != user_key}

    async def rules_invitation(self, user_key: str, chat: str) -> str | None:
        """The language of a "read the full rules" invitation to post in ``chat`` (once per user and chat)."""
        if (user_key, f"rules:{chat}") in self._invited:
            return None
        self._remember_invited((user_key, f"rules:{chat}"))
        return await self.chats.chat_language(chat)

    def _remember_invited(self, key: tuple[str, str]) -> None:
        if len(self._invited) >= _INVITED_CAP:
            self._invited.clear()  # bounded: at worst someone is invited once more
        self._invited.add(key)
