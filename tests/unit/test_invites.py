"""Invitations for players the bot cannot write to first, and the words commands accept, in the core."""

from __future__ import annotations

import pytest
from service_helpers import ANE, BRAIS, GROUP, Harness, english

from bot.app import COMMAND_LIST, leaderboard_scope, wants_full_rules
from bot.i18n import LANGUAGES, translator
from bot.kernel import JoinSeat, SendHand, SendRules, TableStatus, encode_invite, parse_invite


@pytest.mark.parametrize("invite", [JoinSeat("abcd1234", 3), SendHand("abcd1234"), SendRules()])
def test_an_invitation_survives_its_link(invite: JoinSeat | SendHand | SendRules) -> None:
    payload = encode_invite(invite)
    assert len(payload) <= 64 and payload.replace("_", "").replace("-", "").isalnum()
    assert parse_invite(payload) == invite


@pytest.mark.parametrize(
    "payload", ["", "j1234", "jabcd12349", "habcd123", "RULES", "xabcd1234", "habcd1234 "]
)
def test_anything_else_is_a_plain_start(payload: str) -> None:
    assert parse_invite(payload) is None


async def test_a_player_is_invited_once_to_what_the_table_needs() -> None:
    h = Harness()
    await english(h)
    tid = await h.lobby(GROUP, ANE, (BRAIS, 1))
    first = await h.service.invitations.invitation(BRAIS.key, tid)
    assert first is not None and first.invite == JoinSeat(tid, 1) and first.chat == GROUP.key
    assert "Brais" in first.text("https://link") and "https://link" in first.text("https://link")
    assert await h.service.invitations.invitation(BRAIS.key, tid) is None  # once per table
    assert await h.service.invitations.invitation("tg:999", tid) is None  # not seated
    assert (await h.press(ANE, h.token(tid, "lobby", GROUP.key, "start"))).ok
    assert (await h.load(tid)).table.status is TableStatus.PLAYING
    playing = await h.service.invitations.invitation(ANE.key, tid)
    assert playing is not None and playing.invite == SendHand(tid)
    # Opening the bot through the link sends the hand privately.
    opened = await h.service.accept_invite(ANE, playing.invite)
    assert [m.slot for m in opened.messages] == ["hand"] and opened.messages[0].user == ANE.key
    rules = await h.service.accept_invite(ANE, SendRules())
    assert len(rules.messages) >= 3 and all(m.user == ANE.key for m in rules.messages)


def test_the_words_commands_accept() -> None:
    assert wants_full_rules(["full"]) and wants_full_rules(["OSOAK"]) and not wants_full_rules([])
    assert not wants_full_rules(["summary"])
    assert leaderboard_scope(["global"]) == "global" and leaderboard_scope([]) == "chat"
    assert leaderboard_scope(["Todos"]) == "global" and leaderboard_scope(["x"]) == "chat"


def test_the_command_menu_is_translated_everywhere() -> None:
    for lang in LANGUAGES:
        t = translator(lang)
        assert all(0 < len(t.gettext(description)) <= 256 for _, description in COMMAND_LIST)
    assert [name for name, _ in COMMAND_LIST] == [
        "newgame",
        "leaderboard",
        "stats",
        "rules",
        "learn",
        "language",
        "history",
        "cancel",
        "help",
    ]
