"""The graph view's drawing layer: every link and every node drawn into an image off the GUI
thread, then blitted.

Stroking every edge of a 32,000-page graph (100,000+ line segments) costs QPainter 70-110 ms a
paint, all of it on the GUI thread when a ``PlotCurveItem`` draws them. This layer keeps one
image of the edges as they look under one view transform instead. A paint only draws that image
(moved and scaled by however the view changed since it was rendered, so a pan or a zoom follows
the mouse at once), and once the view has settled a worker thread strokes the edges again, for
the new view, into a new image that replaces the old one on the GUI thread. QPainter on a
``QImage`` may run on any thread; ``drawLines`` holds the interpreter lock while it rasterises,
so the edges go in calls of a few thousand and the GUI thread keeps running meanwhile.

The nodes are drawn into the same image, over the edges (a node's size is in pixels, as the
scatter items had them): pyqtgraph's scatter items painted 32,000 symbols on the GUI thread in
every paint, 70-80 ms of Python and pixmap blending at 32,000 pages. The scatter items stay, as
:class:`HitTargets` that never paint, for what they do well: finding the node under the mouse
for hover and click.

Imported with pyqtgraph (see ``graph_view._pg``), never while the station opens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
import shiboken6
from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, QThreadPool, QTimer
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem

from curator.views.tasks import run_task

#: How long the view must stay still before the edges are drawn again for it (ms): a drag or a
#: wheel zoom re-renders once, at its end, not for every step.
RENDER_DELAY_MS = 60
#: ``when_drawn`` never waits longer than this (ms), whatever happens to the renders.
WAIT_AT_MOST_MS = 3000

#: An affine view transform as six numbers (m11, m12, m21, m22, dx, dy), and the view's size in
#: logical pixels and its device pixel ratio: what one image of the edges was drawn for.
_Key = tuple[tuple[float, ...], int, int, float]

#: One kind of node as the layer draws it: pyqtgraph's name of its symbol, its fill colour, each
#: node's centre ((n, 2), data coordinates) and each node's size in pixels ((n,), whole pixels).
NodeGroup = tuple[str, QColor, np.ndarray, np.ndarray]

_pool: QThreadPool | None = None


def _render_pool() -> QThreadPool:
    """One thread of its own: a render never waits behind the station's long background reads
    (the shared pool may be busy counting duplicates for seconds), and renders never overlap."""
    global _pool
    if _pool is None:
        _pool = QThreadPool()
        _pool.setMaxThreadCount(1)
    return _pool


def wait_for_renders(msecs: int) -> None:
    """Let a render in flight finish (the station's shutdown, before the widgets go)."""
    if _pool is not None:
        _pool.waitForDone(msecs)


def _affine(t: QTransform) -> tuple[float, ...]:
    return (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy())


def _same(a: _Key | None, b: _Key | None) -> bool:
    if a is None or b is None:
        return a is b
    return a[1:] == b[1:] and all(abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y)) for x, y in zip(a[0], b[0], strict=True))


#: Segments per ``drawLines`` call. The call holds the interpreter lock while it rasterises
#: (~0.7 us a segment: 150,000 edges in one call kept the GUI thread waiting 100-200 ms while a
#: worker drew them); between calls a worker hands the lock over (see :func:`_yield_lock`).
STROKE_CHUNK = 1024
#: Nodes a worker draws between two hand-overs of the interpreter lock (~1.5 us a node).
NODE_CHUNK = 512


def _yield_lock() -> None:
    """Let a thread waiting for the interpreter lock (the GUI thread, above all) take it now.

    A thread that wants the lock waits for its holder to let go, or for the switch interval
    (5 ms) and then for the holder's current C call to end: the GUI thread needs the lock again
    after each of its Qt calls, so a paint of the view or a step of the graph's loading, a few
    dozen such calls, waited 50-100 ms behind the edges' worker. ``sleep(0)`` releases the lock
    (a waiting thread is woken and takes it) and costs microseconds when nobody waits."""
    time.sleep(0)


def stroke(painter: QPainter, segments: np.ndarray, keep: np.ndarray | None = None,
           worker: bool = False) -> None:
    """Draw ``segments`` ((m, 4) float64: x0, y0, x1, y1) with ``painter``'s pen, only those
    ``keep`` marks when given, in ``drawLines`` calls of STROKE_CHUNK segments over the array's
    own memory (no QLineF object per edge; the kept ones picked chunk by chunk); from a
    ``worker`` thread, handing the interpreter lock over between calls."""
    if not len(segments):
        return
    lines = np.ascontiguousarray(segments, dtype=np.float64)
    for start in range(0, len(lines), STROKE_CHUNK):
        if worker and start:
            _yield_lock()
        part = lines[start:start + STROKE_CHUNK]  # (contiguous: a view of whole rows)
        if keep is not None:
            part = part[keep[start:start + STROKE_CHUNK]]  # (a new contiguous array)
            if not len(part):
                continue
        first = shiboken6.wrapInstance(part.ctypes.data, QLineF)  # the rows as QLineF[k] (4 doubles each)
        assert isinstance(first, QLineF)
        painter.drawLines(first, len(part))


def _stamp(symbol: str, colour: QColor, size: float, ratio: float) -> QImage:
    """One node's symbol, filled and antialiased, in an image of its own (as pyqtgraph's symbol
    atlas renders it)."""
    side = int(np.ceil(size * ratio)) + 2
    image = QImage(side, side, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.translate(side / 2, side / 2)
        painter.scale(size * ratio, size * ratio)
        painter.fillPath(Symbols[symbol], QBrush(colour))
    finally:
        painter.end()
    image.setDevicePixelRatio(ratio)
    return image


def draw_nodes(painter: QPainter, nodes: list[NodeGroup], affine: tuple[float, ...], ratio: float = 1.0,
               worker: bool = False) -> None:
    """Draw each group's symbol at its nodes' centres mapped by ``affine`` (item coordinates to
    the painter's logical pixels, which its transform must leave as they are): one image of the
    symbol per size (``ratio``: the device's pixels per logical pixel), then one ``drawImage`` a
    node. (Each call holds the interpreter lock for microseconds: a ``drawPoints`` of 32,000
    antialiased wide points held it for tens of milliseconds at a time.) From a ``worker``
    thread, the interpreter lock is handed over every NODE_CHUNK nodes (see :func:`_yield_lock`)."""
    m11, m12, m21, m22, dx, dy = affine
    for symbol, colour, pos, sizes in nodes:
        if not len(pos):
            continue
        x = m11 * pos[:, 0] + m21 * pos[:, 1] + dx
        y = m12 * pos[:, 0] + m22 * pos[:, 1] + dy
        for size in np.unique(sizes):
            stamp = _stamp(symbol, colour, float(size), ratio)
            half = stamp.width() / ratio / 2
            mine = sizes == size
            draw = painter.drawImage
            for n, (px, py) in enumerate(zip((x[mine] - half).tolist(), (y[mine] - half).tolist(), strict=True)):
                if worker and n % NODE_CHUNK == NODE_CHUNK - 1:
                    _yield_lock()
                draw(QPointF(px, py), stamp)


def render_edges(segments: np.ndarray, key: _Key, colour: QColor, nodes: list[NodeGroup] | None = None,
                 keep: np.ndarray | None = None) -> QImage:
    """The edges ``segments`` (item coordinates; those ``keep`` marks when given), then the
    ``nodes`` over them, drawn as the view ``key`` shows them, into a transparent image the size
    of the view (thread-safe: touches no widget)."""
    affine, width, height, ratio = key
    m11, m12, m21, m22, dx, dy = affine
    # (only whole-array arithmetic, which releases the interpreter lock; the painter clips what
    # falls outside the view)
    x, y = segments[:, 0::2], segments[:, 1::2]
    lines = np.empty(segments.shape)
    lines[:, 0::2] = m11 * x + m21 * y + dx
    lines[:, 1::2] = m12 * x + m22 * y + dy
    image = QImage(max(1, round(width * ratio)), max(1, round(height * ratio)),
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(ratio)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    try:
        painter.setPen(QPen(colour, 1))
        stroke(painter, lines, keep, worker=True)
        if nodes:
            draw_nodes(painter, nodes, affine, ratio, worker=True)
    finally:
        painter.end()
    return image


class HitTargets(pg.ScatterPlotItem):  # type: ignore[misc]  # (pyqtgraph has no type hints)
    """A scatter item that never paints: its points are drawn by the :class:`EdgeLayer`; it
    only finds the node under the mouse (hover, tip, click).

    It tells the scene it has nothing to paint (``ItemHasNoContents``), so a paint of the view
    skips it altogether: before, every paint called its ``paint`` and (twice) its
    ``boundingRect`` from C++, each call waiting for the interpreter lock while the edges'
    worker or the station's background reads held it; with 20 of them at 32,000 pages, a paint
    of the view took 50-100 ms under load for 5-10 ms of work. The scene still finds it under
    the mouse (hover and click look items up by position, contents or not)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)

    def paint(self, *_args: Any) -> None:
        return


class Marker(pg.ScatterPlotItem):  # type: ignore[misc]  # (pyqtgraph has no type hints)
    """A scatter item drawn over a node (the hovered node, the open page's ring) that leaves the
    mouse to the :class:`HitTargets` under it.

    pyqtgraph's scene gives a click to the topmost item near it that accepts it, and a scatter
    item accepts any click on one of its points: the hover marker, over the node a person
    always hovers before clicking, took every such click, so a click opened nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setAcceptHoverEvents(False)

    def mouseClickEvent(self, ev: Any) -> None:
        ev.ignore()


class GraphPlot(pg.GraphicsView):  # type: ignore[misc]  # (pyqtgraph has no type hints)
    """The graph view's plot: one view box filling a graphics view, with the part of
    ``PlotWidget``'s interface the view uses (``plotItem.vb``, ``addItem``, ``removeItem``,
    ``autoRange``, ``clear``, ``setAspectLocked``).

    A ``PlotWidget`` also makes a ``PlotItem``: four axes, a title, an auto-range button and
    its options form (~90 signal connections), all hidden or disabled in the graph view. Making
    it was 10-20 ms of the GUI thread's Python, 70-170 ms under load (each Qt call waiting for
    the interpreter lock the graph's builder and the station's background reads held); this
    is ~1.5 ms. No context menus (the view box's menu alone was ~40 ms of widgets)."""

    def __init__(self, background: QColor) -> None:
        super().__init__(background=background)
        self.vb = pg.ViewBox(enableMenu=False)
        self.setCentralItem(self.vb)

    @property
    def plotItem(self) -> GraphPlot:
        """As ``PlotWidget.plotItem`` (``plot.plotItem.vb``: the view box)."""
        return self

    def addItem(self, item: Any, ignoreBounds: bool = False) -> None:
        self.vb.addItem(item, ignoreBounds=ignoreBounds)

    def removeItem(self, item: Any) -> None:
        self.vb.removeItem(item)

    def autoRange(self, padding: float | None = None) -> None:
        self.vb.autoRange(padding=padding)

    def clear(self) -> None:
        self.vb.clear()

    def setAspectLocked(self, lock: bool = True, ratio: float = 1) -> None:
        self.vb.setAspectLocked(lock, ratio)


class EdgeLayer(pg.GraphicsObject):  # type: ignore[misc]  # (pyqtgraph has no type hints)
    """Every edge of the graph as line segments in one colour and every node over them,
    painted from a cached image."""

    def __init__(self, colour: QColor) -> None:
        super().__init__()
        self._colour = QColor(colour)
        self._segments = np.zeros((0, 4))
        self._keep: np.ndarray | None = None  # the segments drawn (None: all)
        self._nodes: list[NodeGroup] = []
        self._bounds = QRectF()  # the extent of the edges and the nodes' centres
        self._generation = 0  # bumped by every new set of segments
        self._image: QImage | None = None
        self._image_key: _Key | None = None
        self._image_generation = -1
        self._wanted: _Key | None = None  # the view the last paint showed
        self._rendering = False
        self._waiters: list[Callable[[], None]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._render)
        #: milliseconds each render took in its worker (for the benchmark)
        self.render_ms: list[float] = []

    # --- content ----------------------------------------------------------------------
    def set_segments(self, segments: np.ndarray, nodes: list[NodeGroup] | None = None,
                     keep: np.ndarray | None = None,
                     extent: tuple[float, float, float, float] | None = None) -> None:
        """Show these edges ((m, 4): x0, y0, x1, y1 in data coordinates; only those ``keep``
        marks when given, picked by the worker that draws them: a copy of the kept rows of
        190,000 took the GUI thread ~30 ms) and these nodes (drawn in this order, bottom up)
        instead of the last. ``extent`` (x0, y0, x1, y1): the extent of both, when the caller
        knows it (the graph view: every kept edge joins two of the nodes); otherwise it is
        computed here (a masked min and max over 190,000 segments: 8-15 ms of the GUI thread)."""
        self.prepareGeometryChange()
        self._segments = np.ascontiguousarray(segments, dtype=np.float64).reshape(-1, 4)
        self._keep = None if keep is None or keep.all() else np.asarray(keep, dtype=bool).reshape(-1)
        self._nodes = [(symbol, QColor(colour), np.asarray(pos, dtype=np.float64).reshape(-1, 2),
                        np.asarray(sizes, dtype=np.float64).reshape(-1))
                       for symbol, colour, pos, sizes in nodes or ()]
        if extent is None:
            self._bounds = self._extent()
        else:
            x0, y0, x1, y1 = (float(v) for v in extent)
            self._bounds = QRectF(x0, y0, x1 - x0, y1 - y0)
        self._generation += 1
        self.update()

    def _extent(self) -> QRectF:
        """The extent of the edges drawn and the nodes."""
        # (each part's extremes where it lies: no copy of 200,000 segments' coordinates)
        kept = self._segments if self._keep is None else self._segments[:0]
        xs = [a for a in (kept[:, 0::2], *(pos[:, 0] for _s, _c, pos, _z in self._nodes)) if a.size]
        ys = [a for a in (kept[:, 1::2], *(pos[:, 1] for _s, _c, pos, _z in self._nodes)) if a.size]
        if self._keep is not None and self._keep.any():
            where = self._keep[:, None]
            for part, out in ((self._segments[:, 0::2], xs), (self._segments[:, 1::2], ys)):
                out += [np.array([np.min(part, where=where, initial=np.inf), np.max(part, where=where, initial=-np.inf)])]
        if not xs:
            return QRectF()
        x0, y0 = min(float(a.min()) for a in xs), min(float(a.min()) for a in ys)
        x1, y1 = max(float(a.max()) for a in xs), max(float(a.max()) for a in ys)
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    def _empty(self) -> bool:
        return not self.segment_count() and not self._nodes

    def segment_count(self) -> int:
        """How many segments are drawn."""
        return len(self._segments) if self._keep is None else int(np.count_nonzero(self._keep))

    def extent(self) -> QRectF:
        """The extent of the edges drawn and the nodes' centres (what the view frames)."""
        return QRectF(self._bounds)

    def boundingRect(self) -> QRectF:
        """The extent, widened by as much again on each side: a node at its edge is painted
        whole (bounded by the centres alone, such nodes were cut in half after the view zoomed
        out, Qt repainting only the item's bounds). In data units, so it does not follow the
        view's scale (widened by the radius in pixels, it was made again at every zoom step and
        the hovered node's marker was drawn a pixel off now and then); a node's radius is more
        than the whole extent only once the graph is a few pixels wide. (The view frames the
        nodes' hit targets, which hold every node: the graph view adds this layer ignoring its
        bounds.)"""
        bounds = QRectF(self._bounds)
        if bounds.isNull() and self._empty():
            return bounds
        pad = max(bounds.width(), bounds.height()) or 1.0
        return bounds.adjusted(-pad, -pad, pad, pad)

    def is_drawn(self) -> bool:
        """Whether the image on screen holds the current edges for the view as it is."""
        return self._empty() or (
            self._image_generation == self._generation and not self._rendering and not self._timer.isActive()
            and (self._wanted is None or _same(self._wanted, self._image_key)))

    def when_drawn(self, func: Callable[[], None]) -> None:
        """Call ``func`` once the current edges are on screen for the current view (at once
        when no view shows them; after WAIT_AT_MOST_MS whatever happens)."""
        view = self.getViewWidget()
        if self.is_drawn() or view is None or not view.isVisible():
            func()
            return
        self._waiters.append(func)
        QTimer.singleShot(WAIT_AT_MOST_MS, self, self._flush)

    def _flush(self) -> None:
        waiters, self._waiters = self._waiters, []
        for func in waiters:
            func()

    # --- painting ---------------------------------------------------------------------
    def paint(self, painter: QPainter, _option: Any, widget: Any = None) -> None:
        if self._empty():
            return
        transform = painter.transform()
        if widget is None:  # an export (no view to cache for): draw everything right here
            painter.setPen(QPen(self._colour, 1))
            stroke(painter, self._segments, self._keep)
            painter.save()
            painter.resetTransform()
            draw_nodes(painter, self._nodes, _affine(transform), painter.device().devicePixelRatioF())
            painter.restore()
            return
        key: _Key = (_affine(transform), widget.width(), widget.height(), float(widget.devicePixelRatioF()))
        image = self._image
        if image is not None and self._image_generation == self._generation and self._image_key is not None:
            m11, m12, m21, m22, dx, dy = self._image_key[0]
            drawn_for = QTransform(m11, m12, m21, m22, dx, dy)
            inverse, invertible = drawn_for.inverted()
            if invertible:
                painter.save()
                # image pixels -> item coordinates (as drawn) -> the view as it is now
                painter.setTransform(inverse * transform)
                painter.drawImage(QPointF(0, 0), image)
                painter.restore()
        if not (self._image_generation == self._generation and _same(key, self._image_key)) and \
                not _same(key, self._wanted if self._rendering or self._timer.isActive() else None):
            self._wanted = key
            # the first picture of new edges at once; a moving view once it stops
            self._timer.start(0 if self._image_generation != self._generation else RENDER_DELAY_MS)

    def _render(self) -> None:
        key = self._wanted
        if key is None or self._rendering:
            return  # (a render in flight starts the next one when it lands)
        self._rendering = True
        generation, segments, colour, keep = self._generation, self._segments, QColor(self._colour), self._keep
        nodes = list(self._nodes)

        def work() -> tuple[QImage, float]:
            start = time.perf_counter()
            image = render_edges(segments, key, colour, nodes, keep)
            return image, (time.perf_counter() - start) * 1000

        run_task(work, lambda result: self._rendered(key, generation, *result),
                 lambda _exc: self._failed(), pool=_render_pool(), owner=self)

    def _failed(self) -> None:
        self._rendering = False

    def _rendered(self, key: _Key, generation: int, image: QImage, ms: float) -> None:
        self._rendering = False
        self.render_ms.append(ms)
        if generation == self._generation:
            self._image, self._image_key, self._image_generation = image, key, generation
            self.update()
        if generation != self._generation or not _same(key, self._wanted):
            self._timer.start(0)  # the view (or the edges) changed while this one was drawn
            return
        self._flush()
