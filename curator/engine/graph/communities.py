"""Communities of the link graph (igraph's Leiden), for the graph view's overview of a big wiki.

At 32,000 pages a drawing of every page says little; the pages fall into communities (groups
linked more densely among themselves than to the rest), and an overview with one node per
community, sized by its membership, shows the shape of the wiki. :func:`find_communities` splits
the pages with the Leiden algorithm (modularity, seeded, so the same wiki gives the same
communities) and lays the community graph out; pages in no community of two or more (orphans)
are only counted.

igraph holds the interpreter lock through a whole Leiden run (seconds at 32,000 pages), which
would freeze the station's GUI thread: the work runs in a spawned worker process when one can be
started, as the layout's does (``curator.engine.graph.layout``), else here.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The random seed of every Leiden run: the same graph always splits the same way.
SEED = 7
#: Leiden passes over the graph (igraph's default is 2; more only refines a little).
ITERATIONS = 2


@dataclass(slots=True)
class Community:
    """One community: its pages (sorted) and the best linked of them, which names it."""

    members: list[str]
    hub: str
    links: int = 0  # links between its members


@dataclass(slots=True)
class Communities:
    """The communities of a graph, biggest first, laid out as a graph of their own."""

    communities: list[Community] = field(default_factory=list)
    #: (a, b, links): how many links join community ``a`` and community ``b`` (a < b)
    edges: list[tuple[int, int, int]] = field(default_factory=list)
    #: where each community is drawn (one (x, y) per community)
    positions: list[tuple[float, float]] = field(default_factory=list)
    #: pages in no community of two or more (no link to another page)
    alone: int = 0


def find_communities(nodes: Sequence[str], edges: np.ndarray) -> Communities:
    """The communities of the undirected graph ``nodes`` / ``edges`` (an (m, 2) array of node
    indices, each edge once), biggest first (ties: by hub), laid out."""
    pairs = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    membership, positions = _in_a_process(len(nodes), pairs)
    groups: dict[int, list[int]] = {}
    for i, label in enumerate(membership):
        groups.setdefault(label, []).append(i)
    degree = np.bincount(pairs.ravel(), minlength=len(nodes)) if len(nodes) else np.zeros(0, dtype=np.int64)
    found: list[tuple[int, list[int]]] = []
    alone = 0
    for label, members in groups.items():
        if len(members) < 2:
            alone += len(members)
        else:
            found.append((label, members))

    def hub(members: list[int]) -> str:
        return min((nodes[i] for i in members), key=lambda n: (-int(degree[nodes_index[n]]), n))

    nodes_index = {n: i for i, n in enumerate(nodes)}
    ranked = sorted(found, key=lambda lm: (-len(lm[1]), hub(lm[1])))
    position_of = {label: positions.get(label, (0.0, 0.0)) for label, _m in ranked}
    out = Communities(alone=alone)
    index_of = {label: k for k, (label, _m) in enumerate(ranked)}
    for label, members in ranked:
        out.communities.append(Community(sorted(nodes[i] for i in members), hub(members)))
        out.positions.append(position_of[label])
    between: dict[tuple[int, int], int] = {}
    if len(pairs):
        member_of = np.asarray(membership, dtype=np.int64)
        for a_label, b_label in zip(member_of[pairs[:, 0]].tolist(), member_of[pairs[:, 1]].tolist(), strict=True):
            a, b = index_of.get(a_label), index_of.get(b_label)
            if a is None or b is None:
                continue
            if a == b:
                out.communities[a].links += 1
            else:
                key = (a, b) if a < b else (b, a)
                between[key] = between.get(key, 0) + 1
    out.edges = [(a, b, n) for (a, b), n in sorted(between.items())]
    return out


def _leiden(n: int, pairs: np.ndarray) -> tuple[list[int], dict[int, tuple[float, float]]]:
    """Leiden membership of every node, and a position for each community of two or more (a
    Fruchterman-Reingold layout of the community graph, edges weighted by the links between)."""
    import igraph as ig

    graph = ig.Graph(n=n, edges=pairs.tolist())
    ig.set_random_number_generator(random.Random(SEED))
    try:
        parts = graph.community_leiden(objective_function="modularity", n_iterations=ITERATIONS)
        membership = list(parts.membership)
        sizes = np.bincount(np.asarray(membership, dtype=np.int64), minlength=1) if n else np.zeros(0)
        big = [int(c) for c in np.flatnonzero(sizes >= 2)]
        positions: dict[int, tuple[float, float]] = {}
        if big:
            at = {c: k for k, c in enumerate(big)}
            weights: dict[tuple[int, int], int] = {}
            for a, b in pairs.tolist():
                ca, cb = at.get(membership[a]), at.get(membership[b])
                if ca is not None and cb is not None and ca != cb:
                    key = (ca, cb) if ca < cb else (cb, ca)
                    weights[key] = weights.get(key, 0) + 1
            overview = ig.Graph(n=len(big), edges=list(weights))
            coords = overview_layout(overview)
            # spread by size: a community of n pages gets room for a node of its size
            scale = float(np.sqrt(sizes[big].max()))
            positions = {c: (float(x) * scale, float(y) * scale) for c, (x, y) in zip(big, coords, strict=True)}
        return membership, positions
    finally:
        ig.set_random_number_generator(random)


def overview_layout(graph: Any) -> np.ndarray:
    """Where each community of the overview ``graph`` (an igraph graph, a node per community) is
    drawn: its biggest connected part laid out by Fruchterman-Reingold (unweighted: weights pulled
    the big, densely joined communities into one heap), and every other part (communities linked
    to none of it) laid out by itself and set in rings around it, biggest first. Laid out together,
    the parts that no link holds drifted to the far edges (at 100,000 pages three communities of
    two pages each), and the view, fitted to them, drew the linked ones as one overlapping blob."""
    n = graph.vcount()
    out = np.zeros((n, 2))
    parts = sorted((list(p) for p in graph.connected_components()), key=lambda p: (-len(p), p[0]))
    if not parts:
        return out
    main = parts[0]
    at = _part_layout(graph, main)
    unit = _spacing(at)
    out[main] = at
    radius = float(np.hypot(at[:, 0], at[:, 1]).max())
    ring, angle, widest = radius + 2 * unit, 0.0, 0.0
    for part in parts[1:]:
        own = _part_layout(graph, part)
        own *= unit / _spacing(own)  # (a part of one: at its centre whatever the scale)
        r = float(np.hypot(own[:, 0], own[:, 1]).max())
        step = (2 * r + unit) / ring  # (the arc it takes, in radians)
        if angle + step > 2 * np.pi:  # the ring is full: the next one, further out
            ring, angle, widest = ring + 2 * widest + unit, 0.0, 0.0
            step = (2 * r + unit) / ring
        middle = angle + step / 2
        out[part] = own + ring * np.array([np.cos(middle), np.sin(middle)])
        angle += step
        widest = max(widest, r)
    return out


def _part_layout(graph: Any, part: list[int]) -> np.ndarray:
    """One connected part of ``graph`` laid out by itself, centred on (0, 0)."""
    if len(part) == 1:
        return np.zeros((1, 2))
    coords = np.array(graph.subgraph(part).layout_fruchterman_reingold(niter=500).coords, dtype=float)
    centred: np.ndarray = coords - coords.mean(axis=0)
    return centred


def _spacing(coords: np.ndarray) -> float:
    """The median distance from each point to its nearest other point (1 for fewer than two)."""
    if len(coords) < 2:
        return 1.0
    nearest = np.empty(len(coords))
    for first in range(0, len(coords), 512):  # (a block of rows at a time: thousands of communities)
        block = coords[first:first + 512]
        gaps = np.hypot(block[:, None, 0] - coords[None, :, 0], block[:, None, 1] - coords[None, :, 1])
        gaps[np.arange(len(block)), np.arange(first, first + len(block))] = np.inf
        nearest[first:first + len(block)] = gaps.min(axis=1)
    median = float(np.median(nearest))
    return median if median > 0 else 1.0


def _in_a_process(n: int, pairs: np.ndarray) -> tuple[list[int], dict[int, tuple[float, float]]]:
    """:func:`_leiden` in a spawned worker process (never forked: the station runs threads), or
    here when none can be started (a sandbox, a frozen build)."""
    if n >= 2000:
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                return pool.submit(_leiden, n, pairs).result()
        except Exception:  # no processes here: run it in place below
            pass
    return _leiden(n, pairs)
