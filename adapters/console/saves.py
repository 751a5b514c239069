"""The terminal's saved game: which table to resume, ``--new`` that keeps the saved game until the new one
starts, and the one line that tells a damaged save.

The terminal has two chats. The saved game lives in one; ``musbot play --new`` opens the new table's lobby in
the other, and the saved game is cancelled only once the new table has started. A new table left before it
starts (quit, Ctrl-C, ✖ Cancel, even a crash) leaves the saved game as it was: :func:`current` prefers a
game under way to a lobby, and the newer of two games.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from adapters.console.table import ConsoleTable
from bot.app import Service
from bot.i18n.catalog import Translator
from bot.i18n.markers import N_
from bot.kernel import ChatRef, TableState, TableStatus, UserRef
from bot.store import EmbeddedRedis, SaveRepair, StoreUnavailable

#: The terminal's two chats (``musbot history`` lists both).
TERMINAL_CHATS = ("console:local", "console:local:2")

ASK_NEW = N_(
    "A game is saved here (last played {when}). Start a new one? "
    "The saved game is kept until the new one starts. [{yes}/{no}] "
)
#: The key that answers yes to :data:`ASK_NEW` (no is anything else).
# Translators: the one letter that answers yes to "Start a new one?" (the language's word for yes).
YES_KEY = N_("y")
# Translators: the one letter that answers no to "Start a new one?".
NO_KEY = N_("n")
KEPT = N_("The saved game is kept.")
NEW_CANCELLED = N_("The new table was not started: your saved game is kept (`musbot play` resumes it).")
REPLACED = N_("The new game has started; the game saved before is closed.")

DAMAGED = {
    "cut": N_("it stops in the middle of a write"),
    "empty": N_("it is empty"),
    "shorter": N_("it is shorter than when it was last saved"),
    "garbage": N_("part of it is unreadable"),
}
REPAIRED = N_(
    "⚠ The save in {dir} was damaged ({damage}): recovered {kept} of its {saved} bytes, everything before "
    "the damage; the damaged file is kept as {aside}."
)
REPAIRED_NOTHING = N_(
    "⚠ The save in {dir} was damaged ({damage}): nothing could be recovered, a new game starts; "
    "the damaged file is kept as {aside}."
)
REPAIRED_GONE = N_("⚠ The save in {dir} is gone ({damage}): nothing could be recovered, a new game starts.")


def terminal_chat(key: str) -> ChatRef:
    """One of the terminal's chats."""
    return ChatRef(key, private=True, title="Terminal")


@dataclass(frozen=True)
class Saved:
    """An open table of one of the terminal's chats."""

    chat: ChatRef
    table: TableState


@dataclass
class Replacement:
    """The saved game that a new table replaces once it has started (``old``: ``None`` when none)."""

    old: Saved | None = None

    @property
    def pending(self) -> bool:
        """Whether a saved game still waits for the new table to start."""
        return self.old is not None

    async def settle(self, service: Service, user: UserRef, new_table: TableState | None) -> bool:
        """Close the saved game if the new table has started; whether that happened now."""
        if self.old is None or new_table is None or new_table.status is not TableStatus.PLAYING:
            return False
        await service.cancel(self.old.chat, user)
        self.old = None
        return True


async def open_tables(service: Service) -> list[Saved]:
    """The terminal chats' open tables (lobbies and games), the one to resume first (see the module)."""
    found: list[Saved] = []
    for key in TERMINAL_CHATS:
        chat = terminal_chat(key)
        table_id = await service.table_of_chat(chat)
        state = await service.load_table(table_id) if table_id else None
        if state is not None and not state.finished:
            found.append(Saved(chat, state))
    found.sort(key=lambda s: (s.table.status is TableStatus.PLAYING, s.table.created_at), reverse=True)
    return found


async def current(service: Service) -> Saved | None:
    """The table ``musbot play`` resumes: a game under way before a lobby, the newer of two (``None``
    also when the store cannot say: opening a table then tells why)."""
    try:
        tables = await open_tables(service)
    except StoreUnavailable:
        return None
    return tables[0] if tables else None


async def free_chat(service: Service, user: UserRef, keep: Saved) -> ChatRef:
    """The terminal chat where a new table opens next to ``keep`` (a lobby left there is closed first)."""
    key = next(k for k in TERMINAL_CHATS if k != keep.chat.key)
    chat = terminal_chat(key)
    if await service.table_of_chat(chat) is not None:
        await service.cancel(chat, user)  # only a lobby nobody started can be there (or an older game lost
        # to a crash between the new start and the old close: current() already chose the newer)
    return chat


async def chat_to_open(
    table: ConsoleTable, saved: Saved | None, new: bool, t: Translator
) -> tuple[ChatRef, Replacement]:
    """The terminal chat to open or resume, and the saved game a new table replaces once started.

    ``new`` (``--new``) with a game under way asks first; the new table then opens in the other chat.
    """
    service, user = table.app.service, table.user
    if saved is None:
        return terminal_chat(TERMINAL_CHATS[0]), Replacement()
    if not new:
        return saved.chat, Replacement()
    if saved.table.status is not TableStatus.PLAYING:
        await service.cancel(saved.chat, user)  # a lobby nobody started: nothing to keep
        return saved.chat, Replacement()
    assert table.lines is not None
    answer = await table.lines.readline(ask_new_line(t, saved))
    if not is_yes(t, answer):
        table.say(t.gettext(KEPT))
        return saved.chat, Replacement()
    return await free_chat(service, user, saved), Replacement(saved)


def is_yes(t: Translator, answer: str | None) -> bool:
    """Whether ``answer`` is the language's yes key (or ``y``)."""
    word = (answer or "").strip().lower()
    return bool(word) and word in {t.gettext(YES_KEY).lower(), "y", "yes"}


def ask_new_line(t: Translator, saved: Saved) -> str:
    """The question :data:`ASK_NEW`, with when the saved game was last played."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(saved.table.updated_at or saved.table.created_at))
    return t.format(ASK_NEW, when=when, yes=t.gettext(YES_KEY), no=t.gettext(NO_KEY))


def tell_repair(t: Translator, server: EmbeddedRedis | None, data_dir: Path, out: TextIO) -> None:
    """Print :func:`repair_line` if the embedded server found (and repaired) a damaged save at its start."""
    if server is not None and server.repair is not None:
        print(repair_line(t, server.repair, data_dir), file=out)


def repair_line(t: Translator, repair: SaveRepair, data_dir: Path) -> str:
    """One line that tells a damaged save: what was wrong, what was recovered, where the file was put."""
    damage = t.gettext(DAMAGED[repair.damage])
    where = str(data_dir.absolute())
    if repair.kept_aside is None:
        return t.format(REPAIRED_GONE, dir=where, damage=damage)
    aside = str(repair.kept_aside)
    if not repair.recovered_anything:
        return t.format(REPAIRED_NOTHING, dir=where, damage=damage, aside=aside)
    return t.format(
        REPAIRED, dir=where, damage=damage, kept=repair.recovered_bytes, saved=repair.saved_bytes, aside=aside
    )
