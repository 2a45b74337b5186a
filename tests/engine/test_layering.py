"""The layering rule of docs/design.md §1: a package imports only packages of lower layers.

Each of ``curator/engine/`` and ``curator/views/`` is a stack of layers; a layer is a list of
units, a unit one subpackage (``corpus``) or one module at the package's root (``wiki``). An import
from one unit of a stack into another, at module level or inside a function, must point to a
lower layer; units of one layer never import each other, except the root modules of one layer
(``wiki`` and ``session``; the views' shared modules), which are one piece of ground.
Imports under ``if TYPE_CHECKING:`` run no code and may name any type.

Outside the stacks: the engine imports nothing of the station, the command line or Qt.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests import REPO

SRC = REPO / "curator"

ENGINE_LAYERS: list[tuple[str, ...]] = [
    ("__init__", "errors", "events", "status", "memory"),
    ("corpus",),
    ("repo",),
    ("policy",),
    ("search",),
    ("session", "wiki"),
    ("write",),
    ("read", "filing", "graph", "sync", "dedup", "facts"),
    ("history", "review"),
]
VIEW_LAYERS: list[tuple[str, ...]] = [
    ("__init__", "host", "widgets", "plain_tips", "wiki_view", "tasks", "settings", "workspace"),
    ("page", "browser"),
    ("review", "graph", "history"),
    ("policy",),
    ("shell",),
]
STACKS = {"curator.engine": ENGINE_LAYERS, "curator.views": VIEW_LAYERS}
#: What the engine never imports (docs/design.md §1: no Qt below the views; one engine for all).
NOT_IN_ENGINE = ("curator.views", "curator.models", "curator.commands", "curator.cli", "curator.mcp_server",
                 "PySide6", "pyqtgraph")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[str, int, bool]]:
    """(imported module or name, line, under TYPE_CHECKING) for every import in ``source``."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, typing_only) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parent = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                found.extend((f"{base}.{alias.name}", child.lineno, typing_only) for alias in child.names)
            guarded = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            visit(child, typing_only or guarded)

    visit(ast.parse(source), False)
    return found


def unit_of(name: str, stack: str) -> str | None:
    """The unit of ``stack`` that ``name`` (a module, or a name in one) belongs to."""
    if name != stack and not name.startswith(stack + "."):
        return None
    rest = name[len(stack) + 1:].split(".")
    return rest[0] if rest[0] else "__init__"


def layer_violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """What is wrong with the imports of ``module`` (its text ``source``) under the rule."""
    problems: list[str] = []
    for stack, layers in STACKS.items():
        own = unit_of(module, stack)
        if own is None:
            continue
        layer_of = {unit: i for i, layer in enumerate(layers) for unit in layer}
        if own not in layer_of:
            problems.append(f"{module}: {stack}.{own} is in no layer (add it to the test and docs/design.md §1)")
            continue
        for name, line, typing_only in imports_of(source, module, is_package):
            if stack == "curator.engine" and not typing_only and name.startswith(NOT_IN_ENGINE):
                problems.append(f"{module}:{line}: the engine imports {name}")
            target = unit_of(name, stack)
            if target is None or target == own or typing_only:
                continue
            if target not in layer_of:
                problems.append(f"{module}:{line}: imports {name}, in no layer")
            elif layer_of[target] > layer_of[own]:
                problems.append(f"{module}:{line}: imports {name} from a higher layer")
            elif layer_of[target] == layer_of[own] and not _both_root_modules(stack, own, target):
                problems.append(f"{module}:{line}: imports {name} from its own layer")
    return problems


def _both_root_modules(stack: str, a: str, b: str) -> bool:
    root = SRC.parent / stack.replace(".", "/")
    return all(not (root / unit).is_dir() for unit in (a, b))


def test_every_import_points_down_the_layers() -> None:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        problems += layer_violations(module_name(path), path.read_text(encoding="utf-8"),
                                     path.name == "__init__.py")
    assert problems == []


def test_every_package_says_what_it_owns() -> None:
    missing = [str(p.relative_to(SRC)) for p in sorted(SRC.rglob("__init__.py"))
               if p.parent.parent.name in ("engine", "views") and not ast.get_docstring(ast.parse(p.read_text()))]
    assert missing == []


@pytest.mark.parametrize(("module", "source", "problem"), [
    # an upward import at module level, and one inside a function: both caught
    ("curator.engine.corpus.page", "from curator.engine.write.actions import run_action\n", "higher layer"),
    ("curator.engine.corpus.page", "def f():\n    import curator.engine.review.lint\n", "higher layer"),
    # sideways between packages of one layer
    ("curator.engine.graph.layout", "from curator.engine.sync.remote import sync\n", "own layer"),
    ("curator.views.page.editor", "from curator.views.browser.browser import Browser\n", "own layer"),
    ("curator.views.review.health", "from curator.views.shell.main_window import MainWindow\n", "higher layer"),
    # a relative import is resolved first
    ("curator.engine.repo.git", "from ..review import lint\n", "higher layer"),
    # the engine never imports Qt or the station
    ("curator.engine.write.edit", "from PySide6.QtCore import QObject\n", "the engine imports"),
    ("curator.engine.wiki", "from curator.models.pages import PageRow\n", "the engine imports"),
    # a new package must be placed in a layer
    ("curator.engine.newthing.core", "x = 1\n", "in no layer"),
])
def test_the_rule_catches(module: str, source: str, problem: str) -> None:
    found = layer_violations(module, source)
    assert found and problem in found[0]


@pytest.mark.parametrize(("module", "source"), [
    ("curator.engine.write.actions", "from curator.engine.corpus.page import Page\n"),
    ("curator.engine.wiki", "def f():\n    from curator.engine.session import WikiSession\n"),
    ("curator.engine.policy.scope", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                    "    from curator.engine.wiki import Wiki\n"),
    ("curator.views.shell.main_window", "from curator.views.review.health import HealthView\n"),
])
def test_the_rule_allows(module: str, source: str) -> None:
    assert layer_violations(module, source) == []
