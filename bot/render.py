"""Rendering tables, hands and results into translated, platform-neutral views.

Every text here is an English msgid marked with ``_`` (no-op at import) and translated per reader: the
table's language for the group, each player's language for private messages. Group texts never contain a
hidden card: cards appear only in private messages and in the showdown.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator, translator
from bot.i18n.markers import N_
from bot.model import TableState, TableStatus
from bot.tokens import action_code, hand_stamp, lobby_stamp, make_token, turn_stamp
from bot.views import Button, OutMessage
from engine.actions import Action, ActionKind
from engine.betting import BetStatus
from engine.cards import SUIT_SYMBOLS, Card, card_name, printed_rank, suit_of
from engine.evaluation import Lance, ParesKind, evaluate
from engine.hand import Hand, Phase
from engine.match import Match, amarracos
from engine.senas import Sena, true_senas
from engine.views import SeatView

_ = N_

_RANK_LABEL = {1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 10: "S", 11: "C", 12: "R"}

LANCE_NAMES: dict[Lance, str] = {
    Lance.GRANDE: _("GRANDE"),
    Lance.CHICA: _("CHICA"),
    Lance.PARES: _("PARES"),
    Lance.JUEGO: _("JUEGO"),
    Lance.PUNTO: _("PUNTO"),
}
PHASE_NAMES: dict[Phase, str] = {
    Phase.MUS: _("MUS"),
    Phase.DISCARD: _("DISCARDS"),
    Phase.COUNT: _("COUNT"),
    Phase.OVER: _("SHOWDOWN"),
}
SENA_NAMES: dict[Sena, str] = {
    Sena.DOS_REYES: _("two kings"),
    Sena.TRES_REYES: _("three kings"),
    Sena.DOS_ASES: _("two aces"),
    Sena.TRES_ASES: _("three aces"),
    Sena.MEDIAS: _("medias"),
    Sena.DUPLES: _("duples"),
    Sena.TREINTA_Y_UNA: _("31"),
    Sena.CIEGO: _("ciego (nothing)"),
}
PARES_NAMES: dict[ParesKind, str] = {
    ParesKind.NONE: _("no pares"),
    ParesKind.PAR: _("par"),
    ParesKind.MEDIAS: _("medias"),
    ParesKind.DUPLES: _("duples"),
}
MACHINE_NAMES = ("Txema", "Maite", "Iker", "Nerea")
# Quick amounts offered as buttons (any legal amount is accepted by the engine).
ENVIDO_BUTTONS = (2, 5)
SUBE_BUTTONS = (2, 5)
TARGET_CHOICES = (40, 30, 20)
#: Machine levels a table may choose (engine.ai players of those names).
LEVELS = ("normal", "hard", "easy")
LEVEL_NAMES: dict[str, str] = {
    "easy": _("Machines: easy"),
    "normal": _("Machines: normal"),
    "hard": _("Machines: hard"),
}


def card_label(card: Card) -> str:
    """A card as players read it everywhere: rank first (R, C, S, 7…A; 3 and 2 shown), then a suit symbol."""
    return f"{_RANK_LABEL[printed_rank(card)]}{SUIT_SYMBOLS[suit_of(card)]}"


def cards_label(cards: Sequence[Card]) -> str:
    """Several cards, separated by spaces."""
    return " ".join(card_label(c) for c in cards)


def stones_label(t: Translator, stones: int) -> str:
    """Stones as amarracos and piedras: ``2 amarracos 3 piedras (13)``."""
    a, p = amarracos(stones)
    parts = []
    if a:
        parts.append(t.nformat("{n} amarraco", "{n} amarracos", a))
    if p or not a:
        parts.append(t.nformat("{n} piedra", "{n} piedras", p))
    return f"{' '.join(parts)} ({stones})"


def seat_name(table: TableState, seat: int) -> str:
    """The display name of a seat (machines get a 🤖 and a Basque name)."""
    s = table.seats[seat]
    if s.machine:
        return f"🤖 {MACHINE_NAMES[seat]}"
    return s.name or "?"


def action_label(t: Translator, action: Action | ActionKind, amount: int = 0) -> str:
    """A player's action in words: ``paso``, ``envido 2``, ``no quiero``, ``órdago``…"""
    kind = action.kind if isinstance(action, Action) else action
    amount = action.amount if isinstance(action, Action) else amount
    if kind is ActionKind.MUS:
        return t.gettext(_("mus"))
    if kind is ActionKind.NO_MUS:
        return t.gettext(_("no hay mus"))
    if kind is ActionKind.PASO:
        return t.gettext(_("paso"))
    if kind is ActionKind.ENVIDO:
        return t.format(N_("envido {n}"), n=amount)
    if kind is ActionKind.SUBE:
        return t.format(N_("subo {n}"), n=amount)
    if kind is ActionKind.QUIERO:
        return t.gettext(_("quiero"))
    if kind is ActionKind.NO_QUIERO:
        return t.gettext(_("no quiero"))
    if kind is ActionKind.ORDAGO:
        return t.gettext(_("órdago"))
    return t.gettext(_("discard"))


def team_names(table: TableState, team: int) -> str:
    """``Ane y Brais``: the two names of a team."""
    t = translator(table.lang)
    return t.format(N_("{a} and {b}"), a=seat_name(table, team), b=seat_name(table, team + 2))


class Renderer:
    """Builds the views of one table at one moment (``now``, the service's clock)."""

    def __init__(self, table: TableState, match: Match | None, now: float) -> None:
        """Render ``table`` whose live match is ``match`` (``None`` in the lobby)."""
        self.table = table
        self.match = match
        self.now = now
        self.t = translator(table.lang)

    # --- lobby ---------------------------------------------------------------------------------------

    def lobby(self, *, fresh: bool = False) -> OutMessage:
        """The lobby: seats per team, options, and the buttons to sit, choose options, start or cancel."""
        t, table = self.t, self.table
        if table.private:
            lines = [t.gettext(_("🂠 Mus · you and a machine partner against two machines")), ""]
        else:
            lines = [t.gettext(_("🂠 Mus · new table")), ""]
        for team in (0, 1):
            names = [self._lobby_seat(s) for s in (team, team + 2)]
            label = t.gettext(_("Team A")) if team == 0 else t.gettext(_("Team B"))
            lines.append(f"{label}: {names[0]} · {names[1]}")
        lines.append("")
        lines.append(self._options_line())
        if table.status is TableStatus.CANCELLED:
            lines.append(t.gettext(_("This table was cancelled.")))
            return self._group("lobby", lines, (), fresh)
        if table.status is not TableStatus.LOBBY:
            lines.append(t.gettext(_("The game has started.")))
            return self._group("lobby", lines, (), fresh)
        if table.private:
            lines.append(t.gettext(_("Choose the options, then start.")))
        else:
            lines.append(t.gettext(_("Take a seat; empty seats get machine players when the game starts.")))
        tok = self._lobby_token
        seat_row = tuple(Button(self._seat_button(s), tok(f"seat{s}")) for s in (0, 2, 1, 3))
        opts = self.table.options
        option_row = (
            Button(t.gettext(_("Señas: on")) if opts.senas else t.gettext(_("Señas: off")), tok("o_senas")),
            Button(t.format(N_("To {n}"), n=opts.target), tok("o_target")),
            Button(
                t.gettext(_("Full match")) if opts.mode == "match" else t.gettext(_("Single game")),
                tok("o_mode"),
            ),
        )
        level_row = (
            Button(t.gettext(LEVEL_NAMES.get(opts.difficulty, LEVEL_NAMES["normal"])), tok("o_level")),
        )
        control_row = (
            Button(t.gettext(_("Leave")), tok("leave")),
            Button(t.gettext(_("▶ Start")), tok("start")),
            Button(t.gettext(_("✖ Cancel")), tok("cancel")),
        )
        if table.private:  # alone against the machines: no seats to take or leave
            return self._group("lobby", lines, (option_row, level_row, control_row[1:]), fresh)
        rows = (seat_row[:2], seat_row[2:], option_row, level_row, control_row)
        return self._group("lobby", lines, rows, fresh)

    def _lobby_token(self, code: str) -> str:
        return make_token(self.table.id, lobby_stamp(), code)

    def _lobby_seat(self, seat: int) -> str:
        s = self.table.seats[seat]
        if s.empty:
            return self.t.gettext(_("(free)"))
        return seat_name(self.table, seat)

    def _seat_button(self, seat: int) -> str:
        team = "A" if seat % 2 == 0 else "B"
        s = self.table.seats[seat]
        if s.empty:
            return self.t.format(N_("Sit in team {team}"), team=team)
        return f"{team}: {seat_name(self.table, seat)}"

    def _options_line(self) -> str:
        t, opts = self.t, self.table.options
        senas = t.gettext(_("señas on")) if opts.senas else t.gettext(_("no señas"))
        mode = t.gettext(_("full match")) if opts.mode == "match" else t.gettext(_("single game"))
        return t.format(
            N_("Options: {senas} · to {target} stones · {mode}"), senas=senas, target=opts.target, mode=mode
        )

    # --- the group table -----------------------------------------------------------------------------

    def table_message(self, *, fresh: bool = False) -> OutMessage:
        """The group table of the current hand: scores, lance, declarations, bets, turn, buttons."""
        match = self.match
        assert match is not None and match.hand is not None
        hand = match.hand
        t, table = self.t, self.table
        view = match.view_for(0)  # public parts only: seat 0's own cards are never rendered here
        lines = [self._header(match)]
        scores = view.scores
        for team in (0, 1):
            lines.append(f"{team_names(table, team)} · {stones_label(t, scores[team])}")
        stage = LANCE_NAMES[view.lance] if view.lance else PHASE_NAMES.get(view.phase, view.phase.value)
        lines.append(
            t.format(
                N_("Mano: {name} · Lance: {lance}"), name=seat_name(table, hand.mano), lance=t.gettext(stage)
            )
        )
        lines.extend(self._history(hand, view))
        lines.extend(self._flashes(hand))
        rows: list[tuple[Button, ...]] = []
        if hand.over:
            lines.append(t.gettext(_("Hand over: see the showdown below.")))
        elif hand.turn is not None:
            seat = hand.turn
            lines.append(self._turn_line(seat))
            rows.extend(self._turn_buttons(match, seat))
        rows.extend(self._flash_buttons(hand))
        rows.append(
            (Button(t.gettext(_("🂠 My cards")), make_token(table.id, hand_stamp(table.hand_no), "cards")),)
        )
        return self._group("table", lines, tuple(rows), fresh)

    def _header(self, match: Match) -> str:
        t = self.t
        if self.table.options.mode == "game":
            return t.format(N_("🂠 Mus · single game · to {target}"), target=match.config.target)
        return t.format(
            N_("🂠 Mus · Game {game} · Vaca {vaca} ({a}–{b}) · to {target}"),
            game=match.game_number,
            vaca=min(match.vaca_number, 2 * match.config.vacas_per_match - 1),
            a=match.games[0],
            b=match.games[1],
            target=match.config.target,
        )

    def _history(self, hand: Hand, view: SeatView) -> list[str]:
        """What happened in this hand so far, lance by lance, without any card."""
        t, table = self.t, self.table
        lines: list[str] = []
        mus_words = [
            f"{seat_name(table, a.seat)}: {action_label(t, a.kind)}"
            for a in view.actions
            if a.phase is Phase.MUS
        ]
        discards = [
            t.format(N_("{name} ↺{n}"), name=seat_name(table, a.seat), n=a.count)
            for a in view.actions
            if a.phase is Phase.DISCARD
        ]
        if mus_words and (view.phase in (Phase.MUS, Phase.DISCARD) or view.mus_round):
            lines.append("  " + " · ".join(mus_words[-4:]))
        if discards:
            lines.append("  " + " · ".join(discards[-4:]))
        if view.pares_declared is not None:
            lines.append(self._declared_line(_("Pares"), view.pares_declared))
        if view.juego_declared is not None:
            lines.append(self._declared_line(_("Juego"), view.juego_declared))
        for result in view.results:
            lines.append(
                self._result_line(
                    result.lance, result.status, result.amount, result.deje, result.proposer_team
                )
            )
        if view.betting is not None:
            said = [
                f"{seat_name(table, a.seat)}: {action_label(t, a.kind, a.amount)}"
                for a in view.actions
                if a.phase.value == view.betting.lance.value
            ]
            if said:
                lines.append("  " + " · ".join(said))
        return lines

    def _declared_line(self, label: str, flags: Sequence[bool]) -> str:
        t, table = self.t, self.table
        yes, no = t.gettext(_("yes")), t.gettext(_("no"))
        parts = [f"{seat_name(table, s)} {yes if flags[s] else no}" for s in range(4)]
        return f"{t.gettext(label)}: " + " · ".join(parts)

    def _result_line(
        self, lance: Lance, status: BetStatus, amount: int, deje: int, proposer_team: int | None
    ) -> str:
        t = self.t
        name = t.gettext(LANCE_NAMES[lance])
        if status is BetStatus.PASO:
            what = t.gettext(_("en paso"))
        elif status is BetStatus.ACCEPTED:
            what = t.format(N_("{n} stones wanted"), n=amount)
        elif status is BetStatus.REFUSED:
            assert proposer_team is not None
            what = t.format(
                N_("not wanted: {team} take {n}"), team=team_names(self.table, proposer_team), n=deje
            )
        elif status is BetStatus.ORDAGO:
            what = t.gettext(_("ÓRDAGO wanted!"))
        else:
            what = t.gettext(_("no betting (one side only)"))
        return f"✓ {name}: {what}"

    def _turn_line(self, seat: int) -> str:
        t = self.t
        name = seat_name(self.table, seat)
        if self.table.due is not None and (self.table.due_key or "").split("|")[1:2] == ["turn"]:
            left = max(0, round(self.table.due - self.now))
            if left <= 3600:  # a terminal table has no real deadline: no countdown there
                return t.format(N_("Turn of {name} (⏱ {s} s)"), name=name, s=left)
        return t.format(N_("Turn of {name}"), name=name)

    def _turn_buttons(self, match: Match, seat: int) -> list[tuple[Button, ...]]:
        """The buttons of the legal actions of the seat on turn (quick amounts for bets)."""
        hand = match.hand
        assert hand is not None
        if hand.phase is Phase.DISCARD:
            return []  # discards are chosen privately
        legal = hand.legal_actions(seat)
        stamp = turn_stamp(self.table.hand_no, len(hand.log))
        kinds = {a.kind for a in legal}
        chosen: list[Action] = []
        for action in legal:
            if action.kind is ActionKind.ENVIDO and action.amount not in ENVIDO_BUTTONS:
                continue
            if action.kind is ActionKind.SUBE and action.amount not in SUBE_BUTTONS:
                continue
            chosen.append(action)
        if ActionKind.SUBE in kinds and not any(a.kind is ActionKind.SUBE for a in chosen):
            chosen.insert(-1, min((a for a in legal if a.kind is ActionKind.SUBE), key=lambda a: a.amount))
        buttons = []
        for action in chosen:
            code = action_code(action)
            if code is not None:
                buttons.append(
                    Button(_capital(action_label(self.t, action)), make_token(self.table.id, stamp, code))
                )
        return [tuple(buttons[:3]), tuple(buttons[3:])] if len(buttons) > 3 else [tuple(buttons)]

    def _flashes(self, hand: Hand) -> list[str]:
        t = self.t
        return [
            t.format(N_("⚡ {name} made a seña!"), name=seat_name(self.table, s.seat))
            for s in hand.senas
            if self.now <= s.made_at + hand.config.catch_window
        ]

    def _flash_buttons(self, hand: Hand) -> list[tuple[Button, ...]]:
        live = [s for s in hand.senas if self.now <= s.made_at + hand.config.catch_window]
        if not live:
            return []
        stamp = hand_stamp(self.table.hand_no)
        return [
            tuple(
                Button(
                    f"⚡ {seat_name(self.table, s.seat)}", make_token(self.table.id, stamp, f"catch{s.index}")
                )
                for s in live[-4:]
            )
        ]

    # --- private hand --------------------------------------------------------------------------------

    def private_hand(self, seat: int, *, fresh: bool = False) -> OutMessage | None:
        """A player's own cards, with discard and seña buttons; ``None`` for machine seats."""
        table = self.table
        s = table.seats[seat]
        if s.user is None or self.match is None or self.match.hand is None:
            return None
        t = translator(s.lang)
        hand = self.match.hand
        view = self.match.view_for(seat)
        lines = [t.format(N_("Game at {chat}, hand {n}"), chat=table.chat_title or "Mus", n=table.hand_no)]
        if len(view.cards) == 4:
            lines.append(t.format(N_("Your cards: {cards}"), cards=cards_label(view.cards)))
            lines.append("→ " + self._hand_summary(t, view.cards))
        else:
            lines.append(
                t.format(N_("Your cards: {cards} (waiting for new cards)"), cards=cards_label(view.cards))
            )
        partner = view.partner
        for sena in view.partner_senas():
            lines.append(
                t.format(
                    N_("Your partner {name} made you a seña: {sena}"),
                    name=seat_name(table, partner),
                    sena=t.gettext(SENA_NAMES[sena]),
                )
            )
        for sv in view.senas:
            if sv.seat % 2 != seat % 2 and sv.sena is not None:
                lines.append(
                    t.format(
                        N_("You caught {name}'s seña: {sena}"),
                        name=seat_name(table, sv.seat),
                        sena=t.gettext(SENA_NAMES[sv.sena]),
                    )
                )
        rows: list[tuple[Button, ...]] = []
        stamp = hand_stamp(table.hand_no)
        if (
            view.phase is Phase.DISCARD
            and len(view.cards) == 4
            and not self._discarded_this_round(hand, seat)
        ):
            picked = set(s.discard_pick)
            lines.append(t.gettext(_("Choose the cards to discard, then confirm.")))
            if s.discard_ready:
                lines.append(t.gettext(_("Discard confirmed: waiting for your turn.")))
            rows.append(
                tuple(
                    Button(
                        ("✓ " if card_name(c) in picked else "") + card_label(c),
                        make_token(table.id, stamp, f"pick{i}"),
                    )
                    for i, c in enumerate(view.cards)
                )
            )
            if picked:
                rows.append(
                    (
                        Button(
                            t.nformat("Discard {n} card", "Discard {n} cards", len(picked)),
                            make_token(table.id, stamp, "discard"),
                        ),
                    )
                )
        if view.senas_enabled and view.senas_left > 0 and len(view.cards) == 4 and not hand.over:
            options = true_senas(view.cards)
            if options:
                rows.append(
                    tuple(
                        Button(
                            t.format(N_("Seña: {sena}"), sena=t.gettext(SENA_NAMES[o])),
                            make_token(table.id, stamp, f"sena_{o.value}"),
                        )
                        for o in options[:3]
                    )
                )
        return OutMessage(
            slot="hand", text="\n".join(lines), user=s.user, buttons=tuple(rows), fresh=fresh, table=table.id
        )

    def cards_alert(self, seat: int) -> str:
        """A seat's own cards in one short line (≤ 200 characters), for an alert only its player sees."""
        assert self.match is not None
        s = self.table.seats[seat]
        t = translator(s.lang)
        view = self.match.view_for(seat)
        if len(view.cards) == 4:
            text = t.format(N_("Your cards: {cards}"), cards=cards_label(view.cards))
            text += " → " + self._hand_summary(t, view.cards)
        else:
            text = t.format(N_("Your cards: {cards} (waiting for new cards)"), cards=cards_label(view.cards))
        return text[:200]

    @staticmethod
    def _discarded_this_round(hand: Hand, seat: int) -> bool:
        return len(hand.hands[seat]) < 4

    @staticmethod
    def _hand_summary(t: Translator, cards: Sequence[Card]) -> str:
        ev = evaluate(cards)
        parts = [t.gettext(PARES_NAMES[ev.pares_kind])]
        if ev.has_juego:
            parts.append(t.format(N_("juego {n}"), n=ev.total))
        else:
            parts.append(t.format(N_("punto {n}"), n=ev.total))
        return " · ".join(parts)

    # --- showdown and results ------------------------------------------------------------------------

    def showdown(self) -> OutMessage:
        """The end of a hand: every hand (if shown), the count line by line, the new score and results."""
        match = self.match
        assert match is not None and match.hand is not None
        hand = match.hand
        t, table = self.t, self.table
        lines = [t.format(N_("🂡 Hand {n} · showdown"), n=table.hand_no)]
        if hand.shown:
            for seat in hand.speaking_order():
                ev = evaluate(hand.hands[seat])
                lines.append(
                    f"{seat_name(table, seat)}: {cards_label(hand.hands[seat])} "
                    f"({self._hand_summary(t, hand.hands[seat])}; {ev.total})"
                )
        if hand.ordago is not None:
            lines.append(
                t.format(
                    N_("ÓRDAGO in {lance}: {team} win the game!"),
                    lance=t.gettext(LANCE_NAMES[hand.ordago.lance]),
                    team=team_names(table, hand.ordago.team),
                )
            )
        for lance in Lance:
            got = hand.points[lance]
            for team in (0, 1):
                if got[team]:
                    lines.append(f"  {t.gettext(LANCE_NAMES[lance])} {got[team]} → {team_names(table, team)}")
        lines.append(t.format(N_("Score: {a} – {b}"), a=hand.scores[0], b=hand.scores[1]))
        lines.extend(self.results_lines())
        return self._group("showdown", lines, (), True)

    def results_lines(self) -> list[str]:
        """Game, vaca and match results of the hand that just ended."""
        match = self.match
        assert match is not None
        t, table = self.t, self.table
        outcome = match.last_outcome
        lines: list[str] = []
        if outcome is None:
            return lines
        if outcome.game_winner is not None:
            lines.append(t.format(N_("🏆 {team} win the game!"), team=team_names(table, outcome.game_winner)))
        if outcome.vaca_winner is not None and table.options.mode == "match":
            lines.append(t.format(N_("🐄 {team} win the vaca!"), team=team_names(table, outcome.vaca_winner)))
        if outcome.match_winner is not None and table.options.mode == "match":
            lines.append(
                t.format(N_("🎉 {team} win the match!"), team=team_names(table, outcome.match_winner))
            )
        return lines

    def notice(self, text: str, *, slot: str = "notice") -> OutMessage:
        """A one-off message to the table's chat."""
        return OutMessage(slot=slot, text=text, chat=self.table.chat, fresh=True, table=self.table.id)

    def _group(
        self, slot: str, lines: Sequence[str], rows: tuple[tuple[Button, ...], ...], fresh: bool
    ) -> OutMessage:
        return OutMessage(
            slot=slot,
            text="\n".join(lines),
            chat=self.table.chat,
            buttons=rows,
            fresh=fresh,
            table=self.table.id,
        )


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
