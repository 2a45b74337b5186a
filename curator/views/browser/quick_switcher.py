"""Ctrl+P: jump to a page by title or alias (fuzzy, like Obsidian's quick switcher)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget
from rapidfuzz import fuzz, process

from curator.models.pages import PageRow

MAX_RESULTS = 50
KeyRole = Qt.ItemDataRole.UserRole + 1


class QuickSwitcher(QDialog):
    chosen = Signal(object)  # PageRow

    def __init__(self, rows: Sequence[PageRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Go to page")
        self.resize(560, 420)
        self.rows = list(rows)
        # One entry per name a page answers to: its title and each alias.
        self.names: list[str] = []
        self.owner: list[int] = []
        for i, row in enumerate(self.rows):
            for name in (row.page.title, *row.page.aliases):
                self.names.append(name)
                self.owner.append(i)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Type a title or alias…")
        self.list = QListWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self.edit)
        layout.addWidget(self.list)
        self.edit.textChanged.connect(self._update)
        self.edit.returnPressed.connect(self._accept_current)
        self.list.itemActivated.connect(self._accept_item)
        self._update("")

    def _update(self, text: str) -> None:
        self.list.clear()
        if text.strip():
            hits = process.extract(text, self.names, scorer=fuzz.WRatio, limit=MAX_RESULTS * 2,
                                   processor=str.casefold)
            order = [(self.owner[idx], name) for name, _score, idx in hits]
        else:
            order = [(i, self.rows[i].page.title) for i in range(min(len(self.rows), MAX_RESULTS))]
        seen: set[int] = set()
        for owner, name in order:
            if owner in seen:
                continue
            seen.add(owner)
            row = self.rows[owner]
            label = name if name == row.page.title else f"{name}  →  {row.page.title}"
            item = QListWidgetItem(f"{label}    {row.page.path}")
            item.setData(KeyRole, owner)
            self.list.addItem(item)
            if len(seen) >= MAX_RESULTS:
                break
        if self.list.count():
            self.list.setCurrentRow(0)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            step = 1 if event.key() == Qt.Key.Key_Down else -1
            row = max(0, min(self.list.count() - 1, self.list.currentRow() + step))
            self.list.setCurrentRow(row)
            return
        super().keyPressEvent(event)

    def _accept_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self._accept_item(item)

    def _accept_item(self, item: QListWidgetItem) -> None:
        self.chosen.emit(self.rows[int(item.data(KeyRole))])
        self.accept()
