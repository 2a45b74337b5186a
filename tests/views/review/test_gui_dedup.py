"""pytest-qt tests of the duplicate review queue of families (offscreen, the real engine on a small wiki)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QStyleOptionViewItem

from curator.engine.dedup.index import DECISIONS_FILE, DedupIndex, Family
from curator.engine.dedup.worker import DedupWorker
from curator.models.dedup import diff_html
from curator.views.review.duplicates import DedupView, MergePreviewDialog
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import make_wiki, temp_settings

KEEP, GONE = "wiki/refund-policy.md", "notes/refunds-old.md"
PX, PX_NOTES = "wiki/project-x.md", "wiki/project-x-notes.md"
# three copies of one page: the one people link to survives
CRANE, CRANE_COPY, CRANE_OLD = "wiki/crane-rota.md", "wiki/crane-rota-copy.md", "archive-notes/cranes-2023.md"
CRANE_FACTS = "".join(f"- Crane {n} is serviced on {d} by the {t} shift, with the harbour master told a day before.\n"
                      for n, d, t in (("one", "Mondays", "early"), ("two", "Tuesdays", "late"),
                                      ("three", "Thursdays", "night"), ("four", "Fridays", "early")))

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
    CRANE: "---\ntitle: Crane rota\ntrust: 0.6\n---\n# Crane rota\n\n## Updates\n\n" + CRANE_FACTS,
    CRANE_COPY: "---\ntitle: Crane rota (copy)\ntrust: 0.6\n---\n# Crane rota (copy)\n\n## Updates\n\n" + CRANE_FACTS
                + "- Copied before the spring review.\n",
    CRANE_OLD: "---\ntitle: Cranes 2023\ntrust: 0.6\n---\n# Cranes 2023\n\n## Updates\n\n" + CRANE_FACTS
               + "- The old rota, kept for the audit.\n",
    "wiki/docks.md": "---\ntitle: Docks\n---\n# Docks\n\nSee [[Crane rota]] and [[crane-rota|the rota]].\n",
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


def families(view: DedupView) -> list[frozenset[str]]:
    return [frozenset(f.pages) for f in view.model.families]


CRANES = frozenset({CRANE, CRANE_COPY, CRANE_OLD})
REFUNDS, PROJECT_X = frozenset({KEEP, GONE}), frozenset({PX, PX_NOTES})


def select(qtbot, view: DedupView, page: str, member: str | None = None) -> Family:  # type: ignore[no-untyped-def]
    row = next(i for i, f in enumerate(view.model.families) if page in f.pages)
    view.table.selectRow(row)
    family = view.model.families[row]
    if member is not None:
        item = next(view.members.topLevelItem(i) for i in range(view.members.topLevelItemCount())
                    if view.members.topLevelItem(i).text(0) == member)
        view.members.setCurrentItem(item)
    qtbot.waitUntil(lambda: view.comparison is not None and view.family is not None
                    and view.family.id == family.id and view.pair is not None
                    and view.comparison.right.path == view.pair[1]
                    and (member is None or view.pair[1] == member), timeout=5000)
    return family


def members(view: DedupView) -> list[tuple[str, str]]:
    return [(view.members.topLevelItem(i).text(0), view.members.topLevelItem(i).text(1))
            for i in range(view.members.topLevelItemCount())]


def test_a_familys_pages_in_one_folder_are_listed_by_their_names_in_it(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    """A family's pages mostly differ at the end of their names: listed under the folder they
    share, by those names (the whole path in each tooltip), the page column kept wide enough to
    read them even beside long signals."""
    _root, _win, view = queue
    select(qtbot, view, PX)
    tree = view.members
    assert tree.headerItem().text(0) == "Page (in wiki/)"
    names = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())}
    assert set(names) == {"project-x.md", "project-x-notes.md"}
    for name, item in names.items():
        assert item.toolTip(0) == item.data(0, Qt.ItemDataRole.UserRole) == f"wiki/{name}"
    # too narrow, a name loses its start (the family's names share it), never its distinct end
    option = QStyleOptionViewItem()
    tree.itemDelegateForColumn(0).initStyleOption(option, tree.indexFromItem(names["project-x-notes.md"], 0))
    assert option.textElideMode == Qt.TextElideMode.ElideLeft
    # a family across folders keeps whole paths
    select(qtbot, view, CRANE)
    assert tree.headerItem().text(0) == "Page"
    assert {tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())} == set(CRANES)
    # in a narrow pane long signals give way to the pages (whole in each cell's tooltip)
    header, signals = tree.header(), 4
    cells = [tree.topLevelItem(i) for i in range(1, tree.topLevelItemCount())]
    assert all(item.toolTip(signals) == item.text(signals) and "0." in item.text(signals) for item in cells)
    cells[0].setText(signals, ", ".join(f"signal {n} 0.{n}0" for n in range(1, 10)))
    view._fit_members()
    share = int(tree.viewport().width() * view.MEMBER_PAGE_SHARE)
    assert header.sectionSize(signals) < tree.sizeHintForColumn(signals)
    assert header.sectionSize(0) >= min(tree.sizeHintForColumn(0), share) - 1 or \
        header.sectionSize(signals) <= header.sectionSizeHint(signals), (header.sectionSize(0), share)


def test_queue_lists_families_with_survivor_reason_scores_and_comparison(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    _root, _win, view = queue
    # the copies (joined by their text) first; name-only look-alike pairs after them
    assert families(view) == [CRANES, REFUNDS, PROJECT_X] or families(view) == [CRANES, PROJECT_X, REFUNDS]
    assert view.model.index(0, 0).data() == CRANE  # the survivor: the docks page links to it
    assert view.model.index(0, 1).data() == "3"
    assert "body" in view.model.index(0, 2).data()
    assert "names only" in view.model.index(1, 2).data()
    assert "more inbound links" in view.model.index(0, 0).data(3)  # tooltip: the engine's reason
    assert "scores:" in view.model.index(0, 0).data(3)
    assert view.count.text().startswith("3 duplicate families (7 pages)")
    select(qtbot, view, CRANE)
    assert members(view)[0] == (CRANE, "survivor (suggested)")
    assert {m for m, _ in members(view)[1:]} == {CRANE_COPY, CRANE_OLD}
    assert all(role == "merges into it" for _, role in members(view)[1:])
    score_cells = [view.members.topLevelItem(i).text(4) for i in (1, 2)]
    assert all("body" in c or "containment" in c for c in score_cells)
    assert view.members.topLevelItem(0).text(3) == "1"  # inbound links (pages), the count the rule used
    assert "3 pages" in view.reason.text() and "more inbound links" in view.reason.text()
    comparison = view.comparison
    assert comparison is not None and comparison.left.path == CRANE
    assert "Inbound links" in view.left_card.meta.text()
    assert view.left_card.keep.text() == "Keep this: merge the other 2 pages into it…"
    assert "Crane one is serviced" in view.diff.toPlainText()


def test_family_merge_is_one_commit_and_undo_restores(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, win, view = queue
    before = {p: (root / p).read_text("utf-8") for p in (*CRANES, "wiki/docks.md")}
    n = commits(root)
    select(qtbot, view, CRANE)
    shown: list[MergePreviewDialog] = []

    def accept(dialog: QDialog) -> bool:
        assert isinstance(dialog, MergePreviewDialog)
        shown.append(dialog)
        return True

    view.exec_dialog = accept
    view.left_card.keep.click()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    plan = shown[0].plan
    assert plan.keep == CRANE and set(plan.merges) == {CRANE_COPY, CRANE_OLD}
    assert git(root, "log", "-1", "--format=%s").startswith("merge: ")
    changed = set(git(root, "show", "--no-renames", "--name-only", "--format=", "HEAD").splitlines())
    assert changed == {CRANE, CRANE_COPY, CRANE_OLD, f"_archive/{CRANE_COPY}", f"_archive/{CRANE_OLD}"}
    kept = (root / CRANE).read_text("utf-8")
    assert "Copied before the spring review." in kept and "The old rota, kept for the audit." in kept
    assert kept.count("Crane one is serviced") == 1  # the same fact once
    qtbot.waitUntil(lambda: CRANES not in families(view) and len(families(view)) == 2, timeout=10_000)
    assert "merged" in view.banner.text()

    win.undo_last()
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=10_000)
    assert git(root, "log", "-1", "--format=%s").startswith("revert: merge")
    for path, text in before.items():
        assert (root / path).read_text("utf-8") == text
    qtbot.waitUntil(lambda: CRANES in families(view), timeout=10_000)


def test_another_survivor_is_chosen_once_and_cancel_writes_nothing(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    n = commits(root)
    select(qtbot, view, CRANE, member=CRANE_OLD)
    view.right_card.keep.click()  # "Keep this one instead"
    assert view.survivor() == CRANE_OLD
    assert members(view)[0] == (CRANE_OLD, "survivor (your choice)")
    assert (CRANE, "merges into it — suggested survivor") in members(view)
    qtbot.waitUntil(lambda: view.comparison is not None and view.comparison.left.path == CRANE_OLD, timeout=5000)
    shown: list[MergePreviewDialog] = []
    view.exec_dialog = lambda d: shown.append(d) or False  # type: ignore[func-returns-value]
    view.left_card.keep.click()
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    plan = shown[0].plan
    assert plan.keep == CRANE_OLD and set(plan.merges) == {CRANE, CRANE_COPY}
    assert {r.page for r in plan.rewrites} == {"wiki/docks.md"}  # both links to the old survivor
    qtbot.wait(300)
    assert commits(root) == n and git(root, "status", "--porcelain") == ""


def test_dismissing_a_family_is_committed_and_survives_a_restart(qtbot, queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, win, view = queue
    n = commits(root)
    select(qtbot, view, PX)
    view.dismiss_family_button.click()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert git(root, "log", "-1", "--format=%s") == f"dismiss: {PX_NOTES} + {PX}"
    assert git(root, "show", "--name-only", "--format=", "HEAD") == DECISIONS_FILE
    assert json.loads((root / DECISIONS_FILE).read_text("utf-8"))["not_duplicates"][0]["pages"] == [PX_NOTES, PX]
    qtbot.waitUntil(lambda: families(view) == [CRANES, REFUNDS], timeout=10_000)
    win.close()

    again, view2 = open_queue(qtbot, root, tmp_path / "second")
    try:
        assert families(view2) == [CRANES, REFUNDS]
        assert view2.count.text().startswith("2 duplicate families (5 pages) ")
    finally:
        again.close()


def test_one_member_leaves_its_family(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    n = commits(root)
    select(qtbot, view, CRANE, member=CRANE_OLD)
    view.dismiss_member_button.click()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    entry = json.loads((root / DECISIONS_FILE).read_text("utf-8"))["not_duplicates"][0]
    assert entry["member"] == CRANE_OLD and set(entry["pages"]) == set(CRANES)
    qtbot.waitUntil(lambda: frozenset({CRANE, CRANE_COPY}) in families(view), timeout=10_000)
    assert not [f for f in families(view) if CRANE_OLD in f]


def test_filters_by_signal_and_folder(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    _root, _win, view = queue
    view.signal.setCurrentIndex(view.signal.findData("slug"))
    qtbot.waitUntil(lambda: PROJECT_X in families(view) and REFUNDS not in families(view), timeout=10_000)
    assert all("slug" in f.signals for f in view.model.families)
    assert "matching the filter" in view.count.text()
    view.signal.setCurrentIndex(0)
    view.folder.setText("archive-notes")
    view.folder.editingFinished.emit()
    qtbot.waitUntil(lambda: families(view) == [CRANES], timeout=10_000)
    view.folder.setText("nowhere")
    view.folder.editingFinished.emit()
    qtbot.waitUntil(lambda: view.model.rowCount() == 0, timeout=10_000)
    assert "No duplicate families matching the filter" in view.diff.toPlainText()


def test_skip_moves_on_without_a_commit(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    n = commits(root)
    select(qtbot, view, CRANE)
    view.skip_button.click()
    # the skipped family waits at the end; the next one is shown
    assert families(view)[-1] == CRANES
    assert view.current_family() is not None and CRANE not in view.current_family().pages
    assert view.model.index(2, 0).data(9) is not None  # greyed out (ForegroundRole)
    assert "Skipped" in view.banner.text()
    # a change in the wiki recomputes the queue; the skip is remembered for the session
    (root / "wiki/other.md").write_text("---\ntitle: Unrelated\n---\n# Unrelated\n\nStill nothing.\n", "utf-8")
    qtbot.waitUntil(lambda: "(1 skipped), " in view.count.text(), timeout=10_000)
    assert families(view)[-1] == CRANES
    qtbot.wait(200)
    assert commits(root) == n


def test_the_count_says_the_order_the_rows_are_in(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    _root, _win, view = queue
    by_pages = {frozenset(f.pages): f for f in view.model.families}
    # the engine ranks a text copy of impact 5.8 above a name-only pair of impact 15.3
    copy = dataclasses.replace(by_pages[CRANES], strength="content", impact=5.8)
    names = dataclasses.replace(by_pages[PROJECT_X], strength="names", impact=15.3)
    view.show_content([copy, names])
    assert [f.impact for f in view.model.families] == [5.8, 15.3]
    assert view.model.index(0, 3).data() == "5.8" and view.model.index(1, 3).data() == "15.3"
    assert view.count.text().endswith(
        "(5 pages) in wiki, copies of the text first, then name-only pairs; each highest impact first")
    # one kind only: the impact alone orders them, and the count says just that
    other = dataclasses.replace(by_pages[REFUNDS], strength="content", impact=15.3)
    view.show_content([other, copy])
    assert [f.impact for f in view.model.families] == [15.3, 5.8]
    assert view.count.text().endswith("(5 pages) in wiki, highest impact first")


def test_the_queue_follows_changes_in_the_wiki(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    root, _win, view = queue
    (root / "wiki/crane-rota-third.md").write_text(PAGES[CRANE].replace("Crane rota", "Crane rota 3"), "utf-8")
    qtbot.waitUntil(lambda: CRANES | {"wiki/crane-rota-third.md"} in families(view), timeout=10_000)
    assert len(families(view)) == 3


def test_empty_queue_says_so(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", {"a.md": "# Alpha\n\nfirst\n", "b.md": "# Omega\n\nlast\n"})
    win, view = open_queue(qtbot, root, tmp_path)
    try:
        assert view.model.rowCount() == 0
        assert "No duplicate families" in view.diff.toPlainText()
        assert not view.dismiss_family_button.isEnabled() and not view.left_card.keep.isEnabled()
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


def test_a_killed_worker_is_said_in_one_line_with_a_retry(qtbot, queue) -> None:  # type: ignore[no-untyped-def]
    import os
    import signal

    from tests.engine.dedup.test_dedup_worker import HeldStore, forget_the_last_step

    root, win, view = queue
    session = win.workspace.wiki(0).session
    worker = session.peek(DedupWorker)
    assert worker is not None and session.peek(DedupIndex) is None  # the queue came from the worker process
    first = worker.pid
    assert first is not None and first != os.getpid()
    store = win.workspace.wiki(0).store
    state = store.state
    (root / "wiki/crane-rota-third.md").write_text(PAGES[CRANE].replace("Crane rota", "Crane rota 3"), "utf-8")
    qtbot.waitUntil(lambda: store.state != state, timeout=10_000)  # the station has seen it
    forget_the_last_step(root)  # (else the worker takes up the station's write, writing nothing)
    held = HeldStore(root)  # and the worker's refresh, with the queue's call, waits for the page cache
    try:
        qtbot.waitUntil(lambda: view._loading, timeout=10_000)  # the queue asks the worker again
        qtbot.wait(500)
        os.kill(first, signal.SIGKILL)
        qtbot.waitUntil(view.retry_button.isVisible, timeout=10_000)
    finally:
        held.release()
    assert view.count.text() == "Cannot list the duplicate families: the duplicate finder stopped."
    assert "ended unexpectedly (killed by SIGKILL)" in view.diff.toPlainText()
    assert view.model.rowCount() == 0 and not view.left_card.keep.isEnabled()
    if os.environ.get("CURATOR_GRAB"):
        win.grab().save(os.environ["CURATOR_GRAB"])
    view.retry_button.click()
    qtbot.waitUntil(lambda: CRANES | {"wiki/crane-rota-third.md"} in families(view), timeout=15_000)
    assert not view.retry_button.isVisible() and worker.starts == 2 and worker.pid not in (None, first)
