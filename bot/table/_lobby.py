"""The lobby of a table: seats, options, start (machines fill the empty seats) and cancel."""

from __future__ import annotations

from bot.i18n.markers import N_
from bot.kernel import LEVELS, MACHINE_NAMES, TARGET_CHOICES, Seat, TableState, TableStatus, UserRef
from bot.table._autoplay import advance, deal
from bot.table._context import GAME_NOT_RUNNING, Refusal, TableContext
from engine.match import Match, MatchConfig

_ = N_

SEAT_TAKEN = _("That seat is taken.")
NOT_IN_LOBBY = _("The game has already started.")
ONLY_CREATOR = _("Only the player who created the table can do that.")
SIT_FIRST = _("Take a seat first.")
SEATED = _("You joined team {team}.")
LEFT = _("You left your seat.")
STARTED = _("The game starts!")
CANCELLED = _("Table cancelled.")
OPTIONS_CHANGED = _("Options updated.")

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


def take_seat(ctx: TableContext, user: UserRef, seat: int) -> str:
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


def leave_seat(ctx: TableContext, user: UserRef) -> str:
    """Free the user's seat in the lobby."""
    if ctx.table.status is not TableStatus.LOBBY:
        raise Refusal(NOT_IN_LOBBY)
    seat = ctx.seat_of(user)
    ctx.table.seats[seat] = Seat()
    ctx.changed = True
    return LEFT


def may_organise(table: TableState, user_key: str, now: float) -> bool:
    """Whether ``user_key`` may choose the options, start or cancel ``table`` at ``now``: the creator
    decides; if the creator has left the table (a lobby's creator for two minutes), any seated player may.
    (Surfaces that draw these buttons to one person, as the web table does, ask this too.)"""
    if user_key == table.creator:
        return True
    creator_present = table.seat_of(table.creator) is not None or (
        table.status is TableStatus.LOBBY and (now - table.updated_at < 120)
    )
    return not creator_present and table.seat_of(user_key) is not None


def _require_organiser(ctx: TableContext, user: UserRef) -> None:
    if not may_organise(ctx.table, user.key, ctx.now):
        raise Refusal(ONLY_CREATOR)


def change_option(ctx: TableContext, user: UserRef, option: str) -> str:
    """Toggle or cycle a lobby option (``senas``, ``target``, ``mode``, ``level``)."""
    if ctx.table.status is not TableStatus.LOBBY:
        raise Refusal(NOT_IN_LOBBY)
    _require_organiser(ctx, user)
    opts = ctx.table.options
    if option == "senas":
        opts.senas = not opts.senas
    elif option == "target":
        i = TARGET_CHOICES.index(opts.target) if opts.target in TARGET_CHOICES else -1
        opts.target = TARGET_CHOICES[(i + 1) % len(TARGET_CHOICES)]
    elif option == "mode":
        opts.mode = "game" if opts.mode == "match" else "match"
    elif option == "level":
        i = LEVELS.index(opts.difficulty) if opts.difficulty in LEVELS else -1
        opts.difficulty = LEVELS[(i + 1) % len(LEVELS)]
    ctx.changed = True
    return OPTIONS_CHANGED


def start_game(ctx: TableContext, user: UserRef, *, machines_only: bool = False) -> str:
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
    deal(ctx)
    advance(ctx)
    return STARTED


def cancel_table(ctx: TableContext, user: UserRef, *, moderator: bool = False) -> str:
    """Cancel the table (lobby or game); the creator, or a seated player if the creator is gone — or a
    ``moderator`` of the chat (the platform says who: on Discord, members who may manage messages)."""
    if ctx.table.finished:
        raise Refusal(GAME_NOT_RUNNING)
    if not moderator:
        _require_organiser(ctx, user)
    ctx.table.status = TableStatus.CANCELLED
    ctx.changed = True
    return CANCELLED
