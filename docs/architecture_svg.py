"""The house of the bot core drawn as SVG: one band per layer, each package's modules, and a table of who
imports whom (see ``docs/make_architecture.py``)."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass

from docs.architecture_house import Box, House, wrapped

SANS = "'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif"
MONO = "'DejaVu Sans Mono', Menlo, Consolas, monospace"
MONO_CHAR = 6.62
"""Width of a character of the module names (11 px monospace), to lay them out in columns."""
SANS_CHAR = 5.9
"""Average width of a character of the purposes (11 px sans-serif), to wrap them."""
BOLD_CHAR, SMALL_CHAR = 8.6, 6.0
"""Widths of a character of a box's name (13.5 px bold) and of its number of modules (10 px)."""
COLUMN_GAP = 14
"""Space after a column of module names."""

#: A band's colours: its background, and its boxes' outlines and names.
Colours = tuple[str, str]
ADAPTER_COLOURS: Colours = ("#efe9f8", "#6f55a8")
ENGINE_COLOURS: Colours = ("#ececec", "#555555")
LAYER_COLOURS: list[Colours] = [  # top to bottom (again from the top if the house grows)
    ("#fbe4e1", "#b5483b"),
    ("#fdf0d5", "#a86b12"),
    ("#e6f2d8", "#4f7f2a"),
    ("#dcf1ee", "#2c7d72"),
    ("#e0eafa", "#3a64a8"),
    ("#ebe6f5", "#5d4e94"),
    ("#f0efe9", "#6b6552"),
]

HOUSE_X, LABEL_W, HOUSE_W = 20, 104, 912
BOXES_X = HOUSE_X + LABEL_W
BOX_GAP, BAND_GAP, BAND_PAD = 12, 12, 9
TOP = 78
CELL, ROW_LABEL_W, HEADER_H = 28, 96, 74
MATRIX_X = HOUSE_X + HOUSE_W + 36


def esc(text: str) -> str:
    """Text as SVG character data."""
    return html.escape(text, quote=True)


def text(x: float, y: float, content: str, size: float = 11, **style: str) -> str:
    """One ``<text>`` element (``font_weight="bold"`` → ``font-weight="bold"``)."""
    attrs = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in style.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}"{attrs}>{esc(content)}</text>'


def rect(x: float, y: float, w: float, h: float, fill: str, stroke: str = "none", rx: float = 0) -> str:
    """One ``<rect>``."""
    line = "" if stroke == "none" else f' stroke="{stroke}" stroke-width="1"'
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" fill="{fill}"{line}/>'


@dataclass(frozen=True)
class Drawn:
    """A box laid out at a width: its purpose in lines and its modules in columns."""

    box: Box
    width: float
    purpose: tuple[str, ...]
    columns: tuple[tuple[str, ...], ...]

    @classmethod
    def at(cls, box: Box, width: float) -> Drawn:
        """Lay ``box`` out in ``width`` pixels."""
        purpose = wrapped(box.purpose.split(), int((width - 20) / SANS_CHAR), " ")
        columns: tuple[tuple[str, ...], ...] = ()
        for rows in range(1, len(box.modules) + 1):  # as few rows as fit, read down then across
            columns = tuple(box.modules[i : i + rows] for i in range(0, len(box.modules), rows))
            if sum(cls.column_width(c) for c in columns) - COLUMN_GAP <= width - 20:
                break
        return cls(box, width, tuple(purpose), columns)

    @staticmethod
    def column_width(names: Iterable[str]) -> float:
        """The width of a column of module names, with the gap after it."""
        return max((len(name) for name in names), default=0) * MONO_CHAR + COLUMN_GAP

    @property
    def height(self) -> float:
        """Its height in pixels."""
        return 28 + 14 * len(self.purpose) + 15 * max((len(c) for c in self.columns), default=0) + 4

    def svg(self, x: float, y: float, height: float, ink: str) -> list[str]:
        """The box at (x, y), ``height`` high: name, number of modules (where there is room), purpose,
        modules."""
        count = len(self.box.modules)
        modules = f"{count} module{'s' * (count != 1)}"
        out = [
            rect(x, y, self.width, height, "#ffffff", ink, rx=6),
            text(x + 10, y + 18, self.box.name, 13.5, font_weight="bold", fill=ink),
        ]
        if 20 + len(self.box.name) * BOLD_CHAR + 12 + len(modules) * SMALL_CHAR < self.width:
            out.append(text(x + self.width - 10, y + 18, modules, 10, fill="#888", text_anchor="end"))
        out += [
            text(x + 10, y + 33 + 14 * i, line, font_style="italic", fill="#555")
            for i, line in enumerate(self.purpose)
        ]
        top = y + 36 + 14 * len(self.purpose)
        left = x + 10
        for column in self.columns:
            out += [
                text(left, top + 15 * r, name, font_family=MONO, fill="#333") for r, name in enumerate(column)
            ]
            left += self.column_width(column)
        return out


def bands(house: House) -> list[tuple[str, str, tuple[Box, ...], Colours]]:
    """Each band's label, its second line, its boxes and its colours, top to bottom."""
    out = [("adapters", "", house.adapters, ADAPTER_COLOURS)]
    for i, layer in enumerate(house.layers):
        note = "" if len(layer) == 1 else "independent" if house.independent[i] else "siblings"
        out.append((f"layer {i + 1}", note, layer, LAYER_COLOURS[i % len(LAYER_COLOURS)]))
    out.append(("engine", "", (house.engine,), ENGINE_COLOURS))
    return out


def house_svg(house: House) -> tuple[list[str], float]:
    """The bands, each with its boxes side by side, and the arrow that says which way imports go."""
    out: list[str] = []
    y: float = TOP
    room = HOUSE_W - LABEL_W - BAND_PAD
    for label, note, boxes, (paper, ink) in bands(house):
        width = (room - BOX_GAP * (len(boxes) - 1)) / len(boxes)
        drawn = [Drawn.at(box, width) for box in boxes]
        inner = max(d.height for d in drawn)  # one height for the boxes of a band
        out.append(rect(HOUSE_X, y, HOUSE_W, inner + 2 * BAND_PAD, paper, rx=10))
        out.append(text(HOUSE_X + 30, y + 24, label, 12.5, font_weight="bold", fill=ink))
        if note:
            out.append(text(HOUSE_X + 30, y + 39, note, 10, fill=ink, font_style="italic"))
        for i, d in enumerate(drawn):
            out += d.svg(BOXES_X + i * (width + BOX_GAP), y + BAND_PAD, inner, ink)
        y += inner + 2 * BAND_PAD + BAND_GAP
    bottom = y - BAND_GAP
    arrow_x = HOUSE_X + 16
    out.append(
        f'<line x1="{arrow_x}" y1="{TOP + 10}" x2="{arrow_x}" y2="{bottom - 14}" stroke="#9a9a9a" '
        'stroke-width="2"/>'
    )
    out.append(
        f'<path d="M{arrow_x - 5},{bottom - 16} L{arrow_x + 5},{bottom - 16} L{arrow_x},{bottom - 6} Z" '
        'fill="#9a9a9a"/>'
    )
    return out, bottom


def cell_colour(count: int, most: int) -> tuple[str, str]:
    """A count's fill (pale to deep blue, on a log scale) and the colour of its figure."""
    t = math.log1p(count) / math.log1p(most)
    low, high = (219, 232, 251), (38, 94, 170)
    fill = "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(low, high, strict=True))
    return fill, "#ffffff" if t > 0.5 else "#1d3557"


def matrix_svg(house: House) -> tuple[list[str], float]:
    """The table of imports: a row per importing box, a column per imported one, the figure the number of
    module-to-module imports; grey where the contracts forbid an import, red where one exists anyway."""
    rows = [*house.adapters, *(box for layer in house.layers for box in layer)]
    columns = [*(box for layer in house.layers for box in layer), house.engine]
    inks = {box.name: ink for _, _, boxes, (_, ink) in bands(house) for box in boxes}
    most = max(house.imports.values())
    x0, y0 = MATRIX_X + ROW_LABEL_W, TOP + 44 + HEADER_H
    out = [
        text(MATRIX_X, TOP + 12, "Who imports whom", 15, font_weight="bold", fill="#222"),
        text(
            MATRIX_X,
            TOP + 30,
            "read a row: what that package imports (module-to-module imports)",
            11,
            fill="#555",
        ),
    ]
    for c, box in enumerate(columns):
        cx = x0 + c * CELL + CELL / 2 + 4
        out.append(
            f'<text transform="translate({cx:.1f},{y0 - 6:.1f}) rotate(-55)" font-size="11" '
            f'fill="{inks[box.name]}" font-weight="bold">{esc(box.short)}</text>'
        )
    for r, importer in enumerate(rows):
        y = y0 + r * CELL
        out.append(
            text(
                x0 - 8,
                y + CELL / 2 + 4,
                importer.short,
                11,
                fill=inks[importer.name],
                font_weight="bold",
                text_anchor="end",
            )
        )
        for c, imported in enumerate(columns):
            x, count = x0 + c * CELL, house.imports[importer.name, imported.name]
            allowed = house.allowed(importer.name, imported.name)
            fill, ink = cell_colour(count, most) if count else ("#ffffff" if allowed else "#e9e9e9", "#000")
            if count and not allowed:
                fill, ink = "#d6336c", "#ffffff"
            out.append(rect(x + 1, y + 1, CELL - 2, CELL - 2, fill, "#d0d0d0" if allowed else "none", rx=3))
            if count:
                out.append(
                    text(x + CELL / 2, y + CELL / 2 + 4, str(count), 11, fill=ink, text_anchor="middle")
                )
    bottom = y0 + len(rows) * CELL
    group_lines = [len(house.adapters)]
    for layer in house.layers[:-1]:
        group_lines.append(group_lines[-1] + len(layer))
    for g in group_lines:
        y = y0 + g * CELL
        out.append(
            f'<line x1="{MATRIX_X + 10}" y1="{y:.1f}" x2="{x0 + len(columns) * CELL:.1f}" y2="{y:.1f}" '
            'stroke="#b0b0b0" stroke-width="1"/>'
        )
    return out, bottom


def legend_svg(y: float) -> list[str]:
    """What the colours of the table mean, and where the picture comes from."""
    x = MATRIX_X
    fill, ink = cell_colour(7, 21)
    out = [
        rect(x, y, 22, 22, fill, rx=3),
        text(x + 11, y + 15, "7", 11, fill=ink, text_anchor="middle"),
        text(x + 32, y + 15, "imports that exist (all go down the house)", 11, fill="#333"),
        rect(x, y + 30, 22, 22, "#e9e9e9", rx=3),
        text(x + 32, y + 45, "forbidden by the contracts: a layer above,", 11, fill="#333"),
        text(x + 32, y + 59, "its own, or an independent sibling", 11, fill="#333"),
        rect(x, y + 68, 22, 22, "#d6336c", rx=3),
        text(x + 32, y + 83, "forbidden, yet there (lint-imports fails)", 11, fill="#333"),
    ]
    notes = [
        "Layers: the layers contract of [tool.importlinter]",
        "in pyproject.toml; modules: the source tree;",
        "imports: the import graph (grimp). Drawn by",
        "python docs/make_architecture.py — do not edit.",
    ]
    out += [text(x, y + 118 + 15 * i, line, 11, fill="#666") for i, line in enumerate(notes)]
    return out


def svg_picture(house: House) -> str:
    """The whole picture as an SVG document."""
    house_part, house_bottom = house_svg(house)
    matrix_part, matrix_bottom = matrix_svg(house)
    legend = legend_svg(matrix_bottom + 24)
    columns = sum(len(layer) for layer in house.layers) + 1
    width = MATRIX_X + ROW_LABEL_W + columns * CELL + 24
    height = max(house_bottom, matrix_bottom + 24 + 180) + 20
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{esc(SANS)}">',
        "<title>The house of the Mus bot: adapters, the layers of the bot core, the engine</title>",
        rect(0, 0, width, height, "#ffffff"),
        text(HOUSE_X, 34, "The house of the Mus bot", 20, font_weight="bold", fill="#222"),
        text(
            HOUSE_X,
            56,
            "Each layer of bot/ imports only the layers below it; the adapters sit on top, the engine "
            "at the bottom: every import points down.",
            12,
            fill="#555",
        ),
    ]
    return "\n".join([*head, *house_part, *matrix_part, *legend, "</svg>"]) + "\n"


# --- writing and checking -----------------------------------------------------------------------------------
