"""The Bot API calls behind :class:`bot.delivery._lanes.Delivery`: send, edit, clear the buttons, delete.

Views become Telegram messages here (an inline keyboard for the buttons, a link as a ``url`` button and the
way into the Mini App as a ``web_app`` one; HTML for Markdown views, the 4096 character limit; a view with a
file is a ``sendDocument`` whose caption is its text), and Telegram's failures become the core's typed
delivery errors: "message is not modified" is :class:`~bot.delivery._transport.NotModified`; a message not
found or too old to edit is :class:`~bot.delivery._transport.MessageGone`; 403 (the bot removed from a group,
blocked by a person) and 400 "not enough rights" (forbidden to post) are
:class:`~bot.delivery._transport.Unreachable` (a person who blocked the bot is remembered:
:meth:`TelegramTransport.blocked`); ``RetryAfter`` is :class:`~bot.delivery._transport.RateLimited`;
``ChatMigrated`` (a group upgraded to a supergroup) is :class:`ChatMoved`, a refusal for the lane, once
:attr:`TelegramTransport.on_moved` has moved the chat's table (:mod:`adapters.telegram.moves`).
"""

from __future__ import annotations

import datetime as dtm
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, InputFile
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError
from telegram.ext import ExtBot

from adapters.telegram.formatting import PARSE_MODE, markdown_to_html
from adapters.telegram.ids import PREFIX, telegram_id
from adapters.telegram.mini_app import app_button
from bot.delivery import MessageGone, NotModified, RateLimited, Refused, StillNeeded, Unreachable
from bot.kernel import LruCache, OutMessage

MAX_TEXT = 4096
MAX_CAPTION = 1024
#: People remembered as having blocked the bot at most (the least recent forgotten first: only the notice's
#: wording depends on it).
MAX_BLOCKED_REMEMBERED = 50_000
_T = TypeVar("_T")


class ChatMoved(Refused):
    """Telegram refused a call: the group became the supergroup ``new_chat_id``. For the lane, a refusal (the
    view is dropped); :attr:`TelegramTransport.on_moved` moved the table and sent what it must there."""

    def __init__(self, new_chat_id: int, reason: str) -> None:
        super().__init__(reason)
        self.new_chat_id = new_chat_id


def markup_of(
    message: OutMessage, chat_id: int = 0, bot_username: str = "", app_name: str | None = None
) -> InlineKeyboardMarkup | None:
    """The inline keyboard of a view in chat ``chat_id`` (``None`` when it has no buttons); a way into the
    Mini App as the chat allows it (:func:`adapters.telegram.mini_app.app_button`: the app of
    ``bot_username`` named ``app_name`` in a group)."""
    rows = []
    for row in message.buttons:
        shown = []
        for button in row:
            if button.kind == "web_app":
                inline = app_button(button.label, button.url, message.table, chat_id, bot_username, app_name)
            elif button.kind == "link":
                inline = InlineKeyboardButton(button.label, url=button.url)
            else:
                inline = InlineKeyboardButton(button.label, callback_data=button.token)
            if inline is not None:
                shown.append(inline)
        if shown:
            rows.append(shown)
    return InlineKeyboardMarkup(rows) if rows else None


def text_of(message: OutMessage) -> tuple[str, str | None]:
    """The text to send for a view and its ``parse_mode`` (HTML for Markdown views, none for plain text)."""
    # Cut before converting: the visible text is never longer than the source, so it stays within the limit.
    text = message.text[:MAX_TEXT]
    if message.markdown:
        text = markdown_to_html(text)
    return (text or "…"), (PARSE_MODE if message.markdown else None)


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB 22 deprecates the int form; both forms are handled here
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


async def _call(call: Callable[[], Awaitable[_T]]) -> _T:
    """Run one Bot API call, its failures as the core's delivery errors."""
    try:
        return await call()
    except RetryAfter as exc:
        raise RateLimited(_seconds(exc)) from exc
    except ChatMigrated as exc:
        raise ChatMoved(exc.new_chat_id, str(exc)) from exc
    except Forbidden as exc:
        raise Unreachable(str(exc)) from exc
    except BadRequest as exc:
        reason = str(exc).lower()
        if "not enough rights" in reason:  # a member the group's admins forbade to post (or send that)
            raise Unreachable(str(exc)) from exc
        if "not modified" in reason:
            raise NotModified(str(exc)) from exc
        if "not found" in reason or "can't be edited" in reason:
            raise MessageGone(str(exc)) from exc
        raise Refused(str(exc)) from exc
    except TelegramError as exc:
        raise Refused(str(exc)) from exc


class TelegramTransport:
    """Sends, edits and clears the buttons of messages through one bot."""

    def __init__(self, bot: ExtBot[Any], *, app_name: str | None = None) -> None:
        """Call Telegram through ``bot`` (PTB's, with its rate limiter when the application has one); groups
        link to its Mini App ``app_name`` (``TELEGRAM_MINIAPP_NAME``), if any."""
        self.bot = bot
        self.app_name = app_name
        self.on_moved: Callable[[int, int, OutMessage], Awaitable[None]] | None = None
        """Told of a post or edit refused because the chat moved (old id, new id, the view), before the call
        fails with :class:`ChatMoved`."""
        self._blocked: LruCache[str, bool] = LruCache(MAX_BLOCKED_REMEMBERED)

    async def _moved(self, chat: str, moved: ChatMoved, message: OutMessage) -> None:
        """A call for ``chat`` was refused because it moved: tell :attr:`on_moved` (the call still fails)."""
        if self.on_moved is not None:
            await self.on_moved(self._id(chat), moved.new_chat_id, message)

    def blocked(self, user_key: str) -> bool:
        """Whether Telegram refused the last post to that person because they blocked the bot."""
        return user_key in self._blocked

    def _refused(self, chat: str, refusal: Unreachable | None) -> None:
        """Remember whether ``chat`` (a person) refused a post because they blocked the bot."""
        if refusal is not None and "blocked by the user" in str(refusal):
            self._blocked.put(chat, True)
        else:
            self._blocked.pop(chat)

    def owns(self, chat: str) -> bool:
        """Whether ``chat`` is a Telegram key (``tg:<id>``)."""
        return chat.startswith(PREFIX) and telegram_id(chat) is not None

    def _markup(self, chat: str, message: OutMessage) -> InlineKeyboardMarkup | None:
        """A view's inline keyboard in ``chat``."""
        try:
            username = self.bot.username or ""
        except RuntimeError:  # not known before getMe answered (then no group links to the Mini App)
            username = ""
        return markup_of(message, self._id(chat), username, self.app_name)

    @staticmethod
    def _id(chat: str) -> int:
        chat_id = telegram_id(chat)
        if chat_id is None:
            raise Refused(f"not a Telegram chat: {chat!r}")
        return chat_id

    async def send(self, chat: str, message: OutMessage) -> str:
        """Post a new message (``sendDocument`` for a view with a file, its text the caption); its id."""
        try:
            sent = await self._send(chat, message)
        except ChatMoved as moved:
            await self._moved(chat, moved, message)
            raise
        except Unreachable as refusal:
            self._refused(chat, refusal)
            raise
        self._refused(chat, None)
        return sent

    async def _send(self, chat: str, message: OutMessage) -> str:
        if message.document is not None:
            return await self._send_document(chat, message, message.document)
        text, parse_mode = text_of(message)
        sent = await _call(
            lambda: self.bot.send_message(
                self._id(chat), text, reply_markup=self._markup(chat, message), parse_mode=parse_mode
            )
        )
        return str(sent.message_id)

    async def _send_document(self, chat: str, message: OutMessage, document: tuple[str, str]) -> str:
        name, content = document
        upload = InputFile(content.encode("utf-8"), filename=name)
        caption = message.text[:MAX_CAPTION] or None  # plain text: no markup to cut in half
        sent = await _call(
            lambda: self.bot.send_document(
                self._id(chat), upload, caption=caption, reply_markup=self._markup(chat, message)
            )
        )
        return str(sent.message_id)

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        """Make a message show a view's text and buttons (``check``: as for :meth:`clear_buttons`)."""
        text, parse_mode = text_of(message)
        check = check if self.bot.rate_limiter is not None else None  # (PTB refuses one without a limiter)
        try:
            await _call(
                lambda: self.bot.edit_message_text(
                    text,
                    chat_id=self._id(chat),
                    message_id=int(message_id),
                    reply_markup=self._markup(chat, message),
                    parse_mode=parse_mode,
                    rate_limit_args=check,
                )
            )
        except ChatMoved as moved:  # (Telegram lets a bot edit its messages in an upgraded group: in case)
            await self._moved(chat, moved, message)
            raise

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        """Remove a message's inline keyboard; ``check`` goes to the rate limiter, which asks it once
        the call's turn came (:class:`~adapters.telegram.rate_limit.ChatRateLimiter`)."""
        chat_id, message = self._id(chat), int(message_id)
        check = check if self.bot.rate_limiter is not None else None  # (PTB refuses one without a limiter)
        await _call(
            lambda: self.bot.edit_message_reply_markup(
                chat_id=chat_id, message_id=message, rate_limit_args=check
            )
        )

    async def delete(self, chat: str, message_id: str) -> None:
        """Delete a message of the bot (``deleteMessage``; "message to delete not found" is gone)."""
        await _call(lambda: self.bot.delete_message(self._id(chat), int(message_id)))
