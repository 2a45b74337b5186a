"""Graph and duplicate benchmarks (issue 6) on 30,000 pages.

Run: ``.venv/bin/pytest tests/perf/test_perf_graph.py -s``. Budgets: graph build <= 5 s, layout of a
10,000-node graph <= 3 s, full dedup scan <= 60 s, incremental rescan after one page changed
<= 2 s. Each prints its median and the ratio to a naive baseline measured in the same run:

* graph build vs. re-reading and re-scanning every file into a networkx graph (no cache, no index);
* layout vs. networkx ``spring_layout`` on a 499-node sample, extrapolated by n**2 (its dense
  force computation; SciPy, which its sparse variant needs, is not installed);
* dedup scan vs. all-pairs comparison of the four signals on a 600-page sample, extrapolated by
  pair count;
* incremental rescan vs. the full scan.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import networkx as nx
import pytest

from curator.engine.corpus import markdown_scan
from curator.engine.corpus.frontmatter import split
from curator.engine.corpus.page import decode, link_key
from curator.engine.corpus.slugs import slug_sim
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.graph.layout import LayoutEngine
from curator.engine.graph.link_graph import LinkGraph, graph_for
from curator.engine.wiki import Wiki
from tests.corpus import generate

PAGES = 30_000
LAYOUT_NODES = 10_000
RUNS = 3


def timed(fn: Callable[[], object], runs: int = RUNS) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report(name: str, median: float, budget: float, baseline: float, what: str) -> None:
    print(f"\n[perf] {name}: median {median:.3f} s (budget {budget:g} s); naive baseline ({what}) "
          f"{baseline:.2f} s -> {baseline / median:.1f}x faster")


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Wiki:
    root = tmp_path_factory.mktemp("perf-graph") / "w"
    generate(root, PAGES, seed=6)
    w = Wiki(root)
    assert len(w.pages) >= PAGES
    return w


def naive_graph(wiki: Wiki, paths: list[str]) -> nx.DiGraph:
    """Re-read and re-scan every file into networkx, links resolved by file stem only."""
    graph = nx.DiGraph()
    stems = {}
    for p in wiki.pages:
        stems.setdefault(link_key(p.rsplit("/", 1)[-1][:-3]), p)
    for path in paths:
        text = decode((wiki.root / path).read_bytes()).text
        body = split(text).body
        graph.add_node(path)
        for link in markdown_scan.scan_links(markdown_scan.strip_code(body), path):
            key = link_key(link.target)
            target = stems.get(key, key)
            graph.add_edge(path, target)
    return graph


def fresh_graph(wiki: Wiki) -> LinkGraph:
    """The graph built from scratch: link index + graph, nothing cached (a change now only
    updates the link index: dropped here so both are built)."""
    wiki._drop_links()
    return graph_for(wiki)


def test_graph_build(wiki: Wiki) -> None:
    pages = wiki.pages
    median = timed(lambda: fresh_graph(wiki))
    graph = fresh_graph(wiki)
    assert len(graph.pages) == len(pages) and graph.edge_count > len(pages)
    sample = sorted(pages)[:: len(pages) // 1500][:1500]
    naive = timed(lambda: naive_graph(wiki, sample), 1) * len(pages) / len(sample)
    report(f"graph build ({len(pages)} pages, {graph.edge_count} edges)", median, 5, naive,
           "re-scan files into networkx, 1,500-page sample extrapolated")
    assert median <= 5


def test_layout_10k(wiki: Wiki) -> None:
    graph = fresh_graph(wiki)
    nodes = sorted(graph.pages)[:LAYOUT_NODES]
    keep = set(nodes)
    edges = graph.undirected_edges(keep)
    median = timed(lambda: LayoutEngine().layout(nodes, edges))
    engine = LayoutEngine()
    engine.layout(nodes, edges)
    changed = [*nodes, "new-page.md"]
    update = timed(lambda: engine.layout(changed, [*edges, ("new-page.md", nodes[0])]))
    rng = random.Random(1)
    sample = set(rng.sample(nodes, 499))
    small = nx.Graph()
    small.add_nodes_from(sample)
    small.add_edges_from((a, b) for a, b in edges if a in sample and b in sample)
    # < 500 nodes: networkx's dense NumPy force layout (larger graphs need SciPy, not installed)
    naive = timed(lambda: nx.spring_layout(small, seed=1, method="force"), 1) * (LAYOUT_NODES / 499) ** 2
    report(f"layout ({len(nodes)} nodes, {len(edges)} edges; update {update:.3f} s)", median, 3, naive,
           "networkx spring_layout, 499-node sample extrapolated by n^2")
    assert median <= 3


def naive_pairs(index: dedup.DedupIndex, sample: list[str]) -> int:
    """All-pairs comparison of the four signals, no blocking."""
    found = 0
    feats = [index.features[p] for p in sample]
    for i, a in enumerate(feats):
        for b in feats[i + 1:]:
            title = a.title_key == b.title_key or dedup.fuzz.ratio(a.title_text, b.title_text) >= 90
            tags = a.folder == b.folder and dedup.jaccard(a.tags, b.tags) >= 0.8
            slug = slug_sim(a.slug, b.slug) >= 0.7
            body = dedup.array_jaccard(a.shingles, b.shingles) >= 0.8
            found += title or tags or slug or body
    return found


def test_dedup_full_and_incremental(wiki: Wiki) -> None:
    def full() -> dedup.DedupIndex:
        index = dedup.DedupIndex(wiki)
        index.scan()
        FamilyAnswers(index).candidates()
        return index

    median = timed(full, 2)
    index = full()
    found = FamilyAnswers(index).candidates()
    sample = sorted(wiki.pages)[:: len(wiki.pages) // 600][:600]
    start = time.perf_counter()
    naive_pairs(index, sample)
    per_pair = (time.perf_counter() - start) / (len(sample) * (len(sample) - 1) / 2)
    n = len(wiki.pages)
    naive = per_pair * n * (n - 1) / 2
    report(f"dedup full scan ({n} pages, {len(found)} candidates)", median, 60, naive,
           "all-pairs signals, 600-page sample extrapolated by pair count")
    assert median <= 60

    targets = iter(sorted(wiki.pages)[100::997])

    def one_change() -> None:
        path = next(targets)
        full_path = wiki.root / path
        full_path.write_text(full_path.read_text(encoding="utf-8") + "\n- One more fact.\n", encoding="utf-8")
        wiki.refresh([path])
        assert index.update() == [path]
        FamilyAnswers(index).candidates()

    incremental = timed(one_change, 5)
    report("dedup incremental rescan after one page changed", incremental, 2, median, "the full scan")
    assert incremental <= 2


def test_dedup_scan_planted_wiki(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Titles without numbers (one big comparison group) and 900 planted pairs at 30,000 pages."""
    from tests.engine.dedup.test_dedup_detect import generate_planted

    root = tmp_path_factory.mktemp("perf-planted") / "w"
    info = generate_planted(root, regular=PAGES - 1_000, per_kind=300, seed=9)
    wiki = Wiki(root)
    n = len(wiki.pages)
    index = dedup.DedupIndex(wiki)

    def full() -> list[dedup.Candidate]:
        index.scan()
        return FamilyAnswers(index).candidates()

    median = timed(full, 1)
    found = {dedup.pair_key(c.keep, c.merge) for c in FamilyAnswers(index).candidates()}
    recall = {kind: sum(dedup.pair_key(*p) in found for p in pairs) / len(pairs)
              for kind, pairs in info.pairs.items()}
    sample = sorted(wiki.pages)[:: n // 600][:600]
    start = time.perf_counter()
    naive_pairs(index, sample)
    naive = (time.perf_counter() - start) / (len(sample) * (len(sample) - 1) / 2) * n * (n - 1) / 2
    report(f"dedup full scan, planted wiki ({n} pages, {len(found)} candidates, recall {recall})",
           median, 60, naive, "all-pairs signals, 600-page sample extrapolated by pair count")
    assert median <= 60
    assert all(r >= 0.95 for r in recall.values())
