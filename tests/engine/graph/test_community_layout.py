"""The overview by community keeps the communities no link joins to the rest close to it: laid
out with the linked ones, they drifted to the far edges, and the view fitted to them drew the
linked communities as one overlapping blob (seen at 100,000 pages)."""

from __future__ import annotations

import numpy as np

from curator.engine.graph.communities import find_communities


def _spacing(pos: np.ndarray) -> float:
    """The median distance from each point to its nearest other one."""
    gaps = np.hypot(pos[:, None, 0] - pos[None, :, 0], pos[:, None, 1] - pos[None, :, 1])
    np.fill_diagonal(gaps, np.inf)
    return float(np.median(gaps.min(axis=1)))


def _cliques_graph(linked: int, islands: int, size: int = 12) -> tuple[list[str], np.ndarray]:
    """``linked`` cliques of ``size`` pages, each joined to every other by one link (as a big
    wiki's communities are), and ``islands`` pairs of pages linked to each other only."""
    pairs: list[tuple[int, int]] = []
    for c in range(linked):
        first = c * size
        pairs += [(first + i, first + j) for i in range(size) for j in range(i + 1, size)]
        pairs += [(first + d % size, d * size + c % size) for d in range(c + 1, linked)]
    start = linked * size
    pairs += [(start + 2 * k, start + 2 * k + 1) for k in range(islands)]
    nodes = [f"p{i:04}.md" for i in range(start + 2 * islands)]
    return nodes, np.array(pairs, dtype=np.int64)


def test_communities_linked_to_none_sit_in_a_ring_around_the_linked_ones_not_far_away() -> None:
    nodes, pairs = _cliques_graph(linked=14, islands=3)
    found = find_communities(nodes, pairs)
    sizes = [len(c.members) for c in found.communities]
    assert sizes.count(12) == 14 and sizes.count(2) == 3  # (Leiden finds the cliques and the pairs)
    pos = np.array(found.positions)
    joined = {i for e in found.edges for i in e[:2]}
    main = np.array(sorted(joined))
    alone = np.array([i for i in range(len(pos)) if i not in joined])
    assert len(main) == 14 and len(alone) == 3
    centre = pos[main].mean(axis=0)
    radius = np.hypot(*(pos[main] - centre).T).max()
    unit = _spacing(pos[main])
    out = np.hypot(*(pos[alone] - centre).T)
    # just outside the linked communities, a few of their spacings away: not at the far edges
    assert (out > radius).all() and (out < radius + 4 * unit).all(), (out, radius, unit)
    # and nothing drawn on top of anything else
    every = np.hypot(pos[:, None, 0] - pos[None, :, 0], pos[:, None, 1] - pos[None, :, 1])
    np.fill_diagonal(every, np.inf)
    assert every.min() > 0.3 * unit
    # the same wiki is laid out the same way
    assert find_communities(nodes, pairs).positions == found.positions
