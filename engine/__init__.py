"""The rules of Mus a 8 reyes: pure, synchronous, deterministic.

Start from :class:`engine.match.Match` (a table's match) or :class:`engine.hand.Hand` (one hand); a seat
sees only :meth:`Hand.view_for`; records replay with :mod:`engine.record`. See ``docs/engine.md``.
"""

from engine.actions import Action, ActionKind, parse_action
from engine.betting import BetStatus
from engine.cards import Card, card_name, parse_card, parse_cards
from engine.errors import MusError
from engine.evaluation import Lance, ParesKind, compare, evaluate
from engine.hand import Hand
from engine.hand_types import HandConfig, Phase
from engine.match import Match, MatchConfig, amarracos
from engine.senas import Sena
from engine.views import SeatView

__all__ = [
    "Action",
    "ActionKind",
    "BetStatus",
    "Card",
    "Hand",
    "HandConfig",
    "Lance",
    "Match",
    "MatchConfig",
    "MusError",
    "ParesKind",
    "Phase",
    "SeatView",
    "Sena",
    "amarracos",
    "card_name",
    "compare",
    "evaluate",
    "parse_action",
    "parse_card",
    "parse_cards",
]
