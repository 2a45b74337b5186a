"""The GUI-thread stall probe of the station benchmarks: a 5 ms Qt timer that must keep firing
while a step runs; a step's figure is the longest gap between two of its ticks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class StallProbe:
    """Times one step at a time on the GUI thread (``qtbot``: pytest-qt's fixture)."""

    def __init__(self, qtbot: Any) -> None:
        from PySide6.QtCore import QElapsedTimer, QTimer

        self.qtbot = qtbot
        self.gaps: list[float] = []
        self.clock = QElapsedTimer()
        self.last = 0
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = self.clock.elapsed()
        self.gaps.append(now - self.last)
        self.last = now

    def step(self, start: Callable[[], object], signal: object = None, seconds: float = 0.0) -> float:
        """The worst stall (ms) from ``start()`` until ``signal`` is emitted (when given), then for
        ``seconds`` more (200 ms when 0)."""
        self.gaps.clear()
        self.clock.start()
        self.last = 0
        self.timer.start(5)
        if signal is not None:
            with self.qtbot.waitSignal(signal, timeout=300_000):
                start()
        else:
            start()
        self.qtbot.wait(int(seconds * 1000) or 200)
        self.timer.stop()
        return max(self.gaps[1:], default=0.0)
