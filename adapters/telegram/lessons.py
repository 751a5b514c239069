"""``/learn`` on Telegram: the lessons in the private chat with the bot; in a group, a link to it.

A lesson is a conversation with the bot (each step a message with its buttons, pressed like any other
button: :meth:`bot.app._service.Service.press`). Asked in a group, ``/learn`` answers there with a deep link
(``t.me/<bot>?start=learn5``) that opens the private chat and starts the lesson: the bot cannot write first
to someone who never opened it, and a lesson would flood the group.
"""

from __future__ import annotations

import contextlib

from telegram import Update
from telegram.ext import ContextTypes

from adapters.telegram.handlers import TelegramHandlers
from adapters.telegram.ids import chat_ref, user_ref
from bot.app import learn_link_text, lesson_number
from bot.kernel import StartLessons, encode_invite
from bot.lessons import lesson
from bot.store import StoreUnavailable


async def learn(handlers: TelegramHandlers, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/learn [n]``: lesson ``n`` (or where the learner was) privately; a link to it from a group."""
    if not await handlers._admitted(update):  # the handlers' throttle, shared by every command
        return
    assert update.effective_user is not None and update.effective_chat is not None
    chat, user = chat_ref(update.effective_chat), user_ref(update.effective_user)
    number = lesson_number(context.args or [])
    if not chat.private:
        lang = await handlers.service.lessons.learner_language(user)
        wanted = number if isinstance(number, int) and lesson(number) is not None else None
        link = handlers.deep_link(encode_invite(StartLessons(wanted)))
        handlers.say(chat.key, learn_link_text(lang, link))
        return
    with contextlib.suppress(StoreUnavailable):
        await handlers.surfaces.set_reachable(user.key, True)
    await handlers._reply(update, await handlers.service.lessons.learn(chat, user, number))
