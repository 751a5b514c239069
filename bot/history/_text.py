"""Kept hands in words: a one-hand summary, the full step-by-step story, and a match as files.

The story uses the live table's wording (:mod:`bot.screens._story`, :mod:`bot.screens._labels`, the same
msgids as
:mod:`bot.screens._render`): the deal, every mus round and discard, every word of every lance with its result,
the hands at the end, the count with its reasons and the score. A kept hand is over, so all four hands are
shown — the deal and the end — whatever the table showed at the time.

The JSON export is the conformance format (``mus-conformance/1``): one ``hand`` case per kept hand with its
``expect``, so ``python -m engine.replay`` replays it to the same scores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.history._model import KeptHand, LanceSummary
from bot.i18n import Translator, translator
from bot.i18n.markers import N_
from bot.kernel import TableState
from bot.screens import (
    LANCE_NAMES,
    SCORE,
    cards_label,
    count_lines,
    hand_summary,
    labelled,
    lance_lines,
    mus_lines,
    named_score,
    result_words,
    seat_name,
    stopped_line,
    team_names,
)
from engine.betting import BetStatus
from engine.cards import parse_cards
from engine.evaluation import Lance
from engine.hand_types import LanceResult
from engine.replay import FORMAT as CONFORMANCE_FORMAT
from engine.replay import run_hand

_ = N_

# Translators: one lance of a hand in the history: how its betting ended, who took how many stones.
SUMMARY_LANCE = _("{how} → {team} +{n}")
SUMMARY_LANCE_NOBODY = _("{how} → nobody")
SUMMARY_LANCE_ORDAGO = _("{how} → {team}")
# Translators: the first line of a hand in the history: its number and the score after it.
SUMMARY_HAND = _("Hand {n} · {team_a} {a}–{b} {team_b}")
STORY_TITLE = _("📜 Hand {n} · {title}")
STORY_MANO = _("Mano: {name}")
STORY_DEALT = _("Dealt:")
STORY_SHOWN = _("At the end:")
STORY_SCORE_BEFORE = _("Score before the hand: {team_a} {a} – {b} {team_b}")
EXPORT_TITLE = _("Mus · {title} · {hands} hands kept")


def _team(table: TableState, team: int | None) -> str:
    return "" if team is None else team_names(table, team)


def _how(t: Translator, table: TableState, lance: LanceSummary) -> str:
    """How the lance's betting ended, in the live table's words."""
    result = LanceResult(
        lance=Lance(lance.lance),
        status=BetStatus(lance.status),
        participants=(),
        amount=lance.amount if lance.status == BetStatus.ACCEPTED.value else 0,
        deje=lance.amount if lance.status == BetStatus.REFUSED.value else 0,
        proposer_team=lance.proposer_team,
    )
    return result_words(t, table, result)


def summary_lines(t: Translator, kept: KeptHand) -> list[str]:
    """A hand in two lines: its number and the score after it (and what it won), then each lance."""
    table = kept.table_state(t.lang)
    target = kept.record.target
    head = named_score(t, table, SUMMARY_HAND, kept.scores, target, n=kept.hand_no)
    won = _results(t, table, kept)
    parts = []
    for lance in kept.lances:
        name = t.gettext(LANCE_NAMES[Lance(lance.lance)])
        how = _how(t, table, lance)
        refused_only = lance.status == BetStatus.REFUSED.value and sum(lance.stones) == lance.amount
        if lance.team is None:
            text = t.format(SUMMARY_LANCE_NOBODY, how=how)
        elif refused_only:  # "refused: X take 1" says it all
            text = how
        elif lance.status == BetStatus.ORDAGO.value:
            text = t.format(SUMMARY_LANCE_ORDAGO, how=how, team=_team(table, lance.team))
        else:
            text = t.format(SUMMARY_LANCE, how=how, team=_team(table, lance.team), n=sum(lance.stones))
        parts.append(labelled(t, name, text))
    return [" ".join([head, *won]), "  " + " · ".join(parts)]


def result_lines(t: Translator, kept: KeptHand) -> list[str]:
    """What the hand won, one line each, if anything: the game, the vaca, the match."""
    return _results(t, kept.table_state(t.lang), kept)


def _results(t: Translator, table: TableState, kept: KeptHand) -> list[str]:
    lines = []
    if kept.game_winner is not None:
        lines.append(t.format(N_("🏆 {team} win the game!"), team=team_names(table, kept.game_winner)))
    if kept.vaca_winner is not None and kept.options.mode == "match":
        lines.append(t.format(N_("🐄 {team} win the vaca!"), team=team_names(table, kept.vaca_winner)))
    if kept.match_winner is not None and kept.options.mode == "match":
        lines.append(t.format(N_("🎉 {team} win the match!"), team=team_names(table, kept.match_winner)))
    return lines


def _header(t: Translator, kept: KeptHand) -> str:
    """Where the hand stood in the match (the live table's header)."""
    pos, target = kept.position, kept.record.target
    if kept.options.mode == "game":
        return t.format(N_("🂠 Mus · Hand {n} · single game to {target}"), n=kept.hand_no, target=target)
    return t.format(
        N_("🂠 Mus · Hand {n} · Game {game} of {games} ({a}–{b}) · Vaca {vaca} of {vacas} · to {target}"),
        n=kept.hand_no,
        game=pos.game,
        games=3,  # a table's match is always 2 vacas of 2 games (bot.table._lobby.start): at most 3 of each
        a=pos.games[0],
        b=pos.games[1],
        vaca=pos.vaca,
        vacas=3,
        target=target,
    )


def story_lines(t: Translator, kept: KeptHand) -> list[str]:
    """The whole hand, step by step, in the live table's words (every hand shown: the hand is over)."""
    table = kept.table_state(t.lang)
    hand = kept.replayed()
    view = hand.view_for(0)  # over: what it holds beyond seat 0's own cards is public now
    target = kept.record.target
    start = kept.record.scores
    lines = [_header(t, kept), named_score(t, table, STORY_SCORE_BEFORE, start, target)]
    lines.append(t.format(STORY_MANO, name=seat_name(table, hand.mano)))
    lines.append(t.gettext(STORY_DEALT))
    for seat in hand.speaking_order():
        cards = parse_cards(kept.record.hands[seat])
        lines.append("  " + labelled(t, seat_name(table, seat), cards_label(cards)))
    lines.extend(mus_lines(t, table, view.actions))
    lines.extend(lance_lines(t, table, view))
    lines.append(t.gettext(STORY_SHOWN))
    for seat in hand.speaking_order():
        cards_text = f"{cards_label(hand.hands[seat])} ({hand_summary(t, hand.hands[seat])})"
        lines.append("  " + labelled(t, seat_name(table, seat), cards_text))
    lines.extend(count_lines(t, table, view))
    stopped = stopped_line(t, table, view)
    if stopped is not None:
        lines.append(stopped)
    if hand.ordago is None:
        lines.append(named_score(t, table, SCORE, hand.scores, target))
    lines.extend(_results(t, table, kept))
    return lines


def story_text(lang: str, kept: KeptHand, title: str) -> str:
    """One hand's story as a message: a title line, then :func:`story_lines`."""
    t = translator(lang)
    return "\n".join([t.format(STORY_TITLE, n=kept.hand_no, title=title), *story_lines(t, kept)])


def match_title(kept: Sequence[KeptHand]) -> str:
    """What a match is called in its files and stories: its chat's title and its table id."""
    first = kept[0]
    return f"{first.chat_title} ({first.table})" if first.chat_title else first.table


def export_json(kept: Sequence[KeptHand]) -> str:
    """A match as a conformance file: one ``hand`` case per kept hand, each with the result it replays to."""
    cases = []
    for hand in kept:
        case: dict[str, object] = {"id": f"{hand.table}-{hand.hand_no}", "type": "hand"}
        case.update(hand.record.model_dump(mode="json"))
        case["hands"] = {str(seat): cards for seat, cards in hand.record.hands.items()}
        case["expect"] = run_hand(dict(case))
        cases.append(case)
    document = {
        "format": CONFORMANCE_FORMAT,
        "match": {
            "table": kept[0].table if kept else "",
            "chat_title": kept[0].chat_title if kept else "",
            "players": [s.name or "machine" for s in kept[0].seats] if kept else [],
        },
        "cases": cases,
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def export_text(lang: str, kept: Sequence[KeptHand]) -> str:
    """A match as readable text: every kept hand's story, one after the other."""
    t = translator(lang)
    title = match_title(kept) if kept else ""
    blocks = [t.format(EXPORT_TITLE, title=title, hands=len(kept))]
    for hand in kept:
        blocks.append("\n".join(story_lines(t, hand)))
    return "\n\n".join(blocks) + "\n"
