"""The web table as Telegram opens it: a Mini App, whose ``initData`` says who opens it (checked by the web
adapter, :mod:`adapters.web.auth`), so no address Telegram shows holds a credential.

The core draws its way to the web table as a ``web_app`` button to the table's page
(``WEB_PUBLIC_URL/t/<table>``) on the table message and the private hands (:func:`open_door`: only over
HTTPS, the only web apps Telegram opens). Telegram allows ``web_app`` buttons only in private chats; in a
group the button becomes a plain link to the Mini App registered with @BotFather's ``/newapp``, whose short
name is ``TELEGRAM_MINIAPP_NAME``: its direct link ``https://t.me/<bot>/<app>?startapp=<table>``, which
Telegram opens at the app's registered address with the table in ``initData``'s ``start_param`` (and in the
``tgWebAppStartParam`` query parameter). Without ``TELEGRAM_MINIAPP_NAME`` a group shows no such button
(:func:`app_button`).
"""

from __future__ import annotations

from telegram import InlineKeyboardButton, WebAppInfo

from adapters.telegram.ids import PREFIX
from bot.kernel import WebAccess, WebDoor

#: The chat keys' prefix of Telegram (``tg``), which names its door.
PLATFORM = PREFIX.rstrip(":")


def open_door(web: WebAccess | None) -> WebDoor | None:
    """Set (and return) Telegram's door to the web table ``web`` serves: the Mini App, when it is served
    over HTTPS. Every worker sets it, whichever platforms it serves: all draw Telegram's views alike."""
    if web is None:
        return None
    door = WebDoor(app=web.links.base_url.startswith("https://"))
    web.doors[PLATFORM] = door
    return door


def app_button(
    label: str, page: str, table: str, chat_id: int, bot_username: str, app_name: str | None
) -> InlineKeyboardButton | None:
    """The core's ``web_app`` button to ``page`` (the page of ``table``) as chat ``chat_id`` allows it: the
    Mini App itself in a private chat (a person's id is positive), a link to the app's direct link in a
    group, or ``None`` where neither is possible (no app named, the bot's username unknown)."""
    if chat_id > 0:
        return InlineKeyboardButton(label, web_app=WebAppInfo(page))
    if app_name and bot_username and table:
        return InlineKeyboardButton(label, url=f"https://t.me/{bot_username}/{app_name}?startapp={table}")
    return None
