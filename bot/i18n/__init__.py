"""Languages of the bot: Spanish (default), Galician, French, Portuguese, English and Basque.

Source strings are English msgids in the code, marked for extraction with ``_("...")``, ``gettext(...)``,
``ngettext(singular, plural, n)`` or, for constants translated later, :func:`N_` (a no-op). The catalogues are
``bot/i18n/locale/<lang>/LC_MESSAGES/messages.po``, read with Babel and compiled in memory on first use (no
build step). Any string without a translation is shown in English.

Use::

    from bot.i18n import translator, normalize_language
    from bot.i18n.common import NOT_YOUR_TURN, LANGUAGE_SET

    t = translator(normalize_language(user_language_code))
    t.gettext(NOT_YOUR_TURN)
    t.format(LANGUAGE_SET, language=LANGUAGE_NAMES[t.lang])
    t.nformat(N_("{n} stone"), N_("{n} stones"), 3)   # n is also given as the {n} placeholder

Adding or changing a string: write it in English in the code (``N_("...")`` around a literal you pass to
``format``/``nformat``), run ``python -m bot.i18n.extract`` (updates ``locale/messages.pot`` and every
``.po``), fill in the empty ``msgstr`` of each language, and run ``pytest tests/unit/test_i18n.py``, which
fails on any missing, fuzzy or stale translation and on changed ``{placeholders}``.

Rules texts for players (``/rules``) live in ``rules/<lang>/`` and are read by :mod:`bot.i18n.rules`. The
words of the game in each language (``glossary/<lang>.toml``, :mod:`bot.i18n.glossary`) are checked against
the catalogues and rules texts by ``tests/unit/test_glossary.py``; see ``docs/translating.md``.
"""

from __future__ import annotations

from bot.i18n.catalog import Translator, translator
from bot.i18n.languages import DEFAULT_LANGUAGE, LANGUAGE_NAMES, LANGUAGES, normalize_language
from bot.i18n.markers import N_

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "N_",
    "Translator",
    "normalize_language",
    "translator",
]
