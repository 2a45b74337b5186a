"""The engine's structure rules, checked over the source (a refactor that breaks one fails here).

* one owner per wiki: no module keeps a table of per-wiki services (they live on ``wiki.session``);
* the page store's lock, connection and load flag are its own (public API: ``connection()``, ``loaded``);
* no module imports another module's private names;
* one git backend: no git process is started outside ``curator/engine/repo/git.py``, and no other
  module spells a git command (they call its typed methods).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from curator.engine.dedup.index import DedupIndex
from curator.engine.graph.link_graph import GRAPHS
from curator.engine.wiki import Wiki
from curator.engine.write.append import RouteCache
from tests import REPO
from tests.gui_helpers import make_wiki

SRC = REPO / "curator"


def _sources() -> list[tuple[Path, str]]:
    return [(p, p.read_text(encoding="utf-8")) for p in sorted(SRC.rglob("*.py"))]


def test_no_module_level_table_keyed_by_wiki() -> None:
    offenders = [f"{p.relative_to(SRC)}" for p, text in _sources()
                 if re.search(r"Weak(Key|Value)Dictionary", text)]
    assert offenders == []


def test_nothing_outside_the_store_touches_its_lock_connection_or_load_flag() -> None:
    pattern = re.compile(r"store\.(_lock|_conn|conn|_loaded)\b")
    offenders = [f"{p.relative_to(SRC)}:{i}" for p, text in _sources() if p.name != "store.py"
                 for i, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    assert offenders == []


def test_no_module_imports_private_names_of_another() -> None:
    offenders = []
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                offenders += [f"{path.relative_to(SRC)}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert offenders == []


def test_git_runs_only_in_the_git_backend() -> None:
    spawn = re.compile(r"\bsubprocess\b|\bPopen\b|os\.system|\.git/HEAD|/ \"HEAD\"")
    raw = re.compile(r"\.(run|out|start|out_head)\(\s*\"(-c|[a-z][a-z-]+)\"")
    offenders = []
    for path, text in _sources():
        rel = path.relative_to(SRC).as_posix()
        if rel == "engine/repo/git.py":
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if rel == "engine/filing/autofile.py" and "subprocess" in line:
                continue  # the configured arbiter command (not git), see run_arbiter
            if rel == "engine/repo/signing.py" and "subprocess" in line and '"git"' not in line:
                continue  # ssh-keygen and gpg, which sign and verify (never git itself)
            if rel == "engine/facts/index.py" and "subprocess" in line and "git" not in line:
                continue  # a Python child reading a first whole-wiki run's pairs (never git)
            if rel == "engine/dedup/detached.py" and "subprocess" in line and "git" not in line:
                continue  # a Python child making a new dedup basis (never git)
            if spawn.search(line) or (raw.search(line) and "build_server" not in line):
                offenders.append(f"{rel}:{i}: {line.strip()}")
    assert offenders == []


def test_design_references_point_at_the_design_notes() -> None:
    # Every "docs/design.md §N" in the code names a section that exists; nothing cites a file
    # that is not in the repository.
    design = (SRC.parent / "docs" / "design.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"(?m)^## (\d+)\.", design))
    cited = {m for _p, t in _sources() for m in re.findall(r"docs/design\.md §(\d+)", t)}
    assert cited and cited <= sections
    assert [p.name for p, t in _sources() if re.search(r"\bSPEC\b", t)] == []


def test_gitpython_is_not_a_dependency() -> None:
    # The backend explains why (curator/engine/repo/git.py); a declared but unused dependency is not kept.
    pyproject = (SRC.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert "gitpython" not in pyproject.lower()
    assert not any(re.search(r"^\s*(import git\b|from git\b)", t, re.M) for _p, t in _sources())


def test_each_wiki_owns_its_services(tmp_path: Path) -> None:
    from curator.engine.dedup.index import index_for
    from curator.engine.graph.link_graph import graph_for
    from curator.engine.write.append import route

    root = make_wiki(tmp_path / "wiki")
    first, second = Wiki(root), Wiki(root)
    try:
        assert first.session is first.session and first.session is not second.session
        assert first.pages  # loaded: append routes from the cache
        route(first, "ann-smith")
        assert first.session.service(RouteCache, RouteCache).slugs and second.session.peek(RouteCache) is None
        assert index_for(first) is first.session.peek(DedupIndex) and second.session.peek(DedupIndex) is None
        graph = graph_for(first)
        assert graph_for(first) is graph  # cached on the session ...
        path = sorted(first.pages)[0]
        (root / path).write_text((root / path).read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
        first.refresh([path])  # ... and dropped with the link index when a page changes
        assert first.session.link_cache(GRAPHS) == {} and graph_for(first) is not graph
    finally:
        first.close()
        second.close()
