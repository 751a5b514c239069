"""The table as an embed (:mod:`adapters.discord.embeds`): which views, their title and description, their
colour, and Discord's limits whatever the text — checked against Discord's OpenAPI description and the limits
the fake Discord enforces."""

from __future__ import annotations

from typing import Any

import discord
from e2e.fake_discord_spec import DiscordSpec, check_message
from hypothesis import given
from hypothesis import strategies as st

from adapters.discord.embeds import (
    ELLIPSIS,
    KEPT_HEAD,
    MAX_DESCRIPTION,
    MAX_TITLE,
    PHASE_COLOURS,
    edited_as,
    embedded,
    sent_as,
)
from bot.kernel import Button, OutMessage
from engine.hand_types import Phase

SPEC = DiscordSpec.load()
POST = SPEC.operation("POST", "/channels/{channel_id}/messages")
TABLE = "🂠 Mus · Hand 3 · Game 1 of 3 (0–0) · Vaca 1 of 3 · to 40\nAne and 🤖 Iker · 4 stones (4)\nBrais"


def table_view(text: str = TABLE, phase: str = "grande", **extra: Any) -> OutMessage:
    return OutMessage(slot="table", text=text, chat="dc:1", table="t1", phase=phase, **extra)


def posted(view: OutMessage) -> dict[str, Any]:
    """The JSON body discord.py sends for a post of ``view``."""
    shown = sent_as(view)
    embed = shown.get("embed")
    body: dict[str, Any] = (
        {"content": shown.get("content")} if embed is None else {"embeds": [embed.to_dict()]}
    )
    return {k: v for k, v in body.items() if v is not None}


def test_a_tables_messages_are_embeds_and_everything_else_stays_text() -> None:
    for slot in ("lobby", "table", "showdown"):
        assert embedded(OutMessage(slot=slot, text="x", chat="dc:1", table="t1"))
    assert not embedded(OutMessage(slot="hand", text="x", user="dc:u1", table="t1"))  # "My cards", DMs
    assert not embedded(OutMessage(slot="notice", text="x", chat="dc:1", table="t1"))
    assert not embedded(OutMessage(slot="table", text="x", user="dc:u1", table="t1"))  # (a private copy)
    assert not embedded(OutMessage(slot="showdown", text="x", chat="dc:1", document=("a.json", "{}")))
    assert sent_as(OutMessage(slot="help", text="*Ane*")) == {"content": "\\*Ane\\*"}
    assert edited_as(OutMessage(slot="hand", text="x", user="dc:u1")) == {"content": "x", "embeds": []}


def test_the_header_is_the_title_the_rest_the_description_and_the_phase_the_colour() -> None:
    view = table_view(TABLE + "\nAne's turn (⏱ 60 s)", deadline=1_900_000_000.4)
    embed = sent_as(view, {"newgame": "</mus newgame:9>"})["embed"]
    assert isinstance(embed, discord.Embed)
    assert embed.title == TABLE.splitlines()[0]
    assert embed.description == "Ane and 🤖 Iker · 4 stones (4)\nBrais\nAne's turn (⏱ <t:1900000000:R>)"
    assert embed.colour == PHASE_COLOURS["grande"]
    edit = edited_as(view)
    assert edit["content"] is None and edit["embeds"][0].to_dict() == embed.to_dict()  # no stale text
    lobby = sent_as(
        OutMessage(slot="lobby", text="🂠 Mus · new table\n\nTeam A: Ane", chat="dc:1", phase="lobby")
    )
    assert lobby["embed"].description == "Team A: Ane"  # (no blank first line)
    assert lobby["embed"].colour == discord.Colour.blurple()
    named = sent_as(OutMessage(slot="showdown", text="🂡 Hand 3 · count\nType /newgame", chat="dc:1"))
    assert named["embed"].description == "Type /mus newgame"  # commands written as Discord does


def test_every_phase_of_a_hand_has_a_colour_and_the_betting_lances_share_one() -> None:
    assert {p.value for p in Phase} <= set(PHASE_COLOURS)
    lances = {PHASE_COLOURS[p] for p in ("grande", "chica", "pares", "juego", "punto")}
    assert len(lances) == 1
    others = [PHASE_COLOURS[p] for p in ("lobby", "mus", "discard", "count", "cancelled")]
    assert len({*others, *lances}) == 6


def test_a_text_too_long_loses_the_oldest_lines_of_the_story_not_the_scores_nor_the_turn() -> None:
    story = [f"✓ GRANDE: Ane: envido {n} · Brais: quiero → querido: {n} al recuento" for n in range(200)]
    text = "\n".join(["🂠 " + "Mus " * 100, "Ane · 4 stones", "Brais · 3 stones", "Mano: Ane", *story])
    embed = sent_as(table_view(text + "\nBet: 2\nAne's turn"))["embed"]
    assert embed.title is not None and len(embed.title) == MAX_TITLE and embed.title.endswith(ELLIPSIS)
    lines = (embed.description or "").split("\n")
    assert len(embed.description or "") <= MAX_DESCRIPTION
    assert lines[:KEPT_HEAD] == ["Ane · 4 stones", "Brais · 3 stones", "Mano: Ane"]
    assert lines[KEPT_HEAD] == ELLIPSIS and lines[-3:] == [story[-1], "Bet: 2", "Ane's turn"]
    assert story[0] not in lines  # the oldest went first


@given(st.text(min_size=0, max_size=9000), st.sampled_from([*sorted(PHASE_COLOURS), "", "newer"]))
def test_any_text_is_a_post_discord_accepts(text: str, phase: str) -> None:
    view = table_view(text, phase, buttons=((Button("Quiero", "t1.3-4.quiero"),),))
    body = posted(view)
    assert check_message(body, "channel") == []
    assert SPEC.validate_body(POST, body) == []
