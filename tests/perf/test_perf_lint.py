"""Lint after one append (issue 44: one edit costs what it changes) on 32,000 real-shaped pages.

``curator lint`` saves the operator's answer in the page cache; an unchanged wiki is answered from
it, and after a change it is brought up to date from the pages the change can affect
(``curator/engine/review/lint.py``). Medians of :data:`RUNS`, each call a fresh :class:`Wiki` on the
same root (what a one-shot ``curator lint`` does once imported: refresh, then lint), printed with a
plain read of every page file measured in the same run:

* lint warm: nothing changed since the last call (the saved answer);
* lint after one append: a line appended to one page before each call (targets: <= 1.5x warm,
  <= 2 s at any size);
* lint from every page: the saved answer not used, what one append cost before (every link of
  the wiki resolved again, every page checked);
* the page cache's refresh alone, unchanged and after one append (no lint): the part of each
  lint figure that is the store's, every command's (the refresh after an append writes the new
  state: its snapshot of every page's stamps).

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_lint.py -s -p no:cacheprovider``
(``CURATOR_SCALE_PAGES`` picks another size; default 32,000 real-shaped pages).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.review import lint as lint_module
from curator.engine.review.lint import lint
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


def test_lint_after_one_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = generate(tmp_path / "wiki", PAGES, seed=44, profile="real-shaped")
    root = info.root
    Wiki(root).store.count()  # (the page cache built: every figure below is of a warm cache)
    first = lint(Wiki(root))  # computed from every page, and saved
    assert first

    appended = root / info.pages[len(info.pages) // 2]
    count = 0

    def append() -> None:  # one more line each time: a new state of the pages
        nonlocal count
        count += 1
        with appended.open("a", encoding="utf-8") as f:
            f.write(f"\nOne more fact ({count}).\n")

    def one_shot() -> list[lint_module.LintIssue]:
        return lint(Wiki(root))

    plain_read(root)  # (the pages in the OS cache, as for every figure)
    read = _median(lambda: plain_read(root))
    warm = _median(one_shot)
    after = _median(one_shot, before=append)
    refresh = _median(lambda: Wiki(root).store.count())
    refresh_after = _median(lambda: Wiki(root).store.count(), before=append)
    assert lint(Wiki(root)) == lint_module._page_issues(Wiki(root), OPERATOR)  # (the same answer)
    with monkeypatch.context() as patched:  # the saved answer never found: computed from every page
        patched.setattr(lint_module, "_from_saved", lambda blob, key: None)
        every = _median(one_shot, before=append)

    print(f"\nlint, {PAGES} real-shaped pages (medians of {RUNS}; a fresh Wiki per call):")
    print(f"  plain read of every page    {read:7.3f} s")
    print(f"  lint warm (nothing changed) {warm:7.3f} s   = {warm / read:5.2f}x the plain read")
    print(f"  lint after one append       {after:7.3f} s   = {after / read:5.2f}x the plain read, "
          f"{after / warm:4.2f}x warm (target <= 1.5x warm, <= 2 s)")
    print(f"  lint from every page        {every:7.3f} s   = {every / read:5.2f}x the plain read, "
          f"{every / warm:4.2f}x warm (what one append cost before)")
    print(f"  refresh alone, unchanged    {refresh:7.3f} s   (lint's own part warm: {warm - refresh:.3f} s)")
    print(f"  refresh alone, one append   {refresh_after:7.3f} s   (lint's own part after one append: "
          f"{after - refresh_after:.3f} s)")
