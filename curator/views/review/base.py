"""Common ground of the station's review views (duplicate queue, auto-filed panel).

A review view shows one wiki at a time (a selector when the station has a home open), computes its
content off the GUI thread, recomputes when the wiki changes (only while it is on screen: a hidden
view just remembers that it is stale, so a 30,000-page wiki is not rescanned behind the operator's
back), and asks the operator through dialogs that tests can answer programmatically
(:attr:`ReviewView.exec_dialog`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    QUrl,
)
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QLayout,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from curator.engine.status import Status
from curator.engine.write.actions import ActionResult
from curator.models.records import RecordRole
from curator.views.plain_tips import PlainTipDelegate, set_tip
from curator.views.widgets import TableView, one_line_rows
from curator.views.wiki_view import WikiView

if TYPE_CHECKING:
    from curator.views.host import ViewHost
    from curator.views.workspace import Snapshot

RELOAD_DELAY_MS = 300  # changes arrive in bursts (an action, then the watcher): recompute once


def run_dialog(dialog: QDialog) -> bool:
    """Show ``dialog`` modally; True when the operator accepted it."""
    return dialog.exec() == QDialog.DialogCode.Accepted


def record_table(model: QAbstractItemModel, multi: bool = False) -> QTableView:
    """A table of whole-row records (one or many selectable), no row numbers, no wrapping."""
    table = TableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection if multi
                           else QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().hide()
    table.setWordWrap(False)
    one_line_rows(table)
    return table


class ElidedPaths(PlainTipDelegate):
    """A column of paths: one too long for it loses its middle (by default), so its folder's
    start and its file name both stay in sight (the full path in its tooltip). ``mode``:
    another side to elide (the members of a duplicate family share the start of their names:
    they lose it)."""

    def __init__(self, parent: QObject | None = None, mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle) -> None:
        super().__init__(parent)
        self.mode = mode

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = self.mode


class PathColumnFit(QObject):
    """Keeps a record table's path column as wide as its paths, but never so wide that the last
    column (what each row says: the problem, the reason) is pushed out of sight.

    The column is sized again when the records change and when the table is resized: to its
    widest path (among the rows Qt measures: those on screen and a thousand more), at most what
    leaves the other columns whole and the last a third of the table (or its header, if wider);
    a path longer than that is elided in its middle (:class:`ElidedPaths`). At 100,000 pages a
    lint list's longest path took the whole pane and its problems sat behind the scroll bar.
    Once the operator drags the column's edge, their width stands (as in any table)."""

    #: the least share of the table's width the last column keeps
    LAST_SHARE = 3

    def __init__(self, table: QTableView, column: int) -> None:
        super().__init__(table)
        self.table, self.column = table, column
        self.by_hand = False  # the operator set the width (their drag, not a fit)
        self._fitting = False
        #: the column's width for its paths, measured once per change of the records (a resize
        #: only moves the room: measuring a thousand rows at each step of a splitter's drag is not
        #: needed)
        self._wanted: int | None = None
        header = table.horizontalHeader()
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.sectionResized.connect(self._resized)
        table.setItemDelegateForColumn(column, ElidedPaths(table))
        self._viewport = table.viewport()  # (its size is the room: the table's own resize comes first)
        self._viewport.installEventFilter(self)
        model = table.model()
        model.modelReset.connect(self._records_changed)
        model.layoutChanged.connect(self._records_changed)
        model.rowsInserted.connect(self._records_changed)

    def _records_changed(self, *_args: object) -> None:
        self._wanted = None
        self.fit()

    def fit(self) -> None:
        """Size the column to its paths within the room the others leave (unless set by hand)."""
        if self.by_hand:
            return
        table, column = self.table, self.column
        header = table.horizontalHeader()
        width = table.viewport().width()
        last = header.count() - 1
        others = sum(header.sectionSize(c) for c in range(header.count())
                     if c not in (column, last) and not header.isSectionHidden(c))
        room = width - others - max(header.sectionSizeHint(last), width // self.LAST_SHARE)
        if self._wanted is None:
            self._wanted = max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
        wanted = self._wanted
        self._fitting = True
        try:
            header.resizeSection(column, max(min(wanted, room), header.sectionSizeHint(column)))
        finally:
            self._fitting = False

    def _resized(self, index: int, _old: int, _new: int) -> None:
        if index == self.column and not self._fitting:
            self.by_hand = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show) and watched is self._viewport:
            self.fit()
        return False


class Banner(QLabel):
    """One line saying what the last decision did: green when done, red when refused."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)  # (an escaped quote showed as "&#x27;")
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hide()

    def show_result(self, text: str, ok: bool) -> None:
        colour, background = ("#1e6b3a", "#e8f6ec") if ok else ("#922b21", "#fdecea")
        self.setStyleSheet(f"QLabel {{ color: {colour}; background: {background}; padding: 6px; "
                           f"border: 1px solid {colour}; border-radius: 3px; }}")
        self.setText(text)
        set_tip(self, text)
        self.show()


class ReviewView(WikiView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host, "Which wiki of the home to review")
        #: How dialogs are shown; tests replace it to fill the fields and accept.
        self.exec_dialog: Callable[[QDialog], bool] = run_dialog
        self._stale = True
        self._loading = False
        self.banner = Banner()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RELOAD_DELAY_MS)
        self._timer.timeout.connect(self.reload)
        self.wiki_choice.currentIndexChanged.connect(self._wiki_switched)
        # after a load, once the window is usable: begun beside the first paint of the filled page
        # table, a view's computation (Health's: the link index built) made that paint 2-3 times
        # as long, the GUI thread sharing the interpreter lock with it
        host.workspace.background_started.connect(lambda: self.schedule_reload(now=True))
        host.workspace.pages_changed.connect(self._pages_changed)
        host.workspace.action_done.connect(self._action_done)

    # --- which wiki ---------------------------------------------------------------------------
    @property
    def wiki_label(self) -> str:
        return self.host.workspace.handles[self.wiki_index].label

    def _wiki_switched(self, _index: int) -> None:
        self.banner.hide()
        self.wiki_changed()
        self.schedule_reload(now=True)

    def wiki_changed(self) -> None:
        """Hook: the selector moved to another wiki (clear what belongs to the old one)."""

    # --- what changed ---------------------------------------------------------------------------
    def relevant(self, path: str, came_or_went: bool) -> bool:
        """Hook: whether a change of ``path`` in the shown wiki (``came_or_went``: created or
        removed, not just edited) can change this view's content. Default: any change."""
        return True

    def _pages_changed(self, snapshot: Snapshot) -> None:
        index = self.wiki_index
        added = set(snapshot.added)
        changed = [(row.key, row.key in added) for row in snapshot.rows]
        changed += [(key, True) for key in snapshot.removed]
        if any(key[0] == index and self.relevant(key[1], new) for key, new in changed):
            self.schedule_reload()

    def _action_done(self, index: int, result: Any) -> None:
        # paths that are not pages (an inbox item, a decision file) reach no page signal
        if index == self.wiki_index and any(self.relevant(p, True) for p in result.changed):
            self.schedule_reload()

    # --- reloading ------------------------------------------------------------------------------
    def schedule_reload(self, now: bool = False) -> None:
        self._stale = True
        if not self.host.workspace.settled:  # (reloaded once the window is usable)
            return
        if self.isVisible():
            self._timer.start(0 if now else RELOAD_DELAY_MS)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale and self.host.workspace.settled:
            self._timer.start(0)

    def reload(self) -> None:
        """Recompute the view's content for the selected wiki (off the GUI thread)."""
        if not self.host.workspace.ready:
            return
        if self._loading:
            self._timer.start(RELOAD_DELAY_MS)  # one computation at a time; catch up afterwards
            return
        self._stale = False
        self._loading = True
        index = self.wiki_index

        def done(result: Any) -> None:
            self._loading = False
            if index == self.wiki_index:
                self.show_content(result)
            else:
                self.schedule_reload(now=True)

        def failed(exc: BaseException) -> None:
            self._loading = False
            self.banner.show_result(f"Cannot read {self.wiki_label}: {exc}", ok=False)
            self.mark_ready()

        self.host.workspace.read(index, self.compute, done, failed)

    def compute(self, wiki: Any) -> Any:  # pragma: no cover - every view overrides it
        raise NotImplementedError

    def show_content(self, result: Any) -> None:  # pragma: no cover - every view overrides it
        raise NotImplementedError

    # --- selection and links ------------------------------------------------------------------------
    @staticmethod
    def select_table_rows(table: QTableView, rows: list[int], current: int) -> None:
        """Make ``rows`` the selection of ``table`` and ``current`` its current row, with the
        selection signals held back (the caller refreshes its panes once afterwards)."""
        selection = table.selectionModel()
        model = table.model()
        selection.blockSignals(True)
        table.clearSelection()
        table.setCurrentIndex(model.index(current, 0))
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for r in rows:
            selection.select(model.index(r, 0), flags)
        selection.blockSignals(False)

    @staticmethod
    def selected_records(table: QTableView) -> list[Any]:
        """The records (:data:`RecordRole`) of ``table``'s selected rows, top to bottom."""
        model = table.model()
        rows = sorted({i.row() for i in table.selectionModel().selectedRows()})
        return [model.index(r, 0).data(RecordRole) for r in rows if 0 <= r < model.rowCount()]

    @staticmethod
    def current_record(table: QTableView) -> Any:
        index = table.currentIndex()
        return index.data(RecordRole) if index.isValid() else None

    def lay_out(self, top: QLayout, actions: QLayout, split: QWidget) -> None:
        """The review views' layout: wiki selector and count, buttons, the banner, then the
        table over the preview."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(actions)
        layout.addWidget(self.banner)
        layout.addWidget(split, 1)

    def open_page_url(self, url: QUrl) -> None:
        """A page link clicked in a preview: open that page of this view's wiki in the page view."""
        from urllib.parse import unquote

        from curator.views.page.render import PAGE_SCHEME

        if url.scheme() == PAGE_SCHEME:
            self.host.open_page((self.wiki_index, unquote(url.path())))
            self.host.show_view("page")

    # --- decisions --------------------------------------------------------------------------------
    def decide(self, actions: list[tuple[str, Callable[[Any], Any]]],
               done: Callable[[list[Any]], None] | None = None, index: int | None = None) -> None:
        """Run each ``(what, func)`` as its own engine action in the wiki's writer queue (one
        commit each), then say in the banner what happened and reload."""
        index = self.wiki_index if index is None else index
        results: list[Any] = []
        total = len(actions)

        def one_done(result: Any) -> None:
            results.append(result)
            if len(results) == total:
                self._summarise(results)
                if done is not None:
                    done(results)
                self.schedule_reload(now=True)

        for what, func in actions:
            self.host.run_action(index, _answering(func, what), what, one_done)

    def _summarise(self, results: list[Any]) -> None:
        bad = [r for r in results if r.status.refused]  # shown in red
        if len(results) == 1:
            self.banner.show_result(results[0].message, ok=not bad)
            return
        lines = [f"{len(results) - len(bad)} of {len(results)} done"] + [r.message for r in bad]
        self.banner.show_result("; ".join(lines), ok=not bad)


def _answering(func: Callable[[Any], ActionResult], what: str) -> Callable[[Any], ActionResult]:
    """``func`` with a failure turned into an error answer, so a bulk decision always completes
    and the operator reads one line instead of a traceback."""
    def run(wiki: Any) -> ActionResult:
        try:
            return func(wiki)
        except Exception as exc:  # any failure becomes the answer shown to the operator
            return ActionResult(Status.ERROR, f"{what} failed: {exc}")

    return run
