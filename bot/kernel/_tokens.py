"""Action tokens: the compact strings carried by buttons (≤ 64 bytes, the strictest chat platform's limit).

A token is ``{table}.{stamp}.{code}``, or ``-.C.lang_xx`` for the language picker (of the chat it is in):

- ``table``: the table id (8 characters, ``[a-z0-9]``);
- ``stamp``: what the button was drawn for, so that a stale button is recognised — ``L`` for the lobby,
  ``{hand}`` for buttons valid the whole hand (cards, discard picks, catches), ``{hand}-{step}`` for turn
  actions (valid only while no other action has been taken) and for señas (``step`` counts the señas the
  seat made in the hand, so a doubled press makes one seña);
- ``code``: the action (see :data:`CODE_RE`).

Lesson buttons (``/learn``, :mod:`bot.lessons`) act on the presser's own progress, not on a table:
``-.T{lesson}-{step}-{tag}.a{n}`` answers with choice ``n`` of that lesson's step, ``-.T….go{n}`` opens
lesson ``n``; ``tag`` is four characters of the learner's key (:func:`lesson_tag`), so that a press by
someone else is told apart from a stale one.

Tokens are validated, never trusted: :func:`parse_token` accepts only this grammar and the service checks
every part against the stored table.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot.i18n.languages import LANGUAGES
from engine.actions import Action, ActionKind
from engine.cards import Card, card_name, parse_card
from engine.errors import CardError
from engine.senas import Sena

MAX_TOKEN_BYTES = 64
TABLE_ID_RE = re.compile(r"^[a-z0-9]{8}$")
_TOKEN_RE = re.compile(
    r"^(?P<table>[a-z0-9]{8})\.(?P<stamp>L|\d{1,5}|\d{1,5}-\d{1,4})\.(?P<code>[a-z0-9_]{1,24})$"
    r"|^(?P<chat>-)\.C\.(?P<chat_code>lang_[a-z]{2})$"
    r"|^(?P<learn>-)\.(?P<learn_stamp>T\d{1,2}-\d{1,2}-[a-z0-9]{4})\.(?P<learn_code>a[0-5]|go\d{1,2})$"
)
#: The ``table`` of a chat-scoped token (the language picker): it acts on the chat it was pressed in.
CHAT_SCOPE = "-"

#: Every code: lobby (seat N, leave, start, cancel, option), turn actions, discards, señas, catches, cards.
CODE_RE = re.compile(
    r"^(?:"
    r"seat[0-3]|leave|start|cancel|o_senas|o_target|o_mode|o_level"  # lobby
    r"|mus|nomus|paso|quiero|noquiero|ordago|env\d{1,2}|sube\d{1,2}|more"  # turn actions, amount picker
    r"|pick_(?:1[0-2]|[1-7])[ocbe]|discard"  # discard selection: the card itself, never a position
    r"|sena_[a-z_]{4,16}|catch\d{1,2}|cards|web"  # señas, catches, own cards, one's link to the web table
    r"|hist|histc|hexp"  # a kept hand (to the presser, in the chat), the match's files (bot.app)
    r")$"
)


# Turn actions without an amount, by code (envido and sube carry theirs: ``env2``, ``sube5``).
_SIMPLE_CODES: dict[str, ActionKind] = {
    "mus": ActionKind.MUS,
    "nomus": ActionKind.NO_MUS,
    "paso": ActionKind.PASO,
    "quiero": ActionKind.QUIERO,
    "noquiero": ActionKind.NO_QUIERO,
    "ordago": ActionKind.ORDAGO,
}
_CODE_OF_KIND = {kind: code for code, kind in _SIMPLE_CODES.items()}


def action_code(action: Action) -> str | None:
    """The token code of a turn action (``None`` for a discard: discards are picked card by card)."""
    if action.kind in _CODE_OF_KIND:
        return _CODE_OF_KIND[action.kind]
    if action.kind is ActionKind.ENVIDO:
        return f"env{action.amount}"
    if action.kind is ActionKind.SUBE:
        return f"sube{action.amount}"
    return None


def action_of_code(code: str) -> Action | None:
    """The turn action a token code stands for, or ``None`` (the engine still judges its legality)."""
    if code in _SIMPLE_CODES:
        return Action(_SIMPLE_CODES[code])
    if code.startswith("env") and code[3:].isdigit():
        return Action(ActionKind.ENVIDO, int(code[3:]))
    if code.startswith("sube") and code[4:].isdigit():
        return Action(ActionKind.SUBE, int(code[4:]))
    return None


class TokenError(ValueError):
    """A token that does not follow the grammar."""


# --- what a button asks for, parsed once ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TakeSeat:
    """Sit at seat ``seat`` (lobby)."""

    seat: int


@dataclass(frozen=True, slots=True)
class LobbyAction:
    """Leave one's seat, start the game, or cancel the table (lobby)."""

    name: Literal["leave", "start", "cancel"]


@dataclass(frozen=True, slots=True)
class ChangeOption:
    """Toggle or cycle a lobby option."""

    option: Literal["senas", "target", "mode", "level"]


@dataclass(frozen=True, slots=True)
class TurnAction:
    """A turn action (mus, paso, envido N, quiero…): the engine judges it."""

    action: Action


@dataclass(frozen=True, slots=True)
class OpenPicker:
    """ "More…": every legal amount in the player's private hand for this turn."""


@dataclass(frozen=True, slots=True)
class PickCard:
    """Toggle ``card`` for discarding."""

    card: Card


@dataclass(frozen=True, slots=True)
class ConfirmDiscard:
    """Confirm the picked cards."""


@dataclass(frozen=True, slots=True)
class MakeSena:
    """Make seña ``sena``."""

    sena: Sena


@dataclass(frozen=True, slots=True)
class CatchSena:
    """Press the ⚡ of the hand's seña number ``index``."""

    index: int


@dataclass(frozen=True, slots=True)
class ShowCards:
    """ "My cards": one's own cards, to oneself."""


@dataclass(frozen=True, slots=True)
class OpenWeb:
    """ "🃏 Table": one's own signed link to the table's web page (a platform without a Mini App)."""


@dataclass(frozen=True, slots=True)
class SetLanguage:
    """Set the language of the chat where the button was pressed."""

    lang: str


@dataclass(frozen=True, slots=True)
class OpenHand:
    """Open the kept hand the stamp names (history): to the presser alone, or (``here``) in the chat."""

    here: bool


@dataclass(frozen=True, slots=True)
class ExportMatch:
    """Send the match's kept hands as files (history)."""


@dataclass(frozen=True, slots=True)
class LessonChoice:
    """Choose answer ``index`` at the lesson step the stamp names (:mod:`bot.lessons`)."""

    index: int


@dataclass(frozen=True, slots=True)
class OpenLesson:
    """Open lesson ``number`` (the "next lesson" button)."""

    number: int


#: A lesson button's command: it acts on the presser's lesson progress, not on a table.
LessonCommand = LessonChoice | OpenLesson

#: A history button's command: it acts on what the history store keeps, not on a live table.
HistoryCommand = OpenHand | ExportMatch

#: What a button asks for: every code of the grammar maps to exactly one of these.
Command = (
    TakeSeat
    | LobbyAction
    | ChangeOption
    | TurnAction
    | OpenPicker
    | PickCard
    | ConfirmDiscard
    | MakeSena
    | CatchSena
    | ShowCards
    | OpenWeb
    | SetLanguage
    | OpenHand
    | ExportMatch
    | LessonChoice
    | OpenLesson
)


#: The commands a code names with nothing more to read from it.
_PLAIN_CODES: dict[str, Callable[[], Command]]
_PLAIN_CODES = {"more": OpenPicker, "discard": ConfirmDiscard, "cards": ShowCards, "web": OpenWeb}


def command_of(code: str) -> Command:
    """The command a code stands for; :class:`TokenError` for a code no button of ours carries."""
    action = action_of_code(code)
    if action is not None:
        return TurnAction(action)
    if code.startswith("seat") and code[4:].isdigit():
        return TakeSeat(int(code[4:]))
    if code in ("leave", "start", "cancel"):
        return LobbyAction(code)  # type: ignore[arg-type]
    if code in ("o_senas", "o_target", "o_mode", "o_level"):
        return ChangeOption(code.removeprefix("o_"))  # type: ignore[arg-type]
    if code in _PLAIN_CODES:
        return _PLAIN_CODES[code]()
    if code in ("hist", "histc"):
        return OpenHand(here=code == "histc")
    if code == "hexp":
        return ExportMatch()
    card = card_of_pick(code)
    if card is not None:
        return PickCard(card)
    if code.startswith("catch") and code[5:].isdigit():
        return CatchSena(int(code[5:]))
    if code.startswith("sena_"):
        try:
            return MakeSena(Sena(code.removeprefix("sena_")))
        except ValueError:
            raise TokenError("not a seña") from None
    if code.startswith("lang_"):
        lang = code.removeprefix("lang_")
        if lang not in LANGUAGES:  # no picker of ours offers it: forged
            raise TokenError("not a language")
        return SetLanguage(lang)
    raise TokenError("not a code")


@dataclass(frozen=True, slots=True)
class Token:
    """A parsed token."""

    table: str
    stamp: str
    code: str
    command: Command
    """What the button asks for (parsed once, from ``code``)."""

    @property
    def hand(self) -> int | None:
        """The hand number of a hand or turn stamp."""
        if self.stamp in ("L", "C") or self.stamp.startswith("T"):
            return None
        return int(self.stamp.split("-")[0])

    @property
    def step(self) -> int | None:
        """The action step of a turn stamp."""
        if self.stamp.startswith("T"):  # a lesson stamp: see lesson_place
            return None
        return int(self.stamp.split("-")[1]) if "-" in self.stamp else None

    def lesson_place(self) -> tuple[int, int, str] | None:
        """``(lesson, step, tag)`` of a lesson button's stamp (``None`` for any other token)."""
        if not self.stamp.startswith("T"):
            return None
        lesson, step, tag = self.stamp[1:].split("-")
        return int(lesson), int(step), tag

    def encode(self) -> str:
        """The token as a string."""
        return f"{self.table}.{self.stamp}.{self.code}"


def read_token(data: object) -> Token | None:
    """A button's data, parsed once where the press enters the bot: its token, or ``None`` when it is not one
    (forged, damaged, or from a version that no longer draws it)."""
    try:
        return parse_token(data)
    except TokenError:
        return None


def make_token(table: str, stamp: str, code: str) -> str:
    """Build and check a token string."""
    token = f"{table}.{stamp}.{code}"
    parse_token(token)
    return token


def parse_token(data: object) -> Token:
    """Parse a token; raise :class:`TokenError` for anything that is not exactly a valid token."""
    if not isinstance(data, str) or len(data.encode("utf-8", "replace")) > MAX_TOKEN_BYTES:
        raise TokenError("not a token")
    match = _TOKEN_RE.fullmatch(data)
    if match is None:
        raise TokenError("not a token")
    if match["chat"] is not None:
        return Token(CHAT_SCOPE, "C", match["chat_code"], command_of(match["chat_code"]))
    if match["learn"] is not None:
        code = match["learn_code"]
        command: Command = LessonChoice(int(code[1:])) if code[0] == "a" else OpenLesson(int(code[2:]))
        return Token(CHAT_SCOPE, match["learn_stamp"], code, command)
    if CODE_RE.fullmatch(match["code"]) is None:
        raise TokenError("not a token")
    return Token(match["table"], match["stamp"], match["code"], command_of(match["code"]))


def lesson_tag(user_key: str) -> str:
    """Four characters naming a learner on their lesson buttons (not a secret: a press by someone else
    only acts on that person's own progress; the tag lets the answer say whose lesson it was)."""
    digest = hashlib.blake2s(user_key.encode("utf-8"), digest_size=8).digest()
    number = int.from_bytes(digest, "big")
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    return "".join(alphabet[(number >> (6 * i)) % 36] for i in range(4))


def lesson_token(lesson: int, step: int, tag: str, code: str) -> str:
    """The token of a lesson button: ``a{n}`` (choice ``n`` of the step) or ``go{n}`` (open lesson ``n``)."""
    token = f"{CHAT_SCOPE}.T{lesson}-{step}-{tag}.{code}"
    parse_token(token)
    return token


def language_token(lang: str) -> str:
    """The token of a language picker button (chat-scoped: no table)."""
    token = f"{CHAT_SCOPE}.C.lang_{lang}"
    parse_token(token)
    return token


def history_token(table: str, hand_no: int, code: Literal["hist", "histc", "hexp"]) -> str:
    """The token of a history button: a kept hand (``hist`` to the presser, ``histc`` in the chat), or the
    match's files (``hexp``, stamped 0: no hand)."""
    return make_token(table, str(hand_no), code)


def pick_code(card: Card) -> str:
    """The code of the button that toggles ``card`` for discarding (it names the card, so a button on an
    older copy of the hand can never toggle another card)."""
    return f"pick_{card_name(card)}"


def card_of_pick(code: str) -> Card | None:
    """The card a ``pick_…`` code names, or ``None``."""
    if not code.startswith("pick_"):
        return None
    try:
        return parse_card(code.removeprefix("pick_"))
    except CardError:
        return None


def sena_stamp(hand_no: int, senas_made: int) -> str:
    """Stamp of a seat's seña buttons: valid while that seat has made ``senas_made`` señas this hand (a
    doubled press is stale; another player's seña is not)."""
    return f"{hand_no}-{senas_made}"


def lobby_stamp() -> str:
    """Stamp of lobby buttons."""
    return "L"


def hand_stamp(hand_no: int) -> str:
    """Stamp of buttons valid for a whole hand."""
    return str(hand_no)


def turn_stamp(hand_no: int, step: int) -> str:
    """Stamp of turn buttons: valid while the hand's action log has ``step`` actions."""
    return f"{hand_no}-{step}"
