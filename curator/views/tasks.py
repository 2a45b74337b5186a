"""Background work for the station (Picard's ``run_task`` and Vorta's one writer per repository).

* :func:`run_task` runs a function on the global ``QThreadPool`` and posts its result (or its
  exception) back to the GUI thread through a queued signal. A result that arrives after the
  widget it was meant for was destroyed (a window closed while its read ran) is dropped: the
  callback's receiver (``owner``, else the object of a bound method, else a QObject the callback's
  closure holds) is checked with ``shiboken6.isValid`` before the callback runs.
* :class:`WriterQueue` is a one-thread pool per wiki: every engine action goes through it, so the
  station never runs two writes to one repository at once and never writes on the GUI thread.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from curator.engine.memory import trim_when_idle

log = logging.getLogger(__name__)

#: The interpreter's thread switch interval in the station (CPython's default is 5 ms). The GUI
#: thread shares the interpreter lock with the background tasks; with several CPU-bound tasks
#: running (links resolved, lint, the search index), a thread asking for the lock waited for it
#: for 0.4-1 s at 32,000 pages, so the window froze though no task ran on the GUI thread. At 1 ms
#: the lock changes hands often enough that the GUI thread gets it within a few milliseconds.
SWITCH_INTERVAL = 0.001

Callback = Callable[[Any], None]
ErrorCallback = Callable[[BaseException], None]


def share_interpreter_with_gui() -> None:
    """Let the GUI thread take the interpreter lock back quickly from busy background tasks
    (see :data:`SWITCH_INTERVAL`); called when the station's window is made."""
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)


class _Relay(QObject):
    """Lives in the GUI thread; its signals deliver results there (queued connection)."""

    done = Signal(object, object, object)  # (callback, result, receiver)
    failed = Signal(object, object, object)  # (error callback, exception, receiver)

    def __init__(self) -> None:
        super().__init__()
        self.done.connect(self._on_done)
        self.failed.connect(self._on_failed)

    @staticmethod
    def _on_done(callback: Callback | None, result: Any, receiver: QObject | None) -> None:
        if callback is not None and _alive(receiver):
            callback(result)

    @staticmethod
    def _on_failed(callback: ErrorCallback | None, exc: BaseException, receiver: QObject | None) -> None:
        if callback is not None:
            if _alive(receiver):
                callback(exc)
            else:
                log.info("background task failed after its window closed: %s", exc)
        else:
            log.error("background task failed: %s", "".join(traceback.format_exception(exc)))


def _alive(receiver: QObject | None) -> bool:
    return receiver is None or shiboken6.isValid(receiver)


def receiver_of(callback: Callable[..., Any] | None, depth: int = 2) -> QObject | None:
    """The QObject a callback works on: a bound method's object, else the first QObject its
    closure holds (looking ``depth`` closures deep: a lambda calling a local function)."""
    if callback is None:
        return None
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, QObject):
        return owner
    for cell in getattr(callback, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, QObject):
            return value
        if depth > 0 and callable(value):
            found = receiver_of(value, depth - 1)
            if found is not None:
                return found
    return None


_relay: _Relay | None = None


def _get_relay() -> _Relay:
    global _relay
    if _relay is None:
        _relay = _Relay()
    return _relay


class _Task(QRunnable):
    def __init__(self, func: Callable[[], Any], callback: Callback | None,
                 on_error: ErrorCallback | None, owner: QObject | None = None) -> None:
        super().__init__()
        self.func, self.callback, self.on_error = func, callback, on_error
        # found on the GUI thread, before the task starts
        self.owners = (owner or receiver_of(callback), owner or receiver_of(on_error))
        self.relay = _get_relay()

    def run(self) -> None:
        try:
            result = self.func()
        except BaseException as exc:  # delivered to the GUI as a readable message
            _let_go_of_frames(exc)
            if self._deliverable(exc):
                self.relay.failed.emit(self.on_error, exc, self.owners[1])
        else:
            if self._deliverable(None):
                self.relay.done.emit(self.callback, result, self.owners[0])
            del result
        # (on this thread, off the GUI's: what the task freed goes back to the system, not kept
        # in the heap for as long as the station runs)
        trim_when_idle()

    def _deliverable(self, exc: BaseException | None) -> bool:
        """Whether the relay still lives: a task that outlived the station (a scan still running
        when the window closed and the application ended) has nowhere to deliver its result, and
        emitting on the deleted relay printed a traceback on the way out."""
        if shiboken6.isValid(self.relay):
            return True
        log.info("background task ended after the station closed%s", f": {exc}" if exc is not None else "")
        return False


def _let_go_of_frames(exc: BaseException) -> None:
    """Clear the local variables of the frames ``exc`` (and the exceptions chained to it) went
    through, here on the task's thread, keeping the traceback's lines. The GUI thread is handed
    the exception: were the frames still holding their variables, what they held would be
    released there, when the GUI thread drops it, and its clean-up run there (a search index
    build stopped at a window's close left its worker pool to be shut down, waiting 0.2-0.7 s for
    its processes to exit, by the next window's GUI thread)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        traceback.clear_frames(current.__traceback__)
        todo += [current.__cause__, current.__context__]


def run_task(func: Callable[[], Any], callback: Callback | None = None,
             on_error: ErrorCallback | None = None, pool: QThreadPool | None = None,
             owner: QObject | None = None) -> None:
    """Run ``func()`` off the GUI thread; ``callback(result)`` runs on the GUI thread, unless
    its receiver (``owner``, or the one :func:`receiver_of` finds) was destroyed meanwhile."""
    (pool or QThreadPool.globalInstance()).start(_Task(func, callback, on_error, owner))


class WriterQueue:
    """The single writer of one wiki: actions run one after another, in submission order."""

    def __init__(self) -> None:
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(1)

    def submit(self, func: Callable[[], Any], callback: Callback | None = None,
               on_error: ErrorCallback | None = None, owner: QObject | None = None) -> None:
        run_task(func, callback, on_error, pool=self.pool, owner=owner)

    def wait(self, msecs: int = 30_000) -> bool:
        return self.pool.waitForDone(msecs)
