"""Phase 4 of bench/discord.py — noisy neighbours: a game in one channel while two other channels are flooded
with commands, on Discord's own rate limits; then the same with someone flooding the game's channel too.

The fake Discord enforces Discord's rate limits (``DiscordLimits()``: per channel 5 new messages and 5 edits
per 5 s, 50 requests a second for the bot, interaction callbacks apart; a request over them is answered
``429`` with ``retry_after``, and every answer reports the bucket's real remaining count); the bot runs as
production builds it (one call a second per channel, discord.py pacing itself by the headers). In each of
two channels, people type ``/mus help``, ``/mus leaderboard``, ``/mus newgame`` and ``/mus cancel`` twice a
second each; in a third, four members play (bench/discord_players.py: one reads their cards with "My cards").
Printed: the players' interactions in the game's channel (its table, the ephemerals of "My cards"), then in
their DMs: answered, the answer latency from each interaction's creation (p50, p99, max), answered late
(over Discord's 3 s: the member sees "This interaction failed") and never; how long the member on turn
waited for their buttons; per channel, the commands typed and answered in time, the lane's posts and edits
(the most in any 5 s) and the 429s.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter

from bench.discord_players import open_table, running_bot
from bench.figures import most_within, ms, percentile
from tests.e2e.fake_discord import Call, FakeChannel, FakeDiscord, FakeGuild, FakeInteraction, FakeUser
from tests.e2e.fake_discord_limits import DiscordLimits

#: What the people in a noisy channel type, in turn (``/mus …``).
COMMANDS = ("help", "leaderboard", "newgame", "cancel")
#: People flooding each noisy channel (each types a command twice a second).
SPAMMERS = 2
#: Discord drops an interaction's first answer later than this after its creation.
INTERACTION_WINDOW = 3.0


async def spam(dc: FakeDiscord, guild: FakeGuild, channel: FakeChannel, stop: asyncio.Event) -> int:
    """:data:`SPAMMERS` people type commands in ``channel`` twice a second each until ``stop``; how many."""
    people = [dc.add_user(f"{channel.name} {n}", locale="es-ES", guilds=[guild]) for n in range(SPAMMERS)]
    rounds = 0
    while not stop.is_set():
        for n, person in enumerate(people):  # each one types every command in turn (cancelling their lobby)
            dc.slash(person, channel, "mus", COMMANDS[(rounds + n) % len(COMMANDS)])
        rounds += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
    return rounds * len(people)


def channel_of(call: Call) -> int | None:
    """The channel a ``/channels/{channel_id}/...`` request writes to."""
    if not (call.route_template or "").startswith("/channels/{channel_id}"):
        return None
    return int(call.path.split("/")[2])


def in_time(interactions: list[FakeInteraction]) -> tuple[list[float], int, int]:
    """The answer latencies from creation (the fake creates and dispatches an interaction at once), how many
    were answered late (over 3 s, or refused as too old), how many never."""
    latencies = [i.answered_after for i in interactions if i.answered_after is not None]
    late = sum(1 for i in interactions if (i.answered_after or 0) > INTERACTION_WINDOW or i.late_callbacks)
    return latencies, late, sum(1 for i in interactions if not i.answered)


def channel_line(dc: FakeDiscord, channel: FakeChannel, typed: int, players: set[FakeUser]) -> str:
    """One channel's figures: commands typed (not by ``players``) and answered in time, the lane's posts and
    edits, 429s."""
    commands = [i for i in dc.interactions if i.channel is channel and i.type == 2 and i.user not in players]
    _, late, never = in_time(commands)
    lane = [c for c in dc.calls if channel_of(c) == channel.id and c.method in ("POST", "PATCH")]
    done = [c for c in lane if c.ok]
    refused = sum(1 for c in lane if c.status == 429)
    most = most_within([c.at for c in done], 5.0)
    return (
        f"    #{channel.name:<8} {typed:4d} commands typed, {len(commands) - late - never} answered in time "
        f"({late} late, {never} never) · lane: {sum(c.method == 'POST' for c in done)} posts, "
        f"{sum(c.method == 'PATCH' for c in done)} edits, at most {most} in 5 s · {refused} × 429"
    )


async def noisy(hands: int, seed: int) -> None:
    """The phase: the game next to two flooded channels, then flooded itself too."""
    print(
        f"phase 4 — noisy neighbours (Discord's rate limits on, production pacing): {SPAMMERS} people typing "
        "/mus help, leaderboard, newgame, cancel twice a second each in each flooded channel"
    )
    await neighbours(hands, seed, flood_the_game=False)
    await neighbours(hands, seed, flood_the_game=True)


async def neighbours(hands: int, seed: int, *, flood_the_game: bool) -> None:
    """Four members play ``hands`` hands in a channel while two others (and with ``flood_the_game`` theirs
    too) are flooded; the figures of the module docstring."""
    async with running_bot(seed, 1.0, limits=DiscordLimits()) as bench:
        dc, guild = bench.dc, bench.guild
        loud = [dc.add_channel(guild, name) for name in ("noisy", "louder")]
        stop = asyncio.Event()
        flood = {c.id: asyncio.create_task(spam(dc, guild, c, stop)) for c in loud}
        started = time.perf_counter()
        try:
            await asyncio.sleep(1.0)  # the noise has begun
            table = await open_table(bench, seed, solo=False, flush_each=False)
            if flood_the_game:
                flood[table.channel.id] = asyncio.create_task(spam(dc, guild, table.channel, stop))
            played = await table.play_hands(hands)
        finally:
            stop.set()
            typed = dict(zip(flood, await asyncio.gather(*flood.values()), strict=True))
            elapsed = time.perf_counter() - started
    flooded = "flooded too" if flood_the_game else "quiet"
    print(f"  the game's channel {flooded}: {played} hand(s), {elapsed:.1f} s wall")
    members = set(table.players.values())
    for where, here in (
        ("in the game's channel", lambda i: i.channel is table.channel),
        ("in their DMs", lambda i: i.channel.is_dm),
    ):
        game = [i for i in dc.interactions if i.user in members and here(i)]
        latencies, late, never = in_time(game)
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        print(
            f"    the players' interactions {where}: {len(latencies)} of {len(game)} answered · from "
            f"creation p50 {ms(p50)} · p99 {ms(p99)} · max {ms(max(latencies, default=float('nan')))} · "
            f"answered late (> {INTERACTION_WINDOW:.0f} s): {late} · never answered: {never}"
        )
    waits = table.waits
    print(
        f"    member on turn waiting for their buttons: p50 {percentile(waits, 0.5):.2f} s · p99 "
        f"{percentile(waits, 0.99):.2f} s · max {max(waits, default=float('nan')):.2f} s over {len(waits)} "
        "turns"
    )
    for channel in (table.channel, *loud):
        print(channel_line(dc, channel, typed.get(channel.id, 0), members))
    names = {c.id: f"#{c.name}" if not c.is_dm else "DMs" for c in dc.channels.values()}
    refused = Counter(
        names.get(channel_of(c) or 0, "interaction webhooks") for c in dc.calls if c.status == 429
    )
    print(
        f"    429s per channel: {dict(refused) or 'none'} (over the fake's rate limits: "
        f"{len(dc.limited())}); requests refused otherwise: {len(dc.rejected())}"
    )
