"""The duplicate review queue: candidate pairs, a side-by-side comparison, and the decisions.

Each decision is one engine action (one commit): **Merge** in either direction (after a preview
of the links that will be rewritten), **Not duplicates** (recorded in the wiki's tracked decisions
file, so the pair never returns). **Skip** only moves on: the pair goes to the end of the queue for
this session and nothing is written. The queue is recomputed off the GUI thread whenever the wiki
changes; in a home, each wiki has its own queue.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
        QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from curator.engine.actor import OPERATOR
from curator.engine.dedup import Candidate, pair_key
from curator.engine.merge import MergePlan
from curator.models.dedup import (
    COL_KEEP,
    COL_MERGE,
    COL_SCORE,
    COL_SIGNALS,
    Comparison,
    DedupModel,
    RecordRole,
    diff_html,
    gather_pair,
    meta_html,
)

from .lazy_view import ReviewView, record_table
from .render import render_message

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

    from .main_window import MainWindow

Pair = tuple[str, str]


class MergePreviewDialog(QDialog):
    """What a merge will do, asked before it is done: the resulting page as a diff (exactly what
    will be committed), the links rewritten elsewhere, and the bullets already there."""

    def __init__(self, plan: MergePlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle("Merge duplicate pages")
        merged = ", ".join(plan.merges)
        summary = QLabel(
            f"Merge <b>{html.escape(merged)}</b> into <b>{html.escape(plan.keep)}</b>?<br>"
            f"{len(plan.bullets_added)} bullet(s) added to Updates, {len(plan.bullets_skipped)} already there; "
            f"{len(plan.sections_added)} section(s) added under '## From …'; "
            f"{len(plan.rewrites)} link(s) rewritten in {len(plan.pages_rewritten)} page(s), each showing "
            f"the same text; {html.escape(merged)} moves to {html.escape(', '.join(plan.archives))}. "
            "Nothing is lost (every line is checked); one commit; Edit ▸ Undo restores everything.")
        summary.setWordWrap(True)
        extras = [f"{label} added: {', '.join(items)}" for label, items in
                  (("tags", plan.tags_added), ("related", plan.related_added), ("aliases", plan.aliases_added))
                  if items]
        self.diff = QTextBrowser()
        self.diff.setOpenLinks(False)
        self.diff.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.diff.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table, _ratio = diff_html(plan.keep_before, plan.keep_after, context=3)
        self.diff.setHtml(table)
        self.diff.setToolTip(f"Left: {plan.keep} now; right: {plan.keep} after the merge "
                             "(green: added, red: changed)")
        self.rewrites = QTreeWidget()
        self.rewrites.setHeaderLabels(["Page", "Line", "Link now", "Becomes"])
        self.rewrites.setRootIsDecorated(False)
        for r in plan.rewrites:
            QTreeWidgetItem(self.rewrites, [r.page, str(r.line), r.old, r.new or "(removed: it names the kept page)"])
        for col in range(4):
            self.rewrites.resizeColumnToContents(col)
        self.skipped = QTreeWidget()
        self.skipped.setHeaderLabels(["Bullet", "Already there as"])
        self.skipped.setRootIsDecorated(False)
        for s in plan.bullets_skipped:
            QTreeWidgetItem(self.skipped, [s["bullet"], s["matched"]])
        self.tabs = QTabWidget()
        self.tabs.addTab(self.diff, f"Resulting {plan.keep}")
        self.tabs.addTab(self.rewrites, f"Links rewritten ({len(plan.rewrites)})")
        self.tabs.addTab(self.skipped, f"Already there ({len(plan.bullets_skipped)})")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.merge_button = buttons.addButton("Merge", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        if extras:
            extra = QLabel("; ".join(extras))
            extra.setWordWrap(True)
            layout.addWidget(extra)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.setMinimumWidth(720)
        self.resize(1000, 680)


class PageCard(QGroupBox):
    """One side of the comparison: the page's metadata and the button that keeps it."""

    def __init__(self, side: str) -> None:
        super().__init__(f"{side.capitalize()} page")
        self.meta = QLabel()
        self.meta.setTextFormat(Qt.TextFormat.RichText)
        self.meta.setWordWrap(True)
        self.meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.meta.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        other = "right" if side == "left" else "left"
        self.keep = QPushButton(f"Keep {side}")
        self.keep.setToolTip(f"Merge the {other} page into this one (preview first; one commit)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.meta, 1)
        layout.addWidget(self.keep)


class DedupView(ReviewView):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.model = DedupModel()
        self.skipped: dict[int, set[Pair]] = {}
        self.pair: Pair | None = None  # (left, right) shown in the comparison
        self.comparison: Comparison | None = None
        self._row_hint = 0

        self.count = QLabel("Looking for duplicates…")
        self.count.setWordWrap(True)  # never widens the window (a home adds the wiki selector)
        self.dismiss_button = QPushButton("Not duplicates")
        self.dismiss_button.setToolTip("Record that these two pages are different (one commit); "
                                       "the pair never comes back")
        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Decide later: the pair moves to the end of the queue; nothing is written")
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(self.count, 1)
        top.addWidget(self.dismiss_button)
        top.addWidget(self.skip_button)

        self.table = record_table(self.model, multi=False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(COL_KEEP, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_MERGE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_SIGNALS, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_SCORE, QHeaderView.ResizeMode.ResizeToContents)

        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.left_card, self.right_card = PageCard("left"), PageCard("right")
        cards = QGridLayout()
        cards.setContentsMargins(0, 0, 0, 0)
        cards.addWidget(self.left_card, 0, 0)
        cards.addWidget(self.right_card, 0, 1)
        self.diff = QTextBrowser()
        self.diff.setOpenLinks(False)
        # both sides wrap (long words too), so the columns always fit side by side
        self.diff.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.diff.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.reason)
        lower_layout.addLayout(cards)
        lower_layout.addWidget(self.diff, 1)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(lower)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 4)
        split.setSizes([150, 650])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.banner)
        layout.addWidget(split, 1)

        self.left_card.keep.clicked.connect(lambda: self.merge("left"))
        self.right_card.keep.clicked.connect(lambda: self.merge("right"))
        self.dismiss_button.clicked.connect(self.not_duplicates)
        self.skip_button.clicked.connect(self.skip)
        self.table.selectionModel().currentRowChanged.connect(self._selected)
        self._set_buttons(False)
        self._show_empty("Looking for duplicates…", "The queue fills once the wiki is loaded.")

    # --- the queue ------------------------------------------------------------------------------
    def compute(self, wiki: Wiki) -> list[Candidate]:
        from curator.engine.dedup import find_duplicates

        return find_duplicates(wiki, OPERATOR)

    def show_content(self, candidates: list[Candidate]) -> None:
        keep = self.pair and pair_key(*self.pair)
        row = self.table.currentIndex().row()
        self.model.set_candidates(candidates, self.skipped.setdefault(self.wiki_index, set()))
        n = len(candidates)
        skipped = len(self.model.skipped)
        self.count.setText(f"{n} candidate pair{'s' if n != 1 else ''} in {self.wiki_label}"
                           + (f" ({skipped} skipped)" if skipped else "")
                           + (", most confident first" if n > 1 else ""))
        if not candidates:
            self.pair = None
            self.comparison = None
            self._set_buttons(False)
            self._show_empty("No duplicate candidates",
                             f"Nothing in {self.wiki_label} looks like a duplicate right now. Pages with the "
                             "same title, near-identical text, similar names or the same tags in one "
                             "folder show up here as the wiki changes.")
            self.mark_ready()
            return
        same = self.model.row_of(keep)
        target = same if same is not None else min(max(row, self._row_hint, 0), n - 1)
        self._row_hint = 0
        self._select(target)

    def _select(self, row: int) -> None:
        """Select ``row`` and (re)load its comparison: the pages may have changed since."""
        index = self.model.index(row, 0)
        self.table.selectionModel().blockSignals(True)
        self.table.setCurrentIndex(index)
        self.table.selectRow(row)
        self.table.selectionModel().blockSignals(False)
        self._selected(index, QModelIndex())

    def current_candidate(self) -> Candidate | None:
        index = self.table.currentIndex()
        value = index.data(RecordRole) if index.isValid() else None
        return value if isinstance(value, Candidate) else None

    def wiki_changed(self) -> None:
        self.pair = None
        self.comparison = None

    # --- the comparison -------------------------------------------------------------------------
    def _selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        c = current.data(RecordRole) if current.isValid() else None
        if not isinstance(c, Candidate):
            return
        pair = (c.keep, c.merge)  # the engine's suggestion on the left
        self.reason.setText(f"<b>Why:</b> {html.escape(c.reason)}")
        if pair != self.pair:
            self.comparison = None  # a reload of the same pair keeps its scroll position
        self.pair = pair
        self._set_buttons(False)
        self.window_.workspace.read(self.wiki_index, lambda wiki: gather_pair(wiki, *pair),
                                    lambda result: self._show_comparison(pair, result),
                                    lambda exc: self._comparison_failed(pair, exc))

    def _show_comparison(self, pair: Pair, comparison: Comparison) -> None:
        if pair != self.pair:
            return  # the operator has moved on
        left, right = comparison.left, comparison.right
        self.left_card.meta.setText(meta_html(left, right))
        self.right_card.meta.setText(meta_html(right, left))
        self.left_card.setTitle(f"Left: {left.title}")
        self.right_card.setTitle(f"Right: {right.title}")
        c = self.current_candidate()
        suggested = " (suggested)" if c is not None and c.keep == left.path else ""
        self.left_card.keep.setText(f"Keep left{suggested}: merge right into it")
        self.right_card.keep.setText("Keep right: merge left into it")
        scroll = self.diff.verticalScrollBar().value() if self.comparison is not None else 0
        self.comparison = comparison
        self.diff.setHtml(comparison.html)
        self.diff.verticalScrollBar().setValue(scroll)
        self.diff.setToolTip(f"{comparison.identical:.0%} of the lines are the same "
                             "(red: only on the left, green: only on the right)")
        self._set_buttons(True)
        self.mark_ready()

    def _comparison_failed(self, pair: Pair, exc: BaseException) -> None:
        if pair == self.pair:
            self._show_empty("Cannot compare these pages", str(exc))
            self.mark_ready()

    def _show_empty(self, title: str, message: str) -> None:
        self.reason.clear()
        for card in (self.left_card, self.right_card):
            card.meta.clear()
        self.left_card.setTitle("Left page")
        self.right_card.setTitle("Right page")
        self.diff.setHtml(render_message(title, message))

    def _set_buttons(self, enabled: bool) -> None:
        for button in (self.left_card.keep, self.right_card.keep, self.dismiss_button, self.skip_button):
            button.setEnabled(enabled)

    # --- decisions --------------------------------------------------------------------------------
    def merge(self, keep_side: str) -> None:
        """Merge the other page into the ``keep_side`` ("left" or "right"), after the preview."""
        if self.pair is None or self.comparison is None:
            return
        left, right = self.pair
        keep, gone = (left, right) if keep_side == "left" else (right, left)
        from curator.engine.merge import preview_merge

        index = self.wiki_index
        self.window_.workspace.read(index, lambda wiki: preview_merge(wiki, keep, gone, OPERATOR),
                                    lambda plan: self._confirm_merge(index, plan),
                                    lambda exc: self.banner.show_result(f"Cannot merge: {exc}", ok=False))

    def _confirm_merge(self, index: int, plan: MergePlan) -> None:
        if not self.exec_dialog(MergePreviewDialog(plan, self)):
            return
        from curator.engine.merge import merge_pages

        keep, gone = plan.keep, plan.merge
        self._row_hint = self.table.currentIndex().row()
        self.decide([(f"Merging {gone} into {keep}", lambda wiki: merge_pages(wiki, keep, gone, OPERATOR))],
                    index=index)

    def not_duplicates(self) -> None:
        if self.pair is None:
            return
        from curator.engine.dedup import dismiss

        a, b = self.pair
        self._row_hint = self.table.currentIndex().row()
        self.decide([(f"Marking {a} and {b} as not duplicates", lambda wiki: dismiss(wiki, a, b, OPERATOR))])

    def skip(self) -> None:
        """Next candidate; this pair goes to the end of the queue (for this session), no commit."""
        c = self.current_candidate()
        if c is None:
            return
        row = self.table.currentIndex().row()
        skipped = self.skipped.setdefault(self.wiki_index, set())
        skipped.add(pair_key(c.keep, c.merge))
        self.model.set_candidates(self.model.candidates, skipped)
        self.banner.show_result(f"Skipped {c.merge} / {c.keep}: it waits at the end of the queue", ok=True)
        self._select(min(row, self.model.rowCount() - 1))

