"""The scale table of issue 44: what each derived answer costs warm and after ONE append, beside a
plain read of the pages, at 32,000 / 100,000 / 300,000 real-shaped pages.

    .venv/bin/python -m tests.perf.scale_table              # 32,000 pages
    .venv/bin/python -m tests.perf.scale_table 100000       # 100,000 (about 530 MB of pages)
    CURATOR_PERF_300K=1 .venv/bin/python -m tests.perf.scale_table 300000   # opt-in: ~1.5 GB

``make perf`` prints it at 32,000 pages before the benchmarks of tests/perf. Each wiki is
generated once (``tests.corpus.generate``, profile ``real-shaped``, with git) into a cache folder
(``CURATOR_PERF_CACHE``, else the user's cache folder) and reused; every run appends a few dozen
facts to it, as agents would.

Every figure is a whole ``curator`` process (its wall time, and the peak resident memory of the
largest process it ran, helpers included in the time), median of ``--runs`` (5). "after one
append" is: ``curator append`` of a new fact to another page, then the command, timed. The
baselines are measured in the same run: a plain read of every page (``cat``) and ``grep -rl``
over them. The targets printed are the issue's: after one append at most 1.5x the command's own
warm figure and at most 2 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

from curator.engine.corpus.state import locate_state

#: The commands of the table: (label, curator arguments).
COMMANDS = [
    ("dedup --groups", ["dedup", "--groups"]),
    ("lint", ["lint"]),
    ("health", ["health"]),
    ("links unresolved", ["links", "unresolved"]),
    ("search", ["search", "ledger"]),
    ("index", ["index"]),
]
AFTER_MAX_RATIO = 1.5
AFTER_MAX_S = 2.0


@dataclass
class Figure:
    seconds: float
    peak_mb: float


def _run(argv: list[str], *, shell: bool = False) -> Figure:
    """One process: wall time and the peak resident memory of its largest child (``wait4``)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, shell=shell)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):  # (lint and health answer 1 when they find problems)
        raise SystemExit(f"{' '.join(argv)[:200]} failed ({proc.returncode}): {err[-500:]}")
    return Figure(took, usage.ru_maxrss / 1024)


def _median(figures: list[Figure]) -> Figure:
    return Figure(statistics.median(f.seconds for f in figures), max(f.peak_mb for f in figures))


def wiki_at(pages: int, cache: Path) -> Path:
    """The cached real-shaped wiki of ``pages`` pages (generated on first use)."""
    root = cache / f"real-shaped-{pages}"
    if not (root / ".git").is_dir():
        from tests.corpus import generate

        shutil.rmtree(root, ignore_errors=True)
        print(f"generating {pages} real-shaped pages into {root} (once) ...", flush=True)
        generate(root, pages, seed=44, profile="real-shaped", git=True)
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="?", type=int, default=32000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", action="append", metavar="LABEL", help="only this command (repeatable)")
    args = parser.parse_args(argv)
    if args.pages > 100_000 and not os.environ.get("CURATOR_PERF_300K"):
        parser.error("more than 100,000 pages is opt-in: set CURATOR_PERF_300K=1")
    cache = Path(os.environ.get("CURATOR_PERF_CACHE") or user_cache_dir("curator")) / "perf"
    root = wiki_at(args.pages, cache)
    curator = [sys.executable, "-m", "curator.cli", "--wiki", str(root)]
    pages = sorted(p.relative_to(root / "wiki").with_suffix("").as_posix()
                   for p in (root / "wiki" / "concepts").glob("*.md"))[:200]
    appended = iter(pages)

    def append_one() -> None:
        for page in appended:  # (a slug two pages share answers candidates: the next page then)
            done = subprocess.run([*curator, "append", page.rsplit("/", 1)[-1],
                                   f"A scale-table fact {time.time_ns()} about the ledger.", "--json"],
                                  capture_output=True, text=True)
            if '"status": "appended"' in done.stdout:
                return
        raise SystemExit("no page took the appended fact")

    _run([*curator, "index"])  # (the cache current, pages in the OS cache)
    quoted = str(root).replace("'", "'\\''")
    plain = f"find '{quoted}' -name .git -prune -o -name '*.md' -print0 | xargs -0 cat > /dev/null"
    grep = f"grep -rl --include='*.md' --exclude-dir=.git ledger '{quoted}' > /dev/null"
    read = _median([_run([plain], shell=True) for _ in range(args.runs)])
    grepped = _median([_run([grep], shell=True) for _ in range(args.runs)])
    print(f"\n{args.pages} real-shaped pages, medians of {args.runs}; plain read {read.seconds:.2f} s, "
          f"grep -rl {grepped.seconds:.2f} s\n")
    print("| command | warm | after one append | after / warm | after / plain read | peak MB (warm / after) | target |")
    print("|---|---|---|---|---|---|---|")
    failed = 0
    for label, command in COMMANDS:
        if args.only and label not in args.only:
            continue
        _run([*curator, *command])  # (settled: what the last append left is taken in)
        warm = _median([_run([*curator, *command]) for _ in range(args.runs)])
        after: list[Figure] = []
        for _ in range(args.runs):
            append_one()
            after.append(_run([*curator, *command]))
        late = _median(after)
        ratio = late.seconds / warm.seconds
        ok = ratio <= AFTER_MAX_RATIO and late.seconds <= AFTER_MAX_S
        failed += not ok
        print(f"| `{label}` | {warm.seconds:.2f} s | {late.seconds:.2f} s | {ratio:.2f}x | "
              f"{late.seconds / read.seconds:.1f}x | {warm.peak_mb:.0f} / {late.peak_mb:.0f} | "
              f"{'met' if ok else 'NOT met'} (<= {AFTER_MAX_RATIO}x, <= {AFTER_MAX_S:.0f} s) |", flush=True)
    state = sum(f.stat().st_size for f in locate_state(root).glob("*") if f.is_file())
    pages_bytes = sum(f.stat().st_size for f in root.rglob("*.md") if ".git" not in f.parts)
    print(f"\n.curator/ {state / 1e6:.1f} MB for {pages_bytes / 1e6:.1f} MB of pages: "
          f"{state / pages_bytes:.2f}x (target <= 0.5x)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
