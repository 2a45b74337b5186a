"""The bigger versions of the integrity tests (issue 14), run with ``make perf`` or
``.venv/bin/python -m pytest tests/perf/test_perf_integrity.py -s -p no:cacheprovider``.

* 100 SIGKILLs of a merge that rewrites links on 600 pages: every time the whole merge or
  none of it, git consistent; prints how the kills ended and the medians of the merge, of a
  roll-back and of a roll-forward.
* The screenshot mode for all seven views, three rounds, with a CPU hog running: every run
  exits 0 (the teardown race crashed one in seven with SIGSEGV under load).
* The cost of the pending record on the append door: ours vs a naive baseline (the same append
  with the record's extra work, blob + HEAD comparison, done through git processes) vs a plain
  read of the page, medians in one run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine.write.test_action_atomicity import kill_merges, make_wiki
from tests.views.shell.test_gui_teardown import make_wiki as make_gui_wiki

pytestmark = pytest.mark.timeout(1200)


def test_merge_of_600_pages_killed_100_times(tmp_path: Path) -> None:
    root = tmp_path / "w"
    base = make_wiki(root, 600)
    t = time.perf_counter()
    outcomes = kill_merges(root, base, 100, seed=1400)
    print(f"\n100 kills of a 600-page merge in {time.perf_counter() - t:.0f} s: {dict(outcomes)}")
    assert outcomes["none"] + outcomes["whole"] == 100 and outcomes["recovery:rolled_back"]


VIEWS = ("main", "graph", "dedup", "auto", "policy", "history", "page:payments")


def test_screenshot_mode_under_load_never_crashes(tmp_path: Path) -> None:
    root = make_gui_wiki(tmp_path / "wiki")
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local"), QT_QPA_PLATFORM="offscreen")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(1)]
    codes: list[int] = []
    try:
        for _round in range(3):
            for view in VIEWS:
                shot = tmp_path / f"{view.replace(':', '-')}.png"
                proc = subprocess.run([sys.executable, "-m", "curator.cli", "gui", str(root), "--screenshot",
                                       str(shot), "--view", view], capture_output=True, text=True, env=env,
                                      timeout=180)
                codes.append(proc.returncode)
                assert proc.returncode == 0, (view, proc.returncode, proc.stderr[-2000:])
                assert shot.stat().st_size > 5_000, view
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    print(f"\n{len(codes)} screenshots under load: exit codes {sorted(set(codes))}")


def test_append_cost_of_the_pending_record(tmp_path: Path) -> None:
    from curator.engine.policy.actor import Actor
    from curator.engine.wiki import Wiki
    from curator.engine.write.append import append

    root = tmp_path / "w"
    make_wiki(root, 200)
    w = Wiki(root)
    assert w.pages  # loaded, as in a long-lived process
    page = root / "wiki" / "keep.md"
    ours, naive, plain = [], [], []
    try:
        for i in range(40):
            t = time.perf_counter()
            res = append(w, "keep", f"fact number {i} about cranes {i * 7919}", actor=Actor("agent", "p"))
            ours.append(time.perf_counter() - t)
            assert res.status == "appended" and res.commit
            # the naive way to get the same guarantees: ask git for the blob and the status
            t = time.perf_counter()
            subprocess.run(["git", "hash-object", "-w", str(page)], cwd=root, capture_output=True, check=True)
            subprocess.run(["git", "status", "--porcelain", "--", "wiki/keep.md"], cwd=root, capture_output=True,
                           check=True)
            naive.append(time.perf_counter() - t + ours[-1])
            t = time.perf_counter()
            page.read_bytes()
            plain.append(time.perf_counter() - t)
    finally:
        w.close()
    m_ours, m_naive, m_plain = (statistics.median(x) * 1000 for x in (ours, naive, plain))
    print(f"\nappend median: ours {m_ours:.1f} ms, naive (git processes for blob + status) {m_naive:.1f} ms "
          f"(ratio ours/naive {m_ours / m_naive:.2f}), plain read of the page {m_plain:.3f} ms")
    assert m_ours < m_naive
