"""The language each member reads on Discord.

A server's language is the one its admins chose (``/mus-admin language``), else a Community server's
preferred locale (others always report en-US: it says nothing), else the default. A member's own view —
their cards, what is shown to them alone — is in:

1. the language they chose for themselves (``/mus language``, kept as their private chat's language, as on
   every platform);
2. else, in a server whose admins chose a language no Discord client can report (Basque, Galician: Discord
   has no locale for them), that language — a Basque server's members see Spanish clients, and would get
   Spanish cards otherwise;
3. else their client's language (Spanish, French, Brazilian Portuguese, English), else the server's.
"""

from __future__ import annotations

from dataclasses import replace

from adapters.discord.ids import LOCALE_LANGUAGES
from bot.app import Service
from bot.i18n import LANGUAGES
from bot.kernel import ChatRef, UserRef

#: Our languages that no Discord client reports (Discord has no locale for them).
UNREPORTED = frozenset(LANGUAGES) - frozenset(LOCALE_LANGUAGES.values())


async def reader(service: Service, chat: ChatRef, user: UserRef) -> UserRef:
    """``user`` with the language they read their own views in (see the module docstring)."""
    own = await service.chats.chosen_language(user.key)  # (a private chat's key is its person's)
    if own is not None:
        return replace(user, lang=own)
    if chat.community is not None:
        server = await service.chats.chosen_language(chat.community)
        if server in UNREPORTED:
            return replace(user, lang=server)
    return user
