"""Hand history: the memory store's contract and expiry, what a kept hand says (summary, story), the export
round trip through ``python -m engine.replay``, ``/history`` and its buttons, and a failing store."""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest
from history_contract import (
    check_a_chat_lists_a_bounded_number_of_matches,
    check_keeps_lists_and_reads_hands,
    check_old_matches_leave_the_list,
)
from service_helpers import ANE, BRAIS, GROUP, GROUP2, OUTSIDER, Harness

from adapters.console import history as console_history
from bot.app import parse_kept
from bot.app._history_commands import ALREADY_POSTED, HAND_GONE, SENT_PRIVATELY
from bot.history import KeptHand, MemoryHistory, export_json, export_text, kept_hand, summary_lines
from bot.history._model import lance_summaries
from bot.history._text import story_lines
from bot.i18n import LANGUAGES, translator
from bot.i18n import common as msg
from bot.kernel import (
    ChatRef,
    ExportMatch,
    OpenHand,
    OutMessage,
    ShowStory,
    TableState,
    TokenError,
    UserRef,
    encode_invite,
    history_token,
    parse_invite,
    parse_token,
)
from bot.ops import Settings, SettingsInvalid, read_settings
from bot.store import StoreUnavailable
from engine.match import Match
from engine.record import parse_record, replay
from engine.replay import run_hand

ROOT = Path(__file__).resolve().parents[2]
CRAFTED = ROOT / "tests" / "data" / "conformance" / "crafted.json"


def _crafted(case_id: str) -> dict[str, object]:
    cases = json.loads(CRAFTED.read_text(encoding="utf-8"))["cases"]
    case: dict[str, object] = next(c for c in cases if c["id"] == case_id)
    return case


# --- the store -------------------------------------------------------------------------------------------


async def test_the_memory_store_keeps_the_contract() -> None:
    now = 1_000_000.0
    await check_keeps_lists_and_reads_hands(MemoryHistory(clock=lambda: now), now)
    await check_a_chat_lists_a_bounded_number_of_matches(MemoryHistory(clock=lambda: now), now)
    await check_old_matches_leave_the_list(MemoryHistory(clock=lambda: now), now)


async def test_a_match_expires_its_retention_after_its_last_hand() -> None:
    clock = [0.0]
    store = MemoryHistory(retention=100, clock=lambda: clock[0])
    await store.keep("abcd0001", "tg:-1", 1, 0.0, "one")
    clock[0] = 60.0
    await store.keep("abcd0001", "tg:-1", 2, 60.0, "two")  # a new hand: kept 100 s from now, with the first
    clock[0] = 150.0
    assert await store.hands("abcd0001") == [(1, "one"), (2, "two")]
    assert await store.matches("tg:-1", clock[0]) == ["abcd0001"]
    clock[0] = 161.0
    assert await store.hands("abcd0001") == [] and await store.hand("abcd0001", 2) is None
    assert await store.matches("tg:-1", clock[0]) == []
    with pytest.raises(ValueError):
        MemoryHistory(retention=0)


def test_history_days_is_a_validated_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).history_days == 30  # type: ignore[call-arg]
    monkeypatch.setenv("HISTORY_DAYS", "7")
    assert read_settings(Settings).history_days == 7
    for bad in ("0", "1.5", "forever", "3651"):
        monkeypatch.setenv("HISTORY_DAYS", bad)
        with pytest.raises(SettingsInvalid) as caught:
            read_settings(Settings)
        assert caught.value.problems == ["HISTORY_DAYS: must be a whole number of days between 1 and 3650"]
    assert "HISTORY_DAYS=30" in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()


# --- what a kept hand says --------------------------------------------------------------------------------


def _kept_from_case(case_id: str, lang: str = "en") -> KeptHand:
    """A crafted conformance hand, kept as the bot keeps a finished hand."""
    record = parse_record(_crafted(case_id))
    hand = replay(record)
    match = Match(first_mano=record.mano)
    match.scores = list(record.scores)
    match.start_hand(hand)
    table = TableState(id="abcd0001", chat="tg:-1", chat_title="Mus", creator="tg:1", lang=lang, hand_no=1)
    for seat, name in enumerate(("Ane", "Brais", "Camille", "Dani")):
        table.seats[seat].name = name
    return kept_hand(table, match, 5.0)


def test_the_summary_says_who_won_each_lance_how_and_the_score() -> None:
    case = _crafted("hand-worked-example")
    hand = replay(parse_record(case))
    summaries = {s.lance: s for s in lance_summaries(hand)}
    # Grande, chica, pares en paso to team 0; juego (only team 1 holds it) without betting to team 1.
    assert {lance: (s.status, s.team, s.stones) for lance, s in summaries.items()} == {
        "grande": ("paso", 0, (1, 0)),
        "chica": ("paso", 0, (1, 0)),
        "pares": ("paso", 0, (4, 0)),
        "juego": ("no_bet", 1, (0, 5)),
    }
    kept = _kept_from_case("hand-worked-example")
    assert kept.scores == (6, 5) and kept.record.hands[0] == ["12c", "3o", "7e", "1b"]
    head, lances = summary_lines(translator("en"), kept)
    assert head == "Hand 1 · Ane and Camille 6–5 Brais and Dani"  # the score says which pair is which
    assert "GRANDE: en paso → Ane and Camille +1" in lances
    assert "JUEGO: no betting (one side only) → Brais and Dani +5" in lances


def test_the_story_tells_the_whole_hand_in_the_live_tables_words() -> None:
    kept = _kept_from_case("hand-worked-example")
    lines = story_lines(translator("en"), kept)
    text = "\n".join(lines)
    assert "Dealt:" in lines and "At the end:" in lines
    # The deal and the end: every seat's four cards, as the table writes them.
    assert "  Ane: R🍷 3🪙 7🗡️ A🪵" in lines
    assert "Mus: Ane: no hay mus" in lines and "✓ GRANDE: en paso" in lines
    assert "  PARES: en paso + Ane par: 1 + Camille duples: 3 = 4 → Ane and Camille" in lines
    assert "Score: Ane and Camille 6 – 5 Brais and Dani" in lines
    for lang in LANGUAGES:  # every language tells it (and French writes its colons with a no-break space)
        told = "\n".join(story_lines(translator(lang), kept))
        assert "R🍷 3🪙 7🗡️ A🪵" in told
        if lang == "fr":
            assert " :" not in told and "\u00a0:" in told
    assert text.count("\n") > 10


def test_a_hand_ended_by_an_accepted_ordago_names_who_won_it() -> None:
    cases = json.loads(CRAFTED.read_text(encoding="utf-8"))["cases"]
    case = next(
        c for c in cases if c["type"] == "hand" and "expect" in c and (c["expect"].get("ordago") or None)
    )
    kept = _kept_from_case(case["id"])
    ordago = case["expect"]["ordago"]
    assert kept.ordago == (ordago["lance"], ordago["team"])
    _, lances = summary_lines(translator("en"), kept)
    assert "ÓRDAGO accepted!" in lances


# --- the bot keeps every hand -----------------------------------------------------------------------------


async def _played(h: Harness, chat: ChatRef = GROUP, **options: object) -> str:
    outcome = await h.service.new_machine_table(chat, ANE, **options)  # type: ignore[arg-type]
    assert outcome.ok and outcome.table is not None
    return outcome.table


async def test_every_finished_hand_of_a_match_is_kept_and_replays() -> None:
    h = Harness()
    table_id = await _played(h, target=10)
    state = await h.load(table_id)
    assert state.match is not None and state.match.over
    found = await h.deps.history.hands(table_id)
    kept = [parse_kept(entry) for _, entry in found]
    assert [k.hand_no for k in kept if k] == list(range(1, state.table.hand_no + 1))
    for k in kept:
        assert k is not None and k.table == table_id and k.chat == GROUP.key
        hand = k.replayed()
        assert hand.over and list(hand.scores) == list(k.scores)
    last = kept[-1]
    assert last is not None and last.match_winner is not None
    assert await h.deps.history.matches(GROUP.key, h.now) == [table_id]


async def test_the_export_replays_through_engine_replay_to_the_same_scores(tmp_path: Path) -> None:
    h = Harness()
    table_id = await _played(h, target=15)
    kept = [k for _, entry in await h.deps.history.hands(table_id) if (k := parse_kept(entry))]
    exported = tmp_path / "match.json"
    exported.write_text(export_json(kept), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "engine.replay", str(exported)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["id"] for line in lines] == [f"{table_id}-{k.hand_no}" for k in kept]
    document = json.loads(exported.read_text(encoding="utf-8"))
    assert document["format"] == "mus-conformance/1"
    for line, k, case in zip(lines, kept, document["cases"], strict=True):
        assert "error" not in line, line
        assert line["result"]["scores"] == list(k.scores)
        assert line["result"] == case["expect"]  # the file's own expectations hold
        assert line["result"] == run_hand(case)
    text = export_text("es", kept)
    assert text.count("🂠 Mus · Mano n.º") == len(kept)


async def test_history_lists_the_last_hands_with_buttons_that_open_them() -> None:
    h = Harness()
    await h.service.set_language(GROUP, ANE, "en")
    empty = await h.service.history.recent(GROUP, ANE)
    assert "kept for 30 days" in empty.messages[0].text and not empty.messages[0].buttons
    table_id = await _played(h, single_game=True)
    shown = await h.service.history.recent(GROUP, ANE)
    (view,) = shown.messages
    assert view.chat == GROUP.key and view.slot == "history" and view.fresh
    hands = sorted(n for n, _ in await h.deps.history.hands(table_id))
    listed = hands[-5:]
    privately, here, (export,) = view.buttons  # a row of 🔒, a row of 💬, the export
    assert [b.token for b in privately] == [history_token(table_id, n, "hist") for n in listed]
    assert [b.label for b in here] == [f"💬 {n}" for n in listed]
    assert [b.token for b in here] == [history_token(table_id, n, "histc") for n in listed]
    assert export.token == history_token(table_id, 0, "hexp")
    tokens = [privately[0].token, here[0].token]
    assert all(f"Hand {n} ·" in view.text for n in listed)
    assert all(len(t.encode()) <= 64 for t in tokens)
    # Privately: a story for the presser alone; the group is told where it went.
    opened = await h.service.press(BRAIS, tokens[0], GROUP)
    (story,) = opened.messages
    assert story.user == BRAIS.key and story.chat is None and story.origin == GROUP.key
    assert opened.answer == translator("en").gettext(SENT_PRIVATELY)
    assert (
        story.text.startswith(f"📜 Hand {listed[0]} · Test group ({table_id})")
        and "At the end:" in story.text
    )
    # In the chat: once; a second press within the repost interval posts nothing.
    here = await h.service.press(BRAIS, tokens[1], GROUP)
    assert [m.chat for m in here.messages] == [GROUP.key]
    again = await h.service.press(OUTSIDER, tokens[1], GROUP)
    assert not again.messages and again.answer == translator("en").gettext(ALREADY_POSTED)


async def test_forged_and_stale_history_buttons_change_nothing() -> None:
    h = Harness()
    table_id = await _played(h, single_game=True)
    en = translator("en")
    stale, gone = en.gettext(msg.STALE_BUTTON), en.gettext(HAND_GONE)
    presses = {
        f"{table_id}.1.hist": (GROUP2, stale),  # a button of another chat's history
        f"{table_id}.999.hist": (GROUP, gone),  # a hand never kept (or expired)
        "zzzz9999.1.histc": (GROUP, gone),  # a match never kept
        f"{table_id}.1-3.hist": (GROUP, stale),  # a turn stamp names no kept hand
        f"{table_id}.0.hist": (GROUP, stale),  # hand 0 does not exist
        f"{table_id}.1.hexp": (GROUP, stale),  # the export is stamped 0
        f"{table_id}.0.hexp": (GROUP2, stale),
        f"{table_id}.1.histx": (GROUP, stale),  # not our grammar
    }
    for data, (chat, answer) in presses.items():
        outcome = await h.service.press(ANE, data, chat)
        assert not outcome.ok and not outcome.messages and outcome.answer == answer, data
    assert (await h.service.press(ANE, f"{table_id}.1.hist", None)).answer == stale  # no chat: refused
    with pytest.raises(TokenError):
        parse_token(f"{table_id}.1.histx")
    assert isinstance(parse_token(f"{table_id}.1.histc").command, OpenHand)
    assert isinstance(parse_token(f"{table_id}.0.hexp").command, ExportMatch)


async def test_the_export_is_two_documents_in_the_chat() -> None:
    h = Harness()
    table_id = await _played(h, single_game=True)
    outcome = await h.service.press(BRAIS, history_token(table_id, 0, "hexp"), GROUP)
    json_view, text_view = outcome.messages
    assert json_view.document is not None and text_view.document is not None
    assert json_view.document[0] == f"mus-{table_id}.json" and text_view.document[0] == f"mus-{table_id}.txt"
    assert json.loads(json_view.document[1])["format"] == "mus-conformance/1"
    assert json_view.chat == text_view.chat == GROUP.key and json_view.fresh
    # A view with a file survives the outbox (another worker may deliver it).
    assert OutMessage.from_json(json_view.to_json()) == json_view
    assert not (await h.service.press(BRAIS, history_token(table_id, 0, "hexp"), GROUP)).messages


async def test_a_deep_link_opens_a_kept_hand_for_someone_the_bot_could_not_write_to() -> None:
    h = Harness()
    table_id = await _played(h, single_game=True)
    payload = encode_invite(ShowStory(table_id, 1))
    assert payload == f"s{table_id}-1" and parse_invite(payload) == ShowStory(table_id, 1)
    assert parse_invite(f"s{table_id}-0") is None
    outcome = await h.service.accept_invite(BRAIS, ShowStory(table_id, 1))
    (story,) = outcome.messages
    assert story.user == BRAIS.key and "📜 Hand 1" in story.text
    gone = await h.service.accept_invite(BRAIS, ShowStory(table_id, 999))
    assert not gone.messages and gone.answer == translator("en").gettext(HAND_GONE)


class _FailingHistory(MemoryHistory):
    """A history store whose writes fail (Redis down, or a bug)."""

    async def keep(self, table: str, chat: str, hand_no: int, at: float, entry: str) -> None:
        raise StoreUnavailable("history down")


class _BrokenHistory(MemoryHistory):
    async def keep(self, table: str, chat: str, hand_no: int, at: float, entry: str) -> None:
        raise RuntimeError("a bug")


@pytest.mark.parametrize("store", [_FailingHistory, _BrokenHistory])
async def test_a_failing_history_store_never_breaks_a_table(
    store: type[MemoryHistory], caplog: pytest.LogCaptureFixture
) -> None:
    h = Harness()
    h.deps.history = store()
    outcome = await h.service.new_machine_table(GROUP, ANE, single_game=True)
    assert outcome.ok
    state = await h.load(outcome.table or "")
    assert state.match is not None and state.match.over  # every hand played, the game finished
    assert "was not kept in the history" in caplog.text
    traced = [r for r in caplog.records if "was not kept in the history" in r.getMessage() and r.exc_info]
    # An outage (Redis down, the update's time for the store spent) is one line; a bug keeps its trace.
    assert bool(traced) is (store is _BrokenHistory)


async def test_history_reads_answer_store_unavailable_politely() -> None:
    class Down(MemoryHistory):
        async def matches(self, chat: str, now: float, limit: int = 10) -> list[str]:
            raise StoreUnavailable("down")

        async def hand(self, table: str, hand_no: int) -> str | None:
            raise StoreUnavailable("down")

    h = Harness()
    h.deps.history = Down()
    en = translator("en")
    es = translator("es")  # the chat's language (its default)
    assert (await h.service.history.recent(GROUP, ANE)).answer == es.gettext(msg.STORE_UNAVAILABLE)
    pressed = await h.service.press(ANE, "abcd0001.1.hist", GROUP)
    assert pressed.answer == en.gettext(msg.STORE_UNAVAILABLE) and not pressed.messages


async def test_history_in_the_chats_language_and_a_private_story_in_the_readers() -> None:
    h = Harness()
    table_id = await _played(h, single_game=True)
    await h.service.set_language(GROUP, ANE, "fr")
    shown = await h.service.history.recent(GROUP, ANE)
    assert shown.messages[0].text.startswith("📜 Les dernières donnes de la partie de ce chat\u00a0:")
    basque = UserRef("tg:7", "Miren", "eu")
    opened = await h.service.press(basque, history_token(table_id, 1, "hist"), GROUP)
    assert "1. banaketa" in opened.messages[0].text


# --- musbot history ---------------------------------------------------------------------------------------


def _history_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    console_history.add_arguments(parser)
    return parser.parse_args([*argv, "--lang", "en"])


async def test_musbot_history_lists_tells_and_exports_from_a_store() -> None:
    h = Harness()
    terminal = ChatRef(console_history.TERMINAL_CHAT, private=True, title="Terminal")
    table_id = await _played(h, terminal, single_game=True)
    store = h.deps.history

    async def shown(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        code = await console_history.show(_history_args(*argv), store, h.now, out)
        return code, out.getvalue()

    code, listing = await shown()
    assert code == 0 and listing.startswith(f"{table_id} · Terminal ({table_id}) · hands 1–")
    assert "  Hand 1 · " in listing
    code, match = await shown(table_id)
    assert code == 0 and "GRANDE: " in match
    code, story = await shown(table_id, "1")
    assert code == 0 and story.startswith(f"📜 Hand 1 · Terminal ({table_id})") and "Dealt:" in story
    code, exported = await shown(table_id, "--json")
    assert code == 0 and json.loads(exported)["format"] == "mus-conformance/1"
    code, text = await shown(table_id, "--text")
    assert code == 0 and text.count("Dealt:") == len(await store.hands(table_id))
    assert await shown(table_id, "999") == (1, f"Hand 999 of {table_id} is not kept.\n")
    assert await shown("zzzz9999") == (1, "No hands of zzzz9999 are kept.\n")
    assert await shown("--chat", "tg:-5") == (1, "No hands are kept for tg:-5.\n")


async def test_musbot_history_speaks_the_language_asked_with_dates_and_lists_both_terminal_chats() -> None:
    h = Harness()
    first = await _played(h, ChatRef("console:local", private=True, title="Terminal"), single_game=True)
    second = await _played(h, ChatRef("console:local:2", private=True, title="Terminal"), single_game=True)
    parser = argparse.ArgumentParser()
    console_history.add_arguments(parser)
    out = io.StringIO()
    assert await console_history.show(parser.parse_args(["--lang", "es"]), h.deps.history, h.now, out) == 0
    listing = out.getvalue().splitlines()
    heads = [line for line in listing if not line.startswith("  ")]
    assert {head.split(" · ")[0] for head in heads} == {first, second}  # --new's chat is the terminal's too
    when = time.strftime("%Y-%m-%d", time.localtime(h.now))
    for head in heads:
        assert " · manos 1–" in head and f" · última jugada {when} " in head, head
    hands = [line for line in listing if line.startswith("  Mano ")]
    assert all(re.match(r"  Mano \d+ · .+ y .+ \d+–\d+ .+ y .+", line) for line in hands), hands
    assert not any(word in out.getvalue() for word in ("Hand ", "hands ", "last played", "Score"))


def test_musbot_history_reads_what_musbot_play_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from adapters import cli
    from adapters.console import app as console

    parser = argparse.ArgumentParser()
    console.add_arguments(parser)
    play = parser.parse_args(["--data-dir", str(tmp_path), "--auto", "--seed", "3", "--single", "--quiet"])
    assert console.run(play, Settings(_env_file=None)) == 0  # type: ignore[call-arg]
    master = random.Random(3)  # --seed draws the table id as musbot play does (adapters.console.app)
    table_id = "".join(master.choice(string.ascii_lowercase + string.digits) for _ in range(8))
    capsys.readouterr()
    assert cli.main(["history", table_id, "1", "--data-dir", str(tmp_path), "--lang", "en"]) == 0
    assert capsys.readouterr().out.startswith(f"📜 Hand 1 · Auto ({table_id})")
    assert cli.main(["history", "--data-dir", str(tmp_path), "--lang", "en"]) == 1  # the terminal's own: none
    assert "No hands are kept for console:local." in capsys.readouterr().out
