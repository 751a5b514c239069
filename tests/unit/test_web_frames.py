"""The web table's pages never hold a card their seat may not see (issue 22: censoring on the server).

Random hands are played with señas and catches; after every record entry, the page of each seat and the
spectator's page (as JSON, as the server sends it, its buttons' tokens included) are searched for every card,
in both notations (the engine's ``12o`` and the chats' ``R🪙``): a seat's page holds only its own cards until
the showdown, a spectator's none. The meaning of a seña reaches only the pages of those who know it.
"""

from __future__ import annotations

import json
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.web.frames import hand_at, page, public_view
from adapters.web.lobby import lobby_page
from bot.i18n import translator
from bot.kernel import Seat, TableState, TableStatus, UserRef
from bot.screens import SENA_NAMES, card_label
from engine.actions import ActionKind
from engine.cards import FULL_DECK, Card, card_name
from engine.hand import Hand
from engine.match import Match, MatchConfig
from engine.senas import true_senas
from engine.state import match_state
from engine.views import hand_view

_CARD_NAME = re.compile(r"(?<![0-9])(1[0-2]|[1-7])([oceb])(?![a-z0-9])")
_LABELS = {card_label(c): c for c in FULL_DECK}
_NAMES = {card_name(c): c for c in FULL_DECK}


def cards_in(frame: dict[str, object]) -> set[Card]:
    """Every card named anywhere in the page (every string, keys included, in either notation)."""
    found: set[Card] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            found.update(_NAMES[m.group(0)] for m in _CARD_NAME.finditer(value))
            found.update(card for label, card in _LABELS.items() if label in value)

    walk(frame)
    return found


def table_for(match: Match) -> TableState:
    seats = [Seat(user=f"t:{i}", name=f"Player{i}", lang="en") for i in range(4)]
    return TableState(
        id="abcd1234",
        chat="t:group",
        creator="t:0",
        status=TableStatus.PLAYING,
        seats=seats,
        match=match_state(match),
        hand_no=1,
    )


def play_hand(seed: int) -> Match:
    """A hand played to its end with random legal moves, random true señas and random catches."""
    rng = random.Random(seed)
    match = Match(MatchConfig(senas=True, target=40))
    match.new_hand(rng)
    hand = match.hand
    assert hand is not None
    now = 0.0
    while not hand.over:
        now += 1.0
        seat = rng.randrange(4)
        options = true_senas(hand.hands[seat]) if len(hand.hands[seat]) == 4 else []
        if options and hand.senas_made(seat) < 2 and rng.random() < 0.2:
            made = match.make_sena(seat, rng.choice(options), now)
            if rng.random() < 0.5:
                match.catch_sena((made.seat + 1) % 4, made.index, now + 0.5)
        turn = hand.turn
        assert turn is not None
        legal = hand.legal_actions(turn)
        quiet = [a for a in legal if a.kind is not ActionKind.ORDAGO] or legal
        match.act(turn, rng.choice(quiet))
    return match


def check_every_page(match: Match) -> None:
    hand = match.hand
    assert hand is not None
    table = table_for(match)
    for entries in range(len(hand.journal) + 1):
        at: Hand = hand_at(hand, entries)
        live = entries == len(hand.journal)
        shown = {c for h in at.hands for c in h} if at.shown else set()
        for seat in (0, 1, 2, 3, None):
            frame = page(table, match, at, seat, lang=None, version=1, live=live, now=0.0)
            json.dumps(frame)  # what the server sends
            own = set() if seat is None else set(at.hands[seat])
            leaked = cards_in(frame) - own - shown
            assert not leaked, f"seat {seat} after {entries} entries sees {sorted(leaked)}"
            # A seña's meaning: on the page as often as the seat knows señas of that maker and meaning.
            t = translator("en")
            for made in at.senas:
                meaning, maker = t.gettext(SENA_NAMES[made.sena]), f"Player{made.seat}"
                lines = [x for x in frame["known"] if x.endswith(f": {meaning}") and maker in x]
                known = [
                    s
                    for s in at.senas
                    if (s.seat, s.sena) == (made.seat, made.sena)
                    and seat is not None
                    and s.seat != seat
                    and at.sena_known_to(seat, s.index)
                ]
                assert len(lines) == len(known), (seat, entries, made, frame["known"])
            if seat is None:
                assert frame["known"] == [] and frame["cards"] == [] and "moves" not in frame


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(min_value=0, max_value=10**9))
def test_no_page_ever_holds_a_card_its_seat_may_not_see(seed: int) -> None:
    check_every_page(play_hand(seed))


def test_the_search_finds_cards_in_both_notations_and_in_tokens() -> None:
    # The check itself must be able to fail: a card in a token, in a text and in a list is found.
    assert cards_in({"t": "abcd1234.1.pick_12o"}) == {_NAMES["12o"]}
    assert cards_in({"a": [f"x {card_label(_NAMES['3c'])} y"]}) == {_NAMES["3c"]}
    assert cards_in({"cards": ["7e", "1b"]}) == {_NAMES["7e"], _NAMES["1b"]}
    assert cards_in({"story": ["Player1: envido 2", "juego 31 · punto 27", "Hand 12 · Game 1 of 3"]}) == set()


def test_the_public_view_holds_no_card_and_no_senas_meaning() -> None:
    match = play_hand(7)
    hand = match.hand
    assert hand is not None
    view = public_view(hand_view(hand_at(hand, 3), 2))
    assert view.cards == () and view.legal == ()
    assert all(a.cards == () for a in view.actions) and all(s.sena is None for s in view.senas)


def test_a_lobby_page_shows_seats_and_no_hand() -> None:
    table = TableState(
        id="abcd1234", chat="t:g", creator="t:0", seats=[Seat(user="t:0", name="<b>Ane</b>")] * 4
    )
    frame = lobby_page(table, UserRef("t:0", "Ane", "en"), "en", 1, 0.0)
    assert frame["status"] == "lobby" and "cards" not in frame
    assert frame["seats"][0]["name"] == "<b>Ane</b>"  # a name is text: the page sets it as text, never markup
