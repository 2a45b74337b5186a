"""Background work for the station (Picard's ``run_task`` and Vorta's one writer per repository).

* :func:`run_task` runs a function on the global ``QThreadPool`` and posts its result (or its
  exception) back to the GUI thread through a queued signal.
* :class:`WriterQueue` is a one-thread pool per wiki: every engine action goes through it, so the
  station never runs two writes to one repository at once and never writes on the GUI thread.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger(__name__)

Callback = Callable[[Any], None]
ErrorCallback = Callable[[BaseException], None]


class _Relay(QObject):
    """Lives in the GUI thread; its signals deliver results there (queued connection)."""

    done = Signal(object, object)  # (callback, result)
    failed = Signal(object, object)  # (error callback, exception)

    def __init__(self) -> None:
        super().__init__()
        self.done.connect(self._on_done)
        self.failed.connect(self._on_failed)

    @staticmethod
    def _on_done(callback: Callback | None, result: Any) -> None:
        if callback is not None:
            callback(result)

    @staticmethod
    def _on_failed(callback: ErrorCallback | None, exc: BaseException) -> None:
        if callback is not None:
            callback(exc)
        else:
            log.error("background task failed: %s", "".join(traceback.format_exception(exc)))


_relay: _Relay | None = None


def _get_relay() -> _Relay:
    global _relay
    if _relay is None:
        _relay = _Relay()
    return _relay


class _Task(QRunnable):
    def __init__(self, func: Callable[[], Any], callback: Callback | None,
                 on_error: ErrorCallback | None) -> None:
        super().__init__()
        self.func, self.callback, self.on_error = func, callback, on_error
        self.relay = _get_relay()  # created on the GUI thread, before the task starts

    def run(self) -> None:
        try:
            result = self.func()
        except BaseException as exc:  # delivered to the GUI as a readable message
            self.relay.failed.emit(self.on_error, exc)
        else:
            self.relay.done.emit(self.callback, result)


def run_task(func: Callable[[], Any], callback: Callback | None = None,
             on_error: ErrorCallback | None = None, pool: QThreadPool | None = None) -> None:
    """Run ``func()`` off the GUI thread; ``callback(result)`` runs on the GUI thread."""
    (pool or QThreadPool.globalInstance()).start(_Task(func, callback, on_error))


class WriterQueue:
    """The single writer of one wiki: actions run one after another, in submission order."""

    def __init__(self) -> None:
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(1)

    def submit(self, func: Callable[[], Any], callback: Callback | None = None,
               on_error: ErrorCallback | None = None) -> None:
        run_task(func, callback, on_error, pool=self.pool)

    def wait(self, msecs: int = 30_000) -> bool:
        return self.pool.waitForDone(msecs)
