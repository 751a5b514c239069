"""Two workers delivering views of one table at once (``bot.delivery._lanes`` over one shared surfaces store).

A press handled on one worker and a machine's deadline fired on another both draw the same table; their calls
may reach the platform in either order. The fake platform here is one chat shared by two workers' transports,
and a test can hold one worker's call in flight until the other's has landed — the order that showed a group
the previous turn before each view carried its table version.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import random
from dataclasses import replace

import pytest

from bot.delivery import (
    BudgetedTransport,
    Delivery,
    MessageGone,
    NotModified,
    RateLimited,
    Refused,
    StillNeeded,
    Unneeded,
)
from bot.delivery._pending import ViewCall
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import Button, OutMessage
from bot.store import BotRate, Drawn, MemoryCallBudget

GROUP = "x:-1"
TABLE = "t0000001"


class Chat:
    """The platform's side: every message of the group, shared by the workers."""

    def __init__(self) -> None:
        self.messages: dict[str, tuple[str, tuple[tuple[Button, ...], ...]]] = {}
        self.ids = itertools.count(1)
        self.deleted: list[str] = []

    def live(self) -> list[str]:
        """The texts of the messages that still have buttons."""
        return [text for text, buttons in self.messages.values() if buttons]


class WorkerTransport:
    """One worker's calls to the shared chat; ``hold`` keeps its next call in flight until released."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self.gate: asyncio.Event | None = None
        self.in_flight = asyncio.Event()

    def hold(self) -> asyncio.Event:
        self.gate = asyncio.Event()
        self.in_flight.clear()
        return self.gate

    async def _wait(self) -> None:
        if self.gate is not None:
            gate, self.gate = self.gate, None
            self.in_flight.set()
            await gate.wait()

    def owns(self, chat: str) -> bool:
        return chat.startswith("x:")

    async def send(self, chat: str, message: OutMessage) -> str:
        message_id = str(next(self.chat.ids))  # the platform takes the call now; it lands after the wait
        await self._wait()
        self.chat.messages[message_id] = (message.text, message.buttons)
        return message_id

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        await self._wait()  # (a rate limiter's wait: the check is asked once the call's turn came)
        if check is not None and not await check():
            raise Unneeded("shown by its turn")
        if message_id not in self.chat.messages:
            raise MessageGone("message to edit not found")
        if self.chat.messages[message_id] == (message.text, message.buttons):
            raise NotModified("message is not modified")
        self.chat.messages[message_id] = (message.text, message.buttons)

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        await self._wait()  # (a rate limiter's wait: the check is asked once the call's turn came)
        if check is not None and not await check():
            raise Unneeded("bare by its turn")
        text, _ = self.chat.messages[message_id]
        self.chat.messages[message_id] = (text, ())

    async def delete(self, chat: str, message_id: str) -> None:
        await self._wait()
        if self.chat.messages.pop(message_id, None) is None:
            raise MessageGone("message to delete not found")
        self.chat.deleted.append(message_id)


def view(version: int, text: str, *, since: int = 1, fresh: bool = False, again: bool = False) -> OutMessage:
    """The table view of one table version (as the unit of work stamps them; ``again``: posted again, of
    the epoch begun at ``since``)."""
    buttons = ((Button("Paso", f"{TABLE}.1-0.paso"),),)
    return OutMessage(
        slot="table",
        text=text,
        chat=GROUP,
        buttons=buttons,
        fresh=fresh or again,
        again=again,
        table=TABLE,
        version=version,
        since=version if fresh and not again else since,
    )


async def two_workers() -> tuple[Chat, tuple[Delivery, WorkerTransport], tuple[Delivery, WorkerTransport]]:
    chat, surfaces = Chat(), MemorySurfaces()
    first, second = WorkerTransport(chat), WorkerTransport(chat)
    return (
        chat,
        (Delivery(first, surfaces, min_interval=0), first),
        (Delivery(second, surfaces, min_interval=0), second),
    )


async def test_an_older_view_landing_last_is_replaced_by_the_newest() -> None:
    chat, (a, a_calls), (b, _) = await two_workers()
    a.deliver([view(1, "hand 1: Ane's turn", fresh=True)])
    await a.flush()
    # Worker A draws version 2 (Ane passed); its edit is slow. Worker B draws version 3 (Iker passed), and
    # its edit lands first; then A's lands, over it.
    gate = a_calls.hold()
    a.deliver([view(2, "Ane: paso · Iker's turn")])
    await a_calls.in_flight.wait()
    b.deliver([view(3, "Ane: paso · Iker: paso · Maite's turn")])
    await b.flush()
    assert next(iter(chat.messages.values()))[0] == "Ane: paso · Iker: paso · Maite's turn"
    gate.set()
    await a.flush()
    await b.flush()
    # A saw, after its call, that version 3 was offered meanwhile: it drew the newest again.
    assert [text for text, _ in chat.messages.values()] == ["Ane: paso · Iker: paso · Maite's turn"]
    assert a.stats["reshown"] == 1


async def test_a_view_older_than_the_one_offered_is_not_sent_at_all() -> None:
    chat, (a, _), (b, _) = await two_workers()
    b.deliver([view(1, "hand 1", fresh=True), view(3, "Maite's turn")])
    await b.flush()
    a.deliver([view(2, "Iker's turn")])  # late: version 3 is on screen
    await a.flush()
    assert [text for text, _ in chat.messages.values()] == ["Maite's turn"]
    assert a.stats["superseded"] == 1 and a.stats["edit"] == 0


async def test_an_unchanged_view_is_drawn_again_if_another_worker_drew_over_it() -> None:
    chat, (a, _), (b, _) = await two_workers()
    a.deliver([view(1, "Ane's turn", fresh=True)])
    await a.flush()
    b.deliver([view(2, "Iker's turn")])
    await b.flush()
    # Version 3 looks like version 1 to worker A (which showed it): its cache must not skip the call.
    a.deliver([view(3, "Ane's turn")])
    await a.flush()
    assert [text for text, _ in chat.messages.values()] == ["Ane's turn"]


async def test_a_new_hand_drawn_first_by_another_worker_never_overwrites_the_last_hands_story() -> None:
    chat, (a, a_calls), (b, _) = await two_workers()
    a.deliver([view(1, "hand 1", fresh=True), view(9, "hand 1 over: the story of every lance")])
    await a.flush()
    # Worker A deals hand 2 (version 10, a new message) but its post is slow; worker B draws version 11 of
    # hand 2 (not fresh: the same hand's message, begun at 10) before A's post is recorded.
    gate = a_calls.hold()
    a.deliver([view(10, "hand 2: Iker's turn", fresh=True)])
    await a_calls.in_flight.wait()
    b.deliver([view(11, "hand 2: Iker: mus · Maite's turn", since=10)])
    await b.flush()
    gate.set()
    await a.flush()
    await b.flush()
    texts = [text for text, _ in chat.messages.values()]
    assert texts[0] == "hand 1 over: the story of every lance", texts  # never edited into hand 2
    assert chat.live() == ["hand 2: Iker: mus · Maite's turn"], chat.messages  # one live keyboard, the newest


async def test_a_post_and_an_edit_racing_end_on_the_newest_with_one_keyboard() -> None:
    for a_first in (True, False):
        chat, (a, a_calls), (b, b_calls) = await two_workers()
        a.deliver([view(1, "hand 1", fresh=True), view(9, "hand 1 over")])
        await a.flush()
        # A posts hand 2 (version 10); B edits version 11 into it; either call may land last.
        slow = a_calls if not a_first else b_calls
        gate = slow.hold()
        a.deliver([view(10, "hand 2 dealt", fresh=True)])
        if a_first:
            await a.flush()
        b.deliver([view(11, "hand 2: mus", since=10)])
        await slow.in_flight.wait()
        gate.set()
        await a.flush()
        await b.flush()
        await a.flush()
        assert chat.live() == ["hand 2: mus"], (a_first, chat.messages)
        assert next(text for text, _ in chat.messages.values()) == "hand 1 over", (a_first, chat.messages)


class Unrenewed(MemorySurfaces):
    """Claims that run out however long the call takes (a worker frozen with its call on the way: its
    renewals never reach the store)."""

    async def renew(self, table: str, chat: str, slot: str, *, since: int, poster: str, **_: object) -> bool:
        return True


async def post_one_hand_twice(
    *, refuse_delete: bool = False, claim: float = 10.0
) -> tuple[Chat, Delivery, Delivery]:
    """Worker A posts hand 2 (version 10); before its post is recorded, worker B draws version 11 of hand 2
    and finds no message of it: while A's claim to post holds (``claim`` seconds), B leaves its view to A."""
    chat = Chat()
    surfaces = (MemorySurfaces if claim >= 0.1 else Unrenewed)(post_claim=claim)

    class Stubborn(WorkerTransport):
        async def delete(self, chat_id: str, message_id: str) -> None:
            raise Refused("message can't be deleted")

    kind = Stubborn if refuse_delete else WorkerTransport
    a_calls, b_calls = kind(chat), kind(chat)
    a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
    a.deliver([view(1, "hand 1", fresh=True), view(9, "hand 1 over")])
    await a.flush()
    gate = a_calls.hold()
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    await a_calls.in_flight.wait()
    await asyncio.sleep(claim * 1.2 if claim < 0.1 else 0)  # a short claim: A's post outlives it
    b.deliver([view(11, "hand 2: mus", since=10)])
    await b.flush()
    gate.set()
    await a.flush()
    await b.flush()
    return chat, a, b


async def test_a_worker_leaves_the_hand_another_is_posting_to_it() -> None:
    chat, a, b = await post_one_hand_twice(claim=0.3)
    assert [text for text, _ in chat.messages.values()] == ["hand 1 over", "hand 2: mus"], chat.messages
    assert chat.live() == ["hand 2: mus"] and chat.deleted == []
    assert b.stats["left"] == 1 and b.stats["send"] == 0 and a.stats["reshown"] == 1
    await asyncio.sleep(0.5)  # B looks again when A's claim has run out: A posted, so B makes no call
    await b.flush()
    assert b.stats["send"] + b.stats["edit"] + b.stats["not_modified"] == 0 and len(chat.messages) == 2


async def test_a_view_the_posting_worker_offered_too_is_not_posted_again() -> None:
    """A player's cards, posted by one worker (its view of the hand's second move: the first was never
    drawn), and drawn again unchanged by another worker after the next move, before the post is recorded:
    the second worker leaves it to the first (the same view, which that worker shows)."""
    chat, surfaces = Chat(), MemorySurfaces()
    a_calls, b_calls = WorkerTransport(chat), WorkerTransport(chat)
    a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
    gate = a_calls.hold()
    a.deliver([view(11, "your cards: R R 7 4", since=10)])
    await a_calls.in_flight.wait()
    b.deliver([view(12, "your cards: R R 7 4", since=10)])
    await b.flush()
    gate.set()
    await a.flush()
    assert [text for text, _ in chat.messages.values()] == ["your cards: R R 7 4"]
    assert b.stats["send"] == 0 and chat.deleted == []


async def test_a_posting_worker_held_back_by_a_rate_limit_posts_the_newest_view() -> None:
    """A's post of hand 2 is refused with a 429; meanwhile B draws version 11 and leaves it to A, which
    holds the claim: when A's wait is over, its own view is superseded, and it posts the newest."""
    chat, surfaces = Chat(), MemorySurfaces()

    class Limited(WorkerTransport):
        refusals = 1

        async def send(self, chat_id: str, message: OutMessage) -> str:
            if self.refusals:
                self.refusals -= 1
                raise RateLimited(0.05)
            return await super().send(chat_id, message)

    a = Delivery(Limited(chat), surfaces, min_interval=0)
    b = Delivery(WorkerTransport(chat), surfaces, min_interval=0)
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    while not a.stats["retry_after"]:
        await asyncio.sleep(0.005)
    b.deliver([view(11, "hand 2: mus", since=10)])
    await b.flush()
    await a.flush()
    assert [text for text, _ in chat.messages.values()] == ["hand 2: mus"], chat.messages
    assert chat.live() == ["hand 2: mus"] and b.stats["left"] == 1 and b.stats["send"] == 0


@pytest.mark.parametrize("refusals", [1, 2, 3])
async def test_a_new_hand_refused_again_and_again_while_a_newer_view_waits_is_posted(refusals: int) -> None:
    """A worker's post of hand 2 is refused with a 429, a newer view of hand 2 takes its place in the lane,
    and that post is refused too: the retry is this worker's own view (its own offer is no other worker's),
    so hand 2 is posted, its newest view, once the platform takes it (found by bench/scale.py with
    Telegram's limits on: a group left on the last hand)."""
    chat, surfaces = Chat(), MemorySurfaces()

    class Limited(WorkerTransport):
        refusing = 0

        async def send(self, chat_id: str, message: OutMessage) -> str:
            if self.refusing:
                self.refusing -= 1
                raise RateLimited(0.05)
            return await super().send(chat_id, message)

    transport = Limited(chat)
    a = Delivery(transport, surfaces, min_interval=0)
    a.deliver([view(1, "hand 1 dealt", fresh=True), view(5, "hand 1 over", since=1)])
    await a.flush()
    transport.refusing = refusals
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    while not a.stats["retry_after"]:
        await asyncio.sleep(0.005)
    a.deliver([view(11, "hand 2: mus", since=10)])
    await a.flush()
    assert list(chat.messages.values()) == [("hand 1 over", ()), ("hand 2: mus", view(11, "").buttons)]


async def test_a_claim_is_renewed_while_its_workers_post_waits() -> None:
    """A's post is held (by a rate limiter) for three times its claim: A renews the claim meanwhile, so B
    goes on leaving its view to A and never posts a copy."""
    chat, surfaces = Chat(), MemorySurfaces(post_claim=0.1)
    a_calls = WorkerTransport(chat)
    a = Delivery(a_calls, surfaces, min_interval=0)
    b = Delivery(WorkerTransport(chat), surfaces, min_interval=0)
    gate = a_calls.hold()
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    await a_calls.in_flight.wait()
    b.deliver([view(11, "hand 2: mus", since=10)])
    await asyncio.sleep(0.3)
    assert b.stats["send"] == 0 and b.stats["left"] >= 2  # looked again, found the claim renewed
    gate.set()
    await a.flush()
    await asyncio.sleep(0.2)
    await b.flush()
    assert [text for text, _ in chat.messages.values()] == ["hand 2: mus"] and chat.deleted == []
    assert b.stats["send"] == 0


async def test_a_view_left_to_a_worker_that_died_posting_is_drawn_once_its_claim_ran_out() -> None:
    chat, surfaces = Chat(), MemorySurfaces(post_claim=0.1)
    a_calls = WorkerTransport(chat)
    a, b = (
        Delivery(a_calls, surfaces, min_interval=0),
        Delivery(WorkerTransport(chat), surfaces, min_interval=0),
    )
    a_calls.hold()  # never released: A dies with its post in flight
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    await a_calls.in_flight.wait()
    b.deliver([view(11, "hand 2: mus", since=10)])
    await b.flush()
    assert b.stats["left"] == 1 and chat.messages == {}
    await a.close()  # ... and its renewals stop
    await asyncio.sleep(0.3)  # the claim ran out: B looks again, and posts
    await b.flush()
    assert [text for text, _ in chat.messages.values()] == ["hand 2: mus"] and b.stats["send"] == 1


async def test_a_view_left_to_another_workers_post_that_takes_a_newer_own_view_draws_it() -> None:
    """A worker left its view to another worker's post (a recheck, queued again when the claim ran out);
    its own newer view arriving meanwhile takes that recheck's place and must be drawn: once the other
    worker's message exists, a recheck alone would never draw, and the chat would stay one state behind."""
    chat, surfaces = Chat(), MemorySurfaces(post_claim=0.1)
    a_calls, b_calls = WorkerTransport(chat), WorkerTransport(chat)
    a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
    gate = a_calls.hold()
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    await a_calls.in_flight.wait()
    b.deliver([view(11, "hand 2: mus", since=10)])
    await b.flush()
    assert b.stats["left"] == 1
    gate.set()
    await a.flush()  # A posted, and showed v11 again
    assert chat.live() == ["hand 2: mus"]
    # B's lane is busy (a slow notice) when its recheck is queued again; then B's own v12 comes.
    b_gate = b_calls.hold()
    b.deliver([OutMessage(slot="notice", text="a notice", chat=GROUP, fresh=True)])
    await b_calls.in_flight.wait()
    await asyncio.sleep(0.25)  # the claim ran out: the recheck is queued behind the notice
    b.deliver([view(12, "hand 2: mus · paso", since=10)])
    b_gate.set()
    await b.flush()
    await a.flush()
    assert chat.live() == ["hand 2: mus · paso"], chat.messages


async def test_a_second_copy_posted_after_a_claim_ran_out_is_deleted() -> None:
    chat, a, b = await post_one_hand_twice(claim=0.05)  # A's post outlived its claim (A froze)
    assert b.stats["send"] == 1 and a.stats["deleted"] == 1 and len(chat.deleted) == 1
    assert [text for text, _ in chat.messages.values()] == ["hand 1 over", "hand 2: mus"], chat.messages
    assert chat.live() == ["hand 2: mus"]


async def test_a_second_copy_the_platform_will_not_delete_keeps_no_button() -> None:
    chat, a, _ = await post_one_hand_twice(refuse_delete=True, claim=0.05)
    assert chat.live() == ["hand 2: mus"], chat.messages
    assert len(chat.messages) == 3 and a.stats["deleted"] == 0 and a.stats["stripped"] == 1


async def test_workers_share_the_chats_pacing() -> None:
    """Two workers writing to one chat call it no more often than one would (the interval is per chat)."""
    chat, surfaces = Chat(), MemorySurfaces()
    times: list[float] = []

    class Timed(WorkerTransport):
        async def send(self, chat_id: str, message: OutMessage) -> str:
            times.append(asyncio.get_running_loop().time())
            return await super().send(chat_id, message)

    interval = 0.1
    workers = [Delivery(Timed(chat), surfaces, min_interval=interval) for _ in range(2)]
    for n, worker in enumerate(workers):
        worker.deliver([OutMessage(slot="notice", text=f"{n}.{i}", chat=GROUP, fresh=True) for i in range(3)])
    await asyncio.gather(*(worker.flush() for worker in workers))
    assert len(chat.messages) == 6
    gaps = [later - earlier for earlier, later in itertools.pairwise(sorted(times))]
    assert min(gaps) >= interval * 0.9, gaps


async def test_workers_share_the_bots_budget_of_calls() -> None:
    """Two workers writing to many chats at once make no more calls a second than one bot may (a budget of
    calls both draw from), and each call waits only its own turn."""
    chat, surfaces, budget = Chat(), MemorySurfaces(), MemoryCallBudget()
    times: list[float] = []

    class Timed(WorkerTransport):
        async def send(self, chat_id: str, message: OutMessage) -> str:
            times.append(asyncio.get_running_loop().time())
            return await super().send(chat_id, message)

    rate = BotRate(per_second=40, burst=4)
    workers = [
        Delivery(BudgetedTransport(Timed(chat), budget, "x:bot", rate), surfaces, min_interval=0)
        for _ in range(2)
    ]
    started = asyncio.get_running_loop().time()
    for n, worker in enumerate(workers):
        worker.deliver(
            [OutMessage(slot="notice", text=f"{n}.{i}", chat=f"x:{i}", fresh=True) for i in range(30)]
        )
    await asyncio.gather(*(worker.flush() for worker in workers))
    assert len(chat.messages) == 60
    times.sort()
    busiest = max(sum(1 for t in times[i:] if t < start + 0.5) for i, start in enumerate(times))
    assert busiest <= 40 * 0.5 + 4, busiest  # the rate and the burst, for both workers together
    assert times[-1] - started >= (60 - 4) / 40 * 0.95  # the calls were spread, not sent at once


async def test_a_view_another_worker_is_showing_costs_no_second_call() -> None:
    chat, (a, a_calls), (b, _) = await two_workers()
    b.deliver([view(1, "Ane's turn", fresh=True)])
    await b.flush()
    a.deliver([view(2, "Iker's turn")])
    await a.flush()
    # A draws version 3 (back to what B showed at 1); its edit is in flight when B draws version 4, which
    # shows the same: B leaves it to A (no call), and the chat ends on it.
    gate = a_calls.hold()
    a.deliver([view(3, "Ane's turn")])
    await a_calls.in_flight.wait()
    calls_before = b.stats["edit"] + b.stats["not_modified"] + b.stats["send"]
    b.deliver([view(4, "Ane's turn")])
    await b.flush()
    assert b.stats["edit"] + b.stats["not_modified"] + b.stats["send"] == calls_before
    gate.set()
    await a.flush()
    await b.flush()
    assert [text for text, _ in chat.messages.values()] == ["Ane's turn"]


class Jittery(WorkerTransport):
    """Calls that take a random while before and after the platform applies them (so they cross)."""

    def __init__(self, chat: Chat, rng: random.Random, posted_for: dict[str, str]) -> None:
        super().__init__(chat)
        self.rng = rng
        self.posted_for = posted_for

    async def _jitter(self) -> None:
        await asyncio.sleep(self.rng.random() * 0.004)

    async def send(self, chat: str, message: OutMessage) -> str:
        await self._jitter()
        message_id = await super().send(chat, message)
        self.posted_for[message_id] = message.text.split(":")[0]
        await self._jitter()
        return message_id

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        await self._jitter()  # (the wait for its turn: the check is asked after it)
        await super().edit(chat, message_id, message, check)
        await self._jitter()

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        await self._jitter()
        if check is not None and not await check():
            raise Unneeded("bare by its turn")
        if not self.chat.messages[message_id][1]:
            raise NotModified("no buttons to remove")
        await super().clear_buttons(chat, message_id)
        await self._jitter()

    async def delete(self, chat: str, message_id: str) -> None:
        await self._jitter()
        await super().delete(chat, message_id)
        await self._jitter()


@pytest.mark.parametrize("interval", [0.0, 0.002])
@pytest.mark.parametrize("seed", range(30))
async def test_three_workers_with_calls_crossing_end_on_the_newest_with_every_hand_kept(
    seed: int, interval: float
) -> None:
    """Random hands and moves, each version delivered by a random one of three workers whose calls take
    random times: the chat ends with one live keyboard, on the newest version; no message ever shows a
    hand other than the one it was posted for, and no hand is shown twice (a second copy, posted by two
    workers at once, is deleted); the last hand's message ends on its last state. With
    pacing, views wait in the lanes and coalesce (also into another worker's view queued to be shown
    again)."""
    rng = random.Random(seed)
    chat, surfaces, posted_for = Chat(), MemorySurfaces(), {}
    workers = [Delivery(Jittery(chat, rng, posted_for), surfaces, min_interval=interval) for _ in range(3)]
    hand, since, previous_since = 1, 1, 0
    last_of: dict[str, str] = {}
    for version in range(1, 40):
        fresh = version == 1 or rng.random() < 0.15
        if fresh and version > 1:
            hand, since, previous_since = hand + 1, version, since
        buttons = ((Button("Paso", f"{TABLE}.{hand}-{version}.paso"),),)
        text = f"hand {hand}: version {version}"
        last_of[f"hand {hand}"] = text
        message = OutMessage(
            slot="table", text=text, chat=GROUP, buttons=buttons, fresh=fresh, table=TABLE, version=version
        )
        rng.choice(workers).deliver([replace(message, since=since)])
        await asyncio.sleep(rng.random() * 0.004)
    for _ in range(3):  # a reshow or a strip queued by one worker's last look
        await asyncio.gather(*(worker.flush() for worker in workers))
    assert chat.live() == [f"hand {hand}: version 39"], chat.messages
    assert all(text.split(":")[0] == posted_for[i] for i, (text, _) in chat.messages.items()), chat.messages
    copies = collections.Counter(posted_for[i] for i in chat.messages)
    assert max(copies.values()) == 1, (copies, chat.messages)
    # The last hand's message ends on its last state: its story (older hands are no longer drawn).
    if previous_since:
        kept = await surfaces.newest(TABLE, GROUP, "table", previous_since)
        if kept.message_id is not None:
            assert chat.messages[kept.message_id][0] == last_of[f"hand {hand - 1}"], chat.messages


async def test_a_workers_own_view_that_takes_the_place_of_one_shown_again_still_begins_its_hand() -> None:
    """A view this worker queued to show again for another worker (an edit only) is replaced, in its lane,
    by the worker's own newer view of a new hand: that one must still post the new hand's message (it once
    inherited "edit only", and the hand never appeared)."""
    chat, (a, a_calls), (b, b_calls) = await two_workers()
    a.deliver([view(1, "hand 1: Ane's turn", fresh=True)])
    await a.flush()
    # A's edit of version 2 lands after B's version 3: A queues version 3 to be shown again...
    gate = a_calls.hold()
    a.deliver([view(2, "hand 1: Iker's turn")])
    await a_calls.in_flight.wait()
    b.deliver([view(3, "hand 1 over")])
    await b.flush()
    a.min_interval = 0.2  # ...and it waits for the chat's pacing
    gate.set()
    lane = a._lanes[GROUP]
    for _ in range(100):
        if any(p.kind is ViewCall.RESHOW for p in lane.pending):
            break
        await asyncio.sleep(0.005)
    else:
        raise AssertionError("worker A queued nothing to show again")
    # B deals hand 2 (a new message) behind a slow call; A's own version 5 of hand 2 joins A's queued view.
    b_gate = b_calls.hold()
    b.deliver([OutMessage(slot="notice", text="Hand over.", chat=GROUP, fresh=True)])
    await b_calls.in_flight.wait()
    b.deliver([view(4, "hand 2: Maite's turn", fresh=True)])
    a.deliver([view(5, "hand 2: Maite: mus · Nerea's turn", since=4)])
    await a.flush()
    b_gate.set()
    await b.flush()
    await a.flush()
    assert chat.live() == ["hand 2: Maite: mus · Nerea's turn"], chat.messages
    assert next(iter(chat.messages.values()))[0] == "hand 1 over"


async def test_a_new_hands_own_view_coming_after_a_redraw_of_that_hand_edits_its_message() -> None:
    """A refused press redraws the table as the store holds it: a hand just dealt, whose own view (the
    deadline's that dealt it) reaches a lane after the redraw. The redraw posts the hand's message; the
    deal's view edits it (it once posted a second copy of the hand)."""
    chat, (a, _), (b, _) = await two_workers()
    a.deliver([view(1, "hand 1", fresh=True), view(8, "hand 1 over")])
    await a.flush()
    a.deliver([view(9, "hand 2: Ane's turn", since=9)])  # the redraw, first
    await a.flush()
    a.deliver([view(9, "hand 2: Ane's turn", fresh=True)])  # the deal's own view
    await a.flush()
    assert [text for text, _ in chat.messages.values()] == ["hand 1 over", "hand 2: Ane's turn"]
    # The same on two workers: one draws the redraw of hand 3, the other the deal.
    b.deliver([view(12, "hand 3: Iker's turn", since=12)])
    await b.flush()
    a.deliver([view(12, "hand 3: Iker's turn", fresh=True)])
    await a.flush()
    a.deliver([view(13, "hand 3: Iker: mus", since=12)])
    await a.flush()
    texts = [text for text, _ in chat.messages.values()]
    assert texts == ["hand 1 over", "hand 2: Ane's turn", "hand 3: Iker: mus"], texts
    assert chat.live() == ["hand 3: Iker: mus"]


async def test_a_view_posted_again_moves_its_message_to_the_bottom() -> None:
    chat, (a, _), _ = await two_workers()
    a.deliver([view(1, "hand 1: Ane's turn", fresh=True)])
    await a.flush()
    a.deliver([OutMessage(slot="notice", text="/newgame", chat=GROUP, fresh=True, table=TABLE)])
    a.deliver([view(1, "hand 1: Ane's turn", fresh=True, again=True)])  # nothing changed since the deal
    await a.flush()
    texts = [text for text, _ in chat.messages.values()]
    assert texts == ["hand 1: Ane's turn", "/newgame", "hand 1: Ane's turn"], texts
    assert chat.live() == ["hand 1: Ane's turn"] and list(chat.messages.values())[-1][1]


async def test_a_redraw_older_than_a_view_waiting_in_the_lane_does_not_take_its_place() -> None:
    """A refused press redraws the table as it loaded it; the write that made the next version may deliver
    its views first. The late, older redraw must not replace them in the lane (the hand's last view was
    lost so, and its table kept showing the órdago to answer)."""
    chat, (a, a_calls), _ = await two_workers()
    a.deliver([view(1, "hand 1: Ane's turn", fresh=True)])
    await a.flush()
    gate = a_calls.hold()
    a.deliver([view(2, "Nerea: órdago · Ane's turn")])
    await a_calls.in_flight.wait()
    a.deliver([view(3, "Hand over: see the showdown below.")])  # Ane accepted
    a.deliver([view(2, "Nerea: órdago · Ane's turn")])  # the redraw of a press refused meanwhile
    gate.set()
    await a.flush()
    assert [text for text, _ in chat.messages.values()] == ["Hand over: see the showdown below."]


class Strips(WorkerTransport):
    """A worker's transport that counts its calls removing buttons (the platform answers one on a message
    with none "message is not modified": a call spent for nothing)."""

    def __init__(self, chat: Chat) -> None:
        super().__init__(chat)
        self.strips: list[str] = []

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        if check is not None and not await check():
            raise Unneeded("bare by its turn")
        self.strips.append(message_id)
        if not self.chat.messages[message_id][1]:
            raise NotModified("message is not modified")
        await super().clear_buttons(chat, message_id)


async def test_a_message_another_worker_drew_without_buttons_loses_none_again() -> None:
    """A player's cards posted without buttons by one worker (nothing to press at that moment), or a table
    whose last view one worker drew without them: the worker that posts the next message knows, from the
    store, that the old one has no buttons to remove, and makes no call for it."""
    for bare_post in (True, False):
        chat, surfaces = Chat(), MemorySurfaces()
        a_calls, b_calls = Strips(chat), Strips(chat)
        a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
        if bare_post:
            b.deliver([replace(view(1, "your cards: R R 7 4", fresh=True), buttons=())])
        else:
            b.deliver([view(1, "hand 1", fresh=True), replace(view(9, "hand 1 over"), buttons=())])
        await b.flush()
        a.deliver([view(10, "hand 2 dealt", fresh=True)])
        await a.flush()
        assert chat.live() == ["hand 2 dealt"], chat.messages
        assert a_calls.strips == [] and a.stats["stripped"] == 0, (bare_post, a_calls.strips)


async def test_a_message_two_workers_strip_loses_its_buttons_in_one_call() -> None:
    """Worker A's edit of hand 1 lands once worker B posted hand 2: both see that hand 1's message keeps
    buttons it must lose (A after its call, B as it posts), and both queue a strip. The first strip that
    lands is recorded; the other worker then knows the message has none left, and makes no call."""
    chat, surfaces = Chat(), MemorySurfaces()
    a_calls, b_calls = Strips(chat), Strips(chat)
    a = Delivery(a_calls, surfaces, min_interval=0)
    b = Delivery(b_calls, surfaces, min_interval=0.3)  # its strip comes a moment after its post
    a.deliver([view(1, "hand 1", fresh=True)])
    await a.flush()
    gate = a_calls.hold()
    a.deliver([view(2, "hand 1: Ane: paso")])
    await a_calls.in_flight.wait()
    b.deliver([view(10, "hand 2 dealt", fresh=True)])
    while len(chat.messages) < 2:  # B's post landed; its strip of hand 1's message waits for its turn
        await asyncio.sleep(0.01)
    gate.set()
    await a.flush()
    await b.flush()
    assert chat.live() == ["hand 2 dealt"], chat.messages
    assert len(a_calls.strips) + len(b_calls.strips) == 1, (a_calls.strips, b_calls.strips)


class HeldStrips(Strips):
    """A worker's transport whose first strip stays in flight (a rate limiter holds it) until released."""

    def __init__(self, chat: Chat) -> None:
        super().__init__(chat)
        self.release = asyncio.Event()
        self.strip_in_flight = asyncio.Event()

    async def clear_buttons(self, chat: str, message_id: str, check: StillNeeded | None = None) -> None:
        if not self.strip_in_flight.is_set():
            self.strip_in_flight.set()
            await self.release.wait()
        await super().clear_buttons(chat, message_id, check)


class Edits(WorkerTransport):
    """A worker's transport that keeps the edits it made (not those its check found no longer needed)."""

    def __init__(self, chat: Chat) -> None:
        super().__init__(chat)
        self.edits: list[str] = []

    async def edit(
        self, chat: str, message_id: str, message: OutMessage, check: StillNeeded | None = None
    ) -> None:
        await super().edit(chat, message_id, message, check)
        self.edits.append(message.text)


async def test_an_edit_whose_view_another_worker_drew_while_it_waited_makes_no_call() -> None:
    """Worker A's edit waits for its turn (a rate limiter holds it) while worker B draws two later versions,
    the last showing the same as A's; when A's turn comes the store knows the message shows it: no call,
    where the platform would have answered "message is not modified"."""
    chat, surfaces = Chat(), MemorySurfaces()
    a_calls, b_calls = Edits(chat), Edits(chat)
    a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
    a.deliver([view(1, "hand 1", fresh=True)])
    await a.flush()
    gate = a_calls.hold()
    a.deliver([view(2, "hand 1: Ane: paso")])
    await a_calls.in_flight.wait()
    b.deliver([view(3, "hand 1: Iker thinks")])
    await b.flush()
    b.deliver([view(4, "hand 1: Ane: paso")])
    await b.flush()
    gate.set()
    await a.flush()
    assert a_calls.edits == [], a_calls.edits
    assert b_calls.edits == ["hand 1: Iker thinks", "hand 1: Ane: paso"], b_calls.edits
    assert list(chat.messages.values()) == [("hand 1: Ane: paso", view(4, "").buttons)], chat.messages
    assert a.stats["skipped"] >= 1 and a.stats["not_modified"] == 0


async def test_a_strip_on_its_way_is_left_to_its_worker_and_costs_no_second_call() -> None:
    """Worker A's edit of hand 1 lands once worker B posted hand 2, and A's strip of that message is held by
    a rate limiter (longer than a claim lasts) when B's own strip of it comes. B leaves the strip to A (whose
    claim A renews while its call waits), looks again once A's strip landed, finds the message bare, and
    makes no call: one strip in all."""
    chat, surfaces = Chat(), MemorySurfaces(post_claim=0.2)
    a_calls, b_calls = HeldStrips(chat), Strips(chat)
    a = Delivery(a_calls, surfaces, min_interval=0)
    b = Delivery(b_calls, surfaces, min_interval=0.3)  # its strip comes a moment after its post
    a.deliver([view(1, "hand 1", fresh=True)])
    await a.flush()
    gate = a_calls.hold()
    a.deliver([view(2, "hand 1: Ane: paso")])
    await a_calls.in_flight.wait()
    b.deliver([view(10, "hand 2 dealt", fresh=True)])
    while len(chat.messages) < 2:  # B's post landed; its strip of hand 1's message waits for its turn
        await asyncio.sleep(0.01)
    gate.set()
    await a_calls.strip_in_flight.wait()  # A's edit landed; A's strip of the same message is on its way
    # B's strip came and was left to A, well past the claim's own time: A renewed it (each renewal holding it
    # longer while the call waits), and B looked again only once each hold had passed.
    await asyncio.sleep(0.7)
    assert b_calls.strips == [] and b.stats["left"] >= 1, (b_calls.strips, b.stats["left"])
    a_calls.release.set()
    await a.flush()
    await asyncio.sleep(0.4)  # B's last look: the message is known bare
    await b.flush()
    assert chat.live() == ["hand 2 dealt"], chat.messages
    assert (len(a_calls.strips), b_calls.strips) == (1, []), (a_calls.strips, b_calls.strips)
    assert b.stats["skipped"] >= 1


async def test_a_strip_whose_message_was_left_bare_while_it_waited_makes_no_call() -> None:
    """Worker A posts hand 2, and its strip of hand 1's message waits for its turn (a rate limiter holds it);
    meanwhile worker B's last edit of hand 1, drawn without buttons, lands. When A's turn comes the store
    knows the message bare: A makes no call (it would only be answered "not modified")."""
    chat, surfaces = Chat(), MemorySurfaces()
    a_calls, b_calls = HeldStrips(chat), Strips(chat)
    a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
    a.deliver([view(1, "hand 1", fresh=True)])
    await a.flush()
    a.deliver([view(10, "hand 2 dealt", fresh=True)])
    await a_calls.strip_in_flight.wait()  # hand 2 posted; the strip of hand 1's message waits its turn
    b.deliver([replace(view(2, "hand 1 over"), buttons=())])
    await b.flush()
    assert ("hand 1 over", ()) in chat.messages.values(), chat.messages
    a_calls.release.set()
    await a.flush()
    assert (a_calls.strips, b_calls.strips) == ([], []), (a_calls.strips, b_calls.strips)
    assert chat.live() == ["hand 2 dealt"], chat.messages
    assert a.stats["skipped"] >= 1


@pytest.mark.parametrize("timed_out", [False, True])
async def test_buttons_another_worker_drew_on_a_message_this_one_left_bare_are_removed(
    timed_out: bool,
) -> None:
    """Worker B drew hand 1's message without buttons; worker A then drew them back on it (its edit may even
    have timed out, though the platform applied it). When B posts hand 2, the old message must lose those
    buttons: B's own cache (bare, as B drew it) is not what the message shows."""

    class TimesOut(Strips):
        async def edit(self, chat: str, message_id: str, message: OutMessage, check: object = None) -> None:
            await super().edit(chat, message_id, message)
            raise Refused("Timed out")

    chat, surfaces = Chat(), MemorySurfaces()
    a_calls, b_calls = (TimesOut if timed_out else Strips)(chat), Strips(chat)
    a, b = Delivery(a_calls, surfaces, min_interval=0), Delivery(b_calls, surfaces, min_interval=0)
    b.deliver([view(1, "hand 1", fresh=True), replace(view(2, "hand 1: Iker thinks"), buttons=())])
    await b.flush()
    a.deliver([view(3, "hand 1: your turn")])
    await a.flush()
    b.deliver([view(10, "hand 2 dealt", fresh=True)])
    await b.flush()
    assert chat.live() == ["hand 2 dealt"], chat.messages


class Starved:
    """One worker's side of the bot's shared budget while that worker is starved of CPU: its turns are booked
    on time, but it hears the answers only once the stall is over (``until``, on the loop's clock)."""

    def __init__(self, shared: MemoryCallBudget, until: float) -> None:
        self.shared = shared
        self.until = until

    async def draw(self, bot: str, rate: BotRate, chat: str | None = None, window: object = None) -> Drawn:
        drawn = await self.shared.draw(bot, rate)
        await asyncio.sleep(max(0.0, self.until - asyncio.get_running_loop().time()))
        return drawn


async def test_a_worker_that_hears_its_turns_late_books_new_ones_and_the_bot_keeps_its_rate() -> None:
    """Two workers share the bot's budget of 40 calls a second; one is starved for 0.6 s just after it booked
    a second's worth of calls. Sent at once when it wakes, those calls would go with the other worker's calls
    of that moment: far over 40 in one second. Late calls book new turns instead."""
    chat, surfaces, budget = Chat(), MemorySurfaces(), MemoryCallBudget()
    times: list[float] = []

    class Timed(WorkerTransport):
        async def send(self, chat_id: str, message: OutMessage) -> str:
            times.append(asyncio.get_running_loop().time())
            return await super().send(chat_id, message)

    rate = BotRate(per_second=40, burst=2)
    starved = Starved(budget, asyncio.get_running_loop().time() + 0.6)
    workers = [
        Delivery(BudgetedTransport(Timed(chat), calls, "x:bot", rate), surfaces, min_interval=0)
        for calls in (starved, budget)
    ]
    workers[0].deliver(
        [OutMessage(slot="notice", text=f"0.{i}", chat=f"x:{i}", fresh=True) for i in range(40)]
    )
    await asyncio.sleep(0.05)  # the starved worker's turns are booked: the other worker's come after
    workers[1].deliver(
        [OutMessage(slot="notice", text=f"1.{i}", chat=f"x:{i}", fresh=True) for i in range(60)]
    )
    await asyncio.gather(*(worker.flush() for worker in workers))
    assert len(chat.messages) == 100
    times.sort()
    busiest = max(sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times))
    assert busiest <= 40 * 1.15 + 2, (
        busiest
    )  # the rate, lateness allowed and the burst, both workers together
