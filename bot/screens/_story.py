"""The story of a hand in words: the mus rounds, every word of every lance, what is at stake, the count.

Kept until the count: a lance that closed stays on the table with its words and its result, so a player who
had no turn left still reads the whole hand. Everything here reads a :class:`~engine.views.SeatView`'s
public parts (and, for the count, the hands shown at the end): never a hidden card.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator
from bot.i18n.markers import N_
from bot.kernel import TableState
from bot.screens._labels import LANCE_NAMES, PARES_NAMES, action_label, labelled, seat_name, team_names
from engine.betting import BetStatus
from engine.evaluation import Lance, evaluate
from engine.hand_types import CountLine, LanceResult, Phase
from engine.views import PublicAction, SeatView

_ = N_

#: Lances in the order they are played (juego or punto, never both).
LANCE_ORDER = (Lance.GRANDE, Lance.CHICA, Lance.PARES, Lance.JUEGO, Lance.PUNTO)

MUS_LINE = _("Mus: {words}")
DISCARD_LINE = _("Discards: {words}")
DISCARD_WORD = _("{name} {n}")
DECLARED_PARES = _("Pares")
DECLARED_JUEGO = _("Juego")
RESULT_PASO = _("en paso")
RESULT_ACCEPTED = _("accepted: {n} at the count")
RESULT_REFUSED = _("refused: {team} take {n}")
RESULT_ORDAGO = _("ÓRDAGO accepted!")
RESULT_NO_BET = _("no betting (one side only)")
STAKE = _("At stake: {n} — if refused, {team} take {deje}")
STAKE_ORDAGO = _("At stake: the game (órdago) — if refused, {team} take {deje}")
COUNT_PASO = _("en paso {n}")
COUNT_ACCEPTED = _("accepted {n}")
COUNT_REFUSED_AT_ONCE = _("refused: {team} took {n} at once")
# Translators: the deje, the stones a refused bet paid its bettors when it was refused (Spanish "deje";
# Galician "deixe"); a language whose players have no word for it says what happened.
COUNT_REFUSED = _("refused ({n} paid at once)")
COUNT_NO_BET = _("no betting")
COUNT_BONUS = _("{name} {what}: {n}")
COUNT_PUNTO_BONUS = _("punto +1")
COUNT_TOTAL = _("{parts} = {n} → {team}")
COUNT_NOBODY_PARES = _("nobody has pares: nothing to count")
COUNT_NOT_COUNTED = _("not counted: the game was already won")
COUNT_STOPPED = _("The count stopped at {target}: {team} won the game before the later lances.")
ORDAGO_WON = _("ÓRDAGO in {lance} accepted: {team} win the game with the best {lance} ({name}).")


def _said(t: Translator, table: TableState, action: PublicAction) -> str:
    return labelled(
        t, seat_name(table, action.seat), action_label(t, action.kind, action.amount, action.total)
    )


def mus_lines(t: Translator, table: TableState, actions: Sequence[PublicAction]) -> list[str]:
    """One line per mus round (every word, the cut included) and one per round of discards."""
    lines: list[str] = []
    words: list[str] = []
    discards: list[str] = []
    for action in actions:
        if action.phase is Phase.MUS:
            if discards:
                lines.append(t.format(DISCARD_LINE, words=" · ".join(discards)))
                discards = []
            words.append(_said(t, table, action))
        elif action.phase is Phase.DISCARD:
            if words:
                lines.append(t.format(MUS_LINE, words=" · ".join(words)))
                words = []
            discards.append(t.format(DISCARD_WORD, name=seat_name(table, action.seat), n=action.count))
    if words:
        lines.append(t.format(MUS_LINE, words=" · ".join(words)))
    if discards:
        lines.append(t.format(DISCARD_LINE, words=" · ".join(discards)))
    return lines


def declared_line(t: Translator, table: TableState, label: str, flags: Sequence[bool]) -> str:
    """``Pares: Ane yes · Iker no · …``: the automatic declarations before pares or juego."""
    yes, no = t.gettext(_("yes")), t.gettext(_("no"))
    parts = [f"{seat_name(table, s)} {yes if flags[s] else no}" for s in range(4)]
    return labelled(t, t.gettext(label), " · ".join(parts))


def result_words(t: Translator, table: TableState, result: LanceResult) -> str:
    """How the betting of a closed lance ended, in words."""
    status = result.status
    if status is BetStatus.PASO:
        return t.gettext(RESULT_PASO)
    if status is BetStatus.ACCEPTED:
        return t.format(RESULT_ACCEPTED, n=result.amount)
    if status is BetStatus.REFUSED:
        assert result.proposer_team is not None
        return t.format(RESULT_REFUSED, team=team_names(table, result.proposer_team), n=result.deje)
    if status is BetStatus.ORDAGO:
        return t.gettext(RESULT_ORDAGO)
    return t.gettext(RESULT_NO_BET)


def lance_lines(t: Translator, table: TableState, view: SeatView) -> list[str]:
    """Every lance reached so far: its declarations, every word said in it and, once closed, its result."""
    lines: list[str] = []
    results = {r.lance: r for r in view.results}
    current = view.lance
    for lance in LANCE_ORDER:
        result = results.get(lance)
        if result is None and lance is not current:
            continue
        if lance is Lance.PARES and view.pares_declared is not None:
            lines.append(declared_line(t, table, DECLARED_PARES, view.pares_declared))
        if lance is Lance.JUEGO and view.juego_declared is not None:
            lines.append(declared_line(t, table, DECLARED_JUEGO, view.juego_declared))
        said = [_said(t, table, a) for a in view.actions if a.phase.value == lance.value]
        name = t.gettext(LANCE_NAMES[lance])
        if result is None:
            lines.append("▶ " + labelled(t, name, " · ".join(said) if said else "…"))
            continue
        if result.status in (BetStatus.PASO, BetStatus.NO_BET) or not said:
            lines.append("✓ " + labelled(t, name, result_words(t, table, result)))
        else:
            lines.append("✓ " + labelled(t, name, f"{' · '.join(said)} → {result_words(t, table, result)}"))
    return lines


def stake_line(t: Translator, table: TableState, view: SeatView) -> str | None:
    """What the standing proposal is worth, and what refusing it costs (``None`` when nothing stands)."""
    b = view.betting
    if b is None or b.status is not BetStatus.ANSWERING or b.proposer is None:
        return None
    team = team_names(table, b.proposer % 2)
    deje = b.deje_if_refused
    if b.ordago:
        return t.format(STAKE_ORDAGO, team=team, deje=deje)
    return t.format(STAKE, n=b.proposal, team=team, deje=deje)


# --- the count -------------------------------------------------------------------------------------------


def count_lines(t: Translator, table: TableState, view: SeatView) -> list[str]:
    """The count lance by lance, each line saying why it pays what it pays (after the cards are shown)."""
    if view.ordago is not None:
        return [_ordago_line(t, table, view)]
    lines: list[str] = []
    results = {r.lance: r for r in view.results}
    paid = {line.lance: line for line in view.count}
    unpaid = {line.lance: line for line in view.uncounted}
    for lance in LANCE_ORDER:
        result = results.get(lance)
        if result is None:
            continue
        name = t.gettext(LANCE_NAMES[lance])
        if result.status is BetStatus.REFUSED and lance in (Lance.GRANDE, Lance.CHICA):
            assert result.proposer_team is not None
            team = team_names(table, result.proposer_team)
            lines.append("  " + labelled(t, name, t.format(COUNT_REFUSED_AT_ONCE, team=team, n=result.deje)))
            continue
        line = paid.get(lance) or unpaid.get(lance)
        if line is None:
            if lance is Lance.PARES:
                lines.append("  " + labelled(t, name, t.gettext(COUNT_NOBODY_PARES)))
            continue
        text = "  " + labelled(t, name, _count_reason(t, table, view, result, line))
        if lance in unpaid:
            text += f" ({t.gettext(COUNT_NOT_COUNTED)})"
        lines.append(text)
    return lines


def _count_reason(
    t: Translator, table: TableState, view: SeatView, result: LanceResult, line: CountLine
) -> str:
    parts: list[str] = []
    status = result.status
    if status is BetStatus.PASO:
        if line.lance in (Lance.GRANDE, Lance.CHICA):
            parts.append(t.format(COUNT_PASO, n=line.bet))
        else:
            parts.append(t.gettext(RESULT_PASO))
    elif status is BetStatus.ACCEPTED:
        parts.append(t.format(COUNT_ACCEPTED, n=line.bet))
    elif status is BetStatus.REFUSED:
        parts.append(t.format(COUNT_REFUSED, n=result.deje))
    else:
        parts.append(t.gettext(COUNT_NO_BET))
        if line.lance in (Lance.GRANDE, Lance.CHICA):
            parts[-1] += f" {line.bet}"
    for seat, stones in line.bonuses:
        parts.append(
            t.format(
                COUNT_BONUS,
                name=seat_name(table, seat),
                what=_bonus_kind(t, view, line.lance, seat),
                n=stones,
            )
        )
    if line.lance is Lance.PUNTO:
        parts.append(t.gettext(COUNT_PUNTO_BONUS))
    return t.format(COUNT_TOTAL, parts=" + ".join(parts), n=line.stones, team=team_names(table, line.team))


def _bonus_kind(t: Translator, view: SeatView, lance: Lance, seat: int) -> str:
    """``duples`` / ``medias`` / ``par`` for pares, the juego's total (``31``) for juego."""
    if view.shown is None:
        return ""
    ev = evaluate(view.shown[seat])
    if lance is Lance.PARES:
        return t.gettext(PARES_NAMES[ev.pares_kind])
    return t.format(N_("juego {n}"), n=ev.total)


def _ordago_line(t: Translator, table: TableState, view: SeatView) -> str:
    ordago = view.ordago
    assert ordago is not None
    lance = t.gettext(LANCE_NAMES[ordago.lance])
    team = team_names(table, ordago.team)
    return t.format(ORDAGO_WON, lance=lance, team=team, name=seat_name(table, ordago.seat))


def stopped_line(t: Translator, table: TableState, view: SeatView) -> str | None:
    """Where the count stopped at the target, and who won there (``None`` when every lance was counted)."""
    if not view.uncounted or view.winner is None:
        return None
    return t.format(COUNT_STOPPED, target=view.target, team=team_names(table, view.winner))
