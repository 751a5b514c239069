"""Hand history: keeping every finished hand, ``/history``, opening one hand, exporting a match.

A finished hand is built into a :class:`~bot.history._model.KeptHand` from the event the command that
finished it recorded (:mod:`bot.app._drawn`) and kept once that command's write succeeded
(:func:`keep_hands`); a history store that fails is logged and never breaks the table command. ``/history``
shows the last hands of the chat's current or last match, each a short summary with buttons: the whole hand
to the presser alone (a private message, an ephemeral reply) or in the chat, and the match as two files (the
conformance JSON that ``python -m engine.replay`` replays, and readable text). When the web table is served
(:attr:`ServiceDeps.web`), a line links to the match's replay there: a link bound to the chat (what it
shows is what the chat's history shows: finished hands, no seña's meaning), so it may stand in the chat's
answer.

History buttons are tokens like every other (``{table}.{hand}.hist``, ``….histc``, ``{table}.0.hexp``):
parsed against the grammar, then checked against the store — a hand no longer kept, a button of a chat whose
history does not list its match, a stamp that names no hand: a short answer, nothing sent.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import ValidationError

from bot.app._chat_commands import ChatCommands
from bot.app._deps import ServiceDeps
from bot.history import (
    MATCHES_PER_CHAT,
    HistoryStore,
    KeptHand,
    export_json,
    export_text,
    match_title,
    story_text,
    summary_lines,
)
from bot.i18n import common as msg
from bot.i18n import translator
from bot.i18n.markers import N_
from bot.kernel import (
    Button,
    ChatRef,
    ExportMatch,
    OpenHand,
    Outcome,
    OutMessage,
    Token,
    UserRef,
    history_token,
    measured_command,
)
from bot.store import StoreError, StoreUnavailable
from bot.table import lang_for, say

log = logging.getLogger(__name__)
_ = N_

#: Hands ``/history`` lists (the newest; the export has them all): five, so that its buttons fit the
#: strictest platform's five rows of five (a row to open each privately, a row to show each, the export).
SHOWN_HANDS = 5

HISTORY_TITLE = _("📜 The last hands of the match in this chat:")
# Translators: {days} is how many days finished hands are kept (the host chooses it).
HISTORY_NONE = _("No finished hand is kept in this chat yet (hands are kept for {days} days).")
HAND_GONE = _("That hand is no longer kept.")
ALREADY_POSTED = _("Already posted here a moment ago.")
SENT_PRIVATELY = _("📜 I sent you the hand in our private chat.")
# Translators: the last line of /history, above its buttons "🔒 3" and "💬 3" (one of each per hand).
HISTORY_KEYS = _("🔒 shows a hand to you alone, 💬 to the whole chat.")
# Translators: {link} is an address of the web table where the match is replayed hand by hand.
REPLAY_LINK = _("▶️ Replay the match hand by hand, with the cards: {link}")
EXPORT_BUTTON = _("⬇️ Export the match")
EXPORT_JSON_CAPTION = _("📎 The match as a replayable record: python -m engine.replay {file}")
EXPORT_TEXT_CAPTION = _("📎 The match as text, hand by hand.")


async def keep_hands(store: HistoryStore, hands: Sequence[KeptHand]) -> None:
    """Keep finished hands; a store that fails is logged, never raised (the table command succeeded)."""
    for kept in hands:
        try:
            await store.keep(kept.table, kept.chat, kept.hand_no, kept.at, kept.model_dump_json())
        except StoreError as exc:  # an outage, or the update's time for the store spent: one line, no trace
            log.warning(
                "hand %s of table %s was not kept in the history: %s",
                kept.hand_no,
                kept.table,
                exc,
                extra={"table": kept.table},
            )
        except Exception:
            log.warning(
                "hand %s of table %s was not kept in the history",
                kept.hand_no,
                kept.table,
                exc_info=True,
                extra={"table": kept.table},
            )


def parse_kept(entry: str | None) -> KeptHand | None:
    """A stored hand, or ``None`` (none stored, or one this version cannot read: logged)."""
    if entry is None:
        return None
    try:
        return KeptHand.model_validate_json(entry)
    except (ValidationError, ValueError) as exc:
        log.warning("a kept hand cannot be read: %s", exc)
        return None


class HistoryCommands:
    """``/history``, its buttons, and the hand a deep link opens (a member of :class:`bot.app.Service`)."""

    def __init__(self, deps: ServiceDeps, chats: ChatCommands) -> None:
        """Use the service's history store; ``chats`` says which language a chat reads."""
        self.deps = deps
        self.chats = chats
        self._history_posted: dict[tuple[str, str], float] = {}
        """When a hand (or a match's files) was last posted in a chat by this worker (a flood posts once)."""

    @measured_command("history")
    async def recent(self, chat: ChatRef, user: UserRef) -> Outcome:
        """``/history``: the last hands of the chat's current or last match, with their buttons."""
        lang = await self.chats.language_of(chat, user)
        t = translator(lang)
        store = self.deps.history
        try:
            tables = await store.matches(chat.key, self.deps.clock(), limit=1)
            found = await store.hands(tables[0], last=SHOWN_HANDS) if tables else []
        except StoreUnavailable:
            return Outcome(answer=t.gettext(msg.STORE_UNAVAILABLE), ok=False)
        kept = [hand for hand in (parse_kept(entry) for _, entry in found) if hand is not None]
        if not kept:
            days = max(1, round(store.retention / 86400))
            text = t.format(HISTORY_NONE, days=days)
            return Outcome(messages=(OutMessage(slot="history", text=text, chat=chat.key, fresh=True),))
        table_id = kept[0].table
        lines = [t.gettext(HISTORY_TITLE), *self._replay_line(chat, lang, table_id)]
        for hand in kept:
            lines.extend(summary_lines(t, hand))
        lines.append(t.gettext(HISTORY_KEYS))
        rows = (
            tuple(Button(f"🔒 {k.hand_no}", history_token(table_id, k.hand_no, "hist")) for k in kept),
            tuple(Button(f"💬 {k.hand_no}", history_token(table_id, k.hand_no, "histc")) for k in kept),
            (Button(t.gettext(EXPORT_BUTTON), history_token(table_id, 0, "hexp")),),
        )
        view = OutMessage(slot="history", text="\n".join(lines), chat=chat.key, buttons=rows, fresh=True)
        return Outcome(messages=(view,))

    def _replay_line(self, chat: ChatRef, lang: str, table_id: str) -> list[str]:
        """The line that links to the match's replay on the web table, when it is served.

        The link is bound to the chat, not to the person who asked: the answer is the chat's, and a replay
        shows what the chat's history shows. It goes near the top, so that a platform that cuts a long text
        (Discord at 2,000 characters) cuts a summary, never the address."""
        links = None if self.deps.web is None else self.deps.web.links
        if links is None:
            return []
        viewer = UserRef(chat.key, "", lang)  # (no name: a replay greets nobody, and the link stays short)
        link = links.replay(viewer, table_id, self.deps.clock())
        return [translator(lang).format(REPLAY_LINK, link=link)]

    async def press(self, user: UserRef, token: Token, chat: ChatRef | None) -> Outcome:
        """A history button: open a kept hand (to the presser, or in the chat) or export its match."""
        lang = lang_for(user)
        command = token.command
        try:
            if isinstance(command, ExportMatch):
                return await self._export(user, token, chat)
            if not isinstance(command, OpenHand) or token.step is not None or not token.hand:
                return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
            kept = parse_kept(await self.deps.history.hand(token.table, token.hand))
            if kept is None:
                return Outcome(answer=say(lang, HAND_GONE), ok=False)
            if chat is None or not await self._lists(chat, kept):
                # A history button acts only in the chat whose history it shows: anything else is forged.
                return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
            if not command.here:
                return self._story_privately(user, kept, origin=None if chat.private else chat.key)
            if not self._first_post(kept.table, str(kept.hand_no), chat.key):
                return Outcome(answer=say(lang, ALREADY_POSTED), ok=False)
            chat_lang = await self.chats.language_of(chat, user)
            text = story_text(chat_lang, kept, match_title([kept]))
            return Outcome(messages=(OutMessage(slot="story", text=text, chat=chat.key, fresh=True),))
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False, failed=True)

    async def story(self, user: UserRef, table: str, hand_no: int) -> Outcome:
        """One kept hand to the user privately (a deep link from a history button the bot could not answer
        privately: the user had never opened it)."""
        lang = lang_for(user)
        try:
            kept = parse_kept(await self.deps.history.hand(table, hand_no))
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False, failed=True)
        if kept is None:
            return Outcome(answer=say(lang, HAND_GONE), ok=False)
        return self._story_privately(user, kept, origin=None)

    def _story_privately(self, user: UserRef, kept: KeptHand, origin: str | None) -> Outcome:
        lang = lang_for(user)
        text = story_text(lang, kept, match_title([kept]))
        view = OutMessage(slot="story", text=text, user=user.key, fresh=True, origin=origin)
        answer = say(lang, SENT_PRIVATELY) if origin is not None else None
        return Outcome(answer=answer, messages=(view,))

    async def _export(self, user: UserRef, token: Token, chat: ChatRef | None) -> Outcome:
        lang = lang_for(user)
        if token.stamp != "0":
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        found = await self.deps.history.hands(token.table)
        kept = [hand for hand in (parse_kept(entry) for _, entry in found) if hand is not None]
        if not kept:
            return Outcome(answer=say(lang, HAND_GONE), ok=False)
        if chat is None or not await self._lists(chat, kept[0]):
            return Outcome(answer=say(lang, msg.STALE_BUTTON), ok=False)
        if not self._first_post(token.table, "export", chat.key):
            return Outcome(answer=say(lang, ALREADY_POSTED), ok=False)
        chat_lang = await self.chats.language_of(chat, user)
        t = translator(chat_lang)
        name = f"mus-{token.table}"
        files = (
            (f"{name}.json", export_json(kept), t.format(EXPORT_JSON_CAPTION, file=f"{name}.json")),
            (f"{name}.txt", export_text(chat_lang, kept), t.gettext(EXPORT_TEXT_CAPTION)),
        )
        views = tuple(
            OutMessage(slot="export", text=caption, chat=chat.key, fresh=True, document=(file, content))
            for file, content, caption in files
        )
        return Outcome(messages=views)

    async def _lists(self, chat: ChatRef, kept: KeptHand) -> bool:
        """Whether ``chat`` shows the history of ``kept``'s match: the chat it was kept in, or the chat that
        lists the match now (a chat that moved to a new key took its list along)."""
        if chat.key == kept.chat:
            return True
        listed = await self.deps.history.matches(chat.key, self.deps.clock(), limit=MATCHES_PER_CHAT)
        return kept.table in listed

    def _first_post(self, table: str, what: str, chat: str) -> bool:
        """Whether ``what`` of ``table`` may be posted in ``chat`` now (once per repost interval)."""
        if len(self._history_posted) >= 10_000:
            self._history_posted.clear()
        now = self.deps.clock()
        key = (f"{table}:{what}", chat)
        if now - self._history_posted.get(key, -1e18) < self.deps.repost_interval:
            return False
        self._history_posted[key] = now
        return True
