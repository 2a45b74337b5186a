"""Station: Move or rename (F2, context menus), Archive, and the merge dialog's resulting-page
diff; every one an engine action with undo (pytest-qt, offscreen)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QDialog

from curator.engine.wiki import Wiki
from curator.engine.write.merge import preview_merge
from curator.models.dedup import ADDED_BG
from curator.views.page.curation_dialogs import ArchiveDialog, MoveDialog
from curator.views.review.duplicates import MergePreviewDialog
from tests import REPO
from tests.gui_helpers import loaded_window, make_wiki
from tests.views.review.test_gui_dedup import open_queue


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path)
    yield root, win
    win.close()


def test_f2_moves_the_current_page_keeps_links_and_undo_restores(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    before = {p: (root / p).read_bytes() for p in ("wiki/payments.md", "wiki/refunds.md")}
    with qtbot.waitSignal(win.ready, timeout=5000):
        win.open_page((0, "wiki/refunds.md"))
    n = commits(root)
    asked: list[QDialog] = []

    def answer(dialog: QDialog) -> bool:
        assert isinstance(dialog, MoveDialog)
        assert dialog.edit.selectedText() == "refunds"  # typing renames the stem
        dialog.edit.setText("policies/refund-rules.md")
        asked.append(dialog)
        return True

    win.exec_dialog = answer
    assert win.menus.move.shortcut().toString() == "F2"
    win.menus.move.trigger()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert asked and not (root / "wiki/refunds.md").exists()
    payments = (root / "wiki/payments.md").read_text("utf-8")
    assert "[[refund-rules#Rules|the rules]]" in payments
    assert git(root, "log", "-1", "--format=%s") == "move: wiki/refunds.md -> policies/refund-rules.md"
    qtbot.waitUntil(lambda: win.current == (0, "policies/refund-rules.md"), timeout=10_000)
    win.undo_last()
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=10_000)
    assert {p: (root / p).read_bytes() for p in before} == before


def test_context_menus_offer_move_and_archive_and_archive_is_undoable(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    n = commits(root)
    table = win.browser.table
    row = next(r for r in range(win.browser.proxy.rowCount())
               if win.browser.proxy.record(win.browser.proxy.index(r, 0)).key == (0, "notes/scratch.md"))
    rect = table.visualRect(win.browser.proxy.index(row, 0))
    win.browser._context_menu(rect.center())
    menu = win.browser.context_menu
    assert menu is not None
    labels = [a.text() for a in menu.actions()]
    assert "Move or rename…" in labels and "Archive…" in labels
    asked: list[QDialog] = []
    win.exec_dialog = lambda d: asked.append(d) or True  # type: ignore[func-returns-value]
    next(a for a in menu.actions() if a.text() == "Archive…").trigger()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert isinstance(asked[0], ArchiveDialog) and asked[0].path == "notes/scratch.md"
    assert (root / "_archive/notes/scratch.md").exists() and not (root / "notes/scratch.md").exists()
    win.page_view._context_menu(QPoint(5, 5))
    page_labels = [a.text() for a in win.page_view.context_menu.actions()]
    assert "Move or rename…" in page_labels and "Archive…" in page_labels
    win.undo_last()
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=10_000)
    assert (root / "notes/scratch.md").exists() and not (root / "_archive/notes/scratch.md").exists()


def test_cancelled_move_writes_nothing(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    n = commits(root)
    win.exec_dialog = lambda d: False
    win.ask_move()
    win.ask_archive()
    qtbot.wait(300)
    assert commits(root) == n and git(root, "status", "--porcelain") == ""


def test_merge_dialog_shows_the_resulting_page_as_a_diff(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", {
        "wiki/keep.md": "# Keep\n\n## Updates\n\n- First fact (added 2024-01-01)\n",
        "wiki/twin.md": "# Twin\n\nProse that moves.\n\n- A bullet that spans\n  two lines\n",
    })
    plan = preview_merge(Wiki(root), "keep", "twin")
    dialog = MergePreviewDialog(plan)
    qtbot.addWidget(dialog)
    text = dialog.diff.toPlainText()
    assert "Prose that moves." in text and "## From Twin" in text and "  two lines" in text
    assert dialog.tabs.tabText(0) == "Resulting wiki/keep.md"
    assert ADDED_BG.lower() in dialog.diff.toHtml().lower()  # the added lines are marked


DEMO = REPO / "resources" / "demo-wiki"
LANTERN, NOTES = "wiki/projects/project-lantern.md", "wiki/projects/project-lantern-notes.md"


def test_demo_lantern_pair_merges_from_the_queue_losing_nothing(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The issue's case: Duplicates ▸ project-lantern pair ▸ keep left ▸ Merge on the demo wiki."""
    import os
    import shutil

    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "demo")
    notes_before = (root / NOTES).read_text("utf-8")
    three_ds = (root / "concepts/three-d-secure.md").read_text("utf-8")
    win, view = open_queue(qtbot, root, tmp_path)
    row = next(i for i, f in enumerate(view.model.families) if set(f.pages) == {LANTERN, NOTES})
    assert view.model.families[row].keep == LANTERN
    view.table.selectRow(row)
    qtbot.waitUntil(lambda: view.comparison is not None and view.comparison.left.path == LANTERN
                    and view.comparison.right.path == NOTES, timeout=10_000)
    n = commits(root)
    shown: list[MergePreviewDialog] = []

    def accept(dialog: QDialog) -> bool:
        assert isinstance(dialog, MergePreviewDialog)
        shown.append(dialog)
        out = os.environ.get("CURATOR_SCREENSHOT_DIR")
        if out:
            dialog.show()
            qtbot.wait(200)
            dialog.grab().save(str(Path(out) / "merge-dialog.png"))
        return True

    view.exec_dialog = accept
    view.left_card.keep.click()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=15_000)
    diff = shown[0].diff.toPlainText()
    assert "## From Project Lantern Notes" in diff
    kept = (root / LANTERN).read_text("utf-8")
    assert kept == shown[0].plan.keep_after
    # the two-line bullets kept whole, with both of their links
    assert ("- Do we apply the low-value exemption (under EUR 30 equivalent) for domestic cards? The bank\n"
            "  said \"probably\" on the call ([[Call with Formosa Harbour Bank, 21 Oct 2026]]).") in kept
    assert "  frictionless rate. Needs a privacy review ([[Data Retention Policy]])." in kept
    assert "Working notes for Project Lantern. Not reviewed; numbers are from dashboards on the dates" in kept
    assert "### Measurements" in kept and "#open-question #mobile-web" in kept
    # no self-link on the kept page, and elsewhere the text shown is unchanged
    assert "[[project-lantern]]" not in kept and "open questions: Project Lantern Notes." in kept
    assert (root / "concepts/three-d-secure.md").read_text("utf-8") == three_ds.replace(
        "[[Project Lantern Notes]]", "[[project-lantern|Project Lantern Notes]]")
    assert (root / "_archive" / NOTES).read_text("utf-8") == notes_before
    # let the queue reload and its next comparison arrive before the window goes away
    qtbot.waitUntil(lambda: all(set(f.pages) != {LANTERN, NOTES} for f in view.model.families),
                    timeout=15_000)
    qtbot.waitUntil(lambda: view.comparison is not None or not view.model.families, timeout=15_000)
    qtbot.wait(200)
    win.close()
