"""Find in page: a bar under the page with next/previous, the match count, Esc to close.

It searches whichever text widget is in front (the rendered page or its source), highlights
every match and selects the current one, wrapping at either end. Case is ignored unless the
"Aa" button is on.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QToolButton,
    QWidget,
)

TextWidget = QTextEdit | QPlainTextEdit
#: Matches highlighted (and counted exactly) at most; beyond, the count says "1,000+".
MAX_MATCHES = 1000
MATCH_COLOUR = "#f7dc6f"


class FindBar(QWidget):
    closed = Signal()

    def __init__(self, target: Callable[[], TextWidget]) -> None:
        super().__init__()
        self.target = target  # the text widget in front, asked on every search
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find in page")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel()
        self.count.setMinimumWidth(90)
        self.previous_button = QToolButton()
        self.previous_button.setText("↑")
        self.previous_button.setToolTip("Previous match (Shift+Enter, Shift+F3)")
        self.next_button = QToolButton()
        self.next_button.setText("↓")
        self.next_button.setToolTip("Next match (Enter, F3)")
        self.case_button = QToolButton()
        self.case_button.setText("Aa")
        self.case_button.setCheckable(True)
        self.case_button.setToolTip("Match case")
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 3, 6, 3)
        row.addWidget(self.field, 1)
        row.addWidget(self.count)
        for button in (self.previous_button, self.next_button, self.case_button, self.close_button):
            row.addWidget(button)
        self.matches: list[QTextCursor] = []
        self.current = -1
        self._searched: TextWidget | None = None
        self.field.textChanged.connect(lambda _t: self.search())
        self.case_button.toggled.connect(lambda _on: self.search())
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        self.close_button.clicked.connect(self.close_bar)
        self.field.installEventFilter(self)  # Esc, Shift+Enter, F3 in the field
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key, shift = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F3):
                self.find_previous() if shift else self.find_next()
                return True
        return super().eventFilter(watched, event)

    def open_bar(self) -> None:
        """Show the bar with its text selected (Ctrl+F); the selection of the page seeds it."""
        widget = self.target()
        selected = widget.textCursor().selectedText()
        if selected and "\u2029" not in selected and len(selected) <= 200:
            self.field.setText(selected)
        self.show()
        self.field.setFocus()
        self.field.selectAll()
        self.search()

    def close_bar(self) -> None:
        self._clear(self._searched)
        self.matches, self.current = [], -1
        self.hide()
        self.closed.emit()

    def search(self) -> None:
        """Find every match of the text in the widget in front; select the first after the cursor."""
        widget = self.target()
        if self._searched is not None and self._searched is not widget:
            self._clear(self._searched)
        self._searched = widget
        text = self.field.text()
        self.matches = []
        self.current = -1
        if text:
            doc = widget.document()
            flags = QTextDocument.FindFlag(0)
            if self.case_button.isChecked():
                flags |= QTextDocument.FindFlag.FindCaseSensitively
            cursor = doc.find(text, 0, flags)
            while not cursor.isNull() and len(self.matches) < MAX_MATCHES:
                self.matches.append(cursor)
                cursor = doc.find(text, cursor, flags)
        if self.matches:
            start = widget.textCursor().selectionStart()
            self.current = next((i for i, c in enumerate(self.matches) if c.selectionStart() >= start), 0)
        self._show()

    def find_next(self) -> None:
        self._step(1)

    def find_previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if self._searched is not self.target() or not self.matches:
            self.search()
            if not self.matches:
                return
            if delta > 0:
                self._show()
                return
        self.current = (self.current + delta) % len(self.matches)
        self._show()

    def _show(self) -> None:
        widget = self._searched
        self.field.setStyleSheet("" if self.matches or not self.field.text() else
                                 "QLineEdit { background: #f5b7b1; color: #000000; }")
        if widget is None:
            return
        if not self.field.text():
            self.count.setText("")
        elif not self.matches:
            self.count.setText("No matches")
        else:
            total = f"{len(self.matches):,}" + ("+" if len(self.matches) >= MAX_MATCHES else "")
            self.count.setText(f"{self.current + 1:,} of {total}")
        marks = []
        for cursor in self.matches:
            mark = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(MATCH_COLOUR))
            fmt.setForeground(QColor("#000000"))
            mark.format = fmt
            mark.cursor = cursor
            marks.append(mark)
        widget.setExtraSelections(marks)
        if self.matches:
            widget.setTextCursor(self.matches[self.current])
            widget.ensureCursorVisible()

    @staticmethod
    def _clear(widget: TextWidget | None) -> None:
        if widget is not None:
            widget.setExtraSelections([])
