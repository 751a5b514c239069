"""A basic group upgraded to a supergroup, as the fake Bot API server models it.

Telegram upgrades a basic group (``type: "group"``) to a supergroup when an admin asks for it or a group
needs a supergroup's feature (a public link, visible history, more members). The supergroup is a new chat
with a new id (``-100…``); the bot stays a member. What a bot sees, from Telegram's own updates (sample
sequences in issues of bot libraries, e.g. defstudio/telegraph#692, tdlib/telegram-bot-api#266):

* in the old group, a service message with ``migrate_to_chat_id`` (from the user who upgraded it);
* in the supergroup, message 1: a service message with ``migrate_from_chat_id``, sent by
  ``GroupAnonymousBot`` (1087968824) on behalf of the supergroup (``sender_chat``);
* a ``my_chat_member`` update: the bot is now a member of the supergroup (tdlib/telegram-bot-api#266);

each delivered only if the bot's ``allowed_updates`` take it. From then on the old group is deactivated. The
Bot API server (tdlib/telegram-bot-api, ``Client::check_chat_access``) answers a call that needs *write*
access to it — every ``send*`` and ``sendChatAction``, ``deleteMessage``, pinning, changing the chat — with
``400 Bad Request: group chat was upgraded to a supergroup chat`` and ``parameters.migrate_to_chat_id`` (PTB
raises ``telegram.error.ChatMigrated``). A call that needs *edit* access (``editMessageText``,
``editMessageReplyMarkup``) or read access (``getChat``, ``getChatMember``) passes that check: the bot may
still edit the messages it posted there (Telegram's developers: "it should be able to edit the messages",
tdlib/telegram-bot-api#266), and the fake lets it. Nobody can write in the old group any more
(:meth:`FakeTelegram.user_sends` refuses); the buttons of its messages may still be pressed (clients show the
old group's history; whether a press reaches the bot varies by client, so tests decide).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fake_telegram import FakeChat, FakeTelegram, FakeUser

JSON = dict[str, Any]

UPGRADED = "Bad Request: group chat was upgraded to a supergroup chat"
#: Who sends the supergroup's first message on its own behalf (Telegram's anonymous group admin).
ANONYMOUS_ADMIN: JSON = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}

#: Methods that need write access to a chat besides every ``send*`` (Client::check_chat_access callers).
_WRITES = frozenset(
    {
        "deleteMessage",
        "deleteMessages",
        "pinChatMessage",
        "unpinChatMessage",
        "unpinAllChatMessages",
        "setChatTitle",
        "setChatDescription",
        "setChatPhoto",
        "deleteChatPhoto",
        "setChatPermissions",
        "exportChatInviteLink",
        "createChatInviteLink",
    }
)


def needs_write_access(method: str) -> bool:
    """Whether a Bot API method writes to its chat (refused in an upgraded group)."""
    return method.startswith("send") or method in _WRITES


@dataclass
class Migrations:
    """The groups upgraded so far: old id → the supergroup's id."""

    moved: dict[int, int] = field(default_factory=dict)

    def refusal(self, method: str, params: JSON) -> tuple[str, JSON] | None:
        """Telegram's answer to a call that writes to an upgraded group: the description and its
        ``parameters``; ``None`` for any other call."""
        chat_id = params.get("chat_id")
        if not isinstance(chat_id, int) or chat_id not in self.moved or not needs_write_access(method):
            return None
        return UPGRADED, {"migrate_to_chat_id": self.moved[chat_id]}


def migrate_to_supergroup(
    tg: FakeTelegram,
    chat: FakeChat,
    supergroup_id: int,
    *,
    by: FakeUser | None = None,
    service_messages: bool = True,
) -> FakeChat:
    """Upgrade the basic group ``chat`` to a new supergroup ``supergroup_id`` (see the module docstring).

    ``by`` upgrades it (default: a member, else the bot's first user). Without ``service_messages`` no update
    tells the bot (one that was away longer than Telegram keeps updates): it learns from a refused call.
    """
    from .fake_telegram import FakeChat

    if chat.type != "group":
        raise ValueError(f"only a basic group can be upgraded, not a {chat.type} ({chat.id})")
    if chat.id in tg.migrations.moved:
        raise ValueError(f"group {chat.id} was upgraded already, to {tg.migrations.moved[chat.id]}")
    supergroup = FakeChat(
        supergroup_id,
        "supergroup",
        title=chat.title,
        members=set(chat.members),
        admins=set(chat.admins),
        bot_is_member=chat.bot_is_member,
        bot_is_admin=chat.bot_is_admin,
    )
    tg.chats[supergroup_id] = supergroup
    tg.migrations.moved[chat.id] = supergroup_id
    if not service_messages:
        return supergroup
    upgrader = by or next((tg.users[m] for m in sorted(chat.members) if m in tg.users), None)
    sender = upgrader.to_api() if upgrader is not None else ANONYMOUS_ADMIN
    now = int(time.time())
    tg._queue_update(
        "message",
        {
            "message_id": tg.take_message_id(chat),
            "from": sender,
            "chat": chat.to_api(),
            "date": now,
            "migrate_to_chat_id": supergroup_id,
        },
    )
    tg._queue_update(
        "message",
        {
            "message_id": tg.take_message_id(supergroup),
            "from": ANONYMOUS_ADMIN,
            "sender_chat": supergroup.to_api(),
            "chat": supergroup.to_api(),
            "date": now,
            "migrate_from_chat_id": chat.id,
        },
    )
    if chat.bot_is_member:
        tg._queue_update(
            "my_chat_member",
            {
                "chat": supergroup.to_api(),
                "from": sender,
                "date": now,
                "old_chat_member": {"status": "left", "user": tg.bot_user.to_api()},
                "new_chat_member": {"status": "member", "user": tg.bot_user.to_api()},
            },
        )
    return supergroup
