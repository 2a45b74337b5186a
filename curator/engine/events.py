"""Plain-Python events (napari style): the engine emits, the ``_qt`` adapters re-post to the GUI."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Signal(Generic[T]):
    """A minimal synchronous signal. Callbacks run on the emitting thread."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[T], None]] = []
        self._lock = threading.Lock()

    def connect(self, callback: Callable[[T], None]) -> None:
        with self._lock:
            self._callbacks.append(callback)

    def disconnect(self, callback: Callable[[T], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def emit(self, value: T) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for cb in callbacks:
            cb(value)
