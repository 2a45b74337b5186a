"""pytest-qt tests of what keeps the graph view's GUI-thread steps short (issue 17): the scatter
items that find nodes under the mouse are skipped by the view's paints, the plot is a view box
alone, the edges' worker hands the interpreter lock over, and the redraw's shortcuts (the id
table, the extent from the shown nodes) give what the long ways gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from curator.views.shell.main_window import MainWindow
from tests.views.graph.test_gui_graph import CHAIN, _open_graph, graph_of


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    win = _open_graph(qtbot, tmp_path, CHAIN)
    yield win
    win.close()


def test_a_paint_of_the_view_skips_the_hit_targets_yet_the_mouse_finds_them(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The view's paint calls neither ``paint`` nor ``boundingRect`` of a hit-target item (each
    call from C++ waited for the interpreter lock), while the scene still finds them under the
    mouse: a click on a node opens its page."""
    from PySide6.QtWidgets import QGraphicsItem

    from curator.views.graph import edges as graph_edges

    calls: list[str] = []
    paint, bounds = graph_edges.HitTargets.paint, graph_edges.pg.ScatterPlotItem.boundingRect

    def counted_paint(self: Any, *args: Any) -> None:
        calls.append("paint")
        paint(self, *args)

    def counted_bounds(self: Any) -> Any:
        calls.append("boundingRect")
        return bounds(self)

    # (set before the items are made: the bindings look a Python override up once per item)
    monkeypatch.setattr(graph_edges.HitTargets, "paint", counted_paint)
    monkeypatch.setattr(graph_edges.HitTargets, "boundingRect", counted_bounds)
    win = _open_graph(qtbot, tmp_path, CHAIN)
    try:
        view = graph_of(win)
        qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
        items = [item for kind in view.node_items.values() for item in kind if len(item.data)]
        assert items
        assert all(item.flags() & QGraphicsItem.GraphicsItemFlag.ItemHasNoContents for item in items)
        calls.clear()
        view.plot.grab()
        assert calls == []
        # the scene still finds the node under the mouse (hover and click look items up there),
        # and a click opens its page
        view.plot.autoRange()
        qtbot.wait(100)
        point = view.node_screen_pos("wiki/p3.md")
        scene_point = view.plot.mapToScene(point)
        assert any(isinstance(item, graph_edges.HitTargets) for item in view.plot.scene().items(scene_point))
        with qtbot.waitSignal(win.ready, timeout=5000):
            qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
        assert win.current == (0, "wiki/p3.md")
    finally:
        win.close()


def test_the_plot_is_a_view_box_alone(window: MainWindow) -> None:
    """No PlotItem (axes, title, button, options form) is made: the plot is one view box, which
    holds every item of the view and frames the graph."""
    import pyqtgraph as pg

    from curator.views.graph.edges import GraphPlot, HitTargets

    view = graph_of(window)
    plot = view.plot
    assert isinstance(plot, GraphPlot)
    scene_items = plot.scene().items()
    assert not any(isinstance(item, pg.PlotItem | pg.AxisItem) for item in scene_items)
    vb = plot.plotItem.vb
    assert isinstance(vb, pg.ViewBox)
    assert view.edges_item in vb.childGroup.childItems() and view.highlight_item in vb.childGroup.childItems()
    # (neither a marker nor the edge layer, bounded wider than its nodes, counts in framing the
    # graph: the nodes' hit targets do)
    assert view.highlight_item not in vb.addedItems and view.edges_item not in vb.addedItems
    assert any(isinstance(item, HitTargets) for item in vb.addedItems)
    vb.scaleBy((4, 4))
    plot.autoRange()
    (x0, x1), (y0, y1) = vb.viewRange()
    assert view.data is not None
    shown = view.data.pos[view._shown_index]
    assert (shown[:, 0] >= x0).all() and (shown[:, 0] <= x1).all()
    assert (shown[:, 1] >= y0).all() and (shown[:, 1] <= y1).all()


def test_the_edges_worker_hands_the_interpreter_lock_over(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A render strokes the edges STROKE_CHUNK at a time and stamps NODE_CHUNK nodes at a time,
    handing the lock over between; drawing on the GUI thread (an export) never does."""
    from PySide6.QtGui import QImage, QPainter

    from curator.views.graph import edges as graph_edges

    handed: list[int] = []
    monkeypatch.setattr(graph_edges, "_yield_lock", lambda: handed.append(1))
    rng = np.random.default_rng(0)
    segments = rng.uniform(0, 100, (5000, 4))
    nodes = [("o", QColor("red"), rng.uniform(0, 100, (2000, 2)), np.full(2000, 6.0))]
    key = ((1.0, 0.0, 0.0, 1.0, 0.0, 0.0), 120, 120, 1.0)
    image = graph_edges.render_edges(segments, key, QColor("grey"), nodes)
    assert not image.isNull()
    strokes = -(-len(segments) // graph_edges.STROKE_CHUNK) - 1  # between calls
    stamps = 2000 // graph_edges.NODE_CHUNK
    assert len(handed) == strokes + stamps
    handed.clear()
    target = QImage(120, 120, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(target)
    try:
        graph_edges.stroke(painter, segments)
        graph_edges.draw_nodes(painter, nodes, key[0])
    finally:
        painter.end()
    assert handed == []


def test_the_redraw_finds_nodes_through_the_graph_id_table(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """The table made with the graph gives each node's place in ``ids`` (also for a graph made
    without it), and the open page is ringed through it."""
    from curator.views.graph.graph_view import GraphData, finish, node_index

    view = graph_of(window)
    d = view.data
    assert d is not None and d.index == {node: i for i, node in enumerate(d.ids)}
    assert node_index(d, "wiki/p2.md") == d.ids.index("wiki/p2.md")
    assert node_index(d, "wiki/nowhere.md") is None
    bare = GraphData(["b", "a"], ["B", "A"], ["core", "core"], ["", ""], np.zeros(2), np.zeros(2),
                     np.ones(2, dtype=bool), np.zeros((2, 2)), np.zeros((0, 2), dtype=np.int64))
    assert node_index(bare, "a") == 1 and bare.index == {"b": 0, "a": 1}
    assert finish(bare).index == {"b": 0, "a": 1}
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.open_page((0, "wiki/p4.md"))
    qtbot.waitUntil(lambda: view.highlighted() == "wiki/p4.md", timeout=5000)


@pytest.mark.parametrize("hide", [(), ("orphans",), ("orphans", "ghosts"), ("context",)])
def test_the_edge_layer_extent_is_what_measuring_its_parts_gives(qtbot, window: MainWindow, hide: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    """The extent the redraw hands the edge layer (the shown nodes') is the one the layer
    measures from its kept edges and its nodes, whatever the filters hide."""
    view = graph_of(window)
    for name in hide:
        box = view.layer_buttons[name] if name in view.layer_buttons else getattr(view, name)
        box.setChecked(False)
    layer = view.edges_item
    measured = layer._extent()
    handed = layer.extent()
    assert handed == measured and not handed.isEmpty()
    # (and the layer alone, without the hint, measures the same)
    layer.set_segments(layer._segments, [(s, c, p, z) for s, c, p, z in layer._nodes], layer._keep)
    assert layer.extent() == measured


def test_the_edge_layer_is_bounded_by_its_nodes_whole_at_any_zoom(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """The layer paints the nodes too: its bounds hold each node's whole symbol (Qt repaints an
    item within its bounds only; bounded by the centres, the nodes at the edge of a community
    were drawn cut in half once the view had zoomed out). The view frames the nodes' hit
    targets, as before, not those wider bounds."""
    view = graph_of(window)
    layer = view.edges_item
    vb = view.plot.plotItem.vb
    framed = vb.childrenBounds()
    assert framed[0] is not None and framed[0][0] > layer.boundingRect().left()  # not the wide bounds
    for zoom in (1.0, 3.0, 0.5):
        vb.scaleBy((zoom, zoom))
        QApplication.processEvents()
        bounds = layer.mapRectToScene(layer.boundingRect())  # (the scene's units: the view's pixels)
        nodes = 0
        for _symbol, _colour, pos, sizes in layer._nodes:
            for (x, y), size in zip(pos.tolist(), sizes.tolist(), strict=True):
                centre = layer.mapToScene(QPointF(x, y))
                half = size / 2
                assert bounds.contains(QRectF(centre.x() - half, centre.y() - half, size, size)), (zoom, x, y)
                nodes += 1
        assert nodes >= 4


def test_a_turn_of_label_placement_stops_at_its_time_budget(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With no time to spare, each event-loop turn places one candidate only; the placement
    then ends with the very labels an unhurried one places."""
    from curator.views.graph import graph_view
    from tests.views.graph.test_gui_graph import _hub_wiki

    win = _open_graph(qtbot, tmp_path, _hub_wiki(80, 5))
    try:
        view = graph_of(win)
        qtbot.waitUntil(lambda: len(view.label_nodes()) > 2 and not view.placing_labels(), timeout=10_000)
        unhurried = view.label_nodes()
        monkeypatch.setattr(graph_view, "LABEL_TURN_SECONDS", 0.0, raising=False)
        view._draw_labels()
        assert len(view.label_nodes()) <= 1  # this turn: the first candidate only
        qtbot.waitUntil(lambda: not view.placing_labels(), timeout=10_000)
        assert view.label_nodes() == unhurried
    finally:
        win.close()
