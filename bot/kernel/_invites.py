"""Invitations: what a player who cannot be written to privately is asked to open, and what opening it does.

Cards and the full rules go to a player's private chat, but on some platforms a bot cannot write first to
someone who never opened it. Such a player is invited instead: from the group, once per table, with
a link whose payload says what to do when they open the bot — take the seat they pressed, send their hand,
send the full rules, or show a kept hand. The payload grammar is the core's (``j{table}{seat}``,
``h{table}``, ``rules``, ``s{table}-{hand}``: ≤ 64 characters of ``[A-Za-z0-9_-]``, what a platform's deep
links commonly allow); the link itself is the adapter's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.i18n import translator
from bot.i18n.markers import N_
from bot.kernel._names import isolate

_ = N_

INVITE = _("{name}, I cannot write to you yet: open a private chat with me to get your cards: {link}")
RULES_LINK = _("Open a private chat with me to read the full rules: {link}")
BLOCKED = _(
    "{name}, you blocked me, so your cards cannot reach you. Unblock me in our private chat to get them "
    "(the game goes on meanwhile): {link}"
)

_JOIN_RE = re.compile(r"^j(?P<table>[a-z0-9]{8})(?P<seat>[0-3])$")
_HAND_RE = re.compile(r"^h(?P<table>[a-z0-9]{8})$")
_STORY_RE = re.compile(r"^s(?P<table>[a-z0-9]{8})-(?P<hand>[1-9][0-9]{0,4})$")
_RULES = "rules"
_LEARN_RE = re.compile(r"^learn(?P<lesson>[1-9][0-9]?)?$")


@dataclass(frozen=True, slots=True)
class JoinSeat:
    """Take seat ``seat`` of ``table`` (a seat pressed in a lobby by someone the bot could not write to)."""

    table: str
    seat: int


@dataclass(frozen=True, slots=True)
class SendHand:
    """Send the player's hand at ``table``."""

    table: str


@dataclass(frozen=True, slots=True)
class SendRules:
    """Send the full rules."""


@dataclass(frozen=True, slots=True)
class ShowStory:
    """Send the story of kept hand ``hand`` of ``table`` (a history button pressed by someone the bot
    could not write to)."""

    table: str
    hand: int


@dataclass(frozen=True, slots=True)
class StartLessons:
    """Open the lessons (``/learn`` asked in a group): lesson ``lesson``, or where the learner was."""

    lesson: int | None = None


#: What opening the bot through an invitation does.
Invite = JoinSeat | SendHand | SendRules | ShowStory | StartLessons


def encode_invite(invite: Invite) -> str:
    """The payload an adapter puts in its link."""
    if isinstance(invite, JoinSeat):
        return f"j{invite.table}{invite.seat}"
    if isinstance(invite, SendHand):
        return f"h{invite.table}"
    if isinstance(invite, ShowStory):
        return f"s{invite.table}-{invite.hand}"
    if isinstance(invite, StartLessons):
        return "learn" if invite.lesson is None else f"learn{invite.lesson}"
    return _RULES


def parse_invite(payload: str) -> Invite | None:
    """The invitation a payload carries (``None`` for anything else: a plain start)."""
    if (m := _JOIN_RE.fullmatch(payload)) is not None:
        return JoinSeat(m["table"], int(m["seat"]))
    if (m := _HAND_RE.fullmatch(payload)) is not None:
        return SendHand(m["table"])
    if (m := _STORY_RE.fullmatch(payload)) is not None:
        return ShowStory(m["table"], int(m["hand"]))
    if (m := _LEARN_RE.fullmatch(payload)) is not None:
        return StartLessons(int(m["lesson"]) if m["lesson"] else None)
    return SendRules() if payload == _RULES else None


@dataclass(frozen=True, slots=True)
class Invitation:
    """A player to invite from a group: who, where, in which language, and what the link must do."""

    chat: str
    table: str
    name: str
    lang: str
    invite: Invite
    blocked: bool = False
    """The player blocked the bot (the notice asks them to unblock it, not to open it)."""

    def text(self, link: str) -> str:
        """The group notice, with the adapter's link."""
        notice = BLOCKED if self.blocked else INVITE
        return translator(self.lang).format(notice, name=isolate(self.name), link=link)


def rules_link_text(lang: str, link: str) -> str:
    """ "Open a private chat with me to read the full rules: {link}", in ``lang``."""
    return translator(lang).format(RULES_LINK, link=link)
