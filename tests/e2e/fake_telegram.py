"""A fake Telegram Bot API server for end-to-end tests (aiohttp on 127.0.0.1).

``FakeTelegram`` answers ``/bot{token}/{method}`` like api.telegram.org does for the bot under test, keeps
chats, users, messages and callback queries the way Telegram would, hands out updates through ``getUpdates``
long polling, and records every request (accepted or rejected) for the tests to inspect::

    async with FakeTelegram(token="123:ABC", bot_username="musbot_test") as tg:
        app = ApplicationBuilder().token("123:ABC").base_url(tg.base_url).build()
        ane = tg.add_user("Ane")
        group = tg.add_group("Mus")
        tg.user_sends(ane, group, "/newgame")
        await tg.wait_for(lambda: tg.group_texts(group))
        assert tg.rejected() == []

Every request is checked against the Bot API spec data in ``tests/data/telegram-bot-api/api.json``:

* the token must match (else 401 ``Unauthorized``); the method must exist (else 404 ``Not Found``; method
  names are case-insensitive, as on Telegram);
* every required parameter must be present (400 ``<field> is required``), including the conditional ones the
  spec words as "Required if X is not specified" (e.g. ``chat_id``/``message_id`` of the ``editMessage*``
  methods unless ``inline_message_id``); a parameter the method does not take is a 400;
* scalar types (Integer, Float, Boolean, String) are checked on the form values; fields of any other type are
  JSON-decoded (only those: a text starting with ``[`` stays text) and checked recursively against the spec's
  object types (required fields, scalar types, arrays, unions, abstract types by their discriminator).

Flood limits, when the server is made with ``limits=TelegramLimits(...)``: a group's new messages per window
and the bot's calls per second, answered ``429`` with ``retry_after`` as Telegram does
(:mod:`e2e.fake_telegram_limits`); :meth:`FakeTelegram.limited` lists those calls, which
:meth:`FakeTelegram.rejected` leaves out unless asked.

A basic group upgraded to a supergroup (:meth:`FakeTelegram.migrate_to_supergroup`, modelled in
:mod:`e2e.fake_telegram_migration`): a new chat, both service messages as updates, and every call that writes
to the old id answered ``400`` with ``parameters.migrate_to_chat_id``.

Limits enforced (the numbers come from the spec's descriptions where it states them):

* every String field whose description says "A-B characters" / "A-B bytes" — anywhere in a method or a
  nested object — is length-checked: characters are code points (``len(str)``), bytes are UTF-8 bytes; for
  "after entities parsing" fields the text is first parsed with its ``parse_mode`` (HTML, MarkdownV2,
  Markdown — malformed markup is a 400 ``can't parse entities``) and trimmed of surrounding whitespace as
  Telegram does. Notably: ``sendMessage``/``editMessageText`` ``text`` 1–4096 characters
  (``message text is empty`` / ``message is too long``), ``InlineKeyboardButton.callback_data`` 1–64 bytes
  (``BUTTON_DATA_INVALID``), ``answerCallbackQuery.text`` 0–200 characters, ``BotCommand.command`` 1–32
  characters, ``BotCommand.description`` 1–256 characters, ``ReplyParameters.quote`` 0–1024 characters,
  ``setWebhook.secret_token`` 1–256 characters;
* every Integer field whose description says "Values between A-B" (``getUpdates.limit`` 1–100);
* arrays whose description says "At most N ... can be specified" (``setMyCommands.commands`` ≤ 100);
* ``BotCommand.command`` only ``[a-z0-9_]``;
* ``InlineKeyboardButton``: non-empty ``text`` and exactly one action field (``callback_data``, ``url``, …);
  a ``url`` must be an HTTP(S) or ``tg://`` address, a ``web_app`` an HTTPS one (``BUTTON_URL_INVALID``), and
  a ``web_app`` button is refused outside private chats (``BUTTON_TYPE_INVALID``, as Telegram allows them
  only there);
* ``answerCallbackQuery.url`` must be a ``t.me/<this bot>?start=<payload>`` deep link with the payload
  ``[A-Za-z0-9_-]{1,64}`` (the only kind a bot without a game may pass);
* ``setWebhook.url`` must be HTTPS (or empty).

State kept like Telegram: users who started / blocked the bot (``bot can't initiate conversation with a user``
/ ``bot was blocked by the user``), the bot's membership of each group (removed: ``bot was kicked from the
group chat`` / ``bot is not a member of the supergroup chat``; restricted: ``not enough rights`` on sends),
each change told by a ``my_chat_member`` update as Telegram does (``remove_bot_from``, ``add_bot_back``,
``restrict_bot``, ``user_blocks_bot``, ``user_unblocks_bot``), chats and per-chat message ids, the current
text and inline keyboard of every message (``message to edit not found``, ``message is not modified``,
``message can't be edited``, ``message to delete not found``), callback queries (``query is too old ... or
query ID is invalid`` when unknown, already answered or older than ``callback_timeout``), the bot's command
lists per scope and language, and the webhook (``getUpdates`` is a 409 while one is set). Concurrent
``getUpdates`` calls terminate the older one with a 409 ``Conflict`` unless its client has gone away (a long
poll whose client disconnects is cancelled and recorded as ``Call.cancelled``, not as rejected). As on
Telegram, an ``editMessageText`` without ``reply_markup`` removes the inline keyboard, and an empty inline
keyboard is no keyboard.

Implemented methods: getMe, getUpdates, setWebhook, deleteWebhook, getWebhookInfo, sendMessage, sendDocument
(a multipart upload, whose content is kept: ``FakeTelegram.documents``; a ``file_id`` or URL string is refused
as ``wrong file identifier``), editMessageText, editMessageReplyMarkup, deleteMessage, deleteMessages,
answerCallbackQuery, setMyCommands, getMyCommands, deleteMyCommands, getChat, getChatMember, sendChatAction,
logOut, close. Any other spec method that returns only a Boolean is validated and answered ``true`` (no
state); the rest answer 501 and count as rejected.

Test modules in this package import it relatively (``from .fake_telegram import FakeTelegram``): ``tests``
is not a package, so pytest names this module ``e2e.fake_telegram``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from aiohttp import web

from .fake_telegram_limits import FloodControl, TelegramLimits
from .fake_telegram_migration import Migrations, migrate_to_supergroup

__all__ = [
    "ApiError",
    "ApiSpec",
    "Call",
    "CallbackRecord",
    "FakeChat",
    "FakeTelegram",
    "FakeUser",
    "MessageVersion",
    "StoredMessage",
    "Upload",
    "parse_formatted_text",
]

JSON = dict[str, Any]
_T = TypeVar("_T")

SPEC_PATH = Path(__file__).resolve().parents[1] / "data" / "telegram-bot-api" / "api.json"

MESSAGE_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are exactly the "
    "same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
BLOCKED = "Forbidden: bot was blocked by the user"
KICKED = "Forbidden: bot was kicked from the group chat"
NOT_ENOUGH_RIGHTS = "Bad Request: not enough rights to send text messages to the chat"
CHAT_NOT_FOUND = "Bad Request: chat not found"
POLL_CONFLICT = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)
WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)

_SCALARS = frozenset({"String", "Integer", "Boolean", "Float"})
_DEFAULT_ALLOWED_UPDATES = frozenset(
    {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
        "guest_message",
        "inline_query",
        "chosen_inline_result",
        "callback_query",
        "shipping_query",
        "pre_checkout_query",
        "purchased_paid_media",
        "poll",
        "poll_answer",
        "my_chat_member",
        "chat_join_request",
        "chat_boost",
        "removed_chat_boost",
        "managed_bot",
    }
)  # everything except chat_member, message_reaction and message_reaction_count, as documented
#: A restricted member's rights besides ``can_send_messages`` (ChatMemberRestricted, all required).
_RESTRICTED_RIGHTS = (
    "can_send_audios",
    "can_send_documents",
    "can_send_photos",
    "can_send_videos",
    "can_send_video_notes",
    "can_send_voice_notes",
    "can_send_polls",
    "can_send_other_messages",
    "can_add_web_page_previews",
    "can_react_to_messages",
    "can_edit_tag",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
)
_BUTTON_COSMETIC_FIELDS = frozenset({"text", "icon_custom_emoji_id", "style"})
_DEEP_LINK_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")
_BOT_COMMAND = re.compile(r"[a-z0-9_]{1,32}")
_INT_RE = re.compile(r"[+-]?\d+")
_FLOAT_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_COMMAND_IN_TEXT = re.compile(r"(?<![^\s])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,64})?")


class ApiError(Exception):
    """A Bot API error answer: HTTP status, Telegram's description, optional ``parameters``."""

    def __init__(
        self, status: int, description: str, *, parameters: JSON | None = None, detail: str | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters
        self.detail = detail
        self.injected = False
        self.limited = False

    def payload(self) -> JSON:
        """The JSON body Telegram would answer with."""
        body: JSON = {"ok": False, "error_code": self.status, "description": self.description}
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def _bad(description: str, detail: str | None = None) -> ApiError:
    if not description.startswith("Bad Request: "):
        description = "Bad Request: " + description
    return ApiError(400, description, detail=detail)


# --------------------------------------------------------------------------------------------------------
# Formatted text: HTML, MarkdownV2 and Markdown to plain text + entities (UTF-16 offsets), like Telegram.
# --------------------------------------------------------------------------------------------------------


def _u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(src: str, index: int) -> int:
    return len(src[:index].encode("utf-8"))


def _entities_error(message: str) -> ApiError:
    return _bad(f"can't parse entities: {message}")


class _TextBuilder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.u16 = 0
        self.entities: list[JSON] = []

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.u16 += _u16(text)

    def entity(self, kind: str, start: int, **extra: Any) -> None:
        length = self.u16 - start
        if length > 0:
            self.entities.append({"type": kind, "offset": start, "length": length, **extra})

    def result(self) -> tuple[str, list[JSON]]:
        entities = sorted(self.entities, key=lambda e: (e["offset"], -e["length"]))
        return "".join(self.parts), entities


_HTML_TAGS: dict[str, str] = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
    "tg-time": "date_time",
}
_HTML_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot);|#(\d{1,7});|#[xX]([0-9a-fA-F]{1,6});)")
_HTML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_ATTR_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_END_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)?\s*>")


def _html_unescape(value: str) -> str:
    def repl(m: re.Match[str]) -> str:
        if m.group(1):
            return _HTML_NAMED[m.group(1)]
        code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
        return chr(code) if 0 < code < 0x110000 else m.group(0)

    return _HTML_ENTITY.sub(repl, value)


def _parse_html(src: str) -> tuple[str, list[JSON]]:
    out = _TextBuilder()
    stack: list[tuple[str, int, dict[str, str]]] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "&":
            m = _HTML_ENTITY.match(src, i)
            if m:
                out.add(_html_unescape(m.group(0)))
                i = m.end()
                continue
            out.add("&")
            i += 1
            continue
        if c != "<":
            out.add(c)
            i += 1
            continue
        pos = _byte_offset(src, i)
        if src.startswith("</", i):
            end = _END_TAG.match(src, i)
            if end is None:
                raise _entities_error(f"Unclosed end tag at byte offset {pos}")
            if not stack:
                raise _entities_error(f"Unexpected end tag at byte offset {pos}")
            tag, start, open_attrs = stack.pop()
            name = (end.group(1) or "").lower()
            if name and name != tag:
                raise _entities_error(
                    f'Unmatched end tag at byte offset {pos}, expected "</{tag}>", found "</{name}>"'
                )
            _close_html_tag(out, tag, start, open_attrs)
            i = end.end()
            continue
        m = _TAG_NAME.match(src, i + 1)
        name = m.group(0).lower() if m else ""
        if m is None or name not in _HTML_TAGS:
            raise _entities_error(f'Unsupported start tag "{name}" at byte offset {pos}')
        j = m.end()
        attrs: dict[str, str] = {}
        while True:
            while j < n and src[j].isspace():
                j += 1
            if j >= n:
                raise _entities_error(f"Unclosed start tag at byte offset {pos}")
            if src[j] == ">":
                j += 1
                break
            am = _ATTR_NAME.match(src, j)
            if am is None:
                raise _entities_error(f'Empty attribute name in the tag "{name}" at byte offset {pos}')
            attr = am.group(0).lower()
            j = am.end()
            while j < n and src[j].isspace():
                j += 1
            value = ""
            if j < n and src[j] == "=":
                j += 1
                while j < n and src[j].isspace():
                    j += 1
                if j < n and src[j] in "\"'":
                    close = src.find(src[j], j + 1)
                    if close < 0:
                        raise _entities_error(f"Unclosed start tag at byte offset {pos}")
                    value = _html_unescape(src[j + 1 : close])
                    j = close + 1
                else:
                    k = j
                    while k < n and not src[k].isspace() and src[k] != ">":
                        k += 1
                    value = _html_unescape(src[j:k])
                    j = k
            attrs[attr] = value
        if name == "span" and attrs.get("class") != "tg-spoiler":
            raise _entities_error(f'Tag "span" must have class "tg-spoiler" at byte offset {pos}')
        stack.append((name, out.u16, attrs))
        i = j
    if stack:
        raise _entities_error(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return out.result()


def _close_html_tag(out: _TextBuilder, tag: str, start: int, attrs: dict[str, str]) -> None:
    kind = _HTML_TAGS[tag]
    if kind == "text_link":
        href = attrs.get("href", "")
        user = re.fullmatch(r"tg://user\?id=(\d+)", href)
        if user:
            out.entity(
                "text_mention", start, user={"id": int(user.group(1)), "is_bot": False, "first_name": ""}
            )
        elif href:
            out.entity("text_link", start, url=href)
    elif kind == "blockquote":
        out.entity("expandable_blockquote" if "expandable" in attrs else "blockquote", start)
    elif kind == "custom_emoji":
        out.entity("custom_emoji", start, custom_emoji_id=attrs.get("emoji-id", ""))
    elif kind == "date_time":
        unix = attrs.get("unix", "0")
        extra: JSON = {"unix_time": int(unix) if _INT_RE.fullmatch(unix) else 0}
        if attrs.get("format"):
            extra["date_time_format"] = attrs["format"]
        out.entity("date_time", start, **extra)
    elif kind == "code" and attrs.get("class", "").startswith("language-"):
        out.entity("pre", start, language=attrs["class"][len("language-") :])
    elif kind == "pre":
        if not any(e["type"] == "pre" and e["offset"] == start for e in out.entities):
            out.entity("pre", start)
    else:
        out.entity(kind, start)


_MDV2_RESERVED = frozenset("_*[]()~`>#+-=|{}.!")
_MDV2_NAMES = {
    "bold": "Bold",
    "italic": "Italic",
    "underline": "Underline",
    "strikethrough": "Strikethrough",
    "spoiler": "Spoiler",
    "code": "Code",
    "pre": "Pre",
    "text_link": "TextUrl",
    "custom_emoji": "CustomEmoji",
}


def _parse_markdown_v2(src: str) -> tuple[str, list[JSON]]:
    out = _TextBuilder()
    stack: list[tuple[str, int, int, JSON]] = []  # kind, u16 start, byte offset, extra
    quote_start: int | None = None
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        top = stack[-1][0] if stack else None
        if c == "\\" and i + 1 < n and 0 < ord(src[i + 1]) <= 126:
            out.add(src[i + 1])
            i += 2
            continue
        if top in ("code", "pre"):
            if top == "pre" and src.startswith("```", i):
                _, start, _, extra = stack.pop()
                out.entity("pre", start, **extra)
                i += 3
            elif top == "code" and c == "`":
                _, start, _, _ = stack.pop()
                out.entity("code", start)
                i += 1
            else:
                out.add(c)
                i += 1
            continue
        at_line_start = i == 0 or src[i - 1] == "\n"
        if c == "\n" and quote_start is not None and not src.startswith(">", i + 1):
            out.entity("blockquote", quote_start)
            quote_start = None
        if c == ">" and at_line_start:
            if quote_start is None:
                quote_start = out.u16
            i += 1
            continue
        pos = _byte_offset(src, i)
        if c == "`":
            if src.startswith("```", i):
                j = i + 3
                newline = src.find("\n", j)
                language = ""
                if newline >= 0 and src[j:newline].strip() and not any(ch.isspace() for ch in src[j:newline]):
                    language = src[j:newline]
                    j = newline + 1
                elif newline == j:
                    j += 1
                stack.append(("pre", out.u16, pos, {"language": language} if language else {}))
                i = j
            else:
                stack.append(("code", out.u16, pos, {}))
                i += 1
            continue
        kind: str | None = None
        width = 1
        if c == "*":
            kind = "bold"
        elif c == "~":
            kind = "strikethrough"
        elif c == "_":
            if src.startswith("__", i) and top != "italic":
                kind, width = "underline", 2
            else:
                kind = "italic"
        elif c == "|" and src.startswith("||", i):
            kind, width = "spoiler", 2
        if kind is not None:
            if top == kind:
                _, start, _, extra = stack.pop()
                out.entity(kind, start, **extra)
            elif any(s[0] == kind for s in stack):
                raise _entities_error(f"Can't find end of {_MDV2_NAMES[kind]} entity at byte offset {pos}")
            else:
                stack.append((kind, out.u16, pos, {}))
            i += width
            continue
        if c == "[" or (c == "!" and src.startswith("![", i)):
            link_kind = "custom_emoji" if c == "!" else "text_link"
            stack.append((link_kind, out.u16, pos, {}))
            i += 2 if c == "!" else 1
            continue
        if c == "]" and top in ("text_link", "custom_emoji"):
            link_kind, start, start_pos, _ = stack.pop()
            if not src.startswith("(", i + 1):
                raise _entities_error(f"Can't find end of a URL at byte offset {_byte_offset(src, i)}")
            j = i + 2
            url_parts: list[str] = []
            while j < n and src[j] != ")":
                if src[j] == "\\" and j + 1 < n:
                    url_parts.append(src[j + 1])
                    j += 2
                else:
                    url_parts.append(src[j])
                    j += 1
            if j >= n:
                raise _entities_error(f"Can't find end of a URL at byte offset {_byte_offset(src, i)}")
            url = "".join(url_parts)
            if link_kind == "custom_emoji":
                emoji = re.fullmatch(r"tg://emoji\?id=(\d+)", url)
                if emoji is None:
                    raise _entities_error(
                        f"Custom emoji URL must have an emoji identifier at byte offset {start_pos}"
                    )
                out.entity("custom_emoji", start, custom_emoji_id=emoji.group(1))
            else:
                user = re.fullmatch(r"tg://user\?id=(\d+)", url)
                if user:
                    out.entity(
                        "text_mention",
                        start,
                        user={"id": int(user.group(1)), "is_bot": False, "first_name": ""},
                    )
                else:
                    out.entity("text_link", start, url=url)
            i = j + 1
            continue
        if c in _MDV2_RESERVED:
            raise _entities_error(f"Character '{c}' is reserved and must be escaped with the preceding '\\'")
        out.add(c)
        i += 1
    if stack:
        kind, _, pos, _ = stack[-1]
        raise _entities_error(f"Can't find end of {_MDV2_NAMES.get(kind, kind)} entity at byte offset {pos}")
    if quote_start is not None:
        out.entity("blockquote", quote_start)
    return out.result()


def _parse_markdown(src: str) -> tuple[str, list[JSON]]:
    out = _TextBuilder()
    i, n = 0, len(src)
    kinds = {"*": "bold", "_": "italic", "`": "code"}
    while i < n:
        c = src[i]
        if c == "\\" and i + 1 < n and src[i + 1] in "_*`[":
            out.add(src[i + 1])
            i += 2
            continue
        if c not in "_*`[":
            out.add(c)
            i += 1
            continue
        pos = _byte_offset(src, i)
        start = out.u16
        if c == "[":
            close = src.find("]", i + 1)
            if close < 0 or not src.startswith("(", close + 1) or src.find(")", close + 2) < 0:
                raise _entities_error(f"Can't find end of the entity starting at byte offset {pos}")
            end = src.find(")", close + 2)
            out.add(src[i + 1 : close])
            out.entity("text_link", start, url=src[close + 2 : end])
            i = end + 1
        elif src.startswith("```", i):
            end = src.find("```", i + 3)
            if end < 0:
                raise _entities_error(f"Can't find end of the entity starting at byte offset {pos}")
            body = src[i + 3 : end]
            language = ""
            if "\n" in body and body.split("\n", 1)[0].strip():
                language, body = body.split("\n", 1)
            elif body.startswith("\n"):
                body = body[1:]
            out.add(body)
            out.entity("pre", start, **({"language": language.strip()} if language else {}))
            i = end + 3
        else:
            end = src.find(c, i + 1)
            if end < 0:
                raise _entities_error(f"Can't find end of the entity starting at byte offset {pos}")
            out.add(src[i + 1 : end])
            out.entity(kinds[c], start)
            i = end + 1
    return out.result()


def _trim(text: str, entities: list[JSON]) -> tuple[str, list[JSON]]:
    stripped = text.strip()
    if stripped == text:
        return text, entities
    lead = _u16(text[: len(text) - len(text.lstrip())])
    total = _u16(stripped)
    trimmed: list[JSON] = []
    for e in entities:
        start = max(e["offset"] - lead, 0)
        end = min(e["offset"] + e["length"] - lead, total)
        if end > start:
            trimmed.append({**e, "offset": start, "length": end - start})
    return stripped, trimmed


def parse_formatted_text(
    text: str, parse_mode: str | None = None, entities: Sequence[JSON] | None = None
) -> tuple[str, list[JSON]]:
    """Telegram's view of a message text: the plain text (trimmed) and its entities (UTF-16 offsets).

    Raises ``ApiError`` (400 ``can't parse entities: ...``) for malformed HTML/Markdown, an unknown parse
    mode, or explicit ``entities`` that do not fit the text.
    """
    if entities:
        length = _u16(text)
        for e in entities:
            offset, size = e.get("offset", 0), e.get("length", 0)
            if offset < 0 or size < 0 or offset + size > length:
                raise _entities_error(f"entity {e.get('type')} at offset {offset} ends beyond the text")
        return _trim(text, [dict(e) for e in entities])
    if not parse_mode:
        return _trim(text, [])
    mode = parse_mode.lower()
    if mode == "html":
        return _trim(*_parse_html(text))
    if mode == "markdownv2":
        return _trim(*_parse_markdown_v2(text))
    if mode == "markdown":
        return _trim(*_parse_markdown(text))
    raise _bad(f"unsupported parse_mode {parse_mode!r}")


# --------------------------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Length:
    lo: int
    hi: int
    unit: str  # "characters" | "bytes"
    after_entities: bool


@dataclass(frozen=True)
class _Field:
    name: str
    types: tuple[str, ...]
    required: bool
    description: str
    length: _Length | None
    int_range: tuple[int, int] | None
    max_items: int | None
    required_unless: tuple[str, ...]


@dataclass(frozen=True)
class _Method:
    name: str
    fields: dict[str, _Field]
    returns: tuple[str, ...]


@dataclass(frozen=True)
class _Type:
    name: str
    fields: dict[str, _Field]
    subtypes: tuple[str, ...]
    discriminator: tuple[str, str] | None


_LENGTH_RE = re.compile(r"(\d+)[-–](\d+) (characters|bytes)( after entit(?:y|ies) parsing)?")
_RANGE_RE = re.compile(r"[Vv]alues? between (\d+)[-–](\d+)")
_MAX_ITEMS_RE = re.compile(r"At most (\d+) \w+ can be specified")
_REQUIRED_UNLESS_RE = re.compile(r"[Rr]equired if ([a-z_, ]+?) (?:is not|are not|isn't|aren't) specified")
_DISCRIMINATOR_RE = re.compile(r"(?:must be|always)\s+[“\"]?([a-z_]+)[”\"]?")

# Telegram's own wording for some limits; other limits get a generic description.
_LIMIT_MESSAGES: dict[tuple[str, str], tuple[str, str]] = {
    ("sendMessage", "text"): ("Bad Request: message text is empty", "Bad Request: message is too long"),
    ("editMessageText", "text"): ("Bad Request: message text is empty", "Bad Request: message is too long"),
    ("InlineKeyboardButton", "callback_data"): (
        "Bad Request: BUTTON_DATA_INVALID",
        "Bad Request: BUTTON_DATA_INVALID",
    ),
    ("BotCommand", "command"): ("Bad Request: BOT_COMMAND_INVALID", "Bad Request: BOT_COMMAND_INVALID"),
    ("BotCommand", "description"): (
        "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID",
        "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID",
    ),
    ("answerCallbackQuery", "text"): ("Bad Request: MESSAGE_TOO_LONG", "Bad Request: MESSAGE_TOO_LONG"),
}


def _make_field(raw: JSON, names: Iterable[str]) -> _Field:
    desc: str = raw.get("description", "")
    length = None
    m = _LENGTH_RE.search(desc)
    if m and "String" in raw["types"]:
        length = _Length(int(m.group(1)), int(m.group(2)), m.group(3), bool(m.group(4)))
    int_range = None
    r = _RANGE_RE.search(desc)
    if r and "Integer" in raw["types"]:
        int_range = (int(r.group(1)), int(r.group(2)))
    max_items = None
    mi = _MAX_ITEMS_RE.search(desc)
    if mi and any(t.startswith("Array of") for t in raw["types"]):
        max_items = int(mi.group(1))
    unless: tuple[str, ...] = ()
    ru = _REQUIRED_UNLESS_RE.search(desc)
    if ru and not raw.get("required"):
        known = set(names)
        unless = tuple(w for w in re.findall(r"[a-z_]+", ru.group(1)) if w in known)
    return _Field(
        name=raw["name"],
        types=tuple(raw["types"]),
        required=bool(raw.get("required")),
        description=desc,
        length=length,
        int_range=int_range,
        max_items=max_items,
        required_unless=unless,
    )


class ApiSpec:
    """The Bot API spec (``api.json``) with the checks FakeTelegram applies to requests."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.version: str = str(data.get("version", ""))
        self.methods: dict[str, _Method] = {}
        self._by_lower: dict[str, str] = {}
        for name, raw in data["methods"].items():
            fields_raw = raw.get("fields", [])
            names = [f["name"] for f in fields_raw]
            self.methods[name] = _Method(
                name=name,
                fields={f["name"]: _make_field(f, names) for f in fields_raw},
                returns=tuple(raw.get("returns", [])),
            )
            self._by_lower[name.lower()] = name
        self.types: dict[str, _Type] = {}
        for name, raw in data["types"].items():
            fields_raw = raw.get("fields", [])
            names = [f["name"] for f in fields_raw]
            fields = {f["name"]: _make_field(f, names) for f in fields_raw}
            disc = None
            for f in fields.values():
                if f.required and f.types == ("String",) and f.name in ("type", "status", "source"):
                    dm = _DISCRIMINATOR_RE.search(f.description)
                    if dm:
                        disc = (f.name, dm.group(1))
                        break
            self.types[name] = _Type(name, fields, tuple(raw.get("subtypes", []) or []), disc)

    @classmethod
    @functools.cache
    def load(cls, path: Path = SPEC_PATH) -> ApiSpec:
        """Load (once per path) the spec data file."""
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def method(self, name: str) -> _Method | None:
        """The method named ``name`` (case-insensitive, as Telegram treats method names), if any."""
        canonical = self._by_lower.get(name.lower())
        return self.methods[canonical] if canonical else None

    def enforced_limits(self) -> list[str]:
        """Human-readable list of the length/range limits parsed from the spec descriptions."""
        limits: list[str] = []
        for owner, fields in [(m.name, m.fields) for m in self.methods.values()] + [
            (t.name, t.fields) for t in self.types.values()
        ]:
            for f in fields.values():
                if f.length:
                    extra = " after entities parsing" if f.length.after_entities else ""
                    limits.append(f"{owner}.{f.name}: {f.length.lo}-{f.length.hi} {f.length.unit}{extra}")
                if f.int_range:
                    limits.append(f"{owner}.{f.name}: {f.int_range[0]}-{f.int_range[1]}")
                if f.max_items:
                    limits.append(f"{owner}.{f.name}: at most {f.max_items} items")
        return limits

    # -- request parameters ----------------------------------------------------------------------------

    def validate_params(self, method: _Method, raw: Mapping[str, Any]) -> JSON:
        """Coerce and check the parameters of a request; raises ``ApiError`` (400) on the first problem."""
        attached = {
            v[len("attach://") :] for v in raw.values() if isinstance(v, str) and v.startswith("attach://")
        }
        params: JSON = {}
        for name, value in raw.items():
            spec_field = method.fields.get(name)
            if spec_field is None:
                if isinstance(value, Upload) and name in attached:
                    params[name] = value
                    continue
                raise _bad(
                    f'parameter "{name}" is not accepted by method {method.name}',
                    detail=f"{method.name} takes {sorted(method.fields)}",
                )
            params[name] = self._coerce(value, spec_field, name)
        for spec_field in method.fields.values():
            if spec_field.name in params:
                continue
            if spec_field.required or (
                spec_field.required_unless and not all(n in params for n in spec_field.required_unless)
            ):
                raise _bad(
                    f"{spec_field.name} is required", detail=f"{method.name}: {spec_field.description}"
                )
        checked = [
            (name, value, method.fields[name]) for name, value in params.items() if name in method.fields
        ]
        for name, value, spec_field in checked:
            self.check(value, spec_field.types, name)
        for name, value, spec_field in checked:
            self._check_limits(method.name, spec_field, value, params, name)
        return params

    def _coerce(self, value: Any, spec_field: _Field, path: str) -> Any:
        types = spec_field.types
        if isinstance(value, Upload) or not isinstance(value, str):
            return value
        if "Integer" in types and _INT_RE.fullmatch(value):
            return int(value)
        if "Float" in types and _FLOAT_RE.fullmatch(value):
            return float(value)
        if "Boolean" in types and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if "String" in types:
            return value
        if any(t in _SCALARS for t in types):
            raise _bad(f"can't parse {path}: expected {' or '.join(types)}, got {value!r}")
        if value.startswith("attach://"):
            return value
        try:
            return json.loads(value)
        except ValueError as exc:
            raise _bad(f"can't parse {path} JSON object", detail=str(exc)) from exc

    # -- recursive type checks -------------------------------------------------------------------------

    def check(self, value: Any, types: Sequence[str], path: str) -> None:
        """Check ``value`` against a union of spec type expressions; raises ``ApiError`` (400)."""
        candidates = list(types)
        if isinstance(value, dict) and len(candidates) > 1:

            def fits(t: str) -> bool:
                tp = self.types.get(t)
                if tp is None or tp.subtypes:
                    return True
                return all(k in value for k, f in tp.fields.items() if f.required)

            candidates.sort(key=lambda t: not fits(t))
        first: ApiError | None = None
        for t in candidates:
            try:
                self._check_one(value, t, path)
                return
            except ApiError as exc:
                first = first or exc
        if first is not None:
            raise first

    def _check_one(self, value: Any, t: str, path: str) -> None:
        if t.startswith("Array of "):
            if not isinstance(value, list):
                raise _bad(f"can't parse {path}: expected an Array, got {type(value).__name__}")
            for k, item in enumerate(value):
                self._check_one(item, t[len("Array of ") :], f"{path}[{k}]")
            return
        if t == "Integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise _bad(f"can't parse {path}: expected Integer, got {value!r}")
            return
        if t == "Float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _bad(f"can't parse {path}: expected Float, got {value!r}")
            return
        if t == "Boolean":
            if not isinstance(value, bool):
                raise _bad(f"can't parse {path}: expected Boolean, got {value!r}")
            return
        if t == "String":
            if not isinstance(value, str):
                raise _bad(f"can't parse {path}: expected String, got {value!r}")
            return
        if t == "InputFile":
            if not isinstance(value, Upload | str):
                raise _bad(f"can't parse {path}: expected a file")
            return
        tp = self.types.get(t)
        if tp is None:
            return
        if tp.subtypes:
            if isinstance(value, dict):
                for sub in tp.subtypes:
                    st = self.types.get(sub)
                    if st and st.discriminator and value.get(st.discriminator[0]) == st.discriminator[1]:
                        self._check_one(value, sub, path)
                        return
            self.check(value, tp.subtypes, path)
            return
        if not isinstance(value, dict):
            raise _bad(f"can't parse {path}: expected a JSON object ({t}), got {value!r}")
        for required in tp.fields.values():
            if required.required and required.name not in value:
                raise _bad(f"can't parse {path}: field {required.name} is required in {t}")
        if tp.discriminator and value.get(tp.discriminator[0]) != tp.discriminator[1]:
            raise _bad(f"can't parse {path}: {tp.discriminator[0]} must be {tp.discriminator[1]!r} in {t}")
        for key, item in value.items():
            f = tp.fields.get(key)
            if f is None:
                continue  # Telegram ignores unknown fields of objects
            self.check(item, f.types, f"{path}.{key}")
            self._check_limits(t, f, item, value, f"{path}.{key}")
        self._special_checks(t, value, path)

    def _check_limits(
        self, owner: str, f: _Field, value: Any, siblings: Mapping[str, Any], path: str
    ) -> None:
        if f.length and isinstance(value, str):
            text = value
            if f.length.after_entities:
                if f.name in ("text", "caption"):
                    mode = siblings.get("parse_mode")
                    ents = siblings.get("entities" if f.name == "text" else "caption_entities")
                else:
                    mode = siblings.get(f"{f.name}_parse_mode")
                    ents = siblings.get(f"{f.name}_entities")
                text, _ = parse_formatted_text(value, mode, ents if isinstance(ents, list) else None)
            size = len(text.encode("utf-8")) if f.length.unit == "bytes" else len(text)
            if not f.length.lo <= size <= f.length.hi:
                short, long = _LIMIT_MESSAGES.get(
                    (owner, f.name),
                    (f"Bad Request: {path} is too short", f"Bad Request: {path} is too long"),
                )
                raise ApiError(
                    400,
                    short if size < f.length.lo else long,
                    detail=f"{owner}.{f.name} must be {f.length.lo}-{f.length.hi} {f.length.unit}, got {size}"
                    f" at {path}",
                )
        if f.int_range and isinstance(value, int) and not f.int_range[0] <= value <= f.int_range[1]:
            raise _bad(f"{path} must be between {f.int_range[0]} and {f.int_range[1]}, got {value}")
        if f.max_items is not None and isinstance(value, list) and len(value) > f.max_items:
            raise _bad(f"too many items in {path}: at most {f.max_items}, got {len(value)}")

    def _special_checks(self, t: str, value: JSON, path: str) -> None:
        if t == "InlineKeyboardButton":
            if not value.get("text"):
                raise _bad("BUTTON_TEXT_EMPTY", detail=f"{path}.text must be non-empty")
            actions = [
                k for k, v in value.items() if k not in _BUTTON_COSMETIC_FIELDS and v not in (None, False)
            ]
            if not actions:
                raise _bad(
                    "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
                    detail=f"{path} has no action field",
                )
            if len(actions) > 1:
                raise _bad(
                    "can't parse inline keyboard button: exactly one of the optional fields must be used",
                    detail=f"{path} has {actions}",
                )
            _check_button_address(value, path)
        elif t == "BotCommand" and not _BOT_COMMAND.fullmatch(value.get("command", "")):
            raise _bad("BOT_COMMAND_INVALID", detail=f"{path}.command must match [a-z0-9_]{{1,32}}")


# --------------------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upload:
    """A file part of a multipart request (its content is kept for ``sendDocument``)."""

    name: str
    filename: str | None
    content_type: str | None
    size: int
    content: bytes = field(default=b"", repr=False, compare=False)


@dataclass(eq=False)
class FakeUser:
    """A Telegram user (or the bot itself)."""

    id: int
    first_name: str
    username: str | None = None
    last_name: str | None = None
    language_code: str | None = None
    is_bot: bool = False

    def to_api(self) -> JSON:
        """The ``User`` object."""
        d: JSON = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        for key in ("last_name", "username", "language_code"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        return d


@dataclass(eq=False)
class FakeChat:
    """A chat: ``private`` (id == the user's id), ``group``, ``supergroup`` or ``channel``."""

    id: int
    type: str
    title: str | None = None
    username: str | None = None
    user: FakeUser | None = None
    members: set[int] = field(default_factory=set)
    admins: set[int] = field(default_factory=set)
    bot_is_member: bool = True
    bot_is_admin: bool = False
    bot_can_post: bool = True
    """Whether the group's admins let the bot post (a restricted member may not: 400 not enough rights)."""

    @property
    def is_group(self) -> bool:
        """True for groups and supergroups."""
        return self.type in ("group", "supergroup")

    def to_api(self) -> JSON:
        """The ``Chat`` object."""
        d: JSON = {"id": self.id, "type": self.type}
        if self.type == "private" and self.user is not None:
            d["first_name"] = self.user.first_name
            if self.user.last_name:
                d["last_name"] = self.user.last_name
            if self.user.username:
                d["username"] = self.user.username
        else:
            if self.title is not None:
                d["title"] = self.title
            if self.username:
                d["username"] = self.username
        return d


@dataclass(frozen=True)
class MessageVersion:
    """One state of a message: as sent, then after each edit."""

    text: str
    entities: tuple[JSON, ...]
    reply_markup: JSON | None
    time: float


@dataclass(eq=False)
class StoredMessage:
    """A message as Telegram keeps it (current state, plus the history of its versions)."""

    chat: FakeChat
    message_id: int
    date: int
    from_user: FakeUser
    text: str
    entities: list[JSON] = field(default_factory=list)
    reply_markup: JSON | None = None
    from_bot: bool = False
    edit_date: int | None = None
    deleted: bool = False
    reply_to: StoredMessage | None = None
    history: list[MessageVersion] = field(default_factory=list)
    document: Upload | None = None
    """The file of a ``sendDocument`` message (its ``text`` is then the caption)."""

    @property
    def chat_id(self) -> int:
        """The chat's id."""
        return self.chat.id

    @property
    def keyboard(self) -> list[list[JSON]]:
        """The rows of the inline keyboard (empty without one)."""
        if not self.reply_markup:
            return []
        rows: list[list[JSON]] = self.reply_markup.get("inline_keyboard", [])
        return rows

    @property
    def buttons(self) -> list[tuple[str, str | None]]:
        """``(text, callback_data)`` of every inline button, row by row."""
        return [(b.get("text", ""), b.get("callback_data")) for row in self.keyboard for b in row]

    def button_data(self, label: str) -> str:
        """The ``callback_data`` of the button whose text is ``label`` (else the only one containing it)."""
        exact = [d for t, d in self.buttons if t == label and d is not None]
        if exact:
            return exact[0]
        partial = [d for t, d in self.buttons if label in t and d is not None]
        if len(partial) != 1:
            raise LookupError(f"no single button labelled {label!r} in {self.buttons}")
        return partial[0]

    def __repr__(self) -> str:
        sender = "bot" if self.from_bot else self.from_user.first_name
        state = " deleted" if self.deleted else ""
        return (
            f"<StoredMessage {self.chat_id}/{self.message_id} {sender}{state} {self.text!r}"
            f"{' buttons=' + repr(self.buttons) if self.buttons else ''}>"
        )

    def to_api(self, *, with_reply: bool = True) -> JSON:
        """The ``Message`` object."""
        d: JSON = {
            "message_id": self.message_id,
            "from": self.from_user.to_api(),
            "chat": self.chat.to_api(),
            "date": self.date,
        }
        if self.document is not None:
            upload = self.document
            d["document"] = {
                "file_id": f"doc{self.chat_id}_{self.message_id}",
                "file_unique_id": f"u{self.chat_id}_{self.message_id}",
                "file_name": upload.filename or "file",
                "mime_type": upload.content_type or "application/octet-stream",
                "file_size": upload.size,
            }
            if self.text:
                d["caption"] = self.text
            if self.entities:
                d["caption_entities"] = [dict(e) for e in self.entities]
        else:
            d["text"] = self.text
            if self.entities:
                d["entities"] = [dict(e) for e in self.entities]
        if self.reply_markup and "inline_keyboard" in self.reply_markup:
            d["reply_markup"] = self.reply_markup
        if self.edit_date is not None:
            d["edit_date"] = self.edit_date
        if with_reply and self.reply_to is not None:
            d["reply_to_message"] = self.reply_to.to_api(with_reply=False)
        return d


@dataclass(eq=False)
class CallbackRecord:
    """A callback query sent to the bot, and how (whether) it was answered."""

    id: str
    user: FakeUser
    message: StoredMessage
    data: str
    created: float
    answered: bool = False
    answer: JSON | None = None
    answered_at: float | None = None

    def __repr__(self) -> str:
        state = f"answered {self.answer}" if self.answered else "unanswered"
        return (
            f"<CallbackRecord {self.id} {self.user.first_name} {self.data!r} on "
            f"{self.message.chat_id}/{self.message.message_id} {state}>"
        )

    @property
    def latency(self) -> float | None:
        """Seconds between the press and the answer."""
        return None if self.answered_at is None else self.answered_at - self.created


@dataclass(eq=False)
class Call:
    """One request received by the fake server (in arrival order)."""

    seq: int
    method: str
    params: JSON
    http_method: str
    time: float
    status: int | None = None
    response: JSON | None = None
    finished: float | None = None
    injected: bool = False
    limited: bool = False
    """Refused by the flood limits (a 429 Telegram would answer too)."""
    cancelled: bool = False
    detail: str | None = None

    @property
    def done(self) -> bool:
        """The answer has been sent (or the client went away)."""
        return self.status is not None or self.cancelled

    @property
    def ok(self) -> bool:
        """The request succeeded."""
        return self.status == 200

    @property
    def result(self) -> Any:
        """The ``result`` of a successful answer."""
        return (self.response or {}).get("result")

    @property
    def description(self) -> str | None:
        """The error description of a failed answer."""
        return (self.response or {}).get("description")

    @property
    def chat_id(self) -> Any:
        """The ``chat_id`` parameter, if any."""
        return self.params.get("chat_id")

    def __repr__(self) -> str:
        state = "pending" if not self.done else ("cancelled" if self.cancelled else str(self.status))
        shown = {k: v for k, v in self.params.items() if k != "reply_markup"}
        text = f"<Call #{self.seq} {self.method} {state} {shown}"
        if self.description:
            text += f" -> {self.description}"
        if self.detail:
            text += f" ({self.detail})"
        return text + (" [injected]" if self.injected else "") + ">"


@dataclass
class _Failure:
    method: str
    status: int
    description: str
    parameters: JSON | None
    chat_id: int | str | None
    remaining: int


@dataclass
class _Poll:
    request: web.Request
    woken: asyncio.Event = field(default_factory=asyncio.Event)
    superseded: bool = False


# --------------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------------


class FakeTelegram:
    """The fake Bot API server (see the module docstring)."""

    def __init__(
        self,
        token: str = "123:ABC",
        bot_username: str = "musbot_test",
        *,
        bot_first_name: str = "Mus Bot",
        privacy_mode: bool = True,
        callback_timeout: float | None = 15.0,
        spec: ApiSpec | None = None,
        limits: TelegramLimits | None = None,
    ) -> None:
        self.token = token
        self.spec = spec or ApiSpec.load()
        head = token.split(":", 1)[0]
        self.bot_user = FakeUser(
            id=int(head) if head.isdigit() else 1,
            first_name=bot_first_name,
            username=bot_username,
            is_bot=True,
        )
        self.privacy_mode = privacy_mode
        self.callback_timeout = callback_timeout
        self.flood = None if limits is None else FloodControl(limits)
        """Telegram's flood limits, when enforced (see :mod:`e2e.fake_telegram_limits`)."""
        self.migrations = Migrations()
        """Basic groups upgraded to supergroups (see :mod:`e2e.fake_telegram_migration`)."""
        self.port = 0
        self.users: dict[int, FakeUser] = {}
        self.chats: dict[int, FakeChat] = {}
        self.started: set[int] = set()
        self.blocked: set[int] = set()
        self.webhook: JSON | None = None
        self.updates: list[JSON] = []  # every update ever queued
        self.commands: dict[tuple[str, str], list[JSON]] = {}
        self.callbacks: dict[str, CallbackRecord] = {}
        self._calls: list[Call] = []
        self._messages: dict[int, dict[int, StoredMessage]] = {}
        self._next_message_id: dict[int, int] = {}
        self._queue: list[JSON] = []
        self._next_update_id = 1
        self._allowed_updates: frozenset[str] = _DEFAULT_ALLOWED_UPDATES
        self._failures: list[_Failure] = []
        self._polls: list[_Poll] = []
        self._changed = asyncio.Event()
        self._stopping = False
        self._next_user_id = 10_001
        self._next_group = 1
        self._next_callback = 1
        self._t0 = time.monotonic()
        self._runner: web.AppRunner | None = None
        self._handlers: dict[str, Callable[[JSON], Awaitable[Any]]] = {
            "getMe": self._get_me,
            "logOut": self._true,
            "close": self._true,
            "setWebhook": self._set_webhook,
            "deleteWebhook": self._delete_webhook,
            "getWebhookInfo": self._get_webhook_info,
            "sendMessage": self._send_message,
            "sendDocument": self._send_document,
            "editMessageText": self._edit_message_text,
            "editMessageReplyMarkup": self._edit_message_reply_markup,
            "deleteMessage": self._delete_message,
            "deleteMessages": self._delete_messages,
            "answerCallbackQuery": self._answer_callback_query,
            "setMyCommands": self._set_my_commands,
            "getMyCommands": self._get_my_commands,
            "deleteMyCommands": self._delete_my_commands,
            "getChat": self._get_chat,
            "getChatMember": self._get_chat_member,
            "sendChatAction": self._send_chat_action,
        }

    # -- lifecycle -------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The ``base_url`` for PTB (it appends the token): ``http://127.0.0.1:PORT/bot``."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def api_url(self) -> str:
        """The full method prefix with the token: ``http://127.0.0.1:PORT/bot<token>/``."""
        return f"{self.base_url}{self.token}/"

    async def start(self) -> None:
        """Bind a free port on 127.0.0.1 and start serving."""
        self._stopping = False
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        self._t0 = time.monotonic()

    async def stop(self) -> None:
        """Wake every pending long poll (they answer ``[]``) and shut the server down."""
        self._stopping = True
        for poll in self._polls:
            poll.woken.set()
        self._notify()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def now(self) -> float:
        """Seconds since the server started (the clock of ``Call.time``)."""
        return time.monotonic() - self._t0

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # -- users and chats -------------------------------------------------------------------------------

    def add_user(
        self,
        first_name: str,
        *,
        user_id: int | None = None,
        username: str | None = None,
        last_name: str | None = None,
        language_code: str | None = "es",
    ) -> FakeUser:
        """Register a user (who has not opened the bot yet)."""
        if user_id is None:
            user_id = self._next_user_id
            self._next_user_id += 1
        user = FakeUser(user_id, first_name, username, last_name, language_code)
        self.users[user_id] = user
        return user

    def add_group(
        self,
        title: str,
        *,
        chat_id: int | None = None,
        supergroup: bool = True,
        username: str | None = None,
        members: Iterable[FakeUser] = (),
        admins: Iterable[FakeUser] = (),
        bot_is_admin: bool = False,
    ) -> FakeChat:
        """Register a group the bot is a member of."""
        if chat_id is None:
            chat_id = (-1_001_000_000_000 if supergroup else -1_000) - self._next_group
            self._next_group += 1
        chat = FakeChat(
            chat_id,
            "supergroup" if supergroup else "group",
            title=title,
            username=username,
            bot_is_admin=bot_is_admin,
        )
        for user in (*members, *admins):
            self.users.setdefault(user.id, user)
            chat.members.add(user.id)
        chat.admins.update(u.id for u in admins)
        self.chats[chat_id] = chat
        return chat

    def migrate_to_supergroup(
        self, chat: FakeChat, *, by: FakeUser | None = None, service_messages: bool = True
    ) -> FakeChat:
        """Upgrade a basic group to a new supergroup, returned (see :mod:`e2e.fake_telegram_migration`)."""
        supergroup_id = -1_001_000_000_000 - self._next_group
        self._next_group += 1
        return migrate_to_supergroup(self, chat, supergroup_id, by=by, service_messages=service_messages)

    def private_chat(self, user: FakeUser) -> FakeChat:
        """The private chat between ``user`` and the bot (created on first use)."""
        self.users.setdefault(user.id, user)
        chat = self.chats.get(user.id)
        if chat is None:
            chat = FakeChat(user.id, "private", user=user, members={user.id})
            self.chats[user.id] = chat
        return chat

    def remove_bot_from(self, chat: FakeChat, *, by: FakeUser | None = None, banned: bool = False) -> None:
        """The bot is removed from a group by ``by`` (an admin; ``banned``: and may not be added back by a
        member's link): a ``my_chat_member`` update (``left``, or ``kicked`` when banned), and from then on
        every call that writes there answers 403 (``bot was kicked from the group chat``, ``bot is not a
        member of the supergroup chat``), edits of its old messages included, as on Telegram."""
        self._bot_membership(chat, "kicked" if banned else "left", by)
        chat.bot_is_member = False

    def add_bot_back(self, chat: FakeChat, *, by: FakeUser | None = None) -> None:
        """An admin adds the bot to a group it was removed from: ``my_chat_member`` (``member``), and it may
        post there again."""
        self._bot_membership(chat, "member", by)
        chat.bot_is_member = True

    def restrict_bot(self, chat: FakeChat, *, can_post: bool, by: FakeUser | None = None) -> None:
        """An admin forbids the bot to post in a group (``can_post=False``: it stays a member, restricted, and
        every ``send*`` answers 400 ``not enough rights``; edits of its messages still pass) or lifts that: a
        ``my_chat_member`` update either way (``member`` ↔ ``restricted``)."""
        if not chat.is_group or not chat.bot_is_member or chat.bot_can_post == can_post:
            raise ValueError(f"the bot is not a member of {chat.id}, or may already post there: {can_post}")
        rights = dict.fromkeys(_RESTRICTED_RIGHTS, can_post)
        restricted: JSON = {"status": "restricted", "user": self.bot_user.to_api(), "is_member": True}
        restricted.update(rights, can_send_messages=False, until_date=0)
        member: JSON = {"status": "member", "user": self.bot_user.to_api()}
        chat.bot_can_post = can_post
        people = sorted(chat.admins | chat.members)
        admin = by or next((self.users[m] for m in people if m in self.users), None)
        self._queue_update(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": (admin or self.bot_user).to_api(),
                "date": int(time.time()),
                "old_chat_member": restricted if can_post else member,
                "new_chat_member": member if can_post else restricted,
            },
        )

    def _bot_membership(self, chat: FakeChat, status: str, by: FakeUser | None) -> None:
        """Queue the ``my_chat_member`` update of the bot's new ``status`` in ``chat``."""
        if not chat.is_group:
            raise ValueError(f"chat {chat.id} is not a group")
        was = "member" if chat.bot_is_member else "left"
        if status == was:
            raise ValueError(f"the bot is already {status} in {chat.id}")
        people = sorted(chat.admins | chat.members)
        admin = by or next((self.users[m] for m in people if m in self.users), None)
        new: JSON = {"status": status, "user": self.bot_user.to_api()}
        if status == "kicked":
            new["until_date"] = 0
        self._queue_update(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": (admin or self.bot_user).to_api(),
                "date": int(time.time()),
                "old_chat_member": {"status": was, "user": self.bot_user.to_api()},
                "new_chat_member": new,
            },
        )

    def _chat_of(self, chat: FakeChat | int) -> FakeChat:
        if isinstance(chat, FakeChat):
            return chat
        return self.chats[chat]

    # -- injecting updates -----------------------------------------------------------------------------

    def _queue_update(self, kind: str, payload: JSON) -> JSON:
        update = {"update_id": self._next_update_id, kind: payload}
        self._next_update_id += 1
        self.updates.append(update)
        self._queue.append(update)
        self._notify()
        return update

    def take_message_id(self, chat: FakeChat) -> int:
        """The next message id of ``chat`` (each chat numbers its messages from 1)."""
        message_id = self._next_message_id.get(chat.id, 1)
        self._next_message_id[chat.id] = message_id + 1
        return message_id

    def _store(
        self,
        chat: FakeChat,
        sender: FakeUser,
        text: str,
        entities: list[JSON],
        reply_markup: JSON | None,
        reply_to: StoredMessage | None = None,
    ) -> StoredMessage:
        message_id = self.take_message_id(chat)
        message = StoredMessage(
            chat=chat,
            message_id=message_id,
            date=int(time.time()),
            from_user=sender,
            text=text,
            entities=entities,
            reply_markup=reply_markup,
            from_bot=sender is self.bot_user,
            reply_to=reply_to,
        )
        message.history.append(MessageVersion(text, tuple(entities), reply_markup, self.now()))
        self._messages.setdefault(chat.id, {})[message_id] = message
        return message

    def user_sends(
        self, user: FakeUser, chat: FakeChat | int | None, text: str, *, reply_to: StoredMessage | None = None
    ) -> StoredMessage:
        """``user`` writes ``text`` in ``chat`` (``None``: the private chat with the bot).

        Commands (``/newgame``, ``/start payload``, ``/cmd@bot``) get ``bot_command`` entities. In a group
        with privacy mode on, the bot only receives commands (for it or for no bot in particular) and
        replies to its messages, like on Telegram; the message is stored either way.
        """
        self.users.setdefault(user.id, user)
        target = self.private_chat(user) if chat is None else self._chat_of(chat)
        if target.id in self.migrations.moved:
            raise ValueError(f"group {target.id} was upgraded to a supergroup: nobody writes there any more")
        if target.type == "private":
            self.started.add(user.id)
            self.blocked.discard(user.id)
        else:
            target.members.add(user.id)
        entities = [
            {"type": "bot_command", "offset": _u16(text[: m.start()]), "length": _u16(m.group(0))}
            for m in _COMMAND_IN_TEXT.finditer(text)
        ]
        message = self._store(target, user, text, entities, None, reply_to)
        if self._bot_receives(target, text, reply_to):
            self._queue_update("message", message.to_api())
        return message

    def _bot_receives(self, chat: FakeChat, text: str, reply_to: StoredMessage | None) -> bool:
        if chat.type == "private":
            return True
        if not chat.bot_is_member:
            return False
        if not self.privacy_mode or chat.bot_is_admin:
            return True
        if reply_to is not None and reply_to.from_bot:
            return True
        username = (self.bot_user.username or "").lower()
        if f"@{username}" in text.lower():
            return True
        for m in _COMMAND_IN_TEXT.finditer(text):
            target = m.group(0).partition("@")[2].lower()
            if not target or target == username:
                return True
        return False

    def user_starts_bot(self, user: FakeUser, payload: str | None = None) -> StoredMessage:
        """``user`` opens the bot (maybe through a ``?start=payload`` deep link): ``/start [payload]``."""
        if payload is not None and not _DEEP_LINK_PAYLOAD.fullmatch(payload):
            raise ValueError(f"invalid deep-link payload {payload!r}")
        return self.user_sends(user, None, "/start" if payload is None else f"/start {payload}")

    def user_blocks_bot(self, user: FakeUser) -> None:
        """``user`` blocks the bot: private sends answer 403 ``bot was blocked by the user``."""
        self.users.setdefault(user.id, user)
        self.blocked.add(user.id)
        chat = self.private_chat(user)
        self._queue_update(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": user.to_api(),
                "date": int(time.time()),
                "old_chat_member": {"status": "member", "user": self.bot_user.to_api()},
                "new_chat_member": {"status": "kicked", "user": self.bot_user.to_api(), "until_date": 0},
            },
        )

    def user_unblocks_bot(self, user: FakeUser) -> None:
        """``user`` unblocks the bot (the client's "Unblock" or "Restart"): ``my_chat_member`` (``kicked`` →
        ``member``) in their private chat, and private sends work again. (A client's "Restart" also sends
        ``/start``: :meth:`user_starts_bot`.)"""
        if user.id not in self.blocked:
            raise ValueError(f"user {user.id} has not blocked the bot")
        self.blocked.discard(user.id)
        self.started.add(user.id)
        self._queue_update(
            "my_chat_member",
            {
                "chat": self.private_chat(user).to_api(),
                "from": user.to_api(),
                "date": int(time.time()),
                "old_chat_member": {"status": "kicked", "user": self.bot_user.to_api(), "until_date": 0},
                "new_chat_member": {"status": "member", "user": self.bot_user.to_api()},
            },
        )

    def user_presses(
        self, user: FakeUser, message: StoredMessage, callback_data: str, *, check_button: bool = True
    ) -> str:
        """``user`` presses a button of ``message``: queues a ``callback_query`` and returns its (fresh) id.

        With ``check_button`` the message must currently show a button with that ``callback_data`` (a real
        client cannot press anything else).
        """
        if message.deleted:
            raise ValueError(f"message {message.message_id} in chat {message.chat_id} was deleted")
        if check_button and callback_data not in [d for _, d in message.buttons]:
            raise ValueError(
                f"message {message.message_id} has no button {callback_data!r}: {message.buttons}"
            )
        self.users.setdefault(user.id, user)
        if message.chat.is_group:
            message.chat.members.add(user.id)
        query_id = str(4_000_000_000_000_000_000 + self._next_callback)
        self._next_callback += 1
        self.callbacks[query_id] = CallbackRecord(query_id, user, message, callback_data, self.now())
        self._queue_update(
            "callback_query",
            {
                "id": query_id,
                "from": user.to_api(),
                "message": message.to_api(),
                "chat_instance": str(abs(message.chat_id) * 7919 % 10**18),
                "data": callback_data,
            },
        )
        return query_id

    def redeliver(self, update: JSON) -> None:
        """Telegram delivers ``update`` again, same ``update_id`` (a webhook update that got no 2xx is
        retried); queued before the bot fetches, both copies come in one ``getUpdates`` batch."""
        self._queue.append(dict(update))
        self._notify()

    def delete_message_as_user(self, chat: FakeChat | int, message_id: int) -> None:
        """Someone (an admin) deletes a message: edits of it answer ``message to edit not found``."""
        message = self._messages.get(self._chat_of(chat).id, {}).get(message_id)
        if message is None:
            raise KeyError(f"no message {message_id} in chat {chat}")
        message.deleted = True
        self._notify()

    # -- injecting failures ----------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int | None = None,
        description: str | None = None,
        times: int = 1,
        chat_id: int | str | None = None,
    ) -> None:
        """Make the next ``times`` valid calls of ``method`` (to ``chat_id``, if given) fail with ``status``.

        429 answers ``Too Many Requests: retry after N`` with ``parameters.retry_after`` (default 1); 403
        ``Forbidden: bot was blocked by the user``; 400 ``Bad Request: ...``; 5xx a server error.
        """
        spec_method = self.spec.method(method)
        if spec_method is None:
            raise ValueError(f"unknown Bot API method {method!r}")
        parameters: JSON | None = None
        if status == 429:
            seconds = 1 if retry_after is None else retry_after
            parameters = {"retry_after": seconds}
            default = f"Too Many Requests: retry after {seconds}"
        elif status == 403:
            default = BLOCKED
        elif status == 400:
            default = "Bad Request: injected failure"
        elif status == 409:
            default = POLL_CONFLICT
        else:
            default = "Internal Server Error"
        self._failures.append(
            _Failure(spec_method.name, status, description or default, parameters, chat_id, times)
        )

    def _take_failure(self, method: str, params: JSON) -> ApiError | None:
        for failure in self._failures:
            if failure.method != method or failure.remaining <= 0:
                continue
            if failure.chat_id is not None and params.get("chat_id") != failure.chat_id:
                continue
            failure.remaining -= 1
            if failure.remaining <= 0:
                self._failures.remove(failure)
            error = ApiError(failure.status, failure.description, parameters=failure.parameters)
            error.injected = True
            return error
        return None

    # -- recorded state --------------------------------------------------------------------------------

    def calls(
        self, method: str | None = None, chat_id: int | str | None = None, *, ok: bool | None = None
    ) -> list[Call]:
        """Recorded calls in arrival order, optionally filtered by method, ``chat_id`` and success."""
        canonical = None
        if method is not None:
            spec_method = self.spec.method(method)
            canonical = spec_method.name if spec_method else method
        return [
            c
            for c in self._calls
            if (canonical is None or c.method == canonical)
            and (chat_id is None or c.params.get("chat_id") == chat_id)
            and (ok is None or (c.done and c.ok == ok))
        ]

    def rejected(self, *, include_injected: bool = False, include_limited: bool = False) -> list[Call]:
        """Calls answered with an error (not counting injected failures, nor the flood limits' 429s, unless
        asked)."""
        return [
            c
            for c in self._calls
            if c.status is not None
            and not c.ok
            and (include_injected or not c.injected)
            and (include_limited or not c.limited)
        ]

    def limited(self) -> list[Call]:
        """Calls the flood limits refused with a 429 (see :mod:`e2e.fake_telegram_limits`)."""
        return [c for c in self._calls if c.limited]

    def _check_flood(self, method: str, params: JSON) -> None:
        """A 429 with ``retry_after`` when a call is over Telegram's flood limits (when they are on)."""
        if self.flood is None:
            return
        wait = self.flood.retry_after(method, params, self.now())
        if wait is not None:
            error = ApiError(429, f"Too Many Requests: retry after {wait}", parameters={"retry_after": wait})
            error.limited = True
            raise error

    def messages_in(
        self, chat: FakeChat | int, *, include_deleted: bool = False, from_bot: bool | None = None
    ) -> list[StoredMessage]:
        """The messages of a chat (current state), oldest first."""
        chat_id = chat.id if isinstance(chat, FakeChat) else chat
        return [
            m
            for m in self._messages.get(chat_id, {}).values()
            if (include_deleted or not m.deleted) and (from_bot is None or m.from_bot == from_bot)
        ]

    def bot_messages(self, chat: FakeChat | int) -> list[StoredMessage]:
        """The bot's messages in a chat (current state, deleted ones left out)."""
        return self.messages_in(chat, from_bot=True)

    def last_bot_message(self, chat: FakeChat | int) -> StoredMessage | None:
        """The bot's latest message in a chat, if any."""
        messages = self.bot_messages(chat)
        return messages[-1] if messages else None

    def group_texts(self, chat: FakeChat | int | None = None) -> list[str]:
        """Current texts of the bot's messages in group chats (or in one group), in sending order."""
        if chat is not None:
            return [m.text for m in self.bot_messages(chat)]
        return [m.text for c in self.chats.values() if c.is_group for m in self.bot_messages(c)]

    def private_texts(self, user: FakeUser | int) -> list[str]:
        """Current texts of the bot's messages in its private chat with ``user``."""
        user_id = user.id if isinstance(user, FakeUser) else user
        return [m.text for m in self.bot_messages(user_id)]

    def unanswered_callbacks(self) -> list[CallbackRecord]:
        """Callback queries the bot has not answered."""
        return [c for c in self.callbacks.values() if not c.answered]

    def commands_for(self, scope: JSON | None = None, language_code: str = "") -> list[JSON]:
        """The command list set for a scope (default scope if ``None``) and language."""
        return list(self.commands.get((_scope_key(scope), language_code), []))

    async def wait_for(
        self, predicate: Callable[[], _T], timeout: float = 5.0, *, interval: float = 0.01
    ) -> _T:
        """Wait until ``predicate()`` is truthy (checked on every recorded change and every ``interval``).

        Returns the truthy value; raises ``AssertionError`` listing the last calls after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            changed = self._changed
            value = predicate()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                recent = "\n  ".join(repr(c) for c in self._calls[-10:])
                raise AssertionError(f"condition not met within {timeout} s; last calls:\n  {recent}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(remaining, interval))

    async def wait_for_call(
        self,
        method: str,
        predicate: Callable[[Call], bool] | None = None,
        *,
        since: int = 0,
        timeout: float = 5.0,
    ) -> Call:
        """Wait for a finished call of ``method`` with ``seq >= since`` matching ``predicate``."""

        def find() -> Call | None:
            for c in self.calls(method):
                if c.seq >= since and c.done and (predicate is None or predicate(c)):
                    return c
            return None

        found = await self.wait_for(find, timeout)
        assert found is not None
        return found

    # -- HTTP ----------------------------------------------------------------------------------------------

    async def _read_params(self, request: web.Request) -> JSON:
        params: JSON = dict(request.query)
        if request.method in ("GET", "HEAD") or not request.can_read_body:
            return params
        ctype = request.content_type
        if ctype == "application/json":
            try:
                body = await request.json()
            except ValueError as exc:
                raise _bad("can't parse JSON body", detail=str(exc)) from exc
            if not isinstance(body, dict):
                raise _bad("the JSON body must be an object")
            params.update(body)
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.post()
            for key, value in form.items():
                if isinstance(value, web.FileField):
                    content = value.file.read()
                    params[key] = Upload(key, value.filename, value.content_type, len(content), content)
                else:
                    params[key] = value if isinstance(value, str) else bytes(value).decode("utf-8")
        else:
            await request.read()
        return params

    async def _not_found(self, request: web.Request) -> web.Response:
        call = Call(len(self._calls), request.path, {}, request.method, self.now())
        self._calls.append(call)
        return self._finish(
            call, ApiError(404, "Not Found", detail=f"no such path {request.path}").payload(), 404
        )

    def _finish(self, call: Call, body: JSON, status: int) -> web.Response:
        call.status = status
        call.response = body
        call.finished = self.now()
        self._notify()
        return web.json_response(body, status=status)

    async def _handle(self, request: web.Request) -> web.Response:
        raw_method = request.match_info["method"]
        spec_method = self.spec.method(raw_method)
        call = Call(
            len(self._calls), spec_method.name if spec_method else raw_method, {}, request.method, self.now()
        )
        self._calls.append(call)
        try:
            raw = await self._read_params(request)
            call.params = dict(raw)
            if request.match_info["token"] != self.token:
                raise ApiError(401, "Unauthorized", detail="wrong token")
            if spec_method is None:
                raise ApiError(404, "Not Found", detail=f"no Bot API method {raw_method!r}")
            params = self.spec.validate_params(spec_method, raw)
            call.params = params
            failure = self._take_failure(spec_method.name, params)
            if failure is not None:
                raise failure
            upgraded = self.migrations.refusal(spec_method.name, params)
            if upgraded is not None:
                raise ApiError(400, upgraded[0], parameters=upgraded[1])
            self._check_flood(spec_method.name, params)
            handler = self._handlers.get(spec_method.name)
            if spec_method.name == "getUpdates":
                result: Any = await self._get_updates(params, request)
            elif handler is None:
                if spec_method.returns == ("Boolean",):
                    result = True
                else:
                    raise ApiError(501, f"Not Implemented: FakeTelegram has no {spec_method.name}")
            else:
                result = await handler(params)
        except ApiError as exc:
            call.injected = exc.injected
            call.limited = exc.limited
            call.detail = exc.detail
            return self._finish(call, exc.payload(), exc.status)
        except asyncio.CancelledError:
            call.cancelled = True
            call.finished = self.now()
            self._notify()
            raise
        except Exception as exc:  # a bug of the fake: answer 500 and keep it visible in rejected()
            call.detail = f"FakeTelegram crashed: {exc!r}"
            return self._finish(call, ApiError(500, "Internal Server Error").payload(), 500)
        return self._finish(call, {"ok": True, "result": result}, 200)

    # -- method handlers -------------------------------------------------------------------------------

    async def _true(self, params: JSON) -> bool:
        return True

    async def _get_me(self, params: JSON) -> JSON:
        return {
            **self.bot_user.to_api(),
            "can_join_groups": True,
            "can_read_all_group_messages": not self.privacy_mode,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _get_updates(self, params: JSON, request: web.Request) -> list[JSON]:
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_CONFLICT)
        offset = params.get("offset")
        if offset is not None:
            if offset < 0:
                self._queue = self._queue[offset:]
            else:
                self._queue = [u for u in self._queue if u["update_id"] >= offset]
        if "allowed_updates" in params:
            allowed = params["allowed_updates"]
            self._allowed_updates = frozenset(allowed) if allowed else _DEFAULT_ALLOWED_UPDATES
        limit = params.get("limit", 100)
        timeout = params.get("timeout", 0)
        for older in self._polls:
            older.superseded = True
            older.woken.set()
        poll = _Poll(request)
        self._polls.append(poll)
        deadline = time.monotonic() + min(timeout, 60)
        try:
            while True:
                self._queue = [u for u in self._queue if self._allowed(u)]
                if poll.superseded:
                    transport = request.transport
                    if transport is None or transport.is_closing():
                        return []
                    raise ApiError(409, POLL_CONFLICT)
                if self._queue or self._stopping or timeout <= 0:
                    return [dict(u) for u in self._queue[:limit]]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return []
                changed = self._changed
                woken = asyncio.ensure_future(poll.woken.wait())
                change = asyncio.ensure_future(changed.wait())
                try:
                    await asyncio.wait(
                        {woken, change}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    woken.cancel()
                    change.cancel()
        finally:
            self._polls.remove(poll)

    def _allowed(self, update: JSON) -> bool:
        kind = next(k for k in update if k != "update_id")
        return kind in self._allowed_updates

    async def _set_webhook(self, params: JSON) -> bool:
        url = params["url"]
        if url == "":
            self.webhook = None
            return True
        if not url.startswith("https://"):
            raise _bad("bad webhook: An HTTPS URL must be provided for webhook")
        if params.get("drop_pending_updates"):
            self._queue.clear()
        self.webhook = dict(params)
        return True

    async def _delete_webhook(self, params: JSON) -> bool:
        self.webhook = None
        if params.get("drop_pending_updates"):
            self._queue.clear()
        return True

    async def _get_webhook_info(self, params: JSON) -> JSON:
        return {
            "url": (self.webhook or {}).get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self._queue),
        }

    def _resolve_chat(self, chat_id: int | str) -> FakeChat:
        if isinstance(chat_id, str):
            for known in self.chats.values():
                if known.username and f"@{known.username}".lower() == chat_id.lower():
                    return known
            raise ApiError(400, CHAT_NOT_FOUND, detail=f"no chat {chat_id!r}")
        chat = self.chats.get(chat_id)
        if chat is None:
            if chat_id in self.users:
                raise ApiError(403, CANT_INITIATE, detail=f"user {chat_id} never opened the bot")
            raise ApiError(400, CHAT_NOT_FOUND, detail=f"no chat {chat_id}")
        return chat

    def _writable_chat(self, chat_id: int | str) -> FakeChat:
        chat = self._resolve_chat(chat_id)
        if chat.type == "private":
            if chat.id in self.blocked:
                raise ApiError(403, BLOCKED)
            if chat.id not in self.started:
                raise ApiError(403, CANT_INITIATE, detail=f"user {chat.id} never opened the bot")
        elif not chat.bot_is_member:
            raise ApiError(
                403,
                KICKED if chat.type == "group" else "Forbidden: bot is not a member of the supergroup chat",
            )
        return chat

    def _postable_chat(self, chat_id: int | str) -> FakeChat:
        chat = self._writable_chat(chat_id)
        if chat.is_group and not chat.bot_can_post:
            raise ApiError(400, NOT_ENOUGH_RIGHTS)
        return chat

    async def _send_message(self, params: JSON) -> JSON:
        chat = self._postable_chat(params["chat_id"])
        text, entities = parse_formatted_text(
            params["text"], params.get("parse_mode"), params.get("entities")
        )
        reply_to = None
        reply = params.get("reply_parameters")
        if reply is not None:
            source = self._resolve_chat(reply["chat_id"]) if "chat_id" in reply else chat
            reply_to = self._messages.get(source.id, {}).get(reply["message_id"])
            if (reply_to is None or reply_to.deleted) and not reply.get("allow_sending_without_reply"):
                raise _bad("message to be replied not found")
        markup = _normalize_markup(params.get("reply_markup"))
        _check_web_apps(chat, markup)
        message = self._store(chat, self.bot_user, text, entities, markup, reply_to)
        return message.to_api()

    async def _send_document(self, params: JSON) -> JSON:
        chat = self._postable_chat(params["chat_id"])
        upload = params["document"]
        if not isinstance(upload, Upload):  # a file_id or URL: this fake keeps no files to name
            raise _bad("wrong file identifier/HTTP URL specified")
        if upload.size == 0:
            raise _bad("file must be non-empty")
        caption, entities = parse_formatted_text(
            params.get("caption", ""), params.get("parse_mode"), params.get("caption_entities")
        )
        markup = _normalize_markup(params.get("reply_markup"))
        _check_web_apps(chat, markup)
        message = self._store(chat, self.bot_user, caption, entities, markup)
        message.document = upload
        return message.to_api()

    def documents(self, chat: FakeChat | FakeUser) -> list[StoredMessage]:
        """The bot's ``sendDocument`` messages in a chat, oldest first."""
        return [m for m in self._messages.get(chat.id, {}).values() if m.document is not None]

    def _message_to_edit(self, params: JSON) -> StoredMessage:
        if "inline_message_id" in params:
            raise _bad("MESSAGE_ID_INVALID", detail="inline messages are not supported by FakeTelegram")
        chat = self._writable_chat(params["chat_id"])
        message = self._messages.get(chat.id, {}).get(params["message_id"])
        if message is None or message.deleted:
            raise _bad("message to edit not found")
        if not message.from_bot:
            raise _bad("message can't be edited")
        return message

    def _apply_edit(
        self, message: StoredMessage, text: str, entities: list[JSON], markup: JSON | None
    ) -> JSON:
        _check_web_apps(message.chat, markup)
        if text == message.text and entities == message.entities and markup == message.reply_markup:
            raise _bad(MESSAGE_NOT_MODIFIED)
        message.text, message.entities, message.reply_markup = text, entities, markup
        message.edit_date = int(time.time())
        message.history.append(MessageVersion(text, tuple(entities), markup, self.now()))
        return message.to_api()

    async def _edit_message_text(self, params: JSON) -> JSON:
        message = self._message_to_edit(params)
        text, entities = parse_formatted_text(
            params["text"], params.get("parse_mode"), params.get("entities")
        )
        return self._apply_edit(message, text, entities, _normalize_markup(params.get("reply_markup")))

    async def _edit_message_reply_markup(self, params: JSON) -> JSON:
        message = self._message_to_edit(params)
        return self._apply_edit(
            message, message.text, message.entities, _normalize_markup(params.get("reply_markup"))
        )

    def _deletable(self, chat: FakeChat, message_id: int) -> StoredMessage:
        message = self._messages.get(chat.id, {}).get(message_id)
        if message is None or message.deleted:
            raise _bad("message to delete not found")
        if chat.is_group and not message.from_bot and not chat.bot_is_admin:
            raise _bad("message can't be deleted")
        return message

    async def _delete_message(self, params: JSON) -> bool:
        chat = self._writable_chat(params["chat_id"])
        self._deletable(chat, params["message_id"]).deleted = True
        return True

    async def _delete_messages(self, params: JSON) -> bool:
        chat = self._writable_chat(params["chat_id"])
        for message_id in params["message_ids"]:
            message = self._messages.get(chat.id, {}).get(message_id)
            if message is not None and (message.from_bot or chat.type == "private" or chat.bot_is_admin):
                message.deleted = True
        return True

    async def _answer_callback_query(self, params: JSON) -> bool:
        record = self.callbacks.get(params["callback_query_id"])
        if record is None or record.answered:
            raise _bad(QUERY_TOO_OLD)
        if self.callback_timeout is not None and self.now() - record.created > self.callback_timeout:
            raise _bad(QUERY_TOO_OLD, detail=f"answered after more than {self.callback_timeout} s")
        url = params.get("url")
        if url is not None:
            self._check_start_url(url)
        record.answered = True
        record.answer = dict(params)
        record.answered_at = self.now()
        return True

    def _check_start_url(self, url: str) -> None:
        bot = re.escape(self.bot_user.username or "")
        m = re.fullmatch(rf"(?:https?://)?t\.me/{bot}\?start=(.*)", url, re.IGNORECASE) or re.fullmatch(
            rf"tg://resolve\?domain={bot}&start=(.*)", url, re.IGNORECASE
        )
        if m is None or not _DEEP_LINK_PAYLOAD.fullmatch(m.group(1)):
            raise _bad(
                "URL_INVALID", detail=f"{url!r} is not a t.me/{self.bot_user.username}?start=<payload> link"
            )

    def _commands_key(self, params: JSON) -> tuple[str, str]:
        scope = params.get("scope")
        if isinstance(scope, dict) and "chat_id" in scope:
            self._resolve_chat(scope["chat_id"])
        return _scope_key(scope), params.get("language_code", "")

    async def _set_my_commands(self, params: JSON) -> bool:
        key = self._commands_key(params)
        commands = [{"command": c["command"], "description": c["description"]} for c in params["commands"]]
        if commands:
            self.commands[key] = commands
        else:
            self.commands.pop(key, None)
        return True

    async def _get_my_commands(self, params: JSON) -> list[JSON]:
        return list(self.commands.get(self._commands_key(params), []))

    async def _delete_my_commands(self, params: JSON) -> bool:
        self.commands.pop(self._commands_key(params), None)
        return True

    async def _get_chat(self, params: JSON) -> JSON:
        chat = self._resolve_chat(params["chat_id"])
        return {
            **chat.to_api(),
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": True,
                "limited_gifts": True,
                "unique_gifts": True,
                "premium_subscription": True,
                "gifts_from_channels": True,
            },
        }

    async def _get_chat_member(self, params: JSON) -> JSON:
        chat = self._resolve_chat(params["chat_id"])
        user_id = params["user_id"]
        if user_id == self.bot_user.id:
            if chat.bot_is_admin:
                return _administrator(self.bot_user)
            return {"status": "member" if chat.bot_is_member else "left", "user": self.bot_user.to_api()}
        user = self.users.get(user_id)
        if user is None:
            raise _bad("PARTICIPANT_ID_INVALID")
        if user_id in chat.admins:
            return _administrator(user)
        if user_id in chat.members:
            return {"status": "member", "user": user.to_api()}
        return {"status": "left", "user": user.to_api()}

    async def _send_chat_action(self, params: JSON) -> bool:
        self._writable_chat(params["chat_id"])
        return True


def _administrator(user: FakeUser) -> JSON:
    rights = (
        "can_manage_chat",
        "can_delete_messages",
        "can_manage_video_chats",
        "can_restrict_members",
        "can_promote_members",
        "can_change_info",
        "can_invite_users",
        "can_post_stories",
        "can_edit_stories",
        "can_delete_stories",
    )
    return {
        "status": "administrator",
        "user": user.to_api(),
        "can_be_edited": False,
        "is_anonymous": False,
        **{right: right in ("can_manage_chat", "can_delete_messages") for right in rights},
    }


def _scope_key(scope: Any) -> str:
    if not scope:
        scope = {"type": "default"}
    return json.dumps(scope, sort_keys=True)


def _check_button_address(button: JSON, path: str) -> None:
    """A link button's address: ``url`` HTTP(S) or ``tg://`` with somewhere to go, ``web_app.url`` HTTPS."""
    url = button.get("url")
    if isinstance(url, str):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "tg") or not (parts.netloc or parts.scheme == "tg"):
            raise _bad("BUTTON_URL_INVALID", detail=f"{path}.url is not an HTTP(S) or tg:// URL: {url!r}")
    web_app = button.get("web_app")
    if isinstance(web_app, dict):
        parts = urlsplit(str(web_app.get("url", "")))
        if parts.scheme != "https" or not parts.netloc:
            raise _bad("BUTTON_URL_INVALID", detail=f"{path}.web_app.url must be an HTTPS URL")


def _check_web_apps(chat: FakeChat, markup: JSON | None) -> None:
    """Telegram allows ``web_app`` inline buttons only in private chats."""
    rows = (markup or {}).get("inline_keyboard") or []
    if chat.type != "private" and any("web_app" in button for row in rows for button in row):
        raise _bad("BUTTON_TYPE_INVALID", detail=f"a web_app button in a {chat.type} chat")


def _normalize_markup(markup: Any) -> JSON | None:
    """Drop ``null``/``false`` fields; an empty inline keyboard is no keyboard (as on Telegram)."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if v is not None and v is not False}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    if not isinstance(markup, dict):
        return None
    cleaned: JSON = clean(markup)
    if "inline_keyboard" in cleaned and not any(cleaned["inline_keyboard"]):
        return None
    return cleaned
