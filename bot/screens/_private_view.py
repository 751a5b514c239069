"""A player's private hand: their cards, what they hold, the discard picks, the amount picker, señas.

Only the seat's own cards appear here (and the señas its partner made or it caught); it is addressed to that
player alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator, translator
from bot.i18n.markers import N_
from bot.kernel import (
    Button,
    OutMessage,
    TableState,
    TableStatus,
    WebAccess,
    action_code,
    hand_stamp,
    make_token,
    pick_code,
    sena_stamp,
    turn_stamp,
)
from bot.screens._doors import hand_door
from bot.screens._labels import SENA_NAMES, card_label, cards_label, hand_summary, seat_name
from engine.actions import ActionKind
from engine.cards import Card, card_name
from engine.hand import Hand
from engine.hand_types import Phase
from engine.match import Match
from engine.senas import true_senas
from engine.views import SeatView

_ = N_


def _cards_lines(t: Translator, cards: Sequence[Card]) -> list[str]:
    """``Your cards: R🪙 R🍷 C🪙 S🪙`` and ``→ par · juego 40`` (or that new cards are on their way)."""
    if len(cards) == 4:
        return [t.format(N_("Your cards: {cards}"), cards=cards_label(cards)), "→ " + hand_summary(t, cards)]
    return [t.format(N_("Your cards: {cards} (waiting for new cards)"), cards=cards_label(cards))]


def picker_open(table: TableState, hand: Hand, seat: int) -> bool:
    """Whether ``seat`` is on turn and asked for "More…" on this very turn (its amounts are showing)."""
    return hand.turn == seat and table.seats[seat].picker == turn_stamp(table.hand_no, len(hand.log))


class PrivateView:
    """Builds a seat's private views of one table at one moment."""

    def __init__(self, table: TableState, match: Match | None, web: WebAccess | None = None) -> None:
        """The views of ``table`` whose live match is ``match`` (``web``: the ways to the web table)."""
        self.table = table
        self.match = match
        self.web = web

    def private_hand(self, seat: int, *, fresh: bool = False) -> OutMessage | None:
        """A player's own cards, with discard, bet-amount and seña buttons; ``None`` for machine seats."""
        table = self.table
        s = table.seats[seat]
        if s.user is None or self.match is None or self.match.hand is None:
            return None
        t = translator(s.lang)
        hand = self.match.hand
        view = self.match.view_for(seat)
        lines = [self._title(t)]
        lines.extend(_cards_lines(t, view.cards))
        lines.extend(self._sena_lines(seat, t, view))
        if table.status is TableStatus.CANCELLED:
            lines.append(t.gettext(_("This table was cancelled.")))
            return self._private(seat, lines, (), fresh)
        if hand.over:
            lines.append(t.gettext(_("Hand over.")))
            return self._private(seat, lines, (), fresh)
        rows = self._discard(seat, t, hand, view, lines)
        rows.extend(self._picker(seat, t, hand))
        rows.extend(self._sena_buttons(seat, t, hand, view))
        door = hand_door(t, table, self.web)
        if door is not None:
            rows.append((door,))
        return self._private(seat, lines, tuple(rows), fresh)

    def _title(self, t: Translator) -> str:
        """``Mus en la sociedad · hand 2`` at a group's table; ``Hand 2`` where the chat is the player's own
        (a private chat, the terminal): its title (a placeholder, the user's own name) says nothing."""
        table = self.table
        if table.private or not table.chat_title:
            return t.format(N_("Hand {n}"), n=table.hand_no)
        return t.format(N_("{chat} · hand {n}"), chat=table.chat_title, n=table.hand_no)

    def _sena_lines(self, seat: int, t: Translator, view: SeatView) -> list[str]:
        """The señas this seat knows of: those its partner made, and those it caught from a rival."""
        lines = [
            t.format(
                N_("Your partner {name} made you a seña: {sena}"),
                name=seat_name(self.table, view.partner),
                sena=t.gettext(SENA_NAMES[sena]),
            )
            for sena in view.partner_senas()
        ]
        for sv in view.senas:
            if sv.seat % 2 != seat % 2 and sv.sena is not None:
                lines.append(
                    t.format(
                        N_("You caught {name}'s seña: {sena}"),
                        name=seat_name(self.table, sv.seat),
                        sena=t.gettext(SENA_NAMES[sv.sena]),
                    )
                )
        return lines

    def _discard(
        self, seat: int, t: Translator, hand: Hand, view: SeatView, lines: list[str]
    ) -> list[tuple[Button, ...]]:
        """During the discards, before this seat discarded: a button per card (✓ on the picked ones) and,
        once one is picked, the confirmation; what to do is added to ``lines``."""
        if view.phase is not Phase.DISCARD or len(view.cards) != 4 or self._discarded_this_round(hand, seat):
            return []
        table, s = self.table, self.table.seats[seat]
        stamp = hand_stamp(table.hand_no)
        picked = set(s.discard_pick)
        lines.append(t.gettext(_("Choose the cards to discard, then confirm.")))
        if s.discard_ready:
            lines.append(t.gettext(_("Discard confirmed: waiting for your turn.")))
        cards = tuple(
            Button(
                ("✓ " if card_name(c) in picked else "") + card_label(c),
                make_token(table.id, stamp, pick_code(c)),
            )
            for c in view.cards
        )
        if not picked:
            return [cards]
        label = t.nformat("Discard {n} card", "Discard {n} cards", len(picked))
        return [cards, (Button(label, make_token(table.id, stamp, "discard")),)]

    def _picker(self, seat: int, t: Translator, hand: Hand) -> list[tuple[Button, ...]]:
        """Every legal bet amount, once the player on turn asked for "more…" (8 to a row)."""
        if not picker_open(self.table, hand, seat):
            return []
        stamp = turn_stamp(self.table.hand_no, len(hand.log))
        standing = hand.betting.proposal if hand.betting is not None else 0
        buttons = []
        for action in hand.legal_actions(seat):
            code = action_code(action)
            if code is None or action.kind not in (ActionKind.ENVIDO, ActionKind.SUBE):
                continue
            total = standing + action.amount if action.kind is ActionKind.SUBE else 0
            label = str(action.amount) if not total else f"+{action.amount} → {total}"
            buttons.append(Button(label, make_token(self.table.id, stamp, code)))
        return [tuple(buttons[i : i + 8]) for i in range(0, len(buttons), 8)]

    def _sena_buttons(self, seat: int, t: Translator, hand: Hand, view: SeatView) -> list[tuple[Button, ...]]:
        """The señas this seat may make with its four cards (three at most), while it has señas left."""
        if not (view.senas_enabled and view.senas_left > 0 and len(view.cards) == 4):
            return []
        options = true_senas(view.cards)
        if not options:
            return []
        stamp = sena_stamp(self.table.hand_no, hand.senas_made(seat))
        return [
            tuple(
                Button(
                    t.format(N_("Seña: {sena}"), sena=t.gettext(SENA_NAMES[o])),
                    make_token(self.table.id, stamp, f"sena_{o.value}"),
                )
                for o in options[:3]
            )
        ]

    def cards_alert(self, seat: int) -> str:
        """A seat's own cards in one short line (≤ 200 characters), for an alert only its player sees."""
        assert self.match is not None
        s = self.table.seats[seat]
        t = translator(s.lang)
        view = self.match.view_for(seat)
        return " ".join(_cards_lines(t, view.cards))[:200]

    @staticmethod
    def _discarded_this_round(hand: Hand, seat: int) -> bool:
        return len(hand.hands[seat]) < 4

    def _private(
        self, seat: int, lines: Sequence[str], rows: tuple[tuple[Button, ...], ...], fresh: bool
    ) -> OutMessage:
        return OutMessage(
            slot="hand",
            text="\n".join(lines),
            user=self.table.seats[seat].user,
            buttons=rows,
            fresh=fresh,
            table=self.table.id,
        )
