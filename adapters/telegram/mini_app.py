"""The web table as Telegram opens it: a Mini App, whose ``initData`` says who opens it (checked by the web
adapter, :mod:`adapters.web.auth`), so no address Telegram shows holds a credential.

Telegram opens a web app from an inline button only in a private chat, and only over HTTPS: the private
hand's "🃏 Open the table" is a ``web_app`` button to the table's page (``WEB_PUBLIC_URL/t/<table>``). A
group needs a plain link to the Mini App registered with @BotFather's ``/newapp``, whose short name is
``TELEGRAM_MINIAPP_NAME``: its direct link ``https://t.me/<bot>/<app>?startapp=<table>``, which Telegram
opens at the app's registered address with the table in ``initData``'s ``start_param`` (and in the
``tgWebAppStartParam`` query parameter). Without an HTTPS ``WEB_PUBLIC_URL`` there is no button to the web
table in Telegram; without ``TELEGRAM_MINIAPP_NAME``, none in groups.
"""

from __future__ import annotations

import logging

from adapters.telegram.ids import PREFIX
from adapters.telegram.settings import TelegramSettings
from bot.kernel import WebAccess, WebDoor

log = logging.getLogger(__name__)

#: The chat keys' prefix of Telegram (``tg``), which names its door.
PLATFORM = PREFIX.rstrip(":")


def telegram_door(web: WebAccess, settings: TelegramSettings, bot_username: str) -> WebDoor:
    """Telegram's ways to the web table ``web`` serves, for the bot ``bot_username``."""
    if not web.links.base_url.startswith("https://"):
        return WebDoor()  # Telegram opens web apps over HTTPS only
    app = settings.miniapp_name
    group_link = f"https://t.me/{bot_username}/{app}?startapp={{table}}" if app and bot_username else ""
    return WebDoor(in_private=True, group_link=group_link)


def open_doors(web: WebAccess | None, settings: TelegramSettings, bot_username: str) -> None:
    """Set Telegram's door to the web table, if there is one (``musbot run`` with ``WEB_SECRET`` and
    ``WEB_PUBLIC_URL``), once the bot's username is known."""
    if web is None:
        return
    door = telegram_door(web, settings, bot_username)
    web.doors[PLATFORM] = door
    if door == WebDoor():
        log.warning("WEB_PUBLIC_URL is not HTTPS: Telegram cannot open the web table, no button leads there")
    elif not door.group_link:
        log.info("no TELEGRAM_MINIAPP_NAME: the web table opens from private hands only, not from groups")
