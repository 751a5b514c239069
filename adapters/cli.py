"""The ``musbot`` command: ``musbot play`` (terminal table) and ``musbot run`` (chat platforms)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from adapters.console import app as console


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run the chosen sub-command."""
    parser = argparse.ArgumentParser(prog="musbot", description="Mus a 8 reyes for chats and terminals.")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play at a terminal table (embedded Redis, nothing to configure)")
    console.add_arguments(play)
    sub.add_parser("run", help="run the chat adapters that have a token (TELEGRAM_TOKEN…)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "play":
        return console.run(args)
    from adapters.runner import run

    return run()


if __name__ == "__main__":
    sys.exit(main())
