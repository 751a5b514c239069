"""Draw the house of the bot core: ``docs/architecture.svg`` and the text picture in ``docs/architecture.md``.

    python docs/make_architecture.py            # (re)write both
    python docs/make_architecture.py --check    # exit 1 if either is out of date (a test runs this)

Nothing in the picture is written by hand: the layers are the ``layers`` contract of ``[tool.importlinter]``
in ``pyproject.toml``, each package's modules are those of the source tree, its one-line purpose is the one
``bot/__init__.py`` gives it, and the import counts come from the real import graph (grimp, which
import-linter itself uses). A new module, a new package or a new kind of import between two packages changes
the picture, and ``--check`` says so until it is drawn again. (No line counts: they change with every edit,
and the picture would always be out of date.)
"""

import argparse
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the packages of this checkout, whatever is installed

from docs.architecture_house import read_house, text_picture
from docs.architecture_paths import BEGIN, END, MD_PATH, ROOT, SVG_PATH
from docs.architecture_svg import svg_picture


def with_picture(markdown: str, picture: str) -> str:
    """``docs/architecture.md`` with the text picture between its markers."""
    start, end = markdown.find(BEGIN), markdown.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{MD_PATH.relative_to(ROOT)} needs the markers {BEGIN} and {END}")
    return f"{markdown[: start + len(BEGIN)]}\n```text\n{picture}```\n{markdown[end:]}"


def main(argv: list[str] | None = None) -> int:
    """Write both pictures, or with ``--check`` say which is out of date (exit status 1)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a picture is stale")
    check = parser.parse_args(argv).check
    house = read_house()
    wanted = {
        SVG_PATH: svg_picture(house),
        MD_PATH: with_picture(MD_PATH.read_text(encoding="utf-8"), text_picture(house)),
    }
    stale = [path for path, content in wanted.items() if path.read_text(encoding="utf-8") != content]
    if check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run python docs/make_architecture.py")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
