"""Which views the main window carries besides the page view.

Each view is a widget that gets the :class:`MainWindow` (for the workspace, the writer queues and
result reporting) and registers itself under the name ``--screenshot --view NAME`` uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .main_window import MainWindow


def install_views(window: MainWindow) -> None:
    return

