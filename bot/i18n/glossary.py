"""The words of the game in each language: one glossary per language, and a check of texts against it.

``glossary/<lang>.toml`` lists, for every game term (the lances, mus, the bets and answers, pares, the mano,
stones and amarracos, game/vaca/match, señas and their names…), the word players of that language use and
the forms it replaces: Spanish words left in another language's interface, or a second word for the same
thing. Each term is one TOML table::

    [juego]
    use = "xogo"                    # the canonical word (it must appear in the catalogue or the rules)
    replaces = ["juego"]            # forms that must not appear (any case, whole words)
    exact = ["GRANDE"]              # forms that must not appear written exactly so (case-sensitive)
    note = "the lance, and a game to 40"

In a form, ``*`` at the end stands for any word ending (``piedra*``: piedra, piedras) and ``{n}`` for a
number, ``N`` or the ``{n}`` placeholder (``subo {n}``). A text's other placeholders (``{deje}``,
``{team}``) are names in the code, never read by a player: the check skips them.
``tests/unit/test_glossary.py`` fails when a language's catalogue (its ``msgstr`` entries; the msgids for
English) or its rules texts use a replaced form.
The files live in the source tree beside the catalogues: they are for translators and tests, not read at
run time.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from bot.i18n.languages import LANGUAGES

#: Where the glossaries are (``<lang>.toml``).
GLOSSARY_DIR: Final[Path] = Path(__file__).resolve().parent / "glossary"

#: Terms every glossary defines (a language may add its own, e.g. its word for the private chat).
CORE_TERMS: Final[tuple[str, ...]] = (
    "grande",
    "chica",
    "pares",
    "juego",
    "punto",
    "mus",
    "no_mus",
    "paso",
    "envido",
    "raise",
    "quiero",
    "no_quiero",
    "ordago",
    "par",
    "medias",
    "duples",
    "mano",
    "stone",
    "amarraco",
    "game",
    "vaca",
    "match",
    "sena",
    "dos_reyes",
    "tres_reyes",
    "dos_ases",
    "tres_ases",
    "treinta_y_una",
    "ciego",
    "team",
    "partner",
)

_KEYS = frozenset({"use", "replaces", "exact", "note"})

#: A placeholder other than ``{n}`` (which forms match as a number): what a player reads there is a value.
_PLACEHOLDER = re.compile(r"\{(?!n\})\w*\}")


@dataclass(frozen=True)
class Term:
    """One game term in one language: the word to use and the forms it replaces."""

    key: str
    use: str
    replaces: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Offence:
    """A replaced form found in a text: which term, which glossary form, and the words as written."""

    term: str
    form: str
    found: str
    use: str


def form_pattern(form: str, *, exact: bool = False) -> re.Pattern[str]:
    """The regular expression of a glossary form: whole words, ``*`` = any ending, ``{n}`` = a number."""
    stem, wildcard = (form[:-1], True) if form.endswith("*") else (form, False)
    parts = []
    for word in stem.split():
        if word == "{n}":
            parts.append(r"(?:\d+|N|\{n\})")
        else:
            parts.append(re.escape(word))
    body = r"\s+".join(parts)
    tail = r"\w*" if wildcard else r"(?!\w)"
    return re.compile(rf"(?<!\w){body}{tail}", 0 if exact else re.IGNORECASE)


def parse_glossary(text: str) -> dict[str, Term]:
    """Read a glossary from TOML text (see the module docstring for the format)."""
    terms: dict[str, Term] = {}
    for key, table in tomllib.loads(text).items():
        if not isinstance(table, dict) or not isinstance(table.get("use"), str) or not table["use"]:
            raise ValueError(f"glossary term {key!r}: a table with a non-empty `use` string")
        unknown = set(table) - _KEYS
        if unknown:
            raise ValueError(f"glossary term {key!r}: unknown keys {sorted(unknown)}")
        lists = {}
        for name in ("replaces", "exact"):
            value = table.get(name, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ValueError(f"glossary term {key!r}: `{name}` must be a list of words")
            lists[name] = tuple(value)
        terms[key] = Term(key, table["use"], lists["replaces"], lists["exact"], str(table.get("note", "")))
    return terms


@cache
def glossary(lang: str) -> dict[str, Term]:
    """The glossary of ``lang`` (a supported language code), read from ``glossary/<lang>.toml``."""
    if lang not in LANGUAGES:
        raise ValueError(f"no glossary for {lang!r}")
    return parse_glossary((GLOSSARY_DIR / f"{lang}.toml").read_text(encoding="utf-8"))


def offences(terms: dict[str, Term], text: str) -> list[Offence]:
    """Every replaced form of ``terms`` that ``text`` uses, in glossary order (placeholders but ``{n}``
    skipped: ``{deje}`` is a name in the code, the player reads a number)."""
    text = _PLACEHOLDER.sub("{}", text)
    found: list[Offence] = []
    for term in terms.values():
        for form, exact in [(f, False) for f in term.replaces] + [(f, True) for f in term.exact]:
            for match in form_pattern(form, exact=exact).finditer(text):
                found.append(Offence(term.key, form, match.group(0), term.use))
    return found
