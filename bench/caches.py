"""Memory of one worker's delivery at many active chats; prints figures, asserts nothing (issue 24).

    python bench/caches.py [--chats 50000] [--capacity N]

Each chat gets one table view drawn through a real :class:`bot.delivery.Delivery` (a transport that answers at
once, the in-memory surfaces store, no pacing): a view as large as a betting table's (about 600 characters,
13 buttons with their tokens, each chat's own strings). Printed: the Python memory the delivery holds after
the chats were served (``tracemalloc``; the surfaces store, Redis in production, left out), per chat, and
how many slots each per-chat cache remembers. With more chats than the caches' bound, the bound holds and
memory stops growing: the least recently used chats are forgotten one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tracemalloc
from pathlib import Path

# bench/engine.py sits next to this file and would shadow the ``engine`` package: the project root first.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from bot.delivery import Delivery
from bot.delivery._pending import LATEST_CAP
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import Button, OutMessage

TABLE = """🂠 Mus · Mano n.º {hand} · Juego 1 de 3 (0–0) · Vaca 1 de 3 · a 40
Ane y 🤖 Iker · 0 piedras (0)
Brais {chat} y 🤖 Nerea · 0 piedras (0)
Mano: Ane · Lance: GRANDE
Mus: Ane: mus · Brais: mus · 🤖 Iker: mus · 🤖 Nerea: mus
Descartes: Ane 2 · Brais 2 · 🤖 Iker 2 · 🤖 Nerea 2
Mus: Ane: mus · Brais: mus · 🤖 Iker: mus · 🤖 Nerea: no hay mus
▶ GRANDE: Ane: envido 2
Apuesta: 2 — si no lo queréis, Ane y 🤖 Iker se llevan 1
Turno de Brais (⏱ 60 s)"""
LABELS = ("Quiero", "No quiero", "2 más → 4", "5 más → 7", "10 más → 12", "Más…", "Órdago", "🂠 Mis cartas")


class InstantPlatform:
    """Answers every call at once; keeps nothing."""

    def __init__(self) -> None:
        self.sent = 0

    def owns(self, chat: str) -> bool:
        return True

    async def send(self, chat: str, message: OutMessage) -> str:
        self.sent += 1
        return str(self.sent)

    async def edit(self, chat: str, message_id: str, message: OutMessage, check: object = None) -> None:
        return None

    async def clear_buttons(self, chat: str, message_id: str, check: object = None) -> None:
        return None

    async def delete(self, chat: str, message_id: str) -> None:
        return None


def view(chat: int) -> OutMessage:
    """A betting table's view in group ``chat``, with strings of its own (as each chat's are)."""
    table = f"t{chat:07d}"
    buttons = tuple(
        tuple(Button(label, f"{table}.5-{chat % 997}.{n}") for n, label in enumerate(LABELS[i : i + 3], i))
        for i in range(0, len(LABELS), 3)
    )
    text = TABLE.format(hand=chat % 9 + 1, chat=chat)
    return OutMessage(slot="table", text=text, chat=f"tg:{-chat}", buttons=buttons, table=table, version=5)


async def serve(chats: int) -> tuple[int, Delivery]:
    """Serve ``chats`` chats one view each; the bytes the delivery holds afterwards."""
    surfaces = MemorySurfaces()
    delivery = Delivery(InstantPlatform(), surfaces, min_interval=0.0)
    tracemalloc.start()
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    for start in range(0, chats, 1_000):
        delivery.deliver([view(chat) for chat in range(start, min(chats, start + 1_000))])
        await delivery.flush(timeout=60.0)
    surfaces.slots.clear()  # Redis holds these in production: not the worker's memory
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held, delivery


async def main_async(args: argparse.Namespace) -> None:
    for chats in args.chats:
        held, delivery = await serve(chats)
        shown = len(delivery.drawer.shown)
        print(
            f"{chats:>7,} chats: {held / 2**20:6.1f} MiB held by the delivery, {held / chats:6.0f} B a chat; "
            f"slots remembered: shown {shown:,}, newest queued {len(delivery._latest):,} "
            f"(bound {LATEST_CAP:,})"
        )
        await delivery.close()


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--chats", type=int, nargs="+", default=[10_000, 50_000, 75_000])
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
