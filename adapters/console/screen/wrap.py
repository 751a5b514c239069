"""Lines of the full-screen table broken only where a line may break: never at a no-break space.

The core keeps words together with no-break spaces (a button's label, ``Envido 2``; French puts one before
its colon, ``GRANDE : en paso``), as every chat client honours them. Textual wraps text as Rich does, and
Rich counts U+00A0 as whitespace: at 80x24 the key line broke between ``▶`` and ``Start``. So the screen
breaks its text itself (:func:`break_offsets`: at spaces that may break, a word longer than the line cut
where it must) and hands Textual lines that already fit, which it then draws unchanged (:class:`Wrapped`).
A machine's mark stays with its name too (``🤖 Iker``, never ``🤖`` at a line's end and ``Iker`` below).
"""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual, VisualType
from textual.widgets import Static

from bot.kernel import MACHINE_MARK

#: Spaces that keep their neighbours on one line: no-break, figure and narrow no-break space.
NO_BREAK = "\u00a0\u2007\u202f"
#: A word as a line may break it: breakable spaces before it (a line's start), characters that are not
#: breakable spaces (no-break spaces among them), and the breakable spaces after it.
_WORD = re.compile(rf"[^\S{NO_BREAK}]*[\S{NO_BREAK}]+[^\S{NO_BREAK}]*")


def _breakable_rstrip(text: str) -> str:
    return re.sub(rf"[^\S{NO_BREAK}]+$", "", text)


def break_offsets(text: str, width: int) -> list[int]:
    """Where to break one line of ``text`` so that each piece fits ``width`` cells (its breakable spaces at
    the end aside): at a breakable space, or inside a word only if the word alone is wider than a line."""
    offsets: list[int] = []
    used = 0
    text = text.replace(f"{MACHINE_MARK} ", f"{MACHINE_MARK}\u00a0")  # (one character for one: same offsets)
    for match in _WORD.finditer(text):
        start, word = match.start(), match.group()
        length = cell_len(_breakable_rstrip(word))
        if used and used + length > width:
            offsets.append(start)
            used = 0
        if length > width:  # a word no line holds: cut where the line ends
            pieces = chop_cells(word, max(1, width))
            at = start
            for piece in pieces[:-1]:
                at += len(piece)
                offsets.append(at)
            used = cell_len(pieces[-1])
        else:
            used += cell_len(word)
    return offsets


def broken(content: Content, width: int) -> Content:
    """``content`` with a line break wherever :func:`break_offsets` breaks it at ``width`` cells."""
    lines: list[Content] = []
    for line in content.split("\n", allow_blank=True):
        offsets = break_offsets(line.plain, width)
        pieces = line.divide(offsets) if offsets else [line]
        lines.extend(piece.rstrip(" \t") for piece in pieces[:-1])
        lines.append(pieces[-1])
    return Content("\n").join(lines)


class KeptTogether(Visual):
    """A :class:`~textual.content.Content` drawn in lines broken by :func:`broken`, never at a no-break
    space (each line already fits, so Textual's own wrapping leaves it as it is)."""

    def __init__(self, content: Content) -> None:
        """Draw ``content``."""
        self.content = content
        self._lines: tuple[int, Content] | None = None

    def _at(self, width: int) -> Content:
        if self._lines is None or self._lines[0] != width:
            self._lines = (width, broken(self.content, max(1, width)))
        return self._lines[1]

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        """The lines at ``width`` (less the line padding Textual adds on each side)."""
        pad = options.rules.get("line_pad", 0) * 2
        return self._at(width - pad).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        """As wide as the longest line of the text."""
        return self.content.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        """As wide as the widest word kept together."""
        words = [_breakable_rstrip(w) for w in _WORD.findall(self.content.plain)]
        return max((cell_len(w) for w in words), default=0) + rules.get("line_pad", 0) * 2

    def get_height(self, rules: RulesMap, width: int) -> int:
        """How many lines the text takes at ``width``."""
        pad = rules.get("line_pad", 0) * 2
        return self._at(width - pad).get_height(rules, width)


class Wrapped(Static):
    """A :class:`~textual.widgets.Static` whose text breaks only where a line may break (see the module)."""

    def __init__(self, content: VisualType = "", *, markup: bool = True, id: str | None = None) -> None:
        """As :class:`~textual.widgets.Static`: ``content``, read as markup if ``markup``."""
        super().__init__(content, markup=markup, id=id)
        self._kept: tuple[Content, KeptTogether] | None = None

    def render(self) -> Visual:
        """The text as :class:`KeptTogether` draws it (anything else as Textual would)."""
        visual = self.visual
        if not isinstance(visual, Content):
            return visual
        if self._kept is None or self._kept[0] is not visual:
            self._kept = (visual, KeptTogether(visual))
        return self._kept[1]
