"""pytest-qt tests of the graph view: global/local graph, depth, filters, click to open."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from curator.views.graph.graph_view import GraphView
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import make_wiki, temp_settings

CHAIN = {
    f"wiki/p{i}.md": f"---\ntitle: P{i}\nlayer: {'core' if i % 2 else 'context'}\ntrust: 0.{i + 1}\n---\n"
                     f"# P{i}\n\nnext [[p{i + 1}]]" + (" and [[ghost page]]" if i == 0 else "") + "\n"
    for i in range(6)
} | {"wiki/lonely.md": "---\ntitle: Lonely\nlayer: deep\n---\nno links here\n"}


def _open_graph(qtbot, tmp_path: Path, pages: dict[str, str]) -> MainWindow:  # type: ignore[no-untyped-def]
    """A main window on a wiki of ``pages`` with the graph view shown and drawn."""
    root = make_wiki(tmp_path / "wiki", pages)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    graph = GraphView(win)
    win.add_view("graph", graph, "Graph")
    qtbot.addWidget(win)
    win.resize(1000, 700)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=60_000):
        win.start()
    with qtbot.waitSignal(graph.content_ready, timeout=60_000):
        win.show_view("graph")
    return win


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    win = _open_graph(qtbot, tmp_path, CHAIN)
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
    view.title_filter.setText("p3")
    assert shown_ids(view) == {"wiki/p3.md"}


def test_local_graph_depth_changes_the_neighbourhood(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = graph_of(window)
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.open_page((0, "wiki/p2.md"))
    with qtbot.waitSignal(view.content_ready, timeout=10_000):
        view.mode.setCurrentIndex(1)
    view.depth_slider.setValue(1)
    qtbot.waitUntil(lambda: view.data is not None and shown_ids(view) == {"wiki/p1.md", "wiki/p2.md", "wiki/p3.md"},
                    timeout=10_000)
    assert view.data is not None and view.data.center == "wiki/p2.md"
    view.depth_slider.setValue(2)
    qtbot.waitUntil(lambda: shown_ids(view) == {f"wiki/p{i}.md" for i in range(0, 5)}, timeout=10_000)
    view.depth_slider.setValue(4)
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


# --- at scale (issue 17) ---------------------------------------------------------------------------

def _hub_wiki(n_linked: int, n_orphans: int) -> dict[str, str]:
    """A hub linked by ``n_linked`` pages with long titles, and ``n_orphans`` unlinked pages."""
    pages = {"wiki/hub.md": "---\ntitle: The Hub\nlayer: core\n---\n# The Hub\n"}
    for i in range(n_linked):
        pages[f"wiki/spoke-{i:04d}.md"] = (f"---\ntitle: Spoke number {i} with a long title\n---\n"
                                          f"See [[hub]] and [[spoke-{(i + 1) % n_linked:04d}]].\n")
    for i in range(n_orphans):
        pages[f"wiki/orphan-{i:05d}.md"] = f"---\ntitle: Orphan {i}\n---\nalone\n"
    return pages


def _assert_labels_sane(qtbot, view: GraphView) -> None:  # type: ignore[no-untyped-def]
    qtbot.wait(150)  # the relabel timer after a range change
    qtbot.waitUntil(lambda: not view.placing_labels(), timeout=5_000)  # (a few candidates per turn)
    assert view.data is not None
    labelled = view.label_nodes()
    assert labelled, "some nodes are labelled"
    assert len(labelled) == len(set(labelled)) == len(view._labels)
    shown = shown_ids(view)
    assert set(labelled) <= shown  # never a label without its node
    rects = [item.sceneBoundingRect() for item in view._labels]
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            assert not rects[a].intersects(rects[b])  # labels do not collide
    # none cut by the view's left or right edge (but for the text's blank 4-pixel margin, when its
    # node is at the very edge)
    bounds = view.plot.plotItem.vb.sceneBoundingRect().adjusted(-5, 0, 5, 0)
    for rect in rects:
        assert rect.width() > bounds.width() or bounds.left() <= rect.left() <= rect.right() <= bounds.right()
    for node, item in zip(labelled, view._labels, strict=True):
        i = view.data.ids.index(node)
        assert (item.pos().x(), item.pos().y()) == tuple(view.data.pos[i])  # on its node
    # every text item shown in the plot is one of ours or the (empty or shown) hover label;
    # the others are hidden, kept for the next placement
    texts = [it for it in view.plot.plotItem.vb.childGroup.childItems() if it.__class__.__name__ == "TextItem"]
    visible = [it for it in texts if it.isVisible()]
    assert len(visible) == len(view._labels) + 1
    assert all(it in view._spare_labels for it in texts if not it.isVisible())


def test_big_graph_hides_orphans_with_the_count_and_labels_do_not_collide(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.views.graph import graph_view

    win = _open_graph(qtbot, tmp_path, _hub_wiki(150, graph_view.ORPHAN_HIDE_ABOVE))
    view = graph_of(win)
    assert not view.orphans.isChecked()  # above the threshold: orphans start hidden
    hidden = graph_view.ORPHAN_HIDE_ABOVE
    assert view.hidden_orphans() == hidden
    assert f"{hidden:,} orphans hidden" in view.info.text()
    assert not any(i.startswith("wiki/orphan-") for i in shown_ids(view))
    _assert_labels_sane(qtbot, view)
    # zoom in and out, re-centre: labels are rebuilt, never duplicated, never left behind
    vb = view.plot.plotItem.vb
    vb.scaleBy((0.3, 0.3))
    _assert_labels_sane(qtbot, view)
    vb.scaleBy((5, 5))
    _assert_labels_sane(qtbot, view)
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        view.center_on("wiki/spoke-0007.md")
    _assert_labels_sane(qtbot, view)
    assert "wiki/spoke-0007.md" in view.label_nodes()  # the centre always gets its label
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        view.mode.setCurrentIndex(0)  # back to the global graph
    assert not view.orphans.isChecked()
    view.orphans.click()  # the operator's choice wins over the default from now on
    assert view.orphans.isChecked() and view.hidden_orphans() == 0
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        view.reload()
    assert view.orphans.isChecked()
    _assert_labels_sane(qtbot, view)
    win.close()


def test_small_graph_keeps_orphans_and_rings_the_selected_node(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = graph_of(window)
    assert view.orphans.isChecked() and "orphans hidden" not in view.info.text()
    with qtbot.waitSignal(window.ready, timeout=10_000):
        window.open_page((0, "wiki/p3.md"))
    assert view.highlighted() == "wiki/p3.md"
    with qtbot.waitSignal(window.ready, timeout=10_000):
        window.open_page((0, "wiki/lonely.md"))
    assert view.highlighted() == "wiki/lonely.md"
    view.orphans.setChecked(False)  # the selected node filtered out: no ring left behind
    assert view.highlighted() is None


# --- the overview by community (issue 17) ------------------------------------------------------------

def _two_clusters(n: int, m: int) -> dict[str, str]:
    """Two groups of ``n`` and ``m`` pages (every page linked to every other of its group), joined
    by one link, and a page linked to nothing."""
    pages: dict[str, str] = {}
    for ring, size in (("alpha", n), ("beta", m)):
        for i in range(size):
            nxt = " ".join(f"[[{ring}-{k:03d}]]" for k in range(size) if k != i)
            title = f"{ring.title()} hub" if i == 0 else f"{ring.title()} {i}"
            pages[f"wiki/{ring}/{ring}-{i:03d}.md"] = f"---\ntitle: {title}\n---\n{nxt}\n"
    pages["wiki/alpha/alpha-000.md"] += "see [[beta-000]]\n"
    pages["wiki/lonely.md"] = "---\ntitle: Lonely\n---\nno links\n"
    return pages


def test_community_overview_shows_communities_sized_by_membership_and_expands_on_click(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.views.graph import graph_view

    monkeypatch.setattr(graph_view, "COMMUNITIES_ABOVE", 30)  # 41 pages count as big here
    win = _open_graph(qtbot, tmp_path, _two_clusters(20, 12))
    view = graph_of(win)
    assert view.by_community and view.mode.currentText() == "Communities"  # the default at scale
    d = view.data
    assert d is not None and d.members is not None
    assert [len(m) for m in d.members] == [20, 12]  # the two groups, biggest first; the lonely page in none
    assert d.alone == 1 and "2 communities of 32 pages" in view.info.text()
    assert {frozenset(m) for m in d.members} == {
        frozenset(f"wiki/{ring}/{ring}-{i:03d}.md" for i in range(n)) for ring, n in (("alpha", 20), ("beta", 12))}
    sizes = view.node_items["community"][0].data["size"]
    assert len(sizes) == 2 and sizes[0] > sizes[1]  # sized by membership
    assert any(label.startswith(("Alpha hub", "Beta hub")) for label in d.labels)
    assert len(d.edges) == 1  # the one link between them
    # a click on a community shows its pages (and only those), with a way back
    alpha = next(i for i, m in enumerate(d.members) if "wiki/alpha/alpha-000.md" in m)
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        view.expand_community(alpha)
    assert view.data is not None and view.data.members is None
    assert shown_ids(view) == {f"wiki/alpha/alpha-{i:03d}.md" for i in range(20)}
    assert "in the community of Alpha hub" in view.info.text()
    assert view.back_button.isVisible()
    with qtbot.waitSignal(win.ready, timeout=10_000):  # a page of it opens on click, as in any graph
        view.host.open_page((0, "wiki/alpha/alpha-003.md"))
    assert view.highlighted() == "wiki/alpha/alpha-003.md"
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        view.back_button.click()
    assert view.data is not None and view.data.members is not None and not view.back_button.isVisible()
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        view.mode.setCurrentIndex(0)  # the operator's choice: the global graph of every page
    assert "wiki/beta/beta-007.md" in shown_ids(view)
    win.close()


def test_small_wiki_opens_on_the_global_graph(window: MainWindow) -> None:
    view = graph_of(window)
    assert view.mode.currentText() == "Global" and view.data is not None and view.data.members is None


def _edge_pixel_at(view: GraphView, a: str, b: str) -> bool:
    """Whether the plot, as it is on screen now, shows the edge colour between nodes ``a`` and ``b``."""
    from curator.views.graph.graph_view import _edge_colour

    image = view.plot.grab().toImage()
    pa, pb = view.node_screen_pos(a), view.node_screen_pos(b)
    colour = _edge_colour(view.palette().base().color())
    # a few points along the segment, away from both nodes' symbols
    for t in (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65):
        x, y = round(pa.x() + t * (pb.x() - pa.x())), round(pa.y() + t * (pb.y() - pa.y()))
        for dx, dy in ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1)):
            if image.pixelColor(x + dx, y + dy).rgb() == colour.rgb():
                return True
    return False


def test_edges_are_drawn_off_the_gui_thread_and_follow_the_view(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """The edge layer is an image a worker draws: the edges are on screen between their nodes,
    follow a pan and a zoom (drawn again for the new view), and leave with a hidden node."""
    view = graph_of(window)
    edges = view.edges_item
    assert view.data is not None
    links = {(view.data.ids[a], view.data.ids[b]) for a, b in view.data.edges}
    assert edges.segment_count() == len(links)
    qtbot.waitUntil(edges.is_drawn, timeout=10_000)
    assert _edge_pixel_at(view, "wiki/p2.md", "wiki/p3.md")
    renders = len(edges.render_ms)
    vb = view.plot.plotItem.vb
    (x0, x1), _ = vb.viewRange()
    vb.translateBy((0.2 * (x1 - x0), 0.0))
    vb.scaleBy((0.8, 0.8))
    view.plot.grab()  # a paint asks for the new view's image
    qtbot.waitUntil(lambda: edges.is_drawn() and len(edges.render_ms) > renders, timeout=10_000)
    assert _edge_pixel_at(view, "wiki/p2.md", "wiki/p3.md")
    # hiding a node takes its links away (p0 is the only context page linking p1)
    view.layer_buttons["context"].setChecked(False)
    assert edges.segment_count() < len(links)
    qtbot.waitUntil(edges.is_drawn, timeout=10_000)
    assert not _edge_pixel_at(view, "wiki/p2.md", "wiki/p3.md")  # p2 is a context page


def test_nodes_are_drawn_by_the_layer_and_found_by_the_mouse(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """The nodes are in the layer's image, each in its kind's colour at its place (the scatter
    items that find them under the mouse never paint), and leave the image with a hidden kind."""
    from curator.views.graph.edges import HitTargets
    from curator.views.graph.graph_view import _brush

    view = graph_of(window)
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    items = [item for kind in view.node_items.values() for item in kind]
    assert items and all(isinstance(item, HitTargets) for item in items)
    assert sum(len(item.data) for item in items) == len(view._shown_index)

    def colour_at(page: str) -> tuple[int, int, int]:
        image = view.plot.grab().toImage()
        p = view.node_screen_pos(page)
        c = image.pixelColor(round(p.x()), round(p.y()))
        return c.red(), c.green(), c.blue()

    core = _brush("core").color()
    context = _brush("context").color()
    assert colour_at("wiki/p1.md") == (core.red(), core.green(), core.blue())  # p1 is a core page
    assert colour_at("wiki/p2.md") == (context.red(), context.green(), context.blue())
    # the node under the mouse is still found: its scatter item holds its point
    point = next(item for item in view.node_items["core"] if len(item.data))
    assert len(point.pointsAt(point.points()[0].pos())) >= 1
    view.layer_buttons["context"].setChecked(False)
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    assert colour_at("wiki/p1.md") == (core.red(), core.green(), core.blue())
    assert colour_at("wiki/p2.md") != (context.red(), context.green(), context.blue())


def test_stroke_draws_every_segment_in_chunks(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The edges go to QPainter a few thousand at a time (each call holds the interpreter lock):
    every segment is drawn, the last chunk's too, whatever the chunk size."""
    import numpy as np
    from PySide6.QtGui import QColor, QImage, QPainter, QPen

    from curator.views.graph import edges as graph_edges

    monkeypatch.setattr(graph_edges, "STROKE_CHUNK", 3)
    # seven horizontal segments, one per row 2, 4, ..., 14 (three chunks: 3 + 3 + 1)
    segments = np.array([[1.0, y, 18.0, y] for y in range(2, 16, 2)])
    image = QImage(20, 20, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setPen(QPen(QColor(255, 0, 0), 1))
    graph_edges.stroke(painter, segments)
    painter.end()
    drawn = [y for y in range(20) if image.pixelColor(10, y).red() > 0]
    assert len(drawn) >= 7 and all(any(abs(d - y) <= 1 for d in drawn) for y in range(2, 16, 2))


def test_the_node_kinds_come_with_the_graph_built_off_the_gui_thread(window: MainWindow) -> None:
    """Each node's kind (its scatter item, by NODE_Z's order) is computed with the graph in the
    background, not by the GUI thread's first redraw (a Python loop over every node)."""
    from curator.engine.graph.layout import LayoutEngine
    from curator.views.graph.graph_view import NODE_Z, build_community_data, build_graph_data

    view = graph_of(window)
    wiki = window.workspace.wiki(0)
    order = list(NODE_Z)
    for data in (build_graph_data(wiki, LayoutEngine(), None, 2), build_community_data(wiki)):
        assert data.kinds is not None
        assert data.kinds.tolist() == [order.index(k if k in NODE_Z else "deep") for k in data.layers]
    assert view.data is not None and view.data.kinds is not None
    assert list(view.node_items) == order  # (the items are made in that order)
    assert "unresolved" in view.data.layers and "deep" in view.data.layers


def test_stroke_draws_only_the_kept_segments(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With a mask, only the marked segments are drawn, picked chunk by chunk (the GUI thread
    hands over every edge and the mask, no copy of the kept ones)."""
    import numpy as np
    from PySide6.QtGui import QColor, QImage, QPainter, QPen

    from curator.views.graph import edges as graph_edges

    monkeypatch.setattr(graph_edges, "STROKE_CHUNK", 3)
    segments = np.array([[1.0, y, 18.0, y] for y in range(2, 16, 2)])  # rows 2, 4, ..., 14
    keep = np.array([True, False, False, True, False, True, True])
    image = QImage(20, 20, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setPen(QPen(QColor(255, 0, 0), 1))
    graph_edges.stroke(painter, segments, keep)
    painter.end()
    drawn = {y for y in range(20) if image.pixelColor(10, y).red() > 0}
    for y, kept in zip(range(2, 16, 2), keep, strict=True):
        assert (y in drawn or y + 1 in drawn or y - 1 in drawn) == bool(kept), y


def test_the_view_hands_every_edge_and_a_mask_to_the_layer(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    view = graph_of(window)
    d = view.data
    assert d is not None and d.segments is not None
    edges = view.edges_item
    assert np.shares_memory(edges._segments, d.segments)  # (no copy made on the GUI thread)
    view.layer_buttons["context"].setChecked(False)
    shown = set(view._shown_index.tolist())
    drawn = sum(1 for a, b in d.edges.tolist() if a in shown and b in shown)
    assert edges.segment_count() == drawn < len(d.edges)
    assert np.shares_memory(edges._segments, d.segments)


def test_the_info_line_wraps_rather_than_being_cut(window: MainWindow) -> None:
    """A big graph's counts and hints (orphans hidden, not yet written hidden) are longer than
    the view is wide: the line wraps (at 32,000 pages its end was cut off)."""
    view = graph_of(window)
    assert view.info.wordWrap()
    view.info.setText("; ".join(["31,999 pages, 19,549 not yet written hidden (tick Unresolved to show them)"] * 3))
    assert view.info.heightForWidth(view.width()) > view.info.fontMetrics().height() * 1.5


@pytest.mark.parametrize("attachments", [False, True])
def test_a_graph_is_numbered_once_for_the_global_view_and_the_communities(tmp_path: Path, attachments: bool) -> None:
    """The global view and the overview by community share one numbering of the graph, made
    once per graph: the same ids, links and node attributes as numbering every node (or the
    pages alone, for the communities) afresh."""
    import numpy as np

    from curator.engine.graph.layout import LayoutEngine
    from curator.engine.graph.link_graph import graph_for
    from curator.engine.policy.actor import OPERATOR
    from curator.engine.wiki import Wiki
    from curator.views.graph import graph_view
    from tests.corpus import generate

    info = generate(tmp_path / "w", 400, seed=3, profile="real-shaped", cjk=False)
    (info.root / "wiki" / "pic.png").write_bytes(b"\x89PNG")
    (info.root / "wiki" / "with-pic.md").write_text("# With pic\n\n![[pic.png]] [[with-pic]] [[Nowhere Yet]]\n")
    wiki = Wiki(info.root)
    graph = graph_for(wiki, OPERATOR, attachments)
    numbering = graph_view.Numbering()
    num = numbering.of(graph)
    assert numbering.of(graph) is num  # made once
    ids = sorted(graph.nodes)
    assert num.ids == ids
    assert np.array_equal(num.edges, graph_view._edge_pairs(graph, ids))
    assert len(num.edges) > 400 and any(i.startswith("unresolved:") for i in ids)
    assert attachments == any(i.startswith("attachment:") for i in ids)
    assert num.labels == [graph.nodes[i].label for i in ids]
    assert num.resolved.tolist() == [graph.nodes[i].page is not None for i in ids]
    assert np.array_equal(num.degree, np.bincount(num.edges.ravel(), minlength=len(ids)))
    pages = sorted(i for i in ids if graph.nodes[i].page is not None)
    sub_ids, sub_edges = graph_view._page_subgraph(num)
    assert sub_ids == pages
    assert np.array_equal(sub_edges, graph_view._edge_pairs(graph, pages))
    data = graph_view.build_graph_data(wiki, LayoutEngine(), None, 2, attachments=attachments, numbering=numbering)
    assert data.ids == ids and np.array_equal(data.edges, num.edges) and data.layers == num.layers
    assert data.ids is not num.ids  # (each view has its own copy)
    assert numbering.of(graph) is num  # the global view used it
    if not attachments:  # the overview by community numbers the same graph: its pages
        community = graph_view.build_community_data(wiki, numbering)
        assert numbering.of(graph) is num and community.members
        assert sum(len(m) for m in community.members) + community.alone == len(pages)


def test_labels_are_placed_a_slice_per_turn_and_a_newer_placement_takes_over(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The label candidates are placed a few per event-loop turn (all at once were 30-120 ms of
    GUI thread at 32,000 pages); a placement begun while another is under way (a zoom, a new
    graph) takes over, and no label of either is left without its node or shown twice."""
    from curator.views.graph import graph_view

    win = _open_graph(qtbot, tmp_path, _hub_wiki(80, 5))
    view = graph_of(win)
    _assert_labels_sane(qtbot, view)
    full = len(view.label_nodes())
    assert full > 2
    monkeypatch.setattr(graph_view, "LABEL_SLICE", 2)
    view._draw_labels()
    assert len(view.label_nodes()) <= 2  # one slice in this turn, the rest later
    view.plot.plotItem.vb.scaleBy((0.5, 0.5))  # the view moves: a newer placement takes over
    view._draw_labels()
    assert len(view.label_nodes()) <= 2
    _assert_labels_sane(qtbot, view)
    view.plot.plotItem.vb.scaleBy((2, 2))
    _assert_labels_sane(qtbot, view)
    assert len(view.label_nodes()) == full  # back where it was: the same labels, placed in slices
    view._draw_labels()
    view._redraw()  # the nodes drawn again mid-placement: every label goes, then is placed again
    _assert_labels_sane(qtbot, view)
    win.close()


def test_the_node_under_the_mouse_grows_and_its_marker_never_outlives_it(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QEvent, QPoint, QPointF
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    from curator.views.graph.graph_view import _brush

    view = graph_of(window)
    view.plot.autoRange()
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    centre = view.node_screen_pos("wiki/p1.md")
    size = next(float(item.data["size"][0]) for item in view.node_items["core"] if len(item.data))
    beside = QPoint(round(centre.x() + size * 0.5 + 1.5), round(centre.y()))  # just outside the node

    def colour(at: QPoint) -> tuple[int, int, int]:
        c = view.plot.grab().toImage().pixelColor(at)
        return c.red(), c.green(), c.blue()

    def move(to: QPoint) -> None:  # (QTest's mouseMove moves the cursor: no event offscreen)
        qtbot.wait(50)  # (pyqtgraph's scene drops a move within 10 ms of the last)
        viewport = view.plot.viewport()
        QApplication.sendEvent(viewport, QMouseEvent(
            QEvent.Type.MouseMove, QPointF(to), QPointF(viewport.mapToGlobal(to)),
            Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))

    core = _brush("core").color()
    assert colour(beside) != (core.red(), core.green(), core.blue())
    move(centre)
    qtbot.waitUntil(lambda: view.hovered() == "wiki/p1.md", timeout=5_000)
    labelled = "wiki/p1.md" in view.label_nodes()
    assert view.label_item.toPlainText() == ("" if labelled else "P1")  # its title shown once
    assert colour(beside) == (core.red(), core.green(), core.blue())  # drawn bigger, in its colour
    move(QPoint(2, 2))  # off every node
    qtbot.waitUntil(lambda: view.hovered() is None, timeout=5_000)
    assert view.label_item.toPlainText() == ""
    move(centre)
    qtbot.waitUntil(lambda: view.hovered() == "wiki/p1.md", timeout=5_000)
    view.layer_buttons["core"].setChecked(False)  # the hovered node filtered out: nothing left of it
    assert view.hovered() is None and view.label_item.toPlainText() == ""
    view.layer_buttons["core"].setChecked(True)
    qtbot.waitUntil(lambda: "wiki/p2.md" in view.label_nodes(), timeout=10_000)
    move(view.node_screen_pos("wiki/p2.md"))  # a node with its permanent label: no second one
    qtbot.waitUntil(lambda: view.hovered() == "wiki/p2.md", timeout=5_000)
    assert view.label_item.toPlainText() == ""


# --- a person's mouse (issue 43): move, hover, press, release --------------------------------------

def _hover_then_click(qtbot, view: GraphView, node: str) -> None:  # type: ignore[no-untyped-def]
    """Move the mouse onto ``node``, wait until the view marks it hovered (the marker drawn over
    it), then press and release there, as a person's mouse does."""
    from PySide6.QtTest import QTest

    viewport = view.plot.viewport()
    at = view.node_screen_pos(node)
    QTest.mouseMove(viewport, at + QPoint(-30, -30))  # from somewhere else first
    qtbot.wait(50)  # (pyqtgraph's scene drops a move within 10 ms of the last)
    QTest.mouseMove(viewport, at)
    qtbot.waitUntil(lambda: view.hovered() == node, timeout=5_000)
    qtbot.wait(50)
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at, 30)


def test_a_hovered_node_opens_its_page_on_click(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = graph_of(window)
    view.plot.autoRange()
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    with qtbot.waitSignal(window.ready, timeout=5000):
        _hover_then_click(qtbot, view, "wiki/p4.md")
    assert window.current == (0, "wiki/p4.md")
    assert view.highlighted() == "wiki/p4.md"
    # and the next node the mouse goes to, with the first one ringed as the open page
    with qtbot.waitSignal(window.ready, timeout=5000):
        _hover_then_click(qtbot, view, "wiki/p1.md")
    assert window.current == (0, "wiki/p1.md")


def test_a_hovered_community_shows_its_pages_on_click(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.views.graph import graph_view

    monkeypatch.setattr(graph_view, "COMMUNITIES_ABOVE", 30)  # 41 pages count as big here
    win = _open_graph(qtbot, tmp_path, _two_clusters(20, 12))
    view = graph_of(win)
    d = view.data
    assert d is not None and d.members is not None
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    beta = next(i for i, m in enumerate(d.members) if "wiki/beta/beta-000.md" in m)
    with qtbot.waitSignal(view.content_ready, timeout=30_000):
        _hover_then_click(qtbot, view, d.ids[beta])
    assert view.data is not None and view.data.members is None
    assert shown_ids(view) == {f"wiki/beta/beta-{i:03d}.md" for i in range(12)}
    # framed on its nodes: the hover's label and markers never count (the hovered community's
    # empty label stayed at its place in the overview, and at 100,000 pages the community opened
    # was drawn off to one side)
    view.label_item.setPos(1000.0, 1000.0)
    view.hover_item.setData(pos=np.array([[-1000.0, 500.0]]), size=[20])
    view.plot.autoRange()
    pos = view.data.pos[view._shown_index]
    (x0, x1), (y0, y1) = view.plot.plotItem.vb.viewRange()
    middle = (pos.min(axis=0) + pos.max(axis=0)) / 2
    span = pos.max(axis=0) - pos.min(axis=0)
    assert abs((x0 + x1) / 2 - middle[0]) < 0.1 * span[0] and abs((y0 + y1) / 2 - middle[1]) < 0.1 * span[1]
    assert x1 - x0 < 3 * span[0] and y1 - y0 < 3 * max(span)
    win.close()


# --- a wiki without layers (issue 43): coloured by folder or tag, with a legend ----------------------

def _rgb_at(view: GraphView, node: str) -> tuple[int, int, int]:
    c = view.plot.grab().toImage().pixelColor(view.node_screen_pos(node))
    return c.red(), c.green(), c.blue()


def _rgb(colour) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    return colour.red(), colour.green(), colour.blue()


def _wait_coloured(qtbot, view: GraphView, expected: dict[str, tuple[int, int, int]]) -> None:  # type: ignore[no-untyped-def]
    """Each node of ``expected`` drawn in its colour where the view places it, once the view has
    settled (sampled right after the edges were drawn, a node was once still white under load)."""
    seen: dict[str, tuple[int, int, int]] = {}

    def coloured() -> bool:
        seen.update((node, _rgb_at(view, node)) for node in expected)
        return seen == expected

    try:
        qtbot.waitUntil(coloured, timeout=10_000)
    except AssertionError:
        assert seen == expected  # (the colours seen last, for the message)
        raise


def test_a_wiki_without_layers_is_coloured_by_folder_with_a_legend(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.views.graph import graph_view

    # ten folders under wiki/ (every page is in it: the folders below it are the groups), the
    # first with 12 pages down to the last with 3, and a page in wiki/ itself; no layer anywhere
    pages = {f"wiki/f{k}/page-{k}-{i}.md": f"---\ntitle: F{k} {i}\n---\nsee [[page-{k}-{(i + 1) % (12 - k)}]]\n"
             for k in range(10) for i in range(12 - k)}
    pages["wiki/index.md"] = "---\ntitle: Index\n---\n[[page-0-0]] [[page-9-0]]\n"
    win = _open_graph(qtbot, tmp_path, pages)
    view = graph_of(win)
    d = view.data
    assert d is not None and d.group_by == "folder"
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    entries = view.legend_entries
    names = [name for name, _c in entries]
    assert names == [f"wiki/f{k}" for k in range(graph_view.GROUP_COLOURS)] + ["other"]  # biggest first, capped
    assert view.legend.isVisible() and "Colour by folder" in view.legend.text()
    assert all(name in view.legend.text() for name in names)
    assert not any(button.isVisible() for button in view.layer_buttons.values())  # no layers to toggle
    colours = {name: _rgb(colour) for name, colour in entries}
    assert len(set(colours.values())) == len(entries)  # a colour each
    # each node is drawn in its folder's colour (the smallest folders' as other)
    _wait_coloured(qtbot, view, {"wiki/f0/page-0-3.md": colours["wiki/f0"], "wiki/f1/page-1-0.md": colours["wiki/f1"],
                                 "wiki/f9/page-9-1.md": colours["other"]})
    # the hovered node's marker keeps its folder's colour
    from PySide6.QtTest import QTest

    QTest.mouseMove(view.plot.viewport(), view.node_screen_pos("wiki/f1/page-1-0.md"))
    qtbot.waitUntil(lambda: view.hovered() == "wiki/f1/page-1-0.md", timeout=5_000)
    assert _rgb(view.hover_item.data["brush"][0].color()) == colours["wiki/f1"]
    win.close()


def test_a_wiki_without_layers_nor_folders_is_coloured_by_first_tag(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pages = {f"note-{i}.md": f"---\ntitle: Note {i}\ntags: [{'recipe' if i % 2 else 'travel'}, misc]\n---\n"
                             f"[[note-{(i + 1) % 6}]]\n" for i in range(6)}
    pages["untagged.md"] = "# Untagged\n\n[[note-0]]\n"
    win = _open_graph(qtbot, tmp_path, pages)
    view = graph_of(win)
    assert view.data is not None and view.data.group_by == "tag"
    qtbot.waitUntil(view.edges_item.is_drawn, timeout=10_000)
    colours = {name: _rgb(colour) for name, colour in view.legend_entries}
    assert set(colours) == {"recipe", "travel", "(no tag)"} and "Colour by tag" in view.legend.text()
    _wait_coloured(qtbot, view, {"note-1.md": colours["recipe"], "note-0.md": colours["travel"]})
    assert colours["recipe"] != colours["travel"]
    win.close()


def test_a_wiki_with_layers_keeps_the_layer_colours_and_no_legend(window: MainWindow) -> None:
    view = graph_of(window)
    assert view.data is not None and view.data.groups is None and view.legend_entries == []
    assert not view.legend.isVisible()
    assert all(button.isVisible() for button in view.layer_buttons.values())
