"""Telegram identities as the bot core's platform-neutral keys."""

from __future__ import annotations

from telegram import Chat, User

from bot.kernel import ChatRef, UserRef

PREFIX = "tg:"


def user_ref(user: User) -> UserRef:
    """A Telegram user as a :class:`UserRef` (``tg:<id>``, display name, client language)."""
    name = user.first_name or user.username or str(user.id)
    return UserRef(f"{PREFIX}{user.id}", name[:32], user.language_code)


def chat_ref(chat: Chat) -> ChatRef:
    """A Telegram chat as a :class:`ChatRef` (``tg:<id>``; private chats are solo tables)."""
    return ChatRef(f"{PREFIX}{chat.id}", private=chat.type == Chat.PRIVATE, title=chat.title or "Mus")


def telegram_id(key: str) -> int | None:
    """The Telegram id inside a ``tg:`` key, or ``None`` for another platform's key."""
    if not key.startswith(PREFIX):
        return None
    try:
        return int(key[len(PREFIX) :])
    except ValueError:
        return None
