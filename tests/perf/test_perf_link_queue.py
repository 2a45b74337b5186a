"""The unresolved-link queue after one append (issue 44: one edit costs what it changes) on 32,000
real-shaped pages. ``links unresolved`` and ``health`` answer the operator's queue saved in the page
cache; after a change it is brought up to date from the pages the change can affect
(``curator/engine/review/link_queue.py``). Medians of :data:`RUNS`, each call a fresh :class:`Wiki`
on the same root (what a one-shot command does once imported: refresh, then the queue), printed
with a plain read of every page file measured in the same run and the peak RSS of the process:

* queue warm: nothing changed since the last call (the saved queue);
* queue after one append: a fact with a link to a missing page appended to one page before each
  call (targets: <= 1.5x warm, <= 2 s at any size);
* queue from every page: the saved queue not used, what every call cost before (every link of the
  wiki resolved, every target suggested);
* the unresolved totals health counts, warm and after one append.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_link_queue.py -s -p no:cacheprovider``
(``CURATOR_SCALE_PAGES`` picks another size; default 32,000 real-shaped pages).
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.engine.review import linkrepair
from curator.engine.review.linkrepair import unresolved, unresolved_totals
from curator.engine.wiki import Wiki
from tests.corpus import generate, plain_read

PAGES = int(os.environ.get("CURATOR_SCALE_PAGES", "32000"))
RUNS = 5
pytestmark = pytest.mark.timeout(3600)


def _median(run: Callable[[], object], before: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(RUNS):
        if before is not None:
            before()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_link_queue_after_one_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = generate(tmp_path / "wiki", PAGES, seed=44, profile="real-shaped")
    root = info.root
    page = sorted(p for p in info.pages if p.startswith("concepts/"))[0]
    appended = iter(range(10**6))

    def append() -> None:
        with (root / page).open("a", encoding="utf-8") as f:
            f.write(f"\nA new fact {next(appended)} [[Some Missing Page {next(appended)}]].\n")

    read = _median(lambda: plain_read(root))
    first = unresolved(Wiki(root))  # computed from every page, saved
    rss_first = _peak_mb()
    warm = _median(lambda: unresolved(Wiki(root)))
    after = _median(lambda: unresolved(Wiki(root)), append)
    health_warm = _median(lambda: unresolved_totals(Wiki(root)))
    health_after = _median(lambda: unresolved_totals(Wiki(root)), append)
    rss_after = _peak_mb()
    got = [u.to_json() for u in unresolved(Wiki(root))]
    monkeypatch.setattr(linkrepair, "saved_queue", lambda wiki, compute=True: None)
    scratch_items: list[linkrepair.Unresolved] = []
    scratch = _median(lambda: scratch_items.append(unresolved(Wiki(root))) or None) if RUNS else 0.0
    assert got == [u.to_json() for u in scratch_items[-1]]  # the saved queue is the one from every page
    print(f"\n{PAGES} real-shaped pages, {len(first)} unresolved targets, medians of {RUNS}:")
    print(f"  plain read of every page     {read:7.3f} s")
    print(f"  queue warm                   {warm:7.3f} s  ({warm / read:.2f}x read)")
    print(f"  queue after one append       {after:7.3f} s  ({after / warm:.2f}x warm)")
    print(f"  queue from every page        {scratch:7.3f} s  ({scratch / warm:.1f}x warm)")
    print(f"  health totals warm           {health_warm:7.3f} s")
    print(f"  health totals after append   {health_after:7.3f} s  ({health_after / max(health_warm, 1e-9):.2f}x warm)")
    print(f"  peak RSS after the first queue {rss_first:.0f} MB, after the warm and appended ones {rss_after:.0f} MB")
    assert after <= max(1.5 * warm, 0.2) and after <= 2.0
