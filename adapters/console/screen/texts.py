"""The full-screen table's own words (the table, the hand and the count are the core's): its keys, the
bet amount, the catch buttons, the move feed's lines. English msgids, translated in the six catalogues.

A terminal has keys, not chat commands: nothing here names a ``/command``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator
from bot.i18n.markers import N_
from bot.screens import cards_label
from engine.cards import SUIT_SYMBOLS, Card

_ = N_

# Translators: the keys line at the bottom of the full-screen terminal table ("⏎" is the Enter key).
KEYS = _("1–9 press a button · a type an amount · c catch a seña · ⏎ next hand · r rules · q quit")
# Translators: the keys line while the rules are on screen.
RULES_KEYS = _("r or Esc: back to the table")
# Translators: the placeholder of the box where the player types a bet amount.
AMOUNT_PLACEHOLDER = _("Amount ({low}–{high}), then ⏎")
# Translators: a bet amount typed at the terminal is not one that can be bet now.
AMOUNT_INVALID = _("Type a whole number from {low} to {high}.")
# Translators: the score line at the top of the terminal table: each pair's names, then its stones.
SCORE = _("{team_a} {a} – {team_b} {b}")
# Translators: a seat at the terminal table, e.g. "🤖 Nerea · rival · mano".
YOU = _("you")
PARTNER = _("partner")
RIVAL = _("rival")
MANO = _("mano")
RIVAL_SENA = _("⚡ {name} made a seña!")
OWN_SENA = _("⚡ {name} made a seña: your partner sees it.")
PARTNER_SENA = _("Your partner {name} made you a seña: {sena}")
CAUGHT = _("You caught {name}'s seña: {sena}")
YOUR_CARDS = _("Your cards: {cards}")
CHOOSE_DISCARDS = _("Choose the cards to discard, then confirm.")
COUNT_TITLE = _("🂡 Hand {n} · count")
# Translators: the move feed, when a new hand begins.
NEW_HAND = _("— Hand {n} —")
# Translators: the end of the match at the terminal table (a terminal has keys, not chat commands).
MATCH_OVER = _("The match is over. q: quit.")
# Translators: the count is on screen at the terminal table and the next hand waits for a key.
NEXT_HAND = _("⏎: next hand")


# Translators: the suits' legend at the terminal table, e.g. "🪙 oros · 🍷 copas · 🗡️ espadas · 🪵 bastos: …".
# The suits keep their Spanish names, as the rules name them.
SUITS = _("{suits}: suits never matter in Mus.")
_SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}


def suits_line(t: Translator) -> str:
    """The suit symbols the cards are written with, named, and that suits never matter."""
    suits = " · ".join(f"{SUIT_SYMBOLS[s]} {name}" for s, name in _SUIT_NAMES.items())
    return t.format(SUITS, suits=suits)


def discard_line(t: Translator, name: str, n: int, cards: Sequence[Card]) -> str:
    """``🤖 Iker discards 2 cards`` (and which, when they are the player's own)."""
    # Translators: a line of the move feed: a player discarded n cards (the player's own are named after it).
    line = t.nformat("{name} discards {n} card", "{name} discards {n} cards", n, name=name)
    return f"{line}: {cards_label(cards)}" if cards else line
