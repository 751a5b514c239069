"""Every language speaks Mus the way its players do: the catalogues and rules texts against the glossaries.

``bot/i18n/glossary/<lang>.toml`` gives each game term's word and the forms it replaces; a catalogue (its
translations, or the English msgids) or a rules text that uses a replaced form fails here, naming the string.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from bot.i18n import LANGUAGES
from bot.i18n.catalog import read_catalog
from bot.i18n.glossary import (
    CORE_TERMS,
    GLOSSARY_DIR,
    Offence,
    Term,
    form_pattern,
    glossary,
    offences,
    parse_glossary,
)

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "bot" / "i18n" / "rules"
LESSONS_DIR = ROOT / "bot" / "i18n" / "lessons"
NBSP = "\u00a0"


def catalogue_texts(lang: str, catalog: Catalog) -> Iterator[tuple[str, str]]:
    """(where, text) of every live entry a reader of ``lang`` sees: translations, or English msgids."""
    for message in catalog:
        if not message.id:
            continue
        ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
        strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
        for text in ids if lang == "en" else strings:
            if text:
                yield f"msgid {ids[0]!r}", text


def rules_texts(lang: str) -> Iterator[tuple[str, str]]:
    """(where, text) of each line of the language's rules texts."""
    for name in ("summary.md", "full.md"):
        path = RULES_DIR / lang / name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                yield f"rules/{lang}/{name}:{number}", line


def lesson_texts(lang: str) -> Iterator[tuple[str, str]]:
    """(where, text) of each text of the language's lessons (``/learn``): titles, explanations, answers."""
    path = LESSONS_DIR / f"{lang}.toml"
    for key, lesson in tomllib.loads(path.read_text(encoding="utf-8")).items():
        yield f"lessons/{lang}.toml [{key}] title", lesson["title"]
        for step, texts in lesson.items():
            if isinstance(texts, dict):
                for name, text in texts.items():
                    yield f"lessons/{lang}.toml [{key}.{step}] {name}", text


def report(lang: str, found: list[tuple[str, Offence]]) -> str:
    """A failure message: each offending string or line, the form found and the word to use."""
    return f"{lang}: forms the glossary replaces:\n" + "\n".join(
        f"  {where}: {o.found!r} ({o.term}: use {o.use!r})" for where, o in found
    )


def check(lang: str, texts: Iterator[tuple[str, str]]) -> list[tuple[str, Offence]]:
    """Every replaced form of ``lang``'s glossary in ``texts``, with where it was found."""
    terms = glossary(lang)
    return [(where, o) for where, text in texts for o in offences(terms, text)]


# --- the glossaries ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_has_a_glossary_with_every_term(lang: str) -> None:
    assert (GLOSSARY_DIR / f"{lang}.toml").is_file()
    terms = glossary(lang)
    missing = [key for key in CORE_TERMS if key not in terms]
    assert not missing, f"{lang}: glossary lacks {missing}"
    for term in terms.values():
        for form in term.replaces + term.exact:
            assert not form_pattern(form).fullmatch(term.use), f"{lang}: {term.key} replaces its own word"


def test_no_glossary_for_an_unknown_language() -> None:
    with pytest.raises(ValueError):
        glossary("de")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_canonical_word_is_used(lang: str) -> None:
    """A glossary word nobody uses is a glossary out of date (or a catalogue that says it otherwise)."""
    texts = [text for _, text in catalogue_texts(lang, read_catalog(lang))]
    texts += [text for _, text in rules_texts(lang)]
    texts += [text for _, text in lesson_texts(lang)]
    corpus = "\n".join(texts).lower()
    unused = [term.use for term in glossary(lang).values() if term.use.lower() not in corpus]
    assert not unused, f"{lang}: glossary words used nowhere: {unused}"


# --- the check ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_catalogue_uses_the_glossary(lang: str) -> None:
    found = check(lang, catalogue_texts(lang, read_catalog(lang)))
    assert not found, report(lang, found)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_texts_use_the_glossary(lang: str) -> None:
    found = check(lang, rules_texts(lang))
    assert not found, report(lang, found)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lesson_texts_use_the_glossary(lang: str) -> None:
    found = check(lang, lesson_texts(lang))
    assert not found, report(lang, found)


def test_planted_forms_are_caught() -> None:
    """The check can fail: Spanish words planted in Galician, French and Portuguese texts are found."""
    gl = {o.term for o in offences(glossary("gl"), "JUEGO: 3 piedras · quiero · dos reyes")}
    assert gl == {"juego", "stone", "quiero", "dos_reyes"}
    assert {o.term for o in offences(glossary("pt"), "Ganham 2 piedras. O mano fala.")} == {"stone", "mano"}
    fr = offences(glossary("fr"), "GRANDE : la plus grande carte gagne ; envido 2")
    assert [(o.term, o.found) for o in fr] == [("grande", "GRANDE"), ("envido", "envido")]
    assert offences(glossary("es"), "Brais: subo 5 → 7")[0].term == "raise"
    assert not offences(glossary("gl"), "O xogo: 3 pedras · quero · dous reis")


@pytest.mark.parametrize(
    ("lang", "text", "terms"),
    [
        # The words the second pass took out (issue 26): each one fails the check if it comes back.
        ("es", "¡Pillada! · ⚡ Pillarla · En juego: 2 · Tu lado 40", {"catch", "stake", "us"}),
        ("gl", "Collida! · refusado (deje de 1) · En xogo: 2 · O teu lado", {"catch", "deje", "stake", "us"}),
        (
            "pt",
            "→ par · juego 32 · punto +1 · o deje · um clarão · Em jogo: 2",
            {"juego", "punto", "deje", "flash", "stake"},
        ),
        (
            "fr",
            "Lance : GRAND · les coups · 4 amarracos · aveugle · en paso · deje · En jeu : 2",
            {"lance", "amarraco", "ciego", "paso", "deje", "stake"},
        ),
        (
            "en",
            "🂡 Hand 2 · showdown · the deje · two ases · a rey, a caballo, a sota",
            {"count", "deje", "ace", "king", "knight", "jack"},
        ),
        (
            "eu",
            "1 harri · 1 tanto · en paso · dejea · joko osoa · 2 joko · Jokoan: 2",
            {"stone", "paso", "deje", "game", "stake"},
        ),
    ],
)
def test_second_pass_forms_are_caught(lang: str, text: str, terms: set[str]) -> None:
    assert {o.term for o in offences(glossary(lang), text)} == terms


def test_a_planted_catalogue_entry_fails_the_check() -> None:
    catalog = Catalog(locale="gl")
    catalog.add("JUEGO", "JUEGO")
    catalog.add("Options: {senas} · to {target} stones · {mode}", "Opcións: a {target} piedras")
    catalog.add(("{n} stone", "{n} stones"), ("{n} pedra", "{n} pedras"))
    found = check("gl", catalogue_texts("gl", catalog))
    assert [(where, o.found) for where, o in found] == [
        ("msgid 'JUEGO'", "JUEGO"),
        ("msgid 'Options: {senas} · to {target} stones · {mode}'", "piedras"),
    ]
    english = Catalog(locale="en")
    english.add("Turn of {name}", "Turn of {name}")
    assert [o.term for _, o in check("en", catalogue_texts("en", english))] == ["turn"]


@pytest.mark.parametrize(
    ("form", "text", "hits"),
    [
        ("piedra*", "3 piedras y 1 piedra", ["piedras", "piedra"]),
        ("piedra*", "empiedras", []),
        ("par", "partida, par, PAR", ["par", "PAR"]),
        ("no quiero", "No  quiero", ["No  quiero"]),
        ("subo {n}", "subo 5 · subo N · subo {n} · subo", ["subo 5", "subo N", "subo {n}"]),
        ("señ*", "señak · señekin · seña", ["señak", "señekin", "seña"]),
        ("órdago", "hordago · órdago", ["órdago"]),
    ],
)
def test_form_patterns(form: str, text: str, hits: list[str]) -> None:
    assert [m.group(0) for m in form_pattern(form).finditer(text)] == hits


def test_placeholders_are_not_words() -> None:
    """A placeholder's name is code (the player reads its value); ``{n}`` stands for a number in forms."""
    terms = {"deje": Term("deje", "deixe", replaces=("deje", "subo {n}"))}
    assert offences(terms, "levan {deje} · {deje_n}") == []
    assert [o.found for o in offences(terms, "deje de {n} · subo {n}")] == ["deje", "subo {n}"]


def test_exact_forms_are_case_sensitive() -> None:
    terms = {"grande": Term("grande", "Grand", exact=("GRANDE",))}
    assert [o.found for o in offences(terms, "GRANDE · grande · Grande")] == ["GRANDE"]


@pytest.mark.parametrize(
    "text",
    [
        '[x]\nreplaces = ["a"]\n',
        '[x]\nuse = ""\n',
        '[x]\nuse = "a"\nreplace = ["b"]\n',
        '[x]\nuse = "a"\nexact = "b"\n',
    ],
)
def test_malformed_glossaries_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_glossary(text)


# --- French typography -------------------------------------------------------------------------------------

_FRENCH_SPACE = re.compile(r" [:;!?»]|« ")


def french_spacing(text: str) -> list[str]:
    """Spots where French wants a no-break space (before : ; ! ? », after «) and has an ordinary one."""
    return [m.group(0) for m in _FRENCH_SPACE.finditer(text)]


def test_french_uses_no_break_spaces() -> None:
    texts = [*catalogue_texts("fr", read_catalog("fr")), *rules_texts("fr"), *lesson_texts("fr")]
    bad = [(where, text) for where, text in texts if french_spacing(text)]
    assert not bad, "French: a no-break space (U+00A0) before : ; ! ? » and after «:\n" + "\n".join(
        f"  {where}: {text!r}" for where, text in bad
    )


def test_french_spacing_check_can_fail() -> None:
    assert french_spacing("Score : 3 ; « oui » !") == [" :", " ;", "« ", " »", " !"]
    assert french_spacing(f"Score{NBSP}: 3{NBSP}; «{NBSP}oui{NBSP}»{NBSP}! https://x:8") == []
