"""The house of the bot core as data: its layers (the import contract), each package's modules and purpose,
and the imports between them (grimp) — and its text picture (see ``docs/make_architecture.py``)."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import grimp

from docs.architecture_paths import ROOT

#: The boxes outside the bot core, and what each is (the bot packages say it in ``bot/__init__.py``).
ADAPTERS = {
    "adapters.telegram": "the Telegram bot",
    "adapters.discord": "the Discord bot",
    "adapters.console": "the terminal table",
    "adapters.web": "the web table and Mini App",
    "adapters": "the musbot command",
}
ENGINE = ("engine", "the rules of Mus: pure, synchronous, deterministic")


@dataclass(frozen=True)
class Box:
    """A package as drawn: its name, what it is for and its modules (``_name.py`` shown as ``name``)."""

    name: str
    purpose: str
    modules: tuple[str, ...]

    @property
    def short(self) -> str:
        """The name without its root (``app``, ``telegram``), for the table of imports."""
        return "cli · runner" if self.name == "adapters" else self.name.split(".")[-1]


@dataclass(frozen=True)
class House:
    """Everything the pictures show."""

    adapters: tuple[Box, ...]
    layers: tuple[tuple[Box, ...], ...]
    """Top (``bot.ops``) to bottom; the packages of one layer are siblings."""
    independent: tuple[bool, ...]
    """Per layer: whether its siblings must not import each other (``|`` in the contract, not ``:``)."""
    engine: Box
    imports: Counter[tuple[str, str]]
    """(importing box, imported box) → how many module-to-module imports go from one to the other."""

    def boxes(self) -> list[Box]:
        """The adapters, the layers top to bottom, the engine."""
        return [*self.adapters, *(box for layer in self.layers for box in layer), self.engine]

    def layer_of(self, name: str) -> int | None:
        """The index of a bot package's layer (``None`` for the adapters and the engine)."""
        return next((i for i, layer in enumerate(self.layers) if any(b.name == name for b in layer)), None)

    def allowed(self, importer: str, imported: str) -> bool:
        """Whether the contracts let ``importer`` import ``imported``: only downwards, and within a layer only
        between siblings that the contract does not call independent."""
        low, high = self.layer_of(imported), self.layer_of(importer)
        if high is None or low is None:
            return True  # an adapter imports anything of the core; the core may use the engine
        return low > high or (low == high and importer != imported and not self.independent[high])


def contract_layers() -> list[tuple[list[str], bool]]:
    """The ``layers`` contract in ``pyproject.toml``: each layer's packages, and whether they are independent
    (``a | b``) or may import each other (``a : b``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    return [([p.strip() for p in re.split(r"[|:]", layer)], ":" not in layer) for layer in layers]


def purposes() -> dict[str, str]:
    """What each bot package is for, as ``bot/__init__.py`` says it (``:mod:`bot.x` — purpose;``)."""
    text = " ".join((ROOT / "bot" / "__init__.py").read_text(encoding="utf-8").split())
    return dict(re.findall(r":mod:`(bot\.\w+)` — (.+?)(?:;|\.(?= |\"|$))", text))


def box_of(module: str) -> str:
    """The box a module is drawn in: ``bot.app._service`` → ``bot.app``, ``adapters.cli`` → ``adapters``."""
    parts = module.split(".")
    if parts[0] == "bot" or (
        parts[0] == "adapters" and len(parts) > 1 and f"adapters.{parts[1]}" in ADAPTERS
    ):
        return ".".join(parts[:2])
    return parts[0]


def modules(graph: grimp.ImportGraph, name: str) -> tuple[str, ...]:
    """A box's modules as shown: private names without their underscore, subpackages with a slash."""
    children = sorted(graph.find_children(name))
    if name == "adapters":
        children = [c for c in children if c not in ADAPTERS]
    return tuple(c.rsplit(".", 1)[1].lstrip("_") + ("/" if graph.find_children(c) else "") for c in children)


def read_house() -> House:
    """The contract, the source tree and its imports."""
    graph = grimp.build_graph("bot", "adapters", "engine", cache_dir=None)
    said = purposes()
    layers, independent = [], []
    for names, apart in contract_layers():
        layers.append(tuple(Box(n, said.get(n, ""), modules(graph, n)) for n in names))
        independent.append(apart)
    drawn = {box.name for layer in layers for box in layer}
    missing = sorted(c for c in graph.find_children("bot") if graph.find_children(c) and c not in drawn)
    if missing:
        raise SystemExit(f"packages in no layer of the contract (pyproject.toml): {', '.join(missing)}")
    imports: Counter[tuple[str, str]] = Counter()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if box_of(module) != box_of(imported):
                imports[box_of(module), box_of(imported)] += 1
    return House(
        adapters=tuple(Box(n, purpose, modules(graph, n)) for n, purpose in ADAPTERS.items()),
        layers=tuple(layers),
        independent=tuple(independent),
        engine=Box(ENGINE[0], ENGINE[1], modules(graph, ENGINE[0])),
        imports=imports,
    )


# --- the text picture ---------------------------------------------------------------------------------------

TEXT_WIDTH = 110


def wrapped(words: Iterable[str], room: int, sep: str) -> list[str]:
    """Words joined by ``sep`` in lines of at most ``room`` characters."""
    lines = [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + len(sep) + len(word) > room:
            lines[-1] += sep.rstrip()
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]}{sep}{word}" if lines[-1] else word
    return lines


def band_title(house: House, index: int) -> str:
    """``layer 2: bot.app | bot.delivery`` (``|``: independent siblings, ``:``: siblings that may import
    each other, as in the contract)."""
    sep = " | " if house.independent[index] else " : "
    return f"layer {index + 1}: " + sep.join(box.name for box in house.layers[index])


def imports_of(house: House, box: Box) -> list[str]:
    """``table 7``, ``kernel 8``…: the boxes ``box`` imports, top to bottom, with the count of imports."""
    return [f"{o.short} {n}" for o in house.boxes() if (n := house.imports[box.name, o.name])]


def text_picture(house: House) -> str:
    """The house as text, for docs/architecture.md: a band per layer, and in it each package's purpose, its
    modules and what it imports (→ package and the number of module-to-module imports)."""
    pad = 2 + max(len(box.name) for box in house.boxes()) + 2
    bands = [("adapters", house.adapters)]
    bands += [(band_title(house, i), layer) for i, layer in enumerate(house.layers)]
    bands.append(("engine", (house.engine,)))
    out = []
    for title, boxes in bands:
        out.append(f"── {title} " + "─" * (TEXT_WIDTH - len(title) - 4))
        for box in boxes:
            out.append(f"  {box.name}".ljust(pad) + box.purpose)
            out += [" " * pad + line for line in wrapped(box.modules, TEXT_WIDTH - pad, " · ")]
            uses = wrapped(imports_of(house, box), TEXT_WIDTH - pad - 2, " · ")
            out += [" " * pad + ("→ " if n == 0 else "  ") + line for n, line in enumerate(uses) if line]
    return "\n".join(out) + "\n"


# --- the SVG ------------------------------------------------------------------------------------------------
