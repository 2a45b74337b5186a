"""History: the wiki's actions (who, what, when), the diff of the selected one, undo and revert."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
)

from curator.engine.policy.actor import OPERATOR
from curator.engine.write.actions import HistoryEntry
from curator.views.widgets import TableView
from curator.views.wiki_view import WikiView

if TYPE_CHECKING:
    from curator.views.host import ViewHost

COL_WHEN, COL_WHO, COL_ACTION, COL_TARGET, COL_COMMIT = range(5)
HEADERS = ("When", "Who", "Action", "Target", "Commit")
RecordRole = Qt.ItemDataRole.UserRole + 1
HISTORY_LIMIT = 500
ALL_ACTORS = "All actors"
_Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.entries: list[HistoryEntry] = []
        self.reverted: set[str] = set()

    def set_entries(self, entries: list[HistoryEntry]) -> None:
        self.beginResetModel()
        self.entries = entries
        self.reverted = {sha for e in entries for sha in e.reverts_all}
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.entries):
            return None
        e = self.entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (e.time.replace("T", " ").removesuffix("Z"), e.actor, e.action or "(commit)",
                    e.target or e.subject, e.commit[:8])[index.column()]
        if role == RecordRole:
            return e
        if role == Qt.ItemDataRole.ToolTipRole:
            return e.subject + ("\n" + "\n".join(e.paths[:20]) if e.paths else "")
        if role == Qt.ItemDataRole.ForegroundRole and e.commit in self.reverted:
            return QColor("#999999")
        return None


class DiffHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.added = QTextCharFormat()
        self.added.setForeground(QColor("#1e8449"))
        self.removed = QTextCharFormat()
        self.removed.setForeground(QColor("#c0392b"))
        self.header = QTextCharFormat()
        self.header.setFontWeight(QFont.Weight.Bold)

    def highlightBlock(self, text: str) -> None:
        if text.startswith("+") and not text.startswith("+++"):
            self.setFormat(0, len(text), self.added)
        elif text.startswith("-") and not text.startswith("---"):
            self.setFormat(0, len(text), self.removed)
        elif text.startswith(("diff --git", "@@")):
            self.setFormat(0, len(text), self.header)


class HistoryView(WikiView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.model = HistoryModel()
        self.undo_button = QPushButton("Undo last action")
        self.redo_button = QPushButton("Redo")
        self.redo_button.setToolTip("Re-apply what the last undo took back (Ctrl+Shift+Z)")
        self.revert_button = QPushButton("Revert selected")
        self.revert_button.setEnabled(False)
        self.actor_filter = QComboBox()
        self.actor_filter.addItem(ALL_ACTORS)
        self.actor_filter.setToolTip("Show only the actions of one actor")
        self.undo_agent_button = QPushButton("Undo this agent since…")
        self.undo_agent_button.setToolTip("Revert every write of the chosen agent since a date, in one "
                                          "commit (refused, naming the page, if later edits touch the same lines)")
        self.undo_agent_button.setEnabled(False)
        self.all_entries: list[HistoryEntry] = []
        self._filling = False
        self.table = TableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        for col in (COL_WHEN, COL_WHO, COL_ACTION, COL_COMMIT):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_TARGET, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(False)
        self.diff = QPlainTextEdit()
        self.diff.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.diff.setFont(mono)
        self._highlighter = DiffHighlighter(self.diff.document())
        buttons = QHBoxLayout()
        buttons.addWidget(self.wiki_choice)
        buttons.addWidget(self.undo_button)
        buttons.addWidget(self.redo_button)
        buttons.addWidget(self.revert_button)
        buttons.addStretch(1)
        buttons.addWidget(self.actor_filter)
        buttons.addWidget(self.undo_agent_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.diff)
        split.setSizes([300, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        layout.addWidget(split)
        self.undo_button.clicked.connect(host.undo_last)
        self.redo_button.clicked.connect(host.redo_last)
        self.revert_button.clicked.connect(self.revert_selected)
        self.undo_agent_button.clicked.connect(self.undo_agent_since)
        self.actor_filter.currentIndexChanged.connect(lambda _i: self._apply_filter())
        self.table.selectionModel().currentRowChanged.connect(self._selected)
        self.wiki_choice.currentIndexChanged.connect(lambda _i: self.reload())
        host.workspace.background_started.connect(self.reload)  # after the window is usable
        # The history changes with a commit: after an action that made one, or when HEAD moved
        # under the station (an agent's commit); a page edited but not committed changes nothing.
        host.workspace.action_done.connect(self._action_done)
        host.workspace.pages_changed.connect(lambda _s: self._check_head())
        self._head: str | None = None  # the newest commit shown

    def reload(self) -> None:
        from curator.engine.write.actions import head_commit, history

        def shown(result: tuple[str | None, list[HistoryEntry]]) -> None:
            self._head = result[0]
            self._show(result[1])

        self.host.workspace.read(self.wiki_index, lambda wiki: (head_commit(wiki), history(wiki, HISTORY_LIMIT)),
                                 shown, off_screen=not self.isVisible())

    def _action_done(self, index: int, result: Any) -> None:
        if index == self.wiki_index and result.commit:
            self.reload()

    def _check_head(self) -> None:
        from curator.engine.write.actions import head_commit

        def moved(head: str | None) -> None:
            if head != self._head:
                self.reload()

        self.host.workspace.read(self.wiki_index, head_commit, moved)

    def _show(self, entries: list[HistoryEntry]) -> None:
        import shiboken6

        if not shiboken6.isValid(self.table):
            return  # the window closed while the history was read
        self.all_entries = entries
        actors = sorted({e.actor for e in entries})
        chosen = self.actor_filter.currentText()
        self.actor_filter.blockSignals(True)
        self.actor_filter.clear()
        self.actor_filter.addItems([ALL_ACTORS, *actors])
        self.actor_filter.setCurrentText(chosen if chosen in actors else ALL_ACTORS)
        self.actor_filter.blockSignals(False)
        self._apply_filter()
        self.mark_ready()

    def selected_actor(self) -> str | None:
        text = self.actor_filter.currentText()
        return None if text in ("", ALL_ACTORS) else text

    def _apply_filter(self) -> None:
        actor = self.selected_actor()
        self.undo_agent_button.setEnabled(bool(actor and actor.startswith("agent:")))
        shown = [e for e in self.all_entries if actor is None or e.actor == actor]
        self._fill(shown)

    def select_commit(self, commit: str) -> None:
        """Select ``commit`` (clicked in the page view's provenance); shows every actor if the
        filter hides it, and reloads when the commit is newer than the list."""
        rows = [i for i, e in enumerate(self.model.entries) if e.commit == commit]
        if not rows and any(e.commit == commit for e in self.all_entries):
            self.actor_filter.setCurrentText(ALL_ACTORS)
            rows = [i for i, e in enumerate(self.model.entries) if e.commit == commit]
        if not rows:
            return
        index = self.model.index(rows[0], 0)
        self.table.setCurrentIndex(index)
        self.table.selectRow(rows[0])
        self.table.scrollTo(index)

    def undo_agent_since(self) -> None:
        actor = self.selected_actor()
        if not actor:
            return
        entry = self.current_entry()
        default = (entry.time if entry is not None else "")[:10]
        since, ok = QInputDialog.getText(self, "Undo this agent since…",
                                         f"Revert every write of {actor} since (YYYY-MM-DD or ISO time):",
                                         text=default)
        if ok and since.strip():
            self.run_undo_agent(actor, since.strip())

    def run_undo_agent(self, actor: str, since: str) -> None:
        from curator.engine.history.provenance import undo_agent

        self.host.run_action(self.wiki_index, lambda wiki: undo_agent(wiki, OPERATOR, actor, since),
                                f"Undoing {actor} since {since}")

    def _fill(self, entries: list[HistoryEntry]) -> None:
        current = self.current_entry()
        # An older entry the operator picked stays selected; otherwise the newest one is (the
        # list used to keep showing the commit that was newest when it first loaded)
        was_newest = current is None or (bool(self.model.entries) and self.model.entries[0].commit == current.commit)
        self.model.set_entries(entries)
        keep = None if was_newest or current is None else current.commit
        row = next((i for i, e in enumerate(entries) if e.commit == keep), 0)
        if entries:
            index = self.model.index(row, 0)
            self._filling = True  # (signals not blocked: the view must paint the selection)
            try:
                self.table.setCurrentIndex(index)
                self.table.selectRow(row)
            finally:
                self._filling = False
            self._selected(index, QModelIndex())  # the entry under the row may be new: show its diff

    def current_entry(self) -> HistoryEntry | None:
        index = self.table.currentIndex()
        value = index.data(RecordRole) if index.isValid() else None
        return value if isinstance(value, HistoryEntry) else None

    def _selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._filling:
            return
        entry = current.data(RecordRole) if current.isValid() else None
        self.revert_button.setEnabled(isinstance(entry, HistoryEntry) and entry.action is not None)
        if not isinstance(entry, HistoryEntry):
            self.diff.clear()
            return
        from curator.engine.history.diffs import commit_diff

        commit = entry.commit
        self.host.workspace.read(self.wiki_index, lambda wiki: commit_diff(wiki, commit),
                                    lambda text: self._show_diff(commit, text))

    def _show_diff(self, commit: str, text: str) -> None:
        import shiboken6

        if not shiboken6.isValid(self.table):
            return  # the window closed while git produced the diff
        entry = self.current_entry()
        if entry is not None and entry.commit == commit:
            if not self.isVisible() and self._highlighter.document() is not None:
                # (colours only once shown: a hidden view's diff, read as the window opens, made
                # the GUI thread enter Python for each of its up to 400,000 characters' lines,
                # each entry waiting for the interpreter lock behind the background loads)
                self._highlighter.setDocument(None)
            self.diff.setPlainText(text)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._highlighter.document() is None:
            self._highlighter.setDocument(self.diff.document())  # (highlights the diff shown)

    def revert_selected(self) -> None:
        entry = self.current_entry()
        if entry is None:
            return
        from curator.engine.write.actions import revert

        commit = entry.commit
        self.host.run_action(self.wiki_index, lambda wiki: revert(wiki, OPERATOR, commit),
                                f"Reverting {commit[:8]}")
