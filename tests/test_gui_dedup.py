"""pytest-qt tests of the duplicate review queue (offscreen, the real engine on a small wiki)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from curator.engine.dedup import DECISIONS_FILE, Candidate
from curator.models.dedup import diff_html
from curator.views.dedup_view import DedupView, MergePreviewDialog
from curator.views.main_window import MainWindow
from curator.views.workspace import Workspace

from .gui_helpers import make_wiki, temp_settings

KEEP, GONE = "wiki/refund-policy.md", "notes/refunds-old.md"
PX, PX_NOTES = "wiki/project-x.md", "wiki/project-x-notes.md"

PAGES = {
    KEEP: "---\ntitle: Refund Policy\nlayer: core\ntrust: 0.8\ntags: [finance]\ncreated: '2024-01-01'\n---\n"
          "# Refund Policy\n\nRefunds within 30 days of purchase.\n\n## Updates\n\n"
          "- Refunds over NT$ 10,000 need a manager (added 2024-02-01)\n",
    GONE: "---\ntitle: Refund policy\nlayer: deep\ntrust: 0.3\ntags: [old]\ncreated: '2023-05-01'\n---\n"
          "# Refund policy\n\nRefunds within 14 days of purchase.\n\n## Updates\n\n"
          "- Chargebacks go to the disputes team (added 2023-06-01)\n",
    "wiki/home.md": "---\ntitle: Home\nlayer: identity\ntrust: 0.9\n---\n# Home\n\n"
                    "Read [[refunds-old#Updates|the old rules]] and [[Refund Policy]].\n",
    PX: "---\ntitle: Project X\ntrust: 0.7\n---\n# Project X\n\nA ledger rewrite for the payouts service.\n",
    PX_NOTES: "---\ntitle: Project X notes\ntrust: 0.4\n---\n# Project X notes\n\n"
              "Meeting minutes about hiring and the office plants.\n",
    "wiki/other.md": "---\ntitle: Unrelated\n---\n# Unrelated\n\nNothing alike here at all.\n",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def open_queue(qtbot, root: Path, tmp_path: Path) -> tuple[MainWindow, DedupView]:  # type: ignore[no-untyped-def]
    win = MainWindow(Workspace(root, watch=True), temp_settings(tmp_path))
    view = DedupView(win)
    win.add_view("dedup", view, "Duplicates")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    win.show_view("dedup")
    qtbot.waitUntil(view.is_content_ready, timeout=15_000)
    return win, view


@pytest.fixture
def queue(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", PAGES)
    win, view = open_queue(qtbot, root, tmp_path)
    yield root, win, view
    win.close()


def pairs(view: DedupView) -> list[tuple[str, str]]:
    return [(c.keep, c.merge) for c in view.model.candidates]


def select(qtbot, view: DedupView, keep: str) -> Candidate:  # type: ignore[no-untyped-def]
    row = next(i for i, c in enumerate(view.model.candidates) if c.keep == keep)
    view.table.selectRow(row)
    candidate = view.model.candidates[row]
    qtbot.waitUntil(lambda: view.comparison is not None and view.comparison.left.path == candidate.keep,
                    timeout=5000)
    return candidate


def test_queue_lists_candidates_with_reason_scores_and_comparison(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    _root, _win, view = queue
    assert sorted(pairs(view)) == [(PX, PX_NOTES), (KEEP, GONE)]
    # most confident first: the same title (1.00) before similar names (slugSim < 1)
    assert pairs(view)[0] == (KEEP, GONE)
    assert [view.model.index(r, 2).data() for r in range(2)] == ["title", "slug"]
    assert view.model.index(0, 3).data() == "1.00" and float(view.model.index(1, 3).data()) < 1
    assert "same title" in view.model.index(0, 0).data(3)  # tooltip: the engine's reason
    assert "scores:" in view.model.index(0, 0).data(3)
    select(qtbot, view, KEEP)
    comparison = view.comparison
    assert comparison is not None
    assert (comparison.left.inbound, comparison.right.inbound) == (1, 1)  # both linked from home
    assert "Inbound links" in view.left_card.meta.text() and "0.80" in view.left_card.meta.text()
    assert "0.30" in view.right_card.meta.text()
    text = view.diff.toPlainText()
    assert "30 days" in text and "14 days" in text
    assert "#f5b7b1" in comparison.html and "#a9dfbf" in comparison.html  # changed words marked
    assert "same title" in view.reason.text()


def test_merge_from_the_queue_is_one_commit_and_undo_restores(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, win, view = queue
    before = {p: (root / p).read_text("utf-8") for p in (KEEP, GONE, "wiki/home.md")}
    n = commits(root)
    select(qtbot, view, KEEP)
    shown: list[MergePreviewDialog] = []

    def accept(dialog: QDialog) -> bool:
        assert isinstance(dialog, MergePreviewDialog)
        shown.append(dialog)
        return True

    view.exec_dialog = accept
    view.left_card.keep.click()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    plan = shown[0].plan
    assert (plan.keep, plan.merge) == (KEEP, GONE)
    assert [(r.page, r.old) for r in plan.rewrites] == [("wiki/home.md", "[[refunds-old#Updates|the old rules]]")]
    assert shown[0].rewrites.topLevelItemCount() == 1
    assert git(root, "log", "-1", "--format=%s") == f"merge: {GONE} into {KEEP}"
    changed = set(git(root, "show", "--no-renames", "--name-only", "--format=", "HEAD").splitlines())
    assert changed == {KEEP, GONE, f"_archive/{GONE}", "wiki/home.md"}
    home = (root / "wiki/home.md").read_text("utf-8")
    assert "[[refund-policy#Updates|the old rules]]" in home and "refunds-old" not in home
    assert not (root / GONE).exists() and (root / "_archive" / GONE).exists()
    assert "Chargebacks go to the disputes team" in (root / KEEP).read_text("utf-8")
    qtbot.waitUntil(lambda: pairs(view) == [(PX, PX_NOTES)], timeout=10_000)
    assert "merged" in view.banner.text()

    win.undo_last()
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=10_000)
    assert git(root, "log", "-1", "--format=%s").startswith("revert: merge")
    for path, text in before.items():
        assert (root / path).read_text("utf-8") == text
    assert not (root / "_archive" / GONE).exists()
    qtbot.waitUntil(lambda: sorted(pairs(view)) == [(PX, PX_NOTES), (KEEP, GONE)], timeout=10_000)


def test_merge_the_other_way_shows_its_own_preview_and_cancel_writes_nothing(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    n = commits(root)
    select(qtbot, view, KEEP)
    shown: list[MergePreviewDialog] = []
    view.exec_dialog = lambda d: shown.append(d) or False  # type: ignore[func-returns-value]
    view.right_card.keep.click()
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    plan = shown[0].plan
    assert (plan.keep, plan.merge) == (GONE, KEEP)
    assert [r.old for r in plan.rewrites] == ["[[Refund Policy]]"]
    qtbot.wait(300)
    assert commits(root) == n and git(root, "status", "--porcelain") == ""


def test_not_duplicates_is_committed_and_survives_a_restart(qtbot, queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, win, view = queue
    n = commits(root)
    select(qtbot, view, PX)
    view.dismiss_button.click()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert git(root, "log", "-1", "--format=%s") == f"dismiss: {PX_NOTES} + {PX}"  # pair_key order
    assert git(root, "show", "--name-only", "--format=", "HEAD") == DECISIONS_FILE
    assert json.loads((root / DECISIONS_FILE).read_text("utf-8"))["not_duplicates"][0]["pages"] == [PX_NOTES, PX]
    qtbot.waitUntil(lambda: pairs(view) == [(KEEP, GONE)], timeout=10_000)
    win.close()

    again, view2 = open_queue(qtbot, root, tmp_path / "second")
    try:
        assert pairs(view2) == [(KEEP, GONE)]
        assert view2.count.text().startswith("1 candidate pair ")
    finally:
        again.close()


def test_skip_moves_on_without_a_commit(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    n = commits(root)
    select(qtbot, view, KEEP)
    view.skip_button.click()
    # the skipped pair waits at the end; the next candidate is shown
    assert pairs(view) == [(PX, PX_NOTES), (KEEP, GONE)]
    assert view.current_candidate() is not None and view.current_candidate().keep == PX
    qtbot.waitUntil(lambda: view.comparison is not None and view.comparison.left.path == PX, timeout=5000)
    assert view.model.index(1, 0).data(9) is not None  # greyed out (ForegroundRole)
    assert "Skipped" in view.banner.text()
    # a change in the wiki recomputes the queue; the skip is remembered for the session
    (root / "wiki/other.md").write_text("---\ntitle: Unrelated\n---\n# Unrelated\n\nStill nothing.\n", "utf-8")
    qtbot.waitUntil(lambda: view.count.text().endswith("(1 skipped), most confident first"), timeout=10_000)
    assert pairs(view) == [(PX, PX_NOTES), (KEEP, GONE)]
    qtbot.wait(200)
    assert commits(root) == n


def test_the_queue_follows_changes_in_the_wiki(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    (root / "wiki/unrelated-copy.md").write_text(
        "---\ntitle: Unrelated\n---\n# Unrelated\n\nNothing alike here at all.\n", "utf-8")
    qtbot.waitUntil(lambda: ("wiki/other.md", "wiki/unrelated-copy.md") in pairs(view)
                    or ("wiki/unrelated-copy.md", "wiki/other.md") in pairs(view), timeout=10_000)
    assert len(pairs(view)) == 3


def test_empty_queue_says_so(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", {"a.md": "# Alpha\n\nfirst\n", "b.md": "# Omega\n\nlast\n"})
    win, view = open_queue(qtbot, root, tmp_path)
    try:
        assert view.model.rowCount() == 0
        assert "No duplicate candidates" in view.diff.toPlainText()
        assert not view.dismiss_button.isEnabled() and not view.left_card.keep.isEnabled()
    finally:
        win.close()


def test_diff_aligns_lines_and_marks_changed_words() -> None:
    html, ratio = diff_html("same\nold words here\nonly left\n", "same\nnew words here\n")
    assert 0 < ratio < 1
    assert html.count("<tr>") == 3  # same, the changed pair, the left-only line
    assert '<span style="background-color:#f5b7b1;">old</span>' in html
    assert '<span style="background-color:#a9dfbf;">new</span>' in html


def test_queue_model_passes_qtmodeltester(qtmodeltester, queue) -> None:  # type: ignore[no-untyped-def]
    qtmodeltester.check(queue[2].model)
