"""The strong machine player: sampled hidden hands, expected game wins per action, three levels.

How it decides (``docs/ai.md`` has the page-long version):

- **Betting** (every lance): sample the three hidden hands consistently with the view
  (:class:`~engine.ai.sampling.Beliefs`: declarations, known señas, and a Bayesian weight for every word
  the others spoke). :class:`~engine.ai.valuation.Valuation` resolves every lance of every sample at once
  (numpy look-ups), so the stones of the closed lances, of the lance being bet and of the lances still to
  come (as if en paso) are known. Each candidate action (paso, envido of a few sizes, órdago; quiero, no
  quiero, a few raises, órdago) is scored by the chance of winning the game after the hand: the final
  scores go through :func:`~engine.ai.tables.game_value`, an órdago counts as the lance's result, and each
  rival's answer to a bet follows its own answer model (:class:`~engine.ai.rivals.Callers`: a mixture of
  caller types, from loose to tight, weighed by how that rival answered earlier in the match with the
  hands it then showed), so fold equity and score (órdagos when behind, closing a game) come out of one
  number. A small calibrated bluff rate keeps the bets honest.
- **Mus and discards**: the exact expectation of :data:`~engine.ai.tables.HAND_VALUE` over every
  replacement draw from the unseen cards, for each set of cards to keep (:func:`~engine.ai.arrays.
  keep_values`, cached per hand and unseen cards); cut when the hand is worth more
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

import numpy as np

from engine.actions import Action, ActionKind
from engine.ai.arrays import HAND_VALUE_A, INDEX, Floats, Ints, keep_values
from engine.ai.rivals import Callers
from engine.ai.sampling import Beliefs, unseen_ranks
from engine.ai.tables import P5
from engine.ai.valuation import Valuation
from engine.betting import BetStatus
from engine.cards import CARD_RANK
from engine.hand_types import Phase
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
    learn: bool = True
    """Whether each rival's answer model learns from its shown answers earlier in the match."""


#: The levels by name.
LEVELS: dict[str, Level] = {
    "easy": Level(
        "easy", samples=24, evidence=False, noise=0.03, tilt=0.0, bluff=0.15, bluff_margin=0.02,
        mus_margin=0.3, mus_noise=1.2, discard_noise=1.0, catch=0.5, sena=0.5, ordago_margin=0.0, learn=False,
    ),
    "normal": Level(
        "normal", samples=60, evidence=True, noise=0.006, tilt=0.08, bluff=0.08, bluff_margin=0.006,
        mus_margin=0.6, mus_noise=0.4, discard_noise=0.2, catch=0.9, sena=0.8, ordago_margin=0.03,
    ),
    "hard": Level(
        "hard", samples=300, evidence=True, noise=0.0, tilt=0.08, bluff=0.06, bluff_margin=0.004,
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
        now = float(HAND_VALUE_A[INDEX[_code(view.cards)]])
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
        callers = Callers(view, learn=level.learn)
        beliefs = Beliefs(view, evidence=level.evidence, callers=callers)
        positions, weights = beliefs.draw(rng, level.samples)
        options = self._options(view, beliefs, positions, weights)
        if level.extra_samples and _close_call(options, betting.proposal):
            # A close call that may decide the game: look again with many more samples.
            more, more_weights = beliefs.draw(rng, level.extra_samples)
            options = self._options(
                view, beliefs, np.concatenate([positions, more]), np.concatenate([weights, more_weights])
            )
        return self._choose(options, rng, bluff=not beliefs.erratic)

    def _options(
        self, view: SeatView, beliefs: Beliefs, positions: Ints, weights: Floats
    ) -> list[tuple[Action, float]]:
        """Every candidate action with its value (the chance of winning the game)."""
        betting = view.betting
        assert betting is not None
        level = self.level
        table = Valuation(view, level.tilt, positions, weights, beliefs.callers, erratic=beliefs.erratic)
        legal = view.legal
        kinds = {a.kind for a in legal}
        options: list[tuple[Action, float]] = []
        # Every outcome the candidates below need, computed in one pass.
        if betting.status is BetStatus.OPENING:
            needed = [("paso", 0), ("ours", 1), ("accepted", 0), *(("accepted", s) for s in _OPEN_SIZES)]
            if beliefs.erratic:  # erratic rivals raise: each bet is answered again (erratic_answer)
                for s in (1, *_OPEN_SIZES):
                    total = min(s + _ERRATIC_RAISE, view.target)
                    needed += [("theirs", s), ("accepted", total), ("ours", total)]
        else:
            standing = 0 if betting.ordago else betting.proposal
            deje = betting.accepted_before or 1
            raised = [("accepted", standing + s) for s in _RAISE_SIZES]
            needed = [
                ("accepted", standing),
                ("theirs", deje),
                ("ours", standing or 1),
                ("accepted", 0),
                *raised,
            ]
        table.outcomes(needed)
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
            sizes = [size for size in _OPEN_SIZES if size in bets]
            candidates = [Action(ActionKind.ENVIDO, size) for size in sizes]
            if ActionKind.ORDAGO in kinds:
                candidates.append(Action(ActionKind.ORDAGO))
                sizes.append(0)
            if beliefs.erratic:
                values = [table.erratic_envido(s) if s else table.propose([0], 0)[0] for s in sizes]
            else:
                values = table.propose(sizes, 0)  # the bets and the órdago in one pass
            options.extend(zip(candidates, values, strict=True))
        else:
            standing = 0 if betting.ordago else betting.proposal
            options.append((Action(ActionKind.QUIERO), table.accept(standing)))
            options.append((Action(ActionKind.NO_QUIERO), table.refuse(standing)))
            # Against erratic rivals a raise only starts a raise war: accept, refuse or go all in.
            raises = set() if beliefs.erratic else {a.amount for a in legal if a.kind is ActionKind.SUBE}
            sizes = [size for size in _RAISE_SIZES if size in raises]
            candidates = [Action(ActionKind.SUBE, size) for size in sizes]
            totals = [standing + size for size in sizes]
            if ActionKind.ORDAGO in kinds:
                candidates.append(Action(ActionKind.ORDAGO))
                totals.append(0)
            options.extend(zip(candidates, table.propose(totals, standing), strict=True))
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


def _code(cards: Sequence[int]) -> int:
    return sum(P5[CARD_RANK[c]] for c in cards)


def _best_keep(
    cards: Sequence[int], unseen: list[int], noise: float, rng: random.Random
) -> tuple[float, tuple[int, ...]]:
    """The best cards to keep (1 to 4 thrown) and the expected hand value after the replacements."""
    # Cards sorted by rank: the same hand gives the same key whatever the order it was dealt in.
    ordered = sorted(cards, key=lambda c: (CARD_RANK[c], c))
    values = keep_values(tuple(CARD_RANK[c] for c in ordered), tuple(unseen))
    best_value = -1e9
    best_mask = 0
    for mask, value in enumerate(values):  # every subset but the whole hand
        noisy = value + rng.gauss(0.0, noise) if noise else value
        if noisy > best_value:
            best_value = noisy
            best_mask = mask
    return best_value, tuple(ordered[i] for i in range(len(ordered)) if best_mask >> i & 1)


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
