"""The station's memory through a first open, Health and the Duplicates view, in a process of its own.

Run: ``python -m tests.perf.station_memory WIKI`` (offscreen). Opens the station on ``WIKI`` as
``curator gui`` builds it, waits for Health's figures (the duplicate count too), shows the
Duplicates view, waits for its queue and for the dedup index's every-page build it starts (in the
dedup worker process), makes one change and asks for the families again, then prints one JSON line: the station process's peak and current resident
bytes (``VmHWM``/``VmRSS``: this process only, never its children), the dedup worker's (its own
peak and that of the processes its scan started), and when each step was done (seconds from the
start of this process's work).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curator.engine.dedup.index import DedupIndex
from curator.engine.dedup.worker import DedupWorker


def _vm(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def main(root: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from curator.views.settings import Settings
    from curator.views.shell.main_window import MainWindow
    from curator.views.shell.registry import install_views
    from curator.views.workspace import Workspace

    app = QApplication.instance() or QApplication([])
    start = time.perf_counter()

    def wait(cond: Callable[[], bool], timeout: float = 900.0) -> float:
        deadline = time.perf_counter() + timeout
        while not cond():
            if time.perf_counter() > deadline:
                raise TimeoutError("the station did not get there in time")
            app.processEvents()
            time.sleep(0.005)
        return time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        win = MainWindow(Workspace(Path(root), watch=False), Settings(QSettings(str(Path(tmp) / "settings.ini"),
                                                                        QSettings.Format.IniFormat)))
        install_views(win)
        win.resize(1400, 900)
        win.show()
        win.start()
        health: Any = win.view_index["health"]
        ready = wait(lambda: win.workspace.ready)
        stages = {"ready": _vm("VmRSS")}
        peaks = {"ready": _vm("VmHWM")}
        counted = wait(lambda: "duplicates" in health.buttons and health.buttons["duplicates"].figure.value is not None)
        wait(health.is_content_ready)
        stages["health"] = _vm("VmRSS")
        peaks["health"] = _vm("VmHWM")
        view: Any = win.view_index["dedup"]
        shown: list[float] = []
        view.content_ready.connect(lambda: shown.append(time.perf_counter() - start))
        opened = time.perf_counter() - start
        win.show_view("dedup")
        wait(lambda: bool(shown))
        stages["queue"] = _vm("VmRSS")
        peaks["queue"] = _vm("VmHWM")
        worker = win.workspace.wiki(0).session.peek(DedupWorker)
        assert worker is not None and win.workspace.wiki(0).session.peek(DedupIndex) is None
        time.sleep(1.5)  # (the build starts a second after the queue is shown)
        wait(lambda: (s := worker.status())["scanned"] and not s["kept"] and not s["building"])
        built = time.perf_counter() - start
        status = worker.status()
        # one change, as an edit makes it: the station sees it (its refresh), then the families
        # the queue asks for follow it page by page in the worker
        wiki = win.workspace.wiki(0)
        path = next(p for p in sorted(wiki.pages) if p.endswith(".md"))
        page = Path(root) / path
        text = page.read_text("utf-8")
        page.write_text(text + "\nOne more line, written to measure a change.\n", "utf-8")
        try:
            t0 = time.perf_counter()
            wiki.refresh([path])
            t1 = time.perf_counter()
            worker.families()
            t2 = time.perf_counter()
        finally:
            page.write_text(text, "utf-8")
            wiki.refresh([path])
        after = worker.status()
        out = {"station_peak": _vm("VmHWM"), "station_rss": _vm("VmRSS"), "worker_pid": status["pid"],
               "station_pid": os.getpid(), "worker_peak": status["peak"], "worker_rss": status["rss"],
               "worker_children_peak": status["children_peak"], "features": status["features"],
               "ready": ready, "duplicates_counted": counted, "queue_to_content": shown[0] - opened,
               "built": built, "families": view.model.rowCount(),
               "station_refresh_after_change": t1 - t0, "families_after_change": t2 - t1,
               "worker_peak_after_change": after["peak"], "station_peak_after_change": _vm("VmHWM"),
               "stages": stages, "peaks": peaks}
        win.close()
        app.processEvents()
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
