"""The page browser: a search box, layer/trust/namespace/tag filters and the page table."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QStackedWidget,
    QStyle,
    QStyleOptionViewItem,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from curator.models.folders import FolderTreeModel
from curator.models.pages import (
    COL_INBOUND,
    COL_LAYER,
    COL_TITLE,
    COL_TRUST,
    DistinctRole,
    PageFilter,
    PageFilterProxy,
    PageRow,
    PageTableModel,
)
from curator.views.browser.search_results import KeyRole, Result, ResultsList
from curator.views.plain_tips import PlainTipDelegate
from curator.views.widgets import TableView, layer_toggles, one_line_rows

ALL = "All"
SEARCH_HELP = ('Search: words, "phrases", OR, -word, prefix*, layer:core, tag:x, path:wiki/, '
               "trust:>=0.5  (Ctrl+K)")
#: The query language in full (the search box's tooltip); the same as ``curator search``.
SEARCH_TIP = """Search the wiki; results are ranked as `curator search` ranks them (relevance x trust).

  refund policy        both words (AND)
  "refund policy"      the phrase
  refund OR chargeback either word
  refund -draft        without "draft"
  refu*                words starting with "refu"
  layer:core           only core pages (identity, core, context, deep)
  tag:finance          only pages tagged finance
  path:wiki/policies/  only pages under a folder
  trust:>=0.5          only pages with trust of at least 0.5

Enter opens the best result; "Table" shows every match in the page table instead."""


class TitleDelegate(PlainTipDelegate):
    """A title other pages share is followed, dim and right-aligned, by the part of its path that
    tells it apart (the model's ``DistinctRole``): 30 rows reading "Scene …" become "Scene …  …01",
    "Scene …  …02". The part keeps its room; the title is cut short first."""

    DIM = QColor("#8a8a8a")

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        part = str(index.data(DistinctRole) or "")
        if not part:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        metrics = opt.fontMetrics
        room = max(0, opt.rect.width() - 12)
        part = metrics.elidedText(part, Qt.TextElideMode.ElideLeft, int(room * 0.6))
        part_width = metrics.horizontalAdvance(part)
        opt.text = metrics.elidedText(opt.text, Qt.TextElideMode.ElideRight, max(0, room - part_width - 10))
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        painter.save()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        painter.setPen(opt.palette.color(QPalette.ColorRole.HighlightedText) if selected else self.DIM)
        painter.setFont(opt.font)
        rect = opt.rect.adjusted(0, 0, -5, 0)
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), part)
        painter.restore()


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
        self.search.setToolTip(SEARCH_TIP)
        self.search.setClearButtonEnabled(True)
        self.search_status = QLabel()
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self._search_timer.timeout.connect(lambda: self.search_requested.emit(self.search.text().strip()))
        self.search.textChanged.connect(self._typed)
        self.search.returnPressed.connect(self._enter)
        #: The query whose best result Enter asked to open before its results came (see _enter)
        self._open_when_ranked: str | None = None

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
        self._more = more

        self.table = TableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_TITLE, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        one_line_rows(self.table)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.resizeSection(COL_TITLE, 240)
        self.title_delegate = TitleDelegate(self.table)
        self.table.setItemDelegateForColumn(COL_TITLE, self.title_delegate)
        for col in (COL_LAYER, COL_TRUST, COL_INBOUND):
            header.resizeSection(col, 64)
        self.table.activated.connect(self._activated)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.context_menu: QMenu | None = None
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)

        self.results = ResultsList()
        self.results.activated.connect(self._result_activated)
        self.results.clicked.connect(self._result_activated)
        self.results.selectionModel().currentChanged.connect(lambda cur, _prev: self._result_activated(cur))
        self._all_results: list[Result] = []
        self._total_matches = 0
        self._shown_query = ""
        self.folders = FolderTreeModel()
        self.tree = QTreeView()
        self.tree.setModel(self.folders)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)  # (no per-row size asked from Python when scrolling)
        self.tree.activated.connect(self._tree_activated)
        self.tree.selectionModel().currentChanged.connect(lambda cur, _prev: self._tree_activated(cur))
        self._tree_stale = True
        self._tree_timer = QTimer(self)
        self._tree_timer.setSingleShot(True)
        self._tree_timer.setInterval(300)  # (a wiki's load appends rows in batches: built once)
        self._tree_timer.timeout.connect(self._refresh_tree)
        for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved):
            signal.connect(self._rows_changed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.results)
        self.stack.addWidget(self.tree)
        self.folders_toggle = QToolButton()
        self.folders_toggle.setText("Folders")
        self.folders_toggle.setCheckable(True)
        self.folders_toggle.setToolTip("Show the pages in a tree of their folders instead of the flat list")
        self.folders_toggle.toggled.connect(lambda _on: self._show_mode())
        self.table_toggle = QToolButton()
        self.table_toggle.setText("Table")
        self.table_toggle.setCheckable(True)
        self.table_toggle.setToolTip("Show every matching page in the page table (sortable) instead of "
                                     "the ranked results")
        self.table_toggle.toggled.connect(lambda _on: self._show_mode())
        status_row = QHBoxLayout()
        status_row.addWidget(self.search_status, 1)
        status_row.addWidget(self.table_toggle)

        self._more.addWidget(self.folders_toggle)
        self.count = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addLayout(status_row)
        layout.addLayout(filters)
        layout.addLayout(more)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.count)
        self.search_status.hide()
        # hidden, they keep their line: the filter row below never jumps when the search is cleared
        for widget in (self.search_status, self.table_toggle):
            policy = widget.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            widget.setSizePolicy(policy)
        # the source's own signals too: the proxy announces a removal before the source has
        # removed the row, so counting then said "3 of 4 pages" with no filter
        self.table_toggle.hide()
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
        self.proxy.set_filter(self.current_filter(), defer=self.ranked or self.in_tree)
        self._rows_changed()
        if self.searching:
            self._show_results()
        self._update_count()

    def set_matches(self, keys: frozenset[tuple[int, str]] | None, status: str = "") -> None:
        """Restrict the table to search hits (None clears the search)."""
        f = self.current_filter()
        f.matches = keys
        # The ranked results are shown instead of the table: it is filtered when it is shown
        # (filtering 32,000 rows took 30-50 ms of the GUI thread after each search).
        self.proxy.set_filter(f, defer=keys is not None and not self.table_toggle.isChecked())
        self.search_status.setText(status)
        self.search_status.setVisible(bool(status))
        if keys is None:
            self._all_results, self._shown_query = [], ""
            self.results.show_results([], False)
        self._show_mode()  # (which updates the count)

    # --- ranked results -----------------------------------------------------------------
    @property
    def searching(self) -> bool:
        """A search is active (its results, or its matches in the table, are shown)."""
        return self.proxy.filter.matches is not None

    @property
    def ranked(self) -> bool:
        """The ranked results are shown (a search is active and Table is off)."""
        return self.stack.currentWidget() is self.results

    def set_results(self, results: list[Result], total: int, query: str = "") -> None:
        """The results of ``query``, best first (``total``: every page that matches)."""
        self._shown_query = query
        self._all_results = results
        self._total_matches = total
        self._show_results()
        self._show_mode()  # (which updates the count)
        if self._open_when_ranked == query:
            self._open_when_ranked = None
            self._open_first()

    def _show_results(self) -> None:
        f = self.current_filter()
        f.matches = None
        model = self.model
        shown = []
        for result in self._all_results:
            row = model.row_for(result.key)
            if row is not None and f.accepts(model.rows[row]):
                shown.append(result)
        self.results.show_results(shown, model.show_wiki_column)

    def _show_mode(self) -> None:
        self.table_toggle.setVisible(self.searching)
        ranked = self.searching and not self.table_toggle.isChecked()
        tree = not self.searching and self.folders_toggle.isChecked()
        if tree:
            if self._tree_stale:
                self._refresh_tree()
        elif not ranked:
            self.proxy.catch_up()  # (a filter set while the ranked results were shown)
        self.stack.setCurrentWidget(self.results if ranked else self.tree if tree else self.table)
        self._update_count()  # (the count is of what is shown: results or table rows)

    # --- folder tree ------------------------------------------------------------------
    @property
    def in_tree(self) -> bool:
        """The folder tree is shown (Folders is on and no search is active)."""
        return self.stack.currentWidget() is self.tree

    def _rows_changed(self, *_args: object) -> None:
        self._tree_stale = True
        if self.in_tree:
            self._tree_timer.start()

    def _refresh_tree(self) -> None:
        """Build the tree again from the rows the filters let through, its open folders and
        current page kept."""
        if not self._tree_stale:
            return
        self._tree_stale = False
        model = self.folders
        expanded = [path for path in model.folder_paths() if self.tree.isExpanded(model.folder_index(path))]
        current = model.node(self.tree.currentIndex())
        f = self.current_filter()
        f.matches = None
        rows = self.model.rows
        model.set_rows(r for r, ok in zip(rows, f.accepted(rows), strict=True) if ok)
        for path in expanded:
            index = model.folder_index(path)
            if index.isValid():
                self.tree.setExpanded(index, True)
        if current is not None and current.record is not None:
            self._select_in_tree(current.record.key)
        self._update_count()

    def _tree_activated(self, index: QModelIndex) -> None:
        node = self.folders.node(index)
        if node is not None and node.record is not None:
            self.open_requested.emit(node.record)

    def _select_in_tree(self, key: tuple[int, str]) -> None:
        index = self.folders.index_of(key)
        if not index.isValid():
            return
        sm = self.tree.selectionModel()
        sm.blockSignals(True)
        sm.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        sm.blockSignals(False)
        self.tree.scrollTo(index)  # (expands the folders above it)
        self.tree.viewport().update()

    def _result_activated(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        row = self.model.row_for(index.data(KeyRole))
        if row is not None:
            self.open_requested.emit(self.model.rows[row])

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
        if self.ranked:
            n, total = self.results.results_model.rowCount(), self._total_matches
            best = f"the best {n:,} of {total:,} matching pages" if total > len(self._all_results) else \
                f"{n:,} result{'s' if n != 1 else ''}"
            self.count.setText(f"{best[:1].upper()}{best[1:]}, ranked as curator search ranks them")
            return
        total = self.model.rowCount()
        shown = self.folders.root.count if self.in_tree else self.proxy.rowCount()
        noun = "page" if total == 1 else "pages"
        self.count.setText(f"{shown:,} of {total:,} {noun}" if shown != total else f"{total:,} {noun}")

    # --- selection --------------------------------------------------------------------
    def _activated(self, index: QModelIndex) -> None:
        row = self.proxy.record(index)
        if row is not None:
            self.open_requested.emit(row)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._activated(current)

    def _typed(self, _text: str) -> None:
        self._open_when_ranked = None  # (typing after Enter: it meant the query then)
        self._search_timer.start()

    def _enter(self) -> None:
        """Enter in the search box opens the best result of what it says. Pressed before that
        query's results came (within the typing pause, or while a big wiki searches), it searches
        now and opens the best result once they come: the first row shown meanwhile is the last
        query's, or the plain table's, and opening it took the operator somewhere they never
        searched for."""
        query = self.search.text().strip()
        if not query or query == self._shown_query:
            self._open_first()
            return
        self._open_when_ranked = query
        if self._search_timer.isActive():
            self._search_timer.stop()
            self.search_requested.emit(query)

    def _open_first(self) -> None:
        if self.ranked:
            if self.results.results_model.rowCount():
                self.results.setCurrentIndex(self.results.results_model.index(0, 0))
                self.results.setFocus()
            return
        if self.proxy.rowCount():
            first = self.proxy.index(0, 0)
            self.table.setCurrentIndex(first)
            self.table.setFocus()

    def select_key(self, key: tuple[int, str]) -> None:
        """Highlight the row of ``key`` (without emitting open_requested again)."""
        if self.in_tree:
            self._select_in_tree(key)
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
