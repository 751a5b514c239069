"""A chat's budget of new messages and the answers to commands (``bot.delivery._budget``, ``._answers``,
``._queue``): a flood of commands costs a chat a few messages, and never holds up its game.

The fake platform is :mod:`test_delivery`'s (a chat that keeps every message and records every call, with
the loop's time). Budgets here are small and short (a few messages in a fraction of a second): the rules are
the same as Telegram's 20 a minute, faster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from prometheus_client import REGISTRY
from test_delivery import ANE, GROUP, FakeTransport, table_view

from bot.delivery import Delivery, NewMessages, RateLimited
from bot.delivery import _queue as queue
from bot.delivery._budget import PostBudget
from bot.delivery._surfaces_memory import MemorySurfaces
from bot.kernel import OutMessage

TABLE = "t0000001"


def answer(slot: str, text: str, chat: str = GROUP) -> OutMessage:
    """An answer to a command in a chat (no table: not the game's)."""
    return OutMessage(slot=slot, text=text, chat=chat, fresh=True)


def notice(text: str) -> OutMessage:
    """One of the game's notices (a table's: ⏱, 🤖, a showdown)."""
    return OutMessage(slot="notice", text=text, chat=GROUP, fresh=True, table=TABLE)


def budget(limit: int, window: float, reserve: int) -> Callable[[str], NewMessages | None]:
    """A budget for the group, none for private chats (as Telegram's adapter gives them)."""
    rule = NewMessages(limit, window, reserve)
    return lambda chat: rule if chat == GROUP else None


def posts(platform: FakeTransport, chat: str = GROUP) -> list[float]:
    """When each new message reached ``chat``."""
    return [at for kind, c, at in platform.calls if kind == "send" and c == chat]


def texts(platform: FakeTransport, chat: str = GROUP) -> list[str]:
    """What the chat's messages show, oldest first."""
    return [text for (c, _), (text, _) in platform.messages.items() if c == chat]


@pytest.fixture
def platform() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def surfaces() -> MemorySurfaces:
    return MemorySurfaces()


def test_a_budget_leaves_its_reserve_to_the_game() -> None:
    spent = PostBudget(NewMessages(limit=3, window=10.0, reserve=1))
    spent.spend(0.0)
    assert spent.wait(1.0, game=False) == 0 and spent.wait(1.0, game=True) == 0
    spent.spend(1.0)
    assert spent.wait(2.0, game=False) == pytest.approx(8.0)  # the first post must leave the window
    assert spent.wait(2.0, game=True) == 0  # the game's own message is still there
    spent.spend(2.0)
    assert spent.wait(3.0, game=True) == pytest.approx(7.0)
    assert spent.wait(3.0, game=False) == pytest.approx(8.0)  # two must leave: one for the game
    assert not spent.quiet(11.9) and spent.quiet(12.0)
    spent.refuse_until(20.0)  # the platform said so: no post before
    assert spent.wait(15.0, game=True) == pytest.approx(5.0) and not spent.quiet(15.0)
    with pytest.raises(ValueError):
        NewMessages(limit=2, window=60.0, reserve=2)  # answers could never be posted


async def test_answers_of_one_command_coalesce_to_the_newest(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    def dropped() -> float:
        labels = {"platform": "chat", "reason": "coalesced"}
        return REGISTRY.get_sample_value("mus_delivery_dropped_total", labels) or 0.0

    before = dropped()
    delivery = Delivery(platform, surfaces, min_interval=0.2)  # the first goes at once, the rest wait
    delivery.deliver([answer("leaderboard", "Ane 10")])
    await asyncio.sleep(0.01)
    delivery.deliver([answer("leaderboard", f"Ane {points}") for points in (11, 12, 13, 14)])
    await delivery.flush()
    assert texts(platform) == ["Ane 10", "Ane 14"]  # the first, then the newest of those that waited
    assert delivery.stats["coalesced"] == 3 and dropped() == before + 3
    await delivery.close()


async def test_only_answers_coalesce_the_game_and_private_views_are_all_sent(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0.02)
    sections = [OutMessage(slot="rules", text=f"section {n}", user=ANE, fresh=True) for n in range(3)]
    one_offs = [answer("answer", "There is already a table."), answer("answer", "Only players can cancel.")]
    timeouts = [notice("⏱ Ane ran out of time."), notice("🃏 Showdown"), notice("⏱ Ane ran out of time.")]
    delivery.deliver([*sections, *one_offs, timeouts[0], timeouts[1]])
    await delivery.flush()
    delivery.deliver([timeouts[2]])  # the same notice again, once the first was sent: a new timeout
    await delivery.flush()
    assert texts(platform, ANE) == ["section 0", "section 1", "section 2"]  # in order, none coalesced
    assert sorted(texts(platform)) == sorted(m.text for m in (*one_offs, *timeouts))
    assert delivery.stats["coalesced"] == delivery.stats["repeated"] == 0
    await delivery.close()


async def test_answers_told_apart_by_their_text_or_their_file_are_each_posted(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0.2)  # everything waits behind the first call
    delivery.deliver([answer("help", "help")])
    await asyncio.sleep(0.01)
    export = [
        OutMessage(slot="export", text="hand 3", chat=GROUP, fresh=True, document=(f"hand3.{kind}", kind))
        for kind in ("json", "txt")
    ]
    stats = [answer("stats", "Ane: 3 games"), answer("stats", "Bo: 1 game"), answer("stats", "Ane: 3 games")]
    delivery.deliver([*export, *stats])
    await delivery.flush()
    assert texts(platform) == ["help", "hand 3", "hand 3", "Ane: 3 games", "Bo: 1 game"]
    assert delivery.stats["duplicates"] == 1 and delivery.stats["coalesced"] == 0
    await delivery.close()


async def test_an_answer_the_chat_just_got_is_not_posted_again(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0, repeat_window=0.3)
    help_text = answer("help", "I am a Mus bot.")
    for _ in range(3):
        delivery.deliver([help_text, answer("answer", "Slow down.")])
        await delivery.flush()
    assert texts(platform) == ["I am a Mus bot.", "Slow down."]
    assert delivery.stats["repeated"] == 4
    await asyncio.sleep(0.3)  # the window is over: the chat may need it again
    delivery.deliver([help_text])
    await delivery.flush()
    delivery.deliver([answer("help", "Soy un bot de mus.")])  # another text for the same command: new
    await delivery.flush()
    assert texts(platform)[2:] == ["I am a Mus bot.", "Soy un bot de mus."]
    await delivery.close()


async def test_an_answer_queued_while_the_same_one_is_being_posted_is_not_posted_twice(
    surfaces: MemorySurfaces,
) -> None:
    class SlowPlatform(FakeTransport):
        async def send(self, chat: str, message: OutMessage) -> str:
            await asyncio.sleep(0.05)  # the call is in flight...
            return await super().send(chat, message)

    platform = SlowPlatform()
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([answer("help", "I am a Mus bot.")])
    await asyncio.sleep(0.01)
    delivery.deliver([answer("help", "I am a Mus bot.")])  # ...when the same command is answered again
    await delivery.flush()
    assert texts(platform) == ["I am a Mus bot."] and delivery.stats["repeated"] == 1
    await delivery.close()


async def test_answers_leave_the_reserve_to_the_game(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0, new_messages=budget(4, 0.5, reserve=2))
    delivery.deliver([answer(slot, slot) for slot in ("help", "leaderboard", "rules", "stats")])
    await asyncio.sleep(0.1)
    assert texts(platform) == ["help", "leaderboard"]  # two answers, then the rest is the game's
    delivery.deliver([table_view("hand 1", fresh=True), notice("🃏 Showdown")])
    await asyncio.sleep(0.1)
    assert texts(platform)[2:] == ["hand 1", "🃏 Showdown"]  # the game posts at once
    await delivery.flush()
    assert texts(platform)[4:] == ["rules", "stats"]  # the answers, once the window let them
    first, *_, last = posts(platform)
    assert last - first >= 0.45
    await delivery.close()


async def test_table_edits_never_wait_behind_answers_over_the_budget(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0, new_messages=budget(3, 1.0, reserve=1))
    delivery.deliver([table_view("turn 1", fresh=True)])
    delivery.deliver([answer(slot, slot) for slot in ("help", "leaderboard", "rules", "stats")])
    await asyncio.sleep(0.1)
    loop = asyncio.get_running_loop()
    pressed = loop.time()
    delivery.deliver([table_view("turn 2")])  # a press: the player on turn must see it now
    await asyncio.sleep(0.1)
    (edit,) = [at for kind, c, at in platform.calls if kind == "edit" and c == GROUP]
    assert edit - pressed < 0.05
    assert texts(platform) == ["turn 2", "help"]  # (the other answers wait: one is the game's)
    await delivery.flush()
    assert texts(platform)[2:] == ["leaderboard", "rules", "stats"]
    await delivery.close()


async def test_the_game_goes_first_and_an_answer_waits_for_it_a_bounded_time(
    platform: FakeTransport, surfaces: MemorySurfaces, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue, "ANSWER_PATIENCE", 0.3)
    delivery = Delivery(platform, surfaces, min_interval=0.05)
    delivery.deliver([table_view("turn 1", fresh=True)])
    await delivery.flush()
    loop = asyncio.get_running_loop()
    asked = loop.time()
    delivery.deliver([answer("help", "help"), answer("rules", "rules")])
    delivery.deliver([table_view("turn 2")])  # a press: its edit goes before the answers waiting
    for turn in range(3, 15):  # and the game keeps calling, a new state every call
        await asyncio.sleep(0.05)
        delivery.deliver([table_view(f"turn {turn}")])
    await delivery.flush()
    kinds = [(kind, at) for kind, c, at in platform.calls if c == GROUP][1:]
    assert kinds[0][0] == "edit" and kinds[0][1] - asked < 0.1
    (_, help_at), (_, rules_at) = [(k, at) for k, at in kinds if k == "send"]
    assert 0.3 <= help_at - asked < 0.45  # its patience, then the next call, though the game still calls
    # The other answer waited as long, but never two answers in a row: the game's call goes in between.
    assert [k for k, at in kinds if help_at <= at <= rules_at] == ["send", "edit", "send"]
    assert any(k == "edit" and at > rules_at for k, at in kinds)
    assert texts(platform) == ["turn 14", "help", "rules"]
    await delivery.close()


async def test_the_game_keeps_its_order_when_its_own_posts_wait(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0, new_messages=budget(2, 0.3, reserve=1))
    delivery.deliver([table_view("hand 1", fresh=True), notice("🃏 Showdown 1")])
    await delivery.flush()
    delivery.deliver([notice("⏱ Brais ran out of time."), table_view("hand 1: Camille's turn")])
    await delivery.flush()
    # The notice waits for the window, and the table's edit after it (it says why the turn moved on).
    assert texts(platform) == ["hand 1: Camille's turn", "🃏 Showdown 1", "⏱ Brais ran out of time."]
    (first, _, notified), edited = posts(platform), platform.calls[-1][2]
    assert notified - first >= 0.29 and edited >= notified and platform.kinds(GROUP)[-1] == "edit"
    await delivery.close()


async def test_a_refused_post_holds_the_chats_posts_not_its_edits(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0)
    delivery.deliver([table_view("turn 1", fresh=True)])
    await delivery.flush()
    platform.fail_next.append(RateLimited(0.4))  # the group took too many messages
    delivery.deliver([answer("help", "help")])
    await asyncio.sleep(0.05)
    delivery.deliver([table_view("turn 2")])
    await asyncio.sleep(0.05)
    assert texts(platform) == ["turn 2"]  # the edit went on; the answer waits the 0.4 s
    delivery.deliver([answer("leaderboard", "leaderboard"), table_view("turn 3", fresh=True)])
    await asyncio.sleep(0.1)
    assert texts(platform) == ["turn 2"]  # no new message at all, the game's neither
    await delivery.flush()
    _, refused, *later = posts(platform)
    assert len(later) == 3 and all(at - refused >= 0.39 for at in later)
    assert sorted(texts(platform)[1:]) == ["help", "leaderboard", "turn 3"]
    assert delivery.stats["retry_after"] == 1
    await delivery.close()


async def test_a_flood_of_commands_costs_a_group_at_most_its_budget(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    """People type four commands twice a second for two seconds while a game goes on: the group gets the
    answers its budget leaves, no answer twice, and every table state it is shown on time."""
    window = 1.0
    delivery = Delivery(
        platform, surfaces, min_interval=0.02, new_messages=budget(6, window, reserve=3), repeat_window=window
    )
    loop = asyncio.get_running_loop()
    delivery.deliver([table_view("move 0", fresh=True)])
    await delivery.flush()
    late: list[float] = []
    for tick in range(8):
        delivery.deliver(
            [
                answer("help", "I am a Mus bot."),
                answer("leaderboard", f"Ane {tick}"),
                answer("answer", "There is already a table."),
                answer("answer", "Only players can cancel."),
            ]
        )
        delivery.deliver([table_view(f"move {tick + 1}")])
        moved = loop.time()
        await asyncio.sleep(0.25)
        edits = [at for kind, c, at in platform.calls if kind == "edit" and at >= moved]
        late.append(edits[0] - moved if edits else float("inf"))
    await delivery.flush(timeout=5.0)
    sent = posts(platform)
    assert max(sum(1 for b in sent if a <= b < a + window) for a in sent) <= 6
    assert max(late) < 0.1, late  # every move shown at once, whatever waits for the budget
    answers = texts(platform)[1:]
    assert 1 <= answers.count("I am a Mus bot.") <= 3 and 1 <= answers.count("There is already a table.") <= 3
    assert delivery.stats["coalesced"] > 0 and delivery.stats["repeated"] > 0
    await delivery.close()


async def test_private_chats_and_other_platforms_chats_have_no_budget_unless_given_one(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    delivery = Delivery(platform, surfaces, min_interval=0, new_messages=budget(2, 10.0, reserve=1))
    delivery.deliver([answer(slot, slot) for slot in ("help", "leaderboard", "rules")])
    delivery.deliver([table_view(f"hand {n}", user=ANE, fresh=True) for n in range(4)])
    await asyncio.sleep(0.1)
    assert len(texts(platform, ANE)) == 4 and len(texts(platform)) == 1  # the private chat: no budget
    await delivery.close()


async def test_a_lane_whose_budget_remembers_posts_is_not_forgotten(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    now = [0.0]
    delivery = Delivery(
        platform, surfaces, min_interval=1.0, clock=lambda: now[0], new_messages=budget(2, 60.0, reserve=0)
    )
    delivery.deliver([answer("help", "help"), answer("rules", "rules"), answer("help", "hi", "x:2")])
    await delivery.flush()
    now[0] += 2.0  # every lane is idle, past its interval
    delivery._evict_idle()
    assert list(delivery._lanes) == [GROUP]  # the lane without a budget goes; the group's spent budget stays
    delivery.deliver([answer("stats", "stats")])
    await asyncio.sleep(0.05)
    assert texts(platform) == ["help", "rules"]  # (still waiting for the window)
    await delivery.close()


async def test_a_lane_full_of_answers_still_takes_the_games_new_messages(
    platform: FakeTransport, surfaces: MemorySurfaces
) -> None:
    from bot.delivery._queue import MAX_PENDING_NOTICES

    delivery = Delivery(platform, surfaces, min_interval=10.0)
    delivery.deliver([answer("answer", f"reply {n}") for n in range(MAX_PENDING_NOTICES + 5)])
    assert delivery.stats["dropped"] == 5  # the lane holds as many answers as it may
    delivery.deliver([table_view("hand 2", fresh=True)])  # a new hand's table is never dropped
    assert [p.message.text for p in delivery._lanes[GROUP].pending][-1] == "hand 2"
    await delivery.close()
