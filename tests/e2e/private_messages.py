"""What a player's private chat may show over a session: one message per set of cards, never a copy.

A player gets a new private message when they get cards (a deal, or the replacements after a discard),
and only then; everything else edits it. New cards can read exactly like the old ones: once the deck runs
out during a discard, the discards are shuffled back, and a player may draw back the very cards they
threw away (RULES.md). So "the same text twice in a row" is a copy only when no discard came between.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

#: What a private hand shows (in English) while its player chooses discards: a later message of the same
#: hand brings the replacements.
DISCARD_PROMPT = "Choose the cards to discard"

#: The first line of a private hand, in English: "Mus · hand 3" at a group's table, "Hand 3" in a private one.
_HAND_LINE = re.compile(r"(?:.+ · hand|Hand) \d+")


def repeated_private_messages(histories: Sequence[Sequence[str]]) -> list[str]:
    """The private messages that repeat the one before them, given each message's texts in order (its first
    version first): a message of the same hand as the one before, unless that one asked for discards
    (the new cards came after them); or any other message whose first text is the one before's."""
    repeats = []
    for before, after in itertools.pairwise(histories):
        if not before or not after:
            continue
        same_hand = _hand_line(before[0]) is not None and _hand_line(before[0]) == _hand_line(after[0])
        discarded = any(DISCARD_PROMPT in text for text in before)
        if (same_hand and not discarded) or (not same_hand and before[0] == after[0]):
            repeats.append(after[0])
    return repeats


def _hand_line(text: str) -> str | None:
    """The first line of a private hand ("Mus · hand 3", "Hand 3"), or ``None`` for another message."""
    first = text.splitlines()[0] if text else ""
    return first if _HAND_LINE.fullmatch(first) else None
