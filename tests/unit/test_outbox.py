"""A deadline fired by a worker of another platform reaches its chat through that platform's outbox."""

from __future__ import annotations

from bot.app import Service, ServiceDeps
from bot.delivery import Delivery, MemoryOutbox
from bot.delivery._outbox import decode, encode
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import Button, Outcome, OutMessage
from bot.ops import DeadlineLoop
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._prefs import MemoryPreferences


class Platform:
    """A transport for the chats whose keys start with ``name:``; records what it sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[tuple[str, str]] = []

    def owns(self, chat: str) -> bool:
        return chat.startswith(f"{self.name}:")

    async def send(self, chat: str, message: OutMessage) -> str:
        self.sent.append((chat, message.text))
        return str(len(self.sent))

    async def edit(self, chat: str, message_id: str, message: OutMessage, check: object = None) -> None:
        self.sent.append((chat, message.text))

    async def clear_buttons(self, chat: str, message_id: str, check: object = None) -> None:
        pass

    async def delete(self, chat: str, message_id: str) -> None:
        pass


def worker(outbox: MemoryOutbox, platform: Platform) -> tuple[DeadlineLoop, Delivery]:
    service = Service(
        ServiceDeps(
            tables=MemoryTableStore(),
            deadlines=MemoryDeadlineStore(),
            prefs=MemoryPreferences(),
        )
    )
    delivery = Delivery(platform, MemorySurfaces(), min_interval=0, key_platform=platform.name)
    return DeadlineLoop(service, [delivery], outbox=outbox), delivery


async def test_views_for_another_platform_go_through_its_outbox() -> None:
    outbox = MemoryOutbox()
    tg, dc = Platform("tg"), Platform("dc")
    discord_worker, discord_delivery = worker(outbox, dc)
    telegram_worker, telegram_delivery = worker(outbox, tg)
    fired = Outcome(
        messages=(
            OutMessage(slot="table", text="Turn of Ane", chat="tg:-1", table="t0000001"),
            OutMessage(slot="hand", text="your cards", user="tg:7", table="t0000001", fresh=True),
            OutMessage(slot="notice", text="on discord", chat="dc:5", fresh=True),
        )
    )
    await discord_worker.on_outcome(fired)  # a Discord worker fired a Telegram table's deadline
    await discord_delivery.flush()
    assert dc.sent == [("dc:5", "on discord")]
    await telegram_worker.drain_outboxes()
    await telegram_delivery.flush()
    assert sorted(tg.sent) == [("tg:-1", "Turn of Ane"), ("tg:7", "your cards")]
    await telegram_worker.drain_outboxes()  # popped once
    await telegram_delivery.flush()
    assert len(tg.sent) == 2
    await discord_delivery.close()
    await telegram_delivery.close()


def test_a_view_survives_the_trip_through_json() -> None:
    view = OutMessage(
        slot="hand",
        text="🂠 Ane\n«cartas»",
        user="dc:u9",
        buttons=(
            (Button("Paso", "abcdefgh.1-0.paso"),),
            (
                Button("🂠", "abcdefgh.1.cards"),
                Button.link("🃏", "https://mus.example.org/t/abcdefgh", web_app=True),
            ),
        ),
        fresh=True,
        table="abcdefgh",
        origin="dc:5",
        markdown=True,
        phase="grande",  # (a Discord embed's colour)
        deadline=1_800_000_000.5,
    )
    assert decode(encode(view)) == view
    exported = OutMessage(slot="export", text="📜", chat="dc:5", document=("mus.txt", "Mano 1…"), fresh=True)
    assert decode(encode(exported)) == exported
