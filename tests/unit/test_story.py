"""What players read: the hand's story on the table, the stake, the count's reasons, where the match stands.

Hands are built from explicit cards (the deals of ``test_hand.py``), played through the engine, and rendered
by the real :class:`bot.screens._render.Renderer` in English; assertions are on the texts and buttons users
see.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import translator
from bot.kernel import HandPosition, Seat, TableOptions, TableState, TableStatus, parse_token, turn_stamp
from bot.screens import Renderer, hand_summary
from bot.screens._labels import pares_words
from engine.actions import parse_action
from engine.cards import FULL_DECK, parse_cards
from engine.hand import Hand
from engine.hand_types import Phase
from engine.match import Match, MatchConfig

# s0 R R C S (par, 40)   s1 A A 4 5 (par, 11)   s2 7 7 6 C (par, 30)   s3 R C S A (31)
DEAL_A = ["12o 12c 11o 10o", "1o 1c 4o 5o", "7o 7c 6o 11c", "3o 11e 10c 1e"]
# s0 R R R A (medias, 31)   s1 4 4 5 7 (par)   s2 C C S S (duples, 40)   s3 R C S A (31)
DEAL_D = ["12o 12c 12e 1o", "4o 4c 5o 7o", "11o 11c 10o 10c", "3o 11e 10e 1c"]


def table_with(match: Match, *, humans: Sequence[int] = (0, 1), mode: str = "match") -> TableState:
    names = ("Ane", "Brais", "Camille", "Dani")
    seats = [
        Seat(user=f"tg:{i + 1}", name=names[i], lang="en") if i in humans else Seat(machine=True, name="m")
        for i in range(4)
    ]
    return TableState(
        id="t0000001",
        chat="tg:-1",
        chat_title="Group",
        creator="tg:1",
        lang="en",
        status=TableStatus.PLAYING,
        options=TableOptions(mode=mode),  # type: ignore[arg-type]
        seats=seats,
        hand_no=1,
    )


def match_of(deal: Sequence[str], *, scores: tuple[int, int] = (0, 0), mano: int = 0) -> Match:
    match = Match(MatchConfig(), first_mano=mano)
    match.scores = list(scores)
    hands = [parse_cards(h.split()) for h in deal]
    used = {c for h in hands for c in h}
    deck = [c for c in FULL_DECK if c not in used]
    match.start_hand(
        Hand(mano=mano, hands=hands, deck=deck, scores=scores, config=match.config.hand_config())
    )
    return match


def play(match: Match, *moves: str) -> None:
    """Moves as ``"seat word args"``, e.g. ``"1 envido 2"``."""
    for move in moves:
        seat, word = move.split(" ", 1)
        match.act(int(seat), parse_action(word))


def all_paso(match: Match) -> None:
    hand = match.hand
    assert hand is not None
    while not hand.over:
        seat = hand.turn
        assert seat is not None
        play(match, f"{seat} {'no_mus' if hand.phase is Phase.MUS else 'paso'}")


def codes(buttons: Sequence[Sequence[object]]) -> list[str]:
    return [parse_token(b.token).code for row in buttons for b in row]  # type: ignore[attr-defined]


def test_every_lance_stays_on_the_table_with_its_words_and_result_until_the_count() -> None:
    match = match_of(DEAL_D)
    table = table_with(match)
    play(match, "0 mus", "1 mus", "2 mus", "3 mus")
    play(match, "0 discard 1o", "1 discard 7o", "2 discard 10c", "3 discard 1c")
    play(match, "0 no_mus")
    play(match, "0 envido 2", "1 sube 5", "2 quiero")  # grande: accepted at 7
    play(match, "0 paso", "1 paso", "2 paso", "3 paso")  # chica: en paso
    text = Renderer(table, match, 0.0).table_message().text
    lines = text.splitlines()
    assert "Mus: Ane: mus · Brais: mus · 🤖 Iker: mus · 🤖 Nerea: mus" in lines
    assert "Discards: Ane 1 · Brais 1 · 🤖 Iker 1 · 🤖 Nerea 1" in lines
    assert "Mus: Ane: no hay mus" in lines
    assert "✓ GRANDE: Ane: envido 2 · Brais: 5 more → 7 · 🤖 Iker: quiero → accepted: 7 at the count" in lines
    assert "✓ CHICA: en paso" in lines
    assert any(line.startswith("Pares: Ane yes") for line in lines)
    assert any(line.startswith("▶ PARES:") for line in lines)
    # Grande's story is still there after chica closed and pares opened.
    assert lines.index("✓ CHICA: en paso") > next(i for i, x in enumerate(lines) if x.startswith("✓ GRANDE"))


def test_the_stake_says_what_a_proposal_is_worth_and_what_refusing_costs() -> None:
    match = match_of(DEAL_A)
    table = table_with(match)
    play(match, "0 no_mus", "0 envido 2")
    text = Renderer(table, match, 0.0).table_message().text
    assert "At stake: 2 — if refused, Ane and 🤖 Iker take 1" in text
    play(match, "1 sube 5")
    message = Renderer(table, match, 0.0).table_message()
    assert "At stake: 7 — if refused, Brais and 🤖 Nerea take 2" in message.text
    assert "🤖 Iker's turn" in message.text and codes(message.buttons) == ["cards"]  # a machine's turn
    play(match, "2 ordago")
    assert "At stake: the game (órdago) — if refused, Ane and 🤖 Iker take 7" in (
        Renderer(table, match, 0.0).table_message().text
    )


def test_turn_buttons_offer_2_5_10_and_more_and_the_picker_every_amount_privately() -> None:
    match = match_of(DEAL_A)
    table = table_with(match)
    play(match, "0 no_mus")
    message = Renderer(table, match, 0.0, turn_seconds=60).table_message()
    assert "Ane's turn (⏱ 60 s)" in message.text
    assert codes(message.buttons) == ["paso", "env2", "env5", "env10", "more", "ordago", "cards"]
    assert Renderer(table, match, 0.0).private_hand(0).buttons == ()  # no picker until asked
    table.seats[0].picker = turn_stamp(1, len(match.hand.log))  # type: ignore[union-attr]
    private = Renderer(table, match, 0.0).private_hand(0)
    assert private is not None
    assert codes(private.buttons) == [f"env{n}" for n in range(2, 41)]  # any amount up to the cap
    assert all(len(row) <= 8 for row in private.buttons)
    play(match, "0 envido 3")
    message = Renderer(table, match, 0.0).table_message()
    labels = [b.label for row in message.buttons for b in row]
    assert "2 more → 5" in labels and "5 more → 8" in labels  # raises say the total
    private = Renderer(table, match, 0.0).private_hand(0)
    assert private is not None and private.buttons == ()  # the picker was for a turn that has passed


def test_the_count_explains_each_line_and_where_it_stopped_at_the_target() -> None:
    match = match_of(DEAL_A, scores=(37, 38))
    table = table_with(match)
    all_paso(match)
    showdown = Renderer(table, match, 0.0).showdown().text
    lines = showdown.splitlines()
    assert "Ane: R🪙 R🍷 C🪙 S🪙 (par of kings · juego 40)" in lines  # no "(punto 16; 16)" repetition
    assert "  GRANDE: en paso 1 = 1 → Ane and 🤖 Iker" in lines
    assert "  CHICA: en paso 1 = 1 → Brais and 🤖 Nerea" in lines
    assert "  PARES: en paso + Ane par: 1 + 🤖 Iker par: 1 = 2 → Ane and 🤖 Iker" in lines
    assert (
        "  JUEGO: en paso + 🤖 Nerea juego 31: 3 = 3 → Brais and 🤖 Nerea"
        " (not counted: the game was already won)" in lines
    )
    assert "The count stopped at 40: Ane and 🤖 Iker won the game before the later lances." in lines
    assert "Score: Ane and 🤖 Iker 40 – 39 Brais and 🤖 Nerea" in lines  # each pair named


def test_the_score_never_reads_past_the_target() -> None:
    match = match_of(DEAL_D, scores=(35, 10))
    table = table_with(match)
    play(match, "0 no_mus", "0 paso", "1 paso", "2 paso", "3 paso", "0 paso", "1 paso", "2 paso", "3 paso")
    play(match, "0 envido 30", "1 quiero")  # pares: s0 medias + s2 duples win 30 + 5
    all_paso(match)
    hand = match.hand
    assert hand is not None and hand.scores[0] > 40  # the engine pays the whole lance…
    renderer = Renderer(table, match, 0.0)
    text = renderer.showdown().text
    assert "Score: Ane and 🤖 Iker 40 – " in text  # …players read 40
    assert str(hand.scores[0]) not in text.split("Score:")[1]
    assert "  PARES: accepted 30 + Ane medias: 2 + 🤖 Iker duples: 3 = 35 → Ane and 🤖 Iker" in text
    table_text = renderer.table_message().text
    assert "Ane and 🤖 Iker · 8 amarracos (40)" in table_text


def test_an_accepted_ordago_says_who_won_the_game_and_with_which_hand() -> None:
    match = match_of(DEAL_A)
    table = table_with(match)
    play(match, "0 no_mus", "0 ordago", "1 quiero")
    text = Renderer(table, match, 0.0).showdown().text
    assert "ÓRDAGO in GRANDE accepted: Ane and 🤖 Iker win the game with the best GRANDE (Ane)." in text
    assert "Score:" not in text  # not a meaningless "0 – 0"
    assert "🏆 Ane and 🤖 Iker win the game!" in text


def test_a_finished_hand_has_no_buttons_and_a_finished_match_points_to_newgame() -> None:
    match = match_of(DEAL_A)
    table = table_with(match, mode="game")
    match.config = MatchConfig(games_per_vaca=1, vacas_per_match=1)
    play(match, "0 no_mus", "0 ordago", "1 quiero")
    renderer = Renderer(table, match, 0.0)
    assert renderer.table_message().buttons == ()  # no "My cards" on a finished hand
    private = renderer.private_hand(0)
    assert private is not None and private.buttons == () and "Hand over." in private.text
    assert match.over
    assert "The match is over. Type /newgame for another one." in renderer.showdown().text


def test_the_header_says_where_the_match_stands_and_the_hand_number() -> None:
    match = match_of(DEAL_A)
    table = table_with(match)
    table.hand_no = 13
    table.position = HandPosition(game=2, vaca=1, games=(1, 0))
    header = Renderer(table, match, 0.0).table_message().text.splitlines()[0]
    assert header == "🂠 Mus · Hand 13 · Game 2 of 3 (1–0) · Vaca 1 of 3 · to 40"
    single = table_with(match, mode="game")
    assert Renderer(single, match, 0.0).table_message().text.startswith("🂠 Mus · Hand 1 · single game to 40")


def test_no_catch_button_for_a_sena_no_person_can_catch() -> None:
    match = match_of(DEAL_D)
    match.config = MatchConfig(senas=True)
    match.hand.config = match.config.hand_config()  # type: ignore[union-attr]
    solo = table_with(match, humans=(0,))  # Ane alone with machines: her rivals are machines
    match.make_sena(0, "medias", 10.0)
    message = Renderer(solo, match, 10.5).table_message()
    assert not any(c.startswith("catch") for c in codes(message.buttons))
    group = table_with(match, humans=(0, 1))  # Brais is Ane's rival: he may catch her seña
    message = Renderer(group, match, 10.5).table_message()
    assert "catch0" in codes(message.buttons)
    late = Renderer(group, match, 20.0).table_message()  # the window closed
    assert not any(c.startswith("catch") for c in codes(late.buttons)) and "⚡" not in late.text


def test_pares_say_which_ranks() -> None:
    en = translator("en")
    said = {
        "12o 12c 7o 4e": "par of kings",
        "1o 2c 1e 5o": "medias of aces",
        "12o 3c 7o 7c": "duples of kings and sevens",
        "10o 10c 10e 10b": "duples of jacks",
        "12o 7c 5e 1b": "no pares",
    }
    for cards, words in said.items():
        assert pares_words(en, parse_cards(cards.split())) == words
    es = translator("es")
    assert hand_summary(es, parse_cards(["12o", "3c", "7o", "7c"])) == "duples de reyes y sietes · juego 34"
