"""Commands about a chat rather than a table: leaderboards, one's own figures, the rules, help.

:class:`ChatCommands` needs only the service's dependencies (the preferences for the chat's language and the
leaderboard); :class:`bot.app._service.Service` inherits these commands, so adapters call them on the service.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from bot.app._deps import ServiceDeps
from bot.app._throttle import Verdict
from bot.i18n import DEFAULT_LANGUAGE, normalize_language, translator
from bot.i18n import common as msg
from bot.i18n.markers import N_
from bot.i18n.rules import rules_sections, rules_summary
from bot.kernel import ChatRef, Outcome, OutMessage, UserRef, clean_name, isolate, measured_command
from bot.leaderboard import GLOBAL_SCOPE
from bot.store import StoreUnavailable, store_budget
from bot.table import lang_for, say

_ = N_

#: Seconds the act-once check may take (within the update's own budget): it is a guard against a rare
#: duplicate, and must not spend the time the update's answer needs when Redis does not answer.
FIRST_DELIVERY_BOUND = 0.25

RULES_SENT_PRIVATELY = _("📖 I sent you the full rules in our private chat.")
SLOW_DOWN = _("Slow down, please: too many commands at once. Try again in a few seconds.")

#: The bot's commands and what each does, for a platform's command menu (descriptions are msgids).
COMMAND_LIST: tuple[tuple[str, str], ...] = (
    ("newgame", _("Open a Mus table here")),
    ("leaderboard", _("Leaderboard of this chat")),
    ("stats", _("Your own figures")),
    ("rules", _("The rules in a minute")),
    ("learn", _("Ten short lessons to learn Mus")),
    ("language", _("Language of this chat")),
    ("history", _("The last hands played here, to open or export")),
    ("cancel", _("Close the table")),
    ("help", _("What this bot does")),
)
#: Words that ask ``/rules`` for all of them and ``/leaderboard`` for everyone, in every language we speak.
FULL_WORDS = frozenset({"full", "all", "completas", "completo", "osoak", "osoa", "toutes", "todas"})
GLOBAL_WORDS = frozenset({"global", "all", "todos", "todas", "guztiak", "tous", "mundial"})


def wants_full_rules(args: Sequence[str]) -> bool:
    """Whether ``/rules`` arguments ask for the full rules (``/rules full``, ``/rules osoak``…)."""
    return bool(args) and args[0].strip().lower() in FULL_WORDS


def leaderboard_scope(args: Sequence[str]) -> str:
    """``"global"`` when ``/leaderboard`` arguments ask for everyone, else ``"chat"``."""
    return "global" if args and args[0].strip().lower() in GLOBAL_WORDS else "chat"


LEADERBOARD_TITLE = _("🏆 Leaderboard of this chat")
GLOBAL_TITLE = _("🌍 Global leaderboard")
LEADERBOARD_EMPTY = _("No finished games yet.")
LEADERBOARD_LINE = _("{rank}. {name} · {rating} · {won}/{games} games")
STATS_LINE = _(
    "{name}: rating {rating} (#{rank}) · games {won}/{games} · vacas {vwon}/{vacas} · "
    "matches {mwon}/{matches}"
)
STATS_NONE = _("{name}: no finished games yet.")
HELP_TEXT = _(
    "Mus with 8 kings, in pairs.\n"
    "/newgame — open a table here (in a private chat: you and a machine partner against two machines)\n"
    "/cancel — close the table\n"
    "/leaderboard — the leaderboard of this chat (/leaderboard global for everyone)\n"
    "/stats — your own figures\n"
    "/rules — the rules in a minute (/rules full for all of them)\n"
    "/language — the language of this chat\n"
    "/history — the last hands played here: open one, export the match\n"
    "/learn — ten short lessons to learn Mus (in a private chat with me)"
)


class ChatCommands:
    """``/leaderboard``, ``/stats``, ``/rules``, ``/help``, and the language a chat reads."""

    def __init__(self, deps: ServiceDeps) -> None:
        """Use the service's preferences, leaderboard, throttle and act-once store."""
        self.deps = deps

    async def first_delivery(self, delivery_id: str) -> bool:
        """Whether a platform's update or interaction (``tg:update:123``) is delivered for the first time:
        a second delivery of it is ignored. If the store cannot tell within :data:`FIRST_DELIVERY_BOUND`, it
        is acted on (a rare duplicate is better than a lost move)."""
        try:
            with store_budget(asyncio.get_running_loop().time() + FIRST_DELIVERY_BOUND):
                return await self.deps.once.first(delivery_id)
        except StoreUnavailable:
            return True

    async def delivered(self, delivery_id: str) -> None:
        """The update or interaction ``delivery_id`` was handled: a later delivery of it is ignored (see
        :mod:`bot.store._once`: until then a worker holds it only briefly, so one that died while handling it
        does not make a retry of it be ignored for good)."""
        with contextlib.suppress(StoreUnavailable):
            await self.deps.once.done(delivery_id)

    async def admit(self, chat: ChatRef, user: UserRef) -> Outcome | None:
        """``None`` if ``user`` may run a command in ``chat`` now; else what to answer instead: "slow down"
        the first time in a run of refusals, nothing afterwards (adapters send no message for an outcome
        without answer or views)."""
        verdict = self.deps.throttle.check(user.key, chat.key)
        if verdict is Verdict.ALLOW:
            return None
        if verdict is Verdict.QUIET:
            return Outcome(ok=False)
        return Outcome(answer=say(lang_for(user), SLOW_DOWN), ok=False)

    @measured_command("leaderboard")
    async def leaderboard(self, chat: ChatRef, user: UserRef, scope: str = "chat", n: int = 10) -> Outcome:
        """``/leaderboard``: top players of this chat (or global)."""
        lang = await self.language_of(chat, user)
        t = translator(lang)
        board = self.deps.leaderboard
        key = GLOBAL_SCOPE if scope == "global" else chat.key
        title = GLOBAL_TITLE if scope == "global" else LEADERBOARD_TITLE
        lines = [t.gettext(title)]
        try:
            entries = [] if board is None else await board.top(key, n)
        except StoreUnavailable:
            return Outcome(answer=t.gettext(msg.STORE_UNAVAILABLE), ok=False)
        if not entries:
            lines.append(t.gettext(LEADERBOARD_EMPTY))
        for e in entries:
            lines.append(
                t.format(
                    LEADERBOARD_LINE,
                    rank=e.rank,
                    name=isolate(clean_name(e.name)),
                    rating=e.rating,
                    won=e.games_won,
                    games=e.games,
                )
            )
        return Outcome(
            messages=(OutMessage(slot="leaderboard", text="\n".join(lines), chat=chat.key, fresh=True),)
        )

    @measured_command("stats")
    async def stats(self, chat: ChatRef, user: UserRef) -> Outcome:
        """``/stats``: the user's own line in this chat and globally."""
        lang = await self.language_of(chat, user)
        t = translator(lang)
        board = self.deps.leaderboard
        lines = []
        try:
            for key, title in ((chat.key, LEADERBOARD_TITLE), (GLOBAL_SCOPE, GLOBAL_TITLE)):
                e = None if board is None else await board.entry(key, user.key)
                lines.append(t.gettext(title))
                if e is None:
                    lines.append(t.format(STATS_NONE, name=isolate(user.name)))
                else:
                    lines.append(
                        t.format(
                            STATS_LINE,
                            name=isolate(clean_name(e.name)),
                            rating=e.rating,
                            rank=e.rank,
                            won=e.games_won,
                            games=e.games,
                            vwon=e.vacas_won,
                            vacas=e.vacas,
                            mwon=e.matches_won,
                            matches=e.matches,
                        )
                    )
        except StoreUnavailable:
            return Outcome(answer=t.gettext(msg.STORE_UNAVAILABLE), ok=False)
        return Outcome(messages=(OutMessage(slot="stats", text="\n".join(lines), chat=chat.key, fresh=True),))

    @measured_command("rules")
    async def rules(self, chat: ChatRef, user: UserRef, full: bool = False) -> Outcome:
        """``/rules``: the one-minute summary in the chat, or the full rules privately to the asker.

        The full rules are several long messages: posted in a group they would flood it (and a group may
        receive only about 20 messages a minute), so they go to the asker's private chat, section by section.
        """
        lang = await self.language_of(chat, user)
        if not full:
            summary = OutMessage(
                slot="rules", text=rules_summary(lang), chat=chat.key, fresh=True, markdown=True
            )
            return Outcome(messages=(summary,))
        if not chat.private:
            lang = lang_for(user) if user.lang else lang
        sections = tuple(
            OutMessage(
                slot="rules",
                text=f"**{heading}**\n\n{body}",
                user=user.key,
                fresh=True,
                markdown=True,
                origin=None if chat.private else chat.key,
            )
            for heading, body in rules_sections(lang)
        )
        answer = None if chat.private else say(lang, RULES_SENT_PRIVATELY)
        return Outcome(answer=answer, messages=sections)

    @measured_command("help")
    async def help(self, chat: ChatRef, user: UserRef) -> Outcome:
        """``/help``: what the bot does and its commands."""
        lang = await self.language_of(chat, user)
        return Outcome(
            messages=(
                OutMessage(slot="help", text=translator(lang).gettext(HELP_TEXT), chat=chat.key, fresh=True),
            )
        )

    async def chat_language(self, chat_key: str) -> str:
        """The language a chat reads: its ``/language``, else the default."""
        return await self.language_of(ChatRef(chat_key), None)

    async def chosen_language(self, key: str) -> str | None:
        """The language chosen with ``/language`` for a chat, a community or a person (their private chat's
        key), if any; ``None`` too when the store cannot say now."""
        try:
            chosen = await self.deps.prefs.get_language(key)
        except StoreUnavailable:
            return None
        return normalize_language(chosen) if chosen else None

    async def preference(self, key: str, flag: str) -> bool:
        """Whether ``key`` said yes to ``flag`` (no when the store cannot say now)."""
        try:
            return await self.deps.prefs.get_flag(key, flag)
        except StoreUnavailable:
            return False

    async def set_preference(self, key: str, flag: str, on: bool) -> bool:
        """Remember ``key``'s yes or no to ``flag``; whether it was kept (the store answered)."""
        try:
            await self.deps.prefs.set_flag(key, flag, on)
        except StoreUnavailable:
            return False
        return True

    async def language_of(self, chat: ChatRef, user: UserRef | None) -> str:
        """The chat's ``/language``; without one, a private chat's user's own language, else the language the
        place declares, else the default."""
        try:
            chosen = await self.deps.prefs.get_language(chat.prefs_key)
        except StoreUnavailable:  # the chat's choice is unknown for now: the asker's own language
            return lang_for(user) if user is not None else DEFAULT_LANGUAGE
        if chosen:
            return normalize_language(chosen)
        if chat.private and user is not None and user.lang:
            return normalize_language(user.lang)
        return normalize_language(chat.lang) if chat.lang else DEFAULT_LANGUAGE
