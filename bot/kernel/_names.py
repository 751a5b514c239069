"""People's names as the bot shows them: cleaned once when they enter the core, isolated when drawn.

A name comes from a platform as its owner typed it. Two things in it could mislead the others at the table:

- **Bidirectional controls** (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) reorder the text around
  them — a name could make "Ane: quiero" read as something else. They are removed, with every other
  invisible format or control character (the zero-width joiner stays: emoji sequences need it).
- **The machine marker** 🤖, which the table puts before every machine seat's name: a person named
  "🤖 Txema" must not pass for a machine. It is removed from people's names.

Names are then trimmed to :data:`MAX_NAME` characters with whitespace collapsed (``?`` if nothing is left).
When drawn, a name written in a right-to-left script is wrapped in first-strong isolation marks
(U+2068 … U+2069), so it cannot reorder the sentence it sits in; other names are drawn as they are. Machine
seats have fixed names (:data:`MACHINE_NAMES`).
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 32
MACHINE_MARK = "🤖"
#: The names of the machine seats, by seat (the table draws them after :data:`MACHINE_MARK`).
MACHINE_NAMES = ("Txema", "Maite", "Iker", "Nerea")
_ZWJ = "\u200d"
_FSI, _PDI = "\u2068", "\u2069"
_RTL = frozenset({"R", "AL"})


def clean_name(raw: str) -> str:
    """A person's name without invisible controls or the machine marker, at most :data:`MAX_NAME` long."""
    kept = []
    for char in raw.replace(MACHINE_MARK, " "):
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Zl", "Zp") and char != _ZWJ:
            kept.append(" " if category in ("Cc", "Zl", "Zp") else "")
            continue
        kept.append(char)
    name = " ".join("".join(kept).split())
    return name[:MAX_NAME].strip() or "?"


def isolate(name: str) -> str:
    """``name`` ready to sit inside a sentence: isolated if it has right-to-left letters."""
    if any(unicodedata.bidirectional(char) in _RTL for char in name):
        return f"{_FSI}{name}{_PDI}"
    return name
