"""Foundation benchmark (issue 2): ``curator --help``, and ``curator index --json`` over 10,000
pages cold (no ``.curator/``) and warm (unchanged), end to end as real processes, next to a
plain read of every file measured in the same run.

Run: ``.venv/bin/pytest tests/perf/test_perf_foundation.py -s``. Budgets: help <= 0.3 s,
cold index <= 4 s, warm index <= 0.6 s (medians).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.engine.corpus.state import locate_state
from tests.corpus import CorpusInfo, generate, plain_read

N_PAGES = 10_000
HELP_BUDGET = 0.3
COLD_BUDGET = 4.0
WARM_BUDGET = 0.6
CURATOR = str(Path(sys.executable).with_name("curator"))

pytestmark = pytest.mark.timeout(900)

# The plain read: walk the tree and read every page's bytes, nothing else.
PLAIN_READ = """
import os, sys
total = 0
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    dirnames[:] = [d for d in dirnames if d not in (".git", ".curator")]
    for name in filenames:
        if name.endswith(".md"):
            with open(os.path.join(dirpath, name), "rb") as f:
                total += len(f.read())
print(total)
"""


def median_seconds(action: Callable[[], object], runs: int,
                   before: Callable[[], object] | None = None) -> tuple[float, float]:
    """Median wall time and median CPU time (this process plus finished children) of ``action``.

    The CPU column shows what the work itself costs when other jobs share the machine's cores.
    """
    walls, cpus = [], []
    for _ in range(runs):
        if before is not None:
            before()
        cpu0 = _cpu()
        start = time.perf_counter()
        action()
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu0)
    return statistics.median(walls), statistics.median(cpus)


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_ok(argv: list[str]) -> bytes:
    proc = subprocess.run(argv, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusInfo:
    return generate(tmp_path_factory.mktemp("perf") / "wiki", N_PAGES, seed=0)


def test_cli_does_not_import_qt() -> None:
    code = ("import sys, io, contextlib\nfrom curator.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    # the console script itself, as users run it: no Qt module in its import log
    proc = subprocess.run([sys.executable, "-X", "importtime", CURATOR, "--help"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "curator.cli" in proc.stderr
    assert "PySide6" not in proc.stderr and "shiboken6" not in proc.stderr


def test_foundation_budgets(corpus: CorpusInfo) -> None:
    root = str(corpus.root)
    state = locate_state(corpus.root)  # (not a repository: under the cache folder)

    def plain_in_process() -> int:
        return plain_read(root)

    def clear_state() -> None:
        shutil.rmtree(state, ignore_errors=True)

    index = [CURATOR, "--wiki", root, "index", "--json"]
    # warm the OS file cache so every variant reads from memory alike
    plain_in_process()
    python_start = median_seconds(lambda: run_ok([sys.executable, "-c", "pass"]), 7)
    plain = median_seconds(plain_in_process, 5)
    plain_proc = median_seconds(lambda: run_ok([sys.executable, "-c", PLAIN_READ, root]), 5)
    help_time = median_seconds(lambda: run_ok([CURATOR, "--help"]), 7)
    cold = median_seconds(lambda: run_ok(index), 5, before=clear_state)
    warm = median_seconds(lambda: run_ok(index), 7)
    assert len(run_ok(index).splitlines()) == N_PAGES + 2  # "[", one line per page, "]"

    rows = [
        ("python -c pass (start-up)", python_start, None),
        ("plain read, in process", plain, None),
        ("plain read, own process", plain_proc, None),
        ("curator --help", help_time, HELP_BUDGET),
        ("curator index --json, cold", cold, COLD_BUDGET),
        ("curator index --json, warm", warm, WARM_BUDGET),
    ]
    megabytes = sum(f.stat().st_size for f in corpus.root.rglob("*.md")) / 1e6
    print(f"\n{N_PAGES} pages, {megabytes:.1f} MB; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'measurement (median of runs)':30} {'wall s':>7} {'cpu s':>6} {'budget':>6} "
          f"{'x plain read':>12} {'x plain process':>15}")
    for name, (wall, cpu), budget in rows:
        limit = f"{budget:.1f}" if budget else "-"
        print(f"{name:30} {wall:7.3f} {cpu:6.3f} {limit:>6} {wall / plain[0]:12.1f} {wall / plain_proc[0]:15.1f}")

    assert help_time[0] <= HELP_BUDGET
    assert cold[0] <= COLD_BUDGET
    assert warm[0] <= WARM_BUDGET
