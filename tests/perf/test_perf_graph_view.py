"""Graph view benchmark (issue 8): layout and repaint at 10,000 nodes.

Run: ``.venv/bin/pytest tests/perf/test_perf_graph_view.py -s``. Repaint is timed for pan and zoom
steps (``grab()`` renders the plot widget synchronously), with the naive per-edge-pen drawing
measured in the same run for comparison.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from curator.engine.graph.layout import LayoutEngine
from curator.engine.wiki import Wiki
from curator.views.graph.graph_view import GraphView, _edge_colour, build_graph_data
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.corpus import generate
from tests.gui_helpers import temp_settings


def pan_and_zoom(plot: pg.PlotWidget, steps: int = 30, settle: Callable[[], None] | None = None) -> list[float]:
    """Milliseconds to render the plot after each of ``steps`` alternating pans and zooms (after
    ``settle()`` between the step and the render, when given)."""
    vb = plot.getViewBox()
    timings = []
    for step in range(steps):
        if step % 2:
            vb.scaleBy((0.9, 0.9))
        else:
            vb.translateBy((3.0, -2.0))
        if settle is not None:
            settle()
        start = time.perf_counter()
        plot.grab()  # renders the widget synchronously
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def test_graph_view_10k(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "wiki"
    generate(root, 10_000, seed=3)
    wiki = Wiki(root)
    wiki.refresh()
    layouts = []
    for _ in range(3):
        start = time.perf_counter()
        data = build_graph_data(wiki, LayoutEngine(), None, 2)
        layouts.append(time.perf_counter() - start)
    start = time.perf_counter()
    build_graph_data(wiki, LayoutEngine(), None, 2)
    n_nodes, n_edges = len(data.ids), len(data.edges)

    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    view = GraphView(win)
    win.add_view("graph", view, "Graph")
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    win.show_view("graph")
    with qtbot.waitSignal(view.content_ready, timeout=120_000):  # every node drawn (in chunks)
        view._show(data)
    view.plot.autoRange()
    edges = view.edges_item
    qtbot.waitUntil(edges.is_drawn, timeout=10_000)
    # while the view moves: each repaint blits the last image of the edges, moved and scaled
    timings = pan_and_zoom(view.plot)

    def settled() -> None:  # the worker has drawn the edges for the view as it is now
        view.plot.grab()
        qtbot.waitUntil(edges.is_drawn, timeout=10_000)

    # after the view stops: the worker's new image lands, and a repaint blits it
    edges.render_ms.clear()
    settled_t = pan_and_zoom(view.plot, settle=settled)
    render_t = list(edges.render_ms)
    # The drawing before: every edge stroked on the GUI thread in each paint (a PlotCurveItem of
    # opaque line segments, as up to session 4), then one QPainterPath with a translucent pen (before #17).
    seg = data.pos[data.edges.ravel()]
    curve = pg.PlotCurveItem(seg[:, 0], seg[:, 1], connect="pairs", antialias=False,
                             pen=pg.mkPen(_edge_colour(view.palette().base().color()), width=1))
    curve.setSegmentedLineMode("on")
    view.plot.removeItem(edges)
    view.plot.addItem(curve)
    view.plot.autoRange()
    curve_t = pan_and_zoom(view.plot)
    curve.setPen(pg.mkPen(QColor(128, 128, 128, 90), width=1))
    curve.setSegmentedLineMode("off")
    view.plot.autoRange()
    path_t = pan_and_zoom(view.plot)

    # Baseline: one pen per edge (pyqtgraph GraphItem with a per-edge pen array).
    naive = pg.GraphItem()
    pens = np.array([(128, 128, 128, 90, 1)] * len(data.edges),
                    dtype=[("red", np.ubyte), ("green", np.ubyte), ("blue", np.ubyte), ("alpha", np.ubyte),
                           ("width", float)])
    naive.setData(pos=data.pos, adj=data.edges, pen=pens, symbolPen=None, size=6)
    view.plot.clear()
    view.plot.addItem(naive)
    view.plot.autoRange()  # the same pan/zoom steps from the same starting view
    naive_t = pan_and_zoom(view.plot)
    med_layout, med_paint, med_naive = statistics.median(layouts), statistics.median(timings), \
        statistics.median(naive_t)
    med_path, med_curve = statistics.median(path_t), statistics.median(curve_t)
    med_settled, med_render = statistics.median(settled_t), statistics.median(render_t)
    print(f"\ngraph of {n_nodes:,} nodes / {n_edges:,} edges: layout median {med_layout:.2f} s; "
          f"repaint median {med_paint:.1f} ms (p90 {sorted(timings)[26]:.1f} ms) while the view moves, "
          f"{med_settled:.1f} ms (p90 {sorted(settled_t)[26]:.1f} ms) once the edges are re-drawn for it "
          f"(the worker thread's render: median {med_render:.1f} ms, off the GUI thread); "
          f"every edge stroked in each paint (the drawing up to session 4) {med_curve:.1f} ms "
          f"(ours/that = {med_paint / med_curve:.2f}); "
          f"GraphItem with per-edge pens {med_naive:.1f} ms (ours/that = {med_paint / med_naive:.2f}); "
          f"one translucent path (the drawing before issue 17) {med_path:.1f} ms (ours/that = "
          f"{med_paint / med_path:.2f})")
    win.close()
    assert med_paint <= 33
    assert med_settled <= 33
    assert med_layout <= 3.0
