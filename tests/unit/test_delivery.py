"""Latest-state-wins delivery (``bot.delivery._lanes``) against a fake platform: what a chat ends up showing.

The fake transport keeps messages like a chat does and can be told to fail the next call in each of the
typed ways a platform fails. No pacing here (``min_interval=0``) unless a test measures it.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace

import pytest

from bot.delivery import Delivery, MessageGone, NotModified, RateLimited, Refused, Unreachable
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import Button, OutMessage

GROUP = "x:-1"
ANE = "x:1"


class FakeTransport:
    """A platform that keeps every message (text, buttons) and records every call."""

    def __init__(self) -> None:
        self.messages: dict[tuple[str, str], tuple[str, tuple[tuple[Button, ...], ...]]] = {}
        self.calls: list[tuple[str, str, float]] = []
        self.fail_next: list[Exception] = []
        self._ids = itertools.count(1)

    def owns(self, chat: str) -> bool:
        return chat.startswith("x:")

    def _maybe_fail(self, kind: str, chat: str) -> None:
        self.calls.append((kind, chat, asyncio.get_running_loop().time()))
        if self.fail_next:
            raise self.fail_next.pop(0)

    async def send(self, chat: str, message: OutMessage) -> str:
        self._maybe_fail("send", chat)
        message_id = str(next(self._ids))
        self.messages[(chat, message_id)] = (message.text, message.buttons)
        return message_id

    async def edit(self, chat: str, message_id: str, message: OutMessage, check: object = None) -> None:
        self._maybe_fail("edit", chat)
        if (chat, message_id) not in self.messages:
            raise MessageGone("message to edit not found")
        if self.messages[(chat, message_id)] == (message.text, message.buttons):
            raise NotModified("message is not modified")
        self.messages[(chat, message_id)] = (message.text, message.buttons)

    async def clear_buttons(self, chat: str, message_id: str, check: object = None) -> None:
        self._maybe_fail("clear", chat)
        text, _ = self.messages[(chat, message_id)]
        self.messages[(chat, message_id)] = (text, ())

    async def delete(self, chat: str, message_id: str) -> None:
        self._maybe_fail("delete", chat)
        if self.messages.pop((chat, message_id), None) is None:
            raise MessageGone("message to delete not found")

    def kinds(self, chat: str | None = None) -> list[str]:
        return [kind for kind, c, _ in self.calls if chat is None or c == chat]


def table_view(text: str, *, fresh: bool = False, user: str | None = None) -> OutMessage:
    slot = "hand" if user else "table"
    button = ((Button("Paso", f"t0000001.1-0.{text[:4] or 'paso'}"),),)
    return OutMessage(
        slot=slot,
        text=text,
        chat=None if user else GROUP,
        user=user,
        buttons=button,
        fresh=fresh,
        table="t0000001",
    )


@pytest.fixture
def platform() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def surfaces() -> MemorySurfaces:
    return MemorySurfaces()


async def test_latest_state_wins_and_unchanged_views_cost_nothing(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0.05)
    delivery.deliver([table_view("one", fresh=True), table_view("two"), table_view("three")])
    await delivery.flush()
    # Newer states replaced the waiting one (still a new message, as the first asked): one call, not three.
    assert platform.kinds(GROUP) == ["send"]
    delivery.deliver([table_view("four"), table_view("five")])
    await delivery.flush()
    assert platform.kinds(GROUP) == ["send", "edit"]
    (shown,) = [v for (c, _), v in platform.messages.items() if c == GROUP]
    assert shown[0] == "five"
    delivery.deliver([table_view("five")])  # what the slot already shows
    await delivery.flush()
    assert platform.kinds(GROUP) == ["send", "edit"] and delivery.stats["skipped"] == 1
    await delivery.close()


async def test_a_lane_paces_its_calls(platform: FakeTransport, surfaces: MemorySurfaces) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0.1)
    for i in range(3):
        delivery.deliver([OutMessage(slot="notice", text=f"n{i}", chat=GROUP, fresh=True)])
    await delivery.flush()
    times = [t for _, c, t in platform.calls if c == GROUP]
    assert len(times) == 3 and all(b - a >= 0.095 for a, b in itertools.pairwise(times))
    await delivery.close()


async def test_not_modified_is_success_and_a_vanished_message_is_posted_again(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([table_view("one", fresh=True)])
    await delivery.flush()
    platform.fail_next.append(NotModified("message is not modified"))
    delivery.deliver([table_view("two")])
    await delivery.flush()
    assert delivery.stats["not_modified"] == 1
    platform.messages.clear()  # somebody deleted the table message
    delivery.deliver([table_view("three")])
    await delivery.flush()
    assert platform.kinds(GROUP)[-2:] == ["edit", "send"]
    assert [v[0] for v in platform.messages.values()] == ["three"]
    assert await surfaces.get("t0000001", GROUP, "table") == "2"  # the new message now shows the slot
    await delivery.close()


async def test_a_rate_limit_waits_then_sends_the_newest_state(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([table_view("one", fresh=True)])
    await delivery.flush()
    platform.fail_next.append(RateLimited(0.1))
    delivery.deliver([table_view("two")])
    await asyncio.sleep(0.02)
    delivery.deliver([table_view("three")])  # arrives during the wait: it replaces "two"
    await delivery.flush()
    assert delivery.stats["retry_after"] == 1
    assert [v[0] for v in platform.messages.values()] == ["three"]
    await delivery.close()


async def test_a_table_state_refused_by_a_rate_limit_is_drawn_after_the_wait(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    """A versioned view offered to the store, then refused with a 429, is this worker's own offer on its
    retry: it must still be drawn (it used to be skipped as "shown by the worker that offered it", and the
    table stayed stale until its next change)."""
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([replace(table_view("one", fresh=True), version=1, since=1)])
    await delivery.flush()
    platform.fail_next.append(RateLimited(0.1))
    delivery.deliver([replace(table_view("two"), version=2, since=1)])
    await delivery.flush()
    assert delivery.stats["retry_after"] == 1
    assert [v[0] for v in platform.messages.values()] == ["two"]
    await delivery.close()


async def test_an_unreachable_user_loses_their_private_views_not_the_table(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    heard: list[OutMessage] = []

    async def on_unreachable(message: OutMessage) -> None:
        heard.append(message)

    delivery = Delivery(platform, surfaces, min_interval=0.02, on_unreachable=on_unreachable)
    await surfaces.set_reachable(ANE, True)
    platform.fail_next.append(Unreachable("bot was blocked by the user"))
    delivery.deliver([table_view("hand 1", user=ANE, fresh=True), table_view("hand 2", user=ANE, fresh=True)])
    delivery.deliver([table_view("the table", fresh=True)])
    await delivery.flush()
    assert not await surfaces.reachable(ANE)
    assert [m.text for m in heard] == ["hand 1"]
    assert platform.kinds(ANE) == ["send"]  # the second private view was dropped, not retried
    assert platform.kinds(GROUP) == ["send"]
    await delivery.close()


async def test_a_fresh_view_takes_the_buttons_off_the_message_it_supersedes(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([table_view("hand 1", fresh=True)])
    await delivery.flush()
    delivery.deliver([table_view("hand 2", fresh=True)])
    await delivery.flush()
    assert platform.kinds(GROUP) == ["send", "send", "clear"]
    live = [text for text, buttons in platform.messages.values() if buttons]
    assert live == ["hand 2"] and delivery.stats["stripped"] == 1
    await delivery.close()


async def test_other_refusals_drop_the_view_and_views_of_other_platforms_are_ignored(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    platform.fail_next.append(Refused("Bad Request: something odd"))
    delivery.deliver([OutMessage(slot="notice", text="lost", chat=GROUP, fresh=True)])
    delivery.deliver([OutMessage(slot="notice", text="elsewhere", chat="tg:-5", fresh=True)])
    delivery.deliver([OutMessage(slot="notice", text="kept", chat=GROUP, fresh=True)])
    await delivery.flush()
    assert [v[0] for v in platform.messages.values()] == ["kept"]
    assert all(c == GROUP for _, c, _ in platform.calls)
    await delivery.close()


async def test_an_adopted_reply_is_edited_next_and_supersedes_the_old_message(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([table_view("old", fresh=True)])
    await delivery.flush()
    (old_id,) = [m for (c, m) in platform.messages if c == GROUP]
    # The adapter posted the new table itself (a slash command's reply) as message "r1".
    platform.messages[(GROUP, "r1")] = ("new", table_view("new").buttons)
    await delivery.adopt(table_view("new", fresh=True), "r1")
    await delivery.flush()
    assert platform.messages[(GROUP, old_id)][1] == ()  # the superseded message lost its buttons
    assert await surfaces.get("t0000001", GROUP, "table") == "r1"
    delivery.deliver([table_view("new")])  # what the reply already shows: no call
    delivery.deliver([table_view("newer")])
    await delivery.flush()
    assert platform.kinds(GROUP) == ["send", "clear", "edit"]
    assert platform.messages[(GROUP, "r1")][0] == "newer"
    await delivery.close()


async def test_adopting_a_view_of_another_platform_does_nothing(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    foreign = OutMessage(slot="table", text="t", chat="tg:-5", fresh=True, table="t0000001")
    await delivery.adopt(foreign, "9")
    assert await surfaces.get("t0000001", "tg:-5", "table") is None and platform.calls == []
    await delivery.close()


async def test_a_view_the_adapter_showed_itself_costs_no_second_call(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0.05)
    delivery.deliver([table_view("one", fresh=True)])
    await delivery.flush()
    (message_id,) = [m for (c, m) in platform.messages if c == GROUP]
    assert await delivery.showing(table_view("two")) == message_id
    # A press: the core's new state is queued, and the adapter shows it at once in its answer.
    delivery.deliver([table_view("two")])
    platform.messages[(GROUP, message_id)] = ("two", table_view("two").buttons)
    delivery.shown_by_adapter(table_view("two"))
    await delivery.flush()
    assert platform.kinds(GROUP) == ["send"] and delivery.stats["skipped"] == 1
    await delivery.close()


async def test_an_older_view_shown_by_the_adapter_is_replaced_by_the_newest(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([table_view("one", fresh=True)])
    await delivery.flush()
    (message_id,) = [m for (c, m) in platform.messages if c == GROUP]
    delivery.deliver([table_view("two")])
    delivery.deliver([table_view("three")])  # another press, after ours: its lane already showed it
    await delivery.flush()
    assert platform.messages[(GROUP, message_id)][0] == "three"
    platform.messages[(GROUP, message_id)] = ("two", table_view("two").buttons)  # our answer landed late
    delivery.shown_by_adapter(table_view("two"))
    await delivery.flush()
    assert platform.messages[(GROUP, message_id)][0] == "three"  # the newest state, sent again
    await delivery.close()


async def test_a_lane_drops_repeated_notices_and_holds_a_bounded_number(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    from bot.delivery._queue import MAX_PENDING_NOTICES

    delivery = Delivery(platform, surfaces, min_interval=10.0)  # the first call goes, the rest wait
    same = OutMessage(slot="answer", text="There is already a table in this chat.", chat=GROUP, fresh=True)
    delivery.deliver([same] * 50)
    delivery.deliver([OutMessage(slot="answer", text=f"n{i}", chat=GROUP, fresh=True) for i in range(50)])
    await asyncio.sleep(0.05)
    lane = delivery._lanes[GROUP]
    assert len(lane.pending) == MAX_PENDING_NOTICES - 1  # (the first one is being sent)
    assert delivery.stats["duplicates"] == 49 and delivery.stats["dropped"] == 50 - (MAX_PENDING_NOTICES - 1)
    # The table's state is never dropped: it coalesces into one pending view whatever the backlog.
    delivery.deliver([table_view("t1", fresh=True), table_view("t2")])
    assert sum(p.message.slot == "table" for p in lane.pending) == 1
    await delivery.close()


async def test_idle_lanes_are_forgotten_so_memory_stays_bounded(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    from bot.delivery._lanes import LANES_BEFORE_SWEEP

    now = [0.0]
    delivery = Delivery(platform, surfaces, min_interval=1.0, clock=lambda: now[0])
    for wave in range(5):
        chats = [f"x:{wave}-{i}" for i in range(LANES_BEFORE_SWEEP)]
        delivery.deliver([OutMessage(slot="notice", text="hi", chat=c, fresh=True) for c in chats])
        await delivery.flush()
        now[0] += 2.0  # their pacing interval is over
    assert delivery.lane_count() <= 2 * LANES_BEFORE_SWEEP
    assert len(platform.calls) == 5 * LANES_BEFORE_SWEEP  # nothing was lost on the way
    await delivery.close()
