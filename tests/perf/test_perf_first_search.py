"""The first search after a cold index (issue 44): at most 2x the cold ``index`` it follows.

The first search builds the full-text index in bulk (``curator/engine/search/index.py``). Each of
three rounds clears ``.curator/``, runs ``curator index`` (cold) and then ``curator search``
(the build); the medians are printed with their ratio and with a plain read of every page
(``cat``) measured in the same run.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_first_search.py -s -p no:cacheprovider``
(``CURATOR_SCALE_PAGES`` picks another size; default 32,000 real-shaped pages).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curator.engine.corpus.state import locate_state
from tests.corpus import generate

PAGES = int(os.environ.get("CURATOR_SCALE_PAGES", "32000"))
ROUNDS = 3
CURATOR = str(Path(sys.executable).with_name("curator"))
pytestmark = pytest.mark.timeout(3600)


def _timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return time.perf_counter() - started


def test_first_search_after_a_cold_index(tmp_path: Path) -> None:
    root = generate(tmp_path / "wiki", PAGES, seed=44, profile="real-shaped", git=True).root
    wiki = [CURATOR, "--wiki", str(root)]
    plain = [f"find {root} -name .git -prune -o -name '*.md' -print0 | xargs -0 cat > /dev/null"]
    _timed(["sh", "-c", *plain])  # (the pages in the OS cache, as for every round below)
    reads, colds, firsts = [], [], []
    for _ in range(ROUNDS):
        reads.append(_timed(["sh", "-c", *plain]))
        shutil.rmtree(locate_state(root), ignore_errors=True)
        colds.append(_timed([*wiki, "index", "--json"]))
        firsts.append(_timed([*wiki, "search", "ledger"]))
    hits = subprocess.run([*wiki, "--json", "search", "ledger"], capture_output=True, check=True, text=True).stdout
    assert '"path"' in hits
    read, cold, first = (statistics.median(x) for x in (reads, colds, firsts))
    print(f"\nfirst search after a cold index, {PAGES} real-shaped pages (medians of {ROUNDS}):")
    print(f"  plain read (cat)        {read:7.2f} s")
    print(f"  index, cold             {cold:7.2f} s   = {cold / read:5.1f}x the plain read")
    print(f"  first search (builds)   {first:7.2f} s   = {first / cold:5.2f}x the cold index (target 2x), "
          f"{first / read:5.1f}x the plain read")
    print(f"  rounds: cold {', '.join(f'{x:.2f}' for x in colds)}; first {', '.join(f'{x:.2f}' for x in firsts)}")
