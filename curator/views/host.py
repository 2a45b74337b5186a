"""What a station view may use of the window that holds it: :class:`ViewHost`.

Views (graph, duplicates, inbox, auto-filed, policy, history, the sync status) get a host, not the
:class:`~curator.views.shell.main_window.MainWindow`: the workspace (reads off the GUI thread, the wikis),
running an engine action (its result reported), reporting, and navigation to a page or another
view. :class:`MainWindow` is the station's host; a test may pass any object with these members.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QWidget

    from curator.engine.wiki import Wiki
    from curator.views.workspace import Workspace

#: A page of the workspace: (wiki index, path).
Key = tuple[int, str]


class ViewHost(Protocol):
    @property
    def ready(self) -> SignalInstance:
        """Emitted whenever a page is on screen (after the load, after opening one)."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The open wikis: ``read`` off the GUI thread, ``handles``, the change signals."""
        ...

    @property
    def current(self) -> Key | None:
        """The page on screen, if any."""
        ...

    def run_action(self, index: int, func: Callable[[Wiki], Any], what: str,
                   done: Callable[[Any], None] | None = None) -> None:
        """Run an engine action on wiki ``index`` (its writer queue) and report its result;
        ``done`` gets the result too. The workspace's ``action_done`` tells every view."""
        ...

    def report_result(self, result: Any) -> None: ...

    def status(self, text: str) -> None: ...

    def show_error(self, message: str) -> None: ...

    def open_page(self, key: Key, push: bool = True, anchor: str = "") -> None: ...

    def show_view(self, name: str) -> bool: ...

    def view(self, name: str) -> QWidget | None:
        """The view registered as ``name`` (to open one of its queues), if any."""
        ...

    def open_page_at_line(self, key: Key, line: int) -> None:
        """Show page ``key`` with its source's cursor on ``line`` (1-based)."""
        ...

    def undo_last(self) -> None: ...

    def redo_last(self) -> None: ...

    def set_view_title(self, view: QWidget, title: str, tip: str) -> None:
        """The title (and tooltip) of ``view``'s tab (a count of items waiting, say)."""
        ...

    def mark_hidden(self, keys: set[Key]) -> None:
        """Mark these pages in the page list (the policy preview: what an agent does not see)."""
        ...
