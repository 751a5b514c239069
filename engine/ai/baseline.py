"""The baseline machine player: always legal, sensible, simple.

It cuts mus and bets with strong hands, answers by strength, keeps reyes (or ases for chica) when it
discards, reads its partner's señas, makes señas when the table plays with them, and tries to catch rivals'
señas. A stronger player replaces it behind the same :class:`~engine.ai.policy.Policy` interface.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.actions import Action, ActionKind
from engine.ai.strength import percentile
from engine.cards import CARD_RANK, CARD_VALUE, Card
from engine.evaluation import Lance, ParesKind, evaluate
from engine.hand_types import Phase
from engine.senas import Sena, true_senas
from engine.views import SeatView, SenaView

# Señas worth telling the partner, most useful first.
_SENA_PREFERENCE = (
    Sena.TREINTA_Y_UNA,
    Sena.DUPLES,
    Sena.TRES_REYES,
    Sena.MEDIAS,
    Sena.DOS_REYES,
    Sena.TRES_ASES,
    Sena.DOS_ASES,
    Sena.CIEGO,
)
# How much a partner's seña lifts our side's chances in each lance.
_SENA_LIFT: dict[Sena, dict[Lance, float]] = {
    Sena.DOS_REYES: {Lance.GRANDE: 0.15},
    Sena.TRES_REYES: {Lance.GRANDE: 0.3},
    Sena.DOS_ASES: {Lance.CHICA: 0.15},
    Sena.TRES_ASES: {Lance.CHICA: 0.3},
    Sena.MEDIAS: {Lance.PARES: 0.25},
    Sena.DUPLES: {Lance.PARES: 0.35},
    Sena.TREINTA_Y_UNA: {Lance.JUEGO: 0.4},
    Sena.CIEGO: {Lance.PUNTO: 0.05},
}


class BaselinePlayer:
    """A simple, sensible player that decides from its own view only."""

    name = "baseline"

    def __init__(self, *, aggression: float = 0.5) -> None:
        """``aggression`` in 0..1 shifts how readily it bets and accepts."""
        self.aggression = aggression

    # --- the Policy interface ------------------------------------------------------------------------

    def decide(self, view: SeatView, rng: random.Random) -> Action:
        """Choose one of ``view.legal`` (the seat must be on turn)."""
        if not view.legal:
            raise ValueError("decide() needs a view of a seat that must act")
        if view.phase is Phase.MUS:
            action = self._mus(view, rng)
        elif view.phase is Phase.DISCARD:
            action = Action(ActionKind.DISCARD, cards=self._discards(view.cards))
        else:
            action = self._bet(view, rng)
        return action if action in view.legal else _safest(view.legal)

    def choose_sena(self, view: SeatView, rng: random.Random) -> Sena | None:
        """A true seña worth making now, or ``None`` (one per hand, once the cards are final)."""
        if not view.senas_enabled or view.senas_left < 2 or len(view.cards) != 4:
            return None
        if view.phase in (Phase.MUS, Phase.DISCARD, Phase.OVER, Phase.COUNT):
            return None
        held = set(true_senas(view.cards))
        for sena in _SENA_PREFERENCE:
            if sena in held:
                return sena if rng.random() < 0.8 else None
        return None

    def wants_catch(self, view: SeatView, sena: SenaView, rng: random.Random) -> bool:
        """Whether to try catching a rival's seña (machines watch the table half the time)."""
        return sena.seat % 2 != view.team and sena.sena is None and rng.random() < 0.5

    # --- decisions -----------------------------------------------------------------------------------

    def _mus(self, view: SeatView, rng: random.Random) -> Action:
        ev = evaluate(view.cards)
        reyes = sum(1 for c in view.cards if CARD_RANK[c] == 7)
        strong = (
            ev.total in (31, 32)
            or ev.pares_kind in (ParesKind.MEDIAS, ParesKind.DUPLES)
            or (reyes >= 2 and ev.has_pares)
            or reyes >= 3
            or percentile(Lance.CHICA, view.cards) > 0.93
        )
        # Cutting is more tempting when the score is close to the target.
        near = max(view.scores) >= view.target - 8
        if strong or (near and rng.random() < 0.2) or rng.random() < 0.1:
            return Action(ActionKind.NO_MUS)
        return Action(ActionKind.MUS)

    @staticmethod
    def _discards(cards: Sequence[Card]) -> tuple[Card, ...]:
        """Keep reyes (or ases when going for chica) and pairs; throw the rest, at least one card."""
        ranks = [CARD_RANK[c] for c in cards]
        aces, kings = ranks.count(0), ranks.count(7)
        keep_rank = 0 if aces > kings else 7
        keep = {c for c in cards if CARD_RANK[c] == keep_rank or ranks.count(CARD_RANK[c]) >= 2}
        throw = tuple(c for c in cards if c not in keep)
        if throw:
            return throw
        # Everything is worth keeping: throw the single card that helps least.
        return (
            min(cards, key=lambda c: (CARD_RANK[c] == keep_rank, ranks.count(CARD_RANK[c]), CARD_VALUE[c])),
        )

    def _strength(self, view: SeatView, lance: Lance) -> float:
        """Rough chance that our side wins ``lance``: own percentile against two rivals, plus señas."""
        own = percentile(lance, view.cards)
        chance = own * own
        for sena in view.partner_senas():
            chance += _SENA_LIFT[sena].get(lance, 0.0)
        if view.mano == view.seat:
            chance += 0.03  # ties go to the mano
        return min(chance, 0.99)

    def _bet(self, view: SeatView, rng: random.Random) -> Action:
        betting = view.betting
        assert betting is not None
        lance = betting.lance
        s = self._strength(view, lance) + (self.aggression - 0.5) * 0.2 + rng.uniform(-0.05, 0.05)
        ours, theirs = view.scores[view.team], view.scores[1 - view.team]
        legal = view.legal
        kinds = {a.kind for a in legal}
        if ActionKind.PASO in kinds:  # opening
            if s > 0.93 and (theirs >= view.target - 10 or ours <= view.target - 25) and rng.random() < 0.3:
                return Action(ActionKind.ORDAGO)
            if s > 0.55:
                amount = 2 if s < 0.75 else (3 if s < 0.85 else 5)
                return _envido(legal, ActionKind.ENVIDO, amount)
            if s < 0.2 and rng.random() < 0.05:  # an occasional bluff
                return _envido(legal, ActionKind.ENVIDO, 2)
            return Action(ActionKind.PASO)
        # Answering a proposal.
        if betting.ordago:
            desperate = theirs >= view.target - 5 and ours < view.target - 15
            return (
                Action(ActionKind.QUIERO)
                if s > 0.8 or (desperate and s > 0.5)
                else Action(ActionKind.NO_QUIERO)
            )
        if s > 0.9 and betting.proposal < 10 and ActionKind.SUBE in kinds:
            return _envido(legal, ActionKind.SUBE, 2 if betting.proposal < 8 else 5)
        threshold = 0.45 + min(betting.proposal, 20) / 60
        return Action(ActionKind.QUIERO) if s > threshold else Action(ActionKind.NO_QUIERO)


def _envido(legal: Sequence[Action], kind: ActionKind, amount: int) -> Action:
    """The legal envido/raise of this kind closest to ``amount``."""
    options = [a for a in legal if a.kind is kind]
    if not options:
        return _safest(legal)
    return min(options, key=lambda a: abs(a.amount - amount))


def _safest(legal: Sequence[Action]) -> Action:
    """A conservative legal action: pass, refuse, or ask for mus, else the first one."""
    for kind in (ActionKind.PASO, ActionKind.NO_QUIERO, ActionKind.MUS):
        for action in legal:
            if action.kind is kind:
                return action
    return legal[0]
