"""What one page may see of a table, as JSON, and the frames of a change, one per move.

A page is built from the engine's per-seat view (:meth:`engine.match.Match.view_for`, the view the chats
draw), never from the table's hidden state: a seated page from its seat's view, a spectator's from the public
one (:func:`public_view`: no cards but those shown at the showdown, no seña's meaning). The page's buttons
carry the same tokens as the chat buttons (:mod:`bot.kernel`), which the service checks as it checks theirs.

**Each move in turn.** A change may hold several moves (a run of machine moves is one write). The hand's
record replays to the state after each of them (:func:`hand_at`, with :func:`engine.record.hand_after`), so
a page is sent one frame per move and sees every word said, the last answer before the count included.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.i18n import Translator, normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import (
    TableState,
    TableStatus,
    action_code,
    hand_stamp,
    make_token,
    pick_code,
    sena_stamp,
    turn_stamp,
)
from bot.screens import (
    LANCE_NAMES,
    PHASE_NAMES,
    SENA_NAMES,
    Renderer,
    action_label,
    button_label,
    count_lines,
    hand_summary,
    header_line,
    lance_lines,
    mus_lines,
    seat_name,
    stake_line,
    stones_label,
    stopped_line,
    team_names,
)
from engine.actions import ActionKind
from engine.cards import card_name
from engine.hand import Hand
from engine.hand_types import Phase
from engine.match import Match
from engine.record import hand_after, record_of
from engine.senas import MAX_SENAS_PER_HAND, true_senas
from engine.views import SeatView, hand_view

_ = N_

# Texts only the page shows (the rest are the chats' own words, from bot.screens).
SPECTATING = _("You are watching: you see what the whole table sees.")
NOT_STARTED = _("The game has not started yet: it begins from the chat.")
TABLE_CANCELLED = _("This table was cancelled.")
MATCH_DONE = _("The match is over.")
GAMES_VACAS = _("games {a}–{b} · vacas {c}–{d}")
YOUR_CARDS = _("Your cards")
TAP_TO_DISCARD = _("Tap the cards to discard, then confirm.")
RECONNECTING = _("Connection lost: reconnecting…")
THE_COUNT = _("The count")
CATCH_HINT = _("Tap ⚡ quickly to catch a rival's seña.")
RULES = _("Rules")

#: The page's own texts, sent with every frame in the reader's language.
PAGE_TEXTS = {
    "spectating": SPECTATING,
    "your_cards": YOUR_CARDS,
    "tap_to_discard": TAP_TO_DISCARD,
    "reconnecting": RECONNECTING,
    "the_count": THE_COUNT,
    "catch_hint": CATCH_HINT,
    "rules": RULES,
}

Json = dict[str, Any]

#: A turn longer than this has no clock on the page (the solo web game's: a person never times out there).
NO_CLOCK = 3600.0


def hand_at(hand: Hand, entries: int) -> Hand:
    """The hand as it stood after its first ``entries`` record entries (actions, señas, catches)."""
    return hand_after(record_of(hand), entries)


def public_view(view: SeatView) -> SeatView:
    """What everyone at the table sees: a seat's view without its cards, its legal moves, its discards'
    cards and the meaning of any seña."""
    return replace(
        view,
        seat=0,
        cards=(),
        legal=(),
        actions=tuple(replace(a, cards=()) for a in view.actions),
        senas=tuple(replace(s, sena=None) for s in view.senas),
        senas_left=0,
    )


def seat_view(table: TableState, match: Match, hand: Hand, seat: int | None) -> SeatView:
    """The view of ``seat`` (``None``: a spectator's, the public one) of ``hand``, a hand of ``match``."""
    view = hand_view(hand, 0 if seat is None else seat)
    view = replace(
        view,
        games=table.position.games,
        vacas=(match.vacas[0], match.vacas[1]),
        games_per_vaca=match.config.games_per_vaca,
        vacas_per_match=match.config.vacas_per_match,
    )
    return public_view(view) if seat is None else view


def reader_language(table: TableState, seat: int | None, lang: str | None) -> str:
    """The page's language: its seat's, else the visitor's own, else the table's."""
    if seat is not None:
        return table.seats[seat].lang
    return normalize_language(lang) if lang else table.lang


def texts(t: Translator) -> Json:
    """The page's own texts in ``t``'s language."""
    return {key: t.gettext(msgid) for key, msgid in PAGE_TEXTS.items()}


def page(
    table: TableState,
    match: Match,
    hand: Hand,
    seat: int | None,
    *,
    lang: str | None,
    version: int,
    live: bool,
    now: float,
) -> Json:
    """One frame of the page of ``seat`` (``None``: a spectator): ``hand`` is the live hand (``live``, with
    the buttons, the turn's clock and the results) or the same hand replayed to an earlier move."""
    reader = reader_language(table, seat, lang)
    t = translator(reader)
    view = seat_view(table, match, hand, seat)
    target = view.target
    frame: Json = {
        "v": version,
        "hand": table.hand_no,
        "k": len(hand.journal),
        "live": live,
        "status": table.status.value,
        "seat": seat,
        "title": header_line(t, table, match.config),
        "seats": _seats(t, table, view),
        "teams": [
            {
                "names": team_names(table, team),
                "score": stones_label(t, min(view.scores[team], target)),
                "stones": min(view.scores[team], target),
                "record": t.format(
                    GAMES_VACAS, a=view.games[0], b=view.games[1], c=view.vacas[0], d=view.vacas[1]
                ),
            }
            for team in (0, 1)
        ],
        "stage": _stage(t, table, view),
        "story": mus_lines(t, table, view.actions) + lance_lines(t, table, view),
        "stake": stake_line(t, table, view),
        "turn": None if view.turn is None else {"seat": view.turn, "line": _turn_line(t, table, view.turn)},
        "cards": [card_name(c) for c in view.cards],
        "summary": hand_summary(t, view.cards) if len(view.cards) == 4 else "",
        "known": _known_senas(t, table, view) if seat is not None else [],
        "flashes": _flashes(table, view, seat),
        "window": view.catch_window,
        "lang": reader,
        "texts": texts(t),
        "over": hand.over,
    }
    if hand.over:
        frame["shown"] = None if view.shown is None else [[card_name(c) for c in h] for h in view.shown]
        frame["count"] = count_lines(t, table, view) + [x for x in [stopped_line(t, table, view)] if x]
        frame["results"] = Renderer(table, match, now).results_lines() if live else []
    if live and seat is not None and not hand.over and table.status is TableStatus.PLAYING:
        frame["moves"] = _moves(t, table, hand, view)
        frame["discard"] = _discard(t, table, view)
        frame["senas"] = _sena_buttons(t, table, view)
    if (
        live
        and view.turn is not None
        and table.seats[view.turn].human
        and table.due is not None
        and table.due - now < NO_CLOCK
    ):
        frame["turn"]["due_in"] = max(0.0, round(table.due - now, 1))
    if seat is None:
        frame["spectator"] = True
    return frame


def _stage(t: Translator, table: TableState, view: SeatView) -> str:
    stage = LANCE_NAMES[view.lance] if view.lance else PHASE_NAMES.get(view.phase, view.phase.value)
    return t.format(
        N_("Mano: {name} · Lance: {lance}"), name=seat_name(table, view.mano), lance=t.gettext(stage)
    )


def _turn_line(t: Translator, table: TableState, seat: int) -> str:
    return t.format(N_("{name}'s turn"), name=seat_name(table, seat))


def _seats(t: Translator, table: TableState, view: SeatView) -> list[Json]:
    """Each seat: its name, whether a machine sits there, the mano, the turn, and its last word in the
    phase being played, or the last one played once the hand is over (a speech bubble)."""
    last: dict[int, str] = {}
    # Once the hand is over, the bubbles keep the last words said (the last answer stays in sight).
    phase = view.actions[-1].phase if view.actions and view.phase in (Phase.COUNT, Phase.OVER) else view.phase
    for action in view.actions:
        if action.phase is phase:
            last[action.seat] = action_label(t, action.kind, action.amount, action.total)
            if action.kind is ActionKind.DISCARD:
                last[action.seat] = t.format(N_("discards {n}"), n=action.count)
    return [
        {
            "name": seat_name(table, s),
            "machine": table.seats[s].machine or table.seats[s].autopilot,
            "mano": view.mano == s,
            "turn": view.turn == s,
            "said": last.get(s, ""),
        }
        for s in range(4)
    ]


def _known_senas(t: Translator, table: TableState, view: SeatView) -> list[str]:
    """The señas this seat knows the meaning of: its partner's, and those it caught."""
    lines = []
    for sv in view.senas:
        if sv.sena is None or sv.seat == view.seat:
            continue
        name = seat_name(table, sv.seat)
        sena = t.gettext(SENA_NAMES[sv.sena])
        if sv.seat == view.partner:
            lines.append(t.format(N_("Your partner {name} made you a seña: {sena}"), name=name, sena=sena))
        else:
            lines.append(t.format(N_("You caught {name}'s seña: {sena}"), name=name, sena=sena))
    return lines


def _flashes(table: TableState, view: SeatView, seat: int | None) -> list[Json]:
    """Señas made this hand that this page may try to catch (a rival's, not yet caught): their ⚡ shows for
    the catch window from when the page showed it. A spectator sees that a seña was made, nothing to tap."""
    flashes = []
    for sv in view.senas:
        rival = seat is not None and sv.seat % 2 != seat % 2 and sv.sena is None
        flash: Json = {"index": sv.index, "seat": sv.seat, "name": f"⚡ {seat_name(table, sv.seat)}"}
        if rival:
            flash["token"] = make_token(table.id, hand_stamp(table.hand_no), f"catch{sv.index}")
        flashes.append(flash)
    return flashes


def _moves(t: Translator, table: TableState, hand: Hand, view: SeatView) -> Json | None:
    """The turn's moves: the calls (buttons), the bet amounts (a stepper) and órdago, each with its token."""
    if not view.on_turn or view.phase is Phase.DISCARD:
        return None
    stamp = turn_stamp(table.hand_no, len(hand.log))
    standing = view.betting.proposal if view.betting is not None else 0
    calls: list[Json] = []
    amounts: list[Json] = []
    ordago = None
    for action in view.legal:
        code = action_code(action)
        if code is None:
            continue
        token = make_token(table.id, stamp, code)
        if action.kind in (ActionKind.ENVIDO, ActionKind.SUBE):
            total = standing + action.amount if action.kind is ActionKind.SUBE else 0
            label = button_label(t, action, total=total)
            amounts.append({"amount": action.amount, "label": label, "token": token})
        elif action.kind is ActionKind.ORDAGO:
            ordago = {"label": button_label(t, action), "token": token}
        else:
            calls.append({"code": code, "label": button_label(t, action), "token": token})
    return {"calls": calls, "amounts": amounts, "ordago": ordago}


def _discard(t: Translator, table: TableState, view: SeatView) -> Json | None:
    """During the discards, before this seat discarded: each card's pick token, the picked ones, and the
    confirmation once one is picked."""
    if view.phase is not Phase.DISCARD or len(view.cards) != 4:
        return None
    s = table.seats[view.seat]
    stamp = hand_stamp(table.hand_no)
    picked = [name for name in s.discard_pick if name in {card_name(c) for c in view.cards}]
    confirm = None
    if picked:
        label = t.nformat("Discard {n} card", "Discard {n} cards", len(picked))
        confirm = {"label": label, "token": make_token(table.id, stamp, "discard")}
    return {
        "picks": {card_name(c): make_token(table.id, stamp, pick_code(c)) for c in view.cards},
        "picked": picked,
        "ready": s.discard_ready,
        "confirm": confirm,
        "hint": t.gettext(
            N_("Discard confirmed: waiting for your turn.") if s.discard_ready else TAP_TO_DISCARD
        ),
    }


def _sena_buttons(t: Translator, table: TableState, view: SeatView) -> list[Json]:
    """The señas this seat may make to its partner now (three at most)."""
    if not (view.senas_enabled and view.senas_left > 0 and len(view.cards) == 4):
        return []
    stamp = sena_stamp(table.hand_no, MAX_SENAS_PER_HAND - view.senas_left)
    return [
        {
            "label": t.format(N_("Seña: {sena}"), sena=t.gettext(SENA_NAMES[sena])),
            "token": make_token(table.id, stamp, f"sena_{sena.value}"),
        }
        for sena in true_senas(view.cards)[:3]
    ]
