"""The strong machine player: sampled hidden hands, expected game wins per action, three levels.

How it decides (``docs/ai.md`` has the page-long version):

- **Betting** (every lance): sample the three hidden hands consistently with the view
  (:class:`~engine.ai.sampling.Beliefs`: declarations, known señas, and a Bayesian weight for every word
  the others spoke). In each sample every lance is resolved by table look-ups, so the stones of the closed
  lances, of the lance being bet and of the lances still to come (as if en paso) are known. Each candidate
  action (paso, envido of a few sizes, órdago; quiero, no quiero, a few raises, órdago) is scored by the
  chance of winning the game after the hand: the final scores go through :func:`~engine.ai.tables.
  game_value`, an órdago counts as the lance's result, and the rivals' answer to a bet follows a threshold
  model on their hand (they accept more with stronger hands), so fold equity and score (órdagos when
  behind, closing a game) come out of one number. A small calibrated bluff rate keeps the bets honest.
- **Mus and discards**: the exact expectation of :data:`~engine.ai.tables.HAND_VALUE` over every
  replacement draw from the unseen cards, for each set of cards to keep; cut when the hand is worth more
  now than the best discard is expected to bring, minus a margin.
- **Erratic rivals**: a rival that bets 11 stones or more at once far from the target (a random player
  does it in most hands) is read as erratic: its words no longer weigh the samples, it is expected to
  raise any bet and to refuse an órdago half the time, no raise wars are started, and the score is valued
  with :func:`~engine.ai.tables.erratic_value` (measured against such rivals).
- **Señas**: the most telling true seña once the cards are final; rivals' señas are always watched.
- **Levels**: ``easy`` (few samples, no reading of the others' words, noisy), ``normal``, ``hard``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.actions import Action, ActionKind
from engine.ai.sampling import Beliefs, Codes, accept_table, sigmoid, unseen_ranks
from engine.ai.tables import (
    HAND_VALUE,
    LANCE_INDEX,
    P5,
    ROW,
    ROW_LANCES,
    TEAM_WIN,
    draw_probabilities,
    erratic_value,
    game_value,
)
from engine.betting import BetStatus
from engine.cards import CARD_RANK
from engine.hand import Phase
from engine.senas import Sena, true_senas
from engine.views import SeatView, SenaView


@dataclass(frozen=True, slots=True)
class Level:
    """How hard a :class:`StrongPlayer` tries."""

    name: str
    samples: int
    """Hidden-hand samples per betting decision."""
    evidence: bool
    """Whether the others' words weigh the samples (Bayesian reading of the table)."""
    noise: float
    """Standard deviation of the noise added to each action's value (in game-win probability)."""
    tilt: float
    """How much stronger than its rivals it assumes to be (skews the game-value table)."""
    bluff: float
    """Chance of betting anyway when passing is best but a small bet costs little."""
    bluff_margin: float
    """How much game-win probability a bluff may cost at most."""
    mus_margin: float
    """Stones of expected improvement a mus round must bring for the player to ask for it."""
    mus_noise: float
    """Noise on the mus decision (stones)."""
    discard_noise: float
    """Noise on each discard option's value (stones)."""
    catch: float
    """Chance of watching for (catching) a rival's seña."""
    sena: float
    """Chance of making a useful true seña when one is possible."""
    ordago_margin: float
    """How much better (in game-win probability) an órdago must look than the best other action."""
    extra_samples: int = 0
    """More samples drawn for a close call that may decide the game (an órdago, a big bet)."""


#: The levels by name.
LEVELS: dict[str, Level] = {
    "easy": Level(
        "easy", samples=24, evidence=False, noise=0.03, tilt=0.0, bluff=0.15, bluff_margin=0.02,
        mus_margin=0.3, mus_noise=1.2, discard_noise=1.0, catch=0.5, sena=0.5, ordago_margin=0.0,
    ),
    "normal": Level(
        "normal", samples=60, evidence=True, noise=0.006, tilt=0.02, bluff=0.08, bluff_margin=0.006,
        mus_margin=0.6, mus_noise=0.4, discard_noise=0.2, catch=0.9, sena=0.8, ordago_margin=0.03,
    ),
    "hard": Level(
        "hard", samples=300, evidence=True, noise=0.0, tilt=0.04, bluff=0.06, bluff_margin=0.004,
        mus_margin=0.6, mus_noise=0.0, discard_noise=0.0, catch=1.0, sena=1.0, ordago_margin=0.05,
        extra_samples=600,
    ),
}  # fmt: skip

# Señas worth telling the partner, most telling first.
_SENA_ORDER = (
    Sena.TREINTA_Y_UNA,
    Sena.DUPLES,
    Sena.MEDIAS,
    Sena.TRES_REYES,
    Sena.DOS_REYES,
    Sena.TRES_ASES,
    Sena.DOS_ASES,
    Sena.CIEGO,
)
_OPEN_SIZES = (2, 4, 7, 10)
_RAISE_SIZES = (2, 5, 10)
_GRANDE, _CHICA, _PARES, _JUEGO, _PUNTO = range(5)
# A close call is two options within this much game-win probability; a bet of this many stones or more
# may decide the game.
_CLOSE = 0.04
_DECISIVE_BET = 10
# The typical total an erratic rival bets or raises to (uniform amounts up to the cap).
_ERRATIC_RAISE = 20


class StrongPlayer:
    """A machine player that samples the hidden hands and maximises its chance of winning the game."""

    def __init__(self, level: str | Level = "hard") -> None:
        """A player of ``level`` (``easy``, ``normal``, ``hard`` or a custom :class:`Level`)."""
        self.level = LEVELS[level] if isinstance(level, str) else level
        self.name = self.level.name

    # --- the Policy interface ------------------------------------------------------------------------

    def decide(self, view: SeatView, rng: random.Random) -> Action:
        """One of ``view.legal`` (the seat must be on turn)."""
        if not view.legal:
            raise ValueError("decide() needs a view of a seat that must act")
        if view.phase is Phase.MUS:
            action = self._mus(view, rng)
        elif view.phase is Phase.DISCARD:
            action = self._discard(view, rng)
        elif view.betting is not None:
            action = self._bet(view, rng)
        else:  # pragma: no cover - a seat on turn is always in mus, discard or a betting lance
            action = view.legal[0]
        return action if action in view.legal else _safest(view.legal)

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        """The most telling true seña not made yet, once the cards are final (betting phases only)."""
        if not view.senas_enabled or view.senas_left == 0 or len(view.cards) != 4:
            return None
        if view.phase in (Phase.MUS, Phase.DISCARD, Phase.COUNT, Phase.OVER):
            return None
        made = {s.sena for s in view.senas if s.seat == view.seat}
        held = set(true_senas(view.cards))
        for sena in _SENA_ORDER:
            if sena in held and sena not in made:
                return sena if rng.random() < self.level.sena else None
        return None

    def wants_catch(self, view: SeatView, sena: SenaView, rng: random.Random) -> bool:
        """Watch for a rival's seña (catching costs nothing, so the better levels always try)."""
        if sena.seat % 2 == view.team or sena.sena is not None:
            return False
        return rng.random() < self.level.catch

    # --- mus and discards ----------------------------------------------------------------------------

    def _mus(self, view: SeatView, rng: random.Random) -> Action:
        now = HAND_VALUE[_code(view.cards)]
        after, _ = _best_keep(view.cards, unseen_ranks(view), 0.0, rng)
        gain = after - now + rng.gauss(0.0, self.level.mus_noise) if self.level.mus_noise else after - now
        margin = self.level.mus_margin
        # Near the end of a game a good hand is worth cutting on: the rivals improve with mus too.
        if max(view.scores) >= view.target - 10:
            margin += 0.3
        kind = ActionKind.MUS if gain > margin else ActionKind.NO_MUS
        return Action(kind)

    def _discard(self, view: SeatView, rng: random.Random) -> Action:
        _, keep = _best_keep(view.cards, unseen_ranks(view), self.level.discard_noise, rng)
        throw = {c for c in view.cards if c not in keep}
        for action in view.legal:
            if action.kind is ActionKind.DISCARD and set(action.cards) == throw:
                return action
        return _safest(view.legal)

    # --- betting -------------------------------------------------------------------------------------

    def _bet(self, view: SeatView, rng: random.Random) -> Action:
        betting = view.betting
        assert betting is not None
        level = self.level
        beliefs = Beliefs(view, evidence=level.evidence)
        samples, weights = beliefs.sample(rng, level.samples)
        options = self._options(view, beliefs, samples, weights)
        if level.extra_samples and _close_call(options, betting.proposal):
            # A close call that may decide the game: look again with many more samples.
            more, more_weights = beliefs.sample(rng, level.extra_samples)
            options = self._options(view, beliefs, [*samples, *more], [*weights, *more_weights])
        return self._choose(options, rng, bluff=not beliefs.erratic)

    def _options(
        self, view: SeatView, beliefs: Beliefs, samples: Sequence[Codes], weights: Sequence[float]
    ) -> list[tuple[Action, float]]:
        """Every candidate action with its value (the chance of winning the game)."""
        betting = view.betting
        assert betting is not None
        level = self.level
        table = _Table(view, level.tilt, samples, weights, erratic=beliefs.erratic)
        legal = view.legal
        kinds = {a.kind for a in legal}
        options: list[tuple[Action, float]] = []
        if betting.status is BetStatus.OPENING:
            if beliefs.erratic:
                # Erratic rivals still to speak bet (big) after a paso, and raise over an envido.
                speakers = betting.participants
                after_me = speakers[speakers.index(view.seat) + 1 :]
                rival_after = any(s % 2 != view.team for s in after_me)
                paso = table.erratic_answer(1, _ERRATIC_RAISE) if rival_after else table.paso()
                options.append((Action(ActionKind.PASO), paso))
            else:
                options.append((Action(ActionKind.PASO), table.paso()))
            bets = {a.amount for a in legal if a.kind is ActionKind.ENVIDO}
            for size in _OPEN_SIZES:
                if size in bets:
                    value = table.erratic_envido(size) if beliefs.erratic else table.propose(size, 0)
                    options.append((Action(ActionKind.ENVIDO, size), value))
            if ActionKind.ORDAGO in kinds:
                options.append((Action(ActionKind.ORDAGO), table.propose(0, 0)))
        else:
            standing = 0 if betting.ordago else betting.proposal
            options.append((Action(ActionKind.QUIERO), table.accept(standing)))
            options.append((Action(ActionKind.NO_QUIERO), table.refuse(standing)))
            # Against erratic rivals a raise only starts a raise war: accept, refuse or go all in.
            raises = set() if beliefs.erratic else {a.amount for a in legal if a.kind is ActionKind.SUBE}
            for size in _RAISE_SIZES:
                if size in raises:
                    options.append((Action(ActionKind.SUBE, size), table.propose(standing + size, standing)))
            if ActionKind.ORDAGO in kinds:
                options.append((Action(ActionKind.ORDAGO), table.propose(0, standing)))
        if beliefs.erratic and table.later:
            # Erratic rivals will bet every later lance too: waiting keeps the best all-in of the hand.
            deje = betting.accepted_before or 1
            safe = table.them_score + deje < view.target
            options = [
                (a, max(u, table.waiting(u)))
                if a.kind is ActionKind.PASO or (a.kind is ActionKind.NO_QUIERO and safe)
                else (a, u)
                for a, u in options
            ]
        # The margin guards against misjudging how readily sensible rivals fold (erratic ones: at random).
        margin = 0.0 if beliefs.erratic else level.ordago_margin
        if margin:
            options = [(a, u - margin if a.kind is ActionKind.ORDAGO else u) for a, u in options]
        return options

    def _choose(self, options: list[tuple[Action, float]], rng: random.Random, *, bluff: bool) -> Action:
        """The best option after the level's noise, and now and then a bluff (never against rivals that
        never fold)."""
        level = self.level
        if level.noise:
            options = [(a, u + rng.gauss(0.0, level.noise)) for a, u in options]
        best, value = max(options, key=lambda o: o[1])
        if bluff and best.kind is ActionKind.PASO and level.bluff and rng.random() < level.bluff:
            small = [(a, u) for a, u in options if a.kind is ActionKind.ENVIDO and a.amount == 2]
            if small and small[0][1] >= value - level.bluff_margin:
                return small[0][0]
        return best


class _Table:
    """The samples of one betting decision, digested into what each candidate action needs."""

    def __init__(
        self,
        view: SeatView,
        tilt: float,
        samples: Sequence[Codes],
        weights: Sequence[float],
        *,
        erratic: bool,
    ) -> None:
        betting = view.betting
        assert betting is not None
        self.erratic = erratic
        self.view = view
        self.target = view.target
        self.values = erratic_value(view.target) if erratic else game_value(view.target, tilt)
        us = view.team
        self.us_score = view.scores[us]
        self.them_score = view.scores[1 - us]
        self.lance = LANCE_INDEX[betting.lance]
        self.participants = betting.participants
        me = view.seat
        partner = view.partner
        rivals = tuple(s for s in ((me + 1) % 4, (me + 3) % 4) if s in betting.participants)
        results = {LANCE_INDEX[r.lance]: r for r in view.results}
        order = [(view.mano + i) % 4 for i in range(4)]
        total_weight = sum(weights) or 1.0
        current = self.lance
        rows: list[tuple[float, int, int, int, int, int, int, int, Codes]] = []
        # Per later lance: weight of the samples where both sides hold it (an órdago is possible there),
        # and the weighted value of that órdago.
        later_bet = [0.0] * 5
        later_flip = [0.0] * 5
        for codes, weight in zip(samples, weights, strict=True):
            if weight <= 0.0:
                continue
            keyrows = [ROW[codes[s]] for s in order]
            has_juego = any(r[4] >= 31 for r in keyrows)
            lances = (_GRANDE, _CHICA, _PARES, _JUEGO if has_juego else _PUNTO)
            pre_a = pre_b = post_a = post_b = 0
            cur_w = cur_bu = cur_bt = 0
            after = False
            for li in lances:
                best = 0
                winner = -1
                for i in range(4):
                    k = keyrows[i][li]
                    if k > best:
                        best = k
                        winner = order[i]
                win = -1 if winner < 0 else (1 if winner % 2 == us else 0)
                if li == _PARES:
                    bu = ROW[codes[us]][5] + ROW[codes[us + 2]][5]
                    bt = ROW[codes[1 - us]][5] + ROW[codes[3 - us]][5]
                elif li == _JUEGO:
                    bu = ROW[codes[us]][6] + ROW[codes[us + 2]][6]
                    bt = ROW[codes[1 - us]][6] + ROW[codes[3 - us]][6]
                else:
                    bu = bt = 1
                if li == current:
                    cur_w, cur_bu, cur_bt = win, bu, bt
                    after = True
                    continue
                result = results.get(li)
                if result is None:
                    a, b = _payout(li, BetStatus.PASO, 0, None, win, bu, bt)
                else:
                    proposer = None if result.proposer_team is None else result.proposer_team == us
                    a, b = _payout(li, result.status, result.amount, proposer, win, bu, bt)
                if after:
                    post_a += a
                    post_b += b
                    # An órdago there, if both sides hold something in the lance (grande, chica and
                    # punto: always): refused only if every rival holder refuses, each half the time.
                    rival_holders = (ROW[codes[1 - us]][li] > 0) + (ROW[codes[3 - us]][li] > 0)
                    if rival_holders and (ROW[codes[us]][li] or ROW[codes[us + 2]][li]):
                        refusal = 0.5**rival_holders
                        later_bet[li] += weight
                        later_flip[li] += weight * (refusal * 0.95 + (1.0 - refusal) * (win == 1))
                else:
                    pre_a += a
                    pre_b += b
            rows.append((weight / total_weight, pre_a, pre_b, post_a, post_b, cur_w, cur_bu, cur_bt, codes))
        self.rows = rows
        self.rivals = rivals
        self.partner = partner
        self.partner_answers_after_me = False
        if betting.status is BetStatus.ANSWERING and betting.proposer is not None:
            answerers = [
                s
                for s in ((betting.proposer + 1) % 4, (betting.proposer + 3) % 4)
                if s in betting.participants
            ]
            if me in answerers and partner in answerers and answerers.index(partner) > answerers.index(me):
                self.partner_answers_after_me = True
        self.weight_sum = sum(r[0] for r in rows) or 1.0
        # Per later lance: the share of samples where it is bet, and the value of an órdago there.
        self.later = [
            (later_bet[li] / total_weight, later_flip[li] / total_weight) for li in range(5) if later_bet[li]
        ]

    def waiting(self, fallback: float) -> float:
        """Against erratic rivals: the value of keeping the best later lance for an órdago (where it is
        bet; elsewhere ``fallback``, the value of carrying on)."""
        return max((flip + (1.0 - share) * fallback for share, flip in self.later), default=fallback)

    def _final(self, a: int, b: int, row: tuple[float, int, int, int, int, int, int, int, Codes],
               ca: int, cb: int) -> float:  # fmt: skip
        """Game-win chance with scores a/b now, the current lance paying ca/cb at the count."""
        t = self.target
        a += row[1]
        b += row[2]
        if a >= t or b >= t:
            return 0.5 if a >= t and b >= t else (1.0 if a >= t else 0.0)
        a += ca
        b += cb
        if a >= t or b >= t:
            return 0.5 if a >= t and b >= t else (1.0 if a >= t else 0.0)
        a += row[3]
        b += row[4]
        if a >= t or b >= t:
            return 0.5 if a >= t and b >= t else (1.0 if a >= t else 0.0)
        return self.values[a][b]

    def _accepted(self, row: tuple[float, int, int, int, int, int, int, int, Codes], bet: int) -> float:
        """Value once a bet is accepted (``bet`` 0: an órdago, decided by the lance at once)."""
        win = row[5]
        if bet <= 0:
            return 1.0 if win == 1 else 0.0
        a, b = _payout(self.lance, BetStatus.ACCEPTED, bet, None, win, row[6], row[7])
        return self._final(self.us_score, self.them_score, row, a, b)

    def _refused(self, row: tuple[float, int, int, int, int, int, int, int, Codes], deje: int,
                 ours: bool) -> float:  # fmt: skip
        """Value once a proposal is refused: the deje now, then the proposing team wins the lance."""
        sa, sb = self.us_score, self.them_score
        if ours:
            sa += deje
            if sa >= self.target:
                return 1.0
        else:
            sb += deje
            if sb >= self.target:
                return 0.0
        a, b = _payout(self.lance, BetStatus.REFUSED, 0, ours, row[5], row[6], row[7])
        return self._final(sa, sb, row, a, b)

    def erratic_answer(self, deje: int, total: int) -> float:
        """Our best answer once erratic rivals bet ``total`` in all: refuse (they take ``deje``), accept,
        or órdago (refused only if every rival answerer refuses, each half the time)."""
        total = min(total, self.target)
        refusal = 0.5 ** len(self.rivals)
        fold = accept = ordago = 0.0
        for row in self.rows:
            w = row[0]
            fold += w * self._refused(row, deje, False)
            accept += w * self._accepted(row, total)
            ordago += w * ((1.0 - refusal) * (row[5] == 1) + refusal * self._refused(row, total, True))
        return max(fold, accept, ordago) / self.weight_sum

    def erratic_envido(self, bet: int) -> float:
        """Value of opening ``bet`` against erratic rivals: they mostly raise, then we answer."""
        raised = self.erratic_answer(bet, bet + _ERRATIC_RAISE)
        accepted = self.accept(bet)
        return 0.1 * accepted + 0.9 * raised

    def paso(self) -> float:
        """Value of passing (as if the lance ends en paso)."""
        total = 0.0
        for row in self.rows:
            a, b = _payout(self.lance, BetStatus.PASO, 0, None, row[5], row[6], row[7])
            total += row[0] * self._final(self.us_score, self.them_score, row, a, b)
        return total / self.weight_sum

    def propose(self, bet: int, standing: int) -> float:
        """Value of proposing ``bet`` stones in all (0: órdago) over a standing ``standing`` (0: none)."""
        deje = standing if standing > 0 else 1
        tables = [accept_table(self.lance, bet, standing > 0) for _ in self.rivals]
        # Erratic rivals answer at random: an órdago is refused only if every answerer refuses it.
        erratic_refusal = (0.5 if bet <= 0 else 0.05) ** len(self.rivals)
        total = 0.0
        for row in self.rows:
            codes = row[8]
            refuse = 1.0
            if self.erratic:
                refuse = erratic_refusal
            else:
                for rival, acc in zip(self.rivals, tables, strict=True):
                    refuse *= 1.0 - acc[codes[rival]]
            value = (1.0 - refuse) * self._accepted(row, bet) + refuse * self._refused(row, deje, True)
            total += row[0] * value
        return total / self.weight_sum

    def accept(self, standing: int) -> float:
        """Value of accepting the standing proposal (0: an órdago)."""
        total = 0.0
        for row in self.rows:
            total += row[0] * self._accepted(row, standing)
        return total / self.weight_sum

    def refuse(self, standing: int) -> float:
        """Value of refusing: the partner may still accept (then its hand decides), else the deje.

        The partner, who sees its own cards, is modelled as accepting when its hand alone gives the side
        a better chance (:data:`~engine.ai.tables.TEAM_WIN`) than the break-even of this bet.
        """
        view_betting = self.view.betting
        assert view_betting is not None
        deje = view_betting.accepted_before if view_betting.accepted_before > 0 else 1
        refused = [self._refused(row, deje, False) for row in self.rows]
        if not self.partner_answers_after_me:
            return sum(row[0] * r for row, r in zip(self.rows, refused, strict=True)) / self.weight_sum
        accepted = [self._accepted(row, standing) for row in self.rows]
        won = lost = won_w = lost_w = 0.0
        for row, value in zip(self.rows, accepted, strict=True):
            if row[5] == 1:
                won += row[0] * value
                won_w += row[0]
            else:
                lost += row[0] * value
                lost_w += row[0]
        mean_refused = sum(row[0] * r for row, r in zip(self.rows, refused, strict=True)) / self.weight_sum
        if won_w and lost_w and won / won_w > lost / lost_w:
            u_win, u_lose = won / won_w, lost / lost_w
            threshold = min(1.0, max(0.0, (mean_refused - u_lose) / (u_win - u_lose)))
        else:
            threshold = 1.0
        team_win = TEAM_WIN[ROW_LANCES[self.lance]]
        total = 0.0
        for row, acc, ref in zip(self.rows, accepted, refused, strict=True):
            p = sigmoid((team_win[row[8][self.partner]] - threshold) / 0.05)
            total += row[0] * (p * acc + (1.0 - p) * ref)
        return total / self.weight_sum


def _payout(lance: int, status: BetStatus, amount: int, proposer_us: bool | None, win: int, bu: int,
            bt: int) -> tuple[int, int]:  # fmt: skip
    """Stones (ours, theirs) a lance pays at the count (dejes apart)."""
    if lance <= _CHICA:
        if status is BetStatus.REFUSED:
            return 0, 0
        stake = amount if status is BetStatus.ACCEPTED else 1
        return (stake, 0) if win == 1 else (0, stake)
    if status is BetStatus.REFUSED:
        return (bu, 0) if proposer_us else (0, bt)
    extra = amount if status is BetStatus.ACCEPTED else 0
    if win == 1:
        return extra + bu, 0
    if win == 0:
        return 0, extra + bt
    return 0, 0


def _code(cards: Sequence[int]) -> int:
    return sum(P5[CARD_RANK[c]] for c in cards)


def _best_keep(
    cards: Sequence[int], unseen: list[int], noise: float, rng: random.Random
) -> tuple[float, tuple[int, ...]]:
    """The best cards to keep (1 to 4 thrown) and the expected hand value after the replacements."""
    n = len(cards)
    cache: dict[tuple[int, int], float] = {}
    best_value = -1e9
    best_keep: tuple[int, ...] = ()
    for mask in range(0, (1 << n) - 1):  # every subset but the whole hand
        keep = tuple(cards[i] for i in range(n) if mask >> i & 1)
        code = _code(keep)
        m = 4 - len(keep)
        key = (code, m)
        value = cache.get(key)
        if value is None:
            value = 0.0
            for draw, p in draw_probabilities(unseen, m):
                value += p * HAND_VALUE[code + draw]
            cache[key] = value
        noisy = value + rng.gauss(0.0, noise) if noise else value
        if noisy > best_value:
            best_value = noisy
            best_keep = keep
    return best_value, best_keep


def _close_call(options: Sequence[tuple[Action, float]], standing: int) -> bool:
    """Whether the two best options are near and one of them may decide the game (an órdago, or
    accepting an órdago or a big bet)."""
    ranked = sorted(options, key=lambda o: o[1], reverse=True)
    if len(ranked) < 2 or ranked[0][1] - ranked[1][1] > _CLOSE:
        return False
    big = standing == 0 or standing >= _DECISIVE_BET
    return any(a.kind is ActionKind.ORDAGO or (a.kind is ActionKind.QUIERO and big) for a, _ in ranked[:2])


def _safest(legal: Sequence[Action]) -> Action:
    """A conservative legal action: pass, refuse, or ask for mus, else the first one."""
    for kind in (ActionKind.PASO, ActionKind.NO_QUIERO, ActionKind.MUS):
        for action in legal:
            if action.kind is kind:
                return action
    return legal[0]


def easy() -> StrongPlayer:
    """The ``easy`` level: few samples, no reading of the others' words, noisy choices."""
    return StrongPlayer("easy")


def normal() -> StrongPlayer:
    """The ``normal`` level."""
    return StrongPlayer("normal")


def hard() -> StrongPlayer:
    """The ``hard`` level: the most samples, Bayesian reading of the table, no noise."""
    return StrongPlayer("hard")


__all__ = ["LEVELS", "Level", "StrongPlayer", "easy", "hard", "normal"]
