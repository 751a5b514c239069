"""Write ``docs/screens.md``: text captures of what players see, from a real seeded game.

    PYTHONHASHSEED=0 python docs/make_screens.py    # (re)write docs/screens.md

Two people (Ane, Brais) and two machine players at a group table, played through the real
:class:`bot.app._service.Service` on in-memory stores, with a fixed seed: the captures are what the Telegram
adapter would send (group table, private hand, the count), in each of the six languages: one read of the page
tells whether a hand reads naturally to a player of that language (see docs/translating.md). The table
waiting for an answer is shown once more as Discord draws it: an embed (:mod:`adapters.discord.embeds`) with
its buttons in Discord's rows.

The page is written with ``PYTHONHASHSEED=0``, so that nothing hashed (a set of strings, say) can make two
runs differ: the same code writes the same page, and a diff of ``docs/screens.md`` shows what a change of code
or words did. (Today the page does not depend on the hash seed at all: 0, 1, 2, 3, 42 and random seeds write
the same bytes; the fixed seed keeps it so if that changes.)
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

from adapters.discord.embeds import embed_of
from adapters.discord.layout import arrange, written
from bot.app import Service, ServiceDeps
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.kernel import ChatRef, Outcome, OutMessage, UserRef, parse_token
from bot.leaderboard import MemoryLeaderboard
from bot.screens._story import STAKE
from bot.store._memory import MemoryDeadlineStore, MemoryTableStore
from bot.store._prefs import MemoryPreferences
from bot.table import FlowSettings

OUT = Path(__file__).resolve().parent / "screens.md"
SEED = 7


class Screen:
    """The latest view of each (slot, addressee), as the chat would show it."""

    def __init__(self) -> None:
        self.latest: dict[tuple[str, str], OutMessage] = {}
        self.showdowns: list[OutMessage] = []
        self.at_showdown: dict[tuple[str, str], OutMessage] = {}
        """What every slot showed when the first hand ended (the table's last state, the closed hands)."""

    def take(self, outcome: Outcome) -> None:
        """Show an outcome's messages, as the chat would."""
        for m in outcome.messages:
            self.latest[(m.slot, m.user or m.chat or "")] = m
            if m.slot == "showdown":
                self.showdowns.append(m)
                if len(self.showdowns) == 1:
                    self.at_showdown = dict(self.latest)
                    for later in outcome.messages[outcome.messages.index(m) + 1 :]:  # the closed hands
                        if later.slot == "hand" and not later.fresh:
                            self.at_showdown[(later.slot, later.user or "")] = later


def render(message: OutMessage) -> str:
    """A message as text, its buttons in brackets row by row."""
    rows = [" ".join(f"[{b.label}]" for b in row) for row in message.buttons]
    return "\n".join([message.text, *rows])


def render_discord(message: OutMessage) -> str:
    """A table's message as Discord shows it: the embed (its coloured edge drawn as ▌, the title first) and
    its buttons in Discord's rows (a menu for what five rows cannot hold)."""
    embed = embed_of(message, written(message))
    edge = "▌"
    lines = [f"(embed, edge #{embed.colour.value if embed.colour else 0:06x})", f"{edge} {embed.title}"]
    lines.extend(f"{edge} {line}" for line in (embed.description or "").split("\n"))
    buttons, menus = arrange(message.buttons)
    lines.extend(" ".join(f"[{b.label}]" for b in row) for row in buttons)
    lines.extend(f"[menu: {', '.join(b.label for b in menu)}]" for menu in menus)
    return "\n".join(lines)


async def capture(lang: str) -> list[tuple[str, str]]:
    """Play the seeded hand in ``lang``; the captures (key, text) worth showing."""
    clock = [1_000_000.0]
    seeds = iter(range(SEED * 1000, SEED * 1000 + 100_000))
    ids = iter(f"s{i:07d}" for i in range(1, 1000))
    service = Service(
        ServiceDeps(
            tables=MemoryTableStore(),
            deadlines=MemoryDeadlineStore(),
            prefs=MemoryPreferences(),
            leaderboard=MemoryLeaderboard(),
            settings=FlowSettings(machine_delay=1.5, next_hand_delay=4, turn_timeout=60),
            clock=lambda: clock[0],
            rng_factory=lambda: random.Random(next(seeds)),
            id_factory=lambda: next(ids),
        )
    )
    group = ChatRef("tg:-100", title="Mus en la sociedad")
    ane, brais = UserRef("tg:1", "Ane", lang), UserRef("tg:2", "Brais", lang)
    users = {ane.key: ane, brais.key: brais}
    screen = Screen()
    await service.set_language(group, ane, lang)
    opened = await service.new_table(group, ane)
    screen.take(opened)
    lobby = screen.latest[("lobby", group.key)]
    join = next(b.token for row in lobby.buttons for b in row if parse_token(b.token).code == "seat1")
    screen.take(await service.press(brais, join))
    lobby = screen.latest[("lobby", group.key)]
    start = next(b.token for row in lobby.buttons for b in row if parse_token(b.token).code == "start")
    screen.take(await service.press(ane, start))
    rng = random.Random(SEED)
    stake = translator(lang).gettext(STAKE).split("{")[0]  # "At stake: ", "En juego: "…
    shots: list[tuple[str, str]] = []
    stake_shot = discard_shot = discord_shot = None
    for _ in range(400):
        table = await service.load_table(opened.table or "")
        assert table is not None
        if table.hand_no > 1 and screen.showdowns:
            break
        view = screen.latest.get(("table", group.key))
        codes = {} if view is None else {parse_token(b.token).code: b.token for r in view.buttons for b in r}
        on_turn = next((k for k, u in users.items() if table.seat_of(k) == _turn(table)), None)
        if view is not None and stake in view.text and stake_shot is None:
            stake_shot, discord_shot = render(view), render_discord(view)
        for key in users:  # discards: pick two cards privately and confirm
            private = screen.latest.get(("hand", key))
            if private is None:
                continue
            picks = [
                b.token
                for row in private.buttons
                for b in row
                if parse_token(b.token).code.startswith("pick")
            ]
            if picks and not any(b.label.startswith("✓") for row in private.buttons for b in row):
                discard_shot = discard_shot or render(private)
                for token in picks[:2]:
                    screen.take(await service.press(users[key], token))
                private = screen.latest[("hand", key)]
                confirm = next(
                    b.token for row in private.buttons for b in row if parse_token(b.token).code == "discard"
                )
                screen.take(await service.press(users[key], confirm))
        turn = [t for c, t in codes.items() if "-" in parse_token(t).stamp and c != "more"]
        if on_turn is not None and turn:
            preferred = [t for c, t in codes.items() if c in ("mus", "env2", "quiero", "sube2")]
            token = rng.choice(preferred or turn) if rng.random() < 0.8 else rng.choice(turn)
            screen.take(await service.press(users[on_turn], token))
            continue
        due = await service.deadlines.next_due()
        if due is None:
            break
        clock[0] = max(clock[0], due)
        for outcome in await service.deadlines.fire_due():
            screen.take(outcome)
    final_table = screen.at_showdown[("table", group.key)]
    if stake_shot:
        shots.append(("stake", stake_shot))
    if discord_shot:
        shots.append(("discord", discord_shot))
    if discard_shot:
        shots.append(("discard", discard_shot))
    shots.append(("table", render(final_table)))
    shots.append(("showdown", render(screen.showdowns[0])))
    hand = screen.at_showdown.get(("hand", ane.key))
    if hand is not None:
        shots.append(("hand", render(hand)))
    return shots


def _turn(table: object) -> int | None:
    from bot.kernel import TableState
    from engine.state import restore_match

    assert isinstance(table, TableState)
    if table.match is None:
        return None
    match = restore_match(table.match)
    return None if match.hand is None else match.hand.turn


TITLES = {
    "stake": "The group table while a bet waits for an answer (the stake, every word said so far)",
    "discord": "The same table on Discord: an embed, its edge coloured by the phase, the clock live",
    "discard": "A private hand during the discards (each button names its card)",
    "table": "The group table at the end of the hand: the whole story, kept until the count",
    "showdown": "The count: every hand shown, each line with its reasons",
    "hand": "A private hand once the hand is over (no buttons left)",
}


async def main() -> None:
    """Capture every language and write the page."""
    parts = [
        "# Screens\n",
        "Text captures of a real seeded game (two people, two machine players), written by "
        "`python docs/make_screens.py` through the bot's own service: what a Telegram group and a player's "
        "private chat show, and the table once more as a Discord channel shows it (an embed). Buttons are "
        "shown in brackets. The same seed deals the same cards in every "
        "language, so the sections read side by side. The same game on other surfaces: the web table with "
        "real cards ([web.md](web.md), screenshots at phone size), the full-screen terminal "
        "([terminal-fullscreen.md](terminal-fullscreen.md)) and its line mode "
        "([terminal.md](terminal.md)).\n",
    ]
    for lang in LANGUAGES:
        parts.append(f"\n## {LANGUAGE_NAMES[lang]}\n")
        for key, text in await capture(lang):
            parts.append(f"\n### {TITLES[key]}\n\n```text\n{text}\n```\n")
    OUT.write_text("".join(parts), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
