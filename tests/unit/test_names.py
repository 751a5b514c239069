"""Names cannot impersonate: no bidi trick, no machine marker, isolated when written right to left."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.kernel import UserRef, clean_name, isolate
from bot.kernel._names import MAX_NAME

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]


def test_bidi_controls_and_the_machine_marker_are_removed() -> None:
    assert clean_name("Ane\u202e ,oreiuq") == "Ane ,oreiuq"
    assert clean_name("🤖 Txema") == "Txema"
    assert clean_name("Tx🤖ema") == "Tx ema"
    assert clean_name("  Brais \n\t Iglesias ") == "Brais Iglesias"
    assert clean_name("\u2066\u2069\u200f") == "?"
    assert clean_name("👨\u200d👩\u200d👧") == "👨\u200d👩\u200d👧"  # emoji sequences keep their joiners
    assert len(clean_name("x" * 100)) == MAX_NAME


@given(st.text(max_size=80))
def test_no_cleaned_name_carries_a_control_or_the_marker(raw: str) -> None:
    name = clean_name(raw)
    assert name and len(name) <= MAX_NAME and "🤖" not in name
    assert not any(c in name for c in BIDI)


def test_every_name_entering_the_core_is_clean() -> None:
    assert UserRef("tg:1", "🤖 Nerea\u202e").name == "Nerea"


def test_right_to_left_names_are_isolated_and_others_left_alone() -> None:
    assert isolate("Ane") == "Ane"
    assert isolate("עמית") == "\u2068עמית\u2069"
    assert isolate("Amit עמית") == "\u2068Amit עמית\u2069"
