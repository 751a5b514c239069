"""The house rules of the code, checked on the source itself (docs/architecture.md explains the house).

The import contracts (which package may import which) are import-linter's (``lint-imports``, the
``[tool.importlinter]`` section of ``pyproject.toml``); these tests check what it does not:

* sizes: no module of ``bot/``, ``adapters/`` or ``engine/`` over :data:`MAX_MODULE_LINES` lines, no
  function or method of ``bot/`` over :data:`MAX_FUNCTION_LINES` (a longer one is several steps that want
  names of their own);
* honest imports: a name is imported from the module that defines it, never from a module that merely
  imported it too (only a package's ``__init__`` re-exports, and it says so in ``__all__``);
* curated packages: each ``bot/<package>/__init__.py`` exports exactly what it imports, in ``__all__``, and
  nothing that nobody outside the package uses;
* current documentation: ``docs/make_architecture.py --check`` (the layer picture matches the contract and
  the real imports).
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MAX_MODULE_LINES = 400
"""A module longer than this is two modules."""

MAX_FUNCTION_LINES = 60
"""A function or method of the bot core longer than this (its ``def`` line to its last line) is several."""

USER_DIRS = ("bot", "adapters", "tests", "bench", "docs")
"""Where a package's exported name counts as used: the rest of the bot core, the adapters, and the tests,
benchmarks and docs scripts — a fake store that only tests use (``MemoryTableStore``) is still part of what
the package offers. Only a name that no code outside its own package uses at all is dead weight."""


def python_files(*tops: str) -> Iterator[Path]:
    """Every ``.py`` file under the given top-level directories, in a stable order."""
    for top in tops:
        yield from sorted((ROOT / top).rglob("*.py"))


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of a source file (each file is parsed once per run)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def where(path: Path, line: int | None = None) -> str:
    """``bot/x/_y.py:12``, for failure messages."""
    relative = path.relative_to(ROOT).as_posix()
    return relative if line is None else f"{relative}:{line}"


def test_no_module_is_longer_than_400_lines() -> None:
    long = {
        where(path): count
        for path in python_files("bot", "adapters", "engine")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them): {long}"


def test_no_function_of_the_bot_core_is_longer_than_60_lines() -> None:
    long = {
        f"{where(path, node.lineno)} {node.name}": count
        for path in python_files("bot")
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (count := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    }
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (name their steps): {long}"


def module_path(dotted: str) -> Path | None:
    """The file of a plain module of this project (``None`` for a package or anything not ours)."""
    base = ROOT.joinpath(*dotted.split("."))
    if (base / "__init__.py").exists():
        return None
    path = base.with_suffix(".py")
    return path if path.exists() else None


def defined_names(tree: ast.Module) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments), also inside top-level
    ``if``/``try``/``with`` blocks; names it only imports are not among them."""
    names: set[str] = set()
    statements: list[ast.stmt] = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, block, []):
                    statements.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return names


def test_names_are_imported_from_the_module_that_defines_them() -> None:
    definitions: dict[Path, set[str]] = {}
    borrowed = []
    for path in python_files("bot", "adapters"):
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            source = module_path(node.module) if node.module.split(".")[0] in ("bot", "adapters") else None
            if source is None:
                continue
            if source not in definitions:
                definitions[source] = defined_names(parsed(source))
            borrowed += [
                f"{where(path, node.lineno)}: {alias.name} from {node.module}"
                for alias in node.names
                if alias.name != "*" and alias.name not in definitions[source]
            ]
    assert not borrowed, "names imported from a module that does not define them:\n" + "\n".join(borrowed)


def package_exports(init: Path) -> tuple[list[str], set[str]]:
    """A package ``__init__``'s ``__all__`` (empty if it has none) and the names its imports bind."""
    exported: list[str] = []
    imported: set[str] = set()
    for node in parsed(init).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            exported = list(ast.literal_eval(node.value))
    return exported, imported


def names_used_outside(packages: list[str]) -> dict[str, set[str]]:
    """For each package, the names that code outside it takes from it: ``from bot.x import name``,
    ``bot.x.name``, or the string ``"bot.x.name"`` that a test patches."""
    used: dict[str, set[str]] = {package: set() for package in packages}
    for path in python_files(*USER_DIRS):
        outside = {p for p in packages if not path.is_relative_to(ROOT.joinpath(*p.split(".")))}
        for node in ast.walk(parsed(path)):
            package, names = _taken(node)
            if package in outside:
                used[package].update(names)
    return used


def _taken(node: ast.AST) -> tuple[str, list[str]]:
    """The package that one node of a syntax tree takes names from (``""``: none), and those names."""
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return node.module, [alias.name for alias in node.names]
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
    ):
        return f"{node.value.value.id}.{node.value.attr}", [node.attr]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.count(".") >= 2:
        first, second, name = node.value.split(".")[:3]
        return f"{first}.{second}", [name]
    return "", []


def bot_packages() -> list[Path]:
    """Every ``bot/<package>/__init__.py``."""
    return sorted(ROOT.glob("bot/*/__init__.py"))


def test_every_bot_package_exports_exactly_what_it_imports() -> None:
    wrong = {}
    for init in bot_packages():
        exported, imported = package_exports(init)
        if not exported or len(set(exported)) != len(exported) or set(exported) != imported:
            wrong[where(init)] = {
                "imported, not in __all__": sorted(imported - set(exported)),
                "in __all__, not imported": sorted(set(exported) - imported),
                "listed twice": sorted({name for name in exported if exported.count(name) > 1}),
            }
    assert not wrong, f"__all__ must list exactly the names the package imports: {wrong}"


def test_every_exported_name_is_used_outside_its_package() -> None:
    packages = {"bot." + init.parent.name: package_exports(init)[0] for init in bot_packages()}
    used = names_used_outside(sorted(packages))
    unused = {
        package: idle
        for package, names in packages.items()
        if (idle := [n for n in names if n not in used[package]])
    }
    assert not unused, (
        f"exported, yet used by no code outside the package ({', '.join(USER_DIRS)}): drop them from "
        f"__all__ and the imports of __init__ (the modules keep them): {unused}"
    )


def test_the_architecture_docs_are_current() -> None:
    script = ROOT / "docs" / "make_architecture.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, (
        f"docs/architecture.svg or docs/architecture.md is out of date: run python docs/make_architecture.py"
        f"\n{done.stdout}{done.stderr}"
    )
