"""Help ▸ Keyboard shortcuts (read from the window's own actions, so it is always true) and About."""

from __future__ import annotations

import platform

from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

#: Keys handled by widgets rather than menu actions.
WIDGET_KEYS = (
    ("Enter / Shift+Enter, F3 / Shift+F3", "Find in page: next / previous match"),
    ("Esc", "Close the find bar"),
    ("Enter (in the search box)", "Go to the first matching page"),
    ("J / K, A, E, R (in the inbox)", "Next / previous item, approve, edit then approve, reject"),
)


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what) for every action of ``window`` that has a shortcut, in menu order."""
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for action in window.actions():
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k]
        if not keys or not isinstance(action, QAction):
            continue
        what = action.text().replace("&", "").removesuffix("…").strip()
        if what in seen:
            continue
        seen.add(what)
        rows.append((" / ".join(keys), what))
    return [*rows, *WIDGET_KEYS]


def _lay_out(dialog: QDialog, content: QWidget, size: tuple[int, int]) -> None:
    """``content`` above a Close button."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(content)
    layout.addWidget(buttons)
    dialog.resize(*size)


class ShortcutsDialog(QDialog):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Keys", "Action"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (keys, what) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(keys))
            self.table.setItem(r, 1, QTableWidgetItem(what))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        _lay_out(self, self.table, (560, 520))


def licence() -> str:
    """The licence the installed package declares (pyproject's ``license``)."""
    from importlib import metadata

    try:
        md = metadata.metadata("curator")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "MIT"
    return str((md.get_all("License-Expression") or md.get_all("License") or ["MIT"])[0])


def about_text() -> str:
    import PySide6

    from curator import __version__

    return (f"Curator {__version__}\n\n"
            "A curation station for markdown knowledge wikis that LLM agents write and people curate.\n\n"
            f"Qt {qVersion()}, PySide6 {PySide6.__version__}, Python {platform.python_version()}\n\n"
            f"Licence: {licence()}")


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Curator")
        self.label = QLabel(about_text())
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        _lay_out(self, self.label, (420, 220))
