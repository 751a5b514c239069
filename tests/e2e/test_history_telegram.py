"""End to end on the fake Bot API: ``/history`` in a group, a kept hand opened privately and in the group,
a deep link for someone the bot cannot write to, forged and stale presses, and the match exported as two
documents (``sendDocument``) whose JSON replays through ``python -m engine.replay`` to the same scores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bot.app import parse_kept
from bot.kernel import ChatRef, UserRef

from .conftest import RunningBot, Table, assert_clean
from .fake_telegram import FakeTelegram, StoredMessage

ROOT = Path(__file__).resolve().parents[2]


async def _group_with_a_played_game(tg: FakeTelegram, bot: RunningBot) -> tuple[Table, str]:
    """A group whose chat played a machine game (its hands kept), and a player who opened the bot."""
    group = tg.add_group("Mus")
    ane = tg.add_user("Ane", language_code="en")
    table = Table(tg, bot, group, players={0: ane})
    tg.user_starts_bot(ane)
    await table.settle()
    await table.command(ane, "/language en")
    played = await bot.service.new_machine_table(
        ChatRef(f"tg:{group.id}", title="Mus"), UserRef(f"tg:{ane.id}", "Ane", "en"), single_game=True
    )
    assert played.ok and played.table is not None
    return table, played.table


def _history_message(tg: FakeTelegram, table: Table) -> StoredMessage:
    found = [m for m in tg.bot_messages(table.chat) if m.text.startswith("📜 The last hands")]
    assert found, tg.bot_messages(table.chat)
    return found[-1]


async def test_history_opens_hands_privately_and_in_the_group(tg: FakeTelegram, bot: RunningBot) -> None:
    table, table_id = await _group_with_a_played_game(tg, bot)
    ane = table.players[0]
    await table.command(ane, "/history")
    history = _history_message(tg, table)
    rows = [[b.get("callback_data") for b in row] for row in history.keyboard]
    n = rows[0][0].split(".")[1]  # the oldest hand listed (the last five are)
    assert len(rows) == 3 and len(rows[0]) == len(rows[1]) == 5
    assert rows[0][0] == f"{table_id}.{n}.hist" and rows[1][0] == f"{table_id}.{n}.histc"
    assert rows[2] == [f"{table_id}.0.hexp"]
    assert f"Hand {n} · " in history.text and "GRANDE: " in history.text
    # Privately: the story in Ane's private chat, the press answered with where it went.
    before = len(tg.bot_messages(ane.id))
    record = await table.press(ane, history, f"{table_id}.{n}.hist")
    assert record.answer is not None and "private chat" in record.answer.get("text", "")
    stories = tg.bot_messages(ane.id)[before:]
    assert len(stories) == 1 and stories[0].text.startswith(f"📜 Hand {n} · Mus ({table_id})")
    assert "Dealt:" in stories[0].text and "At the end:" in stories[0].text
    # In the group: the story, once; a second press answers that it was just posted.
    in_group = len(tg.bot_messages(table.chat))
    await table.press(ane, history, f"{table_id}.{n}.histc")
    posted = tg.bot_messages(table.chat)[in_group:]
    assert len(posted) == 1 and posted[0].text.startswith(f"📜 Hand {n} · ") and not posted[0].buttons
    again = await table.press(ane, history, f"{table_id}.{n}.histc")
    assert "moment ago" in again.answer.get("text", "")  # type: ignore[union-attr]
    assert len(tg.bot_messages(table.chat)) == in_group + 1
    assert_clean(tg)


async def test_someone_the_bot_cannot_write_to_gets_a_deep_link_to_the_hand(
    tg: FakeTelegram, bot: RunningBot
) -> None:
    table, table_id = await _group_with_a_played_game(tg, bot)
    await table.command(table.players[0], "/history")
    history = _history_message(tg, table)
    zuri = tg.add_user("Zuri", language_code="en")  # never opened the bot
    n = history.keyboard[0][0]["callback_data"].split(".")[1]
    record = await table.press(zuri, history, f"{table_id}.{n}.hist")
    url = record.answer.get("url", "") if record.answer else ""
    assert url.endswith(f"?start=s{table_id}-{n}"), record
    assert tg.bot_messages(zuri.id) == []
    tg.user_starts_bot(zuri, f"s{table_id}-{n}")
    await table.settle()
    (story,) = tg.bot_messages(zuri.id)
    assert story.text.startswith(f"📜 Hand {n} · Mus ({table_id})")
    assert_clean(tg)


async def test_forged_and_stale_history_presses_change_nothing(tg: FakeTelegram, bot: RunningBot) -> None:
    table, table_id = await _group_with_a_played_game(tg, bot)
    ane = table.players[0]
    await table.command(ane, "/history")
    history = _history_message(tg, table)
    other = tg.add_group("Other")
    tg.user_sends(ane, other, "/language en")
    await table.settle()
    posted = len(tg.messages_in(table.chat)) + len(tg.bot_messages(ane.id))
    answers = {
        "zzzz9999.1.hist": "no longer kept",  # a match never kept
        f"{table_id}.999.histc": "no longer kept",  # a hand never kept
        f"{table_id}.1-2.hist": "no longer valid",  # not a hand stamp
        f"{table_id}.3.hexp": "no longer valid",  # an export names no hand
        f"{table_id}.1.hist;drop": "no longer valid",  # not our grammar
    }
    for data, said in answers.items():
        record = await table.press(ane, history, data, check_button=False)
        assert said in (record.answer or {}).get("text", ""), (data, record)
    # A real button of this group's history, pressed on a message of another group: refused there.
    message = tg.user_sends(ane, other, "hello")
    record = await table.press(ane, message, f"{table_id}.1.histc", check_button=False)
    assert "no longer valid" in (record.answer or {}).get("text", "")
    assert len(tg.messages_in(table.chat)) + len(tg.bot_messages(ane.id)) == posted
    assert [m for m in tg.bot_messages(other) if m.text.startswith("📜")] == []
    assert_clean(tg)


async def test_the_export_is_two_documents_that_replay_to_the_same_scores(
    tg: FakeTelegram, bot: RunningBot, tmp_path: Path
) -> None:
    table, table_id = await _group_with_a_played_game(tg, bot)
    ane = table.players[0]
    await table.command(ane, "/history")
    await table.press(ane, _history_message(tg, table), f"{table_id}.0.hexp")
    json_doc, text_doc = tg.documents(table.chat)
    assert json_doc.document is not None and text_doc.document is not None
    assert json_doc.document.filename == f"mus-{table_id}.json" and text_doc.document.filename.endswith(
        ".txt"
    )
    assert "python -m engine.replay" in json_doc.text
    assert "Dealt:" in text_doc.document.content.decode("utf-8")
    exported = tmp_path / "export.json"
    exported.write_bytes(json_doc.document.content)
    run = subprocess.run(
        [sys.executable, "-m", "engine.replay", str(exported)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines()]
    kept = [k for _, entry in await bot.service.deps.history.hands(table_id) if (k := parse_kept(entry))]
    assert [r["result"]["scores"] for r in results] == [list(k.scores) for k in kept]
    assert any(call.method == "sendDocument" for call in tg.calls()) and tg.rejected() == []
    assert_clean(tg)
