"""Positions for the graph view (docs/design.md §8): force-directed, without Qt, stable across updates.

The main connected component is laid out on its own with igraph's Fruchterman-Reingold (its
grid variant is fast but pulls disconnected pieces into one blob, so it only ever sees one
connected piece). Smaller components are laid out one by one and packed on rings around the
main one, orphans (nodes without any link) last, on the outer rings.

Positions are cached per node id (a page path). On the next call nodes keep their cached place:
new nodes of the main component start beside their already placed neighbours, a small component
that did not change keeps its place, and new components are packed outside everything placed. So
an update moves nothing that did not change; when more than half of the nodes are new (or on
request) the layout starts over. The cache can be saved to (and loaded from) a JSON
file under the wiki's git-ignored ``.curator/`` folder.

Everything here is plain Python + igraph + numpy and runs off the GUI thread; the station lays
out a big wiki's global graph in a worker process of its own (:class:`LayoutProcess`), where
igraph's long C calls hold no lock the GUI thread waits for.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import igraph as ig
import numpy as np

from curator.engine.graph.link_graph import LinkGraph

Position = tuple[float, float]

LAYOUT_CACHE_FILE = "layout.json"
FULL_ITERATIONS = 500
#: A main component bigger than this is laid out from scratch in a worker process (see
#: :func:`_fr_in_a_process`).
FR_ELSEWHERE_ABOVE = 5000
#: A station's global graph of a wiki of more pages than this is laid out in a worker process
#: (:class:`LayoutProcess`): building igraph's graph, its components and subgraphs are C calls
#: that hold the interpreter lock 40-120 ms each at 50,000 nodes, and reading the position cache
#: (one ``json.loads``) 100-200 ms, every one of them a GUI-thread stall in the station.
ELSEWHERE_ABOVE = 3000
#: Below this share of nodes with a cached position the layout starts over.
INCREMENTAL_MIN_KNOWN = 0.5
#: Layout units: an edge of a small component is EDGE long, packed components are GAP apart,
#: and the main component spreads to MAIN_SPREAD * sqrt(nodes) (95th percentile radius).
EDGE = 1.0
GAP = 2.0
MAIN_SPREAD = 0.8


class LayoutEngine:
    """Force-directed layout with a per-node position cache (thread-safe)."""

    def __init__(self, cache_path: Path | None = None, seed: int = 7) -> None:
        self.cache_path = cache_path
        self.positions: dict[str, Position] = {}
        self._seed = seed
        self._lock = threading.Lock()
        #: whether the cache file is still to be read (at the first layout here: see forget())
        self._unread = cache_path is not None

    # --- cache --------------------------------------------------------------------------
    def load(self) -> None:
        self._unread = False
        if self.cache_path is None:
            return
        try:
            data = json.loads(self.cache_path.read_text(encoding="utf-8"))
            self.positions = {str(k): (float(v[0]), float(v[1])) for k, v in data.items()}
        except (OSError, ValueError, TypeError, IndexError, AttributeError):
            self.positions = {}  # a missing or damaged cache only costs one full layout

    def save(self) -> None:
        if self.cache_path is None or self._unread:
            return  # (nothing laid out here since the file was written)
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.cache_path.parent, prefix=".layout-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({k: [round(x, 3), round(y, 3)] for k, (x, y) in self.positions.items()}, fh)
            os.replace(tmp, self.cache_path)
        except OSError:
            pass  # a read-only wiki simply lays out afresh next time

    # --- layout -------------------------------------------------------------------------
    def layout(self, nodes: Sequence[str], edges: Iterable[tuple[str, str]],
               *, full: bool = False) -> dict[str, Position]:
        """Positions for ``nodes`` linked by undirected ``edges``; updates the cache.

        ``full`` ignores the cache (a "re-layout" button).
        """
        nodes = list(dict.fromkeys(nodes))
        index = {n: i for i, n in enumerate(nodes)}
        pairs = [(index[a], index[b]) for a, b in edges if a in index and b in index]
        return self.layout_pairs(nodes, np.asarray(pairs, dtype=np.int64).reshape(-1, 2), full=full)

    def layout_pairs(self, nodes: Sequence[str], pairs: np.ndarray, *, full: bool = False) -> dict[str, Position]:
        """:meth:`layout` for distinct ``nodes`` and edges as an (m, 2) array of node indices (any
        order, repeats and loops allowed): the graph view's way, which never sorts 200,000 string
        pairs (one C call that holds the interpreter lock, and so the GUI thread, for a second)."""
        edges = unique_pairs(pairs, len(nodes))
        with self._lock:
            if self._unread:
                self.load()
            graph = ig.Graph(n=len(nodes), edges=edges.tolist())
            cached = {} if full else self.positions
            known = sum(1 for n in nodes if n in cached)
            incremental = bool(nodes) and known / len(nodes) >= INCREMENTAL_MIN_KNOWN
            rng = np.random.default_rng(self._seed)
            result = _Placement(graph, list(nodes), cached if incremental else {}, rng).run()
            self.positions = result
            return dict(result)

    def forget(self) -> None:
        """Drop the positions held here: another process (a :class:`LayoutProcess`) wrote the
        cache file since, and the next layout here reads it again."""
        with self._lock:
            self.positions = {}
            self._unread = self.cache_path is not None


class LayoutProcess:
    """One layout in a spawned worker process (never forked: the station runs threads), whose
    engine reads and saves the same cache file as :func:`engine_for`'s. Made before the graph is
    built, so the process starts (~0.5 s of imports) while the caller still computes the graph;
    :meth:`layout` answers None when no process could be started or the layout failed there (the
    caller then lays out in place). Close it (or use it as a context manager) when done."""

    def __init__(self, cache_path: Path | None) -> None:
        self._pool: Any = None
        self._cache = None if cache_path is None else str(cache_path)
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            # (the process reads the cache file meanwhile too)
            self._pool.submit(_prepare, self._cache)
        except Exception:  # no processes here (a sandbox, a frozen build): lay out in place
            self.close()

    def layout(self, nodes: Sequence[str], pairs: np.ndarray, *, full: bool = False,
               save: bool = False) -> np.ndarray | None:
        """:meth:`LayoutEngine.layout_pairs` in the process, its positions as an (n, 2) array
        in the order of ``nodes`` (saved to the cache file there when ``save``), or None."""
        if self._pool is None:
            return None
        try:
            coords: np.ndarray = self._pool.submit(_layout_prepared, self._cache, list(nodes), pairs, full,
                                                   save).result()
        except Exception:
            return None
        return coords

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> LayoutProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


#: In a :class:`LayoutProcess`'s worker: its engine (and so no worker process of its own).
_prepared: LayoutEngine | None = None


def _prepare(cache_path: str | None) -> None:
    global _prepared
    _prepared = LayoutEngine(None if cache_path is None else Path(cache_path))
    _prepared.load()


def _layout_prepared(cache_path: str | None, nodes: list[str], pairs: np.ndarray, full: bool,
                     save: bool) -> np.ndarray:
    if _prepared is None:  # (_prepare runs first in the pool's one process)
        _prepare(cache_path)
    engine = _prepared
    assert engine is not None
    positions = engine.layout_pairs(nodes, pairs, full=full)
    if save:
        engine.save()
    return np.array([positions[n] for n in nodes], dtype=float).reshape(-1, 2)


class _Placement:
    """One layout run: main component, then the other components and orphans around it."""

    def __init__(self, graph: ig.Graph, nodes: list[str], cached: dict[str, Position],
                 rng: np.random.Generator) -> None:
        self.graph = graph
        self.nodes = nodes
        self.cached = cached
        self.rng = rng
        self.out: dict[str, Position] = {}

    def run(self) -> dict[str, Position]:
        if not self.nodes:
            return {}
        comps = sorted(self.graph.connected_components(), key=lambda c: (-len(c), min(c)))
        main = comps[0] if len(comps[0]) > 1 else []
        rest = comps[1:] if main else comps
        if main:
            self._layout_main(main)
        center, radius = self._extent()
        fresh: list[tuple[np.ndarray, list[int]]] = []
        for comp in rest:
            names = [self.nodes[i] for i in comp]
            if all(n in self.cached for n in names):
                # Unchanged small component: it stays exactly where it was.
                for n in names:
                    self.out[n] = self.cached[n]
                continue
            fresh.append((self._layout_small(comp), comp))
        if fresh:
            if self.cached and len(fresh) < len(rest):
                # Newcomers go outside everything already placed; the old satellites stay put.
                center, radius = self._extent()
            self._pack(fresh, center, radius)
        return self.out

    # --- main component ---------------------------------------------------------------
    def _layout_main(self, comp: list[int]) -> None:
        sub = self.graph.subgraph(comp)
        names = [self.nodes[i] for i in comp]
        known = np.array([n in self.cached for n in names])
        if not known.any():
            seed = self._random_start(len(comp))
            coords = None
            if len(comp) > FR_ELSEWHERE_ABOVE:
                coords = _fr_in_a_process(len(comp), np.asarray(sub.get_edgelist(), dtype=np.int64), seed)
            if coords is None:
                coords = _fr(len(comp), np.asarray(sub.get_edgelist(), dtype=np.int64), seed)
            # FR packs hub-heavy graphs very tightly; spread the component to a fixed area per
            # node so it and the packed satellites (one unit per edge) read at the same scale.
            coords -= coords.mean(axis=0)
            r95 = float(np.percentile(np.hypot(*coords.T), 95))
            if r95 > 0:
                coords *= MAIN_SPREAD * math.sqrt(len(comp)) / r95
        else:
            # igraph's FR, seeded with a finished layout, first inflates it (its cooling schedule
            # stops the full run before equilibrium) and is slow on dense seeds, so it is not used
            # to "relax" an old picture. Instead placed nodes stay exactly where they were and
            # each new node starts beside its already placed neighbours, breadth first.
            coords = np.zeros((len(comp), 2))
            for i, n in enumerate(names):
                if known[i]:
                    coords[i] = self.cached[n]
            step = _median_edge(coords, sub.get_edgelist(), known) or 1.0
            placed = known.copy()
            frontier = [int(x) for x in np.flatnonzero(~placed)]
            while frontier:
                later: list[int] = []
                for i in frontier:
                    nbrs = [j for j in sub.neighbors(i) if placed[j]]
                    if nbrs:
                        angle = self.rng.uniform(0, 2 * math.pi)
                        coords[i] = coords[nbrs].mean(axis=0) + step * np.array([math.cos(angle),
                                                                                 math.sin(angle)])
                        placed[i] = True
                    else:
                        later.append(i)
                if len(later) == len(frontier):  # cannot happen in a connected component
                    break
                frontier = later
        for n, (x, y) in zip(names, coords, strict=True):
            self.out[n] = (float(x), float(y))

    def _random_start(self, n: int) -> np.ndarray:
        # igraph's own default spread; a wider start makes its grid variant several times slower
        r = math.sqrt(n) / 2
        return self.rng.uniform(-r, r, (n, 2))

    # --- small components and orphans ---------------------------------------------------
    def _layout_small(self, comp: list[int]) -> np.ndarray:
        """Local coordinates of a small component, centred on (0, 0)."""
        unit = EDGE
        if len(comp) == 1:
            return np.zeros((1, 2))
        if len(comp) == 2:
            return np.array([[-unit / 2, 0.0], [unit / 2, 0.0]])
        sub = self.graph.subgraph(comp)
        coords = np.asarray(sub.layout_fruchterman_reingold(
            niter=200, seed=self._random_start(len(comp)).tolist(), grid="nogrid").coords)
        coords = coords - coords.mean(axis=0)
        scaled: np.ndarray = coords * (unit / (_median_edge(coords, sub.get_edgelist()) or 1.0))
        return scaled

    def _extent(self) -> tuple[np.ndarray, float]:
        """Centre and radius of everything placed so far."""
        if not self.out:
            return np.zeros(2), 0.0
        pts = np.array(list(self.out.values()))
        center = pts.mean(axis=0)
        return center, float(np.sqrt(((pts - center) ** 2).sum(axis=1)).max())

    def _pack(self, fresh: list[tuple[np.ndarray, list[int]]], center: np.ndarray, inner: float) -> None:
        """Place components on concentric rings around ``center`` outside radius ``inner``."""
        gap = GAP
        ring = inner + gap if inner > 0 else 0.0
        items = [(coords, comp, float(np.sqrt((coords ** 2).sum(axis=1)).max()) + EDGE / 2)
                 for coords, comp in fresh]
        i = 0
        while i < len(items):
            if ring == 0.0:
                # Nothing in the middle (no main component): the first item takes the centre.
                coords, comp, r = items[0]
                self._put(coords, comp, center)
                ring = r + gap
                i = 1
                continue
            # Fill one ring: its items' arcs must fit its circumference.
            thick = items[i][2]
            ring_r = ring + thick
            circumference = 2 * math.pi * ring_r
            used = 0.0
            members: list[tuple[np.ndarray, list[int], float]] = []
            while i < len(items) and (not members or used + 2 * items[i][2] + gap <= circumference):
                members.append(items[i])
                used += 2 * items[i][2] + gap
                thick = max(thick, items[i][2])
                i += 1
            angle = 0.0
            spare = (circumference - used) / max(1, len(members))
            for coords, comp, r in members:
                step = (2 * r + gap + spare) / ring_r
                theta = angle + step / 2
                self._put(coords, comp, center + ring_r * np.array([math.cos(theta), math.sin(theta)]))
                angle += step
            ring = ring_r + thick + gap

    def _put(self, coords: np.ndarray, comp: list[int], at: np.ndarray) -> None:
        for i, (x, y) in zip(comp, coords + at, strict=True):
            self.out[self.nodes[i]] = (float(x), float(y))


def _fr(n: int, edges: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """igraph's Fruchterman-Reingold of a connected graph (grid variant) from ``seed``."""
    graph = ig.Graph(n=n, edges=edges.reshape(-1, 2).tolist())
    return np.asarray(graph.layout_fruchterman_reingold(niter=FULL_ITERATIONS, seed=seed.tolist(),
                                                        grid="auto").coords, dtype=float)


def _fr_in_a_process(n: int, edges: np.ndarray, seed: np.ndarray) -> np.ndarray | None:
    """:func:`_fr` in a worker process, or None when none can be started: igraph holds the
    interpreter lock through the whole layout (eight seconds at 30,000 nodes), which would freeze
    the station's GUI thread; in another process it freezes nothing. Spawned, never forked (the
    station runs threads)."""
    if _prepared is not None:
        return None  # already in a worker process (a LayoutProcess): lay out right here
    try:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_fr, n, edges, seed).result()
    except Exception:  # no processes here (a sandbox, a frozen build): lay out in place
        return None


def unique_pairs(pairs: np.ndarray, n: int) -> np.ndarray:
    """Each undirected edge of ``pairs`` (an (m, 2) index array) once, as (low, high), sorted;
    loops dropped."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    low, high = pairs.min(axis=1), pairs.max(axis=1)
    keys = low[low != high] * max(n, 1) + high[low != high]
    # sorted, then each kept once: numpy >= 2.3's np.unique uses a hash table that holds the
    # interpreter lock throughout (tens of ms at 200,000 links, the station's GUI thread waiting
    # on this background build); its sort releases the lock
    keys.sort()
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys
    return np.stack([keys // max(n, 1), keys % max(n, 1)], axis=1)


def _median_edge(coords: np.ndarray, edges: list[tuple[int, int]], among: np.ndarray | None = None) -> float:
    """Median length of ``edges`` (only those with both ends in ``among`` when given)."""
    if not edges:
        return 0.0
    e = np.asarray(edges)
    if among is not None:
        e = e[among[e[:, 0]] & among[e[:, 1]]]
        if not len(e):
            return 0.0
    return float(np.median(np.hypot(*(coords[e[:, 0]] - coords[e[:, 1]]).T)))


def layout_graph(graph: LinkGraph, engine: LayoutEngine | None = None, *,
                 full: bool = False) -> dict[str, Position]:
    """Positions for every node of a link graph (pages and unresolved targets)."""
    engine = engine or LayoutEngine()
    return engine.layout(list(graph.nodes), graph.undirected_edges(), full=full)


def engine_for(state_dir: Path) -> LayoutEngine:
    """A layout engine whose cache lives in a wiki's ``.curator/`` folder."""
    return LayoutEngine(state_dir / LAYOUT_CACHE_FILE)
