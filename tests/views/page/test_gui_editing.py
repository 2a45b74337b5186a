"""Station editing (pytest-qt, offscreen, the real engine on a temporary git wiki): the Source tab
is an editor with ``[[`` completion; Ctrl+S is one ``edit:`` commit; a save after an agent's
append shows the three versions and keeps both; unsaved edits survive a reload and are asked
about on close and on navigation; a red link creates its page; Move from the browser's menu."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QDialog, QMessageBox

from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.views.page.curation_dialogs import MoveDialog
from curator.views.page.edit_dialogs import ConflictDialog, CreatePageDialog
from tests.gui_helpers import loaded_window, make_wiki
from tests.views.page.test_gui_curation import commits, git

REFUNDS = "wiki/refunds.md"


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path)
    win.show()
    # Answered before the test runs, not only at teardown: pytest-qt closes the widgets it was
    # given before this fixture's teardown, and a real QMessageBox.exec() offscreen never returns.
    # A test that wants another answer sets its own.
    win.editing.ask_unsaved = lambda box: QMessageBox.StandardButton.Discard
    yield root, win
    win.editing.ask_unsaved = lambda box: QMessageBox.StandardButton.Discard
    win.close()


def open_in_editor(qtbot, win, path: str):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(win.ready, timeout=10_000):
        win.open_page((0, path))
    win.page_view.show_source()
    editor = win.page_view.source
    assert not editor.isReadOnly() and not editor.dirty
    return editor


def type_at_end(qtbot, editor, text: str) -> None:  # type: ignore[no-untyped-def]
    editor.setFocus()
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    for n, line in enumerate(text.split("\n")):
        if n:
            qtbot.keyClick(editor, Qt.Key.Key_Return)
        qtbot.keyClicks(editor, line)


def save_shot(widget, name: str, popup=None) -> None:  # type: ignore[no-untyped-def]
    """With CURATOR_SCREENSHOT_DIR set, save ``widget`` (and a popup drawn where it shows)."""
    out = os.environ.get("CURATOR_SCREENSHOT_DIR")
    if not out:
        return
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    if popup is not None and popup.isVisible():
        painter = QPainter(image)
        painter.drawPixmap(widget.mapFromGlobal(popup.mapToGlobal(QPoint(0, 0))), popup.grab())
        painter.end()
    image.save(str(Path(out) / name))


def test_source_is_an_editor_with_link_completion_and_ctrl_s_is_one_edit_commit(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    editor = open_in_editor(qtbot, win, REFUNDS)
    n = commits(root)
    type_at_end(qtbot, editor, "\nSee also [[pay")
    popup = editor.completer.popup()
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    shown = [editor.completer.completionModel().index(r, 0).data()
             for r in range(editor.completer.completionModel().rowCount())]
    assert shown == ["Payments — wiki/payments.md"]  # matched in the title or path, any case
    save_shot(win, "editor.png", popup)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert editor.toPlainText().endswith("See also [[payments]]")
    assert editor.dirty and win.page_view.edit_bar.isVisible()
    assert "Unsaved changes" in win.page_view.edit_label.text()
    expected = editor.toPlainText()
    assert win.menus.save.shortcut().toString() == "Ctrl+S"
    win.menus.save.trigger()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert (root / REFUNDS).read_text("utf-8") == expected
    assert git(root, "log", "-1", "--format=%s|%an") == f"edit: {REFUNDS}|operator"
    assert git(root, "show", "--name-only", "--format=", "HEAD") == REFUNDS
    qtbot.waitUntil(lambda: not editor.dirty, timeout=5000)
    # the link just written resolves: the page shown again lists it as an outgoing link
    qtbot.waitUntil(lambda: "curator:wiki/payments.md" in win.page_view.browser.toHtml(), timeout=10_000)
    win.menus.save.trigger()  # nothing to save: no commit
    qtbot.wait(300)
    assert commits(root) == n + 1


def test_save_after_an_agents_append_shows_three_versions_and_keeps_both(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    editor = open_in_editor(qtbot, win, REFUNDS)
    cursor = editor.document().find("Refunds within 30 days.")
    cursor.insertText("Refunds within 30 days, 45 for members.")
    editor.setTextCursor(cursor)
    assert editor.dirty
    mine = editor.toPlainText()
    agent = Wiki(root)  # another process's view of the wiki, as an agent's MCP server has
    assert append(agent, "refunds", "Chargebacks count as refunds", actor=Actor("agent", "dudu")).ok
    theirs = (root / REFUNDS).read_text("utf-8")
    # the station sees the change on disk: the buffer is kept and marked
    qtbot.waitUntil(lambda: editor.disk_changed, timeout=10_000)
    assert editor.toPlainText() == mine and editor.dirty
    assert "Changed on disk" in win.page_view.edit_label.text()
    n = commits(root)
    shown: list[ConflictDialog] = []

    def keep_both(dialog: QDialog) -> bool:
        assert isinstance(dialog, ConflictDialog)
        shown.append(dialog)
        assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == ["Your changes", "Changed on disk"]
        assert "45 for members" in dialog.tabs.widget(0).toPlainText()
        assert "Chargebacks" in dialog.tabs.widget(1).toPlainText()
        assert dialog.keep_button.isEnabled()
        dialog.show()
        qtbot.wait(100)
        save_shot(dialog, "edit-conflict.png")
        return True

    win.exec_dialog = keep_both
    win.menus.save.trigger()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    text = (root / REFUNDS).read_text("utf-8")
    assert "45 for members" in text and "- Chargebacks count as refunds" in text  # both kept
    assert shown and shown[0].theirs == theirs and shown[0].mine == mine
    assert git(root, "log", "-1", "--format=%s") == f"edit: {REFUNDS}"
    assert commits(root) == n + 1  # one commit
    qtbot.waitUntil(lambda: not editor.dirty and not editor.disk_changed, timeout=5000)


def test_a_conflict_declined_writes_nothing_and_keeps_the_buffer(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    editor = open_in_editor(qtbot, win, REFUNDS)
    cursor = editor.document().find("Refunds within 30 days.")
    cursor.insertText("Refunds within 14 days.")
    mine = editor.toPlainText()
    (root / REFUNDS).write_text((root / REFUNDS).read_text("utf-8").replace("30 days", "60 days"), "utf-8")
    disk = (root / REFUNDS).read_bytes()
    qtbot.waitUntil(lambda: editor.disk_changed, timeout=10_000)
    n = commits(root)
    seen: list[ConflictDialog] = []

    def decline(dialog: QDialog) -> bool:
        assert isinstance(dialog, ConflictDialog)
        seen.append(dialog)
        assert "<<<<<<< ours" in dialog.merged_text() and not dialog.keep_button.isEnabled()
        return False

    win.exec_dialog = decline
    win.menus.save.trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    qtbot.wait(200)
    assert commits(root) == n and (root / REFUNDS).read_bytes() == disk
    assert editor.toPlainText() == mine and editor.dirty


def test_unsaved_edits_are_asked_about_on_close_and_navigation(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    editor = open_in_editor(qtbot, win, REFUNDS)
    type_at_end(qtbot, editor, "A line typed and not saved.")
    before, n = (root / REFUNDS).read_bytes(), commits(root)
    asked: list[str] = []

    def answer(button: QMessageBox.StandardButton):  # type: ignore[no-untyped-def]
        def ask(box: QMessageBox) -> int:
            asked.append(box.text())
            return int(button.value)  # what QMessageBox.exec() returns
        return ask

    # close, Cancel: the window stays, nothing written, the buffer kept
    win.editing.ask_unsaved = answer(QMessageBox.StandardButton.Cancel)
    assert win.close() is False
    assert win.isVisible() and editor.dirty and asked == [f"{REFUNDS} has changes that are not saved."]
    # another page, Cancel: still here
    win.open_page((0, "wiki/home.md"))
    assert win.current == (0, REFUNDS) and editor.toPlainText().endswith("not saved.")
    assert (root / REFUNDS).read_bytes() == before and commits(root) == n
    # close, Save: saved as one commit, then closed
    win.editing.ask_unsaved = answer(QMessageBox.StandardButton.Save)
    win.close()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=10_000)
    assert (root / REFUNDS).read_text("utf-8").endswith("A line typed and not saved.")
    assert git(root, "log", "-1", "--format=%s") == f"edit: {REFUNDS}"


def test_navigation_discard_drops_the_edit_and_a_clean_buffer_follows_the_disk(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    editor = open_in_editor(qtbot, win, REFUNDS)
    # a clean buffer follows a change on disk
    (root / REFUNDS).write_text((root / REFUNDS).read_text("utf-8") + "\nAdded on disk.\n", "utf-8")
    qtbot.waitUntil(lambda: editor.toPlainText().endswith("Added on disk.\n"), timeout=10_000)
    assert not editor.dirty and not editor.disk_changed
    type_at_end(qtbot, editor, "Scrap this.")
    n = commits(root)
    win.editing.ask_unsaved = lambda box: QMessageBox.StandardButton.Discard
    with qtbot.waitSignal(win.ready, timeout=10_000):
        win.open_page((0, "wiki/home.md"))
    assert win.current == (0, "wiki/home.md") and "Scrap this." not in editor.toPlainText()
    assert commits(root) == n and "Scrap this." not in (root / REFUNDS).read_text("utf-8")


def test_a_red_link_creates_its_page_and_opens_it_in_the_editor(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    with qtbot.waitSignal(win.ready, timeout=10_000):
        win.open_page((0, "wiki/home.md"))
    html = win.page_view.browser.toHtml()
    assert "curator-missing:Nowhere%20Yet" in html  # the link is red, not yet written
    n = commits(root)
    asked: list[CreatePageDialog] = []

    def create(dialog: QDialog) -> bool:
        assert isinstance(dialog, CreatePageDialog)
        asked.append(dialog)
        assert dialog.page_name() == "Nowhere Yet" and dialog.folder_path() == "wiki"
        return True

    win.exec_dialog = create
    win.page_view.browser.anchorClicked.emit(QUrl("curator-missing:Nowhere%20Yet"))
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert asked
    assert git(root, "log", "-1", "--format=%s|%an") == "create: wiki/nowhere-yet.md|operator"
    text = (root / "wiki/nowhere-yet.md").read_text("utf-8")
    assert "title: Nowhere Yet" in text and "# Nowhere Yet\n\n## Updates\n" in text
    qtbot.waitUntil(lambda: win.current == (0, "wiki/nowhere-yet.md"), timeout=10_000)
    qtbot.waitUntil(lambda: win.page_view.tabs.currentIndex() == 1 and win.page_view.source.toPlainText() == text,
                    timeout=10_000)
    assert not win.page_view.source.isReadOnly()
    # File ▸ New page (Ctrl+N) into a chosen folder
    win.exec_dialog = lambda d: (d.name.setText("Meeting Notes"), d.folder.setEditText("notes"), True)[2]  # type: ignore[attr-defined]
    new = next(a for a in win.findChildren(type(win.menus.save)) if a.text() == "&New page…")
    assert new.shortcut().toString() == "Ctrl+N"
    new.trigger()
    qtbot.waitUntil(lambda: (root / "notes/meeting-notes.md").exists() and commits(root) == n + 2, timeout=10_000)
    # the home page's link is no longer red
    with qtbot.waitSignal(win.ready, timeout=10_000):
        win.open_page((0, "wiki/home.md"))
    assert "curator-missing:Nowhere%20Yet" not in win.page_view.browser.toHtml()


def test_move_from_the_browsers_context_menu(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    root, win = window
    n = commits(root)
    proxy = win.browser.proxy
    row = next(r for r in range(proxy.rowCount()) if proxy.record(proxy.index(r, 0)).key == (0, REFUNDS))
    win.browser._context_menu(win.browser.table.visualRect(proxy.index(row, 0)).center())
    menu = win.browser.context_menu
    assert menu is not None
    asked: list[MoveDialog] = []

    def move(dialog: QDialog) -> bool:
        assert isinstance(dialog, MoveDialog) and dialog.path == REFUNDS
        dialog.edit.setText("policies/refund-rules.md")
        asked.append(dialog)
        return True

    win.exec_dialog = move
    next(a for a in menu.actions() if a.text() == "Move or rename…").trigger()
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=10_000)
    assert asked and not (root / REFUNDS).exists() and (root / "policies/refund-rules.md").exists()
    assert "[[refund-rules#Rules|the rules]]" in (root / "wiki/payments.md").read_text("utf-8")
    assert git(root, "log", "-1", "--format=%s") == f"move: {REFUNDS} -> policies/refund-rules.md"
    qtbot.waitUntil(lambda: win.model.row_for((0, "policies/refund-rules.md")) is not None, timeout=10_000)
    assert win.model.row_for((0, REFUNDS)) is None
