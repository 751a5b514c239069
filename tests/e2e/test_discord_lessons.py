"""End to end on the fake Discord: ``/mus learn`` in a server channel answers with the lesson, ephemerally;
each press updates that same message (a wrong answer, then the right one); ``/mus learn lesson:5`` jumps;
forged, stale and foreign presses are answered ephemerally and change nothing; nothing reaches the channel.
"""

from __future__ import annotations

from adapters.discord.app import DiscordRuntime
from adapters.discord.ids import user_key
from bot.kernel import lesson_tag, lesson_token
from bot.lessons import Progress

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import FakeDiscord, StoredMessage


def _id(message: StoredMessage, label: str) -> str:
    found = [custom_id for text, custom_id, _ in message.buttons() if text == label]
    assert found and found[0] is not None, (label, message.buttons())
    return found[0]


async def test_a_lesson_shown_to_the_learner_alone(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST))
    discord_bots.append(runtime)
    guild = dc.add_guild("Mus club", locale="en-US")
    channel = dc.add_channel(guild, "mus")
    ane = dc.add_user("Ane", locale="en-US", guilds=[guild])
    brais = dc.add_user("Brais", locale="en-US", guilds=[guild])
    service = runtime.client.handlers.service
    table = DiscordTable(dc, runtime, service, channel)

    shown = await table.slash(ane, "learn", {"lesson": 3})
    lesson = shown.response
    assert shown.ephemeral and lesson is not None
    assert lesson.text.startswith("📘 Lesson 3/10 · Grande · 1/2") and "Who wins grande?" in lesson.text
    # A wrong answer: the same message shows the step again, explained.
    wrong = await table.press(ane, lesson, _id(lesson, "🤖 Nerea (rival)"))
    assert wrong.answered and "❌ Everyone has a king first" in lesson.text
    # The right one: the same message shows the next step.
    await table.press(ane, lesson, _id(lesson, "You"))
    assert lesson.text.startswith("📘 Lesson 3/10 · Grande · 2/2") and "✅ You: king," in lesson.text
    await table.press(ane, lesson, _id(lesson, "Envido 2"))
    assert "🎓 Lesson 3 done: Grande." in lesson.text
    await table.press(ane, lesson, _id(lesson, "Next lesson ▶"))
    assert lesson.text.startswith("📘 Lesson 4/10 · Chica · 1/2")
    assert await service.deps.lessons.get(user_key(ane.id)) == Progress(4, 0, frozenset({3}))

    # Forged, stale and foreign presses: an ephemeral answer, nothing changes.
    tag = lesson_tag(user_key(ane.id))
    shown_now = lesson.text
    for custom_id, said in {
        lesson_token(4, 0, tag, "a5"): "no longer valid",
        lesson_token(3, 0, tag, "a0"): "already behind you",
    }.items():
        forged = await table.answered(dc.press(ane, lesson, custom_id))
        assert forged.ephemeral and forged.response is not None and said in forged.response.text
    # Brais cannot see Ane's ephemeral lesson; a press of her button forged on a message he sees is hers.
    helped = await table.slash(brais, "help")
    assert helped.response is not None
    foreign = await table.answered(dc.press(brais, helped.response, _id(lesson, "You")))
    assert foreign.response is not None and "someone else's" in foreign.response.text
    assert lesson.text == shown_now
    assert await service.deps.lessons.get(user_key(brais.id)) is None

    # /mus learn lesson:5 jumps; the channel never saw a lesson, and no DM was sent.
    jumped = await table.slash(ane, "learn", {"lesson": 5})
    assert jumped.ephemeral and jumped.response is not None
    assert jumped.response.text.startswith("📘 Lesson 5/10")
    assert [m for m in dc.channel_messages(channel) if m.text.startswith(("📘", "🎓"))] == []
    assert dc.dm_messages(ane) == []
    assert_interactions_answered(dc)
