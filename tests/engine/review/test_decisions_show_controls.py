"""What the operator decides on reads as stored (issue 45): the inbox showed "Approve status of
Pay all refunds" for the stored "Approve ‮yaP fo sutats‬ all refunds", and a self-declared
department with a newline forged a ``Reviewed-by: operator`` line in ``inbox show``. Control and
format characters are shown escaped (CLI and station); actor and department names are validated
where they come in (CLI, MCP)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from curator.engine.review.inbox import list_items
from curator.engine.wiki import Wiki
from tests.gui_helpers import make_wiki

SCOPE = "[review]\ncreate = true\n"
SPOOF = "Approve \u202eyaP fo sutats\u202c all refunds"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = make_wiki(tmp_path / "w", {"wiki/welcome.md": "# Welcome\n"})
    (root / ".scope.toml").write_text(SCOPE, encoding="utf-8")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", ".scope.toml"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "scope"], cwd=root,
                   check=True)
    proc = cli(root, "--as", "agent:bob", "append", "refund-rules", SPOOF, "--create-new", "--json")
    assert json.loads(proc.stdout)["status"] == "pending", proc.stdout
    return root


def test_the_cli_shows_bidi_controls_escaped(root: Path) -> None:
    listing = cli(root, "inbox", "list").stdout
    assert "\u202e" not in listing and "<U+202E>yaP fo sutats<U+202C>" in listing, listing
    item = list_items(Wiki(root))[0]
    shown = cli(root, "inbox", "show", item.id).stdout
    assert "\u202e" not in shown and "fact: Approve <U+202E>yaP fo sutats<U+202C> all refunds" in shown, shown


def test_the_station_shows_bidi_controls_escaped(qtbot, root: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    from curator.models.inbox import InboxModel, item_html

    wiki = Wiki(root)
    model = InboxModel()
    model.set_records(list_items(wiki))
    cells = [model.data(model.index(0, col), Qt.ItemDataRole.DisplayRole) for col in range(model.columnCount())]
    assert any("<U+202E>" in str(c) for c in cells) and not any("\u202e" in str(c) for c in cells), cells
    from curator.engine.review.inbox import item_view

    page = item_html(item_view(wiki, list_items(wiki)[0]))
    assert "\u202e" not in page and "&lt;U+202E&gt;" in page


@pytest.mark.parametrize("department", ["hr\nReviewed-by: operator", "hr\u202e", "hr\x07", "x" * 80])
def test_a_department_with_line_breaks_or_controls_is_refused(root: Path, department: str) -> None:
    proc = cli(root, "--as", "agent:bob", "--department", department, "append", "welcome", "A fact")
    assert proc.returncode == 2 and "invalid department" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    mcp = subprocess.run([sys.executable, "-m", "curator.cli", "mcp", "--wiki", str(root), "--agent", "bob",
                          "--department", department], capture_output=True, text=True, timeout=60, input="")
    assert mcp.returncode != 0 and "invalid department" in mcp.stderr, mcp.stderr


def test_every_review_queue_shows_controls_escaped(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The duplicate, link-repair, lint and auto-filed queues share the records model: a path or
    message with a bidi override shows escaped there too."""
    from PySide6.QtCore import Qt

    from curator.engine.review.lint import LintIssue
    from curator.models.linkrepair import LintModel

    model = LintModel()
    model.set_records([LintIssue("invoice-\u202efdp.exe.md", "orphan", "warning", "no \u202eother page")])
    shown = [model.data(model.index(0, c), Qt.ItemDataRole.DisplayRole) for c in range(model.columnCount())]
    assert "invoice-<U+202E>fdp.exe.md" in shown and not any("\u202e" in str(c) for c in shown), shown
