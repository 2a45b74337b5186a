"""Fact index benchmark (issue 41) on real-shaped pages (``tests.corpus.generate(...,
profile="real-shaped")``), with the local WordLlama embedder:

* **first build**: :func:`~curator.engine.facts.index.fact_index_for` with no index yet (the page
  store's load included; target 60 s at 32,000 pages on 2 cores);
* **incremental**: one fact appended to one page, then the index's update (target 50 ms);
* **similar --page warm**: :func:`~curator.engine.facts.similar.find_similar` for one page with the
  index in memory (target 0.5 s);
* **whole-wiki pairs**: every close pair by numpy's exact product (what ``facts similar`` without
  ``--page`` costs), timed for a sample of 2,048 facts and extrapolated (linear in the facts asking);
  says whether an ANN library is needed at this size;
* **size**: ``facts.sqlite`` against the pages' bytes (target at most 0.5x).

Medians of 5 for the warm figures. The assertions pin behaviour (every fact indexed, the appended
fact found, its group found); the printed table says which targets are met.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_facts.py -s -p no:cacheprovider``
(``CURATOR_SCALE_PAGES`` picks another size; default 32,000).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import pytest

from curator.engine.corpus.facts import page_facts
from curator.engine.facts.index import fact_index_for
from curator.engine.facts.similar import SIMILAR_MIN, find_similar
from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from tests.corpus import generate

PAGES = int(os.environ.get("CURATOR_SCALE_PAGES", "32000"))
pytestmark = pytest.mark.timeout(3600)


def test_fact_index_at_scale(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    generate(root, PAGES, seed=41, profile="real-shaped")
    page_bytes = sum(p.stat().st_size for p in root.rglob("*.md"))

    started = time.perf_counter()
    wiki = Wiki(root)
    index = fact_index_for(wiki)
    first_build = time.perf_counter() - started
    n_facts = len(index.facts())
    expected = sum(len(page_facts(path, wiki.read_text(path))) for path in list(wiki.pages)[:200])
    assert expected == sum(len(index.page_facts(path)) for path in list(wiki.pages)[:200])

    target = sorted(wiki.pages)[len(wiki.pages) // 2]
    incremental = []
    for i in range(5):
        path = root / target
        path.write_text(path.read_text() + f"\n- The nightly backup of the ledger number {i} is kept for ninety days.\n")
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + (i + 1) * 10**9))
        wiki.refresh([target])
        t = time.perf_counter()
        assert index.update() == [target]
        incremental.append(time.perf_counter() - t)
    assert any("ledger number 4" in f.text for f in index.page_facts(target))

    warm = []
    for _ in range(5):
        t = time.perf_counter()
        groups = find_similar(wiki, OPERATOR, page=target)
        warm.append(time.perf_counter() - t)
    assert any("ledger number" in g.facts[0].text for g in groups)  # the five appended facts group

    sample = list(range(0, n_facts, max(1, n_facts // 2048)))[:2048]
    t = time.perf_counter()
    n_pairs = sum(1 for _ in index.pairs(SIMILAR_MIN, rows=sample))
    whole = (time.perf_counter() - t) * n_facts / len(sample)  # every fact asks alike: linear in the askers
    size = index.size_on_disk()
    print(f"\nfact index at {PAGES} real-shaped pages ({page_bytes / 1e6:.1f} MB, {n_facts} facts):")
    print(f"  first build            {first_build:8.2f} s    (target 60 s at 32,000 pages)")
    print(f"  incremental (1 append) {statistics.median(incremental) * 1000:8.1f} ms   (target 50 ms)")
    print(f"  similar --page warm    {statistics.median(warm):8.3f} s    (target 0.5 s)")
    print(f"  whole-wiki pairs       {whole:8.2f} s    (numpy, exact; from {len(sample)} askers: {n_pairs} pairs >= {SIMILAR_MIN})")
    print(f"  size on disk           {size / 1e6:8.1f} MB   = {size / page_bytes:.2f}x the pages (target 0.5x)")
