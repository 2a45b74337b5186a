"""The graph view: the link graph of a wiki with pyqtgraph (global, or local around the open page).

Layout runs off the GUI thread (``curator.engine.graph.layout``, positions cached per page so an update
moves little). Drawing follows what stays smooth at 10,000+ nodes: every edge in one opaque pen,
stroked into an image off the GUI thread (:mod:`curator.views.graph.edges`), spots without
outline pens, and the positions pushed in a few ``setData`` calls. Filters only hide nodes; they never re-run the layout.
"""

from __future__ import annotations

import html
import os
import threading
import time
import weakref
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from curator.text import plural

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import numpy as np
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from curator.engine.policy.actor import OPERATOR
from curator.models.pages import LAYER_COLORS
from curator.views.widgets import layer_toggles
from curator.views.wiki_view import WikiView

if TYPE_CHECKING:
    from curator.engine.corpus.page import Page
    from curator.engine.graph.layout import LayoutEngine, LayoutProcess
    from curator.engine.graph.link_graph import LinkGraph
    from curator.engine.wiki import Wiki
    from curator.views.graph.edges import NodeGroup
    from curator.views.host import ViewHost

SYMBOLS = {"identity": "star", "core": "o", "context": "s", "deep": "d", "unresolved": "o", "attachment": "t",
           "community": "o"}
GHOST_COLOR = "#b0b0b0"
HIGHLIGHT_COLOR = "#e67e22"
#: A hovered node is drawn this much bigger (at least 6 px more), outlined.
HOVER_GROWTH = 1.6
ATTACHMENT_COLOR = "#d97706"
COMMUNITY_COLOR = "#5b7fa6"
#: Pages considered for a permanent label (the best connected in view); hover shows any title.
LABEL_LIMIT = 60
#: Label candidates placed per event-loop turn at most (see GraphView._draw_labels): 12 a turn
#: were 10-17 ms of the GUI thread's Python and Qt calls, 35-50 ms under load.
LABEL_SLICE = 6
#: A turn places no more candidates once it has taken this long (seconds; the first always):
#: making a label's text item is 2-4 ms, so the first placement in a new window, which makes
#: them all, took 20-25 ms a turn of 6, two to three times that under load.
LABEL_TURN_SECONDS = 0.004
#: The labels' vertical anchor (pyqtgraph's, in text heights): the text sits above its node.
LABEL_ANCHOR_Y = -0.4
#: Above this many pages the global graph starts with orphans hidden (the count is shown): tens
#: of thousands of unlinked dots around the main component only bury it.
ORPHAN_HIDE_ABOVE = 3000
LABEL_CHARS = 28
#: How strongly the edges' grey shows over the background (they are drawn opaque, pre-blended).
EDGE_ALPHA = 90
#: Nodes handed to pyqtgraph per event-loop turn (see GraphView._draw_chunks): 2,000 were ~9 ms
#: of the GUI thread a turn (20-30 ms under load); the items hold them never paint (HitTargets).
DRAW_CHUNK = 1000
#: Drawing order of the kinds of node, bottom up: ghosts under pages, identity pages on top.
NODE_Z = {"unresolved": 1, "attachment": 2, "deep": 3, "context": 4, "core": 5, "identity": 6, "community": 7}
#: Above this many pages the graph view opens on its overview by community (one node per
#: community of pages, sized by membership; a click shows that community's pages), until the
#: operator picks another mode.
COMMUNITIES_ABOVE = 10_000
#: The modes of the view, in the order of its selector.
MODES = ("Global", "Local", "Communities")
#: A wiki where no page has a ``layer`` (an Obsidian vault) would be one grey: its pages are
#: coloured by top-level folder instead (by first tag when they are not in two folders or more),
#: the biggest this many groups a colour each, the rest in OTHER_COLOR (see :func:`page_groups`).
GROUP_COLOURS = 8
OTHER_COLOR = "#7f8c8d"
#: pyqtgraph's palette the groups' colours come from (nine colours; see :func:`_group_brush`).
GROUP_PALETTE = "PAL-relaxed"
#: How the legend names pages at the wiki's root and pages without a tag.
TOP_LEVEL, NO_TAG = "(top level)", "(no tag)"


def _pg() -> Any:
    """pyqtgraph, imported on first use (half a second: the station opens without it), with the
    view's drawing layer (see :mod:`curator.views.graph.edges`): the view imports it here, off the GUI thread
    (compiled from source, with PySide's import hook reading its source, it was 20-50 ms of the
    GUI thread when the plot was first made)."""
    import importlib

    import pyqtgraph

    importlib.import_module("curator.views.graph.edges")
    return pyqtgraph


@dataclass(slots=True)
class GraphData:
    """A laid-out graph, ready to draw (computed off the GUI thread)."""

    ids: list[str]
    labels: list[str]
    layers: list[str]  # page layer, "unresolved" or "attachment"
    namespaces: list[str]
    trust: np.ndarray
    degree: np.ndarray
    resolved: np.ndarray  # bool
    pos: np.ndarray  # (n, 2)
    edges: np.ndarray  # (m, 2) node indices
    center: str | None = None
    layout_seconds: float = 0.0
    folded_labels: list[str] = field(default_factory=list)
    kinds: np.ndarray | None = None  # each node's kind, as its position in NODE_Z (see kind_codes)
    layer_array: np.ndarray | None = None  # ``layers`` as a numpy array (made on first use)
    #: the overview by community: each node is a community, with these pages
    members: list[list[str]] | None = None
    #: pages in no community (the overview), or the community shown (its name)
    alone: int = 0
    community: str | None = None
    #: made with the graph, off the GUI thread (see :func:`finish`): every edge as a segment
    #: ((m, 4): x0, y0, x1, y1), the namespaces the filter offers, the not-yet-written targets
    segments: np.ndarray | None = None
    namespace_choices: list[str] | None = None
    unresolved: np.ndarray | None = None
    #: each node's position in ``ids``, by id (made with the graph: see :func:`node_index`)
    index: dict[str, int] | None = None
    #: a wiki without layers (see :func:`page_groups`): what colours its pages ("folder" or
    #: "tag"), the coloured groups' names (biggest first) and each node's group (its position in
    #: ``group_names``; ``len(group_names)``: another group; -1: not a page)
    group_by: str | None = None
    group_names: list[str] = field(default_factory=list)
    groups: np.ndarray | None = None


def finish(data: GraphData) -> GraphData:
    """Compute what every redraw of ``data`` needs, in the builder's thread: at 50,000 nodes and
    190,000 edges the GUI thread's first redraw spent 30-60 ms on them."""
    data.kinds = kind_codes(data.layers) if data.kinds is None else data.kinds
    data.segments = np.ascontiguousarray(data.pos[data.edges].reshape(-1, 4)) if len(data.edges) \
        else np.zeros((0, 4))
    data.namespace_choices = sorted({n for n in data.namespaces if n})
    data.unresolved = ~data.resolved & (_layer_array(data) == "unresolved")
    data.index = {node: i for i, node in enumerate(data.ids)}
    return data


def node_index(d: GraphData, node_id: str) -> int | None:
    """Where the node ``node_id`` is in ``d.ids`` (None: not in the graph), from the table made
    with the graph: ``list.index`` over 50,000 ids was 6-18 ms of the GUI thread per redraw (the
    highlight looks up the open page each time)."""
    if d.index is None:  # (a graph made elsewhere: the builders give it)
        d.index = {node: i for i, node in enumerate(d.ids)}
    return d.index.get(node_id)


def _short(text: str, chars: int = LABEL_CHARS) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"


def kind_codes(layers: list[str]) -> np.ndarray:
    """Each node's kind as its position in NODE_Z (a layer of its own, else "deep"): computed with
    the graph, off the GUI thread (a Python loop over every node, 10-20 ms at 50,000)."""
    codes = {kind: i for i, kind in enumerate(NODE_Z)}
    deep = codes["deep"]
    return np.array([codes.get(layer, deep) for layer in layers], dtype=np.int64)


def _layer_array(d: GraphData) -> np.ndarray:
    """``d.layers`` as a numpy array, made once per graph (50,000 strings: tens of ms a redraw)."""
    if d.layer_array is None:
        d.layer_array = np.array(d.layers)
    return d.layer_array


def build_graph_data(wiki: Wiki, engine: LayoutEngine, center: str | None, depth: int,
                     full: bool = False, attachments: bool = False, members: list[str] | None = None,
                     numbering: Numbering | None = None) -> GraphData:
    """The graph as the operator sees it, laid out: all of it, ``depth`` hops around ``center``,
    or the pages ``members`` (a community of the overview), with the attachment files pages link
    to as nodes when ``attachments`` is set (all of it numbered by ``numbering`` when given)."""
    import gc

    from curator.engine.corpus.store import gc_paused

    # A full collection over the ~10^6 objects built here holds the interpreter lock, and so
    # the GUI thread, for half a second at 50,000 nodes; none of them are cyclic: build them with
    # the collector paused, then move them out of its sight (reference counting frees them).
    with gc_paused():
        data = _build_graph_data(wiki, engine, center, depth, full, attachments, members, numbering)
        gc.freeze()
    return data


@dataclass(slots=True)
class Numbered:
    """Nodes of a link graph numbered in sorted order, their unique links as index pairs and what
    the graph view shows of each node. The numbering of a whole graph (:func:`numbered`) is made
    once per graph by the graph view (:class:`Numbering`; the graph itself is kept until the
    pages change) and shared by the global view and the overview by community, which needs its
    pages only: at 32,000 pages, numbering
    it afresh for each (a sort of 50,000 ids, a Python loop over 190,000 links, one over every
    node) was ~0.5 s of the builder thread per view, its longest calls holding the interpreter
    lock the GUI thread waited for 25-55 ms at a time."""

    ids: list[str]
    edges: np.ndarray  # (m, 2) unique (low, high) index pairs, sorted
    labels: list[str]
    layers: list[str]  # page layer, "unresolved" or "attachment"
    namespaces: list[str]
    trust: np.ndarray
    resolved: np.ndarray  # bool: a page (not a target not yet written, nor an attachment)
    degree: np.ndarray
    folded_labels: list[str]
    kinds: np.ndarray
    layer_array: np.ndarray
    #: see GraphData: (group_by, group_names, groups), or None (the wiki has layers)
    grouping: tuple[str, list[str], np.ndarray] | None = None


def page_groups(graph: LinkGraph, ids: list[str]) -> tuple[str, list[str], np.ndarray] | None:
    """How the nodes ``ids`` of ``graph`` are coloured when no page of the wiki has a ``layer``:
    ("folder" or "tag", the GROUP_COLOURS biggest groups' names, each node's group as in
    :class:`GraphData`); None when some page has a layer, or every page falls in one group.
    The groups are those of the whole wiki, so a folder keeps its colour in every view of it.
    A folder is a top-level one, below the folders every page is in (a vault kept in ``wiki/``
    is coloured by ``wiki/people``, ``wiki/projects``...)."""
    pages = [node.page for node in graph.nodes.values() if node.page is not None]
    if any(page.meta.get("layer") is not None for page in pages):
        return None
    dirs = [page.path.split("/")[:-1] for page in pages]
    depth = 0
    while all(len(d) > depth for d in dirs) and len({d[depth] for d in dirs}) == 1:
        depth += 1

    def folder(page: Page) -> str:
        return "/".join(page.path.split("/")[:-1][:depth + 1]) or TOP_LEVEL

    def tag(page: Page) -> str:
        return page.tags[0] if page.tags else NO_TAG

    counts = Counter(map(folder, pages))
    by, key = "folder", folder
    if len(counts) < 2:
        counts = Counter(map(tag, pages))
        by, key = "tag", tag
        if len(counts) < 2:
            return None
    names = [name for name, _n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:GROUP_COLOURS]]
    code = {name: i for i, name in enumerate(names)}
    nodes, other = graph.nodes, len(names)
    groups = np.array([-1 if (page := nodes[node_id].page) is None else code.get(key(page), other)
                       for node_id in ids], dtype=np.int64)
    return by, names, groups


def _number(graph: LinkGraph, ids: list[str], edges: np.ndarray) -> Numbered:
    """The nodes ``ids`` of ``graph`` (sorted) with their links ``edges``, numbered."""
    nodes = graph.nodes
    labels, layers, namespaces = [], [], []
    trust = np.zeros(len(ids))
    resolved = np.zeros(len(ids), dtype=bool)
    for i, node_id in enumerate(ids):
        node = nodes[node_id]
        labels.append(node.label)
        if node.page is None:
            layers.append(node.layer)  # unresolved, or attachment
            namespaces.append("")
        else:
            layers.append(node.page.layer)
            namespaces.append(node.page.namespace)
            trust[i] = node.page.trust
            resolved[i] = True
    degree = np.bincount(edges.ravel(), minlength=len(ids)) if len(ids) else np.zeros(0)
    return Numbered(ids, edges, labels, layers, namespaces, trust, resolved, degree,
                    [label.casefold() for label in labels], kind_codes(layers), np.array(layers),
                    page_groups(graph, ids))


#: Linking pages whose links :func:`numbered` looks up per call into C (~6,000 links, 1-2 ms).
NUMBER_CHUNK = 1000


class Numbering:
    """The last graph one graph view numbered for one wiki and its numbering (see :class:`Numbered`),
    kept by the view: the global view and the overview by community of the same graph share it.
    The graph itself is not kept alive by it (the wiki's session holds it while it is current)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._graph: weakref.ref[LinkGraph] | None = None
        self._numbered: Numbered | None = None

    def of(self, graph: LinkGraph) -> Numbered:
        """Every node of ``graph`` numbered, made once for it."""
        with self._lock:
            if self._graph is not None and self._graph() is graph and self._numbered is not None:
                return self._numbered
        made = numbered(graph)
        with self._lock:
            self._graph, self._numbered = weakref.ref(graph), made
        return made


def numbered(graph: LinkGraph) -> Numbered:
    """Every node of ``graph`` numbered (see :class:`Numbered`)."""
    from curator.engine.graph.layout import unique_pairs

    ids = sorted(graph.nodes)  # (nearly sorted already: the pages in order, the other nodes among them)
    get = {n: i for i, n in enumerate(ids)}.__getitem__
    sources, targets = list(graph.out), list(graph.out.values())
    # every link's ends looked up in C (the target of every link is a node of the graph: what
    # _edge_pairs gives for every node), NUMBER_CHUNK linking pages per call: one call for all
    # 190,000 links held the interpreter lock 20-180 ms; between calls it changes hands
    pairs = []
    for start in range(0, len(sources), NUMBER_CHUNK):
        part = targets[start:start + NUMBER_CHUNK]
        lengths = np.fromiter(map(len, part), dtype=np.int64, count=len(part))
        src = np.fromiter(map(get, sources[start:start + NUMBER_CHUNK]), dtype=np.int64, count=len(part))
        dst = np.fromiter(map(get, chain.from_iterable(part)), dtype=np.int64, count=int(lengths.sum()))
        pairs.append(np.column_stack([np.repeat(src, lengths), dst]))
    return _number(graph, ids, unique_pairs(np.concatenate(pairs) if pairs else np.zeros((0, 2)), len(ids)))


def _page_subgraph(num: Numbered) -> tuple[list[str], np.ndarray]:
    """The pages of ``num`` (sorted) and the unique links between them as index pairs: what
    numbering the pages alone gives (a subsequence of a sorted list is sorted, and renumbering
    keeps each pair's order and the pairs' order)."""
    pages = np.flatnonzero(num.resolved)
    remap = np.full(len(num.ids), -1, dtype=np.int64)
    remap[pages] = np.arange(len(pages))
    pairs = remap[num.edges] if len(num.edges) else np.zeros((0, 2), dtype=np.int64)
    ids = num.ids
    return [ids[i] for i in pages.tolist()], pairs[(pairs >= 0).all(axis=1)]


def _edge_pairs(graph: LinkGraph, ids: list[str]) -> np.ndarray:
    """The links between ``ids`` as unique index pairs (an (m, 2) array), made unique in numpy:
    no sort of 200,000 string pairs (see ``LayoutEngine.layout_pairs``)."""
    from curator.engine.graph.layout import unique_pairs

    index = {n: i for i, n in enumerate(ids)}
    src: list[int] = []
    dst: list[int] = []
    for source, targets in graph.out.items():
        a = index.get(source)
        if a is None:
            continue
        for target in targets:
            b = index.get(target)
            if b is not None:
                src.append(a)
                dst.append(b)
    return unique_pairs(np.column_stack([np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)]),
                        len(ids))


def build_community_data(wiki: Wiki, numbering: Numbering | None = None) -> GraphData:
    """The overview by community (see :mod:`curator.engine.graph.communities`): one node per community
    of pages, named by its best-linked page, sized by membership, linked to the communities its
    pages link to. Computed off the GUI thread (Leiden itself in a worker process)."""
    import gc

    from curator.engine.corpus.store import gc_paused
    from curator.engine.graph.communities import find_communities
    from curator.engine.graph.link_graph import graph_for

    _pg()
    with gc_paused():
        graph = graph_for(wiki, OPERATOR, False)
        ids, pairs = _page_subgraph(numbering.of(graph) if numbering is not None else numbered(graph))
        found = find_communities(ids, pairs)
        gc.freeze()
    groups = found.communities
    labels = [f"{_short(graph.nodes[c.hub].label, LABEL_CHARS - 12)} ({len(c.members):,} pages)" for c in groups]
    n = len(groups)
    edges = np.array([(a, b) for a, b, _links in found.edges], dtype=np.int64).reshape(-1, 2)
    degree = np.bincount(edges.ravel(), minlength=n) if n else np.zeros(0, dtype=np.int64)
    layers = ["community"] * n
    return finish(GraphData([f"community:{i}" for i in range(n)], labels, layers, [""] * n, np.zeros(n), degree,
                     np.ones(n, dtype=bool), np.array(found.positions, dtype=float).reshape(-1, 2), edges,
                     folded_labels=[label.casefold() for label in labels], layer_array=np.array(layers),
                     kinds=kind_codes(layers), members=[c.members for c in groups], alone=found.alone))


def _build_graph_data(wiki: Wiki, engine: LayoutEngine, center: str | None, depth: int,
                      full: bool, attachments: bool, members: list[str] | None = None,
                      numbering: Numbering | None = None) -> GraphData:
    from curator.engine.graph.layout import ELSEWHERE_ABOVE, LayoutProcess

    # A big wiki's global graph is laid out in a worker process (see LayoutProcess), started
    # now: it imports and reads the position cache while the graph is computed here.
    elsewhere = LayoutProcess(engine.cache_path) if center is None and members is None and \
        wiki.store.count() > ELSEWHERE_ABOVE else None
    try:
        return _graph_data_laid_out(wiki, engine, elsewhere, center, depth, full, attachments, members, numbering)
    finally:
        if elsewhere is not None:
            elsewhere.close()


def _graph_data_laid_out(wiki: Wiki, engine: LayoutEngine, elsewhere: LayoutProcess | None, center: str | None,
                         depth: int, full: bool, attachments: bool, members: list[str] | None,
                         numbering: Numbering | None = None) -> GraphData:
    from curator.engine.graph.layout import LayoutEngine
    from curator.engine.graph.link_graph import graph_for

    _pg()  # imported here, off the GUI thread (half a second), before the view first draws
    graph = graph_for(wiki, OPERATOR, attachments)
    if members is not None:
        center = None
        nodes = {m for m in members if m in graph.nodes}
        engine = LayoutEngine()  # nor a community's
    elif center is not None and center in graph.nodes:
        nodes = set(graph.bfs(center, depth))
        engine = LayoutEngine()  # a local view must not disturb the global positions
    else:
        center = None
        nodes = None  # every node: the graph's numbering
    if nodes is None:
        num = numbering.of(graph) if numbering is not None else numbered(graph)
    else:
        ids = sorted(nodes)
        num = _number(graph, ids, _edge_pairs(graph, ids))
    ids, edges = num.ids, num.edges
    start = time.perf_counter()
    glob = center is None and members is None
    pos = elsewhere.layout(ids, edges, full=full and glob, save=glob) if elsewhere is not None else None
    if pos is not None:
        engine.forget()  # (the process saved the cache: a layout in place reads it again first)
    else:
        pos_map = engine.layout_pairs(ids, edges, full=full and center is None)
        if glob:
            engine.save()
        pos = np.array([pos_map.get(n, (0.0, 0.0)) for n in ids], dtype=float).reshape(-1, 2)
    elapsed = time.perf_counter() - start
    # (copies: a whole graph's numbering is shared by every view of it)
    data = GraphData(list(ids), list(num.labels), list(num.layers), list(num.namespaces), num.trust.copy(),
                     num.degree.copy(), num.resolved.copy(), pos, edges.copy(), center, elapsed,
                     list(num.folded_labels), kinds=num.kinds.copy(), layer_array=num.layer_array.copy())
    if num.grouping is not None:
        data.group_by, names, groups = num.grouping
        data.group_names, data.groups = list(names), groups.copy()
    return finish(data)


class GraphView(WikiView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.data: GraphData | None = None
        self._engines: dict[int, LayoutEngine] = {}
        #: per wiki: the last graph numbered for the global view and the communities (see Numbering)
        self._numberings: dict[int, Numbering] = {}
        self._stale = True
        self._busy = False
        self._shown_index = np.zeros(0, dtype=np.int64)

        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        self.mode.setToolTip("Global graph, the pages around the open page, or the wiki's communities "
                             "(click one to see its pages)")
        self.back_button = QPushButton("Back to communities")
        self.back_button.setVisible(False)
        self.back_button.clicked.connect(self.show_communities)
        self._mode_auto = True  # the overview by community at scale, until the operator picks a mode
        self._community: tuple[str, list[str]] | None = None  # the community shown (name, pages)
        self.depth_slider = QSlider(Qt.Orientation.Horizontal)
        self.depth_slider.setRange(1, 4)
        self.depth_slider.setValue(2)
        self.depth_slider.setFixedWidth(90)
        self.depth_label = QLabel("Depth 2")
        self.size_by = QComboBox()
        self.size_by.addItems(["Size: trust", "Size: links"])
        self.ghosts = QCheckBox("Unresolved")
        self.ghosts.setChecked(True)
        self.ghosts.setToolTip("Show links to pages not yet written as ghost nodes")
        self.orphans = QCheckBox("Orphans")
        self.orphans.setChecked(True)
        self.attachments = QCheckBox("Attachments")
        self.attachments.setToolTip("Show the files pages link to or embed (images, PDFs, canvases)")
        self.relayout = QPushButton("Re-layout")
        top = QHBoxLayout()
        for w in (self.wiki_choice, self.mode, self.back_button, self.depth_label, self.depth_slider, self.size_by,
                  self.relayout):
            top.addWidget(w)
        top.addStretch(1)

        filters = QHBoxLayout()
        filters.addWidget(self.ghosts)
        filters.addWidget(self.orphans)
        filters.addWidget(self.attachments)
        self.layer_buttons = layer_toggles(filters, self._redraw)
        # a wiki without layers: which colour is which folder or tag (the layer toggles hidden)
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setVisible(False)
        #: the legend's entries: each group's name and colour ("other" last, when there are more)
        self.legend_entries: list[tuple[str, QColor]] = []
        filters.addStretch(1)
        more = QHBoxLayout()
        more.addWidget(QLabel("Min trust"))
        self.min_trust = QDoubleSpinBox()
        self.min_trust.setRange(0, 1)
        self.min_trust.setSingleStep(0.1)
        self.min_trust.valueChanged.connect(self._redraw)
        more.addWidget(self.min_trust)
        self.namespace = QComboBox()
        self.namespace.addItem("All namespaces")
        self.namespace.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.namespace.setMinimumContentsLength(8)
        self.namespace.currentTextChanged.connect(self._redraw)
        more.addWidget(self.namespace)
        self.title_filter = QLineEdit()
        self.title_filter.setPlaceholderText("Filter by title…")
        self.title_filter.setClearButtonEnabled(True)
        self.title_filter.textChanged.connect(self._redraw)
        self.title_filter.setMinimumWidth(60)
        more.addWidget(self.title_filter, 1)
        self.info = QLabel()
        self.info.setWordWrap(True)  # (a big graph's counts and hints run past the view's width)

        # The plot (pyqtgraph: half a second to import) is built when first needed, not while
        # the station opens: see :meth:`_ensure_plot`.
        self._plot: Any = None
        self._plot_asked = False
        self._plot_slot = QWidget()
        self._orphans_auto = True  # the orphan default follows the graph's size until toggled
        self._ghosts_auto = True  # so does the unresolved one
        self._draw_generation = 0  # bumped by each redraw: a chunk of an older one is dropped
        self._fit_pending = False
        self._used: dict[str, int] = {}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(filters)
        layout.addLayout(more)
        layout.addWidget(self.legend)
        layout.addWidget(self._plot_slot, 1)
        layout.addWidget(self.info)
        self._labels: list[Any] = []
        self._spare_labels: list[Any] = []  # label items hidden in the plot, to be reused
        self._label_nodes: list[int] = []
        #: the labels of the placement before, by node, that the one under way has not placed or
        #: hidden yet (see _draw_labels); and that placement's number (a newer one takes over)
        self._labels_before: dict[int, Any] = {}
        self._label_generation = 0
        self._placing = False
        self._hover_index: int | None = None
        self._hover_source: Any = None  # the hit-target item that reported the hovered node

        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.depth_slider.valueChanged.connect(self._depth_changed)
        self.size_by.currentIndexChanged.connect(self._redraw)
        self.ghosts.toggled.connect(self._redraw)
        self.ghosts.clicked.connect(self._ghosts_chosen)
        self.orphans.toggled.connect(self._redraw)
        self.orphans.clicked.connect(self._orphans_chosen)
        # labels are placed in screen space: recompute them when the view moves or zooms
        self._relabel = QTimer(self)
        self._relabel.setSingleShot(True)
        self._relabel.setInterval(60)
        self._relabel.timeout.connect(self._draw_labels)
        host.ready.connect(self._update_highlight)
        self.attachments.toggled.connect(lambda _on: self.reload())
        self.relayout.clicked.connect(lambda: self.reload(full=True))
        self.wiki_choice.currentIndexChanged.connect(lambda _i: self.reload())
        host.workspace.loaded.connect(lambda _s: self._mark_stale())
        host.workspace.pages_changed.connect(lambda _s: self._mark_stale())
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self.reload)

    def _ensure_plot(self) -> Any:
        if self._plot is not None:
            return self._plot
        pg = _pg()
        from curator.views.graph.edges import EdgeLayer, GraphPlot, Marker

        # (a view box alone, without a PlotItem's axes and forms, nor context menus: see GraphPlot)
        plot = self._plot = GraphPlot(self.palette().base().color())
        plot.setAspectLocked(True)
        # Edges are line segments in an opaque grey, the colour a translucent one took over the
        # background (an opaque pen is an order of magnitude faster to rasterise), stroked into
        # an image by a worker thread and only blitted on the GUI thread (see graph_edges): a
        # PlotCurveItem stroked them all in every paint, 70-110 ms at 32,000 pages.
        self.edges_item = EdgeLayer(_edge_colour(self.palette().base().color()))
        plot.addItem(self.edges_item, ignoreBounds=True)  # (framed by the nodes' hit targets: see its boundingRect)
        # The nodes are drawn into the edge layer's image too, over the edges (see graph_edges).
        # The mouse finds them in scatter items that never paint: one per kind of node, each with
        # one symbol and no per-point styling, so a redraw is one setData of numpy arrays per
        # kind (the items, in chunks of DRAW_CHUNK points, are made as the nodes are drawn).
        self.node_items: dict[str, list[Any]] = {kind: [] for kind in NODE_Z}
        # the selected (open) page: a ring drawn over its node
        self.highlight_item = Marker(pxMode=True, brush=None, size=22,
                                                 pen=pg.mkPen(HIGHLIGHT_COLOR, width=3))
        plot.addItem(self.highlight_item, ignoreBounds=True)
        # the node under the mouse, drawn again bigger and outlined over every other node (the
        # nodes are pixels of the edge layer's image: only this one point is painted by Qt)
        self.hover_item = Marker(pxMode=True, pen=pg.mkPen(self.palette().text().color(), width=1.5))
        self.hover_item.setZValue(max(NODE_Z.values()) + 1)
        plot.addItem(self.hover_item, ignoreBounds=True)
        self.label_item = pg.TextItem(anchor=(0.5, 1.4), color=self.palette().text().color())
        # (the markers and labels never count in framing a graph: the hovered community's empty
        # label stayed where it was, and a community opened from the overview was drawn off to one side)
        plot.addItem(self.label_item, ignoreBounds=True)
        plot.scene().sigMouseClicked.connect(self._scene_clicked)
        # labels are placed in screen space: recompute them when the view moves or zooms
        plot.plotItem.vb.sigRangeChanged.connect(lambda *_a: self._relabel.start())
        layout = self.layout()
        assert layout is not None  # made in __init__
        layout.replaceWidget(self._plot_slot, plot)
        self._plot_slot.deleteLater()
        return plot

    @property
    def plot(self) -> Any:
        """The pyqtgraph ``PlotWidget`` (built on first use)."""
        return self._ensure_plot()

    # --- loading ----------------------------------------------------------------------
    @property
    def local(self) -> bool:
        return self.mode.currentIndex() == 1

    @property
    def by_community(self) -> bool:
        """Whether the view shows the overview by community (or one community of it)."""
        return self.mode.currentIndex() == 2

    def _mode_changed(self, _index: int) -> None:
        self._mode_auto = False
        self._community = None
        self.reload()

    def _set_mode(self, index: int) -> None:
        self.mode.blockSignals(True)
        self.mode.setCurrentIndex(index)
        self.mode.blockSignals(False)

    def show_communities(self) -> None:
        """The overview by community (from one community: back to all of them)."""
        self._community = None
        self._set_mode(2)
        self.reload()

    def expand_community(self, i: int) -> None:
        """Show the pages of community ``i`` of the overview (a click on its node)."""
        d = self.data
        if d is None or d.members is None or not 0 <= i < len(d.members):
            return
        self._community = (d.labels[i], d.members[i])
        self.reload()

    def _mark_stale(self) -> None:
        self._stale = True
        self._maybe_reload()

    def _maybe_reload(self) -> None:
        if self._stale and self.isVisible() and self.host.workspace.ready:
            self._debounce.start()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._plot is None:
            # pyqtgraph imported off the GUI thread, then the plot made, then the graph computed
            # (the builder waits for that import anyway): made while the builder ran, the plot's
            # Qt calls each waited for the interpreter lock it held (50-170 ms under load)
            if not self._plot_asked:
                from curator.views.tasks import run_task

                self._plot_asked = True
                run_task(_pg, lambda _module: self._plot_made(), lambda _exc: self._maybe_reload(), owner=self)
            return
        self._maybe_reload()

    def _plot_made(self) -> None:
        self._ensure_plot()
        self._maybe_reload()

    def _depth_changed(self, value: int) -> None:
        self.depth_label.setText(f"Depth {value}")
        if self.local:
            self.reload()

    def center_on(self, path: str) -> None:
        """Show the local graph around ``path`` (double-click on a node)."""
        self._mode_auto = False
        self._community = None
        self._set_mode(1)
        self.reload(center=path)

    def reload(self, full: bool = False, center: str | None = None) -> None:
        if not self.host.workspace.ready:
            return
        index = self.wiki_index
        if self._mode_auto:  # a big wiki opens on its communities
            self._set_mode(2 if self.host.workspace.wiki(index).store.count() > COMMUNITIES_ABOVE else 0)
        self.back_button.setVisible(self.by_community and self._community is not None)
        if self.by_community and self._community is None:
            self._stale = False
            self.info.setText("Finding communities…")
            numbering = self._numbering(index)
            self.host.workspace.read(index, lambda wiki: build_community_data(wiki, numbering), self._show,
                                     lambda exc: self.info.setText(f"Graph failed: {exc}"))
            return
        community = self._community if self.by_community else None
        members = community[1] if community is not None else None
        if self.local and center is None:
            current = self.host.current
            center = current[1] if current and current[0] == index else None
        engines = self._engines
        numbering = self._numbering(index)
        depth = self.depth_slider.value()
        files = self.attachments.isChecked()
        self._stale = False
        self.info.setText("Laying out…")

        def build(wiki: Wiki) -> GraphData:
            # igraph (a tenth of a second to import) and the position cache (tens of thousands
            # of entries) are loaded here, off the GUI thread
            from curator.engine.graph.layout import engine_for

            engine = engines.get(index)
            if engine is None:
                engine = engines.setdefault(index, engine_for(wiki.state_dir))
            data = build_graph_data(wiki, engine, center, depth, full, files, members,
                                    None if files else numbering)
            if community is not None:
                data.community = community[0]
            return data

        self.host.workspace.read(index, build, self._show, lambda exc: self.info.setText(f"Graph failed: {exc}"))

    def _numbering(self, index: int) -> Numbering:
        return self._numberings.setdefault(index, Numbering())

    def _orphans_chosen(self, _checked: bool) -> None:
        self._orphans_auto = False  # the operator decided: keep their choice

    def _ghosts_chosen(self, _checked: bool) -> None:
        self._ghosts_auto = False

    def _show(self, data: GraphData) -> None:
        self._ensure_plot()
        self.data = data
        pages = data.members is None  # the overview's nodes are communities: page filters do not apply
        for widget in (self.ghosts, self.orphans, self.attachments, self.min_trust, self.namespace, self.size_by,
                       *self.layer_buttons.values()):
            widget.setEnabled(pages)
        self._clear_hover()  # a hovered node belongs to the graph that was shown before
        many = data.center is None and data.community is None and int(data.resolved.sum()) > ORPHAN_HIDE_ABOVE
        for auto, box in ((self._orphans_auto, self.orphans), (self._ghosts_auto, self.ghosts)):
            if auto:  # a big global graph starts with orphans and not-yet-written targets hidden
                box.blockSignals(True)
                box.setChecked(not many)
                box.blockSignals(False)
        namespaces = data.namespace_choices
        if namespaces is None:  # (a graph made elsewhere: the builders give them)
            namespaces = finish(data).namespace_choices or []
        current = self.namespace.currentText()
        self.namespace.blockSignals(True)
        self.namespace.clear()
        self.namespace.addItem("All namespaces")
        self.namespace.addItems(namespaces)
        self.namespace.setCurrentText(current if current in namespaces else "All namespaces")
        self.namespace.blockSignals(False)
        self._update_legend(data)
        self._fit_pending = True
        self._redraw()

    def _update_legend(self, d: GraphData) -> None:
        """Show which colour is which group for a wiki coloured by folder or tag, in place of the
        layer toggles (every page of such a wiki is "deep": the layers' colours would mislead)."""
        grouped = d.groups is not None and d.group_by is not None
        for button in self.layer_buttons.values():
            button.setVisible(not grouped)
        self.legend_entries = []
        if grouped:
            n = len(d.group_names)
            entries = [(name, _group_brush(g, n).color()) for g, name in enumerate(d.group_names)]
            assert d.groups is not None
            if bool((d.groups == n).any()):
                entries.append(("other", _group_brush(n, n).color()))
            self.legend_entries = entries
            swatches = "&nbsp; ".join(f'<span style="color:{colour.name()}">&#9632;</span>&nbsp;{html.escape(name)}'
                                      for name, colour in entries)
            self.legend.setText(f"Colour by {d.group_by}: {swatches}")
            self.legend.setToolTip(f"No page has a layer: pages are coloured by {d.group_by}"
                                   + (f" (the {n} biggest; the rest are other)" if len(entries) > n else ""))
        self.legend.setVisible(grouped)

    def _node_brush(self, i: int, kind_brush: Any) -> Any:
        """The brush node ``i`` is drawn with: its group's in a wiki coloured by folder or tag."""
        d = self.data
        if d is None or d.groups is None or d.groups[i] < 0:
            return kind_brush
        return _group_brush(int(d.groups[i]), len(d.group_names))

    # --- drawing ----------------------------------------------------------------------
    def visible_mask(self) -> np.ndarray:
        d = self.data
        if d is None:
            return np.zeros(0, dtype=bool)
        needle = self.title_filter.text().strip().casefold()
        if d.members is not None:  # the overview by community: only the title filter applies
            return np.array([needle in label for label in d.folded_labels], dtype=bool).reshape(-1)
        layers = _layer_array(d)
        allowed = [name for name, b in self.layer_buttons.items() if b.isChecked()]
        if self.ghosts.isChecked():
            allowed.append("unresolved")
        if self.attachments.isChecked():
            allowed.append("attachment")
        mask = np.isin(layers, allowed)
        mask &= ~d.resolved | (d.trust >= self.min_trust.value() - 1e-9)
        ns = self.namespace.currentText()
        if ns != "All namespaces":
            mask &= np.array([n == ns for n in d.namespaces]) | ~d.resolved
        if needle:
            mask &= np.array([needle in label for label in d.folded_labels])
        if not self.orphans.isChecked():
            mask &= d.degree > 0
        if d.center is not None:
            c = node_index(d, d.center)
            if c is not None:
                mask[c] = True
        return mask

    def _redraw(self, *_args: object) -> None:
        d = self.data
        if d is None:
            return
        mask = self.visible_mask()
        shown = np.flatnonzero(mask)
        self._shown_index = shown
        remap = np.full(len(d.ids), -1, dtype=np.int64)
        remap[shown] = np.arange(len(shown))
        if d.members is not None:  # a community: by how many pages it holds
            counts = np.array([len(m) for m in d.members], dtype=float)
            sizes = np.rint(8 + 32 * np.sqrt(counts[shown] / max(counts.max(), 1)))  # 8 to 40 px
        elif self.size_by.currentIndex() == 0:
            sizes = 6 + 12 * d.trust[shown]
        else:
            sizes = 6 + 3 * np.sqrt(np.minimum(d.degree[shown], 100))
        sizes = np.rint(np.where(d.resolved[shown], sizes, 6))
        center = node_index(d, d.center) if d.center is not None else None
        if center is not None and remap[center] >= 0:
            c = int(remap[center])
            sizes[c] = max(sizes[c], 20)
        kinds = self._kinds(d)[shown]
        self._draw_generation += 1
        chunks = []
        nodes: list[NodeGroup] = []
        for code, kind in enumerate(self.node_items):
            mine = kinds == code
            pos, size, index = d.pos[shown[mine]], sizes[mine], shown[mine]
            if d.groups is not None and kind in LAYER_COLORS:  # pages of a wiki without layers
                groups, n = d.groups[index], len(d.group_names)
                nodes += [(SYMBOLS[kind], _group_brush(g, n).color(), pos[groups == g], size[groups == g])
                          for g in range(n + 1)]
            else:
                nodes.append((SYMBOLS[kind], _brush(kind).color(), pos, size))
            for n, start in enumerate(range(0, max(len(index), 1), DRAW_CHUNK)):
                part = slice(start, start + DRAW_CHUNK)
                chunks.append((kind, n, pos[part], size[part], index[part]))
        every = d.segments if d.segments is not None else finish(d).segments
        assert every is not None
        keep = mask[d.edges[:, 0]] & mask[d.edges[:, 1]] if len(d.edges) else np.zeros(0, dtype=bool)
        # (the kinds in NODE_Z's order: bottom up; the kept edges picked by the drawing worker;
        # a kept edge joins two shown nodes, so the nodes' extent is the whole picture's)
        shown_pos = d.pos[shown]
        extent = (*shown_pos.min(axis=0), *shown_pos.max(axis=0)) if len(shown) else None
        self.edges_item.set_segments(every, nodes, keep, extent=extent)
        if self._hover_index is not None and not self._hover_shown():
            self._clear_hover()  # never a label or a marker whose node is gone
        self._clear_labels()  # placed again once the nodes are drawn (see _draw_chunks)
        self._update_highlight()
        pages = int(d.resolved[shown].sum())
        where = f" around {d.labels[center]}" if d.center and center is not None else ""
        if d.community:
            where = f" in the community of {d.community}"
        text = f"{plural(pages, 'page')}, {len(shown) - pages:,} not yet written{where}"
        if d.members is not None:
            text = (f"{plural(len(shown), 'community', 'communities')} of "
                    f"{plural(sum(len(m) for m in d.members), 'page')} (Leiden); {plural(d.alone, 'page')} in none. "
                    "Click a community to see its pages")
        hidden = self.hidden_orphans()
        if hidden:
            text += f"; {hidden:,} orphans hidden (tick Orphans to show them)"
        ghosts = self.hidden_ghosts()
        if ghosts:
            text += f"; {ghosts:,} not yet written hidden (tick Unresolved to show them)"
        self.info.setText(text)
        # the nodes from the next event-loop turn on (the first chunk's ~10 ms of pyqtgraph
        # added to this turn's ~10 ms of its own made one 40-70 ms stall under load)
        generation = self._draw_generation
        QTimer.singleShot(0, self, lambda: self._draw_chunks(generation, chunks, first=True))

    def _node_item(self, kind: str, n: int) -> Any:
        """The ``n``-th scatter item of a kind of node (made on first use)."""
        items = self.node_items[kind]
        while len(items) <= n:
            from curator.views.graph.edges import HitTargets

            item = HitTargets(pxMode=True, hoverable=True, pen=None, brush=_brush(kind),
                              symbol=SYMBOLS[kind], tip=self._tip)
            item.setZValue(NODE_Z[kind])
            item.sigClicked.connect(self._clicked)
            item.sigHovered.connect(self._hovered)
            self.plot.addItem(item)
            items.append(item)
        return items[n]

    def _draw_chunks(self, generation: int, chunks: list[tuple[str, int, Any, Any, Any]],
                     first: bool = False) -> None:
        """Hand the nodes to pyqtgraph one chunk per event-loop turn (its per-point work is
        ~10 us a point: 50,000 nodes at once froze the GUI thread for a second), then clear the
        items the graph no longer needs."""
        if generation != self._draw_generation:
            return  # a newer redraw took over
        if first:
            self._used = {kind: 0 for kind in self.node_items}
            # no repaint between chunks: each one re-drew every edge (50-70 ms at 32,000 pages);
            # the plot paints once, when every node is in place
            self.plot.setUpdatesEnabled(False)
        budget = DRAW_CHUNK
        while chunks and budget > 0:
            kind, n, pos, size, index = chunks.pop(0)
            self._node_item(kind, n).setData(pos=pos, size=size, data=index)
            self._used[kind] = max(self._used[kind], n + 1 if len(index) else 0)
            budget -= max(len(index), 1)
        if chunks:
            QTimer.singleShot(0, lambda: self._draw_chunks(generation, chunks))
            return
        for kind, items in self.node_items.items():
            for item in items[self._used[kind]:]:
                if len(item.data):
                    item.setData([])
        self.plot.setUpdatesEnabled(True)
        if self._fit_pending:  # a new graph: frame it once every node is in place
            self._fit_pending = False
            self.plot.autoRange()  # (the labels follow the range change: see _relabel)
            self._relabel.start()
            self.edges_item.when_drawn(self.mark_ready)  # the edges too, drawn off the GUI thread
        else:  # in its own event-loop turn: placing them measures every candidate's text
            QTimer.singleShot(0, self._draw_labels)

    def _kinds(self, d: GraphData) -> np.ndarray:
        """Each node's kind as the position of its scatter item in :attr:`node_items`."""
        if d.kinds is None:  # (a graph made elsewhere: the builders give them)
            d.kinds = kind_codes(d.layers)
        return d.kinds

    def hidden_orphans(self) -> int:
        """Pages without links that the Orphans filter hides right now."""
        d = self.data
        if d is None or self.orphans.isChecked():
            return 0
        return int((d.resolved & (d.degree == 0)).sum())

    def hidden_ghosts(self) -> int:
        """Targets not yet written that the Unresolved filter hides right now."""
        d = self.data
        if d is None or self.ghosts.isChecked():
            return 0
        unresolved = d.unresolved if d.unresolved is not None else finish(d).unresolved
        return int(np.count_nonzero(unresolved)) if unresolved is not None else 0

    def _hover_shown(self) -> bool:
        i = self._hover_index
        return i is not None and bool(np.isin(i, self._shown_index))

    def _draw_labels(self) -> None:
        """Titles of the best-connected pages in view (and the centre); hover shows the rest.

        Candidates are the LABEL_LIMIT shown pages with the most links inside the visible range;
        each is placed only where it overlaps no label already placed (screen space, so it is
        recomputed after every zoom and pan), and every label sits on its node: labels are
        rebuilt from the shown nodes each time, never left from an earlier graph. The text items
        stay in the plot once made (adding or removing one costs pyqtgraph a few milliseconds of
        view bookkeeping, 60 of them a relabel); a label not placed is hidden, and a node labelled
        before keeps its item (only moved). The candidates are placed LABEL_SLICE per event-loop
        turn at most, and no more once a turn has taken LABEL_TURN_SECONDS (all 60 in one turn
        were 30-120 ms of GUI thread at 32,000 pages, sharing the interpreter lock with the edges'
        rendering); a newer placement takes over from one under
        way, with the labels that one had not dealt with yet.
        """
        self._label_generation += 1
        self._placing = True
        before = self._labels_before
        before.update(zip(self._label_nodes, self._labels, strict=True))
        self._labels, self._label_nodes = [], []
        d = self.data
        ranked = self._label_candidates(d) if d is not None and len(self._shown_index) else []
        self._place_labels(self._label_generation, ranked, [])

    def _place_labels(self, generation: int, ranked: list[int], placed: list[Any]) -> None:
        """Place the next candidates of ``ranked`` (LABEL_SLICE at most, fewer once this turn has
        taken LABEL_TURN_SECONDS; see :meth:`_draw_labels`; ``placed``: the scene rectangles of
        the labels placed so far), then the rest in a later turn; at the end, hide the labels of
        the placement before that were not placed again."""
        if generation != self._label_generation:
            return  # a newer placement took over
        d = self.data
        before, spare = self._labels_before, self._spare_labels
        if d is not None and ranked:
            color = self.palette().text().color()
            vb = self.plot.plotItem.vb
            bounds = vb.sceneBoundingRect()
            began, count = time.perf_counter(), 0
            for i in ranked[:LABEL_SLICE]:
                if count and time.perf_counter() - began >= LABEL_TURN_SECONDS:
                    break
                count += 1
                text = d.labels[i] if d.members is not None else _short(d.labels[i])  # (a community's is short)
                item = before.pop(i, None)
                if item is None:
                    item = spare.pop() if spare else self._new_label()
                if item.toPlainText() != text or item.color != color:
                    item.setText(text, color if item.color != color else None)
                item.setVisible(True)
                item.updateTransform()  # (a hidden text item does not follow the view's zoom)
                item.setPos(*d.pos[i])
                # a node near the left or right edge: its label is moved inwards, as far as it must
                # (centred on its node, it was cut by the edge)
                x, width = vb.mapViewToScene(QPointF(*d.pos[i])).x(), item.sceneBoundingRect().width()
                lo, hi = (x + width - bounds.right()) / width, (x - bounds.left()) / width
                side = min(max(0.5, lo), hi) if lo <= hi else 0.5
                if abs(item.anchor.x() - side) > 1e-6:
                    item.setAnchor((side, LABEL_ANCHOR_Y))
                rect = item.sceneBoundingRect()
                if any(rect.intersects(other) for other in placed):
                    item.setVisible(False)
                    spare.append(item)
                    continue
                placed.append(rect)
                self._labels.append(item)
                self._label_nodes.append(int(i))
            rest = ranked[count:]
            if rest:
                QTimer.singleShot(0, self, lambda: self._place_labels(generation, rest, placed))
                return
        for item in before.values():  # nodes no longer labelled
            item.setVisible(False)
            spare.append(item)
        before.clear()
        self._placing = False

    def placing_labels(self) -> bool:
        """Whether a placement of the labels is under way (see :meth:`_draw_labels`)."""
        return self._placing

    def _new_label(self) -> Any:
        item = _pg().TextItem("", color=self.palette().text().color(), anchor=(0.5, LABEL_ANCHOR_Y))
        self.plot.addItem(item, ignoreBounds=True)
        return item

    def _label_candidates(self, d: GraphData) -> list[int]:
        """The shown pages that may get a label, best first (the centre first of all)."""
        shown = self._shown_index
        vb = self.plot.plotItem.vb
        (x0, x1), (y0, y1) = vb.viewRange()
        pos = d.pos[shown]
        inside = shown[(pos[:, 0] >= x0) & (pos[:, 0] <= x1) & (pos[:, 1] >= y0) & (pos[:, 1] <= y1)]
        pages = inside[d.resolved[inside]]
        weight = d.degree if d.members is None else np.array([len(m) for m in d.members])  # communities: size
        ranked = [int(i) for i in pages[np.argsort(-weight[pages], kind="stable")][:LABEL_LIMIT]]
        c = node_index(d, d.center) if d.center is not None else None
        if c is not None and c in shown:
            ranked = [c, *[i for i in ranked if i != c]]
        return ranked

    def _clear_labels(self) -> None:
        self._label_generation += 1  # (a placement under way stops)
        self._placing = False
        labels = [*self._labels, *self._labels_before.values()]
        for item in labels:
            item.setVisible(False)
        self._spare_labels.extend(labels)  # hidden in the plot, kept for the next placement
        self._labels = []
        self._label_nodes = []
        self._labels_before = {}

    def label_nodes(self) -> list[str]:
        """Ids of the nodes that carry a permanent label now (for tests)."""
        d = self.data
        return [] if d is None else [d.ids[i] for i in self._label_nodes]

    def _update_highlight(self) -> None:
        """Ring the open page's node, when it is in the graph and shown."""
        d = self.data
        if self._plot is None:
            return  # nothing drawn yet
        current = self.host.current
        spots: list[Any] = []
        if d is not None and current is not None and current[0] == self.wiki_index:
            i = node_index(d, current[1])
            if i is not None and np.isin(i, self._shown_index):
                spots = [d.pos[i]]
        self.highlight_item.setData(pos=np.array(spots, dtype=float).reshape(-1, 2))

    def highlighted(self) -> str | None:
        """The id of the node ringed as selected (for tests)."""
        return self._marked_node(self.highlight_item) if self._plot is not None else None

    def _tip(self, x: float, y: float, data: Any) -> str:
        d = self.data
        if d is None:
            return ""
        i = int(data)
        if d.members is not None:
            return f"{d.labels[i]}\nclick to see its pages"
        if not d.resolved[i]:
            return f"{d.labels[i]} (not yet written)"
        return f"{d.labels[i]}\n{d.ids[i]}\n{d.layers[i]}, trust {d.trust[i]:.2f}, {plural(int(d.degree[i]), 'link')}"

    def _hovered(self, item: Any, points: Any, _ev: Any) -> None:
        # Every hit-target item near the mouse reports (one per kind and chunk, topmost first):
        # only the one whose node is shown may take the marker away, not the others, empty.
        d = self.data
        if d is None or len(points) == 0:
            if d is None or item is self._hover_source:
                self._clear_hover()
            return
        point = points[0]
        i = int(point.data())
        self._hover_index = i
        self._hover_source = item
        # (a node with its permanent label shown keeps that one: never two labels for a node)
        self.label_item.setText("" if i in self._label_nodes else d.labels[i])
        self.label_item.setPos(*d.pos[i])
        size = float(point.size())
        self.hover_item.setData(pos=d.pos[i:i + 1], size=[max(size * HOVER_GROWTH, size + 6)],
                                symbol=[point.symbol()], brush=[self._node_brush(i, point.brush())])

    def _clear_hover(self) -> None:
        self._hover_index = None
        self._hover_source = None
        if self._plot is not None:
            self.label_item.setText("")
            self.hover_item.clear()

    def hovered(self) -> str | None:
        """The id of the node drawn as hovered (for tests)."""
        return self._marked_node(self.hover_item) if self._plot is not None else None

    def _marked_node(self, item: Any) -> str | None:
        """The id of the node a one-point marker item is drawn over (None: none)."""
        d = self.data
        if d is None or not len(item.data):
            return None
        x, y = item.data["x"][0], item.data["y"][0]
        hits = np.flatnonzero((d.pos[:, 0] == x) & (d.pos[:, 1] == y))
        return d.ids[int(hits[0])] if len(hits) else None

    def _clicked(self, _item: Any, points: Any, _ev: Any) -> None:
        d = self.data
        if d is None or len(points) == 0:
            return
        i = int(points[0].data())
        if d.members is not None:
            self.expand_community(i)
        elif d.resolved[i]:
            self.host.open_page((self.wiki_index, d.ids[i]))
            self._update_highlight()
        else:
            self.host.status(f"“{d.labels[i]}” is not yet written.")

    def _scene_clicked(self, ev: Any) -> None:
        if not ev.double() or self.data is None:
            return
        points = [p for items in self.node_items.values() for item in items
                  for p in item.pointsAt(item.mapFromScene(ev.scenePos()))]
        if len(points) and self.data.members is None:
            i = int(points[0].data())
            if self.data.resolved[i]:
                self.center_on(self.data.ids[i])

    def node_screen_pos(self, node_id: str) -> Any:
        """Where a node is drawn, in view coordinates (for tests)."""
        assert self.data is not None
        i = node_index(self.data, node_id)
        assert i is not None, node_id
        scene = self.plot.plotItem.vb.mapViewToScene(_pg().Point(*self.data.pos[i]))
        return self.plot.mapFromScene(scene)


def _edge_colour(background: QColor) -> QColor:
    """The edges' grey (128, 128, 128 at EDGE_ALPHA) blended over ``background``, opaque."""
    a = EDGE_ALPHA / 255
    return QColor(*(round(128 * a + c * (1 - a)) for c in (background.red(), background.green(),
                                                             background.blue())))


_BRUSHES: dict[str, Any] = {}


def _brush(layer: str) -> Any:
    brush = _BRUSHES.get(layer)
    if brush is None:
        color = QColor(GHOST_COLOR if layer == "unresolved" else ATTACHMENT_COLOR if layer == "attachment"
                       else COMMUNITY_COLOR if layer == "community" else LAYER_COLORS.get(layer, "#7f8c8d"))
        if layer == "unresolved":
            color.setAlpha(140)
        brush = _BRUSHES[layer] = _pg().mkBrush(color)
    return brush


_GROUP_BRUSHES: dict[tuple[int, int], Any] = {}


def _group_brush(group: int, count: int) -> Any:
    """The brush of group ``group`` of ``count`` coloured groups (``count`` and above: the rest):
    a colour of pyqtgraph's palette for telling data sets apart, spread over it (its colours run
    round the hues: two groups get two far apart, not neighbours)."""
    brush = _GROUP_BRUSHES.get((group, count))
    if brush is None:
        pg = _pg()
        if group >= count:
            colour = QColor(OTHER_COLOR)
        else:
            palette = pg.colormap.get(GROUP_PALETTE).getColors(mode="qcolor")[:-1]  # (its last is its first)
            colour = palette[group * len(palette) // count]
        brush = _GROUP_BRUSHES[group, count] = pg.mkBrush(colour)
    return brush
