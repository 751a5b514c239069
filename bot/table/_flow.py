"""A person's moves at a running table: turn actions, the amount picker, discards, señas and catches.

Everything here is synchronous and works on one loaded table (a :class:`~bot.table._context.TableContext`): it
checks who may do what, calls the engine, then lets :mod:`bot.table._autoplay` play what needs nobody, and
records what happened (a seña made, a seña caught). The lobby is :mod:`bot.table._lobby`, deadlines are
:mod:`bot.table._timers`. The unit of work (:mod:`bot.app._unit_of_work`) loads the table, runs one step,
draws what its events say, and writes the table back with a compare-and-set.
"""

from __future__ import annotations

from bot.i18n.markers import N_
from bot.kernel import Token, UserRef, turn_stamp
from bot.table._autoplay import advance, after_sena, back_in_control
from bot.table._context import Refusal, TableContext
from bot.table._events import SenaCaught
from engine.actions import Action
from engine.cards import Card, card_name
from engine.errors import CatchError, MusError, SenaError
from engine.hand_types import Phase

_ = N_

NOT_NOW = _("That move is not allowed now.")
NOTHING_PICKED = _("Choose at least one card to discard.")
NOT_DISCARDING = _("It is not the time to discard.")
SENAS_OFF = _("Señas are off at this table.")
SENA_REFUSED = _("You cannot make that seña now.")
CATCH_OWN = _("That is your own seña: only your rivals can catch it.")
CATCH_PARTNER = _("That is your partner's seña: you see it anyway.")
CATCH_LATE = _("Too late!")
CATCH_DONE = _("You already caught it.")
SENA_MADE = _("Seña made: your partner sees it.")
DISCARD_QUEUED = _("Discard confirmed.")
STALE_CARD = _("That card is no longer in your hand.")
PICKER_OPEN = _("Every amount is in your private hand.")


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
    after_sena(ctx, record.index)
    ctx.save_match()
    return SENA_MADE


def catch(ctx: TableContext, user: UserRef, index: int, shown_at: float | None = None) -> None:
    """A rival presses the ⚡ of a seña: inside the window they learn which seña it was (the answer, an
    alert, is made from the :class:`~bot.table._events.SenaCaught` recorded). ``shown_at``: when the
    presser's surface showed the seña (the window counts from then), if it knows."""
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
        match.catch_sena(seat, index, ctx.now, shown_at=shown_at)
    except CatchError as exc:
        raise Refusal(CATCH_DONE if "already" in str(exc) else CATCH_LATE) from None
    except MusError:  # the hand is over: the window closed with it
        raise Refusal(CATCH_LATE) from None
    ctx.save_match()
    ctx.record(SenaCaught(seat, made.seat, made.sena))
