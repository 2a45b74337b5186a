"""Small widgets several views share."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSizePolicy,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.page import LAYERS
from curator.models.pages import LAYER_COLORS
from curator.views.plain_tips import set_tip


def layer_toggles(row: QHBoxLayout, on_toggle: Callable[..., None]) -> dict[str, QToolButton]:
    """One checkable button per layer, in the layer's colour when on; added to ``row``."""
    buttons: dict[str, QToolButton] = {}
    for layer in LAYERS:
        button = QToolButton()
        button.setText(layer)
        button.setCheckable(True)
        button.setChecked(True)
        button.setToolTip(f"Show {layer} pages")
        button.setStyleSheet(f"QToolButton:checked {{ color: white; background: {LAYER_COLORS[layer]}; "
                             "border-radius: 3px; padding: 2px 6px; }")
        button.toggled.connect(on_toggle)
        buttons[layer] = button
        row.addWidget(button)
    return buttons


class Banner(QWidget):
    """A one-line bar above the station's panes: a message, a few buttons, and a close button."""

    def __init__(self, text: str, tone: str = "info") -> None:
        super().__init__()
        self.setObjectName("banner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        background, ink = ("#fff4d6", "#4a3b00") if tone == "warning" else ("#e3f0fb", "#12324f")
        self.setStyleSheet(f"QWidget#banner {{ background: {background}; }} "
                           f"QWidget#banner QLabel {{ color: {ink}; }}")
        self.label = QLabel(text)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(8, 4, 8, 4)
        self.row.addWidget(self.label, 1)
        self.buttons: dict[str, QPushButton] = {}
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.hide)
        self.row.addWidget(self.close_button)

    def add_button(self, text: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(text)
        button.clicked.connect(slot)
        self.row.insertWidget(self.row.count() - 1, button)
        self.buttons[text] = button
        return button


class ElidedLabel(QLabel):
    """One line of text that takes the room left to it and ends in "…" when it is longer (the
    whole text in its tooltip); ``text()`` is always the whole text.

    A plain label asks for its whole text's width as its minimum: in the status bar a long
    message then pushed over the progress bar beside it, the two drawn on top of each other.
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self.setTextFormat(Qt.TextFormat.PlainText)  # (what paintEvent draws)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        set_tip(self, text)

    def setText(self, text: str) -> None:
        super().setText(text)
        set_tip(self, text)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        # the room left by its neighbours, not theirs (they keep their own widths whole)
        return QSize(0, super().sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter = QPainter(self)
        self.style().drawItemText(painter, rect, int(self.alignment()), self.palette(), self.isEnabled(),
                                  shown, QPalette.ColorRole.WindowText)


def one_line_rows(table: QTableView) -> None:
    """Rows as tall as one line of the table's text and a small margin: Qt's default (30 px in
    Fusion) made a one-line record two lines high, a third as many rows in sight."""
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)


class TableView(QTableView):
    """A ``QTableView`` whose paint runs inside one call into Python.

    Painting a cell asks the (Python) model for its roles, through the filter proxy: ~20 calls
    from Qt's C++ into Python per cell, and each one takes the interpreter lock again. While a
    background task runs Python (links resolved, a search index built), each of those waited
    for the lock: a paint of 40 rows made ~3,000 waits, and the GUI thread stalled 100-500 ms
    at 32,000 pages. Entered from Python, the paint makes those calls under the lock this thread
    already holds, so it waits for the lock once per paint.
    """

    #: after each paint (the station starts the rest of a load once the filled table is painted)
    painted = Signal()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        self.painted.emit()


class ListView(QListView):
    """A ``QListView`` whose paint runs inside one call into Python (see :class:`TableView`)."""

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)


class ReasonDialog(QDialog):
    """Ask for the reason of a decision that keeps one (an inbox rejection, a retired fact): the
    action's button stays disabled until a reason is typed."""

    def __init__(self, title: str, intro: str, action: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        label = QLabel(intro)
        label.setWordWrap(True)
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("Why (required)")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.addButton(action, QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok_button.setEnabled(False)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.reason.textChanged.connect(lambda t: self.ok_button.setEnabled(bool(t.strip())))
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.reason)
        layout.addWidget(buttons)
        self.resize(520, 140)

    def value(self) -> str:
        return self.reason.text().strip()
