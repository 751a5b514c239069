"""The conversation flow of a table: lobby, start, turns, discards, señas, machine seats, deadlines.

Everything here is synchronous and works on one loaded table (a :class:`TableContext`): it checks who may do
what, calls the engine, advances machine seats and queued discards, and decides which deadline is pending.
The async shell (:mod:`bot.service`) loads the table, runs one of these functions, renders, and writes the
table back with a compare-and-set. A :class:`Refusal` means "answer the user, change nothing".
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.i18n.markers import N_
from bot.leaderboard import MACHINE_PREFIX, GameResult, PlayerRef
from bot.model import HandPosition, Seat, TableState, TableStatus, UserRef
from bot.render import LEVELS, MACHINE_NAMES, TARGET_CHOICES, Renderer
from bot.tokens import Token, turn_stamp
from bot.views import OutMessage
from engine.actions import Action, ActionKind
from engine.ai.baseline import BaselinePlayer
from engine.ai.policy import Policy
from engine.cards import Card, card_name, parse_cards
from engine.errors import CatchError, MusError, SenaError
from engine.hand import Phase
from engine.match import Match, MatchConfig
from engine.senas import Sena
from engine.state import match_state, restore_match
from engine.views import SeatView

_ = N_
log = logging.getLogger(__name__)
_FALLBACK = BaselinePlayer()

# Answers (msgids, translated by the service in the presser's language).
SEAT_TAKEN = _("That seat is taken.")
NOT_IN_LOBBY = _("The game has already started.")
ONLY_CREATOR = _("Only the player who created the table can do that.")
SIT_FIRST = _("Take a seat first.")
GAME_NOT_RUNNING = _("There is no game running at this table.")
NOT_NOW = _("That move is not allowed now.")
NOTHING_PICKED = _("Choose at least one card to discard.")
NOT_DISCARDING = _("It is not the time to discard.")
SENAS_OFF = _("Señas are off at this table.")
SENA_REFUSED = _("You cannot make that seña now.")
CATCH_OWN = _("That is your own seña: only your rivals can catch it.")
CATCH_PARTNER = _("That is your partner's seña: you see it anyway.")
CATCH_LATE = _("Too late!")
CATCH_DONE = _("You already caught it.")
CAUGHT = _("Caught! {name}'s seña: {sena}")
SENA_MADE = _("Seña made: your partner sees it.")
SEATED = _("You sit in team {team}.")
LEFT = _("You left your seat.")
STARTED = _("The game starts!")
CANCELLED = _("Table cancelled.")
DISCARD_QUEUED = _("Discard confirmed.")
STALE_CARD = _("That card is no longer in your hand.")
PICKER_OPEN = _("Every amount is in your private hand.")
MATCH_OVER = _("This game is over. Type /newgame for another one.")
OPTIONS_CHANGED = _("Options updated.")
TIMEOUT_NOTICE = _("⏱ {name} ran out of time: a machine played for them.")
AUTOPILOT_NOTICE = _("🤖 A machine keeps {name}'s seat until they play again.")
LOBBY_EXPIRED = _("Nobody started the game in time: the table was closed.")


#: What a step answers the user: a msgid, a msgid with its arguments, or nothing.
Answer = tuple[str, dict[str, object]] | str | None


class Refusal(Exception):
    """A command that must be answered with a message and change nothing."""

    def __init__(self, msgid: str, **kwargs: object) -> None:
        super().__init__(msgid)
        self.msgid = msgid
        self.kwargs = kwargs


@dataclass(frozen=True, slots=True)
class FlowSettings:
    """Timings and options of the flow (seconds)."""

    turn_timeout: float = 60.0
    machine_delay: float = 1.5
    next_hand_delay: float = 4.0
    catch_window: float = 3.0
    lobby_timeout: float = 900.0
    timeouts_to_autopilot: int = 2


@dataclass
class TableContext:
    """One loaded table during one command."""

    table: TableState
    match: Match | None
    now: float
    settings: FlowSettings
    rng: random.Random
    policy: Callable[[str], Policy]
    changed: bool = False
    table_fresh: bool = False
    hands_fresh: bool = False
    render_hands: bool = True
    alert: bool = False
    """Show the answer as an alert (a caught seña)."""
    messages: list[OutMessage] = field(default_factory=list)
    results: list[GameResult] = field(default_factory=list)
    flashes: list[tuple[str, float]] = field(default_factory=list)
    """Extra deadlines (key, due) to schedule: the end of a seña's catch window."""
    match_dirty: bool = False
    private_before: object = None
    """What the private hands showed when the command began (see :func:`private_signature`)."""

    # --- helpers ---------------------------------------------------------------------------------------

    def require_match(self) -> Match:
        """The live match, or a refusal if the table is not playing."""
        if self.table.status is TableStatus.FINISHED:
            raise Refusal(MATCH_OVER)
        if self.table.status is not TableStatus.PLAYING or self.match is None or self.match.hand is None:
            raise Refusal(GAME_NOT_RUNNING)
        return self.match

    def seat_of(self, user: UserRef) -> int:
        """The user's seat, or a refusal if not seated."""
        seat = self.table.seat_of(user.key)
        if seat is None:
            raise Refusal(_("You are not seated at this table."))
        return seat

    def renderer(self) -> Renderer:
        """A renderer of the current state."""
        return Renderer(self.table, self.match, self.now, turn_seconds=self.settings.turn_timeout)

    def save_match(self) -> None:
        """The match changed: it is serialised into the table once, just before the write."""
        self.table.updated_at = self.now
        self.match_dirty = True
        self.changed = True

    def sync_match(self) -> None:
        """Serialise a changed match into the table (called once per write)."""
        if self.match_dirty:
            self.table.match = None if self.match is None else match_state(self.match)
            self.match_dirty = False


def private_signature(ctx: TableContext) -> object:
    """Everything a private hand message depends on: when it is unchanged, private views need no redraw.

    (Bets by others do not appear in private messages; cards, discards, señas, catches, picks and
    languages do.)
    """
    match = ctx.match
    if match is None or match.hand is None:
        return None
    hand = match.hand
    return (
        ctx.table.hand_no,
        ctx.table.lang,
        ctx.table.status,
        _live_picker(ctx),
        hand.mus_round,
        hand.phase is Phase.DISCARD,
        hand.over,
        len(hand.senas),
        len(hand.catches),
        tuple(len(h) for h in hand.hands),
        tuple((tuple(s.discard_pick), s.discard_ready, s.lang) for s in ctx.table.seats),
    )


def _live_picker(ctx: TableContext) -> int | None:
    """The seat whose bet-amount picker is showing now, if any."""
    match = ctx.match
    assert match is not None and match.hand is not None
    hand = match.hand
    seat = hand.turn
    if seat is None or ctx.table.seats[seat].picker != turn_stamp(ctx.table.hand_no, len(hand.log)):
        return None
    return seat


def load_context(
    table: TableState,
    now: float,
    settings: FlowSettings,
    rng: random.Random,
    policy: Callable[[str], Policy],
    match: Match | None = None,
) -> TableContext:
    """Wrap a loaded table, replaying its match (unless the caller already holds it)."""
    if match is None and table.match is not None:
        match = restore_match(table.match, rng)
    return TableContext(table, match, now, settings, rng, policy)


# --- lobby -------------------------------------------------------------------------------------------


def new_table(
    table_id: str, chat_key: str, chat_title: str, private: bool, user: UserRef, lang: str, now: float
) -> TableState:
    """A fresh lobby created by ``user``."""
    return TableState(
        id=table_id,
        chat=chat_key,
        chat_title=chat_title,
        private=private,
        creator=user.key,
        lang=lang,
        created_at=now,
        updated_at=now,
    )


def join(ctx: TableContext, user: UserRef, seat: int) -> str:
    """Sit ``user`` at ``seat`` (moving them if already seated)."""
    table = ctx.table
    if table.status is not TableStatus.LOBBY:
        raise Refusal(NOT_IN_LOBBY)
    current = table.seat_of(user.key)
    if current == seat:
        return SEATED
    if not table.seats[seat].empty:
        raise Refusal(SEAT_TAKEN)
    if current is not None:
        table.seats[current] = Seat()
    table.seats[seat] = Seat(user=user.key, name=user.name[:32] or "?", lang=user.lang or table.lang)
    ctx.changed = True
    return SEATED


def leave(ctx: TableContext, user: UserRef) -> str:
    """Free the user's seat in the lobby."""
    if ctx.table.status is not TableStatus.LOBBY:
        raise Refusal(NOT_IN_LOBBY)
    seat = ctx.seat_of(user)
    ctx.table.seats[seat] = Seat()
    ctx.changed = True
    return LEFT


def _require_organiser(ctx: TableContext, user: UserRef) -> None:
    """The creator decides; if the creator has left the table, any seated player may."""
    table = ctx.table
    if user.key == table.creator:
        return
    creator_present = table.seat_of(table.creator) is not None or (
        table.status is TableStatus.LOBBY and (ctx.now - table.updated_at < 120)
    )
    if creator_present or table.seat_of(user.key) is None:
        raise Refusal(ONLY_CREATOR)


def change_option(ctx: TableContext, user: UserRef, code: str) -> str:
    """Toggle or cycle a lobby option (señas, target, mode)."""
    if ctx.table.status is not TableStatus.LOBBY:
        raise Refusal(NOT_IN_LOBBY)
    _require_organiser(ctx, user)
    opts = ctx.table.options
    if code == "o_senas":
        opts.senas = not opts.senas
    elif code == "o_target":
        i = TARGET_CHOICES.index(opts.target) if opts.target in TARGET_CHOICES else -1
        opts.target = TARGET_CHOICES[(i + 1) % len(TARGET_CHOICES)]
    elif code == "o_mode":
        opts.mode = "game" if opts.mode == "match" else "match"
    elif code == "o_level":
        i = LEVELS.index(opts.difficulty) if opts.difficulty in LEVELS else -1
        opts.difficulty = LEVELS[(i + 1) % len(LEVELS)]
    ctx.changed = True
    return OPTIONS_CHANGED


def start(ctx: TableContext, user: UserRef, *, machines_only: bool = False) -> str:
    """Fill empty seats with machines and deal the first hand (``machines_only``: a demo table)."""
    table = ctx.table
    if table.status is not TableStatus.LOBBY:
        raise Refusal(NOT_IN_LOBBY)
    _require_organiser(ctx, user)
    if not table.humans() and not machines_only:
        raise Refusal(SIT_FIRST)
    for i, seat in enumerate(table.seats):
        if seat.empty:
            table.seats[i] = Seat(machine=True, name=MACHINE_NAMES[i], lang=table.lang)
    opts = table.options
    single = opts.mode == "game"
    config = MatchConfig(
        target=opts.target,
        games_per_vaca=1 if single else 2,
        vacas_per_match=1 if single else 2,
        senas=opts.senas,
        catch_window=ctx.settings.catch_window,
    )
    ctx.match = Match(config, first_mano=ctx.rng.randrange(4))
    table.status = TableStatus.PLAYING
    _deal(ctx)
    advance(ctx)
    return STARTED


def cancel(ctx: TableContext, user: UserRef) -> str:
    """Cancel the table (lobby or game); the creator, or a seated player if the creator is gone."""
    if ctx.table.status in (TableStatus.FINISHED, TableStatus.CANCELLED):
        raise Refusal(GAME_NOT_RUNNING)
    _require_organiser(ctx, user)
    ctx.table.status = TableStatus.CANCELLED
    ctx.changed = True
    return CANCELLED


# --- playing -----------------------------------------------------------------------------------------


def act(ctx: TableContext, user: UserRef, token: Token, action: Action) -> None:
    """A turn action from a button: seated, on turn, drawn for this very step, legal."""
    match = ctx.require_match()
    hand = match.hand
    assert hand is not None
    seat = ctx.seat_of(user)
    # A button drawn for an earlier moment (the loser of a double press, an old message): already played.
    if token.stamp != turn_stamp(ctx.table.hand_no, len(hand.log)):
        raise Refusal(_("Already played."))
    if hand.turn != seat:
        raise Refusal(_("Not your turn."))
    if not hand.can_act(seat, action):
        raise Refusal(NOT_NOW)
    back_in_control(ctx, seat)
    match.act(seat, action)
    ctx.save_match()
    advance(ctx)


def pick(ctx: TableContext, user: UserRef, card: Card) -> None:
    """Toggle one of the player's cards for discarding (the button names the card it toggles)."""
    match = ctx.require_match()
    hand = match.hand
    assert hand is not None
    seat = ctx.seat_of(user)
    cards = hand.hands[seat]
    if hand.phase is not Phase.DISCARD or len(cards) != 4:
        raise Refusal(NOT_DISCARDING)
    if card not in cards:
        raise Refusal(STALE_CARD)  # a button from an older copy of the hand, drawn for other cards
    s = ctx.table.seats[seat]
    name = card_name(card)
    s.discard_pick = (
        [c for c in s.discard_pick if c != name] if name in s.discard_pick else [*s.discard_pick, name]
    )
    s.discard_ready = False
    back_in_control(ctx, seat)
    ctx.changed = True


def open_picker(ctx: TableContext, user: UserRef, token: Token) -> str:
    """ "More…": the player on turn gets every legal amount in their private hand, for this turn only."""
    match = ctx.require_match()
    hand = match.hand
    assert hand is not None
    seat = ctx.seat_of(user)
    stamp = turn_stamp(ctx.table.hand_no, len(hand.log))
    if token.stamp != stamp:
        raise Refusal(_("Already played."))
    if hand.turn != seat:
        raise Refusal(_("Not your turn."))
    back_in_control(ctx, seat)
    s = ctx.table.seats[seat]
    if s.picker != stamp:
        s.picker = stamp
        ctx.changed = True
    return PICKER_OPEN


def confirm_discard(ctx: TableContext, user: UserRef) -> str:
    """Confirm the picked cards; they are discarded when the seat's turn to discard comes."""
    match = ctx.require_match()
    hand = match.hand
    assert hand is not None
    seat = ctx.seat_of(user)
    s = ctx.table.seats[seat]
    if hand.phase is not Phase.DISCARD or len(hand.hands[seat]) != 4:
        raise Refusal(NOT_DISCARDING)
    if not s.discard_pick:
        raise Refusal(NOTHING_PICKED)
    s.discard_ready = True
    back_in_control(ctx, seat)
    ctx.changed = True
    advance(ctx)
    return DISCARD_QUEUED


def make_sena(ctx: TableContext, user: UserRef, name: str) -> str:
    """A seña by a seated player; machine rivals may catch it at once."""
    match = ctx.require_match()
    seat = ctx.seat_of(user)
    if not match.config.senas:
        raise Refusal(SENAS_OFF)
    try:
        record = match.make_sena(seat, name, ctx.now)
    except (SenaError, MusError):
        raise Refusal(SENA_REFUSED) from None
    back_in_control(ctx, seat)
    _machines_catch(ctx, record.index)
    ctx.flashes.append(
        (
            f"{ctx.table.id}|flash|{ctx.table.hand_no}|{record.index}",
            ctx.now + match.config.catch_window + 0.1,
        )
    )
    ctx.save_match()
    return SENA_MADE


def catch(ctx: TableContext, user: UserRef, index: int) -> tuple[str, dict[str, object]]:
    """A rival presses the ⚡ of a seña: inside the window they learn which seña it was."""
    match = ctx.require_match()
    hand = match.hand
    assert hand is not None
    seat = ctx.seat_of(user)
    if not 0 <= index < len(hand.senas):
        raise Refusal(CATCH_LATE)
    made = hand.senas[index]
    if made.seat == seat:
        raise Refusal(CATCH_OWN)
    if made.seat % 2 == seat % 2:
        raise Refusal(CATCH_PARTNER)
    try:
        match.catch_sena(seat, index, ctx.now)
    except CatchError as exc:
        raise Refusal(CATCH_DONE if "already" in str(exc) else CATCH_LATE) from None
    except MusError:  # the hand is over: the window closed with it
        raise Refusal(CATCH_LATE) from None
    ctx.save_match()
    ctx.render_hands = False  # only the catcher's hand changes (it now names the seña)
    private = ctx.renderer().private_hand(seat)
    if private is not None:
        ctx.messages.append(private)
    from bot.render import SENA_NAMES, seat_name  # local: names only needed for this answer

    return CAUGHT, {"name": seat_name(ctx.table, made.seat), "sena": SENA_NAMES[made.sena]}


# --- machines, queued discards, deals ------------------------------------------------------------------


def back_in_control(ctx: TableContext, seat: int) -> None:
    """The player acted: forget their timeouts and take the seat back from the machine."""
    s = ctx.table.seats[seat]
    if s.timeouts or s.autopilot:
        s.timeouts = 0
        s.autopilot = False
        ctx.changed = True


def _machine_plays(ctx: TableContext, seat: int) -> bool:
    s = ctx.table.seats[seat]
    return s.machine or s.autopilot


def _machines_catch(ctx: TableContext, sena_index: int) -> None:
    match = ctx.match
    assert match is not None and match.hand is not None
    made = match.hand.senas[sena_index]
    for rival in ((made.seat + 1) % 4, (made.seat + 3) % 4):
        if not ctx.table.seats[rival].machine:
            continue
        view = match.view_for(rival)
        policy = ctx.policy(ctx.table.options.difficulty)
        if policy.wants_catch(view, view.senas[sena_index], ctx.rng):
            match.catch_sena(rival, sena_index, ctx.now)


def machine_move(ctx: TableContext, seat: int) -> None:
    """The machine decides for ``seat`` (a machine seat, or a human's on timeout/autopilot)."""
    match = ctx.match
    assert match is not None and match.hand is not None
    hand = match.hand
    policy = ctx.policy(ctx.table.options.difficulty)
    s = ctx.table.seats[seat]
    if s.machine and hand.config.senas:
        sena = policy.choose_sena(match.view_for(seat), ctx.rng)
        if sena is not None:
            try:
                record = match.make_sena(seat, sena, ctx.now)
            except MusError:
                record = None
            if record is not None:
                _machines_catch(ctx, record.index)
                ctx.flashes.append(
                    (
                        f"{ctx.table.id}|flash|{ctx.table.hand_no}|{record.index}",
                        ctx.now + hand.config.catch_window + 0.1,
                    )
                )
    action = _picked_discard(ctx, seat) if hand.phase is Phase.DISCARD else None
    if action is None:
        action = _machine_decision(policy, match.view_for(seat), ctx.rng)
    _apply(ctx, seat, action)


def _machine_decision(policy: Policy, view: SeatView, rng: random.Random) -> Action:
    """The policy's choice; should a player ever fail or choose an illegal action, the baseline decides.

    A table must never be stuck on a machine's turn because of a bug in one machine player.
    """
    try:
        action = policy.decide(view, rng)
        if action in view.legal:
            return action
        log.error("machine player %s chose an illegal action %s", policy.name, action)
    except Exception:
        log.exception("machine player %s failed", policy.name)
    return _FALLBACK.decide(view, rng)


def _picked_discard(ctx: TableContext, seat: int) -> Action | None:
    s = ctx.table.seats[seat]
    if not s.discard_pick:
        return None
    match = ctx.match
    assert match is not None and match.hand is not None
    cards = tuple(parse_cards(s.discard_pick))
    action = Action(ActionKind.DISCARD, cards=cards)
    return action if match.hand.can_act(seat, action) else None


def _apply(ctx: TableContext, seat: int, action: Action) -> None:
    match = ctx.match
    assert match is not None and match.hand is not None
    hand = match.hand
    before_round = hand.mus_round
    match.act(seat, action)
    if action.kind is ActionKind.DISCARD:
        s = ctx.table.seats[seat]
        s.discard_pick, s.discard_ready = [], False
    if hand.mus_round != before_round:
        for s in ctx.table.seats:
            s.discard_pick, s.discard_ready = [], False
        ctx.hands_fresh = True  # new cards: a new private message, which notifies (an edit would not)
    ctx.save_match()


def advance(ctx: TableContext, *, machines_now: bool = False) -> None:
    """Play everything that needs no human now: machine turns (without a pause), queued discards, deals.

    Stops at a human decision, or at a machine turn / next deal when those wait for a pause (a deadline).
    With ``machines_now`` (the pause before a machine's move has just ended) the machines that follow play
    at once too: a run of machine moves is one pause and one redraw of the table, whose story lists every
    word they said (a redraw per move would cost the group's message budget for nothing).
    """
    match = ctx.match
    if match is None or ctx.table.status is not TableStatus.PLAYING:
        return
    for _guard in range(10_000):
        hand = match.hand
        assert hand is not None
        if hand.over:
            if not _hand_finished(ctx):
                return
            if ctx.settings.next_hand_delay > 0:
                return
            _deal(ctx)
            continue
        seat = hand.turn
        assert seat is not None
        s = ctx.table.seats[seat]
        if hand.phase is Phase.DISCARD and s.discard_ready and not _machine_plays(ctx, seat):
            action = _picked_discard(ctx, seat)
            if action is not None:
                _apply(ctx, seat, action)
                continue
        if _machine_plays(ctx, seat) and (machines_now or ctx.settings.machine_delay <= 0):
            machine_move(ctx, seat)
            continue
        return
    raise RuntimeError("advance() did not settle")  # a bug, never a long game: hands are bounded


def _hand_finished(ctx: TableContext) -> bool:
    """Report a finished hand once (showdown, results); return whether the match goes on."""
    match = ctx.match
    assert match is not None and match.hand is not None
    table = ctx.table
    if table.reported_hand >= table.hand_no:
        return not match.over
    table.reported_hand = table.hand_no
    # Fresh when this command dealt the hand too (played out at once): it must not edit the last hand's table.
    ctx.messages.append(ctx.renderer().table_message(fresh=ctx.table_fresh))
    ctx.table_fresh = False
    ctx.messages.append(ctx.renderer().showdown())
    outcome = match.last_outcome
    if outcome is not None and outcome.game_winner is not None:
        ctx.results.extend(_results(ctx, outcome.game_winner, outcome.vaca_winner, outcome.match_winner))
    if match.over:
        table.status = TableStatus.FINISHED
    ctx.changed = True
    return not match.over


def _results(ctx: TableContext, game: int, vaca: int | None, won_match: int | None) -> list[GameResult]:
    table = ctx.table
    players = []
    for i, s in enumerate(table.seats):
        if s.user is not None:
            players.append(PlayerRef(s.user, s.name))
        else:
            key = f"{MACHINE_PREFIX}{table.options.difficulty}:{MACHINE_NAMES[i].lower()}"
            players.append(PlayerRef(key, f"🤖 {MACHINE_NAMES[i]}"))
    teams = ((players[0], players[2]), (players[1], players[3]))
    results = [GameResult(table.chat, teams, game, "game")]
    if table.options.mode == "match":
        if vaca is not None:
            results.append(GameResult(table.chat, teams, vaca, "vaca"))
        if won_match is not None:
            results.append(GameResult(table.chat, teams, won_match, "match"))
    return results


def _deal(ctx: TableContext) -> None:
    match = ctx.match
    assert match is not None
    ctx.table.position = HandPosition(
        game=sum(match.games) + 1, vaca=sum(match.vacas) + 1, games=(match.games[0], match.games[1])
    )
    match.new_hand(ctx.rng)
    ctx.table.hand_no += 1
    for s in ctx.table.seats:
        s.discard_pick, s.discard_ready = [], False
    ctx.table_fresh = ctx.hands_fresh = True
    ctx.save_match()


# --- deadlines ---------------------------------------------------------------------------------------


def pending_deadline(ctx: TableContext) -> tuple[str, float] | None:
    """The one deadline this table waits for now (key, due), or ``None``.

    Keys name the table, the kind and the exact moment they were armed for, so a deadline that fires after
    the table moved on is recognised and ignored.
    """
    table, match, s = ctx.table, ctx.match, ctx.settings
    tid = table.id
    if table.status is TableStatus.LOBBY:
        return f"{tid}|lobby|0", table.created_at + s.lobby_timeout
    if table.status is not TableStatus.PLAYING or match is None or match.hand is None:
        return None
    hand = match.hand
    if hand.over:
        return f"{tid}|deal|{table.hand_no}", ctx.now + s.next_hand_delay
    seat = hand.turn
    assert seat is not None
    stamp = turn_stamp(table.hand_no, len(hand.log))
    if _machine_plays(ctx, seat):
        return f"{tid}|machine|{stamp}", ctx.now + s.machine_delay
    return f"{tid}|turn|{stamp}", ctx.now + s.turn_timeout


def arm(ctx: TableContext) -> None:
    """Record the pending deadline in the table (keeping an unchanged one's due time)."""
    pending = pending_deadline(ctx)
    table = ctx.table
    if pending is None:
        if table.due_key is not None:
            table.due_key, table.due = None, None
            ctx.changed = True
        return
    key, due = pending
    if key != table.due_key:
        table.due_key, table.due = key, due
        ctx.changed = True


def fire(ctx: TableContext, key: str) -> bool:
    """A deadline fired: act on it if it is still the table's pending one; return whether it was."""
    table = ctx.table
    parts = key.split("|")
    kind = parts[1] if len(parts) > 1 else ""
    if kind == "flash":
        # The catch window closed: nothing changes, the table is drawn again without the ⚡.
        return len(parts) == 4 and parts[2] == str(table.hand_no) and table.status is TableStatus.PLAYING
    if key != table.due_key:
        return False
    if kind == "lobby":
        table.status = TableStatus.CANCELLED
        ctx.changed = True
        ctx.messages.append(ctx.renderer().notice(ctx.renderer().t.gettext(LOBBY_EXPIRED)))
        return True
    match = ctx.match
    if match is None or match.hand is None:
        return False
    if kind == "deal":
        _deal(ctx)
    elif kind in ("machine", "turn"):
        seat = match.hand.turn
        if seat is None:
            return False
        if kind == "turn":
            _timeout(ctx, seat)
        machine_move(ctx, seat)
    else:
        return False
    advance(ctx, machines_now=kind in ("machine", "turn"))
    return True


def _timeout(ctx: TableContext, seat: int) -> None:
    s = ctx.table.seats[seat]
    s.timeouts += 1
    t = ctx.renderer().t
    name = s.name
    if s.timeouts >= ctx.settings.timeouts_to_autopilot and not s.autopilot:
        s.autopilot = True
        ctx.messages.append(ctx.renderer().notice(t.format(AUTOPILOT_NOTICE, name=name)))
    else:
        ctx.messages.append(ctx.renderer().notice(t.format(TIMEOUT_NOTICE, name=name)))
    ctx.changed = True


def parse_sena(code: str) -> Sena | None:
    """The seña of a ``sena_…`` code."""
    try:
        return Sena(code.removeprefix("sena_"))
    except ValueError:
        return None
