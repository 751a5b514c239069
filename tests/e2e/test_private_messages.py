"""The invariant the randomized sessions check on private chats, on histories made by hand."""

from __future__ import annotations

from .private_messages import DISCARD_PROMPT, repeated_private_messages

DEAL = "Mus · hand 3\nYour cards: 4🗡️ 5🗡️ 3🪙 6🪵\n→ no pares · punto 25"
PROMPT = f"Mus · hand 3\nYour cards: 4🗡️ 5🗡️ 3🪙 6🪵\n{DISCARD_PROMPT}, then confirm."
NEXT_HAND = "Mus · hand 4\nYour cards: R🪙 R🍷 3🪙 6🪵\n→ duples · juego 36"


def test_a_copy_of_the_message_before_is_a_repeat() -> None:
    assert repeated_private_messages([[DEAL], [DEAL]]) == [DEAL]


def test_a_second_message_of_one_hand_without_a_discard_is_a_repeat() -> None:
    # Not the same text (an edit landed on one of them), but the hand's message posted twice all the same.
    other = DEAL.replace("25", "26")
    assert repeated_private_messages([[DEAL], [other]]) == [other]


def test_new_cards_after_a_discard_are_a_new_message_even_when_they_read_the_same() -> None:
    # The deck ran out, the discards were shuffled back, and the player drew back the very card they threw.
    assert repeated_private_messages([[DEAL, PROMPT], [DEAL]]) == []


def test_a_new_hand_or_another_message_is_not_a_repeat() -> None:
    assert repeated_private_messages([[DEAL], [NEXT_HAND], ["Rules…"], [DEAL]]) == []
    assert repeated_private_messages([["Rules…"], ["Rules…"]]) == ["Rules…"]
