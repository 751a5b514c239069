"""The ways from a chat to the web table, drawn as buttons where the table's platform has them
(:class:`bot.kernel.WebAccess`: each platform's door, set by its adapter; none without a web table).

- **Where the platform opens the page as an app** (a Telegram Mini App, which proves who opens it): the
  table message and the private hand carry "🃏 Open the table", a ``web_app`` button to the table's page —
  an address without a credential, the same for everyone. The adapter shows it as its chats allow (Telegram:
  the app itself in a private chat, a link to the app's direct link in a group, or nothing).
- **Elsewhere** (Discord): the table's "🃏 Table" is a button of the bot's; its press answers the presser
  alone with their own signed link (:meth:`bot.app.Service.press`), which is never posted in the chat.
"""

from __future__ import annotations

from bot.i18n import Translator
from bot.i18n.markers import N_
from bot.kernel import Button, TableState, WebAccess, hand_stamp, make_token

_ = N_

OPEN_TABLE = _("🃏 Open the table")
# Translators: a button on the table's message; its press answers with the presser's own link to the table.
TABLE_BUTTON = _("🃏 Table")
MY_CARDS = _("🂠 My cards")


def own_row(t: Translator, table: TableState, web: WebAccess | None) -> list[tuple[Button, ...]]:
    """The table message's last row: "My cards" (where someone plays) and the way to the web table (where
    the platform has one), or no row."""
    row: list[Button] = []
    if any(s.human for s in table.seats):
        row.append(Button(t.gettext(MY_CARDS), make_token(table.id, hand_stamp(table.hand_no), "cards")))
    door = table_door(t, table, web)
    if door is not None:
        row.append(door)
    return [tuple(row)] if row else []


def table_door(t: Translator, table: TableState, web: WebAccess | None) -> Button | None:
    """The table message's way to the web table: the app, or the button that answers with one's own link;
    ``None`` where there is none."""
    if web is None:
        return None
    door = web.door(table.chat)
    if door.app:
        return Button.link(t.gettext(OPEN_TABLE), web.links.page(table.id), web_app=True)
    if door.on_press:
        return Button(t.gettext(TABLE_BUTTON), make_token(table.id, hand_stamp(table.hand_no), "web"))
    return None


def hand_door(t: Translator, table: TableState, web: WebAccess | None) -> Button | None:
    """The private hand's way to the web table: the app, opened inside the player's private chat, where the
    platform has one (at a table played in that very chat, the table message offers it already)."""
    if web is None or table.private or not web.door(table.chat).app:
        return None
    return Button.link(t.gettext(OPEN_TABLE), web.links.page(table.id), web_app=True)
