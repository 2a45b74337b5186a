"""Lint as a queue (docs/design.md §12): Health ▸ a kind of problem ▸ the pages, each with its line.

Opening a problem (double-click or Enter) shows the page in the page view's Source tab with the
cursor on that line. The problems are :func:`curator.engine.review.lint.lint`'s, computed off the GUI
thread whenever the wiki changes.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QVBoxLayout

from curator.engine.policy.actor import OPERATOR
from curator.engine.review.lint import LintIssue, lint
from curator.models.linkrepair import COL_CODE, COL_LINE, COL_MESSAGE, COL_PATH, LintModel
from curator.views.review.base import PathColumnFit, ReviewView, record_table

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.views.host import ViewHost

ALL = ""


class LintView(ReviewView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.issues: list[LintIssue] = []
        self.kind = ALL
        self.model = LintModel()
        self.kinds = QComboBox()
        self.kinds.setToolTip("Which kind of problem to list")
        # filled after it is first shown: sized to its items then and again ("every kir" when
        # sized while still empty)
        self.kinds.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.kinds.currentIndexChanged.connect(self._kind_chosen)
        self.count = QLabel("Checking the pages…")
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(QLabel("Kind:"))
        top.addWidget(self.kinds)
        top.addWidget(self.count, 1)
        self.table = record_table(self.model)
        header = self.table.horizontalHeader()
        # the line and kind whole (their widths come from the rows on screen and a thousand
        # more, so a 30,000-problem list costs no more); the page as wide as its paths in what
        # leaves the problem in sight; the problem takes the rest
        for col in (COL_LINE, COL_CODE):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_MESSAGE, QHeaderView.ResizeMode.Stretch)
        self.page_fit = PathColumnFit(self.table, COL_PATH)
        self.table.doubleClicked.connect(self._open)
        self.table.activated.connect(self._open)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.banner)
        layout.addWidget(self.table, 1)

    def compute(self, wiki: Wiki) -> list[LintIssue]:
        return lint(wiki, OPERATOR)

    def show_content(self, result: Any) -> None:
        self.issues = result
        counts = Counter(i.code for i in self.issues)
        self.kinds.blockSignals(True)
        self.kinds.clear()
        self.kinds.addItem(f"every kind ({len(self.issues):,})", ALL)
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            self.kinds.addItem(f"{code} ({n:,})", code)
        at = self.kinds.findData(self.kind)
        self.kinds.setCurrentIndex(max(0, at))
        self.kinds.blockSignals(False)
        self._fill()
        self.mark_ready()

    def set_kind(self, kind: str) -> None:
        """List only problems of ``kind`` ("" for every kind)."""
        self.kind = kind
        at = self.kinds.findData(kind)
        if at >= 0:
            self.kinds.setCurrentIndex(at)
        else:
            self._fill()

    def _kind_chosen(self, _index: int) -> None:
        self.kind = self.kinds.currentData() or ALL
        self._fill()

    def _fill(self) -> None:
        shown = [i for i in self.issues if not self.kind or i.code == self.kind]
        self.model.set_records(shown)
        what = self.kind or "problem"
        self.count.setText(f"{len(shown):,} {what}{'' if len(shown) == 1 else 's'}; "
                           "double-click one to see the page at its line")

    def _open(self, index: QModelIndex) -> None:
        issue = self.model.records[index.row()] if 0 <= index.row() < len(self.model.records) else None
        if issue is None or issue.path.endswith("/"):
            return  # a folder (folder-case): nothing to open
        self.open_issue(issue)

    def open_issue(self, issue: LintIssue) -> None:
        """Show the issue's page with the Source tab's cursor on its line."""
        self.host.open_page_at_line((self.wiki_index, issue.path), max(1, issue.line))


def show_line(page_view: Any, line: int, tries: int = 50) -> None:
    """Put the Source tab's cursor on ``line`` (1-based), centred; a long source arrives in
    chunks, so wait (a few turns of the event loop) until that line is there."""
    source = page_view.source
    doc = source.document()
    if doc.blockCount() < line and tries > 0 and page_view.loading():
        QTimer.singleShot(20, lambda: show_line(page_view, line, tries - 1))
        return
    block = doc.findBlockByNumber(min(line, doc.blockCount()) - 1)
    cursor = QTextCursor(block)
    cursor.select(QTextCursor.SelectionType.LineUnderCursor)
    source.setTextCursor(cursor)
    page_view.show_source()
    source.centerCursor()
