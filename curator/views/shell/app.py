"""GUI start-up: the QApplication, which wiki to open, the main window, ``--screenshot``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from curator.views.settings import Settings
    from curator.views.shell.main_window import MainWindow

SCREENSHOT_SIZE = (1400, 900)
#: What ``--screenshot`` prints the moment the window is usable (its page list filled and the
#: first page shown), before the view is rendered and saved and the station shuts down.
USABLE_LINE = "usable"
_windows: list[MainWindow] = []  # keeps open windows alive


def demo_wiki() -> Path:
    """The user's copy of the bundled demo wiki (made on first use)."""
    from curator.engine.write.bootstrap import copy_demo
    from curator.paths import resources_dir, user_data_dir

    return copy_demo(resources_dir() / "demo-wiki", user_data_dir() / "demo-wiki")


def choose_target(target: str | None, settings: Settings) -> Path:
    """The folder named on the command line, else the last one opened, else the demo wiki."""
    from curator.engine.errors import CuratorError

    if target:
        path = Path(target).expanduser()
        if not path.is_dir():
            raise CuratorError(f"{target} is not a folder (give a wiki root or a home)")
        return path
    for recent in settings.recent_wikis:
        if Path(recent).is_dir():
            return Path(recent)
    return demo_wiki()


def open_workspace_window(folder: Path, settings: Settings, watch: bool = True) -> MainWindow:
    from curator.engine.corpus.store import gc_paused

    with gc_paused():  # (see _run)
        window = _workspace_window(folder, settings, watch)
    window.start()
    return window


def _workspace_window(folder: Path, settings: Settings, watch: bool) -> MainWindow:
    """The window of ``folder``'s workspace, shown, its load not started (:meth:`MainWindow.start`)."""
    from curator.views.shell.main_window import MainWindow
    from curator.views.shell.registry import install_views
    from curator.views.workspace import Workspace

    window = MainWindow(Workspace(folder, watch=watch), settings)
    window.open_requested.connect(lambda next_folder: open_workspace_window(next_folder, settings))
    install_views(window)
    from curator.views.shell.sync_status import install as install_sync

    install_sync(window, auto=watch)  # no background syncs while rendering a screenshot
    _windows.append(window)
    window.destroyed.connect(lambda *_: _windows.remove(window) if window in _windows else None)
    window.show()
    return window


def _walk_ahead(target: str | None) -> bool:
    """Start the walk of the named wiki's files (every page's stamp, the first thing its load
    needs) in a forked child now, while this process imports Qt and the views and builds the
    window (~0.2-0.5 s of stats at 32,000 pages, on the other core; see walker.walk_ahead).

    Only while this process is small: one thread and no Qt application yet (a station started by
    the console script, not one made inside a test or another program). Not for a home: its
    wikis are walked one by one, each by its own store. Returns whether a walk was started."""
    import threading

    if not target or threading.active_count() > 1 or "PySide6.QtCore" in sys.modules:
        return False
    from curator.engine.corpus.home import is_home
    from curator.engine.corpus.walker import walk_ahead

    path = Path(target).expanduser()
    if not path.is_dir() or is_home(path):
        return False
    return walk_ahead(path)


def run(target: str | None, screenshot: str | None = None, view: str = "main",
        theme: str | None = None) -> int:
    ahead = _walk_ahead(target)
    try:
        return _run(target, screenshot, view, theme)
    finally:
        if ahead:
            from curator.engine.corpus.walker import drop_ahead

            drop_ahead()  # (a walk the load did not take: the wiki failed to open first)


def _run(target: str | None, screenshot: str | None, view: str, theme: str | None) -> int:
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    from curator.engine.memory import return_freed_memory

    return_freed_memory()  # (a station runs for days: the memory a query freed goes back)
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from curator.engine.corpus.store import gc_paused

    # Up to the window on screen the station only imports and builds (~10^5 objects: modules,
    # classes, widgets, none of them garbage), and the cyclic collector went over them again and
    # again (~0.1 s of a warm open). The pause ends, its survivors frozen, before the load starts:
    # the load pauses the collector itself, and a pause ending during it would resume it there.
    with gc_paused():
        app, window = _start_up(target, screenshot, theme)
    window.start()
    try:
        if screenshot:
            return _screenshot(app, window, Path(screenshot), view)
        return app.exec()
    finally:
        shutdown(app)


def _start_up(target: str | None, screenshot: str | None, theme: str | None) -> tuple[QApplication, MainWindow]:
    """The application and the window of the chosen folder, shown (its load not started)."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from curator.paths import resources_dir
    from curator.views.settings import Settings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Curator")
    app.setOrganizationName("Curator")
    app.setDesktopFileName("io.github.curator.Curator")
    icon = resources_dir() / "icons" / "curator.svg"
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    _close_on_signals(app)
    settings = Settings()
    if theme:
        settings.theme = theme
    folder = choose_target(target, settings)
    return app, _workspace_window(folder, settings, watch=not screenshot)


def _close_on_signals(app: QApplication) -> None:
    """Ctrl-C in the terminal (SIGINT) or a SIGTERM closes the station as closing its windows
    does (unsaved edits asked about, the wikis closed in order); a second one quits at once.

    Python runs its signal handlers only between bytecodes of the main thread, which sits in
    Qt's event loop: a timer gives it that turn. Without this, Ctrl-C raised KeyboardInterrupt
    inside whichever slot ran next (a traceback on the terminal) and the station went on."""
    import signal

    from PySide6.QtCore import QTimer

    asked = {"close": False}

    def on_signal(_signum: int, _frame: object) -> None:
        if asked["close"]:
            app.quit()  # (shutdown() still runs: see run())
            return
        asked["close"] = True
        QTimer.singleShot(0, app.closeAllWindows)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    tick = QTimer(app)
    tick.timeout.connect(lambda: None)
    tick.start(200)


def shutdown(app: object) -> None:
    """Tear the station down while Python is still fully alive, in a fixed order.

    Left to interpreter exit, QThreadPool workers could still run Python (a view's read, the
    initial load) and deliver results to widgets being destroyed, and Qt would delete objects
    whose Python side is already gone: ``--screenshot`` crashed with SIGSEGV now and then under
    load. So: close every workspace (timers stopped, watcher joined, writer queues and the global
    pool drained, wikis closed), then delete the windows and flush the deferred deletions.
    """
    from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool

    for window in list(_windows):
        window.workspace.close()
    QThreadPool.globalInstance().waitForDone(10_000)
    edges = sys.modules.get("curator.views.graph.edges")  # (loaded with the graph view's plot)
    if edges is not None:
        edges.wait_for_renders(10_000)
    QCoreApplication.processEvents()  # deliver finished tasks' results while the widgets exist
    for window in list(_windows):
        window.hide()
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    _windows.clear()


def _screenshot(app: object, window: MainWindow, out: Path, view: str) -> int:
    """Render the window once loaded (and the view shown), save a PNG, exit."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from curator.engine.errors import CuratorError
    from curator.views.review import FACT_QUEUES

    window.setProperty("screenshot", True)
    window.resize(*SCREENSHOT_SIZE)
    status = {"code": 0}

    def shoot() -> None:
        QApplication.processEvents()
        image = window.grab()
        if not image.save(str(out), "PNG"):
            status["code"] = 1
            sys.stderr.write(f"curator: error: cannot write {out}\n")
        window.close()
        QApplication.quit()

    def show_view() -> None:
        name, _, arg = view.partition(":")
        if name == "page" and arg:
            def open_it() -> None:
                wiki = window.workspace.wiki(0)
                try:
                    page = wiki.find(arg)
                except CuratorError as exc:
                    sys.stderr.write(f"curator: error: {exc}\n")
                    status["code"] = 1
                    shoot()
                    return
                window.when_ready(shoot, 300)
                window.open_page((0, page.path))
                window.show_view("page")  # in front of the landing view (Health)
            open_it()
            return
        if name == "page":
            window.show_view("page")  # the page the wiki opened on (behind the landing view)
        if name not in ("main", "page") and not window.show_view(name):
            sys.stderr.write(f"curator: error: unknown view {view!r}\n")
            status["code"] = 2
        if name == "facts" and arg:
            if arg not in FACT_QUEUES:
                sys.stderr.write(f"curator: error: unknown facts queue {arg!r} (one of {', '.join(FACT_QUEUES)})\n")
                status["code"] = 2
                shoot()
                return
            window.view("facts").set_queue(arg)  # type: ignore[union-attr]
        window.when_view_ready(name, shoot)

    def usable() -> None:  # the moment a user could start working (benchmarks time this line)
        window.ready.disconnect(usable)
        sys.stdout.write(f"{USABLE_LINE}\n")
        sys.stdout.flush()

    window.ready.connect(usable)
    window.when_ready(show_view)
    # Never hang: give up after two minutes whatever happens.
    QTimer.singleShot(120_000, lambda: (sys.stderr.write("curator: error: timed out loading\n"),
                                        status.update(code=1), QApplication.quit()))
    QApplication.instance().exec()  # type: ignore[union-attr]
    return status["code"]
