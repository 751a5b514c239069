"""A finished match replayed on the web table, hand by hand and move by move, from the kept history.

* ``GET /r/{table}`` — the page: the live table's own file and drawing (its script sees the ``/r/`` and
  replays instead of opening a session);
* ``POST /api/replay`` — ``{table, link, lang, hand}``: the numbers of the match's kept hands and every frame
  of one of them (the first when ``hand`` names none), in the viewer's language.

**Who may look.** The credential is a signed link (:func:`bot.kernel.check_link`) for the place
:func:`bot.kernel.replay_place` names, ``r/<table>``: a table's own link never opens a replay, nor a replay's
link a table. ``/history`` writes it bound to the chat that keeps the match (:class:`bot.kernel.WebLinks`):
a replay shows what that chat's history shows, to whoever the chat gives it. It is checked on every request:
the server keeps nothing per page.

**What a frame holds.** The live page's frame (:func:`adapters.web.frames.page`) of the public view of the
hand replayed to each entry of its record (:func:`engine.record.hand_steps`), plus the four hands as they
stood then: history keeps only finished hands, and every card of a finished hand is the chat's to see (the
``/history`` stories show them too). A seña's meaning never is: the public view has none, as the chat's
history has none.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence

from aiohttp import web
from pydantic import ValidationError

from adapters.web.frames import Json, page
from bot.history import HistoryStore, KeptHand, result_lines
from bot.i18n import DEFAULT_LANGUAGE, normalize_language, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.kernel import LinkRefused, LruCache, TableState, check_link, replay_place
from bot.screens import seat_name
from bot.store import StoreUnavailable
from engine.cards import card_name
from engine.hand import Hand
from engine.match import Match, MatchConfig
from engine.record import hand_after, hand_steps

log = logging.getLogger(__name__)
_ = N_

REPLAY_REFUSED = _(
    "This replay link is not valid, or it has expired. Ask /history in the chat for a new one."
)
NOTHING_KEPT = _("No hand of this match is kept any more.")
# Translators: the replay's position: which kept hand is shown ({i} of {count}) and its number in the match.
REPLAY_HAND = _("Hand {n} · {i} of {count}")
# Translators: the replay's position within a hand: how many of its moves have been shown.
REPLAY_MOVE = _("move {k} of {total}")
REPLAY_NOTE = _("Replay of a finished match: every hand is shown, the señas' meanings are not.")

#: The replay's own texts (the controls' names), sent with each hand in the viewer's language.
REPLAY_TEXTS = {
    "previous": _("Previous hand"),
    "next": _("Next hand"),
    "play": _("Play"),
    "pause": _("Pause"),
    "back": _("One move back"),
    "forward": _("One move forward"),
}
#: What every frame of a hand shares, sent once with the hand rather than with each frame.
SHARED = ("texts", "lang", "window", "title", "live", "v", "seat")
#: A request body longer than this is not the page's.
MAX_BODY = 4096
#: Replayed hands kept ready (a kept hand never changes: replaying it again for each viewer would cost the
#: worker's loop tens of milliseconds each time).
CACHED_HANDS = 64


def kept_match(entries: Sequence[tuple[int, str]]) -> list[KeptHand]:
    """The readable hands of a match, in order (one this version cannot read is logged and left out)."""
    kept = []
    for _number, entry in entries:
        try:
            kept.append(KeptHand.model_validate_json(entry))
        except (ValidationError, ValueError) as exc:
            log.warning("a kept hand cannot be replayed: %s", exc)
    return kept


def match_before(kept: KeptHand, earlier: Sequence[KeptHand]) -> Match:
    """The match as it stood when ``kept`` was dealt (its options, and the vacas won in the hands before)."""
    record = kept.record
    config = MatchConfig(
        target=record.target, senas=record.senas, catch_window=record.catch_window, max_bet=record.max_bet
    )
    match = Match(config, first_mano=record.mano)
    for hand in earlier:
        if hand.vaca_winner is not None:
            match.vacas[hand.vaca_winner] += 1
    return match


def _frame(kept: KeptHand, table: TableState, match: Match, hand: Hand, lang: str) -> Json:
    """One step of the replay: the public page of ``hand``, the four hands as they stand, and at the end
    what the hand won."""
    frame = page(table, match, hand, None, lang=lang, version=0, live=False, now=kept.at)
    frame.pop("spectator", None)
    frame.pop("status", None)  # (a kept hand's table has no status of its own: the match is over)
    frame["hands"] = [
        {"name": seat_name(table, seat), "cards": [card_name(c) for c in hand.hands[seat]]}
        for seat in range(4)
    ]
    if hand.over:
        frame["shown"] = None  # the hands are on the table already
        frame["results"] = result_lines(translator(lang), kept)
    return frame


def hand_frames(kept: KeptHand, earlier: Sequence[KeptHand], lang: str) -> list[Json]:
    """Every step of one kept hand: as dealt, then after each entry of its record (a word, a seña, a
    catch), the last one its count."""
    match = match_before(kept, earlier)
    table = kept.table_state(lang)
    frames = [_frame(kept, table, match, hand_after(kept.record, 0), lang)]
    made = 0
    for _done, hand in hand_steps(kept.record):
        frame = _frame(kept, table, match, hand, lang)
        # A seña's ⚡ flashes on the step that made it only: the replay shows that one was made, then
        # plays on (nobody catches anything in a replay).
        frame["flashes"] = [flash for flash in frame["flashes"] if flash["index"] >= made]
        made = len(hand.senas)
        frames.append(frame)
    return frames


def replay_answer(kept: Sequence[KeptHand], wanted: int | None, lang: str, pause: float) -> Json:
    """What the page is sent for one hand of a kept match: the match's hand numbers, the hand's frames
    (what they share once), and the replay's texts."""
    numbers = [k.hand_no for k in kept]
    index = numbers.index(wanted) if wanted in numbers else 0
    t = translator(lang)
    frames = hand_frames(kept[index], kept[:index], lang)
    shared = {key: frames[0][key] for key in SHARED if key in frames[0]}
    for frame in frames:
        for key in SHARED:
            frame.pop(key, None)
    shared["texts"] = {**shared["texts"], **{key: t.gettext(text) for key, text in REPLAY_TEXTS.items()}}
    shared["pause"] = pause
    shared["note"] = t.gettext(REPLAY_NOTE)
    shared["replay"] = True
    position = t.format(REPLAY_HAND, n=numbers[index], i=index + 1, count=len(numbers))
    moves = [t.format(REPLAY_MOVE, k=k, total=len(frames) - 1) for k in range(len(frames))]
    return {
        "hands": numbers,
        "hand": numbers[index],
        "position": position,
        "moves": moves,
        "shared": shared,
        "frames": frames,
    }


def viewer_language(asked: str | None, linked: str | None) -> str:
    """The replay's language: the viewer's own (their browser's) when it is one of ours, else the one the
    link carries (the chat's)."""
    if asked:
        chosen = normalize_language(asked)
        if chosen != DEFAULT_LANGUAGE or asked.lower().startswith(DEFAULT_LANGUAGE):
            return chosen
    return normalize_language(linked)


#: Hands built at once (each holds the interpreter for tens of milliseconds): a burst of replays queues.
BUILDS_AT_ONCE = 2


class ReplayRoutes:
    """The replay's page and its frames, over ``history``, for links signed with ``secret``."""

    def __init__(
        self,
        history: HistoryStore,
        secret: bytes,
        index: bytes,
        *,
        pause: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Serve the replays of ``history``'s matches with the page ``index``, moves ``pause`` s apart."""
        self.history = history
        self.secret = secret
        self.index = index
        self.pause = pause
        self.clock = clock
        self._answers: LruCache[tuple[str, tuple[int, ...], int | None, str], bytes] = LruCache(CACHED_HANDS)
        self._building = asyncio.Semaphore(BUILDS_AT_ONCE)

    def add_to(self, app: web.Application) -> None:
        """Add the replay's routes to the web table's application."""
        app.router.add_get("/r/{table}", self.page)
        app.router.add_post("/api/replay", self.frames)

    async def page(self, request: web.Request) -> web.Response:
        """The page (the live table's own)."""
        return web.Response(body=self.index, content_type="text/html", charset="utf-8")

    async def frames(self, request: web.Request) -> web.Response:
        """One hand of the match the link names, every frame of it."""
        body = await _body(request)
        table = str(body.get("table", ""))[:16]
        asked = str(body.get("lang") or "")[:16] or None
        try:
            visitor = check_link(self.secret, str(body.get("link", "")), replay_place(table), self.clock())
        except LinkRefused as exc:
            log.info("web: a replay link was refused (%s)", exc.reason)
            return _answer({"error": translator(viewer_language(asked, None)).gettext(REPLAY_REFUSED)}, 403)
        lang = viewer_language(asked, visitor.user.lang)
        try:
            entries = await self.history.hands(table)
        except StoreUnavailable:
            return _answer({"error": translator(lang).gettext(msg.STORE_UNAVAILABLE)}, 503)
        numbers = tuple(n for n, _ in entries)
        wanted = body.get("hand")
        # A hand not kept is the first one (so any number asked for is one of the cache's few keys).
        number = wanted if wanted in numbers and not isinstance(wanted, bool) else (numbers or (None,))[0]
        # The match's hands so far are part of the key: a match still being played gains hands.
        key = (table, numbers, number, lang)
        answer = self._answers.get(key)
        if answer is None:
            # Tens of milliseconds of replaying and drawing, off the loop the chats share (between the
            # interpreter's switches, the loop goes on answering them), a few at a time.
            async with self._building:
                answer = await asyncio.to_thread(_built, entries, number, lang, self.pause)
            if answer is None:
                return _answer({"error": translator(lang).gettext(NOTHING_KEPT)}, 404)
            self._answers.put(key, answer)
        response = web.Response(body=answer, content_type="application/json", charset="utf-8")
        response.headers["Cache-Control"] = "no-store"
        response.enable_compression()  # a hand's frames repeat themselves: ~36 KB is ~2 KB gzipped
        return response


async def _body(request: web.Request) -> dict[str, object]:
    if (request.content_length or 0) > MAX_BODY:
        raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=request.content_length or 0)
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise web.HTTPBadRequest() from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest()
    return body


def _built(entries: Sequence[tuple[int, str]], number: int | None, lang: str, pause: float) -> bytes | None:
    """The answer for one hand of a match's kept ``entries``, as sent (``None``: none can be read)."""
    kept = kept_match(entries)
    if not kept:
        return None
    answer = replay_answer(kept, number, lang, pause)
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _answer(data: Json, status: int) -> web.Response:
    response = web.json_response(data, status=status)
    response.headers["Cache-Control"] = "no-store"
    return response
