"""The page browser's folder tree (Obsidian's file explorer): folders with their pages, opened
with the mouse; a page selected there opens as it does from the flat list; fast at 32,000 pages."""

from __future__ import annotations

import time

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest

from curator.engine.corpus.page import parse_page
from curator.models.folders import FolderTreeModel
from curator.models.pages import PageRow, PageTableModel
from curator.views.browser.browser import PageBrowser


def row(path: str, text: str = "text\n", wiki: int = 0, label: str = "w") -> PageRow:
    page, _ = parse_page(path, text.encode())
    return PageRow(wiki, label, page)


ROWS = [row("wiki/notes/b.md", "# Bee\n"), row("wiki/notes/a.md"), row("wiki/mission.md", "---\nlayer: core\n---\n"),
        row("top.md"), row("wiki/notes/deep/x.md")]


def names(model: FolderTreeModel, parent: QModelIndex = QModelIndex()) -> list[str]:  # noqa: B008
    return [model.index(i, 0, parent).data() for i in range(model.rowCount(parent))]


def test_the_tree_holds_folders_first_then_pages_by_file_name(qtbot) -> None:  # type: ignore[no-untyped-def]
    model = FolderTreeModel()
    model.set_rows(ROWS)
    assert names(model) == ["wiki  (4)", "top"]
    wiki = model.folder_index("wiki")
    assert names(model, wiki) == ["notes  (3)", "mission"]
    notes = model.folder_index("wiki/notes")
    assert model.parent(notes) == wiki
    assert names(model, notes) == ["deep  (1)", "a", "b"]  # (b's title is "Bee"; the tree shows files)
    leaf = model.index_of((0, "wiki/notes/b.md"))
    assert model.parent(leaf) == notes and leaf.data(Qt.ItemDataRole.ToolTipRole) == "Bee\nwiki/notes/b.md"
    several = [*ROWS[:2], row("wiki/notes/a.md", wiki=1, label="shared")]
    model.set_rows(several)
    assert names(model) == ["shared  (1)", "w  (2)"]


def test_32000_pages_build_in_one_quick_pass(qtbot) -> None:  # type: ignore[no-untyped-def]
    page, _ = parse_page("x.md", b"text\n")
    rows = [PageRow(0, "w", page.__class__(**{**{f: getattr(page, f) for f in page.__slots__},
                                              "path": f"d{i % 40}/e{i % 7}/p{i}.md"}))
            for i in range(32_000)]
    model = FolderTreeModel()
    start = time.perf_counter()
    model.set_rows(rows)
    took = time.perf_counter() - start
    assert model.root.count == 32_000 and model.rowCount() == 40
    assert took < 1.0, f"{took:.2f} s"


def test_choosing_a_page_in_the_tree_opens_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    pages = PageTableModel()
    pages.set_rows(ROWS)
    browser = PageBrowser(pages)
    qtbot.addWidget(browser)
    browser.resize(500, 500)
    browser.show()
    qtbot.waitExposed(browser)
    toggle = browser.folders_toggle
    centre = toggle.rect().center()
    QTest.mouseMove(toggle, centre)
    QTest.mousePress(toggle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseRelease(toggle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    assert browser.in_tree and browser.count.text() == "5 pages"
    tree, folders = browser.tree, browser.folders
    viewport = tree.viewport()
    opened: list[PageRow] = []
    browser.open_requested.connect(opened.append)

    def double_click(index: QModelIndex) -> None:
        at = tree.visualRect(index).center()
        QTest.mouseMove(viewport, at)
        QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        QTest.mouseDClick(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)

    double_click(folders.folder_index("wiki"))
    assert tree.isExpanded(folders.folder_index("wiki"))
    double_click(folders.folder_index("wiki/notes"))
    leaf = folders.index_of((0, "wiki/notes/b.md"))
    at = tree.visualRect(leaf).center()
    assert tree.visualRect(leaf).isValid()
    QTest.mouseMove(viewport, at)
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert opened and opened[-1].key == (0, "wiki/notes/b.md")
    # a filter narrows the tree as it narrows the list; the open folders stay open
    browser.layer_buttons["deep"].setChecked(False)
    qtbot.waitUntil(lambda: browser.count.text() == "1 of 5 pages")
    assert names(folders) == ["wiki  (1)"] and tree.isExpanded(folders.folder_index("wiki"))
    # a page added while the tree is shown appears in it
    browser.layer_buttons["deep"].setChecked(True)
    pages.update_rows([row("wiki/notes/c.md")], [])
    qtbot.waitUntil(lambda: folders.index_of((0, "wiki/notes/c.md")).isValid())
    # off again: the flat list
    QTest.mouseMove(toggle, centre)
    QTest.mousePress(toggle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseRelease(toggle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    assert browser.stack.currentWidget() is browser.table and browser.proxy.rowCount() == 6
