"""pytest-qt tests of the graph view: global/local graph, depth, filters, click to open."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from curator.views.graph_view import GraphView
from curator.views.main_window import MainWindow
from curator.views.workspace import Workspace

from .gui_helpers import make_wiki, temp_settings

CHAIN = {
    f"wiki/p{i}.md": f"---\ntitle: P{i}\nlayer: {'core' if i % 2 else 'context'}\ntrust: 0.{i + 1}\n---\n"
                     f"# P{i}\n\nnext [[p{i + 1}]]" + (" and [[ghost page]]" if i == 0 else "") + "\n"
    for i in range(6)
} | {"wiki/lonely.md": "---\ntitle: Lonely\nlayer: deep\n---\nno links here\n"}


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", CHAIN)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    graph = GraphView(win)
    win.add_view("graph", graph, "Graph")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    with qtbot.waitSignal(graph.content_ready, timeout=15_000):
        win.show_view("graph")
    yield win
    win.close()


def graph_of(win: MainWindow) -> GraphView:
    view = win.view_index["graph"]
    assert isinstance(view, GraphView)
    return view


def shown_ids(view: GraphView) -> set[str]:
    assert view.data is not None
    return {view.data.ids[i] for i in view._shown_index}


def test_global_graph_has_pages_ghosts_and_orphans(window: MainWindow) -> None:
    view = graph_of(window)
    ids = shown_ids(view)
    assert {"wiki/p0.md", "wiki/p5.md", "wiki/lonely.md"} <= ids
    assert "unresolved:ghost-page" in ids and "unresolved:p6" in ids
    view.ghosts.setChecked(False)
    assert not any(i.startswith("unresolved:") for i in shown_ids(view))
    view.orphans.setChecked(False)
    assert "wiki/lonely.md" not in shown_ids(view)
    view.layer_buttons["context"].setChecked(False)
    assert "wiki/p0.md" not in shown_ids(view) and "wiki/p1.md" in shown_ids(view)
    view.min_trust.setValue(0.5)
    assert shown_ids(view) == {"wiki/p5.md"}
    view.min_trust.setValue(0.0)
    view.find.setText("p3")
    assert shown_ids(view) == {"wiki/p3.md"}


def test_local_graph_depth_changes_the_neighbourhood(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = graph_of(window)
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.open_page((0, "wiki/p2.md"))
    with qtbot.waitSignal(view.content_ready, timeout=10_000):
        view.mode.setCurrentIndex(1)
    view.depth.setValue(1)
    qtbot.waitUntil(lambda: view.data is not None and shown_ids(view) == {"wiki/p1.md", "wiki/p2.md", "wiki/p3.md"},
                    timeout=10_000)
    assert view.data is not None and view.data.center == "wiki/p2.md"
    view.depth.setValue(2)
    qtbot.waitUntil(lambda: shown_ids(view) == {f"wiki/p{i}.md" for i in range(0, 5)}, timeout=10_000)
    view.depth.setValue(4)
    qtbot.waitUntil(lambda: "unresolved:ghost-page" in shown_ids(view), timeout=10_000)


def test_click_opens_the_page_and_double_click_recentres(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = graph_of(window)
    view.plot.autoRange()
    qtbot.wait(100)
    point = view.node_screen_pos("wiki/p4.md")
    with qtbot.waitSignal(window.ready, timeout=5000):
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.current == (0, "wiki/p4.md")
    view.center_on("wiki/p4.md")
    qtbot.waitUntil(lambda: view.data is not None and view.data.center == "wiki/p4.md", timeout=10_000)
    assert view.local


def test_graph_follows_changes_in_the_wiki(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = graph_of(window)
    root = window.workspace.handles[0].root
    (root / "wiki" / "new.md").write_text("---\ntitle: New\n---\nsee [[lonely]]\n", encoding="utf-8")
    window.workspace.refresh_now()
    qtbot.waitUntil(lambda: view.data is not None and "wiki/new.md" in view.data.ids, timeout=10_000)
