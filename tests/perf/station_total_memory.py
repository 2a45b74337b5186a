"""The station's total memory at scale (issue 44: the station at most 800 MB in total, its helper
processes included, at 32,000 pages): the resident memory of the station's process and of every
process it started (the dedup worker, a scan's process and its shingling processes), summed as
PSS (a page two processes share, as a forked child shares its parent's, counted once; the RSS
sum, which counts it in each, is printed beside it), sampled every 50 ms through what an operator
does first.

    .venv/bin/python -m tests.perf.station_total_memory              # 32,000 pages
    .venv/bin/python -m tests.perf.station_total_memory 100000

(:mod:`tests.perf.station_memory` is another measure: one station process's own memory on the
small test corpus, for ``test_perf_health``.)

On the scale table's wiki (``tests.perf.scale_table.wiki_at``: generated once into
``CURATOR_PERF_CACHE``), settled first (``curator dedup --groups``: the kept result and the basis a
station finds on a warm open), a new window watching the pages goes through:

1. ``open``: the window usable and Health with every figure counted;
2. ``duplicates``: the Duplicates queue's families shown, then its background build done;
3. ``appends``: three facts appended by another process (as an agent would), each picked up by
   the station's watcher and followed by the dedup worker (the agents' processes are started
   from here but are not the station's: they are not counted);
4. ``health again``: Health shown once more.

With ``--cold`` the window opens a copy of the wiki without its state folder instead (nothing
settled: the station parses every page and its dedup worker scans them all).

Printed: each step's peak (the sums, and the station's own process), the peak overall and what
is held at the end, against the issue's target. Linux only (the processes are found in /proc).
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from tests.perf.scale_table import wiki_at

TARGET_MB = 800
SAMPLE_S = 0.05
APPENDS = 3


def proc_kb(path: str, field: str) -> int:
    """The kB of ``field`` (``VmRSS:``, ``Pss:`` ...) in the /proc file ``path`` (0: gone)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _resident_kb(pid: int) -> int:
    return proc_kb(f"/proc/{pid}/status", "VmRSS:")


def _pss_kb(pid: int) -> int:
    return proc_kb(f"/proc/{pid}/smaps_rollup", "Pss:")


def _family(root_pid: int, outside: frozenset[int] = frozenset()) -> list[int]:
    """``root_pid`` and every process descended from it, but for those under ``outside``."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
            parent = int(stat[stat.rfind(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    out, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        if pid in outside:
            continue
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


class Sampler:
    """The summed resident memory of this process and its descendants, every SAMPLE_S, the
    peaks kept per step (:attr:`step`)."""

    def __init__(self) -> None:
        self.step = "start"
        self.peaks: dict[str, tuple[int, int, int]] = {}  # step -> (PSS sum, RSS sum, this process's RSS) in kB
        #: the agents' processes (and theirs): started from here, yet not the station's
        self.outside: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> tuple[int, int, int]:
        """(the summed PSS, the summed RSS, this process's RSS) in kB. The PSS is what the
        processes hold between them: a page shared by a forked child and its parent (or the Qt
        and Python libraries every process maps) counts once, where the RSS counts it in each."""
        me = os.getpid()
        family = _family(me, frozenset(self.outside))
        return sum(_pss_kb(p) for p in family), sum(_resident_kb(p) for p in family), _resident_kb(me)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = self.now()
            best = self.peaks.get(self.step, (0, 0, 0))
            self.peaks[self.step] = (max(best[0], now[0]), max(best[1], now[1]), max(best[2], now[2]))
            time.sleep(SAMPLE_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="?", type=int, default=32_000)
    parser.add_argument("--cold", action="store_true",
                        help="open a copy of the wiki without its state folder: the dedup worker scans every page")
    args = parser.parse_args(argv)
    if args.pages > 100_000 and not os.environ.get("CURATOR_PERF_300K"):
        parser.error("more than 100,000 pages is opt-in: set CURATOR_PERF_300K=1")
    if not Path("/proc/self/status").exists():
        parser.error("this measure reads /proc (Linux)")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    cache = Path(os.environ.get("CURATOR_PERF_CACHE") or user_cache_dir("curator")) / "perf"
    root = wiki_at(args.pages, cache)
    if args.cold:
        copy = tempfile.TemporaryDirectory(prefix="curator-cold-")
        atexit.register(copy.cleanup)
        root = shutil.copytree(root, Path(copy.name) / "wiki", symlinks=True, ignore=shutil.ignore_patterns(".curator"))
    curator = [sys.executable, "-m", "curator.cli", "--wiki", str(root)]
    if not args.cold:
        subprocess.run([*curator, "dedup", "--groups"], check=True, capture_output=True)  # (settled: a warm open)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from curator.engine.dedup.worker import worker_for
    from curator.engine.memory import return_freed_memory
    from curator.views.settings import Settings
    from curator.views.shell.main_window import MainWindow
    from curator.views.shell.registry import install_views
    from curator.views.workspace import Workspace

    app = QApplication.instance() or QApplication([])
    return_freed_memory()  # (as `curator gui` does at its start: the station is this process)

    def wait(done: Callable[[], bool], seconds: float, what: str) -> None:
        end = time.monotonic() + seconds
        while not done():
            if time.monotonic() > end:
                raise SystemExit(f"{what}: not within {seconds:.0f} s")
            app.processEvents()
            time.sleep(0.01)

    sampler = Sampler()
    settings = Settings(QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"), QSettings.Format.IniFormat))
    win = MainWindow(Workspace(root, watch=True), settings)
    install_views(win)
    win.resize(1400, 900)
    win.show()
    health: Any = win.view("health")
    seen: set[str] = set()
    win.ready.connect(lambda: seen.add("ready"))
    health.content_ready.connect(lambda: seen.add("health"))
    try:
        sampler.step = "open"
        win.start()
        wait(lambda: {"ready", "health"} <= seen, 600, "the window and Health")
        sampler.step = "duplicates"
        win.show_view("dedup")
        queue: Any = win.view("dedup")
        wait(queue.is_content_ready, 600, "the Duplicates queue")
        wiki = win.workspace.wiki(0)
        worker = worker_for(wiki)

        def built() -> bool:
            status = worker.status()
            return bool(status["scanned"]) and not status["building"]

        wait(built, 600, "the dedup build")
        sampler.step = "appends"
        pages = sorted(p.stem for p in (root / "wiki" / "concepts").glob("*.md"))[-APPENDS:]
        for page in pages:
            before = wiki.store.state

            def picked_up(before: bytes | None = before) -> bool:
                return wiki.store.state != before

            agent = subprocess.Popen([*curator, "append", page, f"A station-memory fact {time.time_ns()} about the ledger."],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            sampler.outside.add(agent.pid)
            _out, err = agent.communicate()
            if agent.returncode:
                raise SystemExit(f"curator append failed: {err.decode(errors='replace').strip()}")
            wait(picked_up, 60, "the watcher")
            worker.count()  # (the worker follows the change, as Health's count asks it to)
        sampler.step = "health again"
        seen.discard("health")
        win.show_view("health")
        wait(lambda: "health" in seen, 300, "Health again")
        time.sleep(1.0)
        held = sampler.now()
    finally:
        sampler.stop()
        win.workspace.close()
        win.close()
        app.processEvents()

    print(f"\n{args.pages} real-shaped pages: the station and the processes it started, resident memory "
          f"sampled every {SAMPLE_S * 1000:.0f} ms\n")
    print("| step | peak, all processes (PSS) | (RSS) | peak, the station's own (RSS) |")
    print("|---|---|---|---|")
    for step, (pss, rss, own) in sampler.peaks.items():
        if step != "start":
            print(f"| {step} | {pss / 1024:.0f} MB | {rss / 1024:.0f} MB | {own / 1024:.0f} MB |")
    peak = max(pss for pss, _, _ in sampler.peaks.values())
    ok = peak / 1024 <= TARGET_MB
    print(f"\nheld at the end: {held[0] / 1024:.0f} MB PSS ({held[1] / 1024:.0f} MB RSS, {held[2] / 1024:.0f} MB "
          f"the station's own); peak {peak / 1024:.0f} MB PSS: {'met' if ok else 'NOT met'} (<= {TARGET_MB} MB)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
