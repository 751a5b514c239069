"""The bot's own membership in a chat (``my_chat_member`` updates) as the core's pauses.

Telegram tells a bot when it is added to a group, removed from it (``left``: it left or was removed;
``kicked``: banned), restricted (``restricted`` with ``can_send_messages`` false: it may no longer post), and
when a person blocks it (``kicked`` in their private chat) or unblocks it (``member`` again). These updates
come only if the bot asks for them in ``allowed_updates``. What each means for the core
(:mod:`bot.app._pauses`, whose rule is :mod:`bot.table._pause`'s):

* a group the bot can no longer post in: its table is paused (nothing more is sent there);
* a group it can post in again: the table resumes there — or is closed, if it waited too long;
* a person who blocked the bot: the table's group is told once, with a link to unblock it; their solo table
  (in their private chat) is paused like a group's;
* a person who unblocked it: reachable again, their solo table resumes, and they get their hand at once.

A post refused for the same reasons (403 ``bot was kicked``, ``bot was blocked by the user``, 400 ``not
enough rights``) reaches the core through the delivery lanes instead (:mod:`adapters.telegram.transport`).
"""

from __future__ import annotations

import contextlib
import logging

from telegram import ChatMember, ChatMemberRestricted, ChatMemberUpdated, Update
from telegram.ext import ContextTypes

from adapters.telegram.handlers import TelegramHandlers
from adapters.telegram.ids import chat_ref, user_ref
from bot.kernel import ChatRef, OutMessage, UserRef, encode_invite
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

#: Statuses in which the bot may post in a chat (a restricted bot only with ``can_send_messages``).
_POSTING = frozenset({ChatMember.OWNER, ChatMember.ADMINISTRATOR, ChatMember.MEMBER})


def can_post(member: ChatMember) -> bool:
    """Whether the bot may post in the chat, as its membership ``member`` says."""
    if isinstance(member, ChatMemberRestricted):
        return member.is_member and member.can_send_messages
    return member.status in _POSTING


class Membership:
    """Acts on ``my_chat_member`` updates through the handlers' service, sender and surfaces."""

    def __init__(self, handlers: TelegramHandlers) -> None:
        """Tell the core through ``handlers`` (and post through its sender)."""
        self.handlers = handlers

    async def changed(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A ``my_chat_member`` update: the bot's rights in a chat changed (see the module)."""
        change: ChatMemberUpdated | None = update.my_chat_member
        if change is None:
            return
        chat, posting = chat_ref(change.chat), can_post(change.new_chat_member)
        if posting == can_post(change.old_chat_member):
            return  # (a change that leaves the bot as able to post as it was: a new title, an admin right)
        if chat.private:
            user = user_ref(change.from_user)
            await (self.unblocked(user, chat) if posting else self.blocked(user))
        elif posting:
            self.handlers.render(await self.handlers.service.pauses.chat_back(chat))
        else:
            await self.handlers.service.pauses.chat_lost(chat.key)

    async def blocked(self, user: UserRef) -> None:
        """``user`` blocked the bot: marked unreachable, their group told once how to unblock it; their solo
        table paused."""
        with contextlib.suppress(StoreUnavailable):
            await self.handlers.surfaces.set_reachable(user.key, False)
        await self.handlers.service.pauses.chat_lost(user.key)  # (their private chat's key is theirs)
        invitation = await self.handlers.service.pauses.player_blocked(user.key)
        if invitation is None:
            return
        link = self.handlers.deep_link(encode_invite(invitation.invite))
        text, where = invitation.text(link), invitation.chat
        self.handlers.sender.deliver(
            [OutMessage(slot="notice", text=text, chat=where, fresh=True, table=invitation.table)]
        )

    async def unblocked(self, user: UserRef, private: ChatRef) -> None:
        """``user`` unblocked the bot: reachable again, their solo table resumed, their hand sent."""
        with contextlib.suppress(StoreUnavailable):
            await self.handlers.surfaces.set_reachable(user.key, True)
        self.handlers.render(await self.handlers.service.pauses.chat_back(private))
        self.handlers.render(await self.handlers.service.pauses.player_back(user))
