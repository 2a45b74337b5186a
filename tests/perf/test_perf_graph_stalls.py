"""Where the graph view's GUI-thread stalls come from (issue 17): the station opened warm on a
big wiki as ``curator gui`` builds it, Health's figures loaded (its background counting runs on
while the graph loads, as in the scale benchmark's probe), then the graph view shown (the overview
by community a big wiki opens on), then the global graph; a 5 ms timer on the GUI thread, and a
watchdog thread that samples the GUI thread's Python stack every 2 ms. Every gap between two
ticks longer than ``CURATOR_STALL_REPORT_MS`` (50) is printed with the stacks the watchdog saw in
it (none: the interpreter lock was held by a C call all along, and the stacks of the other
threads at the gap's edges say whose).

Run: ``CURATOR_STALL_WIKI=<a wiki with .curator/ kept> .venv/bin/python -m pytest
tests/perf/test_perf_graph_stalls.py -s -p no:cacheprovider`` (``CURATOR_STALL_RUNS``: 3).
Without ``CURATOR_STALL_WIKI`` a 32,000-page real-shaped corpus is generated first.
"""

from __future__ import annotations

import functools
import itertools
import os
import statistics
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import generate

RUNS = int(os.environ.get("CURATOR_STALL_RUNS", "3"))
REPORT_MS = float(os.environ.get("CURATOR_STALL_REPORT_MS", "50"))

pytestmark = pytest.mark.timeout(3600)


class Watchdog:
    """Samples the Python stack of one thread (and, in each sample, every other thread's top
    frames) every ``interval`` seconds, with the time of each sample."""

    def __init__(self, thread_id: int, interval: float = 0.002) -> None:
        self.thread_id = thread_id
        self.interval = interval
        self.samples: list[tuple[float, str, str]] = []  # time, GUI stack, others' tops
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="stall-watchdog")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = threading.get_ident()
        names = {t.ident: t.name for t in threading.enumerate()}
        while not self._stop.wait(self.interval):
            now = time.perf_counter()
            frames = sys._current_frames()
            gui = frames.get(self.thread_id)
            stack = "".join(traceback.format_stack(gui, limit=6)) if gui is not None else "?"
            others = []
            for ident, frame in frames.items():
                if ident in (me, self.thread_id):
                    continue
                top = traceback.extract_stack(frame, limit=3)
                where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(top))
                others.append(f"    [{names.get(ident, ident)}] {where}")
            self.samples.append((now, stack, "\n".join(others)))


#: (start, end, thread CPU seconds, name) of every timed call on the GUI thread (see _time_calls)
CALLS: list[tuple[float, float, float, str]] = []


def _time_calls() -> None:
    """Wrap the graph view's GUI-thread steps (and pyqtgraph's paints) to record each call's wall
    and CPU time: a gap is then either one long call (its CPU time says whether it computed or
    waited for the interpreter lock) or happens between the calls (Qt's own work)."""
    import functools

    import pyqtgraph as pg

    from curator.views.graph import edges as graph_edges
    from curator.views.graph import graph_view

    gui = threading.get_ident()
    targets: list[tuple[Any, str]] = [(graph_view.GraphView, m) for m in (
        "_show", "_redraw", "_draw_chunks", "_draw_labels", "_place_labels", "_update_highlight", "_ensure_plot",
        "reload", "mark_ready", "showEvent")]
    targets += [(graph_edges.EdgeLayer, m) for m in ("paint", "_rendered", "set_segments", "_render")]
    targets += [(pg.TextItem, "paint"), (pg.ViewBox, "updateMatrix"), (pg.PlotWidget, "paintEvent"),
                (pg.GraphicsView, "paintEvent"), (pg.ScatterPlotItem, "setData")]
    for cls, method in targets:
        original = getattr(cls, method)

        def wrapped(*args: Any, __original: Any = original, __name: str = f"{cls.__name__}.{method}",
                    **kwargs: Any) -> Any:
            if threading.get_ident() != gui:
                return __original(*args, **kwargs)
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return __original(*args, **kwargs)
            finally:
                CALLS.append((start, time.perf_counter(), time.thread_time() - cpu, __name))

        setattr(cls, method, functools.wraps(original)(wrapped))


def _report(name: str, ticks: list[float], dog: Watchdog) -> float:
    worst = 0.0
    for before, after in itertools.pairwise(ticks):
        gap = (after - before) * 1000
        worst = max(worst, gap)
        if gap < REPORT_MS:
            continue
        inside = [s for s in dog.samples if before < s[0] < after]
        print(f"\n=== {name}: gap {gap:.0f} ms; {len(inside)} watchdog samples inside")
        for start, end, cpu, call in CALLS:
            if start < after and end > before:
                print(f"  call {call}: {(start - before) * 1000:+.0f} ms, {(end - start) * 1000:.1f} ms wall, "
                      f"{cpu * 1000:.1f} ms CPU")
        for stack, count in Counter(s[1] for s in inside).most_common(3):
            print(f"--- GUI thread, {count} samples:\n{stack}")
        edges = [s for s in dog.samples if s[0] <= before][-1:] + [s for s in dog.samples if s[0] >= after][:1]
        for when, stack, others in edges:
            print(f"--- at {'start' if when <= before else 'end'} ({(when - before) * 1000:+.0f} ms): GUI:\n"
                  f"{stack.splitlines()[-2:] if stack else ''}\n  others:\n{others}")
    return worst


def test_graph_view_stalls(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QTimer

    from curator.views.graph.graph_view import GraphView
    from curator.views.wiki_view import WikiView
    from tests.gui_helpers import loaded_window

    given = os.environ.get("CURATOR_STALL_WIKI")
    root = Path(given) if given else generate(tmp_path / "wiki", 32000, seed=0, profile="real-shaped",
                                              git=True).root
    _time_calls()
    if os.environ.get("CURATOR_STALL_SWITCH"):  # (an experiment: the interpreter's switch interval)
        sys.setswitchinterval(float(os.environ["CURATOR_STALL_SWITCH"]))
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    dog = Watchdog(threading.get_ident())
    dog.start()

    def probe(name: str, signal: Any, start: Any) -> float:
        ticks.clear()
        dog.samples.clear()
        CALLS.clear()
        timer.start(5)
        with qtbot.waitSignal(signal, timeout=300_000):
            start()
        qtbot.wait(200)
        timer.stop()
        return _report(name, ticks, dog)

    results: dict[str, list[float]] = {}
    if not given:  # a first open makes .curator/
        loaded_window(qtbot, root, tmp_path, watch=False, timeout=300_000).close()
    for _ in range(RUNS):
        win = loaded_window(qtbot, root, tmp_path, watch=False, station=True, timeout=300_000)
        health = win.view("health")
        assert isinstance(health, WikiView)
        if not health.is_content_ready():
            with qtbot.waitSignal(health.content_ready, timeout=300_000):
                win.show_view("health")
        graph = win.view("graph")
        assert isinstance(graph, GraphView)
        results.setdefault("graph view load", []).append(
            probe(f"graph view load ({graph.mode.currentText()})", graph.content_ready,
                  functools.partial(win.show_view, "graph")))
        assert graph.data is not None
        if graph.mode.currentIndex() != 0:
            results.setdefault("Global", []).append(
                probe("Global", graph.content_ready, functools.partial(graph.mode.setCurrentIndex, 0)))
        win.close()
    dog.stop()
    load = Path("/proc/loadavg").read_text().split()[:3]
    for name, worsts in results.items():
        print(f"\n{name}: worst {max(worsts):.0f} ms, median {statistics.median(worsts):.0f} ms; "
              f"each run {', '.join(f'{w:.0f}' for w in worsts)} (load {' '.join(load)})")
