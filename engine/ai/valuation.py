"""The value of each betting action over the samples of one decision, vectorized.

:class:`Valuation` resolves every lance of every sampled deal at once (table look-ups on arrays of code
positions): who wins each lance, the bonuses, the stones of the lances already closed, and those of the
lances still to come as if en paso. Each candidate action's value is then the weighted mean, over the
samples, of the chance of winning the game after the hand (:func:`~engine.ai.tables.game_value`, or
:func:`~engine.ai.tables.erratic_value` against erratic rivals); an accepted órdago is decided by the lance.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.ai.arrays import KEYS, TEAM_WIN_A, Floats, Ints
from engine.ai.rivals import Callers
from engine.ai.tables import LANCE_INDEX, erratic_value, game_value
from engine.betting import BetStatus
from engine.views import SeatView

_GRANDE, _CHICA, _PARES, _JUEGO, _PUNTO = range(5)
# 0.5 ** n for n = 0, 1, 2 rival holders.
_HALVES: Floats = np.array([1.0, 0.5, 0.25])
# The partner's answer: a smooth threshold on its hand's team win chance.
_PARTNER_WIDTH = 0.05


def _payout(
    lance: int, status: BetStatus, amount: int, proposer_us: bool | None, win: Ints, bu: Ints, bt: Ints
) -> tuple[Ints, Ints]:
    """Stones (ours, theirs) a lance pays at the count in each sample (dejes apart)."""
    if lance <= _CHICA:
        if status is BetStatus.REFUSED:
            return np.zeros_like(win), np.zeros_like(win)
        stake = amount if status is BetStatus.ACCEPTED else 1
        ours = win == 1
        return np.where(ours, stake, 0), np.where(ours, 0, stake)
    if status is BetStatus.REFUSED:
        return (bu, np.zeros_like(win)) if proposer_us else (np.zeros_like(win), bt)
    extra = amount if status is BetStatus.ACCEPTED else 0
    return np.where(win == 1, extra + bu, 0), np.where(win == 0, extra + bt, 0)


class Valuation:
    """The samples of one betting decision, digested into what each candidate action needs."""

    def __init__(
        self,
        view: SeatView,
        tilt: float,
        positions: Ints,
        weights: Floats,
        callers: Callers,
        *,
        erratic: bool,
    ) -> None:
        """Resolve every lance of every sample (``positions``: ``(n, 4)`` code positions per seat)."""
        betting = view.betting
        assert betting is not None
        self.erratic = erratic
        self.view = view
        self.target = view.target
        self.flat: Floats = _value_array(view.target, 0.0 if erratic else tilt, erratic)
        """The game-value table, flattened: ``flat[a * (target + 1) + b]``."""
        us = view.team
        self.us_score = view.scores[us]
        self.them_score = view.scores[1 - us]
        self.lance = current = LANCE_INDEX[betting.lance]
        me, partner = view.seat, view.partner
        self.partner = partner
        self.rivals = tuple(s for s in ((me + 1) % 4, (me + 3) % 4) if s in betting.participants)
        n = len(positions)
        self.positions = positions
        total = weights.sum()
        # Every sample impossible (the hands would need more cards of a rank than are unseen: only in
        # rare spots late in the deck): fall back on the independent draws.
        self.w: Floats = weights / total if total > 0 else np.full(n, 1.0 / max(n, 1))
        order = [(view.mano + i) % 4 for i in range(4)]
        rows = KEYS[positions]  # (n, seat, 7): the five lance keys, the pares and juego bonuses
        k0, k1, k2, k3 = (rows[:, seat, :5] for seat in order)  # in speaking order
        best = np.maximum(np.maximum(k0, k1), np.maximum(k2, k3))
        # the best key's team, ties to the seat nearest the mano (the teams alternate in speaking order)
        first = int(order[0] % 2 == us)
        ours = np.where((k0 == best) | ((k1 != best) & (k2 == best)), first, 1 - first)
        win_all = np.where(best > 0, ours, -1)  # (n, 5): 1 ours, 0 theirs, -1 nobody holds
        has_juego = best[:, _PUNTO] >= 31
        self._speaking = (order, (k0, k1, k2, k3))
        # Stones each side takes in each lance as if en paso (1, or the side's bonuses in pares and juego);
        # juego and punto share the last place (each sample plays the one its hands call for).
        bonus_us = rows[:, us, 5:] + rows[:, us + 2, 5:]
        bonus_them = rows[:, 1 - us, 5:] + rows[:, 3 - us, 5:]
        stake_us = np.ones((n, 5), dtype=np.int64)
        stake_them = np.ones((n, 5), dtype=np.int64)
        stake_us[:, _PARES:_PUNTO] = bonus_us
        stake_them[:, _PARES:_PUNTO] = bonus_them
        played = np.ones((n, 5), dtype=np.int64)
        played[:, _JUEGO] = has_juego
        played[:, _PUNTO] = ~has_juego
        paid_us = stake_us * ((win_all == 1) * played)
        paid_them = stake_them * ((win_all == 0) * played)
        for result in view.results:  # the closed lances as they were bet
            li = LANCE_INDEX[result.lance]
            if li == current or result.status not in (BetStatus.ACCEPTED, BetStatus.REFUSED):
                continue
            proposer = None if result.proposer_team is None else result.proposer_team == us
            a, b = _payout(
                li, result.status, result.amount, proposer, win_all[:, li], stake_us[:, li], stake_them[:, li]
            )
            paid_us[:, li], paid_them[:, li] = a * played[:, li], b * played[:, li]
        last = min(current, _JUEGO)  # where the current lance stands in the order of the count
        before = np.array([min(li, _JUEGO) < last for li in range(5)], dtype=np.int64)
        after = np.array([min(li, _JUEGO) > last for li in range(5)], dtype=np.int64)
        self.pre = (paid_us @ before, paid_them @ before)
        self.post = (paid_us @ after, paid_them @ after)
        self.end = (self.pre[0] + self.post[0], self.pre[1] + self.post[1])
        """Stones of the other lances, before and after the current one."""
        self.end_max = (int(self.end[0].max(initial=0)), int(self.end[1].max(initial=0)))
        self.win = win_all[:, current]
        self.bonus = (stake_us[:, current], stake_them[:, current])
        self.later: list[tuple[float, float]] = []
        """Against erratic rivals, per later lance: the share of samples where it is bet, the value of an
        órdago there."""
        if erratic:
            self.later = self._later(us, win_all, played, after)
        self.callers = callers
        self._outcomes: dict[tuple[str, int], Floats] = {}
        self.partner_answers_after_me = False
        if betting.status is BetStatus.ANSWERING and betting.proposer is not None:
            answerers = [
                s
                for s in ((betting.proposer + 1) % 4, (betting.proposer + 3) % 4)
                if s in betting.participants
            ]
            if me in answerers and partner in answerers and answerers.index(partner) > answerers.index(me):
                self.partner_answers_after_me = True

    def _later(self, us: int, win_all: Ints, played: Ints, after: Ints) -> list[tuple[float, float]]:
        """Per later lance where both sides hold something in some sample (an órdago is possible there):
        the share of those samples, and the value of that órdago (refused only if every rival holder
        refuses, each half the time)."""
        order, keys = self._speaking
        rival_holders = sum(
            (k > 0).astype(np.int64) for seat, k in zip(order, keys, strict=True) if seat % 2 != us
        )
        ours_hold = np.zeros_like(win_all, dtype=bool)
        for seat, k in zip(order, keys, strict=True):
            if seat % 2 == us:
                ours_hold |= k > 0
        bet = (rival_holders > 0) & ours_hold & (played * after > 0)
        refusal = _HALVES[rival_holders]
        flip = refusal * 0.95 + (1.0 - refusal) * (win_all == 1)
        shares = (self.w @ bet).tolist()
        flips = (self.w @ (bet * flip)).tolist()
        return [(shares[li], flips[li]) for li in range(5) if shares[li] > 0]

    def waiting(self, fallback: float) -> float:
        """Against erratic rivals: the value of keeping the best later lance for an órdago (where it is
        bet; elsewhere ``fallback``, the value of carrying on)."""
        return max((flip + (1.0 - share) * fallback for share, flip in self.later), default=fallback)

    def _final(self, a: Ints | int, b: Ints | int, ca: Ints, cb: Ints) -> Floats:
        """Game-win chance per sample with scores a/b now, the current lance paying ca/cb at the count
        (``a``/``b`` may be columns and ``ca``/``cb`` rows of several candidates: one row each)."""
        t = self.target
        flat = self.flat
        side = t + 1
        end_a, end_b = self.end
        if _top(a) + self.end_max[0] + _top(ca) < t and _top(b) + self.end_max[1] + _top(cb) < t:
            # nobody reaches the target in this hand: one look-up
            final: Floats = flat[(a + ca + end_a) * side + (b + cb + end_b)]
            return final
        a1, b1 = a + self.pre[0], b + self.pre[1]
        a2, b2 = a1 + ca, b1 + cb
        a3, b3 = a2 + self.post[0], b2 + self.post[1]
        value = flat[np.minimum(a3, t) * side + np.minimum(b3, t)]
        value = np.where((a2 >= t) | (b2 >= t), flat[np.minimum(a2, t) * side + np.minimum(b2, t)], value)
        done: Floats = np.where(
            (a1 >= t) | (b1 >= t), flat[np.minimum(a1, t) * side + np.minimum(b1, t)], value
        )
        return done

    def outcomes(self, keys: list[tuple[str, int]]) -> Floats:
        """Value per sample of several outcomes of the lance, shape ``(len(keys), n)``: ``("accepted", bet)``
        (``bet`` 0: an accepted órdago, decided by the lance at once), ``("ours", deje)`` and ``("theirs",
        deje)`` (our or their proposal refused: that side takes the deje now and wins the lance), ``("paso",
        0)``. Every outcome not computed yet for this decision is computed in one pass and remembered."""
        missing = [key for key in dict.fromkeys(keys) if key not in self._outcomes]
        if missing:
            self._compute(missing)
        return np.array([self._outcomes[key] for key in keys])

    def _compute(self, keys: list[tuple[str, int]]) -> None:
        won = self.win == 1
        n = len(self.w)
        target = self.target
        rows: list[tuple[str, int]] = []
        starts: list[tuple[int, int]] = []
        paid: list[tuple[Ints, Ints]] = []
        bets = [amount for kind, amount in keys if kind == "accepted" and amount > 0]
        if bets:  # every accepted bet at once
            amounts = np.array(bets, dtype=np.int64)[:, None]
            if self.lance <= _CHICA:
                ca, cb = np.where(won, amounts, 0), np.where(won, 0, amounts)
            else:
                ca = np.where(won, amounts + self.bonus[0], 0)
                cb = np.where(self.win == 0, amounts + self.bonus[1], 0)
            rows.extend(("accepted", bet) for bet in bets)
            starts.extend((self.us_score, self.them_score) for _ in bets)
            paid.extend(zip(ca, cb, strict=True))
        for kind, amount in keys:
            if kind == "accepted":
                if amount <= 0:
                    self._outcomes[(kind, amount)] = won.astype(np.float64)
                continue
            a, b = self.us_score, self.them_score
            if kind == "ours":
                a += amount
                if a >= target:
                    self._outcomes[(kind, amount)] = np.ones(n)
                    continue
                paid.append(_payout(self.lance, BetStatus.REFUSED, 0, True, self.win, *self.bonus))
            elif kind == "theirs":
                b += amount
                if b >= target:
                    self._outcomes[(kind, amount)] = np.zeros(n)
                    continue
                paid.append(_payout(self.lance, BetStatus.REFUSED, 0, False, self.win, *self.bonus))
            else:
                paid.append(_payout(self.lance, BetStatus.PASO, 0, None, self.win, *self.bonus))
            rows.append((kind, amount))
            starts.append((a, b))
        if not rows:
            return
        columns = np.array(starts, dtype=np.int64)
        values = self._final(
            columns[:, :1], columns[:, 1:], np.array([p[0] for p in paid]), np.array([p[1] for p in paid])
        )
        for key, row in zip(rows, values, strict=True):
            self._outcomes[key] = row

    def _accepted(self, bets: list[int]) -> Floats:
        """Value per candidate and sample once a bet is accepted (``0``: an órdago): ``(len(bets), n)``."""
        return self.outcomes([("accepted", bet) for bet in bets])

    def _refused(self, dejes: list[int], ours: bool) -> Floats:
        """Value per candidate and sample once a proposal is refused: the deje now, then the proposing team
        wins the lance: shape ``(len(dejes), n)``."""
        return self.outcomes([("ours" if ours else "theirs", deje) for deje in dejes])

    def erratic_answer(self, deje: int, total: int) -> float:
        """Our best answer once erratic rivals bet ``total`` in all: refuse (they take ``deje``), accept,
        or órdago (refused only if every rival answerer refuses, each half the time)."""
        total = min(total, self.target)
        refusal = 0.5 ** len(self.rivals)
        w = self.w
        fold = float(w @ self._refused([deje], False)[0])
        accept = float(w @ self._accepted([total])[0])
        ordago = (1.0 - refusal) * float(w @ (self.win == 1)) + refusal * float(
            w @ self._refused([total], True)[0]
        )
        return max(fold, accept, ordago)

    def erratic_envido(self, bet: int) -> float:
        """Value of opening ``bet`` against erratic rivals: they mostly raise, then we answer."""
        return 0.1 * self.accept(bet) + 0.9 * self.erratic_answer(bet, bet + 20)

    def paso(self) -> float:
        """Value of passing (as if the lance ends en paso)."""
        return float(self.w @ self.outcomes([("paso", 0)])[0])

    def refusal(self, bets: list[int], standing: int) -> Floats:
        """Per candidate and sample, the chance that every rival answerer refuses a proposal (0: órdago)."""
        n = len(self.w)
        if self.erratic:
            return np.array([[(0.5 if bet <= 0 else 0.05) ** len(self.rivals)] for bet in bets]) * np.ones(n)
        refuse: Floats | None = None
        for rival in self.rivals:
            accepts = self.callers.acceptances(rival, self.lance, bets, standing > 0)
            alone = 1.0 - accepts[:, self.positions[:, rival]]
            refuse = alone if refuse is None else refuse * alone
        return np.ones((len(bets), n)) if refuse is None else refuse

    def propose(self, bets: list[int], standing: int) -> list[float]:
        """Value of proposing each of ``bets`` stones in all (0: órdago) over a standing ``standing``
        (0: none)."""
        if not bets:
            return []
        deje = standing if standing > 0 else 1
        refuse = self.refusal(bets, standing)
        refused = self._refused([deje], True)
        value = (1.0 - refuse) * self._accepted(bets) + refuse * refused
        result: list[float] = (value @ self.w).tolist()
        return result

    def accept(self, standing: int) -> float:
        """Value of accepting the standing proposal (0: an órdago)."""
        return float(self.w @ self._accepted([standing])[0])

    def refuse(self, standing: int) -> float:
        """Value of refusing: the partner may still accept (then its hand decides), else the deje.

        The partner, who sees its own cards, is modelled as accepting when its hand alone gives the side
        a better chance (:data:`~engine.ai.tables.TEAM_WIN`) than the break-even of this bet.
        """
        betting = self.view.betting
        assert betting is not None
        deje = betting.accepted_before if betting.accepted_before > 0 else 1
        refused = self._refused([deje], False)[0]
        mean_refused = float(self.w @ refused)
        if not self.partner_answers_after_me:
            return mean_refused
        accepted = self._accepted([standing])[0]
        won = self.win == 1
        won_w = float(self.w @ won)
        lost_w = 1.0 - won_w
        threshold = 1.0
        if won_w > 0 and lost_w > 0:
            u_win = float(self.w @ (accepted * won)) / won_w
            u_lose = float(self.w @ (accepted * ~won)) / lost_w
            if u_win > u_lose:
                threshold = min(1.0, max(0.0, (mean_refused - u_lose) / (u_win - u_lose)))
        team_win = TEAM_WIN_A[self.lance][self.positions[:, self.partner]]
        p = 1.0 / (1.0 + np.exp(-np.clip((team_win - threshold) / _PARTNER_WIDTH, -30, 30)))
        return float(self.w @ (p * accepted + (1.0 - p) * refused))


def _top(x: Ints | int) -> int:
    """The largest of some stones (a number, or an array of them)."""
    return x if isinstance(x, int) else int(np.max(x))


def _columns(paid: Ints, columns: list[int]) -> Ints:
    """The sum of some columns of ``paid`` (zeros if none)."""
    total = np.zeros(len(paid), dtype=np.int64)
    for column in columns:
        total = total + paid[:, column]
    return total


@lru_cache(maxsize=32)
def _value_array(target: int, tilt: float, erratic: bool) -> Floats:
    """The game-value table (:func:`~engine.ai.tables.game_value` or :func:`~engine.ai.tables.
    erratic_value`) as an array."""
    table = erratic_value(target) if erratic else game_value(target, tilt)
    array: Floats = np.array(table, dtype=np.float64).ravel()
    array.flags.writeable = False
    return array


__all__ = ["Valuation"]
