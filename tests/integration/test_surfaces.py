"""One contract for where views live (``bot.delivery._surfaces``), run against memory and a real Redis."""

from __future__ import annotations

import asyncio

import pytest

from bot.delivery import RedisSurfaces, SurfaceStore
from bot.delivery._surface_answers import Offer
from bot.delivery._surface_scripts import GONE_KEPT
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.store import AnyRedis


@pytest.fixture(params=["memory", "redis"])
def surfaces(request: pytest.FixtureRequest, redis_client: AnyRedis, key_prefix: str) -> SurfaceStore:
    if request.param == "memory":
        return MemorySurfaces(post_claim=CLAIM)
    return RedisSurfaces(redis_client, key_prefix, post_claim=CLAIM)


CLAIM = 0.3
"""Seconds a claim to post holds in these tests."""


def basics(offer: Offer) -> tuple[bool, int, str | None, int, bool]:
    """What every offer answers (taken, version before, the epoch's message, newest epoch, same view)."""
    return offer.accepted, offer.previous, offer.message_id, offer.current, offer.same


async def test_a_slot_shows_one_message_per_chat_and_platform(surfaces: SurfaceStore) -> None:
    assert await surfaces.get("t0000001", "tg:-100", "table") is None
    await surfaces.set("t0000001", "tg:-100", "table", "41")
    await surfaces.set("t0000001", "tg:7", "hand", "9")
    await surfaces.set("t0000001", "dc:-100", "table", "1234567890123")  # another platform, same local id
    assert await surfaces.get("t0000001", "tg:-100", "table") == "41"
    assert await surfaces.get("t0000001", "dc:-100", "table") == "1234567890123"
    assert await surfaces.get("t0000001", "tg:7", "hand") == "9"
    assert await surfaces.get("t0000002", "tg:-100", "table") is None
    await surfaces.set("t0000001", "tg:-100", "table", "42")  # a new message now shows it
    assert await surfaces.get("t0000001", "tg:-100", "table") == "42"
    await surfaces.forget("t0000001", "tg:-100", "table")
    assert await surfaces.get("t0000001", "tg:-100", "table") is None
    assert await surfaces.get("t0000001", "dc:-100", "table") == "1234567890123"


async def test_who_can_be_written_to_privately(surfaces: SurfaceStore) -> None:
    assert not await surfaces.reachable("tg:7")
    await surfaces.set_reachable("tg:7", True)
    assert await surfaces.reachable("tg:7") and not await surfaces.reachable("dc:7")
    await surfaces.set_reachable("tg:7", False)
    assert not await surfaces.reachable("tg:7")


async def test_the_redis_layout_is_the_one_deployed_before(redis_client: AnyRedis, key_prefix: str) -> None:
    """Message ids and reachable users written by earlier versions are still found (no table loses its
    messages on an upgrade): ``{prefix}tg:surf:{table}`` → ``{chat id}:{slot}``, ``{prefix}tg:reachable``."""
    await redis_client.hset(f"{key_prefix}tg:surf:t0000009", "-100:table", 77)
    await redis_client.sadd(f"{key_prefix}tg:reachable", "5")
    surfaces = RedisSurfaces(redis_client, key_prefix)
    assert await surfaces.get("t0000009", "tg:-100", "table") == "77"
    assert await surfaces.reachable("tg:5")
    await surfaces.set("t0000009", "tg:-100", "hand", "78")
    assert 0 < await redis_client.ttl(f"{key_prefix}tg:surf:t0000009") <= 7 * 86400


async def test_each_hand_keeps_its_newest_view_by_version(surfaces: SurfaceStore) -> None:
    """Workers offering views of one slot: each epoch (the hand, or cards, a message began at) keeps its
    newest version, whatever the order of the offers; the two newest epochs are kept."""
    t, chat = "t0000001", "tg:-100"
    assert await surfaces.newest(t, chat, "table", 1) == (0, None, None, 0, True)
    assert basics(await surfaces.offer(t, chat, "table", 5, '{"v":5}', since=1)) == (True, 0, None, 1, False)
    assert basics(await surfaces.offer(t, chat, "table", 7, '{"v":7}', since=1)) == (True, 5, None, 1, False)
    assert await surfaces.record(t, chat, "table", "41", since=1, replacing=None) == (True, None, None, False)
    # The older one, late: refused, and the epoch still has the newer (and says which message shows it).
    assert basics(await surfaces.offer(t, chat, "table", 6, '{"v":6}', since=1)) == (False, 7, "41", 1, False)
    # The same version again (a redraw) is taken.
    assert basics(await surfaces.offer(t, chat, "table", 7, '{"v":7b}', since=1)) == (True, 7, "41", 1, False)
    assert await surfaces.newest(t, chat, "table", 1) == (7, '{"v":7b}', "41", 1, True)
    # A new hand begins at 9: its views are its own, and the last hand's final view is still taken.
    assert basics(await surfaces.offer(t, chat, "table", 10, '{"v":10}', since=9)) == (
        True,
        0,
        None,
        9,
        False,
    )
    assert basics(await surfaces.offer(t, chat, "table", 9, '{"v":9}', since=1)) == (True, 7, "41", 9, False)
    assert await surfaces.newest(t, chat, "table", 9) == (10, '{"v":10}', None, 9, True)
    # A third hand: the first one is forgotten (a view of it is refused), the second is kept.
    assert (await surfaces.offer(t, chat, "table", 20, "{}", since=20)).accepted
    assert basics(await surfaces.offer(t, chat, "table", 21, "{}", since=1)) == (False, 0, None, 20, False)
    assert (await surfaces.offer(t, chat, "table", 19, "{}", since=9)).accepted
    # Other slots, chats and platforms are apart.
    assert (await surfaces.newest(t, chat, "lobby", 1)).version == 0
    assert (await surfaces.newest(t, "dc:-100", "table", 1)).version == 0
    assert (await surfaces.offer(t, "tg:7", "hand", 1, "{}", since=1)).accepted


async def test_the_first_message_of_a_hand_stays_and_shows_the_slot(surfaces: SurfaceStore) -> None:
    """Two workers posting a hand's message at once: the first recorded is the hand's, the other is told
    which one won; the newest hand's message shows the slot; a message posted again over the hand's own
    (the table posted at the bottom) replaces it; a deleted one is forgotten."""
    t, chat = "t0000001", "tg:-100"
    assert await surfaces.record(t, chat, "table", "40", since=1, replacing=None) == (True, None, None, False)
    assert await surfaces.record(t, chat, "table", "50", since=10, replacing=None) == (True, "40", 1, False)
    assert await surfaces.record(t, chat, "table", "51", since=10, replacing=None) == (False, "50", 10, False)
    assert await surfaces.get(t, chat, "table") == "50"
    assert (await surfaces.offer(t, chat, "table", 11, "{}", since=10)).message_id == "50"
    # An older hand's message (posted late): its hand's, never the slot's.
    assert await surfaces.record(t, chat, "table", "45", since=5, replacing=None) == (True, None, 5, False)
    assert await surfaces.get(t, chat, "table") == "50"
    # Posted again over the hand's own message: taken, and says what it replaced.
    assert await surfaces.record(t, chat, "table", "52", since=10, replacing="50") == (True, "50", 10, False)
    assert await surfaces.get(t, chat, "table") == "52"
    assert (await surfaces.offer(t, chat, "table", 12, "{}", since=10)).message_id == "52"
    await surfaces.forget(t, chat, "table", 10)
    assert await surfaces.get(t, chat, "table") is None
    assert (await surfaces.offer(t, chat, "table", 13, "{}", since=10)).message_id is None
    # ``set`` (a message of no epoch: views that know no table version) always shows the slot.
    await surfaces.set(t, chat, "table", "60")
    assert await surfaces.get(t, chat, "table") == "60"


async def test_a_chat_that_moved_forgets_its_slots_and_names_their_messages(surfaces: SurfaceStore) -> None:
    """A chat moved to a new key (a group upgraded to a supergroup): every slot of the table in the old chat
    is forgotten, and the message that shows each is named (its buttons go: an earlier hand's lost them
    already); other chats, other tables, a private hand and a chat whose id extends the old one's stay."""
    t, old, new = "t0000001", "tg:-4001", "tg:-1004001"
    await surfaces.record(t, old, "table", "40", since=1, replacing=None)
    await surfaces.record(t, old, "table", "50", since=10, replacing=None)  # the next hand's message
    assert (await surfaces.offer(t, old, "table", 11, "{}", since=10)).message_id == "50"
    await surfaces.set(t, old, "lobby", "7")
    for chat, slot, message in ((new, "table", "2"), ("tg:-40011", "table", "3"), ("tg:1", "hand", "9")):
        await surfaces.set(t, chat, slot, message)
    await surfaces.set("t0000002", old, "table", "60")
    assert await surfaces.forget_chat(t, old) == {"table": "50", "lobby": "7"}
    assert await surfaces.get(t, old, "table") is None and await surfaces.get(t, old, "lobby") is None
    offer = await surfaces.offer(t, old, "table", 12, "{}", since=10)  # as if nothing was ever posted
    assert (offer.accepted, offer.previous, offer.message_id) == (True, 0, None)
    assert await surfaces.forget_chat(t, old) == {}  # again: nothing left
    assert [
        await surfaces.get(t, c, s) for c, s in ((new, "table"), ("tg:-40011", "table"), ("tg:1", "hand"))
    ] == [
        "2",
        "3",
        "9",
    ]
    assert await surfaces.get("t0000002", old, "table") == "60"


async def test_a_view_that_shows_what_the_newest_shows_is_left_to_its_worker(surfaces: SurfaceStore) -> None:
    """With a digest of what it shows, a newer view identical to its epoch's newest is not taken (that one's
    worker shows it; taking this one would make that worker drop it as superseded)."""
    t, user = "t0000001", "tg:7"
    assert (await surfaces.offer(t, user, "hand", 5, '{"a":5}', since=3, digest="aaaa")).accepted
    same = await surfaces.offer(t, user, "hand", 6, '{"a":6}', since=3, digest="aaaa")
    assert basics(same) == (False, 5, None, 3, True) and not same.claimed
    assert await surfaces.newest(t, user, "hand", 3) == (5, '{"a":5}', None, 3, True)
    # Older than the newest: superseded, whatever it shows; something else, or no digest: taken.
    older = await surfaces.offer(t, user, "hand", 4, "{}", since=3, digest="aaaa")
    assert not older.accepted and not older.same
    assert (await surfaces.offer(t, user, "hand", 7, '{"b":7}', since=3, digest="bbbb")).accepted
    assert (await surfaces.offer(t, user, "hand", 8, '{"b":8}', since=3)).accepted
    assert (await surfaces.offer(t, user, "hand", 9, '{"b":9}', since=3, digest="bbbb")).accepted
    # A view that must be drawn anyway (a new message: not shared) is taken whatever the newest shows, and
    # what it shows is kept: another worker's same view, of the same version, is left to it.
    posted = await surfaces.offer(t, user, "hand", 10, '{"b":10}', since=3, digest="bbbb", shares=False)
    assert posted.accepted
    again = await surfaces.offer(t, user, "hand", 10, '{"b":10}', since=3, digest="bbbb")
    assert basics(again) == (False, 10, None, 3, True)


async def test_one_worker_at_a_time_posts_an_epochs_message(surfaces: SurfaceStore) -> None:
    """The first offer meant to post an epoch's message (a ``poster``) claims the post, taken or not; other
    workers' offers meanwhile are told it is posted elsewhere; the claim ends with the record, or after its
    time, and only ever concerns the newest epoch's message, if it has none."""
    t, chat = "t0000001", "tg:-100"
    first = await surfaces.offer(t, chat, "table", 10, "{}", since=10, poster="a")
    assert first.accepted and first.message_id is None and first.claimed and not first.posting_elsewhere
    second = await surfaces.offer(t, chat, "table", 11, "{}", since=10, poster="b")
    assert second.accepted and second.posting_elsewhere and not second.claimed  # the newest, left to a
    assert 0 < second.claim_left <= CLAIM  # ... unless a is gone by then: b looks again
    # a's own view, superseded meanwhile: still a's to post (with the newest view).
    late = await surfaces.offer(t, chat, "table", 10, "{}", since=10, poster="a")
    assert not late.accepted and late.claimed and not late.posting_elsewhere
    quiet = await surfaces.offer(t, chat, "table", 13, "{}", since=10)  # not meant to post: no claim
    assert quiet.accepted and not quiet.claimed and not quiet.posting_elsewhere
    assert (await surfaces.record(t, chat, "table", "41", since=10, replacing=None)).taken
    after = await surfaces.offer(t, chat, "table", 14, "{}", since=10, poster="b")
    assert after.message_id == "41" and not after.claimed and not after.posting_elsewhere
    # A claim whose worker never records (it died posting) passes to another once its time is over.
    assert (await surfaces.offer(t, chat, "table", 20, "{}", since=20, poster="a")).claimed
    assert (await surfaces.offer(t, chat, "table", 21, "{}", since=20, poster="b")).posting_elsewhere
    await asyncio.sleep(CLAIM + 0.05)
    assert (await surfaces.offer(t, chat, "table", 22, "{}", since=20, poster="b")).claimed
    assert (await surfaces.offer(t, chat, "table", 23, "{}", since=20, poster="a")).posting_elsewhere
    # Once a newer epoch begins, the one before it is never claimed (its message is not posted any more).
    assert (await surfaces.offer(t, chat, "table", 30, "{}", since=30, poster="c")).claimed
    older = await surfaces.offer(t, chat, "table", 24, "{}", since=20, poster="c")
    assert older.accepted and older.message_id is None and not older.claimed and not older.posting_elsewhere
    # A claim is renewed by its worker while its call waits; by no other; not once the message is recorded.
    assert (await surfaces.offer(t, chat, "table", 40, "{}", since=40, poster="a")).claimed
    await asyncio.sleep(CLAIM * 0.7)
    assert await surfaces.renew(t, chat, "table", since=40, poster="a")
    assert not await surfaces.renew(t, chat, "table", since=40, poster="b")
    await asyncio.sleep(CLAIM * 0.7)  # past the first claim's time, not the renewal's
    assert (await surfaces.offer(t, chat, "table", 41, "{}", since=40, poster="b")).posting_elsewhere
    assert (await surfaces.record(t, chat, "table", "44", since=40, replacing=None)).taken
    assert not await surfaces.renew(t, chat, "table", since=40, poster="a")


async def test_a_renewal_holds_a_claim_beyond_its_length(surfaces: SurfaceStore) -> None:
    """A renewal with a hold keeps the other workers off for the claim's length and the hold (a call that has
    waited long is renewed less often); then the claim passes, to post as to strip."""
    t, chat = "t0000001", "tg:-100"
    assert (await surfaces.offer(t, chat, "table", 1, "{}", since=1, poster="a")).claimed
    assert await surfaces.renew(t, chat, "table", since=1, poster="a", hold=CLAIM * 2)
    await asyncio.sleep(CLAIM * 1.5)  # past the claim's length from the renewal, not past the hold
    held = await surfaces.offer(t, chat, "table", 2, "{}", since=1, poster="b")
    assert held.posting_elsewhere and CLAIM * 1.2 < held.claim_left <= CLAIM * 1.5 + 0.02, held
    await asyncio.sleep(CLAIM * 1.5 + 0.05)
    assert (await surfaces.offer(t, chat, "table", 3, "{}", since=1, poster="b")).claimed
    assert (await surfaces.record(t, chat, "table", "41", since=1, replacing=None)).taken
    await surfaces.landed(t, chat, "table", "41", since=1, digest="d1", buttons=True, begun=0)
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="a")).held_elsewhere == 0
    assert await surfaces.renew(t, chat, "table", since=1, poster="a", strip=True, hold=CLAIM * 2)
    await asyncio.sleep(CLAIM * 1.5)
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")).held_elsewhere > 0
    await asyncio.sleep(CLAIM * 1.5 + 0.05)
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")).held_elsewhere == 0


async def test_workers_share_a_chats_pacing(surfaces: SurfaceStore) -> None:
    """Each booking of a chat's next call comes one interval after the previous one; other chats are free."""
    waits = [await surfaces.pace("tg:-100", 0.5) for _ in range(3)]
    assert waits[0] < 0.05
    assert 0.4 < waits[1] <= 0.5 and 0.9 < waits[2] <= 1.0, waits
    assert await surfaces.pace("tg:-200", 0.5) < 0.05
    assert await surfaces.pace("dc:-100", 0.5) < 0.05


async def test_what_a_message_shows_is_known_while_its_calls_land_one_after_the_other(
    surfaces: SurfaceStore,
) -> None:
    """Each call that lands on an epoch's message is recorded: what the message shows is known while the
    last call began after every other had landed, and two calls that crossed leave it unknown until the
    next call that lands alone; a strip leaves it known to have no buttons, as the next message's record
    tells."""
    t, chat = "t0000001", "tg:-100"
    offer = await surfaces.offer(t, chat, "table", 1, "{}", since=1, digest="d1")
    assert (offer.landed, offer.shows) == (0, None)
    assert (await surfaces.record(t, chat, "table", "41", since=1, replacing=None)).taken
    newest = await surfaces.landed(t, chat, "table", "41", since=1, digest="d1", buttons=True, begun=0)
    assert newest == (1, "{}", "41", 1, True)
    assert await surfaces.state(t, chat, "table", "41", since=1) == (1, ("d1", True))
    offer = await surfaces.offer(t, chat, "table", 2, "{}", since=1, digest="d2")
    assert (offer.landed, offer.shows) == (1, ("d1", True))
    # Two calls begun after the first landed cross: either may have landed last.
    assert (await surfaces.landed(t, chat, "table", "41", since=1, digest="d2", buttons=True, begun=1)).known
    crossed = await surfaces.landed(t, chat, "table", "41", since=1, digest="d3", buttons=True, begun=1)
    assert not crossed.known
    assert await surfaces.state(t, chat, "table", "41", since=1) == (3, None)
    # A strip begun after both landed: no buttons, whatever the text.
    await surfaces.landed(t, chat, "table", "41", since=1, digest="", buttons=False, begun=3)
    assert await surfaces.state(t, chat, "table", "41", since=1) == (4, ("", False))
    assert await surfaces.state(t, chat, "table", "40", since=1) == (-1, None)  # not the epoch's message
    await surfaces.landed(t, chat, "table", "40", since=1, digest="x", buttons=True, begun=4)  # not recorded
    assert await surfaces.state(t, chat, "table", "41", since=1) == (4, ("", False))
    # The next hand's message: the one it replaces is known to have no buttons.
    assert (await surfaces.offer(t, chat, "table", 10, "{}", since=10)).accepted
    recorded = await surfaces.record(t, chat, "table", "50", since=10, replacing=None)
    assert recorded == (True, "41", 1, True)
    assert await surfaces.state(t, chat, "table", "50", since=10) == (0, None)  # nothing landed on it yet


async def test_calls_that_crossed_but_drew_the_same_leave_what_the_message_shows_known(
    surfaces: SurfaceStore,
) -> None:
    """Two calls that crossed, drawing the same (one view twice; a bare edit and a strip; two strips): the
    message shows that whichever landed last, so it stays known. Drawing differently, or an edit that timed
    out (drawn unknown: '' with buttons), leaves it unknown."""
    t, chat = "t0000001", "tg:-100"
    assert (await surfaces.offer(t, chat, "table", 1, "{}", since=1, digest="d1")).accepted
    assert (await surfaces.record(t, chat, "table", "41", since=1, replacing=None)).taken

    async def land(digest: str, buttons: bool, begun: int) -> bool:
        landed = await surfaces.landed(
            t, chat, "table", "41", since=1, digest=digest, buttons=buttons, begun=begun
        )
        return landed.known

    assert await land("d2", True, 0) and await land("d2", True, 0)  # the same view, twice: known
    assert await surfaces.state(t, chat, "table", "41", since=1) == (2, ("d2", True))
    assert await land("d3", False, 2) and await land("", False, 2)  # a bare edit and a strip
    assert await surfaces.state(t, chat, "table", "41", since=1) == (4, ("d3", False))
    assert await land("", False, 4) and await land("", False, 4)  # two strips
    assert await surfaces.state(t, chat, "table", "41", since=1) == (6, ("", False))
    assert not await land("", True, -1)  # an edit that timed out: drawn unknown
    assert await surfaces.state(t, chat, "table", "41", since=1) == (7, None)
    assert await land("d4", True, 7) and not await land("d5", True, 7)  # two views: either may be last
    assert await surfaces.state(t, chat, "table", "41", since=1) == (9, None)
    assert await land("d6", True, 9) and not await land("", False, 9)  # buttons drawn, and a strip
    assert await surfaces.state(t, chat, "table", "41", since=1) == (11, None)


async def test_a_message_known_bare_stays_known_once_a_newer_epoch_forgets_its_own(
    surfaces: SurfaceStore,
) -> None:
    """A player's cards shown without buttons; two newer epochs offered (new cards, then a new hand), the
    first never posted: the slot keeps only two epochs, so the first cards' epoch is forgotten while its
    message still shows the slot — the record of the next message still knows it has no buttons, and so do
    a strip or a check of it queued meanwhile (the slot remembers its last forgotten messages known bare)."""
    t, chat = "t0000001", "tg:7"
    assert (await surfaces.offer(t, chat, "hand", 1, "{}", since=1)).accepted
    assert (await surfaces.record(t, chat, "hand", "41", since=1, replacing=None)).taken
    await surfaces.landed(t, chat, "hand", "41", since=1, digest="d1", buttons=False, begun=0)
    assert (await surfaces.offer(t, chat, "hand", 5, "{}", since=5)).accepted  # never posted
    assert (await surfaces.offer(t, chat, "hand", 10, "{}", since=10)).accepted  # epoch 1 forgotten
    assert await surfaces.state(t, chat, "hand", "41", since=1) == (-1, ("", False))  # forgotten, bare
    assert await surfaces.claim_strip(t, chat, "hand", "41", since=1, worker="a") == ((-1, ("", False)), 0)
    assert await surfaces.record(t, chat, "hand", "50", since=10, replacing=None) == (True, "41", 1, True)
    # Once replaced, the mark is gone: a message with buttons, forgotten the same way, is not taken as bare.
    await surfaces.landed(t, chat, "hand", "50", since=10, digest="d10", buttons=True, begun=0)
    assert (await surfaces.offer(t, chat, "hand", 20, "{}", since=20)).accepted
    assert (await surfaces.offer(t, chat, "hand", 30, "{}", since=30)).accepted
    assert await surfaces.record(t, chat, "hand", "60", since=30, replacing=None) == (True, "50", 10, False)
    assert await surfaces.state(t, chat, "hand", "50", since=10) == (-1, None)  # forgotten with buttons
    assert await surfaces.claim_strip(t, chat, "hand", "50", since=10, worker="a") == ((-1, None), 0)
    assert await surfaces.state(t, chat, "hand", "41", since=1) == (-1, ("", False))  # still remembered


async def test_a_slot_remembers_its_last_forgotten_bare_messages_only(surfaces: SurfaceStore) -> None:
    """Each forgotten epoch whose message was known bare joins the slot's list, newest first, and the oldest
    leaves it past :data:`~bot.delivery._surface_scripts.GONE_KEPT`: the memory stays small. A call with
    buttons that lands on one of them takes it off the list."""
    t, chat = "t0000001", "tg:7"
    for n in range(GONE_KEPT + 3):
        since, message = 10 * (n + 1), str(100 + n)
        assert (await surfaces.offer(t, chat, "hand", since, "{}", since=since)).accepted
        assert (await surfaces.record(t, chat, "hand", message, since=since, replacing=None)).taken
        await surfaces.landed(t, chat, "hand", message, since=since, digest="d", buttons=False, begun=0)
    for _ in range(2):  # two more epochs: the last ones posted are forgotten too
        since += 10
        assert (await surfaces.offer(t, chat, "hand", since, "{}", since=since)).accepted
    known = [
        (await surfaces.state(t, chat, "hand", str(100 + n), since=10 * (n + 1))).shows is not None
        for n in range(GONE_KEPT + 3)
    ]
    assert known == [False] * 3 + [True] * GONE_KEPT, known
    # A call that drew buttons on one of them lands (it was on its way): that one is not known bare any more.
    await surfaces.landed(t, chat, "hand", "105", since=60, digest="d", buttons=True, begun=-1)
    assert await surfaces.state(t, chat, "hand", "105", since=60) == (-1, None)
    assert await surfaces.state(t, chat, "hand", "106", since=70) == (-1, ("", False))


async def test_one_worker_at_a_time_removes_a_messages_buttons(surfaces: SurfaceStore) -> None:
    """The first worker to remove an epoch's message's buttons claims the strip; another meanwhile is told how
    long the claim holds (its call would only be answered "not modified"); the claim ends when a strip lands
    (the message is then known bare: nothing to claim), or after its time; it is renewed by its worker only.
    A message that is not its epoch's is neither known nor claimed."""
    t, chat = "t0000001", "tg:-100"
    assert (await surfaces.offer(t, chat, "table", 1, "{}", since=1, digest="d1")).accepted
    assert (await surfaces.record(t, chat, "table", "41", since=1, replacing=None)).taken
    await surfaces.landed(t, chat, "table", "41", since=1, digest="d1", buttons=True, begun=0)
    mine = await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="a")
    assert mine == ((1, ("d1", True)), 0.0)
    assert await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="a") == mine  # still a's
    other = await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")
    assert other.state == (1, ("d1", True)) and 0 < other.held_elsewhere <= CLAIM
    await asyncio.sleep(CLAIM * 0.7)
    assert await surfaces.renew(t, chat, "table", since=1, poster="a", strip=True)
    assert not await surfaces.renew(t, chat, "table", since=1, poster="b", strip=True)
    await asyncio.sleep(CLAIM * 0.7)  # past the first claim's time, not the renewal's
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")).held_elsewhere > 0
    await surfaces.landed(t, chat, "table", "41", since=1, digest="", buttons=False, begun=1)
    bare = await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")
    assert bare == ((2, ("", False)), 0.0)  # known bare: no call to make
    assert not await surfaces.renew(t, chat, "table", since=1, poster="a", strip=True)  # the strip landed
    assert await surfaces.claim_strip(t, chat, "table", "40", since=1, worker="b") == ((-1, None), 0.0)
    # A claim whose worker never hears back (it died) passes to another once its time is over.
    await surfaces.landed(t, chat, "table", "41", since=1, digest="d2", buttons=True, begun=2)
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="a")).held_elsewhere == 0
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")).held_elsewhere > 0
    await asyncio.sleep(CLAIM + 0.05)
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="b")).held_elsewhere == 0
    assert (await surfaces.claim_strip(t, chat, "table", "41", since=1, worker="a")).held_elsewhere > 0
