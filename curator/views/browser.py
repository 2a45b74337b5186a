"""The page browser: a search box, layer/trust/namespace/tag filters and the page table."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from curator.models.pages import (
    COL_INBOUND,
    COL_LAYER,
    COL_TITLE,
    COL_TRUST,
    PageFilter,
    PageFilterProxy,
    PageRow,
    PageTableModel,
)
from curator.views.widgets import layer_toggles

ALL = "All"
SEARCH_HELP = ('Search: words, "phrases", OR, -word, prefix*, layer:core, tag:x, path:wiki/, '
               "trust:>=0.5  (Ctrl+K)")


class PageBrowser(QWidget):
    open_requested = Signal(object)  # PageRow
    search_requested = Signal(str)  # query text ("" clears)
    move_requested = Signal(object)  # the page's key: "Move or rename…" from the context menu
    archive_requested = Signal(object)  # the page's key: "Archive…"

    def __init__(self, model: PageTableModel) -> None:
        super().__init__()
        self.model = model
        self.proxy = PageFilterProxy()
        self.proxy.setSourceModel(model)

        self.search = QLineEdit()
        self.search.setPlaceholderText(SEARCH_HELP)
        self.search.setClearButtonEnabled(True)
        self.search_status = QLabel()
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self._search_timer.timeout.connect(lambda: self.search_requested.emit(self.search.text().strip()))
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self.search.returnPressed.connect(self._open_first)

        filters = QHBoxLayout()
        self.layer_buttons = layer_toggles(filters, self._filters_changed)
        filters.addSpacing(8)
        filters.addWidget(QLabel("Trust"))
        self.min_trust = self._trust_box(0.0)
        self.max_trust = self._trust_box(1.0)
        filters.addWidget(self.min_trust)
        filters.addWidget(QLabel("–"))
        filters.addWidget(self.max_trust)
        filters.addStretch(1)

        more = QHBoxLayout()
        self.namespace = QComboBox()
        self.namespace.setToolTip("Namespace (first folder)")
        self.tag = QComboBox()
        self.tag.setEditable(True)
        self.tag.setToolTip("Tag")
        self.tag.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        for combo in (self.namespace, self.tag):
            combo.addItem(ALL)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
            combo.currentTextChanged.connect(self._filters_changed)
        more.addWidget(QLabel("Namespace"))
        more.addWidget(self.namespace, 1)
        more.addWidget(QLabel("Tag"))
        more.addWidget(self.tag, 1)

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_TITLE, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.resizeSection(COL_TITLE, 240)
        for col in (COL_LAYER, COL_TRUST, COL_INBOUND):
            header.resizeSection(col, 64)
        self.table.activated.connect(self._activated)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.context_menu: QMenu | None = None
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)

        self.count = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addWidget(self.search_status)
        layout.addLayout(filters)
        layout.addLayout(more)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)
        self.search_status.hide()
        # hidden, it keeps its line: the filter row below never jumps when the search is cleared
        policy = self.search_status.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.search_status.setSizePolicy(policy)
        # the source's own signals too: the proxy announces a removal before the source has
        # removed the row, so counting then said "3 of 4 pages" with no filter
        for signal in (self.proxy.modelReset, self.proxy.rowsInserted, self.proxy.rowsRemoved,
                       self.proxy.layoutChanged, model.rowsRemoved, model.rowsInserted, model.modelReset):
            signal.connect(self._update_count)

    def _trust_box(self, value: float) -> QDoubleSpinBox:
        box = QDoubleSpinBox()
        box.setRange(0.0, 1.0)
        box.setSingleStep(0.1)
        box.setDecimals(2)
        box.setValue(value)
        box.setKeyboardTracking(False)
        box.valueChanged.connect(self._filters_changed)
        return box

    # --- filters ----------------------------------------------------------------------
    def current_filter(self) -> PageFilter:
        ns = self.namespace.currentText()
        tag = self.tag.currentText().strip().lstrip("#")
        lo, hi = self.min_trust.value(), self.max_trust.value()
        return PageFilter(
            layers=frozenset(name for name, b in self.layer_buttons.items() if b.isChecked()),
            min_trust=min(lo, hi), max_trust=max(lo, hi),
            namespace=None if ns == ALL else ("" if ns == "(root)" else ns),
            tag=None if tag in ("", ALL) else tag.casefold(),
            matches=self.proxy.filter.matches,
        )

    def _filters_changed(self, *_args: object) -> None:
        self.proxy.set_filter(self.current_filter())
        self._update_count()

    def set_matches(self, keys: frozenset[tuple[int, str]] | None, status: str = "") -> None:
        """Restrict the table to search hits (None clears the search)."""
        f = self.current_filter()
        f.matches = keys
        self.proxy.set_filter(f)
        self.search_status.setText(status)
        self.search_status.setVisible(bool(status))
        self._update_count()

    def set_choices(self, namespaces: Iterable[str], tags: Iterable[str]) -> None:
        for combo, items in ((self.namespace, namespaces), (self.tag, tags)):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(ALL)
            combo.addItems([i if i else "(root)" for i in items])
            combo.setCurrentText(current if combo.findText(current) >= 0 else ALL)
            combo.blockSignals(False)

    def _update_count(self, *_args: object) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        noun = "page" if total == 1 else "pages"
        self.count.setText(f"{shown:,} of {total:,} {noun}" if shown != total else f"{total:,} {noun}")

    # --- selection --------------------------------------------------------------------
    def _activated(self, index: QModelIndex) -> None:
        row = self.proxy.record(index)
        if row is not None:
            self.open_requested.emit(row)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._activated(current)

    def _open_first(self) -> None:
        if self.proxy.rowCount():
            first = self.proxy.index(0, 0)
            self.table.setCurrentIndex(first)
            self.table.setFocus()

    def select_key(self, key: tuple[int, str]) -> None:
        """Highlight the row of ``key`` (without emitting open_requested again)."""
        row = self.model.row_for(key)
        if row is None:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if index.isValid():
            sm = self.table.selectionModel()
            sm.blockSignals(True)
            sm.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                               | QItemSelectionModel.SelectionFlag.Rows)
            sm.blockSignals(False)
            self.table.scrollTo(index)
            self.table.viewport().update()

    def _context_menu(self, pos: QPoint) -> None:
        row = self.proxy.record(self.table.indexAt(pos))
        if row is None:
            return
        menu = QMenu(self)
        menu.addAction("Open", lambda: self.open_requested.emit(row))
        menu.addSeparator()
        move = menu.addAction("Move or rename…", lambda: self.move_requested.emit(row.key))
        move.setShortcut(QKeySequence("F2"))
        menu.addAction("Archive…", lambda: self.archive_requested.emit(row.key))
        menu.popup(self.table.viewport().mapToGlobal(pos))
        self.context_menu = menu  # kept for tests

    def selected_rows(self) -> list[PageRow]:
        rows = []
        for index in self.table.selectionModel().selectedRows():
            row = self.proxy.record(index)
            if row is not None:
                rows.append(row)
        return rows
