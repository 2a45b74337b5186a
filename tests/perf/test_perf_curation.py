"""Merge and move of a page with 2,000 inbound links in a 30,000-page wiki (issue 15).

Target: median <= 2 s each (over >= 5 runs, each reset before the next), measured in the same run
as a naive rewrite that regex-scans every file of the wiki (read all, substitute, write the changed
ones, ``git add -A``, commit) and as a plain read of every file. Ours includes everything an action
does: planning (display text kept, conservation check), atomic writes made durable, one commit,
the journal, and re-indexing the 2,000 changed pages (page cache and full-text index).

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_curation.py -s -p no:cacheprovider``
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from curator.engine.corpus.walker import EXCLUDED_DIRS
from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from curator.engine.write.actions import undo
from curator.engine.write.merge import merge_pages
from curator.engine.write.move import move_page
from tests.corpus import IDENTITY, generate, plain_read

pytestmark = pytest.mark.timeout(2400)

N_PAGES = 30_000
INBOUND = 2_000
RUNS = 5
NAIVE_RUNS = 3
BUDGET_S = 2.0

KEEP = "wiki/hub-keep.md"
TWIN = "wiki/hub-twin.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def md_files(root: Path) -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_DIRS]
        out += [Path(folder, n) for n in files if n.endswith(".md")]
    return out


def plain_read_s(root: Path) -> float:
    t = time.perf_counter()
    plain_read(root)
    return time.perf_counter() - t


class Timer:
    """Wall time and this process's CPU time of a block (the machine may be shared: the CPU time
    of the action itself says what it costs when the cores are free)."""

    def __enter__(self) -> Timer:
        self.t, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.t, time.process_time() - self.c


def naive_rewrite(root: Path, old: str, new: str) -> float:
    """Regex-scan every file, rewrite ``[[old...]]`` and ``(...old.md)``, ``git add -A``, commit."""
    t = time.perf_counter()
    wikilink = re.compile(r"\[\[" + re.escape(old) + r"(?=[#|\]])")
    mdlink = re.compile(r"\(([^()\s]*?)" + re.escape(old) + r"\.md")
    for f in md_files(root):
        text = f.read_text(encoding="utf-8", errors="replace")
        if old not in text:
            continue
        new_text = mdlink.sub(lambda m: f"({m.group(1)}{new}.md", wikilink.sub(f"[[{new}", text))
        if new_text != text:
            f.write_text(new_text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"naive: {old} -> {new}")
    return time.perf_counter() - t


def build(root: Path) -> None:
    generate(root, N_PAGES)
    (root / KEEP).write_text("---\ntitle: Hub Keep\ntrust: 0.9\n---\n# Hub Keep\n\n## Updates\n\n"
                             "- The hub is the centre of the wiki (added 2026-01-01)\n", encoding="utf-8")
    (root / TWIN).write_text("---\ntitle: Hub Twin\n---\n# Hub Twin\n\nProse about the hub.\n\n## Updates\n\n"
                             "- The hub has 2000 inbound links (added 2026-01-02)\n"
                             "- A bullet that spans\n  two lines [[hub-keep]] (added 2026-01-03)\n",
                             encoding="utf-8")
    pages = sorted(p for p in md_files(root) if p.parent.name != "wiki" or p.stem not in ("hub-keep", "hub-twin"))
    forms = ["See [[hub-twin]].", "By title [[Hub Twin]].", "With text [[hub-twin#Updates|the hub]].",
             "Markdown [hub]({rel})."]
    for i, page in enumerate(pages[: INBOUND]):
        rel = os.path.relpath(root / TWIN, page.parent).replace(os.sep, "/")
        with page.open("a", encoding="utf-8") as f:
            f.write("\n" + forms[i % len(forms)].format(rel=rel) + "\n")
    (root / ".gitignore").write_text(".curator/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "corpus")


def test_merge_and_move_with_2000_inbound_links_in_30k_pages(tmp_path: Path) -> None:
    root = tmp_path / "wiki30k"
    t = time.perf_counter()
    build(root)
    print(f"\ncorpus: {N_PAGES} pages, {INBOUND} linking {TWIN}, built and committed in "
          f"{time.perf_counter() - t:.1f} s")
    wiki = Wiki(root)
    t = time.perf_counter()
    assert len(wiki.pages) > N_PAGES
    links = wiki.links
    print(f"page cache and link index loaded in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    wiki.search.ensure_built()  # as in the station: every action then re-indexes what it changed
    assert wiki.search.active()
    print(f"full-text index built in {time.perf_counter() - t:.1f} s")
    assert len({e.source for e in links.backlinks(TWIN)}) >= INBOUND

    def reset() -> None:
        """Back to the corpus commit between runs (not timed; ``undo`` is timed once below).

        The objects the run wrote are pruned too: every merge writes the same 2,000 rewritten
        pages, and a blob already in the object store is not written again, so without this the
        merges after the first would skip the writing a real merge does (each move writes new
        blobs: its destination differs from run to run)."""
        git(root, "reset", "-q", "--hard", "HEAD~1")
        git(root, "clean", "-qfd", "--", "_archive", "moved")
        git(root, "reflog", "expire", "--expire=now", "--all")
        git(root, "prune", "--expire=now")
        wiki.refresh()

    merge_s: list[float] = []
    merge_cold_s: list[float] = []
    move_s: list[float] = []
    merge_cpu: list[float] = []
    move_cpu: list[float] = []
    reads: list[float] = []
    undo_s = 0.0
    for run in range(RUNS):
        _ = wiki.links  # the station keeps its link index warm; the cold figure is printed too
        reads.append(plain_read_s(root))  # the floor, measured between the runs (same load)
        with Timer() as tm:
            result = merge_pages(wiki, KEEP, TWIN, OPERATOR)
        merge_s.append(tm.wall)
        merge_cpu.append(tm.cpu)
        assert result.status == "merged", result.message
        assert len(result.data["pages_rewritten"]) >= INBOUND
        if run == 0:
            t = time.perf_counter()
            assert undo(wiki, OPERATOR).status == "reverted"
            undo_s = time.perf_counter() - t
            git(root, "reset", "-q", "--hard", "HEAD~1")
        reset()

        t = time.perf_counter()  # link index rebuilt inside (first use after the reset)
        result = merge_pages(wiki, KEEP, TWIN, OPERATOR)
        merge_cold_s.append(time.perf_counter() - t)
        assert result.status == "merged", result.message
        reset()

        _ = wiki.links
        with Timer() as tm:
            result = move_page(wiki, TWIN, f"moved/hub-twin-{run}.md", OPERATOR)
        move_s.append(tm.wall)
        move_cpu.append(tm.cpu)
        assert result.status == "moved", result.message
        assert len(result.data["pages_rewritten"]) >= INBOUND
        reset()
        print(f"run {run + 1}: merge {merge_s[-1]:.2f} s (cpu {merge_cpu[-1]:.2f}), merge with link index rebuild "
              f"{merge_cold_s[-1]:.2f} s, move {move_s[-1]:.2f} s (cpu {move_cpu[-1]:.2f}), plain read "
              f"{reads[-1]:.2f} s, load {os.getloadavg()[0]:.1f}", flush=True)
    wiki.close()

    assert git(root, "status", "--porcelain", "--untracked-files=no").strip() == ""
    naive_s = []
    for _ in range(NAIVE_RUNS):
        naive_s.append(naive_rewrite(root, "hub-twin", "hub-keep"))
        git(root, "reset", "-q", "--hard", "HEAD~1")
    read_s = statistics.median(reads + [plain_read_s(root) for _ in range(3)])

    m, mc, mv, nv = (statistics.median(x) for x in (merge_s, merge_cold_s, move_s, naive_s))
    print(f"merge (link index warm): median {m:.2f} s over {RUNS} runs {[round(x, 2) for x in merge_s]}")
    print(f"merge (link index rebuilt inside): median {mc:.2f} s {[round(x, 2) for x in merge_cold_s]}")
    print(f"move (link index warm):  median {mv:.2f} s over {RUNS} runs {[round(x, 2) for x in move_s]}")
    print(f"naive regex rewrite of every file + git add -A: median {nv:.2f} s over {NAIVE_RUNS} runs")
    print(f"plain read of every file: median {read_s:.2f} s")
    print(f"cpu time of this process: merge median {statistics.median(merge_cpu):.2f} s, "
          f"move median {statistics.median(move_cpu):.2f} s")
    print(f"undo of one merge (a revert action restoring all 2,001 files, not a target here): {undo_s:.1f} s")
    print(f"ratios: merge/naive {m / nv:.2f}, move/naive {mv / nv:.2f}, merge/read {m / read_s:.2f}, "
          f"move/read {mv / read_s:.2f}")
    # The naive rewrite is printed for scale, not as a bar to beat: it does less (no display text
    # kept, no code-awareness, no conservation check, writes in place without fsync, and leaves the
    # page cache and search index stale), so only the absolute target is asserted.
    assert m <= BUDGET_S and mv <= BUDGET_S, (m, mv)
