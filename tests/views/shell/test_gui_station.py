"""pytest-qt tests of the station's main flows (offscreen; one shared QApplication)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from curator.models.pages import COL_TITLE, PageFilterProxy, PageRow, PageTableModel, RecordRole
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import loaded_window, make_wiki, temp_settings


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path)
    yield win
    win.close()


def titles(win: MainWindow) -> list[str]:
    proxy = win.browser.proxy
    return [proxy.index(r, COL_TITLE).data() for r in range(proxy.rowCount())]


def test_loads_and_opens_the_identity_page_first(window: MainWindow) -> None:
    assert sorted(titles(window)) == ["Home", "Payments", "Refunds", "Scratch"]
    assert window.current == (0, "wiki/home.md")
    assert "Welcome" in window.page_view.browser.toPlainText()
    assert window.side.properties.layer.currentText() == "identity"


def test_filter_by_layer_and_trust(window: MainWindow) -> None:
    window.browser.layer_buttons["deep"].setChecked(False)
    assert "Scratch" not in titles(window)
    window.browser.min_trust.setValue(0.5)
    assert sorted(titles(window)) == ["Home", "Payments"]
    window.browser.layer_buttons["core"].setChecked(False)
    assert titles(window) == ["Home"]
    assert window.browser.count.text() == "1 of 4 pages"


def test_namespace_and_tag_filters(window: MainWindow) -> None:
    window.browser.namespace.setCurrentText("notes")
    assert titles(window) == ["Scratch"]
    window.browser.namespace.setCurrentText("All")
    window.browser.tag.setCurrentText("policy")
    assert titles(window) == ["Refunds"]


def test_follow_a_wikilink_and_go_back(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.page_view.page_link_activated.emit("wiki/payments.md", "")
    assert window.current == (0, "wiki/payments.md")
    assert "How payments flow" in window.page_view.browser.toPlainText()
    html = window.page_view.browser.toHtml()
    assert "Nowhere" not in html  # that link lives on the home page
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.go_back()
    assert window.current == (0, "wiki/home.md")
    assert window.forward_stack == [(0, "wiki/payments.md")]
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.go_forward()
    assert window.current == (0, "wiki/payments.md")


def test_unresolved_links_look_different_and_links_panel(window: MainWindow) -> None:
    html = window.page_view.browser.toHtml()
    assert "curator-missing:Nowhere%20Yet" in html
    tree = window.side.links.tree
    tops = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert tops[0] == "Backlinks (1)"  # Payments links back to Home
    assert tops[1] == "Outgoing links (2)"
    outgoing = tree.topLevelItem(1)
    assert any("not yet written" in outgoing.child(i).text(0) for i in range(outgoing.childCount()))


def test_external_change_is_picked_up(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    root = window.workspace.handles[0].root
    (root / "wiki" / "new-page.md").write_text("---\ntitle: Brand New\nlayer: core\n---\nhello\n",
                                               encoding="utf-8")
    qtbot.waitUntil(lambda: "Brand New" in titles(window), timeout=5000)
    start = time.monotonic()
    text = (root / "wiki" / "home.md").read_text(encoding="utf-8")
    (root / "wiki" / "home.md").write_text(text.replace("Welcome.", "Welcome back."), encoding="utf-8")
    qtbot.waitUntil(lambda: "Welcome back." in window.page_view.browser.toPlainText(), timeout=5000)
    assert time.monotonic() - start < 3.0


def test_page_models_pass_qtmodeltester(qtmodeltester, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    qtmodeltester.check(window.model)
    qtmodeltester.check(window.browser.proxy)


def test_model_sorts_and_returns_records(qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    from curator.engine.corpus.page import Page

    model = PageTableModel()
    rows = [PageRow(0, "w", Page(path=f"p{i}.md", size=1, mtime_ns=0, title=t, trust=tr))
            for i, (t, tr) in enumerate([("b", 0.2), ("a", 0.9), ("c", 0.5)])]
    model.set_rows(rows)
    qtmodeltester.check(model)
    assert [model.index(r, COL_TITLE).data() for r in range(3)] == ["a", "b", "c"]
    from curator.models.pages import COL_TRUST

    model.sort(COL_TRUST, Qt.SortOrder.DescendingOrder)
    assert [model.index(r, COL_TITLE).data() for r in range(3)] == ["a", "c", "b"]
    record = model.index(0, 0).data(RecordRole)
    assert isinstance(record, PageRow) and record.page.path == "p1.md"
    proxy = PageFilterProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy)


def test_inbound_counts_show_sort_and_follow_changes() -> None:
    """The inbound counts the link task delivers show in the Inbound column, sort it, give way
    to a changed row's own count, and are dropped with the rows they counted."""
    from curator.engine.corpus.page import Page
    from curator.models.pages import COL_INBOUND

    def row(name: str, inbound: int = 0) -> PageRow:
        return PageRow(0, "w", Page(path=f"{name}.md", size=1, mtime_ns=0, title=name), inbound)

    model = PageTableModel()
    model.set_rows([row("a", 5), row("b"), row("c")])
    column = [model.index(r, COL_INBOUND).data() for r in range(3)]
    assert column == [5, 0, 0]  # the load's own counts, until the links are resolved
    model.set_inbound({(0, "b.md"): 7, (0, "c.md"): 2})
    assert [model.index(r, COL_INBOUND).data() for r in range(3)] == [0, 7, 2]  # (a has none now)
    model.sort(COL_INBOUND, Qt.SortOrder.DescendingOrder)
    assert [model.index(r, COL_TITLE).data() for r in range(3)] == ["b", "c", "a"]
    model.update_rows([row("c", 9)], [])
    assert model.index(model.row_for((0, "c.md")) or 0, COL_INBOUND).data() == 9
    model.clear()
    model.append_sorted([row("b", 1)])
    assert model.index(0, COL_INBOUND).data() == 1  # not the old count of 7


def test_changed_inbound_counts_replace_only_theirs() -> None:
    """After a change only the counts that changed arrive: they replace those pages' counts (in
    the rows' own counts too, before the link task delivered any), the rest stay, and a table
    sorted by Inbound is sorted again."""
    from curator.engine.corpus.page import Page
    from curator.models.pages import COL_INBOUND

    def row(name: str, inbound: int = 0) -> PageRow:
        return PageRow(0, "w", Page(path=f"{name}.md", size=1, mtime_ns=0, title=name), inbound)

    model = PageTableModel()
    model.set_rows([row("a", 5), row("b", 1), row("c")])
    model.update_inbound({(0, "b.md"): 4})
    assert [model.index(r, COL_INBOUND).data() for r in range(3)] == [5, 4, 0]
    model.set_inbound({(0, "a.md"): 5, (0, "b.md"): 4})
    model.sort(COL_INBOUND, Qt.SortOrder.DescendingOrder)
    model.update_inbound({(0, "c.md"): 9, (0, "a.md"): 0})
    assert [model.index(r, COL_TITLE).data() for r in range(3)] == ["c", "b", "a"]
    assert [model.index(r, COL_INBOUND).data() for r in range(3)] == [9, 4, 0]


def test_inbound_counts_after_a_change_are_counted_from_the_updated_link_index(tmp_path: Path) -> None:
    """A change's inbound counts: only those that differ, equal to counting every page again,
    for an edit that moves links, a page added that links and resolves an unresolved link, and a
    page removed."""
    from curator.engine.wiki import Wiki
    from curator.views.workspace import WikiHandle

    root = make_wiki(tmp_path / "w", {
        "a.md": "# A\n\n[[b]] [[c]]\n", "b.md": "# B\n\n[[c]] [[d]]\n", "c.md": "# C\n\n[[a]]\n",
        **{f"n{i}.md": f"# N{i}\n\n[[a]]\n" for i in range(6)}})
    wiki = Wiki(root)
    handle = WikiHandle(0, "w", root, wiki)

    def recount() -> dict[str, int]:
        return {p: len({e.source for e in edges}) for p, edges in Wiki(root).links.incoming.items() if edges}

    full = Workspace._inbound(handle)
    assert full[(0, "a.md")] == 7 and full[(0, "c.md")] == 2
    edits = [
        (lambda: (root / "a.md").write_text("# A\n\n[[b]]\n"), {"c.md": 1}),
        (lambda: (root / "d.md").write_text("# D\n\n[[a]] [[b]]\n"), {"d.md": 1, "a.md": 8, "b.md": 2}),
        (lambda: (root / "n0.md").unlink(), {"a.md": 7}),
        (lambda: (root / "b.md").unlink(), {"b.md": 0, "c.md": 0, "d.md": 0}),
    ]
    for edit, expected in edits:
        edit()
        time.sleep(0.01)
        wiki.refresh()
        changed, counts = Workspace._inbound_changes(handle)
        assert changed == {(0, p): n for p, n in expected.items()}
        assert counts == recount()
    assert Workspace._inbound_changes(handle)[0] == {}  # nothing changed since


def test_a_filter_over_every_row_answers_as_each_row_is_asked() -> None:
    """``PageFilter.accepted`` (one pass per criterion, what the proxy answers from) equals
    ``accepts`` row by row for random filters over random rows: layers, trust bounds, namespaces
    (the root's too, and one with a slash), tags in any case, search matches, and their mixes."""
    import random

    from curator.engine.corpus.page import LAYERS, Page
    from curator.models.pages import PageFilter

    rng = random.Random(17)
    folders = ["", "wiki/", "wiki/sub/", "notes/", "wikis/", "departments/hr/"]
    tags = ["Finance", "finance", "HR", "ops", "Ωmega"]
    rows = [PageRow(rng.randrange(2), "w", Page(path=f"{rng.choice(folders)}p{i}.md", size=1, mtime_ns=0,
                                                title=f"p{i}", layer=rng.choice(LAYERS),
                                                trust=rng.choice([0.0, 0.2, 0.5, 0.8, 1.0]),
                                                tags=rng.sample(tags, rng.randrange(3))))
            for i in range(400)]
    for _ in range(300):
        lo, hi = sorted(rng.choice([0.0, 0.2, 0.5, 1.0]) for _ in range(2))
        f = PageFilter(layers=frozenset(rng.sample(LAYERS, rng.randrange(1, 5))) if rng.random() < 0.4
                       else frozenset(LAYERS),
                       min_trust=lo if rng.random() < 0.3 else 0.0, max_trust=hi if rng.random() < 0.3 else 1.0,
                       namespace=rng.choice([None, None, "", "wiki", "notes", "wik", "departments/hr"]),
                       tag=rng.choice([None, None, "finance", "hr", "ωmega", "none"]),
                       matches=None if rng.random() < 0.5 else
                       frozenset(r.key for r in rng.sample(rows, 50)) | {(0, "gone.md")})
        assert f.accepted(rows) == [f.accepts(r) for r in rows], f
    assert PageFilter().accepted(rows) == [True] * len(rows)


def test_rows_sorted_in_runs_come_in_the_order_of_one_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    """``presort`` sorts runs of rows and merges them: the order of one ``sorted`` by the column's
    key then (wiki, path), for every column, both ways, with equal titles, trusts and counts."""
    import random

    from curator.engine.corpus.page import LAYERS, Page
    from curator.models import pages
    from curator.models.pages import HEADERS, _sort_key

    monkeypatch.setattr(pages, "SORT_RUN", 7)
    rng = random.Random(3)
    rows = [PageRow(rng.randrange(2), f"w{rng.randrange(2)}",
                    Page(path=f"{rng.choice(['', 'a/', 'b/'])}p{i}.md", size=1, mtime_ns=0,
                         title=rng.choice(["Alpha", "alpha", "Beta", "ß", "SS", f"t{i}"]), layer=rng.choice(LAYERS),
                         trust=rng.choice([0.1, 0.5]), tags=rng.sample(["x", "Y"], rng.randrange(3)),
                         updated=rng.choice([None, "2024-01-02", "2023-05-06"])), rng.randrange(4))
            for i in range(101)]
    model = PageTableModel()
    assert model.presort([]) == []
    for column in range(len(HEADERS)):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            model._sort = (column, order)
            def key(r: PageRow, column: int = column) -> object:
                return (r.inbound if column == pages.COL_INBOUND else _sort_key(column, r), r.key)
            expected = sorted(rows, key=key, reverse=order == Qt.SortOrder.DescendingOrder)
            assert model.presort(rows) == expected, (column, order)


def test_appended_rows_pass_the_filter_in_force() -> None:
    """Rows a load appends in batches show under the filter that lets everything through, and
    only the matching ones under a narrower filter (also set back to the default after)."""
    from curator.engine.corpus.page import Page
    from curator.models.pages import PageFilter

    def row(name: str, layer: str, trust: float) -> PageRow:
        return PageRow(0, "w", Page(path=f"{name}.md", size=1, mtime_ns=0, title=name, layer=layer, trust=trust))

    model = PageTableModel()
    proxy = PageFilterProxy()
    proxy.setSourceModel(model)
    model.append_sorted([row("a", "core", 0.9), row("b", "deep", 0.1)])
    assert proxy.rowCount() == 2
    proxy.set_filter(PageFilter(layers=frozenset({"core"})))
    model.append_sorted([row("c", "core", 0.5), row("d", "deep", 0.5)])
    assert sorted(proxy.index(r, 0).data() for r in range(proxy.rowCount())) == ["a", "c"]
    proxy.set_filter(PageFilter(min_trust=0.4))
    model.append_sorted([row("e", "identity", 0.2), row("f", "context", 0.8)])
    assert sorted(proxy.index(r, 0).data() for r in range(proxy.rowCount())) == ["a", "c", "d", "f"]
    proxy.set_filter(PageFilter())
    model.append_sorted([row("g", "deep", 0.0)])
    assert proxy.rowCount() == 7


def _commits(root: Path) -> list[str]:
    import subprocess

    out = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_edit_trust_is_one_commit_in_history_and_undo_restores(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    root = window.workspace.handles[0].root
    before = _commits(root)
    history = window.view_index.get("history")
    if history is None:  # the window under test was built without install_views
        from curator.views.history.history_view import HistoryView

        history = HistoryView(window)
        window.add_view("history", history, "History")
        history.reload()
    form = window.side.properties
    form.trust.setValue(0.55)
    with qtbot.waitSignal(window.workspace.pages_changed, timeout=10_000):
        form.trust.editingFinished.emit()
    qtbot.waitUntil(lambda: len(_commits(root)) == len(before) + 1, timeout=5000)
    assert _commits(root)[0] == "set_trust: wiki/home.md"
    assert "trust: 0.55" in (root / "wiki/home.md").read_text(encoding="utf-8")
    qtbot.waitUntil(lambda: history.model.rowCount() > 0
                    and history.model.entries[0].action == "set_trust", timeout=5000)
    # the view keeps the operator's selection across reloads; pick the new action to see its diff
    history.table.selectRow(0)
    qtbot.waitUntil(lambda: "+trust: 0.55" in history.diff.toPlainText(), timeout=5000)
    assert "-trust: 0.9" in history.diff.toPlainText()
    row = window.model.row_for((0, "wiki/home.md"))
    assert row is not None and window.model.rows[row].page.trust == 0.55
    with qtbot.waitSignal(window.workspace.pages_changed, timeout=10_000):
        window.undo_last()
    assert _commits(root)[0].startswith("revert: set_trust")
    assert "trust: 0.9" in (root / "wiki/home.md").read_text(encoding="utf-8")
    qtbot.waitUntil(lambda: window.side.properties.trust.value() == 0.9, timeout=5000)


def test_invalid_tag_is_refused_without_a_commit(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    root = window.workspace.handles[0].root
    before = _commits(root)
    form = window.side.properties
    form.tags.setText("ok, not valid!")
    form.tags.editingFinished.emit()
    assert "not a valid tag" in form.error.text()
    qtbot.wait(300)
    assert _commits(root) == before


def shown_titles(win: MainWindow) -> list[str]:
    """The titles the browser shows: the ranked results while a search shows them, else the table's."""
    if win.browser.ranked:
        pages = win.workspace.wiki(0).pages
        return [pages[path].title for _wiki, path in win.browser.results.result_keys()]
    return titles(win)


def test_search_box_filters_to_fts_matches(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    browser = window.browser
    browser.search.setText("refunds")
    qtbot.waitUntil(lambda: browser.search_status.text().endswith("matching pages"), timeout=5000)
    assert sorted(shown_titles(window)) == ["Payments", "Refunds"]
    # The table, hidden behind the ranked results, is filtered when it is shown (refiltering
    # 32,000 rows after every search held the GUI thread 30-50 ms).
    assert browser.proxy.stale
    browser.table_toggle.setChecked(True)
    assert not browser.proxy.stale and sorted(titles(window)) == ["Payments", "Refunds"]
    assert browser.count.text() == "2 of 4 pages"
    browser.table_toggle.setChecked(False)
    browser.search.setText('"30 days" layer:context')
    qtbot.waitUntil(lambda: shown_titles(window) == ["Refunds"], timeout=5000)
    # a filter changed while the results are shown narrows them, and the table once it is shown
    browser.layer_buttons["context"].setChecked(False)
    assert shown_titles(window) == []
    browser.table_toggle.setChecked(True)
    assert titles(window) == []
    browser.layer_buttons["context"].setChecked(True)
    assert titles(window) == ["Refunds"]
    browser.table_toggle.setChecked(False)
    window.browser.search.setText('AND( "unbalanced')
    qtbot.waitUntil(lambda: "matching" in window.browser.search_status.text()
                    or "failed" in window.browser.search_status.text(), timeout=5000)
    assert "failed" not in window.browser.search_status.text()
    window.browser.search.clear()
    qtbot.waitUntil(lambda: len(titles(window)) == 4, timeout=5000)


def test_quick_switcher_finds_by_alias_and_opens(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from curator.views.browser.quick_switcher import QuickSwitcher

    dialog = QuickSwitcher(window.model.rows, window)
    dialog.edit.setText("refnds")
    assert dialog.list.count() > 0 and "Refunds" in dialog.list.item(0).text()
    with qtbot.waitSignal(dialog.chosen, timeout=2000) as blocker:
        dialog._accept_current()
    assert blocker.args[0].page.path == "wiki/refunds.md"


def test_a_home_opens_every_wiki_with_a_wiki_column(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    make_wiki(home / "shared" / "wiki", {"sources/a.md": "---\ntitle: Shared A\n---\nshared\n"})
    make_wiki(home / "agents" / "dudu" / "wiki", {"wiki/b.md": "---\ntitle: Dudu B\nlayer: core\n---\nb\n"})
    win = MainWindow(Workspace(home, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    assert win.workspace.is_home
    assert [h.label for h in win.workspace.handles] == ["shared", "agent:dudu"]
    assert win.model.columnCount() == 8
    rows = {(r.wiki_label, r.page.title) for r in win.model.rows}
    assert rows == {("shared", "Shared A"), ("agent:dudu", "Dudu B")}
    win.close()


def test_recent_wikis_and_window_state_are_remembered(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    settings = temp_settings(tmp_path)
    win = MainWindow(Workspace(root, watch=False), settings)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    win.splitter.setSizes([300, 700, 400])
    sizes = win.splitter.sizes()
    win.close()
    assert settings.recent_wikis[0] == str(root.resolve())
    again = MainWindow(Workspace(root, watch=False), settings)
    qtbot.addWidget(again)
    assert again.splitter.sizes() == sizes
    again.close()


def test_opening_another_wiki_closes_this_window_and_opens_its_own(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """File ▸ Open: the window asks (open_requested) and the start-up code opens the next window."""
    from curator.views.shell import app

    first, second = make_wiki(tmp_path / "first"), make_wiki(tmp_path / "second")
    settings = temp_settings(tmp_path)
    win = app.open_workspace_window(first, settings, watch=False)
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: bool(win.model.rows), timeout=15_000)
    win.open_folder(second)
    assert not win.isVisible()
    opened = [w for w in app._windows if w is not win and w.isVisible()]
    assert len(opened) == 1 and opened[0].workspace.handles[0].root == second.resolve()
    qtbot.addWidget(opened[0])
    qtbot.waitUntil(lambda: bool(opened[0].model.rows), timeout=15_000)
    opened[0].close()


def test_page_view_never_loads_remote_resources(window: MainWindow) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QImage, QTextDocument

    from curator.views.page.page_view import PLACEHOLDER_KEY

    browser = window.page_view.browser
    root = window.workspace.handles[0].root
    picture = QImage(2, 2, QImage.Format.Format_RGB32)
    picture.fill(0)
    assert picture.save(str(root / "wiki" / "pic.png"))
    browser.base_dir = root / "wiki"
    image = int(QTextDocument.ResourceType.ImageResource)
    assert "remote" in browser.loadResource(image, QUrl("https://example.com/tracker.png")).text(PLACEHOLDER_KEY)
    assert "outside" in browser.loadResource(image, QUrl("../../outside.png")).text(PLACEHOLDER_KEY)
    assert browser.loadResource(image, QUrl("pic.png")).text(PLACEHOLDER_KEY) == ""
    assert not browser.openExternalLinks() and not browser.openLinks()
