"""A one-shot ``curator search`` stays import-light (issue 17: at 32,000 pages its whole run is
~0.2 s, and YAML, the markdown parser, the graph or numeric libraries would each add tens of
milliseconds to every search without being used by it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import REPO

#: Modules ``search`` must not import: none of them is needed to answer from the index.
HEAVY = ("yaml", "markdown_it", "igraph", "numpy", "rapidfuzz", "PySide6")
#: Nor these of the engine's, when no page changed: the link index and the Markdown scanner that
#: parses pages (~2 ms of a one-shot search's start, which shares the cores with its sweep).
UNPARSED = ("curator.engine.corpus.links", "curator.engine.corpus.markdown_scan")

_PROBE = """
import contextlib, io, json, sys
from curator.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _probe(wiki: Path, *argv: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", _PROBE, "--wiki", str(wiki), *argv],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def test_search_imports_no_heavy_module(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "notes").mkdir(parents=True)
    (wiki / "notes" / "ledger.md").write_text("---\ntitle: Ledger\ntags: [finance]\n---\nThe ledger balances.\n")
    (wiki / "notes" / "other.md").write_text("# Other\nNothing here.\n")
    first = _probe(wiki, "search", "ledger", "--json")  # builds the index (may import more)
    assert first["code"] == 0 and "notes/ledger.md" in first["out"]
    warm = _probe(wiki, "search", "ledger", "--json")
    assert warm["code"] == 0
    assert [row["path"] for row in json.loads(warm["out"])] == ["notes/ledger.md"]
    loaded = sorted(m for m in warm["modules"] if m.split(".")[0] in HEAVY)
    assert loaded == [], f"curator search imported {loaded}"
    engine = sorted(m for m in warm["modules"] if m in UNPARSED)
    assert engine == [], f"a search of unchanged pages imported {engine}"
    (wiki / "notes" / "other.md").write_text("# Other\nThe ledger again.\n")
    edited = _probe(wiki, "search", "ledger", "--json")  # (the edited page is parsed: they load)
    assert sorted(row["path"] for row in json.loads(edited["out"])) == ["notes/ledger.md", "notes/other.md"]
