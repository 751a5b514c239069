"""Thin interaction handlers: a slash command or a press in, the service called, the interaction answered.

No game logic lives here, only Discord's idiom for the core's outcomes:

- Every interaction is answered once, within Discord's 3 s from its creation: its store calls share one
  budget from then (:mod:`adapters.discord.timing`); work still running at its answer time is deferred and
  answered by a follow-up. Remembering it as handled runs in the background.
- A slash command's reply *is* the view it opened (a lobby, the leaderboard, the help), which the delivery
  adopts and edits in place like any other. Refusals, and the full rules asked in a server, are ephemeral.
- A press is answered ephemerally when the core has something to say to the presser alone (a refusal, a
  caught seña); otherwise it is acknowledged and the delivery lane edits the table (paced, latest wins).
- Ephemeral too: a kept hand opened privately, the link "🃏 Table" answers (:mod:`.web_links`), and "My
  cards": the presser's private view, kept up to date (DMs if asked: :mod:`adapters.discord.private_hands`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import discord

from adapters.discord import access
from adapters.discord.embeds import edited_as, sent_as
from adapters.discord.ids import chat_ref, user_ref
from adapters.discord.languages import reader
from adapters.discord.layout import NO_MENTIONS, files_of, view_of
from adapters.discord.mentions import commands_in, rewrite
from adapters.discord.private_hands import NoHands, PrivateHands
from adapters.discord.timing import DISCORD, interaction_times, shown_at
from adapters.discord.web_links import answer_link
from bot.app import Service
from bot.delivery import COALESCING_SLOTS, Delivery
from bot.i18n import common as msg
from bot.i18n import normalize_language, translator
from bot.kernel import (
    ChatRef,
    LessonChoice,
    OpenHand,
    OpenLesson,
    Outcome,
    OutMessage,
    ShowCards,
    Token,
    UserRef,
    read_token,
)
from bot.ops import AnswerWindow, UpdateTimes, answer_in_time
from bot.store import store_budget

log = logging.getLogger(__name__)
_T = TypeVar("_T")

#: A command's work, given where and by whom it was typed.
CommandWork = Callable[[ChatRef, UserRef], Awaitable[Outcome]]
#: The answer to an interaction that needs one but got nothing to say (never empty: Discord refuses that).
DONE = "✓"


def _is_ephemeral(interaction: discord.Interaction[Any]) -> bool:
    message = interaction.message
    return message is not None and message.flags.ephemeral


def _private_hand(outcome: Outcome, user: UserRef) -> OutMessage | None:
    """The presser's own hand view among an outcome's views."""
    return next((m for m in outcome.messages if m.user == user.key and m.slot == "hand"), None)


@dataclass
class DiscordHandlers:
    """The handlers of one client, sharing the service and the delivery lanes."""

    service: Service
    sender: Delivery
    hands: PrivateHands | NoHands = field(default_factory=NoHands)
    """Where private views go: a live "My cards", DMs for those who asked (:class:`NoHands`: unit tests)."""
    window: AnswerWindow = DISCORD
    """How interactions are timed: their store budget and when they are deferred at the latest."""
    last_presses: access.LastPresses = field(default_factory=access.LastPresses)
    """The last press in each channel (told by follow-up if the channel then refuses the bot's posts)."""
    _in_flight: int = 0
    _idle: asyncio.Event = field(default_factory=asyncio.Event)
    _remembering: set[asyncio.Task[None]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._idle.set()

    def _begin(self) -> None:
        self._in_flight += 1
        self._idle.clear()

    def _end(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()

    @contextlib.contextmanager
    def _handling(self) -> Iterator[None]:
        self._begin()
        try:
            yield
        finally:
            self._end()

    @contextlib.asynccontextmanager
    async def _answering(
        self, interaction: discord.Interaction[Any], user: UserRef, what: str, *, delivered: bool = False
    ) -> AsyncIterator[None]:
        """Handle one interaction: counted while it runs, answered whatever happens inside, and (with
        ``delivered``) remembered as handled afterwards."""
        with self._handling():
            try:
                yield
            except Exception:
                log.exception("%s failed", what)
                await self._internal_error(interaction, user)
            if delivered:
                self._remember(f"dc:interaction:{interaction.id}")

    def _remember(self, delivery_id: str) -> None:
        """Remember an interaction as handled, in the background with the store client's own timeout (not
        under the interaction's budget, which may be spent by now: a replay would then act twice); counted as
        in flight, so that a graceful stop waits for it."""

        async def remember() -> None:
            try:
                await self.service.chats.delivered(delivery_id)
            finally:
                self._end()

        self._begin()
        task = asyncio.create_task(remember())
        self._remembering.add(task)
        task.add_done_callback(self._remembering.discard)

    async def _first(self, interaction: discord.Interaction[Any]) -> bool:
        """Whether this interaction is delivered for the first time (a replay after a gateway resume, or to
        two workers, is left to the delivery that came first: it answers)."""
        if await self.service.chats.first_delivery(f"dc:interaction:{interaction.id}"):
            return True
        log.info("interaction %s delivered again: ignored", interaction.id)
        return False

    async def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait until no interaction is being handled (tests, and a graceful stop)."""
        await asyncio.wait_for(self._idle.wait(), timeout)

    # --- answering -----------------------------------------------------------------------------------

    async def _in_time(
        self, interaction: discord.Interaction[Any], work: Awaitable[_T], times: UpdateTimes, *, command: bool
    ) -> _T:
        """Await ``work`` (in this task: under the interaction's store budget); if it still runs at the
        interaction's answer time, defer the interaction meanwhile."""

        async def defer() -> None:
            if interaction.response.is_done():
                return
            with contextlib.suppress(discord.HTTPException):
                if command:
                    await interaction.response.defer(ephemeral=True, thinking=True)
                else:
                    await interaction.response.defer()

        outcome, _deferred = await answer_in_time(work, times.answer_by, defer)
        return outcome

    async def _say(self, interaction: discord.Interaction[Any], text: str, *, ephemeral: bool = True) -> None:
        """Answer with a text (a follow-up if the interaction was already answered or deferred)."""
        text = rewrite(text, commands_in(interaction))[:2000] or DONE
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=ephemeral, allowed_mentions=NO_MENTIONS)
        else:
            await interaction.response.send_message(text, ephemeral=ephemeral, allowed_mentions=NO_MENTIONS)

    async def _show(
        self, interaction: discord.Interaction[Any], view: OutMessage, *, ephemeral: bool
    ) -> str | None:
        """Answer with a view (text and buttons); the id of the message that shows it."""
        extra: dict[str, Any] = files_of(view) | sent_as(view, commands_in(interaction))
        components = view_of(view)
        if components is not None:
            extra["view"] = components
        if interaction.response.is_done():
            sent = await interaction.followup.send(
                ephemeral=ephemeral, allowed_mentions=NO_MENTIONS, wait=True, **extra
            )
            return str(sent.id)
        response = await interaction.response.send_message(
            ephemeral=ephemeral, allowed_mentions=NO_MENTIONS, **extra
        )
        return None if response.message_id is None else str(response.message_id)

    async def _update(self, interaction: discord.Interaction[Any], view: OutMessage) -> None:
        """Make the message that was pressed show ``view`` (the presser's ephemeral hand)."""
        components, shown = view_of(view), edited_as(view, commands_in(interaction))
        if interaction.response.is_done():
            await interaction.edit_original_response(**shown, view=components)
        else:
            await interaction.response.edit_message(**shown, view=components)

    async def _internal_error(self, interaction: discord.Interaction[Any], user: UserRef) -> None:
        text = translator(normalize_language(user.lang)).gettext(msg.INTERNAL_ERROR)
        with contextlib.suppress(discord.HTTPException):
            await self._say(interaction, text)

    # --- slash commands ------------------------------------------------------------------------------

    async def command(
        self, interaction: discord.Interaction[Any], work: CommandWork, *, personal: bool = False
    ) -> None:
        """Run a slash command's work and answer it (``personal``: a setting of the asker's, answered to
        them alone); never raise."""
        user, chat = user_ref(interaction), chat_ref(interaction)
        times = interaction_times(interaction, self.window)
        with store_budget(times.store_by):
            if not await self._first(interaction):
                return
            async with self._answering(interaction, user, "slash command", delivered=True):
                user = await reader(self.service, chat, user)
                refused = await self.service.chats.admit(chat, user)
                if refused is not None:  # too many commands: said once, ephemerally; then a bare "✓"
                    await self._say(interaction, refused.answer or DONE)
                    return
                outcome = await self._in_time(interaction, work(chat, user), times, command=True)
                outcome = await access.resumed(self, interaction, chat, user, outcome)  # a paused table
                if personal:  # a setting of the asker's: said to them alone
                    self.sender.deliver(outcome.messages)
                    await self._say(interaction, outcome.answer or DONE)
                else:
                    await self._answer_command(interaction, chat, user, outcome)
                await self.hands.tell_if_closed(interaction, user)

    async def _answer_command(
        self, interaction: discord.Interaction[Any], chat: ChatRef, user: UserRef, outcome: Outcome
    ) -> None:
        messages = list(outcome.messages)
        # Private texts asked for in a server (the full rules) are shown to the asker there, ephemerally.
        asides = [
            m for m in messages if not chat.private and m.user == user.key and m.slot not in COALESCING_SLOTS
        ]
        if asides:
            self.sender.deliver([m for m in messages if m not in asides])
            for aside in asides:
                await self._show(interaction, aside, ephemeral=True)
            return
        reply = None
        for message in messages:
            if message.user is None and message.chat == chat.key and await self.sender.posts_new(message):
                reply = message  # the first new message the command posts here: the lobby, the leaderboard…
                break
        deferred = interaction.response.is_done()
        if reply is None or not outcome.ok or deferred:
            self.sender.deliver(messages)
            await self._say(
                interaction, outcome.answer or DONE, ephemeral=not outcome.ok or not outcome.answer
            )
            return
        message_id = await self._show(interaction, reply, ephemeral=False)
        if message_id is not None:
            await self.sender.adopt(reply, message_id)
        self.sender.deliver([m for m in messages if m is not reply])
        if outcome.answer:
            await self._say(interaction, outcome.answer)

    # --- buttons and menus ---------------------------------------------------------------------------

    async def press(self, interaction: discord.Interaction[Any], data: str) -> None:
        """A press on one of our components (or a forged one): call the service, always answer."""
        user, chat = user_ref(interaction), chat_ref(interaction)
        times = interaction_times(interaction, self.window)
        with store_budget(times.store_by):
            if not await self._first(interaction):
                return
            async with self._answering(interaction, user, "button press", delivered=True):
                user = await reader(self.service, chat, user)
                token = read_token(data)  # parsed once, here: the service and the answer below use it
                if await access.refused(self, interaction, chat, user):  # the bot may not post here
                    return
                pressed = self.service.press(user, token, chat, shown_at=shown_at(interaction))
                outcome = await self._in_time(interaction, pressed, times, command=False)
                outcome = await access.resumed(self, interaction, chat, user, outcome)  # a paused table
                await self._answer_token(interaction, user, token, outcome)
                await self.hands.tell_if_closed(interaction, user)

    async def _answer_token(
        self, interaction: discord.Interaction[Any], user: UserRef, token: Token | None, outcome: Outcome
    ) -> None:
        """Answer a press, as its kind of button wants."""
        if token is not None and isinstance(token.command, ShowCards) and outcome.ok:
            self.sender.deliver(outcome.messages)
            await self._show_cards(interaction, user, token.table, outcome)
        elif token is not None and isinstance(token.command, LessonChoice | OpenLesson):
            from adapters.discord import lessons  # (it builds on this module)

            await lessons.answer_press(self, interaction, user, outcome)
        elif token is not None and isinstance(token.command, OpenHand) and not token.command.here:
            await self._show_story(interaction, user, outcome)
        elif outcome.link is not None:  # "🃏 Table": one's own link, for the presser alone
            await answer_link(interaction, outcome)
        else:
            await self._answer_press(interaction, user, outcome)

    async def _show_cards(
        self, interaction: discord.Interaction[Any], user: UserRef, table_id: str, pressed: Outcome
    ) -> None:
        """ "My cards": the presser's private view, ephemerally (its buttons act on that message)."""
        shown = await self.service.show_hand(user, table_id)
        view = _private_hand(shown, user)
        if view is None:
            await self._say(interaction, pressed.answer or shown.answer or DONE)
        else:
            message_id = await self._show(interaction, view, ephemeral=True)
            await self.hands.remember(interaction, user.key, view, message_id)

    async def _show_story(
        self, interaction: discord.Interaction[Any], user: UserRef, outcome: Outcome
    ) -> None:
        """A kept hand opened privately: shown to the presser alone, ephemerally (never by DM: the answer is
        right where they pressed)."""
        story = next((m for m in outcome.messages if m.user == user.key), None)
        self.sender.deliver([m for m in outcome.messages if m is not story])
        if story is None:
            await self._say(interaction, outcome.answer or DONE)
        else:
            await self._show(interaction, story, ephemeral=True)

    async def _answer_press(
        self, interaction: discord.Interaction[Any], user: UserRef, outcome: Outcome
    ) -> None:
        mine = _private_hand(outcome, user)
        private = mine is not None and (
            _is_ephemeral(interaction) or not await self.hands.sees(interaction, mine)
        )
        if not (private or outcome.answer or interaction.response.is_done()):
            await self._update_pressed(interaction, outcome)  # delivers the views itself
            return
        self.sender.deliver(outcome.messages)  # queued at once; the lanes send while we answer
        if mine is not None and private:
            if _is_ephemeral(interaction) and interaction.message is not None:
                await self._update(interaction, mine)  # the presser's ephemeral hand follows their picks
                shown: str | None = str(interaction.message.id)  # (and its token lives 15 minutes more)
            else:  # what a DM would have shown (the amounts of "More…"), to someone without them
                shown = await self._show(interaction, mine, ephemeral=True)
            await self.hands.remember(interaction, user.key, mine, shown)
            if outcome.answer and outcome.alert:
                await self._say(interaction, outcome.answer)
        elif outcome.answer:
            await self._say(interaction, outcome.answer)

    async def _update_pressed(self, interaction: discord.Interaction[Any], outcome: Outcome) -> None:
        """Show the move at once on the message that was pressed (the table, the lobby), as the answer to the
        press: no wait for the channel's pacing, no second call from its lane. Any other view goes to the
        lanes, and the press is acknowledged silently."""
        view = await self._view_of_pressed(interaction, outcome)
        if view is not None:
            self.sender.hold(view)
        self.sender.deliver([m for m in outcome.messages if m is not view])
        if view is not None:
            try:
                await interaction.response.edit_message(
                    **edited_as(view, commands_in(interaction)), view=view_of(view)
                )
            except discord.HTTPException:
                self.sender.deliver([view])  # the lane shows it instead
            else:
                self.sender.shown_by_adapter(view)
                return
        if not interaction.response.is_done():
            await interaction.response.defer()

    async def _view_of_pressed(
        self, interaction: discord.Interaction[Any], outcome: Outcome
    ) -> OutMessage | None:
        """The outcome's new state of the very message that was pressed, if it is the one showing it."""
        pressed = interaction.message
        if pressed is None or pressed.flags.ephemeral:
            return None
        for view in outcome.messages:
            if view.fresh or view.user is not None or view.slot not in COALESCING_SLOTS:
                continue
            # Not when the slot moves on to a new message in the same outcome (a new hand's table): the
            # lane posts that one and strips this one, in order.
            if any(o is not view and o.slot == view.slot and o.chat == view.chat for o in outcome.messages):
                return None
            if await self.sender.showing(view) == str(pressed.id):
                return view
        return None
