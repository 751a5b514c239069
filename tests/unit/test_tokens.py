"""Button data: one grammar, parsed once into typed commands; anything else is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.kernel import (
    CatchSena,
    ChangeOption,
    ConfirmDiscard,
    LobbyAction,
    MakeSena,
    OpenPicker,
    PickCard,
    SetLanguage,
    ShowCards,
    TakeSeat,
    TokenError,
    TurnAction,
    language_token,
    make_token,
    parse_token,
    pick_code,
)
from engine.actions import Action, ActionKind
from engine.cards import FULL_DECK, parse_card
from engine.senas import Sena


@pytest.mark.parametrize(
    ("code", "command"),
    [
        ("seat2", TakeSeat(2)),
        ("leave", LobbyAction("leave")),
        ("start", LobbyAction("start")),
        ("cancel", LobbyAction("cancel")),
        ("o_senas", ChangeOption("senas")),
        ("o_level", ChangeOption("level")),
        ("mus", TurnAction(Action(ActionKind.MUS))),
        ("nomus", TurnAction(Action(ActionKind.NO_MUS))),
        ("env17", TurnAction(Action(ActionKind.ENVIDO, 17))),
        ("sube5", TurnAction(Action(ActionKind.SUBE, 5))),
        ("ordago", TurnAction(Action(ActionKind.ORDAGO))),
        ("more", OpenPicker()),
        ("pick_12o", PickCard(parse_card("12o"))),
        ("discard", ConfirmDiscard()),
        ("sena_dos_reyes", MakeSena(Sena.DOS_REYES)),
        ("catch3", CatchSena(3)),
        ("cards", ShowCards()),
    ],
)
def test_each_code_is_one_typed_command(code: str, command: object) -> None:
    stamp = "L" if isinstance(command, TakeSeat | LobbyAction | ChangeOption) else "4-2"
    assert parse_token(make_token("abcd1234", stamp, code)).command == command


def test_every_card_has_its_pick_button() -> None:
    for card in FULL_DECK:
        assert parse_token(make_token("abcd1234", "1", pick_code(card))).command == PickCard(card)


def test_the_language_picker_is_chat_scoped() -> None:
    token = parse_token(language_token("eu"))
    assert (token.table, token.command) == ("-", SetLanguage("eu"))


@pytest.mark.parametrize(
    "data",
    [
        "abcd1234.1.sena_nonsense",  # a seña that does not exist
        "abcd1234.1.pick_8o",  # no 8 in a Spanish deck
        "abcd1234.1.pick0",  # positions are not card names
        "abcd1234.1.seat4",
        "abcd1234.1.catch",
        "-.C.lang_es.x",
        "-.L.lang_es",
        "abcd1234.1.cards\n",
        None,
        42,
    ],
)
def test_anything_else_is_refused(data: object) -> None:
    with pytest.raises(TokenError):
        parse_token(data)


@given(st.text(max_size=80))
def test_random_data_either_parses_to_a_command_or_is_refused(data: str) -> None:
    try:
        token = parse_token(data)
    except TokenError:
        return
    assert token.command is not None and token.encode() == data
