"""Capture the full-screen terminal table playing a hand: ``docs/terminal-fullscreen.md`` (text, 80x24) and
``docs/terminal-fullscreen-{es,en}.svg`` (Textual's own screenshots).

    python docs/make_terminal_capture.py

The table runs headless (Textual's pilot) on the real service with an embedded Redis in a temporary data
directory, seeded, exactly as ``musbot play --seed 3`` would deal it. The key pressed at each turn is a
simple rule (start, confirm a discard, the next hand after the count, else the first button), so the
captures show what a player sees, not a good game. Each capture is taken when the feed has caught up: after
the machines' moves, at the player's decision, and at the count.
"""

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the packages of this checkout, whatever is installed

from adapters.console import app as console
from adapters.console.screen.entry import flow_for_screen
from adapters.console.screen.panels import screen_text
from adapters.console.screen.table import TableScreen
from bot.kernel import ChatRef, UserRef, parse_token
from bot.ops import Settings, build_app

DOCS = Path(__file__).resolve().parent
SIZE = (80, 24)
SEED = 3
CHAT = ChatRef("console:local", private=True, title="Terminal")


def code(token: str) -> str:
    """A button's action code."""
    return parse_token(token).code


async def settle(pilot: object, app: TableScreen) -> None:
    """Wait until the feed has caught up and the buttons are back."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        await pilot.pause(0.02)  # type: ignore[attr-defined]
        if app.caught_up and not app._syncing.locked():
            await pilot.pause(0.2)  # type: ignore[attr-defined]  # (the feed scrolls after a refresh)
            return
    raise SystemExit("the table never caught up")


async def capture(lang: str) -> list[tuple[str, str]]:
    """Play hand 1 in ``lang``: (what, screen text) at a few moments; the SVG is written at the count."""
    with tempfile.TemporaryDirectory() as data:
        rng_factory, id_factory = console._seeded(SEED)
        app = await build_app(
            Settings(data_dir=Path(data)),
            flow=flow_for_screen(),
            rng_factory=rng_factory,
            id_factory=id_factory,
        )
        try:
            user = UserRef("console:you", "Root", lang)
            await app.service.set_language(CHAT, user, lang)
            opened = await app.service.new_table(CHAT, user)
            assert opened.table is not None
            screen = TableScreen(app.service, user, CHAT, opened.table, lang=lang, pace=0.05)
            return await play_hand(screen, lang)
        finally:
            await app.close()


async def play_hand(screen: TableScreen, lang: str) -> list[tuple[str, str]]:
    """Press keys until the count of hand 1 is on screen, capturing on the way."""
    shots: list[tuple[str, str]] = []
    async with screen.run_test(size=SIZE) as pilot:
        await settle(pilot, screen)
        shots.append(("the options, before the game", screen_text(screen)))
        for _ in range(60):
            codes = [code(b.token) for b in screen.buttons[:9]]
            key = next((str(n) for n, c in enumerate(codes, 1) if c in ("start", "discard")), "1")
            if screen.counted:
                break
            await pilot.press(key)
            await settle(pilot, screen)
            if screen.legal_amounts and len(shots) < 2:
                shots.append(("a decision, after the machines' moves", screen_text(screen)))
        shots.append(("the count", screen_text(screen)))
        screen.save_screenshot(f"terminal-fullscreen-{lang}.svg", str(DOCS))
    return shots


def markdown(captures: dict[str, list[tuple[str, str]]]) -> str:
    """The text captures as a Markdown page."""
    lines = [
        "# The full-screen terminal table at 80x24",
        "",
        "Written by `python docs/make_terminal_capture.py`: `musbot play --seed 3` played headless",
        "(Textual's pilot, real service, embedded Redis), the first button pressed at each turn.",
        "Screenshots: [es](terminal-fullscreen-es.svg), [en](terminal-fullscreen-en.svg). The line mode",
        "(`--plain`) is in [terminal.md](terminal.md).",
    ]
    for lang, shots in captures.items():
        lines += ["", f"## {lang}"]
        for what, text in shots:
            lines += ["", f"{what}:", "", "```text", text.rstrip(), "```"]
    return "\n".join(lines) + "\n"


async def main() -> None:
    """Capture in Spanish and English; write the page and the screenshots."""
    captures = {lang: await capture(lang) for lang in ("es", "en")}
    (DOCS / "terminal-fullscreen.md").write_text(markdown(captures), encoding="utf-8")
    print(
        "wrote docs/terminal-fullscreen.md, docs/terminal-fullscreen-es.svg, docs/terminal-fullscreen-en.svg"
    )


if __name__ == "__main__":
    asyncio.run(main())
