"""The yes/no preferences every :class:`bot.store.PreferencesStore` keeps (Redis and memory run it)."""

from __future__ import annotations

from bot.store import PreferencesStore


async def check_yes_no_preferences(prefs: PreferencesStore) -> None:
    """No by default; a yes is one key's, for one flag; a no forgets it; saying it twice changes nothing."""
    assert await prefs.get_flag("dc:u1", "dms") is False
    await prefs.set_flag("dc:u1", "dms", True)
    await prefs.set_flag("dc:u1", "dms", True)
    assert await prefs.get_flag("dc:u1", "dms") is True
    assert await prefs.get_flag("dc:u2", "dms") is False
    assert await prefs.get_flag("dc:u1", "other") is False
    await prefs.set_flag("dc:u1", "dms", False)
    await prefs.set_flag("dc:u1", "dms", False)
    assert await prefs.get_flag("dc:u1", "dms") is False
    # (a language and a flag of the same key live side by side)
    await prefs.set_language("dc:u1", "eu")
    await prefs.set_flag("dc:u1", "dms", True)
    assert await prefs.get_language("dc:u1") == "eu" and await prefs.get_flag("dc:u1", "dms") is True
