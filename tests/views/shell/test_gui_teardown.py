"""The station's teardown (issue 14): closing never pulls a wiki out from under background work.

``curator gui --screenshot`` crashed with SIGSEGV now and then under load: the window closed and
the process exited while reads on the global QThreadPool still ran against the wiki (its SQLite
index closed under them) and Python was being finalised. The workspace now drains every pool
before it closes a wiki, starts nothing once closed, and ``app.shutdown`` tears the windows down
in a fixed order before interpreter exit.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import make_wiki, temp_settings


def test_closing_waits_for_reads_in_flight_and_starts_no_new_ones(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    outcome: list[str] = []
    started = threading.Event()

    def slow_read(wiki) -> int:  # type: ignore[no-untyped-def]
        started.set()
        time.sleep(0.4)  # the window closes meanwhile
        try:
            with wiki.store.connection() as conn:
                rows = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
        except Exception as exc:  # the database was closed under the read: the crash's cause
            outcome.append(f"{type(exc).__name__}: {exc}")
            raise
        outcome.append("read finished")
        return rows

    win.workspace.read(0, slow_read, lambda _rows: None, lambda _exc: None)
    assert started.wait(5)
    win.close()  # closeEvent -> workspace.close()
    assert outcome == ["read finished"]
    calls: list[str] = []
    win.workspace.read(0, lambda wiki: calls.append("ran"), lambda _r: None)
    time.sleep(0.2)
    assert calls == []  # nothing new starts once closed


def test_results_arriving_after_the_window_is_gone_are_dropped(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Tasks in flight when a window closes finish during the close; their results reach the GUI
    thread after the window (and its Policy view) were deleted. They must be dropped, never run
    against a destroyed widget (a RuntimeError in a slot, or a crash)."""
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    from curator.engine.errors import CuratorError
    from curator.views.policy.policy_view import PolicyView
    from curator.views.tasks import run_task

    root = make_wiki(tmp_path / "wiki")
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    policy = PolicyView(win)
    win.add_view("policy", policy, "Policy")
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    release = threading.Event()
    ran: list[str] = []

    def slow() -> str:
        release.wait(5)
        return "late"

    def slow_failure() -> str:
        release.wait(5)
        raise CuratorError("late failure")

    run_task(slow, win.show_error)  # a bound method of the window
    run_task(slow_failure, None, lambda exc: win.show_error(f"failed: {exc}"))  # show_error from a lambda
    run_task(slow, lambda r: (ran.append(r), policy.table.setRowCount(3)))  # the Policy view
    win.workspace.read(0, lambda wiki: (release.wait(5), len(wiki.pages))[1],
                       lambda n: (ran.append("read"), policy.table.setRowCount(n)))  # through the workspace
    threading.Timer(0.3, release.set).start()
    win.close()  # waits for the tasks: their results are now queued for the GUI thread
    win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not shiboken6.isValid(win) and not shiboken6.isValid(policy)
    qtbot.wait(200)  # deliver the queued results: each is dropped (an exception here fails the test)
    assert ran == []
    # a task for a live receiver still gets its result
    got: list[str] = []
    run_task(lambda: "fresh", got.append)
    qtbot.waitUntil(lambda: got == ["fresh"], timeout=5000)


@pytest.mark.parametrize("fails", [False, True])
def test_a_task_that_outlives_the_station_ends_without_a_traceback(qtbot, caplog: pytest.LogCaptureFixture,  # type: ignore[no-untyped-def]
                                                                   fails: bool) -> None:
    """A background task still running when the application ended (a scan the closing window did
    not wait for) finds the relay deleted: its result (or error) is dropped with a log line, not
    emitted on the deleted relay (which printed a traceback on the way out of --screenshot)."""
    import logging

    import shiboken6

    from curator.views import tasks

    def work() -> int:
        if fails:
            raise OSError("the database was closed")
        return 1

    task = tasks._Task(work, lambda _r: None, lambda _e: None)
    task.relay = tasks._Relay()
    shiboken6.delete(task.relay)
    with caplog.at_level(logging.INFO, logger="curator.views.tasks"):
        task.run()
    assert "ended after the station closed" in caplog.text


def test_a_failed_task_lets_go_of_its_frames_on_its_own_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    """What a failed task's frames held is released on the task's thread, not on the GUI thread
    the exception is handed to (a stopped search build's worker pool was shut down, and its
    processes waited for, by the GUI thread); the message and the traceback's lines stay."""
    import traceback

    from PySide6.QtCore import QObject

    from curator.views.tasks import run_task

    released: list[str] = []

    class Held:
        def __del__(self) -> None:
            released.append(threading.current_thread().name)

    def inner() -> None:
        held = Held()  # noqa: F841 - what the frame holds when the exception leaves it
        raise ValueError("no such page")

    def work() -> None:
        try:
            inner()
        except ValueError as exc:
            raise RuntimeError("the read failed") from exc

    failures: list[BaseException] = []
    owner = QObject()
    run_task(work, lambda _r: None, failures.append, owner=owner)
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    exc = failures.pop()
    assert str(exc) == "the read failed" and str(exc.__cause__) == "no such page"
    lines = "".join(traceback.format_exception(exc))
    assert "in inner" in lines and 'raise ValueError("no such page")' in lines
    del exc
    assert released and released[0] != threading.main_thread().name


def test_a_task_gives_back_what_it_freed_on_its_own_thread(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Once a background task is over (answered or failed), the station's freed heap goes back
    to the system (memory.trim_when_idle), on the task's thread: a cold open's decoded records
    were 70 MB kept free in the heap for as long as the station ran."""
    from PySide6.QtCore import QObject

    from curator.views import tasks

    trims: list[str] = []
    monkeypatch.setattr(tasks, "trim_when_idle", lambda: trims.append(threading.current_thread().name) or True)
    got: list[object] = []
    owner = QObject()

    def fail() -> None:
        raise ValueError("no such page")

    tasks.run_task(lambda: "read", got.append, got.append, owner=owner)
    tasks.run_task(fail, got.append, got.append, owner=owner)
    qtbot.waitUntil(lambda: len(got) == 2 and len(trims) == 2, timeout=10_000)
    assert "read" in got and threading.main_thread().name not in trims
