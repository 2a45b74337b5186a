"""The base of the station's tabbed views: one wiki at a time, content filled asynchronously."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget

if TYPE_CHECKING:
    from curator.views.host import ViewHost


class WikiView(QWidget):
    """A view of one wiki of the workspace (``wiki_choice`` picks it when a home is open).

    Views compute their content off the GUI thread; ``mark_ready`` tells ``--screenshot --view``
    (through ``content_ready``) that there is something to show.
    """

    content_ready = Signal()

    def __init__(self, host: ViewHost, chooser_tip: str = "Which wiki of the home to show") -> None:
        super().__init__()
        self.host = host
        self._ready = False
        self.wiki_choice = QComboBox()
        for handle in host.workspace.handles:
            self.wiki_choice.addItem(handle.label)
        self.wiki_choice.setVisible(len(host.workspace.handles) > 1)
        self.wiki_choice.setToolTip(chooser_tip)

    def is_content_ready(self) -> bool:
        return self._ready

    def mark_ready(self) -> None:
        """Content is on screen (emits ``content_ready`` every time, for waiters of a reload)."""
        self._ready = True
        self.content_ready.emit()

    @property
    def wiki_index(self) -> int:
        return max(0, self.wiki_choice.currentIndex())
