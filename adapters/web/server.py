"""The web table's HTTP application (aiohttp): the page and its files, a session per page, its frames as
Server-Sent Events, and its actions.

* ``GET /t/{table}`` — the page (the same file for every table: who the visitor is comes after, from the
  link in the address's fragment, which browsers never send to a server, or from Telegram's ``initData``);
  ``GET /t/`` and ``GET /`` too — a Mini App opened by its direct link (``t.me/<bot>/<app>?startapp=<table>``)
  loads at the address registered with @BotFather, the table in ``initData``'s ``start_param``;
* ``POST /api/session`` — a credential (a signed link, or ``initData``) for a page of one table: its page id;
* ``GET /api/events?page=ID`` — the page's frames, each move in turn (``text/event-stream``);
* ``POST /api/act`` — a button's token pressed on the page: :meth:`bot.app.Service.press`, exactly as a chat
  button (a stale or forged token is refused as a stale button is), at most a few per second per visitor;
  only a seated player's page acts (a person takes a seat from the chat);
* ``POST /api/newgame`` — a finished table's player opens a new lobby in its chat, as ``/newgame`` does, and
  the page is given a credential for that table (:mod:`adapters.web.lobby`);
* ``GET /r/{table}``, ``POST /api/replay`` — a finished match replayed from the history
  (:mod:`adapters.web.replay`).

Every response carries a Content-Security-Policy without inline script and without any other site; the
server logs no request line (links and page ids are credentials).
"""

from __future__ import annotations

import html
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from importlib import resources

from aiohttp import web

from adapters.web.auth import telegram_visitor
from adapters.web.feed import Hub
from adapters.web.replay import ReplayRoutes
from adapters.web.watchers import Page
from bot.app import Service
from bot.i18n import DEFAULT_LANGUAGE, normalize_language, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.i18n.rules import rules_sections
from bot.kernel import (
    TABLE_ID_RE,
    CatchSena,
    ChatRef,
    LinkRefused,
    Outcome,
    TableState,
    Token,
    WebVisitor,
    check_link,
    read_token,
    sign_link,
)
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

#: Telegram Web shows a Mini App in a frame of its own site; nothing else may frame the table.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'self' https://web.telegram.org"
)
STATIC_FILES = {
    "table.js": "text/javascript",
    "replay.js": "text/javascript",
    "cards.js": "text/javascript",
    "table.css": "text/css",
}
NOT_ALLOWED = N_("This link is not valid for this table, or it has expired. Ask for a new one in the chat.")
TOO_FAST = N_("Slow down a little.")
HUB: web.AppKey[Hub] = web.AppKey("hub", Hub)

#: Where the outcome of a press goes besides the page (the chats' deliveries: their messages change too).
OnOutcome = Callable[[Outcome], Awaitable[None]]


def _static(name: str) -> bytes:
    return resources.files("adapters.web").joinpath("static", name).read_bytes()


@web.middleware
async def _headers(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    response = await handler(request)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


class WebTable:
    """The application: credentials checked with ``secret`` (and Telegram's ``telegram_token``), pages fed
    by ``hub``, presses handed to ``service`` and their outcomes to ``on_outcome``."""

    def __init__(
        self,
        service: Service,
        hub: Hub,
        secret: bytes,
        *,
        telegram_token: str | None = None,
        initdata_max_age: float = 86400.0,
        on_outcome: OnOutcome | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Serve ``service``'s tables."""
        self.service = service
        self.hub = hub
        self.secret = secret
        self.telegram_token = telegram_token
        self.initdata_max_age = initdata_max_age
        self.on_outcome = on_outcome
        self.clock = clock
        self.files = {name: _static(name) for name in (*STATIC_FILES, "index.html")}

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application(middlewares=[_headers], client_max_size=16 * 1024)
        app[HUB] = self.hub
        app.router.add_get("/t/{table}", self.index)
        # A Mini App opened by its direct link: at its registered address, its table in ``start_param``.
        app.router.add_get("/t/", self.index)
        app.router.add_get("/", self.index)
        app.router.add_get("/static/{name}", self.static)
        app.router.add_post("/api/session", self.session)
        app.router.add_get("/api/events", self.events)
        app.router.add_post("/api/act", self.act)
        app.router.add_post("/api/newgame", self.new_game)
        app.router.add_get("/rules/{lang}", self.rules)
        app.router.add_get("/healthz", self.healthz)
        replays = ReplayRoutes(
            self.service.deps.history,
            self.secret,
            self.files["index.html"],
            pause=self.hub.pause,
            clock=self.clock,
        )
        replays.add_to(app)
        return app

    async def index(self, request: web.Request) -> web.Response:
        """The page (the same for every table)."""
        return web.Response(body=self.files["index.html"], content_type="text/html", charset="utf-8")

    async def static(self, request: web.Request) -> web.Response:
        """The page's script, card art and style (hand-written; nothing from another site)."""
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.Response(
            body=self.files[name],
            content_type=STATIC_FILES[name],
            charset="utf-8",
            headers={"Cache-Control": "public, max-age=300"},
        )

    async def rules(self, request: web.Request) -> web.Response:
        """The full rules of the chats and the terminal, in the page's language, as a page of their own."""
        lang = normalize_language(request.match_info["lang"][:8])
        return web.Response(text=rules_page(lang), content_type="text/html", charset="utf-8")

    async def healthz(self, request: web.Request) -> web.Response:
        """Whether the web table answers."""
        return web.Response(text="ok")

    async def session(self, request: web.Request) -> web.Response:
        """A page of one table for whoever the credential names (a seat's, or a spectator's)."""
        body = await _json(request)
        table = str(body.get("table", ""))[:16]
        lang = normalize_language(str(body.get("lang") or DEFAULT_LANGUAGE)[:8])
        try:
            visitor = self._visitor(body, table)
            if not TABLE_ID_RE.match(
                visitor.table
            ):  # (initData opens the table its body or start_param names)
                raise LinkRefused("not a table id")
        except LinkRefused as exc:
            log.info("web: a credential was refused (%s)", exc.reason)
            return _refused(lang)
        try:
            opened = await self.hub.open_page(visitor)
        except StoreUnavailable:  # not a refusal: the page tries again
            answer = {"error": translator(lang).gettext(msg.STORE_UNAVAILABLE)}
            return _no_store(web.json_response(answer, status=503))
        if opened is None:
            return _refused(lang)
        return _no_store(web.json_response({"page": opened.id, "table": visitor.table}))

    def _page(self, page_id: str) -> Page:
        """The open page ``page_id`` names while its credential holds (401 otherwise: a page of a previous
        process, or one whose link or initData expired, opens a new session)."""
        watcher = self.hub.pages.get(page_id)
        if watcher is None:
            raise web.HTTPUnauthorized()
        if self.clock() > watcher.visitor.expires:
            self.hub.close_page(watcher)
            raise web.HTTPUnauthorized()
        return watcher

    def _seated(self, watcher: Page) -> bool:
        """Whether the page's visitor holds a seat at its table, as its pages last read it."""
        feed = self.hub.feeds.get(watcher.table)
        newest = None if feed is None else feed.newest
        return newest is not None and newest.table.seat_of(watcher.visitor.user.key) is not None

    def _visitor(self, body: dict[str, object], table: str) -> WebVisitor:
        now = self.clock()
        init_data = body.get("init_data")
        if isinstance(init_data, str) and init_data:
            if self.telegram_token is None:
                raise LinkRefused("no Telegram bot here")
            return telegram_visitor(init_data, self.telegram_token, table, now, self.initdata_max_age)
        return check_link(self.secret, str(body.get("link", "")), table, now)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """The page's frames as Server-Sent Events, until the page goes away (or the server stops)."""
        watcher = self._page(request.query.get("page", ""))
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        try:
            async for frame in self.hub.frames(watcher):
                if self.clock() > watcher.visitor.expires:
                    break  # the credential expired: the page opens a new session with one still valid
                if frame is None:
                    await response.write(b": still here\n\n")
                else:
                    data = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
                    await response.write(f"data: {data}\n\n".encode())
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self.hub.close_page(watcher)
        return response

    async def act(self, request: web.Request) -> web.Response:
        """A button pressed on the page: the service judges its token exactly as a chat button's."""
        body = await _json(request)
        watcher = self._page(str(body.get("page", "")))
        user = watcher.visitor.user
        t = translator(normalize_language(user.lang or DEFAULT_LANGUAGE))
        if not self.hub.allow_action(user.key):
            return web.json_response({"ok": False, "answer": t.gettext(TOO_FAST)}, status=429)
        token = read_token(body.get("token"))
        if token is not None and (token.table != watcher.table or not self._seated(watcher)):
            # A page acts on its own table only, and only a seated player's does: being in the chat is what
            # lets a person take a seat, and a page's credential does not prove it (a Mini App's initData
            # names no chat). Anything else is refused as a stale button is.
            token = None
        # A ⚡ this page showed: its catch window counts from then.
        outcome = await self.service.press(user, token, shown_at=_shown_at(watcher, token))
        if self.on_outcome is not None and outcome.messages:
            await self.on_outcome(outcome)
        # (Its pages are not read here: the write announced itself, and that notice reads the table once.)
        return _no_store(
            web.json_response({"ok": outcome.ok, "answer": outcome.answer, "alert": outcome.alert})
        )

    def _shown(self, watcher: Page) -> TableState | None:
        """The newest state of the page's table this server holds."""
        feed = self.hub.feeds.get(watcher.table)
        return None if feed is None or feed.newest is None else feed.newest.table

    async def new_game(self, request: web.Request) -> web.Response:
        """ "New game" on a finished table's page: the chat's new lobby, opened as ``/newgame`` opens it (the
        chat's table if one was opened meanwhile), and a credential for it, for one of the finished table's
        players only."""
        body = await _json(request)
        watcher = self._page(str(body.get("page", "")))
        user = watcher.visitor.user
        lang = normalize_language(user.lang or DEFAULT_LANGUAGE)
        if not self.hub.allow_action(user.key):
            return web.json_response({"ok": False, "answer": translator(lang).gettext(TOO_FAST)}, status=429)
        old = self._shown(watcher)
        if old is None or not old.finished or old.seat_of(user.key) is None:
            return _no_store(
                web.json_response({"ok": False, "answer": translator(lang).gettext(msg.STALE_BUTTON)})
            )
        chat = ChatRef(old.chat, private=old.private, title=old.chat_title, lang=old.lang)
        answer = None
        try:
            table_id = await self.service.deps.tables.table_for_chat(chat.key)
            if table_id is None or table_id == old.id:
                outcome = await self.service.new_table(chat, user)
                if self.on_outcome is not None and outcome.messages:
                    await self.on_outcome(outcome)
                table_id, answer = outcome.table, outcome.answer
        except StoreUnavailable:
            table_id, answer = None, translator(lang).gettext(msg.STORE_UNAVAILABLE)
        if table_id is None:
            return _no_store(web.json_response({"ok": False, "answer": answer}))
        # Bound to this person and the chat's table, and no longer-lived than the credential they came with.
        link = sign_link(self.secret, user, table_id, watcher.visitor.expires)
        return _no_store(web.json_response({"ok": True, "table": table_id, "link": link}))


def rules_page(lang: str) -> str:
    """The rules as HTML: every text escaped, then only their light Markdown (``**bold**``, ``-`` lists)
    made into markup."""
    parts = [f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">']
    parts.append('<meta name="viewport" content="width=device-width, initial-scale=1">')
    parts.append('<title>Mus</title><link rel="stylesheet" href="/static/table.css"></head>')
    parts.append('<body><main class="rules">')
    for heading, body in rules_sections(lang):
        if heading:
            parts.append(f"<h2>{_marked(heading)}</h2>")
        items = []
        for line in body.splitlines():
            if line.startswith("- "):
                items.append(f"<li>{_marked(line[2:])}</li>")
                continue
            if items:
                parts.append("<ul>" + "".join(items) + "</ul>")
                items = []
            if line.strip():
                parts.append(f"<p>{_marked(line)}</p>")
        if items:
            parts.append("<ul>" + "".join(items) + "</ul>")
    parts.append("</main></body></html>")
    return "".join(parts)


def _marked(text: str) -> str:
    return _BOLD.sub(r"<strong>\1</strong>", html.escape(text))


_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _shown_at(watcher: Page, token: object) -> float | None:
    """When this page was sent the ⚡ a catch token presses (``None`` for anything else)."""
    if not isinstance(token, Token) or not isinstance(token.command, CatchSena) or token.hand is None:
        return None
    return watcher.shown.get((token.hand, token.command.index))


async def _json(request: web.Request) -> dict[str, object]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise web.HTTPBadRequest() from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest()
    return body


def _refused(lang: str) -> web.Response:
    text = translator(lang).gettext(NOT_ALLOWED)
    return _no_store(web.json_response({"error": text}, status=403))


def _no_store(response: web.Response) -> web.Response:
    response.headers["Cache-Control"] = "no-store"
    return response
