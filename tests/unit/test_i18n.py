"""Languages layer: catalogues complete and in sync with the code, placeholders, codes, rules texts."""

from __future__ import annotations

import ast
import re
import string
from io import BytesIO
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po

from bot.i18n import (
    DEFAULT_LANGUAGE,
    LANGUAGE_NAMES,
    LANGUAGES,
    N_,
    Translator,
    common,
    normalize_language,
    translator,
)
from bot.i18n.catalog import compile_catalog, read_catalog
from bot.i18n.extract import PROJECT_ROOT, SOURCE_DIRS, extract_template, is_translated, run
from bot.i18n.glossary import glossary
from bot.i18n.languages import PLURAL_FORMS
from bot.i18n.rules import rules_full, rules_sections, rules_summary

ROOT = Path(__file__).resolve().parents[2]
LOCALE_DIR = ROOT / "bot" / "i18n" / "locale"


@pytest.fixture(scope="module")
def template() -> Catalog:
    return extract_template(ROOT)


def _ids(catalog: Catalog) -> set[str | tuple[str, ...]]:
    return {m.id if isinstance(m.id, str) else tuple(m.id) for m in catalog if m.id}


def _strings(message: Message) -> tuple[str, ...]:
    return tuple(message.string) if isinstance(message.string, (tuple, list)) else (message.string,)


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


# --- languages ---------------------------------------------------------------------------------------------


def test_languages() -> None:
    assert LANGUAGES == ("es", "gl", "fr", "pt", "en", "eu")
    assert DEFAULT_LANGUAGE == "es"
    assert set(LANGUAGE_NAMES) == set(LANGUAGES) == set(PLURAL_FORMS)
    assert LANGUAGE_NAMES["eu"] == "Euskara" and LANGUAGE_NAMES["gl"] == "Galego"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("es", "es"),
        ("pt-BR", "pt"),
        ("pt-br", "pt"),
        ("en_US", "en"),
        ("en-GB", "en"),
        ("en_US.UTF-8", "en"),
        ("EU", "eu"),
        ("eu-ES", "eu"),
        ("gl", "gl"),
        ("gl_ES", "gl"),
        ("fr-CA", "fr"),
        ("es-419", "es"),
        ("eus", "eu"),
        (" fr ", "fr"),
        (None, "es"),
        ("", "es"),
        ("de", "es"),
        ("ca", "es"),
        ("zh-Hans", "es"),
        ("-", "es"),
    ],
)
def test_normalize_language(code: str | None, expected: str) -> None:
    assert normalize_language(code) == expected


# --- catalogues --------------------------------------------------------------------------------------------


def test_template_holds_the_common_strings(template: Catalog) -> None:
    ids = _ids(template)
    for msgid in (
        common.NOT_YOUR_TURN,
        common.NOT_SEATED,
        common.STALE_BUTTON,
        common.ALREADY_PLAYED,
        common.INTERNAL_ERROR,
        common.STORE_UNAVAILABLE,
        common.LANGUAGE_SET,
        common.UNKNOWN_COMMAND,
        common.CHOOSE_LANGUAGE,
    ):
        assert msgid in ids


def test_pot_file_matches_the_code(template: Catalog) -> None:
    with (LOCALE_DIR / "messages.pot").open("rb") as fp:
        pot = read_po(fp)
    assert _ids(pot) == _ids(template), "run `python -m bot.i18n.extract`"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_po_parses(lang: str) -> None:
    assert (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").is_file()
    catalog = read_catalog(lang)
    assert str(catalog.locale) == lang
    assert catalog.plural_forms == PLURAL_FORMS[lang]
    compile_catalog(catalog)  # compiles to a .mo in memory


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_msgid_is_translated(lang: str, template: Catalog) -> None:
    catalog = read_catalog(lang)
    missing = []
    for message in template:
        if not message.id:
            continue
        found = catalog.get(message.id, context=message.context)
        if found is None or not is_translated(found):
            missing.append(message.id)
    assert not missing, (
        f"{lang}: untranslated or fuzzy (run `python -m bot.i18n.extract`, translate): {missing}"
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_stale_entries(lang: str, template: Catalog) -> None:
    stale = _ids(read_catalog(lang)) - _ids(template)
    assert not stale, f"{lang}: entries no longer in the code (run `python -m bot.i18n.extract`): {stale}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placeholders_are_kept(lang: str) -> None:
    for message in read_catalog(lang):
        if not message.id:
            continue
        ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
        allowed = [_placeholders(msgid) for msgid in ids]
        for text in _strings(message):
            if text:
                assert _placeholders(text) in allowed, f"{lang}: {text!r} vs {ids!r}"


def test_english_is_identity() -> None:
    for message in read_catalog("en"):
        if message.id:
            ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
            assert _strings(message) == ids


# --- translator --------------------------------------------------------------------------------------------


def test_translator_translates_and_caches() -> None:
    es = translator("es")
    assert isinstance(es, Translator) and es.lang == "es"
    assert es.gettext(common.NOT_YOUR_TURN) == "No es tu turno."
    assert translator("eu").gettext(common.NOT_YOUR_TURN) == "Ez da zure txanda."
    assert translator("en").gettext(common.NOT_YOUR_TURN) == "Not your turn."
    assert translator("es-ES") is es
    assert translator("de") is es
    assert translator(None) is es
    assert translator("pt-BR").lang == "pt"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_translates_something(lang: str) -> None:
    t = translator(lang)
    text = t.format(common.LANGUAGE_SET, language=LANGUAGE_NAMES[lang])
    assert LANGUAGE_NAMES[lang] in text
    if lang != "en":
        assert t.gettext(common.ALREADY_PLAYED) != common.ALREADY_PLAYED


def test_missing_translation_falls_back_to_english() -> None:
    t = translator("gl")
    assert t.gettext("A string nobody translated") == "A string nobody translated"
    assert t.ngettext("{n} hand", "{n} hands", 1) == "{n} hand"
    assert t.ngettext("{n} hand", "{n} hands", 3) == "{n} hands"
    assert t.nformat("{n} hand", "{n} hands", 3) == "3 hands"
    assert t.nformat("{n} stone", "{n} stones", 3) == "3 pedras"  # a plural the catalogue has
    assert t.format("Hello {name}", name="Ane") == "Hello Ane"


def _compiled(entries: list[tuple[object, object, bool]], lang: str = "fr") -> Translator:
    catalog = Catalog(locale=lang)
    catalog.mime_headers = [("Plural-Forms", PLURAL_FORMS[lang])]
    for msgid, msgstr, fuzzy in entries:
        catalog.add(msgid, msgstr, flags=("fuzzy",) if fuzzy else ())  # type: ignore[arg-type]
    buf = BytesIO()
    write_po(buf, catalog)
    buf.seek(0)
    return Translator(lang, compile_catalog(read_po(buf, locale=lang)))


def test_fuzzy_and_plural_and_broken_placeholders() -> None:
    t = _compiled(
        [
            ("Sure", "Sûr", False),
            ("Guess", "Devinette", True),
            (("{n} stone", "{n} stones"), ("{n} pierre", "{n} pierres"), False),
            ("Hi {name}", "Salut {nom}", False),
        ]
    )
    assert t.gettext("Sure") == "Sûr"
    assert t.gettext("Guess") == "Guess"  # fuzzy: not used
    assert t.nformat("{n} stone", "{n} stones", 0) == "0 pierre"  # French: 0 is singular
    assert t.nformat("{n} stone", "{n} stones", 2) == "2 pierres"
    assert t.format("Hi {name}", name="Ane") == "Hi Ane"  # broken translation: English instead of a crash


# --- extraction workflow -----------------------------------------------------------------------------------


def _po(root: Path, lang: str) -> Catalog:
    with (root / "bot" / "i18n" / "locale" / lang / "LC_MESSAGES" / "messages.po").open("rb") as fp:
        return read_po(fp, locale=lang)


def test_extract_workflow(tmp_path: Path) -> None:
    code = tmp_path / "bot" / "x.py"
    code.parent.mkdir()
    (tmp_path / "adapters").mkdir()
    code.write_text(
        "_('Plain')\nN_('Marked {who}')\nt.gettext('Method')\nngettext('{n} game', '{n} games', n)\n"
        "t.format(N_('Hello {name}'), name=x)\nt.gettext(variable)\n",
        encoding="utf-8",
    )
    (tmp_path / "adapters" / "y.py").write_text("_('From an adapter')\n", encoding="utf-8")

    changed = run(tmp_path)
    assert len(changed) == 1 + len(LANGUAGES)
    assert _ids(extract_template(tmp_path)) == {
        "Plain",
        "Marked {who}",
        "Method",
        ("{n} game", "{n} games"),
        "Hello {name}",
        "From an adapter",
    }
    en = _po(tmp_path, "en")
    assert all(is_translated(m) for m in en if m.id)
    es = _po(tmp_path, "es")
    assert not any(is_translated(m) for m in es if m.id)
    assert es.num_plurals == 2

    # A translator fills in Spanish; the code changes: "Method" goes, "New one" comes.
    es["Plain"].string = "Sencillo"
    buf = BytesIO()
    write_po(buf, es)
    (tmp_path / "bot" / "i18n" / "locale" / "es" / "LC_MESSAGES" / "messages.po").write_bytes(buf.getvalue())
    code.write_text(code.read_text(encoding="utf-8").replace("'Method'", "'New one'"), encoding="utf-8")
    assert run(tmp_path, check=True)  # out of date
    run(tmp_path)
    es = _po(tmp_path, "es")
    assert es["Plain"].string == "Sencillo"
    assert es["New one"] is not None and not is_translated(es["New one"])
    assert es.get("Method") is None and "Method" in es.obsolete
    assert _po(tmp_path, "en")["New one"].string == "New one"
    assert run(tmp_path) == []  # idempotent
    assert run(tmp_path, check=True) == []

    # A string that comes back gets its old translation back.
    es = _po(tmp_path, "es")
    es.obsolete["Method"].string = "Método"
    buf = BytesIO()
    write_po(buf, es)
    (tmp_path / "bot" / "i18n" / "locale" / "es" / "LC_MESSAGES" / "messages.po").write_bytes(buf.getvalue())
    code.write_text(code.read_text(encoding="utf-8").replace("'New one'", "'Method'"), encoding="utf-8")
    run(tmp_path)
    es = _po(tmp_path, "es")
    assert es["Method"].string == "Método" and "Method" not in es.obsolete
    assert "New one" in es.obsolete


def test_format_calls_mark_their_literals() -> None:
    """``t.format("literal", ...)`` would not be extracted: literals must be wrapped in ``N_``.

    (``nformat`` is an extraction keyword itself: its singular and plural literals form one plural entry.)
    """
    offenders = []
    for name in SOURCE_DIRS:
        for path in (PROJECT_ROOT / name).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "format"
                    and not isinstance(node.func.value, ast.Constant)
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    offenders.append(f"{path}:{node.lineno}")
    assert not offenders


def test_marker_is_identity() -> None:
    assert N_("Not your turn.") == "Not your turn."


# --- rules texts -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_summary(lang: str) -> None:
    summary = rules_summary(lang)
    assert 600 < len(summary) <= 1500
    for figure in ("40", "31", "30", "8"):
        assert figure in summary
    # The language's own words for the game (bot/i18n/glossary/<lang>.toml).
    words = glossary(lang)
    summary_terms = (
        "mus",
        "grande",
        "chica",
        "pares",
        "juego",
        "punto",
        "envido",
        "ordago",
        "quiero",
        "no_quiero",
    )
    for term in (*summary_terms, "amarraco", "stone"):
        assert words[term].use.lower() in summary.lower(), (lang, term)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_sections(lang: str) -> None:
    sections = rules_sections(lang)
    assert len(sections) == len(rules_sections("en")) >= 6
    for heading, body in sections:
        assert heading and body
        assert len(body) <= 3500
        assert len(f"{heading}\n\n{body}") < 3800
        assert not re.search(r"^\s*\|", body, re.MULTILINE), "no tables"
        assert "##" not in body
    full = rules_full(lang)
    for figure in ("40", "31", "32", "37", "33", "30", "3", "2", "⚡"):
        assert figure in full, (lang, figure)
    assert re.search(r"31\D+32\D+40\D+37\D+36\D+35\D+34\D+33", full), "juego order"
    assert "postre" in full and "mus corrido" in full, lang
    words = glossary(lang)
    terms = (
        "mano",
        "par",
        "medias",
        "duples",
        "ordago",
        "quiero",
        "no_quiero",
        "amarraco",
        "sena",
        "vaca",
        "match",
    )
    for term in terms:
        assert words[term].use.lower() in full.lower(), (lang, term)


def test_rules_fallback_to_spanish() -> None:
    assert rules_summary("de") == rules_summary("es")
    assert rules_sections("xx") == rules_sections("es")
    assert rules_summary("pt-BR") == rules_summary("pt")
    assert rules_summary("es") != rules_summary("en")
