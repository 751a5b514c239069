"""``musbot history``: the kept hands in the terminal — list them, tell one again, export a match.

::

    musbot history                      the matches kept for the terminal's table, each hand in a line
    musbot history --chat tg:-100123    those of another chat (a host may look at any of its chats)
    musbot history TABLE                every kept hand of one match, summarised
    musbot history TABLE HAND           one hand, step by step, as the table told it
    musbot history TABLE --json         the match as a conformance file (``python -m engine.replay``)
    musbot history TABLE --text         the match as text

It reads the same store as the bot (``REDIS_URL``, or the embedded Redis under ``DATA_DIR``) and changes
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import TextIO

from adapters.console.saves import TERMINAL_CHATS, tell_repair
from bot.app import parse_kept
from bot.history import (
    HistoryStore,
    KeptHand,
    export_json,
    export_text,
    match_title,
    story_text,
    summary_lines,
)
from bot.i18n import LANGUAGES, normalize_language, translator
from bot.i18n.markers import N_
from bot.ops import Settings, StartupError, build_app, data_dir_problem
from bot.store import StoreUnavailable

_ = N_

#: The terminal table's first chat (``musbot play`` keeps its games in its chats: ``musbot history`` lists
#: them all unless told another).
TERMINAL_CHAT = TERMINAL_CHATS[0]

NONE_KEPT = _("No hands are kept for {chat}.")
NO_SUCH_MATCH = _("No hands of {table} are kept.")
NO_SUCH_HAND = _("Hand {n} of {table} is not kept.")
# Translators: one kept match in `musbot history`: its table id, where it was played, its hands.
MATCH_LINE = _("{table} · {title} · hands {first}–{last} · last played {when}")
STORE_DOWN = _("The game store is unavailable right now; try again in a moment.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``musbot history``."""
    parser.add_argument("table", nargs="?", default=None, help="a match (its table id) to show")
    parser.add_argument("hand", nargs="?", type=int, default=None, help="a hand of that match to tell")
    parser.add_argument(
        "--chat", default=None, help="whose matches to list (default: the terminal's, musbot play)"
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--json", action="store_true", help="the match as a replayable conformance file")
    what.add_argument("--text", action="store_true", help="the match as text, every hand told")
    parser.add_argument("--lang", default="es", choices=LANGUAGES, help="language (default es)")
    parser.add_argument("--data-dir", type=Path, default=None, help="where the bot keeps its data (DATA_DIR)")


async def show(args: argparse.Namespace, store: HistoryStore, now: float, out: TextIO) -> int:
    """Print what ``args`` ask for from ``store``; 0, or 1 when nothing of it is kept."""
    lang = normalize_language(args.lang)
    t = translator(lang)
    if args.table is None:
        chats = TERMINAL_CHATS if args.chat is None else (args.chat,)
        tables = [table for chat in chats for table in await store.matches(chat, now, limit=50)]
        matches = [await _kept(store, table) for table in tables]
        matches = sorted((m for m in matches if m), key=lambda m: m[-1].at, reverse=True)[:50]
        if not matches:
            print(t.format(NONE_KEPT, chat=args.chat or TERMINAL_CHAT), file=out)
            return 1
        for kept in matches:
            line = t.format(
                MATCH_LINE,
                table=kept[0].table,
                title=match_title(kept),
                first=kept[0].hand_no,
                last=kept[-1].hand_no,
                when=time.strftime("%Y-%m-%d %H:%M", time.localtime(kept[-1].at)),
            )
            print(line, file=out)
            for hand in kept:
                print(f"  {summary_lines(t, hand)[0]}", file=out)
        return 0
    kept = await _kept(store, args.table)
    if not kept:
        print(t.format(NO_SUCH_MATCH, table=args.table), file=out)
        return 1
    if args.json:
        out.write(export_json(kept))
        return 0
    if args.text:
        out.write(export_text(lang, kept))
        return 0
    if args.hand is None:
        print(match_title(kept), file=out)
        for hand in kept:
            print("\n".join(summary_lines(t, hand)), file=out)
        return 0
    chosen = next((k for k in kept if k.hand_no == args.hand), None)
    if chosen is None:
        print(t.format(NO_SUCH_HAND, n=args.hand, table=args.table), file=out)
        return 1
    print(story_text(lang, chosen, match_title(kept)), file=out)
    return 0


async def _kept(store: HistoryStore, table: str) -> list[KeptHand]:
    return [k for _, entry in await store.hands(table) if (k := parse_kept(entry)) is not None]


async def _run(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    app = await build_app(settings)
    tell_repair(translator(normalize_language(args.lang)), app.server, settings.data_dir, sys.stderr)
    try:
        return await show(args, app.service.deps.history, app.service.deps.clock(), out)
    except StoreUnavailable:
        print(translator(normalize_language(args.lang)).gettext(STORE_DOWN), file=sys.stderr)
        return 1
    finally:
        await app.close()


def run(args: argparse.Namespace, settings: Settings | None = None, *, out: TextIO | None = None) -> int:
    """Entry point of ``musbot history``: 0 when shown, 1 when nothing is kept or the store cannot start, 2
    for a data directory it cannot use."""
    settings = settings or Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    if settings.redis_url is None:
        problem = data_dir_problem(settings.data_dir)
        if problem is not None:
            print(f"{'--data-dir' if args.data_dir is not None else 'DATA_DIR'}: {problem}", file=sys.stderr)
            return 2
    try:
        return asyncio.run(_run(args, settings, out or sys.stdout))
    except StartupError as exc:
        print(f"musbot: {exc}", file=sys.stderr)
        return 1
