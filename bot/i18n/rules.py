"""Rules texts for players (``/rules``), one set per language, read from the package data.

``rules/<lang>/summary.md`` is the one-minute summary (one chat message, ≤ 1500 characters);
``rules/<lang>/full.md`` is the complete rules, split into ``## `` sections of ≤ 3500 characters each, so an
adapter can send one message per section. Both use light Markdown only (``**bold**`` and ``-`` lists).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from bot.i18n.languages import normalize_language


def _read(lang: str, name: str) -> str:
    path = resources.files("bot.i18n").joinpath("rules", lang, name)
    return path.read_text(encoding="utf-8")


@cache
def _summary(lang: str) -> str:
    return _read(lang, "summary.md").strip()


def rules_summary(lang: str) -> str:
    """The one-minute summary in ``lang`` (any client code; unsupported → Spanish)."""
    return _summary(normalize_language(lang))


@cache
def _sections(lang: str) -> tuple[tuple[str, str], ...]:
    sections: list[tuple[str, list[str]]] = []
    for line in _read(lang, "full.md").splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        elif line.strip():
            sections.append(("", [line]))  # text before the first heading (not expected)
    return tuple((heading, "\n".join(body).strip()) for heading, body in sections)


def rules_sections(lang: str) -> list[tuple[str, str]]:
    """The full rules in ``lang`` as ``(heading, body)`` pairs, in reading order."""
    return list(_sections(normalize_language(lang)))


def rules_full(lang: str) -> str:
    """The full rules in ``lang`` as one Markdown text (for a web page or a long-form platform)."""
    return "\n\n".join(
        f"## {heading}\n\n{body}" if heading else body for heading, body in rules_sections(lang)
    )
