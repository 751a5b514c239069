"""End to end on the fake Bot API: a learner doing a lesson in the private chat with the bot (a wrong answer,
then the right one), ``/learn 5``, ``/learn`` in a group answered with a deep link that starts the lesson,
and forged, stale and foreign presses that change nothing.
"""

from __future__ import annotations

from bot.kernel import lesson_tag, lesson_token
from bot.lessons import Progress

from .conftest import TOKEN, RunningBot, Table, assert_clean
from .fake_telegram import FakeTelegram, FakeUser, StoredMessage


def _lessons(tg: FakeTelegram, user: FakeUser) -> list[StoredMessage]:
    return [m for m in tg.bot_messages(user.id) if m.text.startswith(("📘", "✅", "🎓"))]


def _data(message: StoredMessage, label: str) -> str:
    found = [data for text, data in message.buttons if text == label]
    assert found, (label, message.buttons)
    return found[0]


async def _learner(tg: FakeTelegram, bot: RunningBot, name: str = "Ane") -> tuple[Table, FakeUser]:
    user = tg.add_user(name, language_code="en")
    private = tg.private_chat(user)
    table = Table(tg, bot, private, players={0: user})
    tg.user_starts_bot(user)
    await table.settle()
    return table, user


async def test_a_lesson_in_the_private_chat(tg: FakeTelegram, bot: RunningBot) -> None:
    table, ane = await _learner(tg, bot)
    await table.command(ane, "/learn 3")
    (step,) = _lessons(tg, ane)
    assert step.text.startswith("📘 Lesson 3/10 · Grande · 1/2") and "Who wins grande?" in step.text
    # A wrong answer: the callback is answered, and the step comes again under a short explanation.
    record = await table.press(ane, step, _data(step, "🤖 Nerea (rival)"))
    assert record.answer is not None and record.answer.get("text") == "Try again."
    again = _lessons(tg, ane)[-1]
    assert again is not step and "❌ Everyone has a king first" in again.text
    assert again.buttons == step.buttons
    # The right one: the next step, under the answer.
    await table.press(ane, again, _data(again, "You"))
    second = _lessons(tg, ane)[-1]
    assert second.text.startswith("📘 Lesson 3/10 · Grande · 2/2")
    assert "✅ You: king, king beats" in second.text and "GRANDE · 🤖 Nerea: paso" in second.text
    await table.press(ane, second, _data(second, "Envido 2"))
    done = _lessons(tg, ane)[-1]
    assert "🎓 Lesson 3 done: Grande." in done.text and "GRANDE · 🤖 Maite: no quiero" in done.text
    # The next lesson, from the button.
    await table.press(ane, done, _data(done, "Next lesson ▶"))
    assert _lessons(tg, ane)[-1].text.startswith("📘 Lesson 4/10 · Chica · 1/2")
    progress = await bot.service.deps.lessons.get(f"tg:{ane.id}")
    assert progress == Progress(4, 0, frozenset({3}))
    assert_clean(tg)


async def test_learn_5_jumps_and_learn_resumes(tg: FakeTelegram, bot: RunningBot) -> None:
    table, ane = await _learner(tg, bot)
    await table.command(ane, "/learn 5")
    step = _lessons(tg, ane)[-1]
    assert step.text.startswith("📘 Lesson 5/10 · Pares: par, medias, duples · 1/2")
    await table.press(ane, step, _data(step, "medias"))
    await table.command(ane, "/learn")
    assert _lessons(tg, ane)[-1].text.startswith("📘 Lesson 5/10 · Pares: par, medias, duples · 2/2")
    before = len(tg.bot_messages(ane.id))
    await table.command(ane, "/learn 42")
    (answer,) = tg.bot_messages(ane.id)[before:]
    assert answer.text == "There are ten lessons: /learn 1 to /learn 10." and not answer.buttons
    assert_clean(tg)


async def test_learn_in_a_group_links_to_the_private_chat(tg: FakeTelegram, bot: RunningBot) -> None:
    group = tg.add_group("Mus")
    zuri = tg.add_user("Zuri", language_code="en")  # never opened the bot
    table = Table(tg, bot, group, players={0: zuri})
    await table.command(zuri, "/learn 7")
    (notice,) = tg.bot_messages(group)
    assert notice.text.startswith("The lessons are given in a private chat with me: ")
    assert notice.text.endswith("?start=learn7") and not notice.buttons
    assert tg.bot_messages(zuri.id) == []  # nothing written first to someone who never opened the bot
    tg.user_starts_bot(zuri, "learn7")  # the link opens the private chat with the bot
    await table.settle()
    (step,) = _lessons(tg, zuri)
    assert step.text.startswith("📘 Lesson 7/10 · Envites: envido, quiero, no quiero · 1/3")
    assert [m for m in tg.bot_messages(group) if m.text.startswith("📘")] == []  # no lesson in the group
    assert_clean(tg)


async def test_forged_stale_and_foreign_presses_change_nothing(tg: FakeTelegram, bot: RunningBot) -> None:
    table, ane = await _learner(tg, bot)
    _, brais = await _learner(tg, bot, "Brais")
    await table.command(ane, "/learn 1")
    first = _lessons(tg, ane)[-1]
    await table.press(ane, first, _data(first, "3🍷"))  # right: the step moves on
    second = _lessons(tg, ane)[-1]
    key = f"tg:{ane.id}"
    tag = lesson_tag(key)
    posted = len(tg.bot_messages(ane.id))
    answers = {
        _data(first, "3🍷"): "already behind you",  # stale: the step before
        lesson_token(1, 1, tag, "a5"): "no longer valid",  # forged: no sixth choice
        lesson_token(1, 1, tag, "go2"): "no longer valid",  # forged: "next lesson" mid-lesson
        lesson_token(9, 0, tag, "a0"): "already behind you",  # another lesson than Ane's
        f"-.T1-1-{tag}.a0;x": "no longer valid",  # not our grammar
    }
    for data, said in answers.items():
        record = await table.press(ane, second, data, check_button=False)
        assert said in (record.answer or {}).get("text", ""), (data, record)
    # Brais presses Ane's button (a forwarded message): someone else's lesson.
    record = await table.press(brais, second, _data(second, "2🪵"), check_button=False)
    assert "someone else's" in (record.answer or {}).get("text", "")
    assert len(tg.bot_messages(ane.id)) == posted and _lessons(tg, brais) == []
    assert await bot.service.deps.lessons.get(key) == Progress(1, 1)
    assert await bot.service.deps.lessons.get(f"tg:{brais.id}") is None
    assert_clean(tg)


async def test_the_command_menus_list_learn(tg: FakeTelegram, bot: RunningBot) -> None:
    """``setMyCommands`` in every language offers /learn, described in that language."""
    from telegram.ext import Application

    from adapters.telegram.app import set_command_menus

    application = Application.builder().token(TOKEN).base_url(tg.base_url).build()
    async with application:
        await set_command_menus(application)
    menus = {
        call.params.get("language_code"): str(call.params["commands"]) for call in tg.calls("setMyCommands")
    }
    assert len(menus) == 7
    assert "Ten short lessons to learn Mus" in menus["en"]
    assert "Diez lecciones cortas" in menus[None] and "Hamar ikasgai" not in menus[None]
    assert_clean(tg)
