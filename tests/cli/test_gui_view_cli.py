"""``curator gui --view`` is checked while the arguments are parsed: an unknown view is a one-line
usage error (exit 2) before anything of Qt is imported, let alone a window drawn (it used to be
printed after the screenshot's window was drawn)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curator.cli import build_parser
from tests import REPO

_PROBE = """
import json, sys
from curator.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "qt": sorted(m for m in sys.modules if m.startswith("PySide6"))}))
"""


def _gui(tmp_path: Path, *argv: str) -> tuple[dict[str, Any], str]:
    """Run ``curator gui`` in a fresh process (offscreen, its own home): what it answered and
    which Qt modules it imported, and its stderr."""
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen", "HOME": str(home),
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    proc = subprocess.run([sys.executable, "-c", _PROBE, "gui", *argv], capture_output=True, text=True,
                          timeout=120, env=env)
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


@pytest.mark.parametrize(("view", "expected"), [
    ("duplicates", "unknown view 'duplicates' (one of main, page, health, graph, dedup,"),
    ("graph:big", "unknown view 'graph:big' (one of main, page,"),
    ("facts:bogus", "unknown facts queue 'bogus' (one of similar, conflicts, stale)"),
])
def test_an_unknown_view_is_refused_before_any_window(tmp_path: Path, view: str, expected: str) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "a.md").write_text("# A\n")
    shot = tmp_path / "shot.png"
    answer, err = _gui(tmp_path, str(wiki), "--view", view, "--screenshot", str(shot))
    assert answer["code"] == 2
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"curator gui: error: argument --view: {expected}"), err
    assert "PySide6.QtWidgets" not in answer["qt"]  # (no window could have been made)
    assert not shot.exists()


def test_the_error_lists_every_view_the_window_carries() -> None:
    from curator.views.shell.registry import VIEWS, check_view, view_names

    with pytest.raises(ValueError, match="unknown view") as caught:
        check_view("duplicates")
    listed = str(caught.value).partition("(one of ")[2].rstrip(")").split(", ")
    assert listed == [*view_names(), "page:SLUG", "facts:QUEUE"]
    assert {name for name, _, _ in VIEWS} <= set(listed)


@pytest.mark.parametrize("view", ["main", "page", "page:Some Page", "page:付款流程", "health", "graph", "dedup",
                                  "links", "lint", "facts", "facts:similar", "facts:conflicts", "facts:stale",
                                  "inbox", "auto", "policy", "history"])
def test_a_valid_view_parses(view: str) -> None:
    args = build_parser(("gui",)).parse_args(["gui", "some-wiki", "--view", view])
    assert args.view == view


def test_every_view_of_the_list_is_a_widget_class() -> None:
    """The window is built from the list ``--view`` is checked against (install_views): each entry
    names a view class (imported here without an application)."""
    import importlib

    from PySide6.QtWidgets import QWidget

    from curator.views.shell.registry import VIEWS

    for _name, where, _title in VIEWS:
        module, _, cls = where.partition(":")
        assert issubclass(getattr(importlib.import_module(module), cls), QWidget), where
