"""One's own language, wherever one plays: what a person reads alone (their cards, answers to them).

A chat's language (``/language`` in a group) is what everybody there reads. A person may choose their own
too — on Discord, ``/mus language`` in a server, whose language belongs to its admins. It is kept as their
private chat's language (the key of a person's private chat is theirs, on every platform), so it is also
the language of their solo games and lessons; adapters read it back when the person acts (see
:meth:`bot.app._chat_commands.ChatCommands.chosen_language`). The table they sit at follows at once: their
seat's language changes, and their private view is drawn again in it.
"""

from __future__ import annotations

from bot.app._deps import ServiceDeps
from bot.app._unit_of_work import TableWork
from bot.i18n import LANGUAGE_NAMES, LANGUAGES
from bot.i18n import common as msg
from bot.kernel import Outcome, UserRef, measured_command
from bot.store import StoreUnavailable
from bot.table import Answer, TableContext, say


class OwnLanguage:
    """Sets a person's own language, and their seat's at the table they sit at."""

    def __init__(self, deps: ServiceDeps, tables: TableWork) -> None:
        """Use the service's preferences and tables."""
        self.deps = deps
        self.tables = tables

    @measured_command("own_language")
    async def choose(self, user: UserRef, code: str) -> Outcome:
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
