"""The Discord adapter's pure parts: keys, the layout of views as components, texts, translations."""

from __future__ import annotations

import discord
import pytest
from discord import app_commands
from discord.app_commands import locale_str
from hypothesis import given
from hypothesis import strategies as st

from adapters.discord.commands import DESCRIPTIONS, GROUP_DESCRIPTION, CatalogTranslator
from adapters.discord.ids import channel_key, guild_key, parse_key, user_key
from adapters.discord.layout import (
    MAX_OPTIONS,
    MAX_PER_ROW,
    MAX_ROWS,
    MAX_TEXT,
    MENU_PREFIX,
    TokenButton,
    TokenMenu,
    arrange,
    text_of,
    view_of,
)
from adapters.discord.mentions import rewrite
from bot.kernel import Button, OutMessage


def test_keys_round_trip_and_foreign_keys_are_not_ours() -> None:
    assert parse_key(user_key(42)) == ("u", 42)
    assert parse_key(channel_key(7)) == ("", 7)
    assert parse_key(guild_key(9)) == ("g", 9)
    for foreign in ("tg:123", "dc:", "dc:u", "dc:x1", "dc:12a", "console:local"):
        assert parse_key(foreign) is None


rows_strategy = st.lists(st.lists(st.integers(0, 99), min_size=0, max_size=12), min_size=0, max_size=12)


@given(rows_strategy)
def test_every_button_is_kept_within_discords_limits(shape: list[list[int]]) -> None:
    rows = [[Button(f"b{n}", f"t{r}.{i}") for i, n in enumerate(row)] for r, row in enumerate(shape)]
    buttons, menus = arrange(rows)
    assert len(buttons) + len(menus) <= MAX_ROWS
    assert all(0 < len(row) <= MAX_PER_ROW for row in buttons)
    assert all(0 < len(menu) <= MAX_OPTIONS for menu in menus)
    flat = [b for row in rows for b in row]
    assert [b for row in buttons for b in row] + [b for m in menus for b in m] == flat  # order and all


async def test_a_view_becomes_persistent_components_whose_ids_are_tokens() -> None:
    rows = tuple(tuple(Button(f"{r}{c}", f"abcdefgh.3.env{r}{c}") for c in range(3)) for r in range(7))
    view = view_of(OutMessage(slot="hand", text="x", buttons=rows))
    assert view is not None and view.timeout is None
    payload = view.to_components()
    assert len(payload) == MAX_ROWS
    ids = [c["custom_id"] for row in payload for c in row["components"]]
    assert ids[0] == "abcdefgh.3.env00" and ids[-1] == f"{MENU_PREFIX}0"
    menu = payload[-1]["components"][0]
    assert menu["type"] == 3 and [o["value"] for o in menu["options"]][-1] == "abcdefgh.3.env62"
    assert all(isinstance(item, (TokenButton, TokenMenu)) for item in view.children)
    assert view_of(OutMessage(slot="table", text="x")) is None


def test_templates_tell_buttons_from_menus() -> None:
    button = TokenButton.__discord_ui_compiled_template__
    menu = TokenMenu.__discord_ui_compiled_template__
    assert button.fullmatch("abcdefgh.L.seat0") and button.fullmatch("forged anything")
    assert not button.fullmatch("menu:0") and menu.fullmatch("menu:0")
    assert not button.fullmatch("x" * 101)


def test_texts_fit_escape_plain_views_and_name_the_mus_commands() -> None:
    plain = text_of(OutMessage(slot="notice", text="*Ane* won; type /newgame"))
    assert plain == "\\*Ane\\* won; type /mus newgame"
    rich = text_of(OutMessage(slot="rules", text="**Bold**\n- item", markdown=True))
    assert rich == "**Bold**\n- item"
    assert len(text_of(OutMessage(slot="notice", text="x" * 5000))) == MAX_TEXT
    assert text_of(OutMessage(slot="notice", text="")) == "…"


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        (discord.Locale.spain_spanish, "Juega al mus a 8 reyes, por parejas"),
        (discord.Locale.french, "Jouer au mus à 8 rois, par équipes de deux"),
        (discord.Locale.brazil_portuguese, "Joga mus a 8 reis, em duplas"),
        (discord.Locale.american_english, None),
        (discord.Locale.japanese, None),
    ],
)
async def test_descriptions_come_from_the_catalogues(locale: discord.Locale, expected: str | None) -> None:
    translator = CatalogTranslator()
    context = app_commands.TranslationContext(app_commands.TranslationContextLocation.group_description, None)
    assert await translator.translate(locale_str(GROUP_DESCRIPTION), locale, context) == expected
    name = app_commands.TranslationContext(app_commands.TranslationContextLocation.command_name, None)
    assert await translator.translate(locale_str("newgame"), locale, name) is None


async def test_every_description_fits_discords_limit_in_every_locale() -> None:
    translator = CatalogTranslator()
    context = app_commands.TranslationContext(
        app_commands.TranslationContextLocation.command_description, None
    )
    for description in [*DESCRIPTIONS.values(), GROUP_DESCRIPTION]:
        for locale in discord.Locale:
            text = await translator.translate(locale_str(description), locale, context)
            assert text is None or 1 <= len(text) <= 100


class _Transport:
    def owns(self, chat: str) -> bool:
        return chat.startswith("dc:")


async def test_a_press_is_shown_on_its_message_only_when_the_slot_stays_there() -> None:
    from types import SimpleNamespace

    from adapters.discord.interactions import DiscordHandlers
    from bot.delivery import Delivery
    from bot.delivery._surfaces_memory import MemorySurfaces
    from bot.kernel import Outcome

    surfaces = MemorySurfaces()
    await surfaces.set("t0000001", "dc:5", "table", "77")
    handlers = DiscordHandlers(service=None, sender=Delivery(_Transport(), surfaces))  # type: ignore[arg-type]
    pressed = SimpleNamespace(message=SimpleNamespace(id=77, flags=SimpleNamespace(ephemeral=False)))
    moved = OutMessage(slot="table", text="hand 1: paso", chat="dc:5", table="t0000001")
    assert await handlers._view_of_pressed(pressed, Outcome(messages=(moved,))) is moved  # type: ignore[arg-type]
    # The press ended the hand and the next one was dealt: its table is a new message, in order.
    dealt = OutMessage(slot="table", text="hand 2", chat="dc:5", table="t0000001", fresh=True)
    both = Outcome(messages=(moved, dealt))
    assert await handlers._view_of_pressed(pressed, both) is None  # type: ignore[arg-type]
    other = SimpleNamespace(message=SimpleNamespace(id=76, flags=SimpleNamespace(ephemeral=False)))
    assert await handlers._view_of_pressed(other, Outcome(messages=(moved,))) is None  # type: ignore[arg-type]


def test_commands_are_written_with_their_real_options_and_as_mentions_once_synced() -> None:
    core = "/rules full · /rules completas · /leaderboard global · /learn 3 · /newgame · /mus · a/newgame"
    assert rewrite(core, None) == (
        "/mus rules full:True · /mus rules full:True · /mus leaderboard everyone:True · "
        "/mus learn lesson:3 · /mus newgame · /mus · a/newgame"
    )
    synced = {"rules": "</mus rules:12>", "newgame": "</mus newgame:12>"}
    assert rewrite("/rules full, or /newgame", synced) == "</mus rules:12> full:True, or </mus newgame:12>"
