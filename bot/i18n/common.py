"""Generic answers and language-picker strings the service needs on every platform.

The constants are msgids (English), marked with :func:`~bot.i18n.markers.N_` so that the extractor finds
them; translate them when shown::

    translator(lang).gettext(NOT_YOUR_TURN)
    translator(lang).format(LANGUAGE_SET, language=LANGUAGE_NAMES[lang])
"""

from __future__ import annotations

from typing import Final

from bot.i18n.markers import N_

_ = N_  # extraction keyword `_`; these constants are translated later, per reader

# Language picker.
CHOOSE_LANGUAGE: Final[str] = _("Choose the language of this chat:")
# Translators: {language} is the native name of the language, e.g. "Euskara".
LANGUAGE_SET: Final[str] = _("Language set to {language}.")

# Short answers (button presses and commands). Keep them short: chat platforms show at most 200 characters.
NOT_YOUR_TURN: Final[str] = _("Not your turn.")
NOT_SEATED: Final[str] = _("You are not seated at this table.")
STALE_BUTTON: Final[str] = _("That button is no longer valid.")
ALREADY_PLAYED: Final[str] = _("Already played.")
INTERNAL_ERROR: Final[str] = _("Something went wrong; the game is safe. Try again.")
STORE_UNAVAILABLE: Final[str] = _("The game store is unavailable right now; try again in a moment.")
UNKNOWN_COMMAND: Final[str] = _("Unknown command.")
