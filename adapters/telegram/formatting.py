"""The core's light Markdown (``**bold**``, ``-`` list items) as Telegram HTML.

Views with ``markdown=True`` (the rules) are sent with ``parse_mode="HTML"``. HTML rather than
MarkdownV2: only ``&``, ``<`` and ``>`` need escaping, so translated texts full of ``.``, ``-``, ``(`` and
``!`` go through unchanged, and a text is never rejected for a character the translator typed.
"""

from __future__ import annotations

import re
from html import escape

from telegram.constants import ParseMode

PARSE_MODE = ParseMode.HTML

_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITEM = re.compile(r"^(\s*)[-*] ", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6} +(.+?)\s*$", re.MULTILINE)


def markdown_to_html(text: str) -> str:
    """``text`` escaped for Telegram HTML, ``**bold**`` as ``<b>``, list items as ``•``, headings bold.

    Bold never spans lines, so an unpaired ``**`` cannot swallow the rest of a message (it is dropped).
    """
    html = escape(text, quote=False)
    html = _HEADING.sub(r"**\1**", html)
    html = _ITEM.sub(r"\1• ", html)
    return "\n".join(_BOLD.sub(r"<b>\1</b>", line).replace("**", "") for line in html.split("\n"))
