"""Thin Telegram handlers: parse the update, call the service, answer the callback, hand views to the sender.

No game logic lives here. The only Telegram-specific decision is reachability: a bot cannot write first to a
user who never opened it, so a seat press by such a user is answered with a deep link
(``t.me/<bot>?start=<payload>``) that seats them when they open the bot, and ``/rules full`` asked in a group
by such a user is answered there with a link that sends the rules when they open the bot. ("My cards" needs
no link: its answer is an alert, which reaches anyone.)

Every update is handled under one time budget from its arrival (:mod:`adapters.telegram.arrival`): a press is
answered by its answer time even if its work still runs (silently: its views follow through the lanes), and
marking an update handled runs afterwards in the background (see :meth:`TelegramHandlers.handled`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from telegram import CallbackQuery, Update
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop, ContextTypes
from telegram.helpers import create_deep_linked_url

from adapters.telegram.arrival import update_times
from adapters.telegram.ids import chat_ref, user_ref
from bot.app import Service, leaderboard_scope, wants_full_rules
from bot.delivery import Delivery, SurfaceStore
from bot.i18n import common as msg
from bot.i18n import normalize_language, translator
from bot.i18n.markers import N_
from bot.kernel import (
    OpenHand,
    Outcome,
    OutMessage,
    SendRules,
    ShowStory,
    TakeSeat,
    Token,
    UserRef,
    encode_invite,
    parse_invite,
    read_token,
    rules_link_text,
)
from bot.ops import answer_in_time
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)
_ = N_

WELCOME = _(
    "Hi! I am a Mus bot. Add me to a group and type /newgame there to play with friends, "
    "or type /newgame here to play with a machine partner against two machines. "
    "New to Mus? /learn gives ten short lessons. /help lists the commands."
)
#: ``/start rules``: the payload of the link that ``/rules full`` gives a user the bot cannot write to yet.
RULES_PAYLOAD = encode_invite(SendRules())


@dataclass
class TelegramHandlers:
    """The handlers of one Application, sharing the service, the sender and the surfaces."""

    service: Service
    sender: Delivery
    surfaces: SurfaceStore
    bot_username: str
    blocked: Callable[[str], bool] = lambda user_key: False
    """Whether Telegram said that person blocked the bot (:meth:`TelegramTransport.blocked`)."""
    _marking: set[asyncio.Task[None]] = field(default_factory=set)
    """Updates being remembered as handled, in the background."""

    def deep_link(self, payload: str) -> str:
        """``https://t.me/<bot>?start=<payload>``."""
        return create_deep_linked_url(self.bot_username, payload)

    async def invite(self, user_key: str, table_id: str, *, blocked: bool = False) -> None:
        """Tell the table's group, once per table, that a player must open the bot (``blocked``: unblock it),
        with a deep link."""
        invitation = await self.service.invitations.invitation(user_key, table_id, blocked=blocked)
        if invitation is None:
            return
        text = invitation.text(self.deep_link(encode_invite(invitation.invite)))
        self.sender.deliver(
            [OutMessage(slot="notice", text=text, chat=invitation.chat, fresh=True, table=table_id)]
        )

    async def unreachable(self, message: OutMessage) -> None:
        """The sender could not deliver a private view (403): invite that player from the group (to unblock
        the bot, if Telegram said they blocked it)."""
        if message.user is not None and message.table:
            await self.invite(message.user, message.table, blocked=self.blocked(message.user))
        elif message.user is not None and message.origin is not None and message.slot == "rules":
            # The group was told "sent privately": say where to read them instead, once.
            lang = await self.service.invitations.rules_invitation(message.user, message.origin)
            if lang is not None:
                text = rules_link_text(lang, self.deep_link(RULES_PAYLOAD))
                self.sender.deliver([OutMessage(slot="notice", text=text, chat=message.origin, fresh=True)])

    def render(self, outcome: Outcome) -> None:
        """Hand an outcome's views to the sender."""
        self.sender.deliver(outcome.messages)

    def say(self, chat: str, text: str) -> None:
        """A message in ``chat``, through its lane like every other: a handler never waits on a send (a
        rate-limited group must not hold up the handlers every other chat needs)."""
        self.sender.deliver([OutMessage(slot="answer", text=text, chat=chat, fresh=True)])

    async def _reply(self, update: Update, outcome: Outcome) -> None:
        """Deliver an outcome to a command: its views, and its answer as a message in that chat. A command
        at a paused table came from its chat: the bot is there again (an update about it was missed), and
        the table resumes instead."""
        if outcome.paused and update.effective_chat is not None:
            outcome = await self.service.pauses.chat_back(chat_ref(update.effective_chat))
        self.render(outcome)
        if outcome.answer and update.effective_chat is not None:
            self.say(chat_ref(update.effective_chat).key, outcome.answer)

    async def _admitted(self, update: Update) -> bool:
        """Whether the command may run (else "slow down" is answered once, then nothing)."""
        if update.effective_user is None or update.effective_chat is None:
            return False
        refused = await self.service.chats.admit(
            chat_ref(update.effective_chat), user_ref(update.effective_user)
        )
        if refused is not None:
            await self._reply(update, refused)
            return False
        return True

    async def once(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Before every handler: an update delivered again (a webhook retried by Telegram) acts once."""
        if not await self.service.chats.first_delivery(self._delivery_id(update, context)):
            log.info("update %s delivered again: ignored", update.update_id)
            raise ApplicationHandlerStop

    async def handled(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """After every handler: the update is remembered as handled — in the background, with the store
        client's own timeout. Not under the update's budget: it may be spent by now (a slow update), and the
        mark would fail at once, so that a retried webhook update acted twice; and not inline with the
        client's timeout, which on a frozen Redis would hold one of the Application's update slots."""
        marking = asyncio.create_task(self.service.chats.delivered(self._delivery_id(update, context)))
        self._marking.add(marking)
        marking.add_done_callback(self._marking.discard)

    async def marked(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` s) until the updates handled so far are remembered (a graceful stop)."""
        if self._marking:
            await asyncio.wait(set(self._marking), timeout=timeout)

    @staticmethod
    def _delivery_id(update: Update, context: ContextTypes.DEFAULT_TYPE) -> str:
        return f"tg:{context.bot.id}:update:{update.update_id}"

    # --- commands ------------------------------------------------------------------------------------

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/start [payload]``: mark the user reachable; a deep link seats them, sends cards or the rules."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        user = user_ref(update.effective_user)
        if update.effective_chat.type == "private":
            with contextlib.suppress(StoreUnavailable):
                await self.surfaces.set_reachable(user.key, True)
        invite = parse_invite(context.args[0] if context.args else "")
        if invite is not None:
            await self._reply(update, await self.service.accept_invite(user, invite))
            return
        lang = normalize_language(user.lang)
        self.say(chat_ref(update.effective_chat).key, translator(lang).gettext(WELCOME))

    async def newgame(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/newgame``: a lobby in a group, a solo game in a private chat."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        chat = chat_ref(update.effective_chat)
        user = user_ref(update.effective_user)
        if chat.private:
            with contextlib.suppress(StoreUnavailable):
                await self.surfaces.set_reachable(user.key, True)
        outcome = await self.service.new_table(chat, user)
        await self._reply(update, outcome)
        if not chat.private and outcome.ok and outcome.table:
            reachable = True
            with contextlib.suppress(StoreUnavailable):
                reachable = await self.surfaces.reachable(user.key)
            if not reachable:  # the creator sits at once: they must open the bot before the deal
                await self.invite(user.key, outcome.table)

    async def cancel(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/cancel``: close this chat's table."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        outcome = await self.service.cancel(chat_ref(update.effective_chat), user_ref(update.effective_user))
        await self._reply(update, outcome)

    async def leaderboard(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/leaderboard [global]``."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        scope = leaderboard_scope(context.args or [])
        outcome = await self.service.chats.leaderboard(
            chat_ref(update.effective_chat), user_ref(update.effective_user), scope
        )
        await self._reply(update, outcome)

    async def stats(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/stats``: the user's own figures."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        outcome = await self.service.chats.stats(
            chat_ref(update.effective_chat), user_ref(update.effective_user)
        )
        await self._reply(update, outcome)

    async def rules(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/rules [full]``."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        full = wants_full_rules(context.args or [])
        chat, user = chat_ref(update.effective_chat), user_ref(update.effective_user)
        if full and not chat.private:
            reachable = True  # if the store cannot tell, try: a refused private message costs nothing
            with contextlib.suppress(StoreUnavailable):
                reachable = await self.surfaces.reachable(user.key)
            if not reachable:
                # The bot cannot write first: a link that sends the rules once the user opens the bot.
                text = rules_link_text(normalize_language(user.lang), self.deep_link(RULES_PAYLOAD))
                self.say(chat.key, text)
                return
        await self._reply(update, await self.service.chats.rules(chat, user, full))

    async def language(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/language xx``: the chat's language."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        code = context.args[0] if context.args else None
        outcome = await self.service.set_language(
            chat_ref(update.effective_chat), user_ref(update.effective_user), code
        )
        await self._reply(update, outcome)

    async def history(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/history``: the last hands of this chat's match, with buttons to open or export them."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        outcome = await self.service.history.recent(
            chat_ref(update.effective_chat), user_ref(update.effective_user)
        )
        await self._reply(update, outcome)

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``/help``."""
        if not await self._admitted(update):
            return
        assert update.effective_user is not None and update.effective_chat is not None
        outcome = await self.service.chats.help(
            chat_ref(update.effective_chat), user_ref(update.effective_user)
        )
        await self._reply(update, outcome)

    # --- buttons -------------------------------------------------------------------------------------

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Every inline button: call the service, then always answer the callback query, once, by the
        update's answer time (if the work still runs then, silently: its views follow through the lanes)."""
        query = update.callback_query
        if query is None:
            return

        async def answer_first() -> None:
            await self._answer(query, None, False, None)

        pressed = self._pressed(query)
        (answer, alert, url), early = await answer_in_time(pressed, update_times().answer_by, answer_first)
        if early:
            log.info("a press was answered before its work was done: %s", answer)
        else:
            await self._answer(query, answer, alert, url)

    async def _pressed(self, query: CallbackQuery) -> tuple[str | None, bool, str | None]:
        """Run a press and hand its views to the sender; its answer (text, alert, link). Never raises."""
        user = user_ref(query.from_user)
        answer: str | None = None
        alert = False
        url: str | None = None
        try:
            token = read_token(query.data)  # parsed once, here: the service gets it as it is
            link = await self._needs_private_chat(user, token)
            if link is not None:
                url = link
            else:
                # The chat is where a chat-scoped button (the language picker) acts.
                chat = None if query.message is None else chat_ref(query.message.chat)
                outcome = await self.service.press(user, token, chat, shown_at=shown_at(query))
                answer, alert = outcome.answer, outcome.alert
                self.render(outcome)
        except Exception:  # the callback is answered whatever happens
            log.exception("button press failed")
            answer = translator(normalize_language(user.lang)).gettext(msg.INTERNAL_ERROR)
        return answer, alert, url

    @staticmethod
    async def _answer(query: CallbackQuery, answer: str | None, alert: bool, url: str | None) -> None:
        try:
            await query.answer(text=(answer or None) and answer[:200], show_alert=alert, url=url)
        except TelegramError as exc:
            log.info("could not answer a callback query: %s", exc)

    async def _needs_private_chat(self, user: UserRef, token: Token | None) -> str | None:
        """A deep link for a press by someone the bot cannot write to yet: a seat (cards are dealt
        privately), or a kept hand asked for privately (the link shows it)."""
        if token is None:
            return None
        seat = isinstance(token.command, TakeSeat) and token.stamp == "L"
        story = isinstance(token.command, OpenHand) and not token.command.here and token.step is None
        if not (seat or story):
            return None
        try:
            if await self.surfaces.reachable(user.key):
                return None
        except StoreUnavailable:
            return None
        if isinstance(token.command, TakeSeat):
            return self.deep_link(f"j{token.table}{token.command.seat}")
        hand = token.hand
        return None if not hand else self.deep_link(encode_invite(ShowStory(token.table, hand)))


def shown_at(query: CallbackQuery) -> float | None:
    """When the pressed message was last drawn (Telegram's ``edit_date``, else ``date``; whole seconds, so
    at most a second early): a ⚡'s catch window counts from it. ``None`` unless the message still carries
    the pressed button (a press on a button since removed is judged by the core's clock alone)."""
    message = query.message
    markup = getattr(message, "reply_markup", None)
    rows = markup.inline_keyboard if markup is not None else ()
    if not any(button.callback_data == query.data for row in rows for button in row):
        return None
    when = getattr(message, "edit_date", None) or getattr(message, "date", None)
    return when.timestamp() if isinstance(when, datetime) else None
