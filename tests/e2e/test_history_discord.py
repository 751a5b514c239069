"""End to end on the fake Discord: ``/mus history`` in a channel, a kept hand opened ephemerally and in the
channel, forged presses, and the match exported as two attachments (the JSON replays to the same scores)."""

from __future__ import annotations

import json

from adapters.discord.app import DiscordRuntime
from adapters.discord.ids import channel_key, user_key
from bot.app import parse_kept
from bot.kernel import ChatRef, UserRef
from engine.replay import run_case

from .conftest import FAST, assert_interactions_answered, memory_service
from .discord_harness import DiscordTable, start_discord_bot
from .fake_discord import FakeChannel, FakeDiscord, FakeGuild


async def test_history_opens_hands_ephemerally_and_exports_attachments(
    dc: FakeDiscord, discord_bots: list[DiscordRuntime]
) -> None:
    runtime = await start_discord_bot(dc, memory_service(FAST))
    discord_bots.append(runtime)
    guild: FakeGuild = dc.add_guild("Mus club", locale="en-US")
    channel: FakeChannel = dc.add_channel(guild, "mus")
    ane = dc.add_user("Ane", locale="en-US", guilds=[guild])
    service = runtime.client.handlers.service
    played = await service.new_machine_table(
        ChatRef(channel_key(channel.id), title="mus"),
        UserRef(user_key(ane.id), "Ane", "en"),
        single_game=True,
    )
    assert played.ok and played.table is not None
    table_id = played.table
    table = DiscordTable(dc, runtime, service, channel)
    shown = await table.slash(ane, "history")
    reply = shown.response
    assert reply is not None and not shown.ephemeral and reply.text.startswith("📜 ")
    ids = reply.custom_ids()  # five 🔒, five 💬 and the export: within Discord's five rows of five
    n = ids[0].split(".")[1]
    assert len(ids) == 11 and ids[0] == f"{table_id}.{n}.hist" and ids[5] == f"{table_id}.{n}.histc"
    assert ids[-1] == f"{table_id}.0.hexp"
    # Privately: an ephemeral story for the presser, nothing in the channel or in DMs.
    in_channel = len(dc.channel_messages(channel))
    opened = await table.press(ane, reply, f"{table_id}.{n}.hist")
    assert opened.ephemeral and opened.response is not None
    assert opened.response.text.startswith(f"📜 Hand {n} · mus ({table_id})")
    assert len(dc.channel_messages(channel)) == in_channel and dc.dm_messages(ane) == []
    # In the channel.
    await table.press(ane, reply, f"{table_id}.{n}.histc")
    posted = dc.channel_messages(channel)[in_channel:]
    assert len(posted) == 1 and posted[0].text.startswith(f"📜 Hand {n} · ")
    # Forged: a hand never kept, a button of another channel's history.
    forged = await table.answered(dc.press(ane, reply, f"{table_id}.999.hist"))
    assert forged.ephemeral and forged.response is not None and "no longer kept" in forged.response.text
    other = dc.add_channel(guild, "other")
    elsewhere = await table.slash(ane, "help", channel=other)
    assert elsewhere.response is not None
    stale = await table.answered(dc.press(ane, elsewhere.response, f"{table_id}.{n}.histc"))
    assert stale.response is not None and "no longer valid" in stale.response.text
    assert len(dc.channel_messages(other)) == 1
    # The export: two attachments in the channel; the JSON replays to the kept scores.
    before = len(dc.channel_messages(channel))
    await table.press(ane, reply, f"{table_id}.0.hexp")
    files = dc.channel_messages(channel)[before:]
    assert [m.attachments[0]["filename"] for m in files] == [f"mus-{table_id}.json", f"mus-{table_id}.txt"]
    document = json.loads(dc.uploads[files[0].attachments[0]["id"]])
    kept = [k for _, entry in await service.deps.history.hands(table_id) if (k := parse_kept(entry))]
    assert [run_case(case)["result"]["scores"] for case in document["cases"]] == [
        list(k.scores) for k in kept
    ]
    assert "Dealt:" in dc.uploads[files[1].attachments[0]["id"]].decode("utf-8")
    assert_interactions_answered(dc)
