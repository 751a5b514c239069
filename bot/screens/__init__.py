"""What people see: the table, the lobby, the private hand and the story of a hand, drawn as
platform-neutral views in the table's language.

* :mod:`bot.screens._render` — :class:`Renderer`: the lobby, the table message, showdowns, notices;
* :mod:`bot.screens._private_view` — a player's private hand and its buttons;
* :mod:`bot.screens._doors` — the buttons that lead from a chat to the web table;
* :mod:`bot.screens._story` — every word said in a hand, in order;
* :mod:`bot.screens._labels` — names of cards, lances, señas, seats and teams.
"""

from bot.screens._doors import OPEN_TABLE
from bot.screens._labels import (
    LANCE_NAMES,
    PARES_NAMES,
    PHASE_NAMES,
    SCORE,
    SENA_NAMES,
    action_label,
    button_label,
    card_label,
    cards_label,
    catch_label,
    hand_summary,
    header_line,
    labelled,
    named_score,
    seat_name,
    stones_label,
    team_names,
)
from bot.screens._private_view import picker_open
from bot.screens._render import Renderer
from bot.screens._story import count_lines, lance_lines, mus_lines, result_words, stake_line, stopped_line

__all__ = [
    "LANCE_NAMES",
    "OPEN_TABLE",
    "PARES_NAMES",
    "PHASE_NAMES",
    "SCORE",
    "SENA_NAMES",
    "Renderer",
    "action_label",
    "button_label",
    "card_label",
    "cards_label",
    "catch_label",
    "count_lines",
    "hand_summary",
    "header_line",
    "labelled",
    "lance_lines",
    "mus_lines",
    "named_score",
    "picker_open",
    "result_words",
    "seat_name",
    "stake_line",
    "stones_label",
    "stopped_line",
    "team_names",
]
