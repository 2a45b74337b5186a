"""Page view benchmark (issue 14): the longest GUI-thread block while a hostile page opens.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_page_view.py -s -p no:cacheprovider``.
Three pages (a 10 MB one-word page, 100,000 link lines, a 3,000 x 40 table) plus a corpus page
from tests/corpus.py's generator. For each: ours (the station opening the page, measured by a 5 ms
timer probe: the longest gap between its ticks) against the naive baseline (one ``setHtml`` of the
whole rendered page on the GUI thread, measured on a 100 KB prefix: the whole page takes minutes)
and a plain read of the file, all in one run; medians of three.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from curator.engine.write.bootstrap import init_wiki
from curator.views.page.page_view import PageView
from curator.views.page.render import render_page
from tests.corpus import generate
from tests.engine.test_hardening_availability import large_pages, open_station, open_with_probe

RUNS = 3
PREFIX = 100 * 1024


def naive(text: str) -> float:
    from PySide6.QtWidgets import QApplication

    view = PageView()
    view.resize(1100, 800)
    view.show()
    start = time.perf_counter()
    view.browser.setHtml(render_page(text, lambda _t, _s: None))
    view.source.setPlainText(text)
    QApplication.processEvents()
    took = time.perf_counter() - start
    view.close()
    return took


def plain_read(path: Path) -> float:
    start = time.perf_counter()
    path.read_bytes()
    return time.perf_counter() - start


def test_page_view_blocks(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "w"
    init_wiki(root)
    generate(root, 200, seed=14)
    (root / "wiki").mkdir(exist_ok=True)
    pages = large_pages()
    for rel, text in pages.items():
        (root / rel).write_text(text, encoding="utf-8")
    win = open_station(qtbot, root, tmp_path)
    corpus_page = max((p for p in win.workspace.handles[0].wiki.pages if p not in pages),
                      key=lambda p: (root / p).stat().st_size)
    print()
    print(f"{'page':<22} {'ours: worst block':>18} {'naive setHtml (100 KB prefix)':>30} {'plain read':>11}")
    for rel in [*pages, corpus_page]:
        ours = statistics.median(open_with_probe(qtbot, win, rel, settle_ms=1000) for _ in range(RUNS))
        text = (root / rel).read_text("utf-8")
        base = statistics.median(naive(text[:PREFIX]) for _ in range(RUNS))
        read = statistics.median(plain_read(root / rel) for _ in range(RUNS))
        print(f"{rel[:22]:<22} {ours * 1000:>15.0f} ms {base * 1000:>27.0f} ms {read * 1000:>8.1f} ms"
              f"   naive/ours {base / ours:.1f}x")
        assert ours < 1.0, (rel, ours)
    win.close()
