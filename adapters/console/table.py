"""The terminal's screen: the views it prints (lobby, table, private hand, showdowns), numbered buttons."""

from __future__ import annotations

import re
import sys
from typing import TextIO

from adapters.console.amounts import bet_amounts, bet_token
from adapters.console.lines import LineSource
from bot.i18n import translator
from bot.i18n.markers import N_
from bot.kernel import Button, Outcome, OutMessage, PickCard, TokenError, UserRef, parse_token
from bot.ops import App
from engine.cards import Card, card_name
from engine.state import restore_match

#: The line around a showdown.
RULE = "─" * 60
# The private hand is always printed here, so "My cards" would only repeat it.
_HIDDEN_CODES = frozenset({"cards"})
# Messages that stand on the screen and are redrawn; every other slot (rules, notices…) is printed once.
_STANDING_SLOTS = ("lobby", "table", "hand")
PAUSE = N_("(Enter = next hand, q = quit) ")
#: What leaves the table, at the prompt and at the pause after a showdown.
QUIT_WORDS = ("q", "quit", "exit")
NO_SUCH_BUTTON = N_("No button has that number: type one from 1 to {last} (r = rules, q = quit).")
NO_BUTTONS = N_("No button to press now: Enter = the table again, r = rules, q = quit.")
NOT_CARDS = N_("d discards cards: type d and the numbers of card buttons, from 1 to {last}.")
# Translators: the line mode's answer to "a" and a number that cannot be bet now ("a 7" bets 7).
AMOUNT_RANGE = N_("a and an amount bets it: type a whole number from {low} to {high}.")
NO_AMOUNT = N_("No bet of an amount to make now.")
_NUMBERS_RE = re.compile(r"[0-9]+(?:[\s,]+[0-9]+)*")  # ASCII digits only: int() would take "²"… or not
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


class LeaveTable(Exception):
    """The player typed ``q`` at the pause after a showdown (or the input ended there)."""


#: The chats' commands, and what a terminal types instead (``/learn 5`` → ``musbot learn 5``).
TERMINAL_COMMANDS = {"/newgame": "musbot play", "/learn": "musbot learn", "/history": "musbot history"}
_COMMAND_RE = re.compile(r"(?<![\w/])(/newgame|/learn|/history)\b((?: [0-9]+)?)")


def terminal_terms(text: str) -> str:
    """``text`` with each chat command as the terminal's own (``/newgame`` → `` `musbot play` ``): the core
    writes one text for every surface, and a terminal has no chat commands."""
    return _COMMAND_RE.sub(lambda m: f"`{TERMINAL_COMMANDS[m[1]]}{m[2]}`", text)


def plain(message: OutMessage) -> str:
    """A message's text for a terminal: light Markdown markers stripped (``**bold**`` → ``bold``), chat
    commands said as the terminal's (:func:`terminal_terms`)."""
    return terminal_terms(_BOLD_RE.sub(r"\1", message.text) if message.markdown else message.text)


def numbers(text: str) -> list[int] | None:
    """``"1 3 4"`` or ``"1,3,4"`` → ``[1, 3, 4]``; ``None`` unless the text is only ASCII numbers."""
    text = text.strip()
    if not _NUMBERS_RE.fullmatch(text):
        return None
    return [int(n) for n in re.split(r"[\s,]+", text)]


def code_of(button: Button) -> str | None:
    """The action code of a button's token (``None`` if it is not a token)."""
    try:
        return parse_token(button.token).code
    except TokenError:
        return None


def card_of(button: Button) -> Card | None:
    """The card a discard-pick button toggles (``None`` for any other button)."""
    try:
        command = parse_token(button.token).command
    except TokenError:
        return None
    return command.card if isinstance(command, PickCard) else None


class ConsoleTable:
    """Prints views and turns buttons into numbered choices."""

    def __init__(
        self,
        app: App,
        user: UserRef,
        out: TextIO = sys.stdout,
        lines: LineSource | None = None,
        *,
        pause: bool = False,
    ):
        """Play as ``user``; with ``pause``, wait for Enter (read from ``lines``) after each showdown."""
        self.app = app
        self.user = user
        self.out = out
        self.lines = lines
        self.pause = pause
        self.latest: dict[str, OutMessage] = {}

    def say(self, text: str) -> None:
        """Print a short line for the player."""
        print(f"» {terminal_terms(text)}", file=self.out)

    async def show(self, outcome: Outcome, *, draw: bool = True) -> None:
        """Print an outcome's answer and one-off messages; remember the standing ones; redraw if ``draw``.

        :class:`LeaveTable` if the player quits at the pause after a showdown.
        """
        if outcome.answer:
            self.say(outcome.answer)
        for message in outcome.messages:
            if message.user is not None and message.user != self.user.key:
                continue
            if message.slot == "showdown":
                print(f"\n{RULE}\n{plain(message)}\n{RULE}", file=self.out)
                if self.pause and self.lines is not None:
                    self.lines.drop_typed_ahead()
                    answer = await self.lines.readline(translator(self.user.lang).gettext(PAUSE))
                    if answer is None or answer.strip().lower() in QUIT_WORDS:
                        raise LeaveTable
            elif message.slot in _STANDING_SLOTS:
                self.latest[message.slot] = message
            else:  # rules (also the full rules, sent privately), notices, leaderboards
                print(f"\n{plain(message)}", file=self.out)
        if draw:
            self.draw()

    def choices(self) -> list[Button]:
        """Every button on screen, lobby and table first, then the private hand ("My cards" left out)."""
        buttons: list[Button] = []
        for key in _STANDING_SLOTS:
            message = self.latest.get(key)
            if message is not None:
                shown = (b for row in message.buttons for b in row if code_of(b) not in _HIDDEN_CODES)
                buttons.extend(b for b in shown if not b.opens)  # (a link opens an address: not a terminal's)
        return buttons

    def button(self, code: str) -> Button | None:
        """The button on screen with this action code, if any."""
        return next((b for b in self.choices() if code_of(b) == code), None)

    def draw(self) -> None:
        """Print the open lobby or the table, the private hand and the numbered choices."""
        lobby = self.latest.get("lobby")
        if lobby is not None and lobby.buttons:  # a closed lobby ("the game has started") says nothing new
            print(f"\n{plain(lobby)}", file=self.out)
        for key in ("table", "hand"):
            message = self.latest.get(key)
            if message is not None:
                print(f"\n{plain(message)}", file=self.out)
        for i, button in enumerate(self.choices(), 1):
            print(f"  [{i}] {button.label}", file=self.out)

    async def press(self, *indexes: int) -> None:
        """Press the choices numbered ``indexes`` (1-based), in turn, as they were on screen.

        The tokens are read before the first press: the numbers mean what the player saw, even if a press
        redraws the buttons. A refused press stops the rest.
        """
        buttons = self.choices()
        if not indexes or not all(1 <= i <= len(buttons) for i in indexes):
            self.say(self._which_keys(buttons))
            return
        tokens = [buttons[i - 1].token for i in indexes]
        for n, token in enumerate(tokens, 1):
            outcome = await self.app.service.press(self.user, token)
            last = n == len(tokens) or not outcome.ok
            await self.show(outcome, draw=last)
            if last:
                return

    async def bet(self, amount: int) -> None:
        """Bet ``amount`` (an envido, or a raise by that much) if the player may now; else say what may be
        typed. Pressed as the core's own bet button of this turn, so it is checked as one."""
        t = translator(self.user.lang)
        shown = self.latest.get("table")
        state = await self.app.service.load_table(shown.table) if shown is not None else None
        match = restore_match(state.match) if state is not None and state.match is not None else None
        legal = bet_amounts(match, state.seat_of(self.user.key) if state is not None else None)
        if state is None or match is None or not legal:
            self.say(t.gettext(NO_AMOUNT))
        elif amount not in legal:
            self.say(t.format(AMOUNT_RANGE, low=min(legal), high=max(legal)))
        else:
            await self.show(await self.app.service.press(self.user, bet_token(state, match, legal[amount])))

    def _which_keys(self, buttons: list[Button]) -> str:
        """What a number that is no button gets: the numbers there are (and the other keys)."""
        t = translator(self.user.lang)
        return t.format(NO_SUCH_BUTTON, last=len(buttons)) if buttons else t.gettext(NO_BUTTONS)

    async def discard(self, *indexes: int) -> None:
        """Discard exactly the cards whose buttons are numbered ``indexes``, and confirm, in one go."""
        buttons = self.choices()
        if not indexes or not all(1 <= i <= len(buttons) for i in indexes):
            self.say(self._which_keys(buttons))
            return
        chosen = [buttons[i - 1] for i in indexes]
        if not all(_is_card(b) for b in chosen):  # not card buttons: nothing to discard there
            self.say(translator(self.user.lang).format(NOT_CARDS, last=len(buttons)))
            return
        wanted = {b.token for b in chosen}
        picked = await self._picked([b for b in buttons if _is_card(b)])
        # Card buttons toggle: press only those whose card is not yet as wanted (one may be picked already).
        for b in buttons:
            if _is_card(b) and (b.token in wanted) != (b.token in picked):
                outcome = await self.app.service.press(self.user, b.token)
                await self.show(outcome, draw=False)
                if not outcome.ok:
                    self.draw()
                    return
        confirm = self.button("discard")
        if confirm is None:
            self.draw()
            return
        await self.show(await self.app.service.press(self.user, confirm.token))

    async def _picked(self, cards: list[Button]) -> set[str]:
        """The tokens of those card buttons whose card is picked for the discard now (the stored table)."""
        hand = self.latest.get("hand")
        state = await self.app.service.load_table(hand.table) if hand is not None else None
        seat = None if state is None else state.seat_of(self.user.key)
        if state is None or seat is None:
            return set()
        names = set(state.seats[seat].discard_pick)
        picked: set[str] = set()
        for b in cards:
            card = card_of(b)
            if card is not None and card_name(card) in names:
                picked.add(b.token)
        return picked


def _is_card(button: Button) -> bool:
    """Whether a button picks a card for the discard (its code names the card)."""
    return card_of(button) is not None
