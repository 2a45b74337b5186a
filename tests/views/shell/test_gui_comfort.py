"""The station as a place to live in (issue 22, second half): find in page, outline, tag pane,
redo, zoom and theme remembered, Help, the first-run hint, a folder that is not a wiki, and the
rough edges a new user saw."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QFontMetrics, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

from curator.views.settings import Settings
from curator.views.shell import appearance
from curator.views.shell.main_window import MIN_PAGE_PANE, NOT_A_REPO, MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import GIT_ID, PAGES, loaded_window, make_wiki, temp_settings

LONG = {
    **PAGES,
    "wiki/guide.md": "---\ntitle: Guide\ntags: [finance, howto]\nrelated: [home]\n---\n# Guide\n\n"
                     "Intro about refunds.\n\n## Refunds\n\nRefund text. Back [[Home]].\n\n### Refund limits\n\n"
                     "More refunds here.\n\n## Payments\n\n" + "Filler line.\n\n" * 80 + "The last refund.\n",
}


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", LONG)
    win = loaded_window(qtbot, root, tmp_path)
    yield win
    win.close()


def window_with(qtbot, tmp_path: Path, name: str, make_view, title: str, start: bool = False):  # type: ignore[no-untyped-def]
    """A window on the small wiki with one view ``make_view(window)`` registered as ``name``."""
    win = MainWindow(Workspace(make_wiki(tmp_path / "wiki"), watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    view = make_view(win)
    win.add_view(name, view, title)
    if start:
        with qtbot.waitSignal(win.ready, timeout=15_000):
            win.start()
    return win, view


def open_page(qtbot, win: MainWindow, path: str) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(win.ready, timeout=10_000):
        win.open_page((0, path))


def shortcut_of(win: MainWindow, text: str) -> list[str]:
    for action in win.actions():
        if action.text().replace("&", "").startswith(text):
            return [k.toString() for k in action.shortcuts()]
    raise AssertionError(f"no action {text!r}")


# --- reading ---------------------------------------------------------------------------------------

def test_find_in_page_counts_steps_wraps_and_escape_closes(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    open_page(qtbot, window, "wiki/guide.md")
    assert shortcut_of(window, "Find in page") == ["Ctrl+F"]
    assert shortcut_of(window, "Search the wiki") == ["Ctrl+K"]  # the wiki search keeps Ctrl+K
    window.show()
    bar = window.page_view.find_bar
    assert not bar.isVisible()
    window.menus.find.trigger()
    assert bar.isVisible() and window.focusWidget() is bar.field  # typing goes to the find field
    qtbot.keyClicks(bar.field, "refund")
    text = window.page_view.browser.toPlainText().lower()
    total = text.count("refund")
    assert total >= 5
    assert bar.count.text() == f"1 of {total}"
    browser = window.page_view.browser
    first = browser.textCursor().selectionStart()
    assert browser.textCursor().selectedText().lower() == "refund"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)  # Enter: next
    assert bar.count.text() == f"2 of {total}" and browser.textCursor().selectionStart() > first
    bar.find_previous()
    bar.find_previous()  # wraps to the last
    assert bar.count.text() == f"{total} of {total}"
    assert len(browser.extraSelections()) == total  # every match highlighted
    bar.case_button.setChecked(True)
    exact = browser.toPlainText().count("refund")
    assert exact < total and bar.count.text().endswith(f" of {exact}")
    bar.field.setText("no such words anywhere")
    assert bar.count.text() == "No matches"
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible() and browser.extraSelections() == []


def test_find_in_page_searches_the_source_when_it_is_in_front(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    open_page(qtbot, window, "wiki/guide.md")
    window.page_view.show_source()
    window.find_in_page()
    window.page_view.find_bar.field.setText("tags:")  # frontmatter: only in the source
    assert window.page_view.find_bar.count.text() == "1 of 1"
    assert window.page_view.source.textCursor().selectedText() == "tags:"


def test_outline_lists_the_headings_and_scrolls_to_one(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    open_page(qtbot, window, "wiki/guide.md")
    window.show()
    window.resize(1200, 500)
    outline = window.side.outline
    tree = outline.tree
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == ["Guide"]
    guide = tree.topLevelItem(0)
    assert [guide.child(i).text(0) for i in range(guide.childCount())] == ["Refunds", "Payments"]
    assert guide.child(0).child(0).text(0) == "Refund limits"
    bar = window.page_view.browser.verticalScrollBar()
    assert bar.value() == 0
    tree.itemClicked.emit(guide.child(1), 0)  # "Payments", far down the page
    assert bar.value() > 0
    assert window.page_view.browser.textCursor().block().text() == "Payments"
    open_page(qtbot, window, "notes/scratch.md")
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == ["Scratch"]


def test_tag_pane_counts_and_filters_the_browser(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tags = window.side.tags
    rows = {tags.tree.topLevelItem(i).text(0): tags.tree.topLevelItem(i).text(1)
            for i in range(tags.tree.topLevelItemCount())}
    assert rows == {"#finance": "3", "#howto": "1", "#policy": "1", "#start": "1"}
    assert tags.tree.topLevelItem(0).text(0) == "#finance"  # most used first
    tags.tree.itemClicked.emit(tags.tree.topLevelItem(0), 0)
    proxy = window.browser.proxy
    shown = sorted(proxy.index(r, 0).data() for r in range(proxy.rowCount()))
    assert shown == ["Guide", "Payments", "Refunds"]
    assert window.browser.count.text() == "3 of 5 pages"
    tags.filter.setText("pol")
    assert tags.tree.topLevelItemCount() == 1


def test_embeds_render_inline_in_the_page_view(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pages = {**PAGES, "wiki/home.md": PAGES["wiki/home.md"] + "\n![[refunds#Rules]]\n\n![[nowhere-page]]\n"}
    win = loaded_window(qtbot, make_wiki(tmp_path / "wiki", pages), tmp_path)
    text = win.page_view.browser.toPlainText()
    assert "Refunds within 30 days" in text  # transcluded, not a link
    html = win.page_view.browser.toHtml()
    assert "📎" not in html
    # every glyph the page shows for an embed is in the page's font (no missing-glyph box)
    from curator.views.page.render import EMBED_GLYPH

    assert EMBED_GLYPH in text or "▸" in text
    metrics = QFontMetrics(win.page_view.browser.font())
    for ch in (EMBED_GLYPH, "▸"):
        assert metrics.inFontUcs4(ord(ch)), ch
    win.close()


# --- comfort -----------------------------------------------------------------------------------------

def test_redo_from_the_station(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    assert shortcut_of(window, "Redo")[0] == "Ctrl+Shift+Z"
    root = window.workspace.root
    results: list[object] = []
    from curator.engine.policy.actor import OPERATOR
    from curator.engine.write.properties import set_property

    window.run_action(0, lambda wiki: set_property(wiki, OPERATOR, "wiki/home.md", "trust", 0.55),
                      "trust", results.append)
    qtbot.waitUntil(lambda: len(results) == 1, timeout=10_000)
    assert "trust: 0.55" in (root / "wiki/home.md").read_text()
    window.run_action(0, lambda wiki: __import__("curator.engine.write.actions", fromlist=["undo"]).undo(wiki, OPERATOR),
                      "undo", results.append)
    qtbot.waitUntil(lambda: len(results) == 2, timeout=10_000)
    assert "trust: 0.9" in (root / "wiki/home.md").read_text()
    window.menus.redo.trigger()
    qtbot.waitUntil(lambda: "trust: 0.55" in (root / "wiki/home.md").read_text(), timeout=10_000)
    # and from History: undo, then its Redo button
    from curator.views.history.history_view import HistoryView

    history = HistoryView(window)
    window.add_view("history", history, "History")
    qtbot.waitUntil(lambda: "redid" in window.status_label.text(), timeout=10_000)
    history.undo_button.click()
    qtbot.waitUntil(lambda: "trust: 0.9" in (root / "wiki/home.md").read_text(), timeout=10_000)
    history.redo_button.click()
    qtbot.waitUntil(lambda: "trust: 0.55" in (root / "wiki/home.md").read_text(), timeout=10_000)
    qtbot.waitUntil(lambda: "redid" in window.status_label.text(), timeout=10_000)
    log = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=root, capture_output=True, text=True).stdout
    assert log.startswith("redo: set_trust: wiki/home.md")  # (was "revert: revert: set_trust: ...")
    # History lists it as a redo of the action, not as a revert of a revert
    qtbot.waitUntil(lambda: history.model.index(0, 2).data() == "redo", timeout=10_000)
    row = [history.model.index(0, c).data() for c in (2, 3)]
    assert row[0] == "redo" and row[1].startswith("set_trust: wiki/home.md"), row


def test_zoom_is_remembered_across_a_restart(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path)
    assert shortcut_of(win, "Zoom in") == ["Ctrl+=", "Ctrl++"]
    assert shortcut_of(win, "Zoom out") == ["Ctrl+-"] and shortcut_of(win, "Actual size") == ["Ctrl+0"]
    style = win.page_view.browser.document().defaultStyleSheet()
    assert "font-size: 14px" in style
    with qtbot.waitSignal(win.ready, timeout=10_000):
        win.appearance.zoom_in()
    win.appearance.zoom_in()
    win.appearance.zoom_in()  # 130 %
    assert "font-size: 18px" in win.page_view.browser.document().defaultStyleSheet()
    win.close()
    # a new window with the same settings file (a restart) opens at 130 %
    again = MainWindow(Workspace(root, watch=False),
                       Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(again)
    assert again.settings.zoom == 130
    assert "font-size: 18px" in again.page_view.browser.document().defaultStyleSheet()
    again.appearance.zoom_reset()
    assert again.settings.zoom == 100
    again.close()


def test_theme_override_applies_and_is_remembered(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    try:
        assert win.menus.theme_actions["system"].isChecked()
        with qtbot.waitSignal(win.ready, timeout=10_000):
            win.menus.theme_actions["dark"].trigger()
        assert appearance.is_dark()
        assert app.palette().color(app.palette().ColorRole.Base).lightness() < 60
        style = win.page_view.browser.document().defaultStyleSheet()
        assert "#2b3036" in style  # the dark quote background of the rendered page
        assert win.settings.theme == "dark"
        win.close()
        again = loaded_window(qtbot, root, tmp_path)
        assert again.menus.theme_actions["dark"].isChecked() and appearance.is_dark()
        again.appearance.set_theme("light")
        assert not appearance.is_dark() and "#f4f6f8" in again.page_view.browser.document().defaultStyleSheet()
        again.close()
    finally:
        appearance.apply_theme("system")
    assert not appearance.is_dark()


def test_help_lists_the_shortcuts_and_about_names_the_versions(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    import PySide6
    from PySide6.QtCore import qVersion

    from curator import __version__
    from curator.views.shell.help import AboutDialog, ShortcutsDialog

    shown: list[QDialog] = []
    window.exec_dialog = lambda d: shown.append(d) or False  # type: ignore[assignment,func-returns-value]
    window.menus.show_shortcuts()
    table = shown[-1]
    assert isinstance(table, ShortcutsDialog)
    rows = {table.table.item(r, 1).text(): table.table.item(r, 0).text() for r in range(table.table.rowCount())}
    assert rows["Find in page"] == QKeySequence("Ctrl+F").toString(QKeySequence.SequenceFormat.NativeText)
    assert "Redo" in rows and "Zoom in" in rows and "Search the wiki" in rows and "Close the find bar" in rows
    window.menus.show_about()
    about = shown[-1]
    assert isinstance(about, AboutDialog)
    text = about.label.text()
    assert f"Curator {__version__}" in text and qVersion() in text and PySide6.__version__ in text
    assert "MIT" in text


def test_first_run_hint_points_at_a_registered_view_once(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.views.shell.registry import install_views

    root = make_wiki(tmp_path / "wiki")
    settings = temp_settings(tmp_path)
    win = MainWindow(Workspace(root, watch=False), settings)
    qtbot.addWidget(win)
    install_views(win)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    target = win.first_run_target()
    assert target in ("health", "dedup", "inbox") and target in win.view_index
    banner = win.hint_banner
    assert banner is not None and not banner.isHidden()
    title = win.views.tabText(win.views.indexOf(win.view_index[target]))
    button = banner.buttons[f"Open {title}"]
    button.click()
    assert win.views.currentWidget() is win.view_index[target] and banner.isHidden()
    win.close()
    again = loaded_window(qtbot, root, tmp_path)
    assert again.hint_banner is None  # once
    again.close()


# --- a folder that is not a wiki ------------------------------------------------------------------------

def plain_folder_window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A station window on a folder of pages that is not a git repository."""
    root = tmp_path / "plain"
    for rel, text in PAGES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    win = loaded_window(qtbot, root, tmp_path)
    win.show()
    return win, root


def test_a_folder_that_is_not_a_repository_opens_read_only_and_initialises(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win, root = plain_folder_window(qtbot, tmp_path)
    banner = win.repo_banner
    assert banner is not None and banner.isVisible()
    assert banner.label.text().startswith(NOT_A_REPO)
    assert "Welcome" in win.page_view.browser.toPlainText()  # it reads
    assert not win.side.properties.isEnabled() and not win.menus.undo.isEnabled()
    assert not (root / ".git").exists()
    ran: list[str] = []
    answers: list[object] = []
    win.run_action(0, lambda wiki: ran.append("ran"), "Merging", answers.append)  # any view's action
    assert ran == [] and getattr(answers[0], "status", None) == "invalid"
    banner.buttons["Initialise"].click()
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=15_000)
    assert (root / ".git").is_dir() and ".curator/" in (root / ".gitignore").read_text()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True).stdout
    assert log.split("\n")[0] == "curator init"
    qtbot.waitUntil(lambda: win.side.properties.isEnabled(), timeout=10_000)
    assert win.menus.undo.isEnabled() and win.not_repos == []
    win.close()


def test_a_rejected_edit_is_shown_as_plain_text_and_the_field_restored(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win, root = plain_folder_window(qtbot, tmp_path)
    form = win.side.properties
    # (the page is shown again once the search index is built: let that happen first)
    qtbot.waitUntil(lambda: win.workspace.wiki(0).search.active(), timeout=15_000)
    qtbot.wait(300)
    form.setEnabled(True)  # as if the read-only guard were not there: the engine refuses anyway
    form.trust.setValue(0.3)
    form._trust_edited()
    qtbot.waitUntil(lambda: bool(form.error.text()), timeout=10_000)
    assert form.trust.value() == pytest.approx(0.9)  # the rejected value is not left in the field
    assert "not a git repository yet, so it is read-only" in form.error.text()
    assert not (root / ".git").exists()
    box = win._error_box
    assert isinstance(box, QMessageBox)
    assert box.textFormat() == Qt.TextFormat.PlainText
    box.close()
    # an engine error with quotes (the engine's own refusal of a write in a folder that is not a
    # repository) is shown as it is written
    win.show_error(f"{root} is not a git repository; run 'curator init {root}' to make it a wiki")
    assert "'curator init" in box.text() and "&#x27;" not in box.text()
    box.close()
    win.close()


# --- rough edges ------------------------------------------------------------------------------------------

def test_page_count_follows_a_merge(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from curator.engine.policy.actor import OPERATOR
    from curator.engine.write.merge import merge_pages

    assert window.browser.count.text() == "5 pages"
    done: list[object] = []
    window.run_action(0, lambda w: merge_pages(w, "wiki/payments.md", "wiki/refunds.md", OPERATOR), "merge",
                      done.append)
    qtbot.waitUntil(lambda: window.model.rowCount() == 4, timeout=10_000)
    assert window.browser.count.text() == "4 pages"  # was "4 of 5 pages" with no filter


def test_one_page_says_page(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", {"wiki/home.md": PAGES["wiki/home.md"]})
    win = loaded_window(qtbot, root, tmp_path)
    assert win.browser.count.text() == "1 page"
    assert win.status_label.text().startswith("1 page loaded")
    win.close()


def test_backlinks_list_each_page_once_with_its_lines(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tree = window.side.links.tree
    back = tree.topLevelItem(0)
    assert back.text(0) == "Backlinks (2)"  # Payments and Guide (a body link and related:)
    rows = {back.child(i).text(0): back.child(i) for i in range(back.childCount())}
    guide = next(item for text, item in rows.items() if text.startswith("Guide"))
    assert sum(1 for text in rows if text.startswith("Guide")) == 1
    lines = [guide.child(i).text(0) for i in range(guide.childCount())]
    assert len(lines) == 2 and "Back [[Home]]" in lines[0] and lines[1].startswith("related:")


def test_filter_row_stays_put_when_the_search_is_cleared(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.show()
    browser = window.browser
    qtbot.waitExposed(window)
    y = browser.namespace.mapTo(browser, browser.namespace.rect().topLeft()).y()
    browser.search.setText("refunds")
    qtbot.waitUntil(lambda: browser.search_status.isVisible(), timeout=10_000)
    QApplication.processEvents()
    assert browser.namespace.mapTo(browser, browser.namespace.rect().topLeft()).y() == y
    browser.search.clear()
    qtbot.waitUntil(lambda: not browser.search_status.isVisible(), timeout=10_000)
    QApplication.processEvents()
    assert browser.namespace.mapTo(browser, browser.namespace.rect().topLeft()).y() == y


def test_the_page_pane_cannot_be_collapsed(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path)
    win.show()
    win.splitter.setSizes([1100, 0, 300])
    assert win.splitter.sizes()[1] >= MIN_PAGE_PANE
    win.splitter.moveSplitter(win.width(), 2)  # dragging the right handle over the page pane
    assert win.splitter.sizes()[1] >= MIN_PAGE_PANE
    # a state saved with the pane collapsed (by an older version) is restored with room for the page
    from curator.views.shell.main_window import MainWindow as Window

    win.settings.set_splitter_state("main", win.splitter.saveState())
    win.close()
    collapsed = Window(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(collapsed)
    collapsed.show()
    assert collapsed.splitter.sizes()[1] >= MIN_PAGE_PANE
    collapsed.close()


def test_history_selects_the_newest_entry(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.engine.policy.actor import OPERATOR
    from curator.engine.write.properties import set_property
    from curator.views.history.history_view import HistoryView

    win, history = window_with(qtbot, tmp_path, "history", HistoryView, "History", start=True)
    qtbot.waitUntil(lambda: len(history.all_entries) == 1, timeout=10_000)
    for n, trust in enumerate((0.5, 0.6), start=2):
        win.run_action(0, lambda wiki, t=trust: set_property(wiki, OPERATOR, "wiki/home.md", "trust", t), "trust")
        qtbot.waitUntil(lambda n=n: len(history.all_entries) == n, timeout=10_000)
    win.show_view("history")
    current = history.current_entry()
    assert current is not None and current.commit == history.all_entries[0].commit  # the newest
    assert history.table.selectionModel().isRowSelected(0)
    qtbot.waitUntil(lambda: "trust: 0.6" in history.diff.toPlainText(), timeout=10_000)
    # an older entry the operator picked stays picked across a reload
    history.table.selectRow(2)
    picked = history.current_entry()
    history.reload()
    qtbot.wait(300)
    assert history.current_entry() == picked
    win.close()


def test_auto_filed_titles_are_not_cut_short(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.views.review.auto_filed import COL_TITLE, TITLE_WIDTH, AutoView

    win, view = window_with(qtbot, tmp_path, "auto", AutoView, "Auto-filed")
    view.resize(520, 600)  # a narrow pane
    view.show()
    QApplication.processEvents()
    width = view.table.horizontalHeader().sectionSize(COL_TITLE)
    assert width >= TITLE_WIDTH - 1
    chars = width // max(1, QFontMetrics(view.table.font()).averageCharWidth())
    assert chars >= 25
    win.close()


def test_policy_context_text_is_wide_enough(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.views.policy.policy_view import MIN_CONTEXT_WIDTH, PolicyView

    win, view = window_with(qtbot, tmp_path, "policy", PolicyView, "Policy")
    win.show()
    win.show_view("policy")
    QApplication.processEvents()
    assert view.text.width() >= MIN_CONTEXT_WIDTH - 20
    assert view.text.width() >= view.pages.width()  # the context gets the larger share
    win.close()


def test_the_loading_bar_names_the_step_it_is_on(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    formats: list[str] = []
    win.workspace.progress.connect(lambda d, t, w: formats.append(win.progress.format()))
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    assert any("Opening" in f for f in formats) and any("Linking" in f for f in formats)
    win.close()


def test_demo_find_bar_and_outline(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Find in page and the outline on the demo wiki's Kestrel Payouts (the screenshot in the docs,
    written when CURATOR_SCREENSHOT_DIR is set)."""
    import os
    import shutil

    from curator.paths import resources_dir
    from curator.views.shell.registry import install_views

    root = tmp_path / "demo"
    shutil.copytree(resources_dir() / "demo-wiki", root)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], [*GIT_ID, "commit", "-qm", "demo"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    install_views(win)
    win.resize(1400, 900)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    open_page(qtbot, win, "wiki/kestrel-payouts.md")
    win.side.setCurrentWidget(win.side.outline)
    tree = win.side.outline.tree
    top = tree.topLevelItem(0)
    assert top.text(0) == "Kestrel Payouts"
    assert [top.child(i).text(0) for i in range(top.childCount())] == [
        "Schedule", "How a payout is built", "Cross-border", "Updates"]
    win.find_in_page()
    win.page_view.find_bar.field.setText("payout")
    count = win.page_view.find_bar.count.text()
    n = win.page_view.browser.toPlainText().lower().count("payout")
    assert count == f"1 of {n}" and n > 5
    out = os.environ.get("CURATOR_SCREENSHOT_DIR")
    if out:
        qtbot.wait(300)
        win.grab().save(str(Path(out) / "find-outline.png"))
    win.close()


def test_the_system_theme_follows_the_desktop_palette(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QPalette

    win = loaded_window(qtbot, make_wiki(tmp_path / "wiki"), tmp_path)
    app = QApplication.instance()
    assert isinstance(app, QApplication) and win.settings.theme == "system"
    before = QPalette(app.palette())
    style = win.page_view.browser.document().defaultStyleSheet
    assert "#f4f6f8" in style()
    try:
        app.setPalette(appearance._dark_palette())  # the desktop switched to dark
        qtbot.waitUntil(lambda: "#2b3036" in style(), timeout=5000)
    finally:
        app.setPalette(before)
    qtbot.waitUntil(lambda: "#f4f6f8" in style(), timeout=5000)
    win.close()


def test_a_hidden_history_colours_its_diff_only_once_shown(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The diff the History view reads as the window opens is set while the view is hidden, but
    coloured (a call into Python per line, on the GUI thread) only when the view is shown."""
    from curator.engine.policy.actor import OPERATOR
    from curator.engine.write.properties import set_property
    from curator.views.history.history_view import HistoryView

    win, history = window_with(qtbot, tmp_path, "history", HistoryView, "History")
    win.resize(900, 600)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    win.run_action(0, lambda wiki: set_property(wiki, OPERATOR, "wiki/home.md", "trust", 0.6), "trust")
    qtbot.waitUntil(lambda: "+trust: 0.6" in history.diff.toPlainText(), timeout=10_000)
    assert not history.isVisible()
    assert history._highlighter.document() is None  # the text is there, not yet coloured

    def added_colour() -> str:
        block = history.diff.document().begin()
        while block.isValid() and not block.text().startswith("+trust"):
            block = block.next()
        formats = block.layout().formats()
        return formats[0].format.foreground().color().name() if formats else ""

    assert added_colour() == ""
    win.show_view("history")
    assert history._highlighter.document() is history.diff.document()
    qtbot.waitUntil(lambda: added_colour() == "#1e8449", timeout=5_000)
    win.close()
