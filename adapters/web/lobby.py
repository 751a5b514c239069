"""A table before and after its game, on the page: the lobby (seats, options, start) and, once the match is
over, a new game in the same chat.

**The lobby's buttons are the chat lobby's.** :func:`lobby_page` draws the lobby the chats draw
(:meth:`bot.screens.Renderer.lobby`, in the reader's language) and hands the page its buttons, each with
its own token: the page posts a token and :meth:`bot.app.Service.press` checks it as it checks a chat's
press. A page is offered only what the chat lobby would let its player do (:func:`bot.table.may_organise`
for the options, start and cancel; another free seat, or leaving, for a seated player). A person takes a
seat from the chat, where being in the group is what lets them (a page's credential does not prove it: a
Mini App's ``initData`` names no chat, a link can be forwarded): until then their page watches, with
nothing to press, and the server refuses whatever it sends (:meth:`adapters.web.server.WebTable.act`).

**A new game** (:func:`again_button`, ``POST /api/newgame`` in :mod:`adapters.web.server`): a finished
table's seated players may open a new lobby in the same chat, as ``/newgame`` there does
(:meth:`bot.app.Service.new_table`, its lobby shown in the chat). The page then follows the chat's table with
a credential for that table only, issued by the server to one of the finished table's players, expiring no
later than the credential they came with: the presser's seat in the new lobby, or (the chat's table opened
by another meanwhile) a watcher's page until they sit from the chat.
"""

from __future__ import annotations

from adapters.web.frames import MATCH_DONE, NOT_STARTED, TABLE_CANCELLED, Json, reader_language, texts
from bot.i18n import Translator, translator
from bot.i18n.markers import N_
from bot.kernel import MACHINE_NAMES, Button, TableState, TableStatus, UserRef
from bot.screens import Renderer, seat_name
from bot.table import may_organise

_ = N_

NEW_GAME = _("🔁 New game")
FREE_SEAT = _("Free seat")
MACHINE_IF_EMPTY = _("🤖 a machine plays here if nobody sits")
WATCH_LOBBY = _("You are watching: take a seat from the chat to play.")
# Translators: {name} is the player who created the table and decides when it starts.
WAIT_FOR_START = _("Waiting for {name} to start the game.")

#: A lobby button's place on the page, by its token's code.
_OPTION_CODES = ("o_senas", "o_target", "o_mode", "o_level")
_CONTROL_CODES = ("leave", "start", "cancel")


def lobby_page(table: TableState, visitor: UserRef, lang: str | None, version: int, now: float) -> Json:
    """A table without a running hand: who sits where (and where machines will), the options, and the
    chat lobby's buttons this visitor may press (none for someone not seated: they sit from the chat)."""
    seat = table.seat_of(visitor.key)
    reader = reader_language(table, seat, lang)
    t = translator(reader)
    frame: Json = {
        "v": version,
        "hand": table.hand_no,
        "k": 0,
        "live": True,
        "status": table.status.value,
        "seat": seat,
        "seats": _lobby_seats(t, table),
        "lang": reader,
        "texts": texts(t),
    }
    if table.status is not TableStatus.LOBBY:
        done = {TableStatus.CANCELLED: TABLE_CANCELLED, TableStatus.FINISHED: MATCH_DONE}
        frame["note"] = t.gettext(done.get(table.status, NOT_STARTED))
        frame["again"] = again_button(table, seat, reader)
        return frame
    drawn = Renderer(table.model_copy(update={"lang": reader}), None, now).lobby()
    lines = drawn.text.splitlines()
    may_move = not table.private and seat is not None  # (another free seat: the chat lobby's seat buttons)
    # (An unseated page presses nothing, the creator's included: the server refuses it.)
    organiser = seat is not None and may_organise(table, visitor.key, now)
    buttons = {b.token.rsplit(".", 1)[1]: b for row in drawn.buttons for b in row if not b.opens}
    lobby: Json = {
        "heading": lines[0],
        "options_line": lines[-2],
        "hint": lines[-1],
        "options": [_button(buttons[c]) for c in _OPTION_CODES if organiser and c in buttons],
        "controls": [
            _button(buttons[c])
            for c in _CONTROL_CODES
            if c in buttons and (organiser if c != "leave" else seat is not None)
        ],
    }
    for s, shown in enumerate(frame["seats"]):
        if may_move and table.seats[s].empty and f"seat{s}" in buttons:
            shown["join"] = _button(buttons[f"seat{s}"])
    if seat is None:
        frame["spectator"] = True
        frame["note"] = t.gettext(WATCH_LOBBY)
        lobby["hint"] = ""  # (it tells a player what to press)
    elif not organiser and (creator := table.seat_of(table.creator)) is not None:
        frame["note"] = t.format(WAIT_FOR_START, name=seat_name(table, creator))
    frame["lobby"] = lobby
    return frame


def again_button(table: TableState, seat: int | None, lang: str) -> Json | None:
    """A finished or cancelled table's "New game", for the players who sat at it (they belong to its chat;
    the server checks it again when it is pressed)."""
    if not table.finished or seat is None:
        return None
    return {"label": translator(lang).gettext(NEW_GAME)}


def _lobby_seats(t: Translator, table: TableState) -> list[Json]:
    """Each seat: its player's name, or who will sit there when the game starts (a machine)."""
    seats: list[Json] = []
    for s, held in enumerate(table.seats):
        if not held.empty:
            seats.append({"name": seat_name(table, s), "machine": held.machine})
        elif table.private:  # alone against the machines: every other seat is a machine's
            seats.append({"name": f"🤖 {MACHINE_NAMES[s]}", "machine": True})
        else:
            seats.append(
                {"name": t.gettext(FREE_SEAT), "machine": False, "free": t.gettext(MACHINE_IF_EMPTY)}
            )
    return seats


def _button(button: Button) -> Json:
    return {"label": button.label, "token": button.token, "code": button.token.rsplit(".", 1)[1]}
