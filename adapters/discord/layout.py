"""The core's views as Discord messages: text within 2,000 characters and buttons within 5 rows of 5.

Every component is a persistent :class:`discord.ui.DynamicItem` whose ``custom_id`` carries the core's
token, so a press works after a restart and on any worker (a link button, which opens an address, carries
none); a button's colour says what it does (:mod:`adapters.discord.styles`). Buttons keep the view's rows (a
row longer than five is wrapped); when they need more than five rows, the last ones become select menus of up
to 25 choices each (the amount picker's every legal bet), each menu alone in its row, as Discord requires. A
menu's ``custom_id`` is ``menu:<n>``; the token is the chosen option's value.

A view with a file (a match's export) is sent with it as an attachment (:func:`files_of`).

Text: views in light Markdown are Discord Markdown already; plain views are escaped, so a player called
``*Ane*`` is not shown in italics. Commands the core names (``/newgame``, ``/rules full``) are written
as Discord does, a mention of the ``/mus`` group's command with its real options
(:mod:`adapters.discord.mentions`). The turn's clock counts down live (:func:`live_clock`: Discord's
``<t:…:R>`` timestamps). Mentions are never pinged (see :data:`NO_MENTIONS`).
"""

from __future__ import annotations

import io
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import discord
from discord.ui import Button, DynamicItem, Select

from adapters.discord.mentions import rewrite
from adapters.discord.styles import style_of
from bot.kernel import Button as ViewButton
from bot.kernel import OutMessage

MAX_TEXT = 2000
MAX_ROWS = 5
MAX_PER_ROW = 5
MAX_OPTIONS = 25
MAX_LABEL = 80
MAX_OPTION_LABEL = 100
MENU_PREFIX = "menu:"
#: The turn's clock as the core writes it (``⏱ 60 s``), which a live countdown replaces.
_CLOCK_RE = re.compile(r"⏱ \d+ s")
#: Nobody is pinged by the bot's messages, whatever a player's name contains.
NO_MENTIONS = discord.AllowedMentions.none()

#: What a press calls: (interaction, the token it carries).
PressHandler = Callable[[discord.Interaction[Any], str], Awaitable[None]]


def press_handler(interaction: discord.Interaction[Any]) -> PressHandler:
    """The adapter's press handler, held by the client (one client, one service)."""
    handler: PressHandler | None = getattr(interaction.client, "press_handler", None)
    if handler is None:
        raise RuntimeError("the Discord client has no press_handler")
    return handler


class TokenButton(DynamicItem[Button[Any]], template=r"(?!menu:)(?P<token>.{1,100})"):
    """A button whose ``custom_id`` is a token; any other custom id is a stale or forged press."""

    def __init__(
        self,
        token: str,
        label: str = "·",
        row: int | None = None,
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
    ) -> None:
        """A button carrying ``token`` under ``label``, in ``style``'s colour."""
        super().__init__(Button(label=label[:MAX_LABEL] or "·", custom_id=token, style=style, row=row))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> TokenButton:
        """Rebuild the button from a press (its token is the custom id)."""
        return cls(match["token"], getattr(item, "label", None) or "·")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Hand the press to the adapter."""
        await press_handler(interaction)(interaction, self.item.custom_id or "")


class TokenMenu(DynamicItem[Select[Any]], template=r"menu:(?P<n>\d)"):
    """A select menu whose options' values are tokens (more choices than five rows of buttons hold)."""

    def __init__(self, n: int, choices: Sequence[ViewButton] = (), row: int | None = None) -> None:
        """Menu number ``n`` offering ``choices``."""
        options = [
            discord.SelectOption(label=c.label[:MAX_OPTION_LABEL] or "·", value=c.token) for c in choices
        ] or [discord.SelectOption(label="·", value="-")]
        super().__init__(Select(custom_id=f"{MENU_PREFIX}{n}", options=options, row=row))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> TokenMenu:
        """Rebuild the menu from a choice (the token is the chosen value)."""
        menu = cls(int(match["n"]))
        if isinstance(item, Select):
            menu.item.options = item.options
        return menu

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Hand the chosen token to the adapter."""
        values = self.item.values
        await press_handler(interaction)(interaction, values[0] if values else "")


def _wrapped_rows(rows: Sequence[Sequence[ViewButton]]) -> list[list[ViewButton]]:
    out: list[list[ViewButton]] = []
    for row in rows:
        for start in range(0, len(row), MAX_PER_ROW):
            out.append(list(row[start : start + MAX_PER_ROW]))
    return [row for row in out if row]


def arrange(rows: Sequence[Sequence[ViewButton]]) -> tuple[list[list[ViewButton]], list[list[ViewButton]]]:
    """The button rows to show and the menus that take the rest: at most five rows in all."""
    wrapped = _wrapped_rows(rows)
    if len(wrapped) <= MAX_ROWS:
        return wrapped, []
    for kept in range(MAX_ROWS - 1, -1, -1):
        rest = [b for row in wrapped[kept:] for b in row]
        menus = [rest[i : i + MAX_OPTIONS] for i in range(0, len(rest), MAX_OPTIONS)]
        if kept + len(menus) <= MAX_ROWS:
            return wrapped[:kept], menus
    # More than 125 choices: no view of ours has that many; keep what fits.
    rest = [b for row in wrapped for b in row][: MAX_ROWS * MAX_OPTIONS]
    return [], [rest[i : i + MAX_OPTIONS] for i in range(0, len(rest), MAX_OPTIONS)]


def view_of(message: OutMessage) -> discord.ui.View | None:
    """The components of a view (``None`` when it has no buttons)."""
    if not any(message.buttons):
        return None
    rows, menus = arrange(message.buttons)
    view = discord.ui.View(timeout=None)
    for index, row in enumerate(rows):
        for button in row:
            if button.opens:  # a link: Discord opens it in the browser (no app opens inside a channel)
                view.add_item(Button(label=button.label[:MAX_LABEL] or "·", url=button.url, row=index))
            else:
                style = style_of(button.token)
                view.add_item(TokenButton(button.token, button.label, row=index, style=style))
    for n, choices in enumerate(menus):
        # (a menu's choices send tokens: a link has no place there)
        view.add_item(TokenMenu(n, [c for c in choices if not c.opens], row=len(rows) + n))
    return view


def files_of(message: OutMessage) -> dict[str, Any]:
    """The attachment of a view with a file (``{"file": …}``, to pass to a send), else nothing."""
    if message.document is None:
        return {}
    name, content = message.document
    return {"file": discord.File(io.BytesIO(content.encode("utf-8")), filename=name)}


def live_clock(text: str, deadline: float) -> str:
    """``text`` whose turn clock (``⏱ 60 s``) counts down live to ``deadline`` (Discord draws
    ``<t:…:R>`` as "in 58 seconds" in each reader's language and keeps it current: no edit is needed);
    appended on a line of its own if the text has no clock."""
    if not deadline:
        return text
    clock = f"⏱ <t:{round(deadline)}:R>"
    text, found = _CLOCK_RE.subn(clock, text, count=1)
    return text if found else f"{text}\n{clock}"


def written(message: OutMessage, commands: Mapping[str, str] | None = None) -> str:
    """A view's text as Discord shows it: Markdown views as they are, plain ones escaped, commands as Discord
    writes them (``commands``: :func:`adapters.discord.mentions.names`), the turn's clock live."""
    text = message.text if message.markdown else discord.utils.escape_markdown(message.text)
    return live_clock(rewrite(text, commands), message.deadline)


def text_of(message: OutMessage, commands: Mapping[str, str] | None = None) -> str:
    """The message content: the view's text :func:`written` for Discord, within 2,000 characters."""
    text = written(message, commands)
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 1] + "…"
    return text or "…"
