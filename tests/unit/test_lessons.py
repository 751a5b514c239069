"""The ten lessons: their data replays through the engine, their texts are complete in every language, and a
learner goes through them on the service (wrong then right answers, stale, foreign and forged presses).

The data claims (``right`` answers, ``expect``) are checked against what the engine computes, so a lesson
never tells a learner something the engine would not do.
"""

from __future__ import annotations

import re
import string

import pytest

from bot.app import Service, ServiceDeps, lesson_number
from bot.app._lesson_commands import LEARN_HINT, LEARN_PRIVATELY, LESSON_FOREIGN, LESSON_STALE, NO_SUCH_LESSON
from bot.i18n import LANGUAGES, translator
from bot.i18n import common as msg
from bot.i18n.rules import rules_full
from bot.kernel import (
    ChatRef,
    OutMessage,
    StartLessons,
    UserRef,
    encode_invite,
    lesson_tag,
    lesson_token,
    parse_invite,
    parse_token,
)
from bot.kernel._tokens import MAX_TOKEN_BYTES
from bot.lessons import Lesson, MemoryProgress, Progress, after_right, lessons, position
from bot.lessons import _render as render
from bot.lessons._model import LEARNER, LessonDataError, is_engine_word, parse_lessons
from bot.lessons._play import engine_answer, legal
from bot.lessons._texts import STEP_FIELDS, lesson_texts, parse_texts
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._prefs import MemoryPreferences
from engine.errors import MusError
from engine.evaluation import Lance, evaluate
from engine.hand_types import Phase

EN = translator("en")
ANE = UserRef("tg:1", "Ane", "en")
BRAIS = UserRef("tg:2", "Brais", "en")
PRIVATE = ChatRef(ANE.key, private=True, title="Ane")
GROUP = ChatRef("tg:-100", False, "Group")
STEPS = [(lesson, index) for lesson in lessons() for index in range(len(lesson.steps))]
STEP_IDS = [f"{lesson.key}-{index + 1}" for lesson, index in STEPS]


# --- the data, through the engine --------------------------------------------------------------------------


def test_ten_lessons_in_the_suggested_order() -> None:
    assert [lesson.key for lesson in lessons()] == [
        "cards",
        "mus",
        "grande",
        "chica",
        "pares",
        "juego",
        "envites",
        "ordago",
        "count",
        "senas",
    ]
    assert [lesson.number for lesson in lessons()] == list(range(1, 11))


@pytest.mark.parametrize(("lesson", "index"), STEPS, ids=STEP_IDS)
def test_every_step_replays_and_its_right_choice_is_what_the_engine_says(lesson: Lesson, index: int) -> None:
    pos = position(lesson, index)  # the scripted path up to here is legal, or this raises
    step = pos.step
    if step.plays:
        # A move: legal for the learner's seat now (a seña or catch takes no turn).
        head = step.right.split()[0]
        if head not in ("sena", "catch"):
            assert pos.hand.turn == LEARNER, "the learner decides on their own turn"
        assert legal(pos.hand, step, step.right)
        assert pos.hand.log == position(lesson, index).hand.log, "trying a move changed nothing"
    else:
        assert not any(is_engine_word(choice) for choice in step.choices), "a question has answers only"
        assert engine_answer(step, pos.hand) == step.right, "the lesson claims what the engine computes"
    hand = after_right(pos)
    expect = step.expect
    if "phase" in expect:
        assert hand.phase is Phase(expect["phase"])
    if "deje" in expect:
        result = hand.results[Lance(str(expect["lance"]))]
        assert (result.deje, result.proposer_team) == (expect["deje"], expect["team"])
    if "ordago_team" in expect:
        assert hand.ordago is not None and hand.ordago.team == expect["ordago_team"]
    if "winner" in expect:
        assert hand.winner == expect["winner"]


def test_the_claims_of_the_texts_hold() -> None:
    """The few facts the English texts state about a hand are the engine's (every language says the same)."""
    by_key = {lesson.key: lesson for lesson in lessons()}
    pays = after_right(position(by_key["count"], 0))  # "Maite's duples… your 31 and Iker's 34"
    assert [evaluate(pays.hands[s]).total for s in (0, 2)] == [31, 34]
    assert evaluate(pays.hands[3]).pares_kind.name == "NONE" and pays.results[Lance.GRANDE].deje == 1
    count = after_right(position(by_key["count"], 3))
    assert count.winner == 0 and [line.lance for line in count.count_lines] == [Lance.GRANDE]
    assert count.uncounted, "the rivals' pares and juego are not counted"
    grande = after_right(position(by_key["grande"], 1))
    assert grande.scores == [1, 0]
    envites = after_right(position(by_key["envites"], 1))
    assert envites.results[Lance.GRANDE].amount == 2 and envites.scores == [0, 1]
    punto = position(by_key["juego"], 2).hand  # "nobody reaches 31"
    assert not any(evaluate(cards).has_juego for cards in punto.hands)
    ordago = position(by_key["ordago"], 0).hand  # "you are mano with 31" (Maite's 32 is hers to know)
    assert ordago.mano == LEARNER and evaluate(ordago.hands[0]).total == 31


def test_a_wrong_move_changes_nothing_the_engine_keeps() -> None:
    senas = lessons()[9]
    pos = position(senas, 0)
    assert not legal(pos.hand, pos.step, "sena dos_reyes")  # false: the engine refuses it
    assert not legal(pos.hand, pos.step, "sena ciego")
    assert pos.hand.senas_made(LEARNER) == 0


def test_a_step_out_of_range() -> None:
    with pytest.raises(IndexError):
        position(lessons()[0], 99)


_HANDS = '[["1o","2o","3o","4o"],["5o","6o","7o","10o"],["11o","12o","1c","2c"],["3c","4c","5c","6c"]]'
_DEAL = f'[[lesson]]\nkey = "x"\n[[lesson.deal]]\nhands = {_HANDS}\n[[lesson.deal.step]]\n'


@pytest.mark.parametrize(
    "text",
    [
        '[[lesson]]\nkey = "x"\n',  # no deal
        '[[lesson]]\nkey = "x"\n[[lesson.deal]]\nhands = [["1o"]]\n',  # four hands
        _DEAL + 'choices = ["mus"]\nright = "mus"\n',  # one choice
        _DEAL + 'choices = ["seat 0", "seat 1"]\nright = "seat 0"\n',  # an answer with no question
        _DEAL.replace('"6c"', '"1o"') + 'choices = ["mus", "no_mus"]\nright = "mus"\n',  # a card twice
        _DEAL + 'choices = ["mus", "no_mus"]\nright = "paso"\n',  # the right choice is not a choice
    ],
)
def test_malformed_lesson_data_is_refused(text: str) -> None:
    with pytest.raises((LessonDataError, MusError)):
        parse_lessons(text)


# --- the texts, in every language --------------------------------------------------------------------------


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_has_every_lesson_and_step(lang: str) -> None:
    texts = lesson_texts(lang)
    english = lesson_texts("en")
    assert set(texts) == {lesson.key for lesson in lessons()}, lang
    for lesson in lessons():
        words = texts[lesson.key]
        assert len(words.steps) == len(lesson.steps), (lang, lesson.key)
        assert 0 < len(words.title) <= 40
        for n, (step, source) in enumerate(zip(words.steps, english[lesson.key].steps, strict=True), 1):
            for name in STEP_FIELDS:
                text, original = getattr(step, name), getattr(source, name)
                assert placeholders(text) == placeholders(original), (lang, lesson.key, n, name)
                limit = 600 if name == "say" else 240
                assert len(text) <= limit, (lang, lesson.key, n, name, len(text))
            if lang != "en":
                assert step.say != source.say, f"{lang} {lesson.key} {n}: not written in {lang}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_step_draws_in_every_language(lang: str) -> None:
    for lesson, index in STEPS:
        view = render.step_view(lang, ANE.key, lesson, index, position(lesson, index), "✅")
        assert view.user == ANE.key and view.slot == render.SLOT
        labels = [b.label for row in view.buttons for b in row]
        assert len(labels) == len(lesson.steps[index][1].choices) and all(labels)
        assert len(set(labels)) == len(labels), (lang, lesson.key, index, labels)
        assert len(view.text) <= 4096
        for row in view.buttons:
            for button in row:
                assert len(button.token.encode()) <= MAX_TOKEN_BYTES
        done = render.done_view(lang, ANE.key, lesson)
        assert done.buttons


def test_malformed_texts_are_refused() -> None:
    with pytest.raises(ValueError):
        parse_texts('[x]\ntitle = "X"\n[x.2]\nsay = "a"\nright = "b"\nwrong = "c"\n')
    with pytest.raises(ValueError):
        parse_texts('[x]\ntitle = "X"\n[x.1]\nsay = "a"\nright = "b"\n')
    with pytest.raises(ValueError):
        parse_texts('[x]\n[x.1]\nsay = "a"\nright = "b"\nwrong = "c"\n')


def test_unknown_language_falls_back_to_spanish() -> None:
    assert lesson_texts("de") == lesson_texts("es")


# --- tokens, invitations, arguments ------------------------------------------------------------------------


def test_lesson_tokens() -> None:
    tag = lesson_tag(ANE.key)
    assert re.fullmatch(r"[a-z0-9]{4}", tag) and tag == lesson_tag(ANE.key) != lesson_tag(BRAIS.key)
    token = parse_token(lesson_token(10, 3, tag, "a5"))
    assert token.lesson_place() == (10, 3, tag) and token.hand is None and token.step is None
    for forged in ("-.T1-0-abcd.a6", "-.T1-0-abcd.go", "-.T100-0-abcd.a1", "-.T1-0-ABCD.a1", "-.L.a1"):
        with pytest.raises(ValueError):
            parse_token(forged)


def test_lesson_invitations() -> None:
    for invite in (StartLessons(), StartLessons(5)):
        assert parse_invite(encode_invite(invite)) == invite
    assert parse_invite("learn0") is None and parse_invite("learn123") is None


def test_lesson_number_argument() -> None:
    assert lesson_number([]) is None
    assert lesson_number(["5"]) == 5
    assert lesson_number(["five"]) == "five"


def test_progress_round_trip() -> None:
    progress = Progress(3, 1, frozenset({1, 2}))
    assert Progress.from_json(progress.to_json()) == progress
    assert Progress.from_json("not json") == Progress()


# --- a learner on the service ------------------------------------------------------------------------------


def make_service(store: MemoryProgress | None = None) -> Service:
    return Service(
        ServiceDeps(
            tables=MemoryTableStore(),
            deadlines=MemoryDeadlineStore(),
            prefs=MemoryPreferences(),
            lessons=store or MemoryProgress(),
        )
    )


def only(messages: tuple[OutMessage, ...]) -> OutMessage:
    assert len(messages) == 1
    return messages[0]


def token_of(message: OutMessage, label: str) -> str:
    return next(b.token for row in message.buttons for b in row if b.label == label)


async def test_a_learner_goes_through_a_lesson_with_a_wrong_then_a_right_answer() -> None:
    store = MemoryProgress()
    service = make_service(store)
    opened = await service.lessons.learn(PRIVATE, ANE, 3)
    first = only(opened.messages)
    assert EN.gettext(LEARN_HINT) in first.text
    assert first.user == ANE.key and "Lesson 3/10 · Grande · 1/2" in first.text
    assert await store.get(ANE.key) == Progress(3, 0)

    wrong = await service.press(ANE, token_of(first, "🤖 Maite (rival)"))
    assert not wrong.ok and wrong.answer == EN.gettext(render.TRY_AGAIN)
    again = only(wrong.messages)
    assert again.text.startswith(first.text.split("\n")[0]) and "❌" in again.text
    assert EN.gettext(LEARN_HINT) not in again.text
    assert again.buttons == first.buttons  # the same question, to try again
    assert await store.get(ANE.key) == Progress(3, 0)

    right = await service.press(ANE, token_of(first, "You"))
    assert right.ok
    second = only(right.messages)
    assert "✅" in second.text and "2/2" in second.text and "GRANDE · 🤖 Nerea: paso" in second.text
    assert await store.get(ANE.key) == Progress(3, 1)

    # The first step's buttons are behind the learner now: stale, nothing changes.
    stale = await service.press(ANE, token_of(first, "You"))
    assert not stale.ok and stale.answer == EN.gettext(LESSON_STALE) and not stale.messages

    done = await service.press(ANE, token_of(second, "Envido 2"))
    end = only(done.messages)
    assert "GRANDE · 🤖 Maite: no quiero" in end.text and "Lesson 3 done" in end.text
    assert await store.get(ANE.key) == Progress(3, 2, frozenset({3}))

    # A double tap of the right answer: the second press is stale.
    assert (await service.press(ANE, token_of(second, "Envido 2"))).answer == EN.gettext(LESSON_STALE)

    following = only((await service.press(ANE, token_of(end, EN.gettext(render.NEXT_LESSON)))).messages)
    assert "Lesson 4/10 · Chica · 1/2" in following.text
    assert await store.get(ANE.key) == Progress(4, 0, frozenset({3}))


async def test_learn_resumes_where_the_learner_was_on_another_worker() -> None:
    store = MemoryProgress()
    first = make_service(store)
    step = only((await first.lessons.learn(PRIVATE, ANE, 6)).messages)
    await first.press(ANE, step.buttons[0][1].token)  # total 31: right
    other = make_service(store)  # another worker, the same store
    resumed = only((await other.lessons.learn(PRIVATE, ANE)).messages)
    assert "Lesson 6/10 · Juego and punto · 2/3" in resumed.text


async def test_the_whole_path_in_every_language() -> None:
    for lang in LANGUAGES:
        user = UserRef(f"tg:{lang}", "X", lang)
        service = make_service()
        chat = ChatRef(user.key, private=True)
        message = only((await service.lessons.learn(chat, user, 1)).messages)
        for lesson in lessons():
            for _deal, step in lesson.steps:
                outcome = await service.press(user, message.buttons[0][0].token)
                if step.choices[0] != step.right:  # the first choice was wrong: the step again
                    assert not outcome.ok
                    right = step.choices.index(step.right)
                    outcome = await service.press(user, [b for r in message.buttons for b in r][right].token)
                assert outcome.ok, (lang, lesson.key, outcome.answer)
                message = only(outcome.messages)
            if lesson.number < 10:
                message = only((await service.press(user, message.buttons[0][0].token)).messages)
        assert translator(lang).gettext(render.ALL_DONE) in message.text
        assert await service.deps.lessons.get(user.key) == Progress(10, 3, frozenset(range(1, 11)))


async def test_learn_in_a_group_says_where_to_go() -> None:
    outcome = await make_service().lessons.learn(GROUP, ANE)
    assert not outcome.ok and outcome.answer == EN.gettext(LEARN_PRIVATELY) and not outcome.messages


async def test_learn_an_unknown_lesson() -> None:
    service = make_service()
    for number in (0, 11, "x"):
        outcome = await service.lessons.learn(PRIVATE, ANE, number)
        assert not outcome.ok and outcome.answer == EN.gettext(NO_SUCH_LESSON)
    assert await service.deps.lessons.get(ANE.key) is None


async def test_foreign_and_forged_presses_change_nothing() -> None:
    store = MemoryProgress()
    service = make_service(store)
    step = only((await service.lessons.learn(PRIVATE, ANE, 1)).messages)
    # Brais presses Ane's button (a forwarded message): someone else's lesson.
    foreign = await service.press(BRAIS, step.buttons[0][0].token)
    assert not foreign.ok and foreign.answer == EN.gettext(LESSON_FOREIGN) and not foreign.messages
    tag = lesson_tag(ANE.key)
    forged = [
        lesson_token(1, 0, tag, "a5"),  # no sixth choice
        lesson_token(1, 0, tag, "go2"),  # "next lesson" on an unfinished lesson
        lesson_token(1, 9, tag, "a0"),  # a step the lesson does not have
        lesson_token(11, 0, tag, "a0"),  # no lesson 11
        lesson_token(2, 0, tag, "a0"),  # another lesson than the one on screen
        "-.T1-0-" + tag + ".a0x",
        "nonsense",
    ]
    for data in forged:
        outcome = await service.press(ANE, data)
        assert not outcome.ok and outcome.answer in (
            EN.gettext(msg.STALE_BUTTON),
            EN.gettext(LESSON_STALE),
        ), data
        assert not outcome.messages
    assert await store.get(ANE.key) == Progress(1, 0)
    # Someone who never opened a lesson presses a lesson button of their own tag: stale, nothing stored.
    other = await service.press(BRAIS, lesson_token(1, 0, lesson_tag(BRAIS.key), "a0"))
    assert other.answer == EN.gettext(LESSON_STALE) and await store.get(BRAIS.key) is None


async def test_the_lessons_speak_the_learners_language() -> None:
    service = make_service()
    basque = UserRef("tg:7", "Miren", "eu")
    step = only((await service.lessons.learn(ChatRef(basque.key, private=True), basque, 3)).messages)
    assert lesson_texts("eu")["grande"].steps[0].say in step.text
    await service.set_language(ChatRef(basque.key, private=True), basque, "gl")
    step = only((await service.lessons.learn(ChatRef(basque.key, private=True), basque)).messages)
    assert lesson_texts("gl")["grande"].steps[0].say in step.text


async def test_start_lessons_invitation_opens_them_privately() -> None:
    outcome = await make_service().accept_invite(ANE, StartLessons(5))
    step = only(outcome.messages)
    assert step.user == ANE.key and "Lesson 5/10" in step.text


# --- the lessons teach in order and never give the answer away ----------------------------------------------


def test_nothing_is_asked_before_a_lesson_taught_it() -> None:
    taught: set[str] = set()
    for lesson in lessons():
        assert lesson.teaches, f"{lesson.key}: says what it teaches"
        taught |= lesson.teaches
        for n, (_deal, step) in enumerate(lesson.steps, 1):
            missing = step.topics - taught
            assert not missing, (
                f"lesson {lesson.number} step {n} asks about {sorted(missing)} before it is taught"
            )
    assert "pares" not in lessons()[1].teaches  # lesson 2 once asked about pares, taught in lesson 5


def test_the_count_lesson_teaches_what_each_line_pays() -> None:
    count = next(lesson for lesson in lessons() if lesson.key == "count")
    asked = [(step.ask, step.lance, step.right) for _deal, step in count.steps[:3]]
    assert asked == [
        ("paid", "pares", "stones 3"),
        ("paid", "juego", "stones 5"),
        ("paid", "grande", "stones 0"),
    ]
    for lang in LANGUAGES:  # every value is said: par 1, medias 2, duples 3, 31 = 3, other juego 2, punto 1
        say = lesson_texts(lang)["count"].steps[0].say
        assert all(n in say for n in ("1", "2", "3", "31")), lang
        assert say.count("1") >= 3 and say.count("2") >= 2, lang


def _hidden_totals(lesson: Lesson, index: int) -> set[str]:
    """The juego totals of the seats whose cards the learner does not see at this step."""
    pos = position(lesson, index)
    if pos.deal.show == "all":
        return set()
    mine = str(evaluate(pos.hand.hands[LEARNER]).total)
    scores = {str(v) for v in (*pos.hand.start_scores, pos.hand.config.target)}
    totals = {str(evaluate(pos.hand.hands[seat]).total) for seat in range(4) if seat != LEARNER}
    return totals - {mine} - scores


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_hidden_card_is_told_in_a_lesson(lang: str) -> None:
    texts = lesson_texts(lang)
    for lesson, index in STEPS:
        words = texts[lesson.key].steps[index]
        for total in _hidden_totals(lesson, index):
            for text in (words.say, words.right, words.wrong):
                assert not re.search(rf"(?<!\d){total}(?!\d)", text), (
                    lang,
                    lesson.key,
                    index + 1,
                    total,
                    text,
                )


def test_a_question_is_not_answered_on_its_own_screen() -> None:
    for lesson, index in STEPS:
        pos = position(lesson, index)
        step = pos.step
        if step.plays:
            continue
        text = render.step_text("en", lesson, index, pos)
        shown = text.rsplit("\n\n", 1)[0]  # everything but the explanation and question
        if step.right.startswith("signal "):
            sena = EN.gettext(render.SENA_NAMES[render.Sena(step.right.split()[1])])
            assert sena not in shown, (lesson.key, index + 1)
        # The stones on screen are those before the hand's count: its result is the question.
        start = pos.hand.start_scores
        for line in shown.splitlines():
            if line.startswith("Stones:"):
                assert line.startswith(f"Stones: your team {start[0]}, the rivals {start[1]} "), line
    count = next(lesson for lesson in lessons() if lesson.key == "count")
    screen = render.step_text("en", count, 3, position(count, 3))
    assert "Stones: your team 39, the rivals 30" in screen and "39 to 30" in screen  # they agree


TOLD_MANO = {"es": "tú eres mano", "en": "you are mano", "fr": "tu es la main", "pt": "tu és mão"}
TOLD_MANO |= {"eu": "zu zara esku", "gl": "ti es man"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_question_is_answered_by_the_line_above_it(lang: str) -> None:
    chica = lesson_texts(lang)["chica"].steps[1].say  # the tie goes to the mano: who is mano is on screen
    assert TOLD_MANO[lang] not in chica.lower()
    senas = next(lesson for lesson in lessons() if lesson.key == "senas")
    assert senas.steps[-1][1].ask != "caught"  # the caught seña is on the line above: ask what it means


CATCH_STEM = {"es": "caz", "en": "catch", "fr": "attrap", "pt": "apanh", "eu": "harrapa", "gl": "caz"}
PRESS_THE_FLASH = {"es": "destello", "en": "flash", "fr": "éclair", "pt": "relâmpago", "eu": "tximista"}
PRESS_THE_FLASH |= {"gl": "lóstrego"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_one_word_for_catching_a_sena_in_lessons_rules_and_buttons(lang: str) -> None:
    t = translator(lang)
    stem = CATCH_STEM[lang]
    button = t.gettext(render.CATCH)
    assert stem in button.lower()
    step = lesson_texts(lang)["senas"].steps[1]
    assert button.removeprefix("⚡ ") in step.say  # the lesson names the button it asks for
    assert stem in step.say.lower() and stem in step.right.lower() + step.wrong.lower()
    assert PRESS_THE_FLASH[lang] not in f"{step.say} {step.right} {step.wrong}".lower()
    assert stem in rules_full(lang).lower()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_last_lesson_ends_by_offering_a_game(lang: str) -> None:
    last = lessons()[-1]
    done = render.done_view(lang, ANE.key, last)
    assert "/newgame" in done.text.splitlines()[-1]  # a chat's own terms (a terminal says its command)
