"""Link resolution benchmark (issue 18) on 32,000 pages: Obsidian's rule stays index-driven.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_links.py -s -p no:cacheprovider``.
Measured in one run, medians of three:

* ours: building the :class:`~curator.engine.links.LinkIndex` from the cached pages (every link of
  every page resolved from its own page: same folder, shortest path, attachments; backlinks);
* a naive baseline: the same rule applied by scanning every page path (and attachment) for each
  link, on a sample of links, extrapolated to all of them;
* a plain read of every page file (the floor any resolver that re-reads files pays).

Also the cost of the scans this issue added to parsing (headings, block ids, property links,
comments and indented code), as a share of the whole parse of the same pages.
"""

from __future__ import annotations

import posixpath
import random
import time

import pytest

from curator.engine import frontmatter, markdown_scan
from curator.engine.links import LinkIndex
from curator.engine.page import link_key, parse_page
from curator.engine.wiki import Wiki
from tests.corpus import generate
from tests.perf.test_perf_graph import timed  # median of three runs

PAGES = 32_000
ATTACHMENTS = 4_000
SAMPLE = 300
BUDGET = 5.0  # seconds for the whole index at 32,000 pages


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Wiki:
    root = tmp_path_factory.mktemp("perf-links") / "w"
    generate(root, PAGES, seed=18)
    w = Wiki(root)
    assert len(w.pages) >= PAGES
    return w


def naive_resolve(paths: list[str], files: list[str], source: str, key: str) -> str | None:
    """Obsidian's rule with no index: every candidate found by scanning every path."""
    pool = files if markdown_scan.is_attachment_target(key) else paths
    keys = [(p, link_key(p)) for p in pool]
    folder = link_key(posixpath.dirname(source))
    if "/" in key:
        for want in (key, posixpath.normpath(f"{folder}/{key}")):
            for p, k in keys:
                if k == want:
                    return p
        named = [p for p, k in keys if k.endswith("/" + key)]
    else:
        named = [p for p, k in keys if k.rsplit("/", 1)[-1] == key]
        for p in named:
            if link_key(posixpath.dirname(p)) == folder:
                return p
    return min(named, key=lambda p: (len(p), p)) if named else None


def test_link_index_at_32000_pages(wiki: Wiki) -> None:
    pages = wiki.pages
    rng = random.Random(18)
    folders = sorted({posixpath.dirname(p) for p in pages} - {""})
    files = [f"{rng.choice(folders)}/Attachments/shot-{i}.png" for i in range(ATTACHMENTS)]
    index = LinkIndex(pages, files)
    links = sum(len(e) for e in index.outgoing.values())
    ours = timed(lambda: LinkIndex(pages, files))

    edges = [e for edges in index.outgoing.values() for e in edges]
    sample = rng.sample(edges, SAMPLE)
    paths = sorted(pages)
    start = time.perf_counter()
    for edge in sample:
        expected = naive_resolve(paths, files, edge.source, edge.link.key)
        if edge.link.kind != "markdown" and expected is not None and not edge.resolution.ambiguous:
            assert (edge.resolution.path or edge.resolution.attachment) == expected, edge
    naive = (time.perf_counter() - start) / SAMPLE * links

    def read_all() -> None:
        for path in pages:
            (wiki.root / path).read_bytes()

    plain = timed(read_all)
    print(f"\n[perf] link index, {len(pages)} pages, {links} links, {ATTACHMENTS} attachments: "
          f"median {ours:.3f} s (budget {BUDGET:g} s); naive per-link scan (extrapolated from "
          f"{SAMPLE} links) {naive:.1f} s -> {naive / ours:.0f}x faster; plain read of all files "
          f"{plain:.3f} s -> index = {ours / plain:.2f}x a plain read")
    assert ours <= BUDGET


def test_cost_of_the_new_parse_scans(wiki: Wiki) -> None:
    sample = sorted(wiki.pages)[:4000]
    data = {p: (wiki.root / p).read_bytes() for p in sample}
    whole = timed(lambda: [parse_page(p, b) for p, b in data.items()])
    bodies = []
    for b in data.values():
        parts = frontmatter.split(b.decode("utf-8", "replace"))
        meta = frontmatter.load(parts.raw)[0] if parts.raw is not None else {}
        bodies.append((parts.body, parts.raw, meta))

    def new_scans() -> None:
        for body, raw, meta in bodies:
            free = markdown_scan._strip_indented(body)
            if "%%" in free:
                markdown_scan._strip_comments(free)
            markdown_scan.headings(free)
            markdown_scan.block_ids(free)
            if raw is not None and meta:
                markdown_scan.scan_property_links(raw, meta)

    added = timed(new_scans)
    print(f"\n[perf] parse of {len(sample)} pages: median {whole:.3f} s; the scans issue 18 added "
          f"(indented code, comments, headings, block ids, property links) {added:.3f} s = "
          f"{100 * added / whole:.1f} % of it")
    assert added < whole
