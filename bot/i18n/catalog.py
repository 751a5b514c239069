"""Runtime catalogues: read the ``.po`` files with Babel, compile them in memory, hand out translators.

No compile step is needed at install time: the first :func:`translator` call for a language reads
``locale/<lang>/LC_MESSAGES/messages.po`` (through :mod:`importlib.resources`, so it works from an installed
package), compiles it into an in-memory ``.mo`` and keeps the result for the life of the process.
"""

from __future__ import annotations

import gettext as _gettext
import logging
import threading
from importlib import resources
from io import BytesIO
from typing import Any, Final

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from bot.i18n.languages import normalize_language

#: gettext domain (file name of every catalogue, without extension).
DOMAIN: Final[str] = "messages"

_log = logging.getLogger(__name__)

_cache: dict[str, Translator] = {}
_lock = threading.Lock()


class Translator:
    """Translations for one language. Any msgid without a (non-fuzzy) translation comes back in English."""

    __slots__ = ("_translations", "lang")

    def __init__(self, lang: str, translations: _gettext.NullTranslations) -> None:
        self.lang = lang
        self._translations = translations

    def __repr__(self) -> str:
        return f"Translator({self.lang!r})"

    def gettext(self, msgid: str) -> str:
        """Translate ``msgid``."""
        return self._translations.gettext(msgid)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """Translate the singular or plural form, whichever the language uses for ``n``."""
        return self._translations.ngettext(singular, plural, n)

    def format(self, msgid: str, /, **kwargs: Any) -> str:
        """Translate ``msgid`` and fill its ``{named}`` placeholders with ``str.format``.

        The msgid must be a literal marked for extraction elsewhere (``N_("...")``) or a constant defined
        with ``N_``: the extractor does not look inside ``format(...)`` calls.
        """
        return _fill(self.gettext(msgid), msgid, kwargs)

    def nformat(self, singular: str, plural: str, n: int, /, **kwargs: Any) -> str:
        """Like :meth:`ngettext` then ``str.format``; ``n`` is also available as the ``{n}`` placeholder."""
        kwargs.setdefault("n", n)
        fallback = singular if n == 1 else plural
        return _fill(self.ngettext(singular, plural, n), fallback, kwargs)


def _fill(text: str, fallback: str, kwargs: dict[str, Any]) -> str:
    try:
        return text.format(**kwargs)
    except (KeyError, IndexError, ValueError):
        # A broken translation (a renamed placeholder) must not break the game: show the English text.
        return fallback.format(**kwargs)


def po_resource(lang: str) -> resources.abc.Traversable:
    """The packaged ``.po`` file of ``lang`` (a supported language code)."""
    return resources.files("bot.i18n").joinpath("locale", lang, "LC_MESSAGES", f"{DOMAIN}.po")


def read_catalog(lang: str) -> Catalog:
    """Parse the packaged ``.po`` file of ``lang``."""
    with po_resource(lang).open("rb") as fp:
        return read_po(fp, locale=lang, domain=DOMAIN)


def compile_catalog(catalog: Catalog) -> Translations:
    """Compile a Babel catalogue in memory into a ``gettext``-compatible translations object.

    Fuzzy and untranslated entries are left out, so they fall back to the English msgid.
    """
    buf = BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return Translations(buf, domain=DOMAIN)


def _load(lang: str) -> Translator:
    try:
        translations: _gettext.NullTranslations = compile_catalog(read_catalog(lang))
    except FileNotFoundError:
        _log.warning("no catalogue for %r: showing the English msgids", lang)
        translations = _gettext.NullTranslations()
    return Translator(lang, translations)


def translator(lang: str | None) -> Translator:
    """The translator for ``lang`` (any client code; unsupported → the default language), cached."""
    code = normalize_language(lang)
    found = _cache.get(code)
    if found is None:
        with _lock:
            found = _cache.get(code)
            if found is None:
                found = _cache[code] = _load(code)
    return found


def clear_cache() -> None:
    """Forget loaded catalogues (tests, or after editing ``.po`` files in a running process)."""
    with _lock:
        _cache.clear()
