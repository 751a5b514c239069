"""Marker for strings that are translated later.

``N_("...")`` returns its argument unchanged; it only tells the extractor (``python -m bot.i18n.extract``)
that the literal is a msgid. Use it for module-level constants, enum labels and button captions that are
translated when they are shown, with the reader's language::

    from bot.i18n.markers import N_

    NOT_YOUR_TURN = N_("Not your turn.")
    ...
    translator(lang).gettext(NOT_YOUR_TURN)
"""

from __future__ import annotations


def N_(s: str) -> str:
    """Return ``s`` unchanged: marks a msgid for extraction without translating it."""
    return s
