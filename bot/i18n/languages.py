"""The languages the bot speaks, and how a client's language code maps onto them."""

from __future__ import annotations

import re
from typing import Final

#: Supported languages (ISO 639-1 codes), the default first.
LANGUAGES: Final[tuple[str, ...]] = ("es", "gl", "fr", "pt", "en", "eu")

#: The language used for a chat that never chose one and for any unsupported code.
DEFAULT_LANGUAGE: Final[str] = "es"

#: Native names, for a language picker (never translated: each name is shown in its own language).
LANGUAGE_NAMES: Final[dict[str, str]] = {
    "es": "Español",
    "gl": "Galego",
    "fr": "Français",
    "pt": "Português",
    "en": "English",
    "eu": "Euskara",
}

#: The plural rule written into each catalogue (the usual gettext ones; CLDR's extra "many" forms for
#: millions in es/fr/pt are not worth three msgstr entries per string in a card game).
PLURAL_FORMS: Final[dict[str, str]] = {
    "es": "nplurals=2; plural=(n != 1);",
    "gl": "nplurals=2; plural=(n != 1);",
    "fr": "nplurals=2; plural=(n > 1);",
    "pt": "nplurals=2; plural=(n != 1);",
    "en": "nplurals=2; plural=(n != 1);",
    "eu": "nplurals=2; plural=(n != 1);",
}

# A few three-letter and legacy codes some clients send.
_ALIASES: Final[dict[str, str]] = {
    "spa": "es",
    "glg": "gl",
    "fra": "fr",
    "fre": "fr",
    "por": "pt",
    "eng": "en",
    "eus": "eu",
    "baq": "eu",
}

_SEPARATORS = re.compile(r"[-_.@\s]")


def normalize_language(code: str | None) -> str:
    """Map a client language code to a supported language.

    Accepts what Telegram (``"pt-br"``), Discord (``"pt-BR"``, ``"en-US"``) or a POSIX locale
    (``"en_US.UTF-8"``) send, in any case; anything unsupported, empty or ``None`` gives
    :data:`DEFAULT_LANGUAGE`.

    >>> normalize_language("pt-BR"), normalize_language("EU"), normalize_language("de")
    ('pt', 'eu', 'es')
    """
    if not code:
        return DEFAULT_LANGUAGE
    primary = _SEPARATORS.split(code.strip().lower(), maxsplit=1)[0]
    primary = _ALIASES.get(primary, primary)
    return primary if primary in LANGUAGES else DEFAULT_LANGUAGE
