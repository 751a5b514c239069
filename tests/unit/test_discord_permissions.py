"""What the Discord adapter asks of a server, as documented, and the small pieces behind private hands."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from prefs_contract import check_yes_no_preferences

from adapters.discord.permissions import INVITE_PERMISSIONS, TABLE_NEEDS, THREAD_NEEDS
from adapters.discord.private_hands import MIRROR_SLOT, Mirror, PrivateHands
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import OutMessage
from bot.store import MemoryMarks
from bot.store._prefs import MemoryPreferences

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_invite_asks_for_every_permission_the_bot_checks() -> None:
    link = re.search(r"permissions=(\d+)", (ROOT / "docs" / "discord.md").read_text(encoding="utf-8"))
    assert link is not None and int(link.group(1)) == INVITE_PERMISSIONS.value
    for attribute, _name in (*TABLE_NEEDS, THREAD_NEEDS):
        assert getattr(INVITE_PERMISSIONS, attribute), attribute
    # Nothing it does not use (it reads no history, manages nothing).
    assert not INVITE_PERMISSIONS.read_message_history and not INVITE_PERMISSIONS.manage_messages


def test_a_hand_mirror_is_read_back_as_stored_and_junk_is_nothing() -> None:
    mirror = Mirror(1234, 1_800_000_000, "aW50:abc def")  # (a token may hold anything after the id)
    assert Mirror.parse(mirror.stored()) == mirror
    for junk in (None, "", "-", "12 x tok", "x 12 tok", "12 34"):
        assert Mirror.parse(junk) is None, junk


async def test_memory_preferences_keep_yes_and_no() -> None:
    await check_yes_no_preferences(MemoryPreferences())


async def test_a_hand_mirror_past_its_token_s_life_is_left_alone() -> None:
    surfaces = MemorySurfaces()
    now = 1_800_000_000.0
    await surfaces.set("t0000001", "dc:u5", MIRROR_SLOT, Mirror(77, now - 1, "tok").stored())
    # No client at all: reaching Discord would fail loudly.
    inner = SimpleNamespace(client=None)
    service = SimpleNamespace(chats=None)
    hands = PrivateHands(inner, surfaces, service, MemoryMarks(), clock=lambda: now)  # type: ignore[arg-type]
    view = OutMessage(slot="hand", text="Hand 2", user="dc:u5", table="t0000001")
    await hands._mirror("dc:u5", view)  # expired: no call
    hands.clock = lambda: now - 60
    with pytest.raises(AttributeError):  # alive: it does try to edit it (with no client here)
        await hands._mirror("dc:u5", view)
