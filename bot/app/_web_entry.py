"""One's own way to the web table from a chat that cannot open it as an app: "🃏 Table" pressed, a signed
link answered to the presser alone.

:class:`WebEntry` is a member of :class:`bot.app.Service` (``service.web``); the service's bus hands it the
presses of :class:`bot.kernel.OpenWeb`. The press is checked as every button is — a forged token, a button
of an earlier hand or of a finished table, a table of another chat, a paused table: refused, nothing made —
and then answered with a link bound to the presser and that table (:meth:`bot.kernel.WebLinks.table`) that
expires: their seat's view if they play there, the public table if they watch. The link is a credential:
it travels in the outcome's :attr:`~bot.kernel.Outcome.link`, for the adapter to show to the presser alone,
and is never logged.
"""

from __future__ import annotations

from dataclasses import replace

from bot.app._deps import ServiceDeps
from bot.app._unit_of_work import TableWork
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.kernel import Button, ChatRef, Outcome, TableStatus, Token, UserRef, hand_stamp
from bot.screens import OPEN_TABLE
from bot.table import Answer, Refusal, TableContext, lang_for, refuse_if_paused, say

_ = N_

# Translators: {hours} is how long the link works. The link shows the presser's own cards: not to share.
YOUR_LINK = _("Your own link to this table, for {hours} hours: it shows your cards, so keep it to yourself.")
# Translators: {hours} is how long the link works; the presser is not seated, so they watch.
WATCH_LINK = _("Your link to watch this table, for {hours} hours.")


class WebEntry:
    """Answers "🃏 Table" with the presser's own signed link to the table's web page."""

    def __init__(self, deps: ServiceDeps, tables: TableWork) -> None:
        """Check presses at the tables of ``tables``; write links as ``deps.web`` says."""
        self.deps = deps
        self.tables = tables

    async def press(self, user: UserRef, token: Token, chat: ChatRef | None) -> Outcome:
        """The presser's link to the table the button belongs to, if the button still stands there."""
        web = self.deps.web
        if web is None or chat is None or not web.door(chat.key).on_press:  # no such button was drawn
            return Outcome(answer=say(lang_for(user), msg.STALE_BUTTON), ok=False)
        hours = round(web.links.hours) if web.links.hours >= 1 else web.links.hours
        langs: list[str] = []

        def step(ctx: TableContext) -> Answer:
            refuse_if_paused(ctx)
            table = ctx.table
            stale = token.stamp != hand_stamp(table.hand_no) or table.status is not TableStatus.PLAYING
            if table.chat != chat.key or stale:
                raise Refusal(msg.STALE_BUTTON)
            langs.append(lang_for(user, table))
            seated = table.seat_of(user.key) is not None
            return (YOUR_LINK if seated else WATCH_LINK), {"hours": hours}

        outcome = await self.tables.run(token.table, user, step)
        if not outcome.ok or not langs:
            return outcome
        address = web.links.table(user, token.table, self.deps.clock())
        return replace(outcome, link=Button.link(say(langs[-1], OPEN_TABLE) or "", address))
