"""What ``curator dedup --groups`` costs while agents keep appending (issue 44): no answer past
the first may be a full scan, however many pages changed since it.

    .venv/bin/python -m tests.perf.follow_rounds 100000 --rounds 6 --appends 50

On the cached real-shaped wiki (``tests.perf.scale_table``'s, generated once): the answer is first
made from a full scan (the basis removed: the baseline, measured in the same run), then for each
round ``--appends`` facts are appended to as many pages (each its own commit, as an agent's
``wiki_append``) and the answer is timed again. Before a follow wrote a new basis
(``curator/engine/dedup/compact.py``), the answer after 256 changed pages was a full scan again.
Printed: each round's pages changed since the basis the answer followed from, its wall time and
peak memory; then the median and the slowest beside the full scan.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from platformdirs import user_cache_dir

from curator.engine.corpus.state import locate_state
from tests.perf.scale_table import Figure, _run, wiki_at

_APPEND = """
import sys, time
from pathlib import Path
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
root, n, skip = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
pages = sorted(p.stem for p in (root / "wiki" / "concepts").glob("*.md"))
wiki, done = Wiki(root), 0
for slug in pages[skip:]:
    found = append(wiki, slug, f"A follow-rounds fact {time.time_ns()} about the ledger of {slug}.")
    done += found.status == "appended"  # (a fact the page holds already, a refusal: nothing written)
    if done >= n:
        break
"""


def _since_basis(root: Path) -> int:
    """How many pages changed since the basis the next answer follows from."""
    from curator.engine.dedup import follow
    from curator.engine.wiki import Wiki

    wiki = Wiki(root)
    wiki.store.stamps()
    found = wiki.store.derived_since(follow.NAME)
    wiki.close()
    return -1 if found is None else len(found[1])


def _detached_compaction_seconds(root: Path) -> float:
    """How long after the command a detached compaction it started still ran (0: none did)."""
    import time

    from curator.engine.dedup.detached import compacting

    state, start = locate_state(root), time.perf_counter()
    time.sleep(2.0)  # (a child just started takes the lock within this: it imports the program first)
    if not compacting(state):
        return 0.0
    while compacting(state):
        time.sleep(0.1)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="?", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--appends", type=int, default=50)
    args = parser.parse_args(argv)
    if args.pages > 100_000 and not os.environ.get("CURATOR_PERF_300K"):
        parser.error("more than 100,000 pages is opt-in: set CURATOR_PERF_300K=1")
    root = wiki_at(args.pages, Path(os.environ.get("CURATOR_PERF_CACHE") or user_cache_dir("curator")) / "perf")
    curator = [sys.executable, "-m", "curator.cli", "--wiki", str(root)]
    _run([*curator, "index"])
    # the baseline: a full scan (the pages moved on, so no kept answer holds; no basis to follow)
    subprocess.run([sys.executable, "-c", _APPEND, str(root), "1", "0"], check=True)
    (locate_state(root) / "dedup-basis.bin").unlink(missing_ok=True)
    scan = _run([*curator, "dedup", "--groups"])
    print(f"\n{args.pages} real-shaped pages; full scan (no basis): {scan.seconds:.1f} s, {scan.peak_mb:.0f} MB\n")
    print("| round | pages changed since the basis | `dedup --groups` | peak MB | a new basis made after it |")
    print("|---|---|---|---|---|")
    figures: list[Figure] = []
    skip = 1
    for r in range(args.rounds):
        subprocess.run([sys.executable, "-c", _APPEND, str(root), str(args.appends), str(skip)], check=True)
        skip += args.appends
        since = _since_basis(root)
        figure = _run([*curator, "dedup", "--groups"])
        figures.append(figure)
        # (a due basis is made by a process of its own, curator/engine/dedup/detached.py: the
        # next round starts once it is done, so its appends and answer do not share the cores)
        behind = _detached_compaction_seconds(root)
        print(f"| {r + 1} | {since} | {figure.seconds:.2f} s | {figure.peak_mb:.0f} | "
              f"{f'{behind:.1f} s more, in the background' if behind else '-'} |", flush=True)
    median = statistics.median(f.seconds for f in figures)
    slowest = max(figures, key=lambda f: f.seconds)
    print(f"\nmedian {median:.2f} s, slowest {slowest.seconds:.2f} s ({slowest.peak_mb:.0f} MB): "
          f"{slowest.seconds / scan.seconds:.2f}x the full scan")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
