"""The bot service: commands in, views out, every table change a compare-and-set in the store.

Adapters call these coroutines with platform-neutral users, chats and tokens, and render the returned
:class:`~bot.kernel._views.Outcome`. The service never trusts a token: it parses it, loads the table, checks
the seat, the turn and the stamp, and lets the engine judge legality. A refused command changes nothing and is
answered with a short translated message. Deadlines (turn timeouts, machine moves, next deals, lobby expiry,
catch windows) live in the deadline store and are fired by :meth:`Service.fire_due` on any worker.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from bot.app._bus import Bus
from bot.app._chat_commands import ChatCommands
from bot.app._chat_moves import ChatMoves
from bot.app._deadline_work import DeadlineWork
from bot.app._deps import ServiceDeps
from bot.app._history_commands import HistoryCommands
from bot.app._invitations import Invitations
from bot.app._languages import Languages
from bot.app._lesson_commands import LessonCommands
from bot.app._pauses import Pauses
from bot.app._unit_of_work import TableWork
from bot.app._web_entry import WebEntry
from bot.i18n import DEFAULT_LANGUAGE, normalize_language
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.kernel import (
    CHAT_SCOPE,
    CatchSena,
    ChatRef,
    ExportMatch,
    Invite,
    JoinSeat,
    LessonChoice,
    OpenHand,
    OpenLesson,
    OpenWeb,
    Outcome,
    OutMessage,
    Seat,
    SendHand,
    SetLanguage,
    ShowStory,
    StartLessons,
    TableState,
    TableStatus,
    Token,
    UserRef,
    measured_command,
    read_token,
    record_press,
)
from bot.store import ChatBusy, StoreUnavailable, TableExists
from bot.table import (
    Answer,
    HandsShown,
    TableContext,
    TableShown,
    cancel_table,
    dispatch_catch,
    dispatch_press,
    lang_for,
    new_table,
    refuse_if_paused,
    say,
    start_game,
    take_seat,
)

log = logging.getLogger(__name__)
_ = N_

ALREADY_TABLE = _("There is already a table in this chat.")
_REPOSTED_CAP = 10_000
NO_TABLE = _("There is no table in this chat. Start one with /newgame.")


class Service:
    """Platform-neutral commands of the bot, the entry adapters call.

    Its parts are members, as cogs are added to a discord.py bot: :attr:`tables` runs every table change as
    one unit of work (load, one step, draw, one compare-and-set); :attr:`deadlines` fires due deadlines
    through it; :attr:`chats` answers the commands about a chat (``/leaderboard``, ``/stats``, ``/rules``,
    ``/help``, the act-once check and the throttle), :attr:`history` the hand history, :attr:`lessons`
    ``/learn``, :attr:`invitations` whom to invite privately from a group, :attr:`languages` a chat's and a
    person's own language, :attr:`moves` a chat that moved to a new key (a Telegram group upgraded to a
    supergroup) and :attr:`pauses` a chat the bot cannot reach (its table paused) or a player who blocked
    it, and :attr:`web` a presser's own link to a table's web page. A pressed button and an invitation are
    routed by their type through one table each (:attr:`presses`, :attr:`invites`: the message bus).
    """

    def __init__(self, deps: ServiceDeps) -> None:
        """Use the given stores, clock, randomness and machine players."""
        self.deps = deps
        self.tables = TableWork(deps)
        self.deadlines = DeadlineWork(deps, self.tables)
        self.chats = ChatCommands(deps)
        self.history = HistoryCommands(deps, self.chats)
        self.lessons = LessonCommands(deps)
        self.invitations = Invitations(self.tables, self.chats)
        self.moves = ChatMoves(deps, self.chats, lambda table_id: self.show_table(table_id))
        self.languages = Languages(deps, self.tables, self.chats)
        self.pauses = Pauses(deps, self.tables, self.invitations, self.show_hand)
        self.web = WebEntry(deps, self.tables)
        self.presses: Bus[Token] = Bus(key=lambda token: token.command, fallback=self._table_press)
        """Who answers a pressed button, by its command's type (a table's steps answer the rest)."""
        self.presses.register(self.lessons.press, LessonChoice, OpenLesson)
        self.presses.register(self.history.press, OpenHand, ExportMatch)
        self.presses.register(self._language_press, SetLanguage)
        self.presses.register(self.web.press, OpenWeb)
        self.invites: Bus[Invite] = Bus(key=lambda invite: invite, fallback=self._rules_invite)
        """What an invitation opened privately does, by its type (the rules for the rest)."""
        self.invites.register(self._seat_invite, JoinSeat)
        self.invites.register(self._hand_invite, SendHand)
        self.invites.register(self._story_invite, ShowStory)
        self.invites.register(self._lessons_invite, StartLessons)
        self._reposted: dict[str, float] = {}
        """When ``/newgame`` last posted each table again."""

    async def load_table(self, table_id: str) -> TableState | None:
        """The stored table, read-only (for adapters and summaries)."""
        return await self.tables.load_table(table_id)

    # --- commands ------------------------------------------------------------------------------------

    @measured_command("newgame")
    async def new_table(self, chat: ChatRef, user: UserRef) -> Outcome:
        """``/newgame``: a lobby with the creator seated (in a private chat: the solo game's options)."""
        lang = lang_for(user)  # if the store cannot say the chat's language, the asker's own
        try:
            chosen = await self.deps.prefs.get_language(chat.prefs_key)
            lang = normalize_language(chosen or (user.lang if chat.private else chat.lang))
            existing = await self.deps.tables.table_for_chat(chat.key)
            if existing is not None:
                return await self._already(existing, user, lang)
            now = self.deps.clock()
            table = new_table(self.deps.id_factory(), chat.key, chat.title, chat.private, user, lang, now)
            table.seats[0] = Seat(
                user=user.key,
                name=user.name[:32] or "?",
                lang=normalize_language(user.lang) if user.lang else lang,
            )
            try:
                await self._create(table, chat, [user.key])
            except ChatBusy as busy:
                return await self._already(busy.existing_table_id, user, lang)
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False)
        # Arm the lobby expiry through a no-op mutation that draws the lobby (in a private chat: the solo
        # game's options and its start button).
        return await self.tables.run(table.id, user, lambda ctx: _touch(ctx))

    async def _already(self, table_id: str, user: UserRef, lang: str) -> Outcome:
        """``/newgame`` where a table is open: say so, and post the table again (at most once per
        :attr:`ServiceDeps.repost_interval`, so that a flood of ``/newgame`` floods nothing)."""
        now = self.deps.clock()
        if now - self._reposted.get(table_id, -1e18) < self.deps.repost_interval:
            return Outcome(answer=say(lang, ALREADY_TABLE), ok=False, table=table_id)
        if len(self._reposted) >= _REPOSTED_CAP:
            self._reposted.clear()
        self._reposted[table_id] = now
        shown = await self.show_table(table_id, user)
        if shown.paused:  # nothing was posted: the next /newgame may resume it (the chat can be back by then)
            self._reposted.pop(table_id, None)
        answer = shown.answer if shown.paused else say(lang, ALREADY_TABLE)
        return Outcome(answer=answer, messages=shown.messages, ok=False, table=table_id, paused=shown.paused)

    async def new_machine_table(
        self,
        chat: ChatRef,
        user: UserRef,
        *,
        senas: bool = False,
        target: int = 40,
        single_game: bool = False,
        difficulty: str = "normal",
    ) -> Outcome:
        """A table of four machine seats, started at once (a demo, the terminal's ``--auto``, benchmarks)."""
        lang = normalize_language(user.lang) if user.lang else DEFAULT_LANGUAGE
        now = self.deps.clock()
        table = new_table(self.deps.id_factory(), chat.key, chat.title, chat.private, user, lang, now)
        table.options.senas = senas
        table.options.target = target
        table.options.difficulty = difficulty
        table.options.mode = "game" if single_game else "match"
        try:
            await self._create(table, chat, [])
        except ChatBusy:
            return Outcome(answer=say(lang, ALREADY_TABLE), ok=False)
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False)
        return await self.tables.run(table.id, user, lambda ctx: start_game(ctx, user, machines_only=True))

    async def _create(self, table: TableState, chat: ChatRef, users: list[str]) -> None:
        """Store a new table, drawing another id if this one is taken (never for a busy chat)."""
        for _attempt in range(5):
            try:
                await self.deps.tables.create(
                    table.id, table.model_dump_json(), chat_key=chat.key, user_keys=users
                )
                return
            except ChatBusy:
                raise
            except TableExists:
                table.id = self.deps.id_factory()
        raise StoreUnavailable("could not find a free table id")

    async def show_table(
        self, table_id: str, user: UserRef | None = None, *, fresh: bool = True, every_hand: bool = False
    ) -> Outcome:
        """Render a table as it stands, changing nothing: as new messages (``fresh``), or as the state the
        messages already there must show (a redraw: it costs no call where they show it already). Private
        hands: the asker's own, or (``every_hand``) every seated person's."""

        def step(ctx: TableContext) -> Answer:
            refuse_if_paused(ctx)  # (nothing could reach its chat)
            ctx.record(TableShown(fresh))
            if ctx.table.status is not TableStatus.PLAYING:
                return None
            seat = None if user is None else ctx.table.seat_of(user.key)
            seats = tuple(range(4)) if every_hand else () if seat is None else (seat,)
            if seats:
                ctx.record(HandsShown(seats, fresh=False))  # (machines have none)
            return None

        return await self.tables.run(table_id, user, step)

    async def press(
        self, user: UserRef, pressed: object, chat: ChatRef | None = None, *, shown_at: float | None = None
    ) -> Outcome:
        """A button press, in ``chat`` when the platform says where: its token as the adapter parsed it where
        the press entered (``None``: it did not parse, a forged press), or the raw data of a surface that
        does not parse it itself (the terminal), parsed here once.

        ``shown_at`` (the service's clock): when the pressed message was last drawn on the presser's screen,
        where the surface knows (a chat's paced edit lands up to a second late, the terminal's feed is
        paced): a ⚡'s catch window counts from it, never from later than the press.

        Anything forged or stale changes nothing. Chat-scoped buttons (the language picker) need ``chat``.
        """
        started = time.perf_counter()
        token = pressed if isinstance(pressed, Token) else read_token(pressed)
        if token is None:
            lang = normalize_language(user.lang) if user.lang else DEFAULT_LANGUAGE
            outcome = Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        elif shown_at is not None and isinstance(token.command, CatchSena) and token.table != CHAT_SCOPE:
            seen = min(shown_at, self.deps.clock())
            outcome = await self.tables.run(token.table, user, dispatch_catch(user, token, seen))
        else:
            outcome = await self.presses.handle(user, token, chat)
        action = "forged" if token is None else type(token.command).__name__
        record_press(action, outcome, time.perf_counter() - started)
        return outcome

    async def _table_press(self, user: UserRef, token: Token, chat: ChatRef | None) -> Outcome:
        """A button of a live table: one step of :mod:`bot.table` as one unit of work."""
        if token.table == CHAT_SCOPE:  # a chat's button whose command has no handler of its own: forged
            return Outcome(answer=say(lang_for(user), msg.STALE_BUTTON), ok=False)
        outcome = await self.tables.run(token.table, user, lambda ctx: dispatch_press(ctx, user, token))
        if outcome.ok or outcome.failed or outcome.table is None or outcome.paused:
            return outcome
        # A refused press may come from a screen that missed an edit (lost in a crash): redraw what the
        # table and the presser's hand show now. Where they show it already, delivery makes no call.
        current = await self.show_table(outcome.table, user, fresh=False)
        return replace(outcome, messages=outcome.messages + current.messages)

    async def _language_press(self, user: UserRef, token: Token, chat: ChatRef | None) -> Outcome:
        """The language picker's button: the chat's language (only where the platform says which chat)."""
        if chat is None or token.table != CHAT_SCOPE or not isinstance(token.command, SetLanguage):
            return Outcome(answer=say(lang_for(user), msg.STALE_BUTTON), ok=False)
        return await self.set_language(chat, user, token.command.lang)

    async def redraw_recent(self, within: float = 120.0) -> Outcome:
        """The current views of every live table written in the last ``within`` seconds (start-up: a view
        still queued when the previous process died was lost with it)."""
        since = self.deps.clock() - within
        messages: list[OutMessage] = []
        try:
            table_ids = await self.deps.tables.live_tables()
        except StoreUnavailable:
            return Outcome(ok=False, failed=True)
        for table_id in table_ids:
            table = await self.load_table(table_id)
            if table is not None and table.updated_at >= since:
                shown = await self.show_table(table_id, fresh=False, every_hand=True)
                messages.extend(shown.messages)
        return Outcome(messages=tuple(messages))

    async def show_hand(self, user: UserRef, table_id: str) -> Outcome:
        """Send the user their private hand again (a deep link from the table's "My cards")."""

        def step(ctx: TableContext) -> Answer:
            ctx.require_match()
            ctx.record(HandsShown((ctx.seat_of(user),), fresh=True))
            return None

        return await self.tables.run(table_id, user, step)

    async def accept_invite(self, user: UserRef, invite: Invite) -> Outcome:
        """The player opened the bot through an invitation: take the seat, send the hand, the story, the
        lessons or the rules (:attr:`invites` says which)."""
        return await self.invites.handle(user, invite, None)

    async def _seat_invite(self, user: UserRef, invite: JoinSeat, chat: ChatRef | None) -> Outcome:
        return await self.join_seat(user, invite.table, invite.seat)

    async def _hand_invite(self, user: UserRef, invite: SendHand, chat: ChatRef | None) -> Outcome:
        return await self.show_hand(user, invite.table)

    async def _story_invite(self, user: UserRef, invite: ShowStory, chat: ChatRef | None) -> Outcome:
        return await self.history.story(user, invite.table, invite.hand)

    async def _lessons_invite(self, user: UserRef, invite: StartLessons, chat: ChatRef | None) -> Outcome:
        return await self.lessons.learn(_private_chat(user), user, invite.lesson)

    async def _rules_invite(self, user: UserRef, invite: Invite, chat: ChatRef | None) -> Outcome:
        # The rules go to the user's private chat (on every platform, its key is the user's).
        return await self.chats.rules(_private_chat(user), user, full=True)

    async def join_seat(self, user: UserRef, table_id: str, seat: int) -> Outcome:
        """Sit ``user`` at ``seat`` of ``table_id`` (a deep link, when the platform could not reach them)."""
        if seat not in range(4):
            return Outcome(answer=say(lang_for(user), msg.STALE_BUTTON), ok=False)

        def step(ctx: TableContext) -> Answer:
            return take_seat(ctx, user, seat), {"team": "A" if seat % 2 == 0 else "B"}

        return await self.tables.run(table_id, user, step)

    async def table_of_chat(self, chat: ChatRef) -> str | None:
        """The id of the chat's open table (a lobby or a game), if any; ``StoreUnavailable`` if unknown."""
        return await self.deps.tables.table_for_chat(chat.key)

    @measured_command("cancel")
    async def cancel(self, chat: ChatRef, user: UserRef, *, moderator: bool = False) -> Outcome:
        """``/cancel``: close the chat's table (its creator, a seated player once they left, a moderator)."""
        try:
            table_id = await self.table_of_chat(chat)
        except StoreUnavailable:
            return Outcome(answer=say(lang_for(user), msg.STORE_UNAVAILABLE), ok=False)
        if table_id is None:
            return Outcome(answer=say(lang_for(user), NO_TABLE), ok=False)
        return await self.tables.run(table_id, user, lambda ctx: cancel_table(ctx, user, moderator=moderator))

    async def set_language(self, chat: ChatRef, user: UserRef, code: str | None) -> Outcome:
        """``/language xx``: the chat's language (also the active table's); without one, a picker."""
        return await self.languages.chat(chat, user, code)


def _touch(ctx: TableContext) -> Answer:
    """Arm the pending deadline of a freshly created table."""
    ctx.changed = True
    return None


def _private_chat(user: UserRef) -> ChatRef:
    """The user's private chat with the bot (on every platform, its key is the user's)."""
    return ChatRef(user.key, private=True, title=user.name)
