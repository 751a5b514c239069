"""Languages: a chat's (``/language``: what everybody there reads) and a person's own (what they read alone:
their cards, the answers to them).

A chat's language is kept for its community (a Discord server) or the chat itself; the table in play follows
it if the asker plays there. A person may choose their own too — on Discord, ``/mus language`` in a server,
whose language belongs to its admins. It is kept as their private chat's language (the key of a person's
private chat is theirs, on every platform), so it is also the language of their solo games and lessons;
adapters read it back when the person acts (see
:meth:`bot.app._chat_commands.ChatCommands.chosen_language`). The table they sit at follows at once: their
seat's language changes, and their private view is drawn again in it.
"""

from __future__ import annotations

from bot.app._chat_commands import ChatCommands
from bot.app._deps import ServiceDeps
from bot.app._unit_of_work import TableWork
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.kernel import (
    Button,
    ChatRef,
    Outcome,
    OutMessage,
    TableStatus,
    UserRef,
    language_token,
    measured_command,
)
from bot.store import StoreUnavailable
from bot.table import Answer, TableContext, say

_ = N_

# Translators: {language} is the native name of the language the game is played in, e.g. "Euskara".
GAME_KEEPS_LANGUAGE = _("The game in progress stays in {language}.")
UNKNOWN_LANGUAGE = _("Unknown language. Choose one of: {languages}")


class Languages:
    """Sets a chat's language (with its table's), and a person's own (with their seat's)."""

    def __init__(self, deps: ServiceDeps, tables: TableWork, chats: ChatCommands) -> None:
        """Use the service's preferences and tables, and what a chat reads now (its picker's language)."""
        self.deps = deps
        self.tables = tables
        self.chats = chats

    @measured_command("language")
    async def chat(self, chat: ChatRef, user: UserRef, code: str | None) -> Outcome:
        """``/language xx``: the chat's language (also the active table's); without one, a picker."""
        requested = (code or "").strip().lower()[:8]
        if requested not in LANGUAGES:
            lang = await self.chats.language_of(chat, user)
            t = translator(lang)
            text = t.gettext(msg.CHOOSE_LANGUAGE)
            if requested:
                names = ", ".join(f"{c} ({LANGUAGE_NAMES[c]})" for c in LANGUAGES)
                text = f"{t.format(UNKNOWN_LANGUAGE, languages=names)}\n{text}"
            buttons = [Button(LANGUAGE_NAMES[c], language_token(c)) for c in LANGUAGES]
            picker = OutMessage(
                slot="language",
                text=text,
                chat=chat.key,
                fresh=True,
                buttons=(tuple(buttons[:3]), tuple(buttons[3:])),
            )
            return Outcome(messages=(picker,), ok=not requested)
        try:
            await self.deps.prefs.set_language(chat.prefs_key, requested)
            table_id = await self.deps.tables.table_for_chat(chat.key)
        except StoreUnavailable:
            return Outcome(answer=say(requested, msg.STORE_UNAVAILABLE), ok=False)
        answer = say(requested, (msg.LANGUAGE_SET, {"language": LANGUAGE_NAMES[requested]}))
        if table_id is None:
            return Outcome(answer=answer)
        table = await self.tables.load_table(table_id)
        if table is not None and table.status is TableStatus.PLAYING and table.seat_of(user.key) is None:
            # Only the players change the game in progress; the chat's next tables get the new language.
            kept = say(requested, (GAME_KEEPS_LANGUAGE, {"language": LANGUAGE_NAMES[table.lang]}))
            return Outcome(answer=f"{answer} {kept}", table=table_id)

        def step(ctx: TableContext) -> Answer:
            ctx.table.lang = requested
            if ctx.table.private:
                for s in ctx.table.seats:
                    s.lang = requested
            ctx.changed = True
            return None

        outcome = await self.tables.run(table_id, user, step)
        return Outcome(answer=answer, messages=outcome.messages, table=table_id)

    @measured_command("own_language")
    async def own(self, user: UserRef, code: str) -> Outcome:
        """``user`` reads ``code`` (one of :data:`~bot.i18n.LANGUAGES`: ``ValueError`` otherwise) from now
        on."""
        lang = code.strip().lower()
        if lang not in LANGUAGES:
            raise ValueError(f"not a language of ours: {code!r}")
        try:
            await self.deps.prefs.set_language(user.key, lang)
            table_id = await self.deps.tables.table_for_user(user.key)
        except StoreUnavailable:
            return Outcome(answer=say(lang, msg.STORE_UNAVAILABLE), ok=False)
        answer = say(lang, (msg.LANGUAGE_SET, {"language": LANGUAGE_NAMES[lang]}))
        if table_id is None:
            return Outcome(answer=answer)

        def step(ctx: TableContext) -> Answer:
            seat = ctx.table.seat_of(user.key)
            if seat is not None and ctx.table.seats[seat].lang != lang:
                ctx.table.seats[seat].lang = lang
                ctx.changed = True
            return None

        seated = await self.tables.run(table_id, user, step)
        return Outcome(answer=answer, messages=seated.messages, table=table_id)
