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


# --- every other place a path, title or fact is shown for a decision -------------------------------

SPOOFED = "wiki/invoice-\u202efdp.exe.md"
BODY = ("# Invoice\n\nPayment terms for the supplier invoices of the north region, net thirty days,\n"
        "approved by the finance lead every Monday after the weekly close of the ledger.\n")


@pytest.fixture
def spoofed(tmp_path: Path) -> Path:
    """A page with a bidi override in its name, a near-copy of another page, and a link to a
    missing page whose name carries one too."""
    return make_wiki(tmp_path / "s", {"wiki/invoice.md": BODY, SPOOFED: BODY + "\nOne more line.\n",
                                      "wiki/notes.md": "# Notes\n\nSee [[pay \u202eyaP]] for the rest.\n"})


def test_dedup_and_links_text_output_show_controls_escaped(spoofed: Path) -> None:
    for args in (["dedup"], ["dedup", "--groups"], ["links", "unresolved"], ["lint"]):
        out = cli(spoofed, *args).stdout
        assert "\u202e" not in out and "<U+202E>" in out, (args, out)
    # JSON keeps the stored text: a program reading it gets the real name
    families = json.loads(cli(spoofed, "dedup", "--groups", "--json").stdout)
    assert any(SPOOFED in f["pages"] for f in families), families


def test_the_duplicate_comparison_shows_controls_escaped(qtbot, spoofed: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.models.dedup import gather_pair, meta_html

    comparison = gather_pair(Wiki(spoofed), "wiki/invoice.md", SPOOFED)
    meta = meta_html(comparison.right, comparison.left)
    for shown in (comparison.html, meta):
        assert "\u202e" not in shown, shown
    assert "&lt;U+202E&gt;" in meta


def test_mcp_answers_an_agent_decides_on_show_controls_escaped(spoofed: Path) -> None:
    from tests.mcp.test_mcp_server import call, run

    async def body(s) -> None:  # type: ignore[no-untyped-def]
        for tool, args in (("wiki_index", {}), ("wiki_search", {"query": "invoice"}), ("wiki_dedup", {})):
            _err, text = await call(s, tool, **args)
            assert "\u202e" not in text and "<U+202E>" in text, (tool, text)
        # reading a page gives it as stored
        _err, text = await call(s, "wiki_read", page_name="wiki/notes.md")
        assert "[[pay \u202eyaP]]" in text, text

    run(spoofed, body)
