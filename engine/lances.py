"""The lances after the cut: their order, who takes part in each, and what each pays at the count (or who
wins an accepted órdago). Plain functions of the seats' evaluations and the closed lances; the betting
within a lance is :mod:`engine.betting`, and paying the stones (stopping once a team reaches the target) is
the phase machine's part, :class:`engine.hand.Hand`.

RULES.md decisions encoded here:

- the lances come in order: grande, chica, pares, then juego, or punto when nobody has juego; the count
  scores them in the same order (:data:`COUNT_ORDER`);
- everybody takes part in grande, chica and punto; only the seats holding pares (juego) in pares (juego);
- a refused grande or chica pays nothing more at the count: the deje, paid at once, was the whole payment;
- a refused pares, juego or punto goes to the proposing team, which also takes its bonuses;
- otherwise the best hand in the lance wins it, ties going to the seat nearest the mano; a lance nobody holds
  (nobody has pares, or juego) pays nothing, and a lance without betting pays its holders' team;
- grande and chica pay the accepted bet, or 1 stone en paso;
- pares and juego pay the accepted bet (if any) plus a bonus for each player of the winning team holding
  them (par 1, medias 2, duples 3; juego 31 pays 3, any other 2: :class:`engine.evaluation.HandEval`); an
  en paso pares or juego pays the bonuses only;
- punto pays the accepted bet (if any) plus 1 stone;
- an accepted órdago goes to the team of the best hand in its lance among the lance's participants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.betting import BetStatus
from engine.evaluation import HandEval, Lance, best_seat
from engine.hand_types import CountLine, LanceResult, OrdagoResult

#: The order in which the count scores the lances (juego and punto never both close in one hand).
COUNT_ORDER = (Lance.GRANDE, Lance.CHICA, Lance.PARES, Lance.JUEGO, Lance.PUNTO)


def participants(lance: Lance, evals: Sequence[HandEval], order: Sequence[int]) -> tuple[int, ...]:
    """The seats taking part in ``lance``, in speaking ``order``."""
    if lance is Lance.PARES:
        return tuple(s for s in order if evals[s].has_pares)
    if lance is Lance.JUEGO:
        return tuple(s for s in order if evals[s].has_juego)
    return tuple(order)


def next_lance(lance: Lance, evals: Sequence[HandEval]) -> Lance | None:
    """The lance after ``lance`` (``None`` after the last: time for the count)."""
    if lance is Lance.GRANDE:
        return Lance.CHICA
    if lance is Lance.CHICA:
        return Lance.PARES
    if lance is Lance.PARES:
        return Lance.JUEGO if any(ev.has_juego for ev in evals) else Lance.PUNTO
    return None


def count_lines(
    results: Mapping[Lance, LanceResult], evals: Sequence[HandEval], mano: int
) -> list[CountLine]:
    """The lines of the count in order: each closed lance that pays at least one stone."""
    lines: list[CountLine] = []
    for lance in COUNT_ORDER:
        result = results.get(lance)
        if result is None:
            continue
        line = award(result, evals, mano)
        if line is None or line.stones == 0:
            continue
        lines.append(line)
    return lines


def award(result: LanceResult, evals: Sequence[HandEval], mano: int) -> CountLine | None:
    """What a closed lance pays at the count, and to whom (``None`` when it pays nothing)."""
    lance = result.lance
    if result.status is BetStatus.REFUSED:
        if lance in (Lance.GRANDE, Lance.CHICA):
            return None  # the deje was the whole payment
        team = result.proposer_team
        assert team is not None
    else:
        seat = best_seat([ev.key(lance) for ev in evals], mano)
        if seat is None:
            return None  # nobody holds pares (or juego)
        team = seat % 2
    bet = result.amount
    if lance in (Lance.GRANDE, Lance.CHICA):
        return CountLine(lance, team, bet or 1, 0)
    if lance is Lance.PUNTO:
        return CountLine(lance, team, bet, 1)
    mates = (team, team + 2)
    if lance is Lance.PARES:
        bonuses = tuple((s, evals[s].pares_bonus) for s in mates if evals[s].pares_bonus)
    else:
        bonuses = tuple((s, evals[s].juego_bonus) for s in mates if evals[s].juego_bonus)
    return CountLine(lance, team, bet, sum(b for _, b in bonuses), bonuses)


def ordago_result(lance: Lance, evals: Sequence[HandEval], mano: int, seats: Sequence[int]) -> OrdagoResult:
    """Who won an órdago accepted in ``lance``: the best hand among the lance's participants ``seats``."""
    seat = best_seat([ev.key(lance) for ev in evals], mano, seats)
    assert seat is not None
    return OrdagoResult(lance, seat % 2, seat)
