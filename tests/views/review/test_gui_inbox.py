"""pytest-qt tests of the Inbox view (offscreen, the real engine): badge, detail pane, keyboard."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog

from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.engine.write.held import INBOX_DIR
from curator.views.review.inbox import EditDialog, InboxView, RejectDialog
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import PAGES, make_wiki, temp_settings

POLICY = '[review]\ncreate = true\nlayers = ["identity", "core"]\n'
EXTRA = {"notes/oslo.md": "# Oslo\n\n- The payments team moved to Oslo in 2024\n- Oslo is cold in winter\n",
         "wiki/payments.md": PAGES["wiki/payments.md"] + "\n## Updates\n\n- Card payments settle in two days\n"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


@pytest.fixture
def wiki_root(tmp_path: Path) -> tuple[Path, list[str]]:
    root = make_wiki(tmp_path / "w", {**PAGES, **EXTRA, ".scope.toml": POLICY})
    w = Wiki(root)
    ids = []
    for agent, slug, fact, new in (("dudu", "payments", "The payments team moved to Oslo", False),
                                   ("kiki", "home", "Home is the first page agents read", False),
                                   ("dudu", "treasury", "Treasury meets on Fridays", True)):
        res = append(w, slug, fact, (), new, Actor("agent", agent, "ops" if agent == "dudu" else None))
        assert res.status == "pending", res.message
        ids.append(res.data["id"])
    w.close()
    return root, ids


@pytest.fixture
def panel(qtbot, wiki_root):  # type: ignore[no-untyped-def]
    root, ids = wiki_root
    win = MainWindow(Workspace(root, watch=True), temp_settings(root.parent))
    view = InboxView(win)
    win.add_view("inbox", view, "Inbox")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    win.show_view("inbox")
    qtbot.waitUntil(lambda: len(view.model.rows) == 3 and view.is_content_ready(), timeout=15_000)
    yield root, ids, win, view
    win.close()


def tab_text(win: MainWindow, view: InboxView) -> str:
    return win.views.tabText(win.views.indexOf(view))


def test_lists_items_with_badge_diff_and_similar_facts(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    root, ids, win, view = panel
    qtbot.waitUntil(lambda: tab_text(win, view) == "Inbox (3)", timeout=10_000)
    assert [r.id for r in view.model.rows] == ids
    cells = [view.model.index(0, c).data() for c in range(5)]
    assert cells[0:2] == ["agent:dudu", "ops"] and cells[3] == "wiki/payments.md"
    assert cells[4] == "The payments team moved to Oslo"
    assert view.model.index(2, 3).data() == "wiki/treasury.md  (new page)"
    view.select_ids([ids[0]])
    qtbot.waitUntil(lambda: "The page with the fact in place" in view.detail.toPlainText(), timeout=5000)
    text = view.detail.toPlainText()
    assert "+- The payments team moved to Oslo (added " in text
    assert " - Card payments settle in two days" in text  # context of the diff: the page as it is
    assert "notes/oslo.md" in text and "The payments team moved to Oslo in 2024" in text
    assert "Held because" in text and "core pages" in text
    # an agent holds another write from another process: the badge follows
    w = Wiki(root)
    assert append(w, "home", "Home links every team", actor=Actor("agent", "lulu")).status == "pending"
    w.close()
    view.update_badge()
    qtbot.waitUntil(lambda: tab_text(win, view) == "Inbox (4)", timeout=10_000)
    qtbot.waitUntil(lambda: len(view.model.rows) == 4, timeout=10_000)


def test_keyboard_moves_and_bulk_approves(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    root, ids, win, view = panel
    view.table.setFocus()
    view.select_ids([ids[0]])
    QTest.keyClick(view.table, Qt.Key.Key_J)
    assert view.current_item().id == ids[1]  # type: ignore[union-attr]
    QTest.keyClick(view.table, Qt.Key.Key_J)
    QTest.keyClick(view.table, Qt.Key.Key_K)
    assert view.current_item().id == ids[1]  # type: ignore[union-attr]
    view.select_ids([ids[0], ids[1]])
    n = commits(root)
    QTest.keyClick(view.table, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=15_000)
    authors = git(root, "log", "-2", "--format=%an|%(trailers:key=Reviewed-by,valueonly,separator=)").splitlines()
    assert sorted(authors) == ["agent:dudu|operator", "agent:kiki|operator"]
    assert "- The payments team moved to Oslo (added " in (root / "wiki/payments.md").read_text()
    qtbot.waitUntil(lambda: [r.id for r in view.model.rows] == [ids[2]], timeout=10_000)
    qtbot.waitUntil(lambda: tab_text(win, view) == "Inbox (1)", timeout=10_000)
    assert "2 of 2 done" in view.banner.text()


def test_edit_then_approve_and_reject_with_a_reason(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    root, ids, _win, view = panel
    view.table.setFocus()
    view.select_ids([ids[2]])

    def edit(dialog: QDialog) -> bool:
        assert isinstance(dialog, EditDialog) and dialog.value() == "Treasury meets on Fridays"
        dialog.text.setPlainText("Treasury meets on Friday mornings")
        return True

    view.exec_dialog = edit
    n = commits(root)
    QTest.keyClick(view.table, Qt.Key.Key_E)
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=15_000)
    assert "- Treasury meets on Friday mornings (added " in (root / "wiki/treasury.md").read_text()
    assert git(root, "log", "-1", "--format=%an") == "agent:dudu"
    qtbot.waitUntil(lambda: len(view.model.rows) == 2, timeout=10_000)

    def refuse(dialog: QDialog) -> bool:
        assert isinstance(dialog, RejectDialog) and not dialog.ok_button.isEnabled()
        dialog.reason.setText("Ask finance first")
        assert dialog.ok_button.isEnabled()
        return True

    view.exec_dialog = refuse
    view.select_ids([ids[1]])
    QTest.keyClick(view.table, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=15_000)
    assert git(root, "log", "-1", "--format=%an|%s") == f"operator|inbox_reject: {ids[1]}"
    assert not (root / INBOX_DIR / f"{ids[1]}.json").exists()
    qtbot.waitUntil(lambda: [r.id for r in view.model.rows] == [ids[0]], timeout=10_000)
    assert "rejected" in view.banner.text()


def test_policy_view_shows_the_review_rules(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    from curator.views.policy.policy_view import POLICY_COLUMNS, PolicyView

    root, _ids, win, _view = panel
    (root / ".scope.toml").write_text(POLICY + '[namespaces."notes"]\nreview = true\n', encoding="utf-8")
    policy = PolicyView(win)
    win.add_view("policy", policy, "Policy")
    win.show_view("policy")
    policy.reload()  # added after the station loaded: it reads the policy when asked
    qtbot.waitUntil(lambda: "Inbox holds" in policy.file_state.text(), timeout=10_000)
    assert "new pages, identity pages, core pages, notes/" in policy.file_state.text()
    col = POLICY_COLUMNS.index("Review")
    rows = {policy.table.item(r, 0).text(): policy.table.item(r, col).text() for r in range(policy.table.rowCount())}
    assert rows["notes"] == "every agent write held" and rows["wiki"] == ""


def test_an_approve_is_said_in_the_status_bar_not_as_pages_changed_on_disk(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    root, ids, win, view = panel
    said: list[str] = []
    shown = win.status

    def status(text: str) -> None:
        said.append(text)
        shown(text)

    win.status = status  # type: ignore[method-assign]
    view.select_ids([ids[0]])
    n = commits(root)
    view.approve_selected()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=15_000)
    qtbot.waitUntil(lambda: [r.id for r in view.model.rows] == [ids[1], ids[2]], timeout=10_000)
    qtbot.wait(500)  # (the watcher's look at the files the approve wrote comes after it)
    assert not [s for s in said if "changed on disk" in s], said
    assert win.status_label.text().startswith("approved: The payments team moved to Oslo → wiki/payments.md  ["), said
    assert "approved: The payments team moved to Oslo → wiki/payments.md" in view.banner.text()
    # a change made outside the station is still said
    (root / "notes/oslo.md").write_text("# Oslo\n\n- Oslo has a fjord\n", encoding="utf-8")
    qtbot.waitUntil(lambda: win.status_label.text() == "1 page changed on disk", timeout=10_000)


def test_similar_facts_by_meaning_come_from_a_background_task_after_the_diff(  # type: ignore[no-untyped-def]
        qtbot, panel, monkeypatch) -> None:
    import threading

    from curator.engine.facts import door

    root, ids, win, view = panel
    release, callers = threading.Event(), []
    real = door.fact_index_for

    def slow_index(wiki, embedder=None):  # type: ignore[no-untyped-def]
        callers.append(threading.current_thread() is threading.main_thread())
        release.wait(20)  # an index still being built
        return real(wiki, embedder)

    monkeypatch.setattr(door, "fact_index_for", slow_index)
    view.select_ids([ids[2]])  # the first item's detail is asked for again by the click
    release.set()  # (this item's meaning is found at once: wait until it shows)
    qtbot.waitUntil(lambda: "Treasury meets on Fridays" in view.detail.toPlainText()
                    and "Closest facts in meaning in the wiki" in view.detail.toPlainText(), timeout=60_000)
    qtbot.wait(200)
    callers.clear()
    release.clear()
    rect = view.table.visualRect(view.model.index(0, 4))
    port = view.table.viewport()
    QTest.mouseMove(port, rect.center())
    qtbot.wait(50)  # hovered
    QTest.mousePress(port, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
    QTest.mouseRelease(port, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
    assert view.current_item().id == ids[0]  # type: ignore[union-attr]
    # the diff and the facts sharing words show while the index is not ready (the item before
    # showed shared words too: wait for this item's diff)
    qtbot.waitUntil(lambda: "+- The payments team moved to Oslo (added " in view.detail.toPlainText()
                    and "Most similar facts in the wiki (shared words)" in view.detail.toPlainText(), timeout=10_000)
    # asked off the GUI thread (once per detail shown: a reload may ask again, never on the GUI thread)
    qtbot.waitUntil(lambda: bool(callers) and not any(callers), timeout=10_000)
    release.set()
    qtbot.waitUntil(lambda: "Closest facts in meaning in the wiki" in view.detail.toPlainText(), timeout=60_000)
    text = view.detail.toPlainText()
    assert "notes/oslo.md (0." in text and "The payments team moved to Oslo in 2024" in text, text
    assert "shared words" not in text and "+- The payments team moved to Oslo (added " in text
    assert callers and not any(callers)  # never on the GUI thread
    win.grab().save(str(root.parent / "inbox-meaning.png"))
