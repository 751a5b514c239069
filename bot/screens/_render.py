"""Rendering tables, hands and results into translated, platform-neutral views.

Every text here is an English msgid marked with ``_`` (no-op at import) and translated per reader: the
table's language for the group, each player's language for private messages. Group texts never contain a
hidden card: cards appear only in private messages and in the showdown. The hand's story (every word of
every lance, the stake, the count's reasons) is written by :mod:`bot.screens._story`.

Buttons appear only where a press does something: turn buttons on a person's turn, ⚡ only for a seña a
person can still catch, "My cards" and the way to the web table (:mod:`bot.screens._doors`) only while the
hand is played; a closed table or hand has none.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import translator
from bot.i18n.markers import N_
from bot.kernel import (
    MACHINE_NAMES,
    Button,
    DeadlineKey,
    DeadlineKind,
    OutMessage,
    TableState,
    TableStatus,
    WebAccess,
    action_code,
    hand_stamp,
    lobby_stamp,
    make_token,
    turn_stamp,
)
from bot.screens import _story as story
from bot.screens._doors import own_row
from bot.screens._labels import (
    LANCE_NAMES,
    LEVEL_NAMES,
    PHASE_NAMES,
    QUICK_AMOUNTS,
    SCORE,
    button_label,
    cards_label,
    catch_label,
    hand_summary,
    header_line,
    labelled,
    named_score,
    seat_name,
    second_sena,
    stones_label,
    team_names,
)
from bot.screens._private_view import PrivateView
from engine.actions import ActionKind
from engine.hand import Hand
from engine.hand_types import Phase
from engine.match import Match

_ = N_


#: The stages of a table's view besides a hand's phases (:attr:`bot.kernel.OutMessage.phase`).
LOBBY, STARTED, CANCELLED = "lobby", "started", "cancelled"
#: A turn timeout longer than this is a terminal table's "no deadline": no clock is shown.
_NO_CLOCK = 3600.0


class Renderer:
    """Builds the views of one table at one moment (``now``, the service's clock)."""

    def __init__(
        self,
        table: TableState,
        match: Match | None,
        now: float,
        *,
        turn_seconds: float | None = None,
        catch_lag: float = 0.0,
        web: WebAccess | None = None,
    ) -> None:
        """Render ``table`` whose live match is ``match`` (``None`` in the lobby).

        ``turn_seconds`` is the time a person has for a turn, shown once per turn (a countdown redrawn every
        second would cost the group's message budget for nothing). A seña's ⚡ shows ``catch_lag`` seconds
        past its window, for a screen that showed it late (its catch counts from then). ``web``: the chats'
        doors to the web table (none without one).
        """
        self.table = table
        self.match = match
        self.now = now
        self.turn_seconds = turn_seconds
        self.catch_lag = catch_lag
        self.web = web
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
            lines.append(labelled(t, label, f"{names[0]} · {names[1]}"))
        lines.append("")
        lines.append(self._options_line())
        if table.status is TableStatus.CANCELLED:
            lines.append(t.gettext(_("This table was cancelled.")))
            return self._group("lobby", lines, (), fresh, phase=CANCELLED)
        if table.status is not TableStatus.LOBBY:
            lines.append(t.gettext(_("The game has started.")))
            return self._group("lobby", lines, (), fresh, phase=STARTED)
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
        rows: tuple[tuple[Button, ...], ...] = (
            seat_row[:2],
            seat_row[2:],
            option_row,
            level_row,
            control_row,
        )
        if table.private:  # alone against the machines: no seats to take or leave
            rows = (option_row, level_row, control_row[1:])
        return self._group("lobby", lines, rows, fresh, phase=LOBBY)

    def _lobby_token(self, code: str) -> str:
        return make_token(self.table.id, lobby_stamp(), code)

    def _lobby_seat(self, seat: int) -> str:
        s = self.table.seats[seat]
        if s.empty:
            if self.table.private:  # alone against the machines: every other seat is a machine's
                return f"🤖 {MACHINE_NAMES[seat]}"
            return self.t.gettext(_("(free)"))
        return seat_name(self.table, seat)

    def _seat_button(self, seat: int) -> str:
        team = "A" if seat % 2 == 0 else "B"
        s = self.table.seats[seat]
        if s.empty:
            return self.t.format(N_("Join team {team}"), team=team)
        return labelled(self.t, team, seat_name(self.table, seat))

    def _options_line(self) -> str:
        t, opts = self.t, self.table.options
        senas = t.gettext(_("señas on")) if opts.senas else t.gettext(_("no señas"))
        mode = t.gettext(_("full match")) if opts.mode == "match" else t.gettext(_("single game"))
        return t.format(
            N_("Options: {senas} · to {target} stones · {mode}"), senas=senas, target=opts.target, mode=mode
        )

    # --- the group table -----------------------------------------------------------------------------

    def table_message(self, *, fresh: bool = False) -> OutMessage:
        """The group table of the current hand: position, scores, the hand's story, the stake, the turn."""
        match = self.match
        assert match is not None and match.hand is not None
        hand = match.hand
        t, table = self.t, self.table
        view = match.view_for(0)  # public parts only: seat 0's own cards are never rendered here
        lines = [self._header(match)]
        for team in (0, 1):
            lines.append(f"{team_names(table, team)} · {stones_label(t, self._score(view.scores[team]))}")
        stage = LANCE_NAMES[view.lance] if view.lance else PHASE_NAMES.get(view.phase, view.phase.value)
        lines.append(
            t.format(
                N_("Mano: {name} · Lance: {lance}"), name=seat_name(table, hand.mano), lance=t.gettext(stage)
            )
        )
        lines.extend(story.mus_lines(t, table, view.actions))
        lines.extend(story.lance_lines(t, table, view))
        lines.extend(self._flashes(hand))
        rows: list[tuple[Button, ...]] = []
        if table.status is TableStatus.CANCELLED:
            lines.append(t.gettext(_("This table was cancelled.")))
            return self._group("table", lines, (), fresh, phase=CANCELLED)
        if hand.over:
            lines.append(t.gettext(_("Hand over: see the count below.")))
            return self._group("table", lines, (), fresh, phase=Phase.OVER.value)
        stake = story.stake_line(t, table, view)
        if stake is not None:
            lines.append(stake)
        deadline = 0.0
        if hand.turn is not None:
            seat = hand.turn
            lines.append(self._turn_line(seat))
            if table.seats[seat].human:
                rows.extend(self._turn_buttons(match, seat))
                deadline = self._turn_deadline(hand)
        rows.extend(self._flash_buttons(hand))
        rows.extend(own_row(t, table, self.web))
        return self._group("table", lines, tuple(rows), fresh, deadline=deadline, phase=view.phase.value)

    def _turn_deadline(self, hand: Hand) -> float:
        """When the turn shown times out (0: it does not, or a machine plays it): the table's pending
        deadline, if it is this very turn's."""
        table, shown = self.table, self.turn_seconds is not None and self.turn_seconds <= _NO_CLOCK
        this_turn = DeadlineKey(table.id, DeadlineKind.TURN, (turn_stamp(table.hand_no, len(hand.log)),))
        return table.due if shown and table.deadline == this_turn and table.due is not None else 0.0

    def _score(self, stones: int) -> int:
        """A score as shown: never past the target (the game is won there; what the count paid beyond it
        is not a score)."""
        assert self.match is not None
        return min(stones, self.match.config.target)

    def _header(self, match: Match) -> str:
        return header_line(self.t, self.table, match.config)

    def _turn_line(self, seat: int) -> str:
        t = self.t
        name = seat_name(self.table, seat)
        seconds = self.turn_seconds
        if self.table.seats[seat].human and seconds is not None and seconds <= _NO_CLOCK:
            # Translators: keep "⏱ {s} s" as it is: Discord shows a live countdown in its place.
            return t.format(N_("{name}'s turn (⏱ {s} s)"), name=name, s=round(seconds))
        return t.format(N_("{name}'s turn"), name=name)

    def _turn_buttons(self, match: Match, seat: int) -> list[tuple[Button, ...]]:
        """The legal actions of the person on turn: paso/quiero…, quick amounts, "more…", órdago."""
        hand = match.hand
        assert hand is not None
        if hand.phase is Phase.DISCARD:
            return []  # discards are chosen privately
        legal = hand.legal_actions(seat)
        stamp = turn_stamp(self.table.hand_no, len(hand.log))
        standing = hand.betting.proposal if hand.betting is not None else 0
        first: list[Button] = []
        amounts: list[Button] = []
        last: list[Button] = []
        more = False
        for action in legal:
            code = action_code(action)
            if code is None:
                continue
            if action.kind in (ActionKind.ENVIDO, ActionKind.SUBE):
                if action.amount not in QUICK_AMOUNTS:
                    more = True
                    continue
                total = standing + action.amount if action.kind is ActionKind.SUBE else 0
                label = button_label(self.t, action, total=total)
                amounts.append(Button(label, make_token(self.table.id, stamp, code)))
            elif action.kind is ActionKind.ORDAGO:
                last.append(Button(button_label(self.t, action), make_token(self.table.id, stamp, code)))
            else:
                first.append(Button(button_label(self.t, action), make_token(self.table.id, stamp, code)))
        if more:
            last.insert(0, Button(self.t.gettext(_("More…")), make_token(self.table.id, stamp, "more")))
        rows = [tuple(first + amounts[: max(0, 3 - len(first))])]
        rest = amounts[max(0, 3 - len(first)) :] + last
        if rest:
            rows.append(tuple(rest))
        return [row for row in rows if row]

    def _live_senas(self, hand: Hand) -> list[int]:
        """Señas a person can still catch: inside the window, with a human rival (machines catch at once)."""
        live = []
        for s in hand.senas:
            if not self._catchable(hand, s.index):
                continue
            rivals = ((s.seat + 1) % 4, (s.seat + 3) % 4)
            if any(self.table.seats[r].human for r in rivals):
                live.append(s.index)
        return live

    def _flashes(self, hand: Hand) -> list[str]:
        t = self.t
        return [
            t.format(N_("⚡ {name} made a seña!"), name=seat_name(self.table, s.seat))
            for s in hand.senas
            if self._catchable(hand, s.index)
        ]

    def _catchable(self, hand: Hand, index: int) -> bool:
        """Whether seña ``index`` may still be caught on some screen: its window, plus the lag allowed."""
        return hand.catch_window_open(index, max(hand.senas[index].made_at, self.now - self.catch_lag))

    def _flash_buttons(self, hand: Hand) -> list[tuple[Button, ...]]:
        buttons = [self._catch_button(hand, i) for i in self._live_senas(hand)]
        return [tuple(buttons[-4:])] if buttons else []

    def _catch_button(self, hand: Hand, index: int) -> Button:
        made = hand.senas
        label = catch_label(self.t, seat_name(self.table, made[index].seat), second_sena(made, index))
        return Button(label, make_token(self.table.id, hand_stamp(self.table.hand_no), f"catch{index}"))

    # --- private hand --------------------------------------------------------------------------------

    def private_hand(self, seat: int, *, fresh: bool = False) -> OutMessage | None:
        """A player's own cards, with discard, bet-amount and seña buttons; ``None`` for machine seats."""
        return PrivateView(self.table, self.match, self.web).private_hand(seat, fresh=fresh)

    def cards_alert(self, seat: int) -> str:
        """A seat's own cards in one short line (≤ 200 characters), for an alert only its player sees."""
        return PrivateView(self.table, self.match).cards_alert(seat)

    # --- showdown and results ------------------------------------------------------------------------

    def showdown(self) -> OutMessage:
        """The end of a hand: every hand (if shown), the count line by line with its reasons, the score."""
        match = self.match
        assert match is not None and match.hand is not None
        hand = match.hand
        t, table = self.t, self.table
        view = hand.view_for(0)  # the hand is over: what is shown is public
        lines = [t.format(N_("🂡 Hand {n} · count"), n=table.hand_no)]
        if hand.shown:
            for seat in hand.speaking_order():
                cards = f"{cards_label(hand.hands[seat])} ({hand_summary(t, hand.hands[seat])})"
                lines.append(labelled(t, seat_name(table, seat), cards))
        lines.extend(story.count_lines(t, table, view))
        stopped = story.stopped_line(t, table, view)
        if stopped is not None:
            lines.append(stopped)
        if hand.ordago is None:
            lines.append(named_score(t, table, SCORE, hand.scores, match.config.target))
        lines.extend(self.results_lines())
        return self._group("showdown", lines, (), True, phase=Phase.COUNT.value)

    def results_lines(self) -> list[str]:
        """Game, vaca and match results of the hand that just ended (and what to do once it is all over)."""
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
        if match.over:
            lines.append(t.gettext(_("The match is over. Type /newgame for another one.")))
        return lines

    def notice(self, text: str, *, slot: str = "notice") -> OutMessage:
        """A one-off message to the table's chat."""
        return OutMessage(slot=slot, text=text, chat=self.table.chat, fresh=True, table=self.table.id)

    def _group(
        self,
        slot: str,
        lines: Sequence[str],
        rows: tuple[tuple[Button, ...], ...],
        fresh: bool,
        *,
        deadline: float = 0.0,
        phase: str = "",
    ) -> OutMessage:
        return OutMessage(
            slot=slot,
            text="\n".join(lines),
            chat=self.table.chat,
            buttons=rows,
            fresh=fresh,
            table=self.table.id,
            deadline=deadline,
            phase=phase,
        )
