"""Discord's rate limits (issue 21): the fake Discord enforces them as Discord does, the real discord.py
client paces itself by the headers, and a channel full of commands never delays a game in another.

Discord answers a request over a route's bucket (5 messages per 5 s in a channel…) or over the bot's 50
requests a second with ``429`` and ``retry_after``; interaction callbacks are not bound to the global limit
(:mod:`.fake_discord_limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from adapters.discord.app import DiscordRuntime
from bot.kernel import TableStatus

from .conftest import DISCORD_TOKEN, FAST, memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import Call, FakeChannel, FakeDiscord, FakeInteraction, FakeUser
from .fake_discord_limits import DiscordLimits, Rule

#: What people type in a noisy channel, in turn.
SPAM = ("help", "leaderboard", "newgame", "cancel")


async def call(
    dc: FakeDiscord, method: str, path: str, body: Any = None, *, bot: bool = True
) -> tuple[int, Any, dict[str, str]]:
    """A raw request to the fake: status, JSON body, headers."""
    headers = {"Authorization": f"Bot {dc.token}"} if bot else {}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, dc.api_base + path, json=body, headers=headers) as resp,
    ):
        data = await resp.json() if resp.content_length else None
        return resp.status, data, dict(resp.headers)


@pytest.fixture
async def limited() -> AsyncIterator[FakeDiscord]:
    """The fake with Discord's limits, the global one shrunk to 8 a second (to meet it in a test)."""
    async with FakeDiscord(token=DISCORD_TOKEN, limits=DiscordLimits(global_per_second=8)) as fake:
        yield fake


async def test_a_sixth_message_in_five_seconds_is_refused_with_discords_429(limited: FakeDiscord) -> None:
    dc = limited
    guild = dc.add_guild("Mus club")
    noisy, other = dc.add_channel(guild, "noisy"), dc.add_channel(guild, "other")
    remaining, buckets = [], set()
    for n in range(5):
        status, _, headers = await call(dc, "POST", f"/channels/{noisy.id}/messages", {"content": f"m{n}"})
        assert status == 200 and headers["X-RateLimit-Limit"] == "5", headers
        remaining.append(int(headers["X-RateLimit-Remaining"]))
        buckets.add(headers["X-RateLimit-Bucket"])
        assert 4 < float(headers["X-RateLimit-Reset-After"]) <= 5.0
    assert remaining == [4, 3, 2, 1, 0]  # the real counts: discord.py paces itself by them
    status, body, headers = await call(dc, "POST", f"/channels/{noisy.id}/messages", {"content": "one more"})
    assert status == 429, body
    assert body["message"] == "You are being rate limited." and body["global"] is False
    assert 4 < body["retry_after"] <= 5.0 and isinstance(body["retry_after"], float)
    assert headers["Retry-After"] == "5" and headers["X-RateLimit-Scope"] == "user"
    assert headers["X-RateLimit-Remaining"] == "0" and headers["Via"]  # (no Via: a Cloudflare ban)
    assert buckets == {headers["X-RateLimit-Bucket"]}
    # Another channel has its own bucket; an edit is not a new message.
    assert (await call(dc, "POST", f"/channels/{other.id}/messages", {"content": "fine"}))[0] == 200
    first = dc.channel_messages(noisy)[0]
    edited = await call(dc, "PATCH", f"/channels/{noisy.id}/messages/{first.id}", {"content": "edited"})
    assert edited[0] == 200 and edited[2]["X-RateLimit-Remaining"] == "4"
    assert [(c.method, c.path) for c in dc.limited()] == [("POST", f"/channels/{noisy.id}/messages")]
    assert dc.rejected() == []  # a rate limit is the platform's rule, not a broken request


async def test_the_global_limit_spares_interaction_callbacks_and_follow_ups_have_their_own_bucket(
    limited: FakeDiscord,
) -> None:
    dc = limited
    guild = dc.add_guild("Mus club")
    channels = [dc.add_channel(guild, f"c{n}") for n in range(9)]
    ane = dc.add_user("Ane", guilds=[guild])
    presses = [dc.slash(ane, channels[0], "mus", "help", check_registered=False) for _ in range(2)]
    for channel in channels[:8]:  # 8 requests in a second: the shrunk global limit
        assert (await call(dc, "POST", f"/channels/{channel.id}/messages", {"content": "x"}))[0] == 200
    status, body, headers = await call(dc, "POST", f"/channels/{channels[8].id}/messages", {"content": "x"})
    assert status == 429 and body["global"] is True and 0 < body["retry_after"] <= 1.0, body
    assert headers["X-RateLimit-Global"] == "true" and headers["X-RateLimit-Scope"] == "global"
    # An interaction is answered whatever else the bot sent this second, and its follow-ups too.
    inter = presses[0]
    answer = {"type": 4, "data": {"content": "hi"}}
    assert (await call(dc, "POST", f"/interactions/{inter.id}/{inter.token}/callback", answer, bot=False))[
        0
    ] == 204
    hook = f"/webhooks/{dc.application_id}/{inter.token}"
    for n in range(5):
        status, _, headers = await call(dc, "POST", hook, {"content": f"f{n}"}, bot=False)
        assert status == 204 and headers["X-RateLimit-Remaining"] == str(4 - n)
    status, body, _ = await call(dc, "POST", hook, {"content": "one more"}, bot=False)
    assert status == 429 and body["global"] is False and 1 < body["retry_after"] <= 2.0
    other = presses[1]  # another interaction's token has its own bucket
    assert (await call(dc, "POST", f"/interactions/{other.id}/{other.token}/callback", answer, bot=False))[
        0
    ] == 204
    assert (await call(dc, "POST", f"/webhooks/{dc.application_id}/{other.token}", {"content": "y"}))[
        0
    ] == 204
    assert len(dc.limited()) == 2 and dc.rejected() == []


# --- the real client ----------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def limited_bot(
    limits: DiscordLimits, **settings: Any
) -> AsyncIterator[tuple[FakeDiscord, DiscordRuntime]]:
    """The fake with ``limits``, and the production client on it (``settings``: the adapter's)."""
    async with FakeDiscord(token=DISCORD_TOKEN, limits=limits) as dc:
        with dc.point_discord_py():
            runtime = await start_discord_bot(dc, memory_service(FAST, seed=3), **settings)
            try:
                yield dc, runtime
            finally:
                await runtime.stop()


async def test_discord_py_paces_a_full_channel_by_the_headers_and_other_channels_go_on() -> None:
    """Nine messages to one channel whose bucket takes three a second: discord.py reads the remaining
    count and waits for the bucket's reset on its own — no 429 — while a message to another channel goes
    at once."""
    limits = DiscordLimits(create_message=Rule("create message", 3, 1.0))
    async with limited_bot(limits) as (dc, runtime):
        guild = dc.add_guild("Mus club")
        busy, quiet = dc.add_channel(guild, "busy"), dc.add_channel(guild, "quiet")
        started = time.monotonic()
        sends = [
            asyncio.create_task(runtime.client.get_partial_messageable(busy.id).send(f"m{n}"))
            for n in range(9)
        ]
        await asyncio.sleep(0.1)
        alone = time.monotonic()
        await runtime.client.get_partial_messageable(quiet.id).send("quiet")
        assert time.monotonic() - alone < 0.5
        await asyncio.gather(*sends)
        assert time.monotonic() - started >= 2.0  # three windows of three
        assert len(dc.channel_messages(busy)) == 9
        assert dc.limited() == [] and dc.rejected() == []


async def test_a_bot_wide_429_slows_the_messages_but_never_an_interaction_answer() -> None:
    """Twelve channels written to at once by a bot allowed four requests per 3 s (Discord's global limit on
    a slower clock): Discord refuses the rest ``global``, discord.py holds every REST request for the
    ``retry_after`` and then sends them all — while a slash command typed meanwhile is answered at once
    (interaction callbacks are not bound to the global limit, and discord.py answers them outside its REST
    limiter)."""
    async with limited_bot(DiscordLimits(global_per_second=4, global_window=3.0)) as (dc, runtime):
        guild = dc.add_guild("Mus club")
        channels = [dc.add_channel(guild, f"c{n}") for n in range(12)]
        ane = dc.add_user("Ane", guilds=[guild])
        sends = [
            asyncio.create_task(runtime.client.get_partial_messageable(c.id).send("table")) for c in channels
        ]
        await dc.wait_for(dc.limited, timeout=5.0)
        asked = dc.slash(ane, dc.add_channel(guild, "mus"), "mus", "help")
        await dc.wait_answered(asked, timeout=5.0)
        assert asked.answered_after is not None and asked.answered_after < 1.5, asked  # not held ~3 s
        await asyncio.gather(*sends)
        assert all(len(dc.channel_messages(c)) == 1 for c in channels)
        assert dc.limited() and all(c.response["global"] for c in dc.limited()), dc.limited()
        assert dc.rejected() == []


async def test_the_full_rules_in_a_server_come_as_follow_ups_within_their_bucket() -> None:
    """``/mus rules full`` in a server answers with one ephemeral message per section: the first as the
    callback, the others as follow-ups on the interaction's token, whose bucket takes five per 2 s —
    discord.py waits for it by the headers, and nothing is refused."""
    async with limited_bot(DiscordLimits()) as (dc, runtime):
        guild = dc.add_guild("Mus club")
        ane = dc.add_user("Ane", guilds=[guild])
        asked = dc.slash(ane, dc.add_channel(guild, "mus"), "mus", "rules", options={"full": True})
        await dc.wait_answered(asked, timeout=5.0)
        await runtime.client.handlers.wait_idle(timeout=30.0)
        assert asked.answered_after is not None and asked.answered_after < 1.0
        assert len(asked.followups) >= 6, asked.followups  # more than one bucket's worth
        assert all(m.ephemeral for m in asked.followups)
        assert dc.limited() == [] and dc.rejected() == []


async def spam(dc: FakeDiscord, channel: FakeChannel, person: FakeUser, stop: asyncio.Event) -> None:
    """``person`` types ``/mus help``, ``leaderboard``, ``newgame``, ``cancel`` in turn, twice a second."""
    typed = 0
    while not stop.is_set():
        dc.slash(person, channel, "mus", SPAM[typed % len(SPAM)])
        typed += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


class BusyTable(DiscordTable):
    """A table whose members go on as soon as their interaction is answered: they wait for what they need
    on their screen, not for every lane of the bot to be idle (the noisy channels' never are)."""

    async def answered(self, interaction: FakeInteraction) -> FakeInteraction:
        """Wait for the answer only."""
        self.interactions.append(interaction)
        return await self.dc.wait_answered(interaction, timeout=5.0)


def channel_of(call: Call) -> int | None:
    """The channel a ``/channels/{channel_id}/...`` request writes to."""
    if not (call.route_template or "").startswith("/channels/{channel_id}"):
        return None
    return int(call.path.split("/")[2])


async def test_two_spamming_channels_do_not_delay_the_interactions_of_a_game() -> None:
    """Discord's limits on, production pacing (one call a second per channel). In two channels someone types
    ``/mus help``, ``leaderboard``, ``newgame``, ``cancel`` twice a second — and in the louder one Discord
    answers the first message request ``429, retry after 39`` (a bucket another process of the bot spent)
    —; four people play two hands in a third channel meanwhile: every interaction there is answered within
    Discord's 3 s from its creation, the hands are played to their count, nothing the bot sends goes over
    the limits, and the louder channel's lane alone waits its 39 s."""
    async with limited_bot(DiscordLimits(), min_interval=1.0) as (dc, runtime):
        guild = dc.add_guild("Mus club", locale="en-US")
        noisy, louder = dc.add_channel(guild, "noisy"), dc.add_channel(guild, "louder")
        dc.inject_429(path_regex=rf"^/channels/{louder.id}/messages", retry_after=39.0)
        game = dc.add_channel(guild, "mus")
        users = [dc.add_user(name, guilds=[guild]) for name in ("Ane", "Brais", "Iker", "Uxue")]
        stop = asyncio.Event()
        spammers = [
            asyncio.create_task(spam(dc, channel, dc.add_user(f"Spam {channel.name}", guilds=[guild]), stop))
            for channel in (noisy, louder)
        ]
        try:
            await asyncio.sleep(1.0)  # the noise has begun
            table = await BusyTable.open(dc, runtime, game, users)
            await table.seat_everyone()
            await table.press(users[0], table.lobby_message(), f"{table.table_id}.L.start")
            await table.play(
                until=lambda t, m: t.hand_no >= 3 or t.status is not TableStatus.PLAYING, timeout=60.0
            )

            def counted() -> list[str]:  # each hand's count, posted in the channel
                texts = [m.text for m in dc.channel_messages(game)]
                return [t for t in texts if t.startswith(("🂡 Hand 1 ", "🂡 Hand 2 "))]

            await dc.wait_for(lambda: len(counted()) == 2, timeout=10.0)
        finally:
            stop.set()
            await asyncio.gather(*spammers)
        played = [i for i in dc.interactions if i.channel is game]
        answered = [i.answered_after for i in played if i.answered_after is not None]
        assert len(answered) == len(played) >= 20, played
        assert max(answered) <= 3.0 and not any(i.late_callbacks for i in played), sorted(answered)[-5:]
        assert dc.limited() == [], dc.limited()  # nothing the bot sent went over Discord's limits
        assert dc.rejected() == [], dc.rejected()
        refused = [c for c in dc.calls if c.status == 429]
        assert [channel_of(c) for c in refused] == [louder.id], refused
        later = [
            c for c in dc.calls if channel_of(c) == louder.id and refused[0].at < c.at < refused[0].at + 39
        ]
        assert later == [], later  # that channel's lane waits its 39 s
        noise = [i for i in dc.interactions if i.channel in (noisy, louder)]
        print(
            f"\ngame interactions {len(answered)}: p50 {statistics.median(answered) * 1000:.0f} ms, "
            f"max {max(answered) * 1000:.0f} ms; noisy interactions {len(noise)}, "
            f"{sum(i.answered for i in noise)} answered"
        )
