"""The duplicate review queue: duplicate families, the survivor compared with each member, and
the decisions (docs/design.md §12).

A family is every page that is a copy of the others (the engine's :class:`~curator.engine.dedup.index.Family`),
reviewed once. Its members are listed with the suggested survivor first and why (the merge keep
rule: more trust, then more inbound links, then older) and each member's signal scores against
it; the comparison shows the survivor next to the selected member. Each decision is one engine
action (one commit): **Keep** the survivor, merging every other member into it at once (after the
merge preview: the resulting page as a diff, the links rewritten); **Keep this one instead**
makes the selected member the survivor; **Not a duplicate** takes the selected member out of the
family, **Not duplicates** dismisses the whole family (both recorded in the wiki's tracked
decisions file, so they never return, whoever renames the pages). **Skip** only moves on: the
family goes to the end of the queue for this session and nothing is written. The queue is
recomputed off the GUI thread whenever the wiki changes, filtered by folder and signal; in a
home, each wiki has its own queue. Every dedup computation runs in the wiki's dedup worker process
(:mod:`curator.engine.dedup.worker`), never in the station's: the queue is listed from the result
the last full scan kept for the pages (in a moment); once it is shown, the dedup index's every-page
build starts there in the background, so that the decisions made here are followed page by page
(the queue answers from the kept result until the build is done). A worker that dies is said in
one line, with a Retry that starts another.
"""

from __future__ import annotations

import html
import posixpath
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.lookalike import escape_controls
from curator.engine.dedup.index import REPORTED_SIGNALS, Family
from curator.engine.dedup.worker import WorkerGone
from curator.engine.policy.actor import OPERATOR
from curator.engine.write.merge import MergePlan
from curator.models.dedup import (
    COL_IMPACT,
    COL_KEEP,
    COL_PAGES,
    COL_SIGNALS,
    Comparison,
    FamilyModel,
    RecordRole,
    diff_html,
    gather_pair,
    meta_html,
    order_note,
)
from curator.text import plural
from curator.views.page.render import render_message
from curator.views.plain_tips import set_tip
from curator.views.review.base import ElidedPaths, ReviewView, record_table
from curator.views.workspace import BACKGROUND_NICENESS

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.views.host import ViewHost

Pair = tuple[str, str]
MEMBER_COLUMNS = ("Page", "Role", "Trust", "Inbound", "Signals vs survivor", "Shared text")
#: Rows beyond those in view that the queue's content-sized columns measure (see DedupView).
RESIZE_PRECISION = 50
#: How long after the queue is shown the dedup index's every-page build starts (see show_content).
BUILD_DELAY_MS = 1000


class MergePreviewDialog(QDialog):
    """What a merge will do, asked before it is done: the resulting page as a diff (exactly what
    will be committed), the links rewritten elsewhere, and the bullets already there."""

    def __init__(self, plan: MergePlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle("Merge duplicate pages")
        merged = escape_controls(", ".join(plan.merges))
        rows = f"{plural(len(plan.rows_added), 'table row')} added to tables it has; " if plan.rows_added else ""
        summary = QLabel(
            f"Merge <b>{html.escape(merged)}</b> into <b>{html.escape(escape_controls(plan.keep))}</b>?<br>"
            f"{plural(len(plan.bullets_added), 'bullet')} added to Updates, {len(plan.bullets_skipped)} already there; "
            f"{plural(len(plan.sections_added), 'section')} added under '## From …'; {rows}"
            f"{plural(len(plan.rewrites), 'link')} rewritten in {plural(len(plan.pages_rewritten), 'page')}, each showing "
            f"the same text; {html.escape(merged)} moves to {html.escape(escape_controls(', '.join(plan.archives)))}. "
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
        set_tip(self.diff, f"Left: {plan.keep} now; right: {plan.keep} after the merge "
                           "(green: added, red: changed)")
        self.rewrites = QTreeWidget()
        self.rewrites.setHeaderLabels(["Page", "Line", "Link now", "Becomes"])
        self.rewrites.setRootIsDecorated(False)
        for r in plan.rewrites:
            QTreeWidgetItem(self.rewrites, [escape_controls(r.page), str(r.line), escape_controls(r.old),
                                            escape_controls(r.new) if r.new else "(removed: it names the kept page)"])
        for col in range(4):
            self.rewrites.resizeColumnToContents(col)
        self.skipped = QTreeWidget()
        self.skipped.setHeaderLabels(["Bullet or block", "Already there as"])
        self.skipped.setRootIsDecorated(False)
        for s in plan.bullets_skipped:
            QTreeWidgetItem(self.skipped, [escape_controls(s["bullet"]), escape_controls(s["matched"])])
        for b in plan.blocks_skipped:
            QTreeWidgetItem(self.skipped, [escape_controls(b["block"]),
                                           f"the same text (whole or longer) on {escape_controls(plan.keep)}"])
        self.tabs = QTabWidget()
        self.tabs.addTab(self.diff, f"Resulting {plan.keep}")
        self.tabs.addTab(self.rewrites, f"Links rewritten ({len(plan.rewrites)})")
        self.tabs.addTab(self.skipped, f"Already there ({len(plan.bullets_skipped) + len(plan.blocks_skipped)})")
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
        self.keep = QPushButton()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.meta, 1)
        layout.addWidget(self.keep)


class DedupView(ReviewView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.model = FamilyModel()
        self.skipped: dict[int, set[str]] = {}  # per wiki: ids of the families skipped this session
        self.survivors: dict[str, str] = {}  # family id -> the survivor the operator chose
        self.family: Family | None = None  # the family shown
        self.pair: Pair | None = None  # (survivor, member) shown in the comparison
        self.comparison: Comparison | None = None
        self._row_hint = 0

        self.count = QLabel("Looking for duplicates…")
        self.count.setWordWrap(True)  # never widens the window (a home adds the wiki selector)
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("Folder…")
        self.folder.setClearButtonEnabled(True)
        self.folder.setToolTip("Only families with a page in this folder")
        self.folder.setMaximumWidth(180)
        self.signal = QComboBox()
        self.signal.addItem("Every signal", "")
        for name in REPORTED_SIGNALS:
            self.signal.addItem(name, name)
        self.signal.setToolTip("Only families where this signal fired")
        self.dismiss_family_button = QPushButton("Not duplicates")
        self.dismiss_family_button.setToolTip("Record that no two pages of this family are duplicates "
                                              "(one commit); the family never comes back")
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Start the duplicate finder again and list the families")
        self.retry_button.hide()
        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Decide later: the family moves to the end of the queue; nothing is written")
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(self.count, 1)
        top.addWidget(self.retry_button)
        top.addWidget(self.folder)
        top.addWidget(self.signal)
        top.addWidget(self.dismiss_family_button)
        top.addWidget(self.skip_button)

        self.table = record_table(self.model, multi=False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(COL_KEEP, QHeaderView.ResizeMode.Stretch)
        for col in (COL_PAGES, COL_SIGNALS, COL_IMPACT):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        # the columns fit the rows in view and this many more, not the first thousand rows
        # (Qt's default; ~0.5 s of the GUI thread each time 8,000+ families arrive)
        header.setResizeContentsPrecision(RESIZE_PRECISION)
        # a survivor's path too long for its column loses its middle: its folder's start and its
        # file name stay in sight
        self.table.setItemDelegateForColumn(COL_KEEP, ElidedPaths(self.table))

        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.members = QTreeWidget()
        self.members.setHeaderLabels(list(MEMBER_COLUMNS))
        self.members.setRootIsDecorated(False)
        self.members.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.members.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.members.header().setStretchLastSection(False)
        # (a family's names mostly share their start and differ nearer their end: the start goes)
        self.members.setItemDelegateForColumn(0, ElidedPaths(self.members, Qt.TextElideMode.ElideLeft))
        self._members_viewport = self.members.viewport()
        self._members_viewport.installEventFilter(self)  # (refitted when the pane is resized)
        self.dismiss_member_button = QPushButton("Not a duplicate")
        self.dismiss_member_button.setToolTip("Take the selected page out of this family: it is a duplicate of "
                                              "none of the others (one commit)")
        member_row = QHBoxLayout()
        member_row.addWidget(QLabel("Members (select one to compare it with the survivor):"), 1)
        member_row.addWidget(self.dismiss_member_button)
        self.left_card, self.right_card = PageCard("survivor"), PageCard("member")
        self.left_card.keep.setToolTip("Merge every other page of the family into the survivor "
                                       "(preview first; one commit)")
        self.right_card.keep.setToolTip("Make the selected member the survivor instead (nothing is written yet)")
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
        lower_layout.addLayout(member_row)
        lower_layout.addWidget(self.members, 1)
        lower_layout.addLayout(cards)
        lower_layout.addWidget(self.diff, 3)

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

        self.left_card.keep.clicked.connect(self.merge)
        self.right_card.keep.clicked.connect(self.make_survivor)
        self.dismiss_family_button.clicked.connect(self.not_duplicates)
        self.dismiss_member_button.clicked.connect(self.not_a_duplicate)
        self.skip_button.clicked.connect(self.skip)
        self.retry_button.clicked.connect(self.retry)
        self.folder.editingFinished.connect(lambda: self.schedule_reload(now=True))
        self.signal.currentIndexChanged.connect(lambda _i: self.schedule_reload(now=True))
        self.table.selectionModel().currentRowChanged.connect(self._selected)
        self.members.currentItemChanged.connect(lambda _c, _p: self._member_selected())
        self._set_buttons(False)
        self._show_empty("Looking for duplicates…", "The queue fills once the wiki is loaded.")

    # --- the queue ------------------------------------------------------------------------------
    def compute(self, wiki: Wiki) -> list[Family] | WorkerGone:
        from curator.engine.dedup.worker import worker_for

        folder = self.folder.text().strip() or None
        try:
            return worker_for(wiki, BACKGROUND_NICENESS).families(folder, self.signal.currentData() or None)
        except WorkerGone as exc:
            return exc  # (shown in the view, with a Retry: see show_content)

    def show_content(self, result: list[Family] | WorkerGone) -> None:
        if not isinstance(result, list):
            self._worker_gone(str(result))
            return
        families = result
        self.retry_button.hide()

        def build(wiki: Wiki) -> None:
            from curator.engine.dedup.worker import worker_for

            worker_for(wiki, BACKGROUND_NICENESS).build()

        # In the background once shown (BUILD_DELAY_MS later: the queue is laid out and painted
        # first), in the dedup worker process: every page's features, so that the decisions made
        # here (and any other change) are followed page by page; the queue answers from the kept
        # result meanwhile (DedupIndex.build).
        index = self.wiki_index
        QTimer.singleShot(BUILD_DELAY_MS, self, lambda: self.host.workspace.read(index, build, lambda _none: None,
                                                                                   lambda _exc: None))
        keep = set(self.family.pages) if self.family is not None else None
        row = self.table.currentIndex().row()
        self.model.set_families(families, self.skipped.setdefault(self.wiki_index, set()))
        n = len(families)
        skipped = len(self.model.skipped)
        pages = sum(len(f.pages) for f in families)
        filtered = bool(self.folder.text().strip() or self.signal.currentData())
        self.count.setText(f"{n} duplicate famil{'ies' if n != 1 else 'y'} ({pages} pages) in {self.wiki_label}"
                           + (" matching the filter" if filtered else "")
                           + (f" ({skipped} skipped)" if skipped else "")
                           + order_note(families))
        if not families:
            self.family = None
            self.pair = None
            self.comparison = None
            self.members.clear()
            self._set_buttons(False)
            self._show_empty("No duplicate families" + (" matching the filter" if filtered else ""),
                             f"Nothing in {self.wiki_label} looks like a copy of another page right now. "
                             "Pages whose text is the same or mostly contained in another, and pairs with "
                             "the same title or similar names, show up here as the wiki changes.")
            self.mark_ready()
            return
        same = self.model.row_of(keep)
        target = same if same is not None else min(max(row, self._row_hint, 0), n - 1)
        self._row_hint = 0
        self._select(target)

    def _worker_gone(self, message: str) -> None:
        """The dedup worker died before answering: one line, and a Retry (which starts another)."""
        self.count.setText("Cannot list the duplicate families: the duplicate finder stopped.")
        self.retry_button.show()
        self.model.set_families([], set())
        self.family = self.pair = self.comparison = None
        self.members.clear()
        self._set_buttons(False)
        self._show_empty("The duplicate finder stopped", f"{message[:1].upper()}{message[1:]}. Click Retry to "
                                                        "look again.")
        self.mark_ready()

    def retry(self) -> None:
        self.retry_button.hide()
        self.count.setText("Looking for duplicates…")
        self.schedule_reload(now=True)

    def _select(self, row: int) -> None:
        """Select ``row`` and (re)load its members and comparison: the pages may have changed since."""
        index = self.model.index(row, 0)
        self.table.selectionModel().blockSignals(True)
        self.table.setCurrentIndex(index)
        self.table.selectRow(row)
        self.table.selectionModel().blockSignals(False)
        self._selected(index, QModelIndex())

    def current_family(self) -> Family | None:
        index = self.table.currentIndex()
        value = index.data(RecordRole) if index.isValid() else None
        return value if isinstance(value, Family) else None

    def wiki_changed(self) -> None:
        self.family = None
        self.pair = None
        self.comparison = None

    def survivor(self) -> str | None:
        """The page the family merges into: the operator's choice, else the engine's suggestion."""
        f = self.family
        if f is None:
            return None
        chosen = self.survivors.get(f.id)
        return chosen if chosen in f.pages else f.keep

    def others(self) -> list[str]:
        """The family's pages that merge into the survivor, in the keep rule's order."""
        keep = self.survivor()
        return [p for p in self.family.pages if p != keep] if self.family is not None else []

    # --- the family -------------------------------------------------------------------------------
    def _selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        f = current.data(RecordRole) if current.isValid() else None
        if not isinstance(f, Family):
            return
        member = self.pair[1] if self.pair is not None and self.family is not None and self.family.id == f.id else None
        self.family = f
        self.reason.setText(f"<b>Why:</b> {html.escape(escape_controls(f.reason))}")
        self._fill_members(member)

    #: the least share of the members' table the page column keeps when the signals are long
    MEMBER_PAGE_SHARE = 0.4

    def _fit_members(self) -> None:
        """The members' columns whole but the page (which takes the rest) and the signals: when
        the rest leaves the pages less than :data:`MEMBER_PAGE_SHARE` of the table, the signals
        give up what is missing (their full text in the row's Why and each cell's tooltip).
        Sized to the other columns alone, the pages were "wiki…0.md" in a pane of 570 pixels."""
        tree, header = self.members, self.members.header()
        for col in range(1, len(MEMBER_COLUMNS)):
            tree.resizeColumnToContents(col)
        width = tree.viewport().width()
        wanted = min(tree.sizeHintForColumn(0), int(width * self.MEMBER_PAGE_SHARE))
        left = width - sum(header.sectionSize(c) for c in range(1, len(MEMBER_COLUMNS)))
        if left < wanted:
            signals = MEMBER_COLUMNS.index("Signals vs survivor")
            header.resizeSection(signals, max(header.sectionSizeHint(signals), header.sectionSize(signals) - (wanted - left)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self._members_viewport:
            self._fit_members()
        return super().eventFilter(watched, event)

    def _fill_members(self, member: str | None = None) -> None:
        f = self.family
        keep = self.survivor()
        if f is None or keep is None:
            return
        rows = {m["path"]: m for m in f.members}
        self.members.blockSignals(True)
        self.members.clear()
        select = None
        shown = [keep, *self.others()]
        # the pages by their names in the folder they share (a family's pages mostly differ at
        # the end of their names: elided in the middle, whole paths looked all alike)
        folder = posixpath.commonpath([posixpath.dirname(p) for p in shown])
        cut = len(folder) + 1 if folder else 0
        self.members.headerItem().setText(0, f"Page (in {escape_controls(folder)}/)" if folder else "Page")
        for path in shown:
            m = rows.get(path, {})
            is_keep = path == keep
            role = ("survivor (suggested)" if path == f.keep else "survivor (your choice)") if is_keep else (
                "merges into it" + (" — suggested survivor" if path == f.keep else ""))
            if is_keep:
                signals, common = "", ""
            else:
                scores = self._scores(f, keep, path)
                signals = ", ".join(f"{s} {scores.get(s, 0.0):.2f}" for s in self._signals(f, keep, path)) or "(via another member)"
                common = f"{scores.get('containment', 0.0):.0%}"
            item = QTreeWidgetItem(self.members, [escape_controls(path[cut:]), role, f"{m.get('trust', 0.5):.2f}",
                                                  str(m.get("inbound", 0)), signals, common])
            item.setData(0, Qt.ItemDataRole.UserRole, path)
            item.setToolTip(0, path)  # (the name alone, its start elided when the pane is narrow)
            item.setToolTip(MEMBER_COLUMNS.index("Signals vs survivor"), signals)  # (cut when the pane is narrow: see _fit_members)
            if is_keep:
                font = item.font(0)
                font.setBold(True)
                for col in range(len(MEMBER_COLUMNS)):
                    item.setFont(col, font)
            elif select is None or path == member:
                select = item
        self._fit_members()
        if select is not None:
            self.members.setCurrentItem(select)
        self.members.blockSignals(False)
        n = len(self.others())
        self.left_card.keep.setText(f"Keep this: merge the other {n} page{'s' if n != 1 else ''} into it…")
        self._member_selected()

    @staticmethod
    def _signals(f: Family, a: str, b: str) -> list[str]:
        return next((e["signals"] for e in f.edges if set(e["pages"]) == {a, b}), [])

    @staticmethod
    def _scores(f: Family, keep: str, path: str) -> dict[str, float]:
        """Scores of ``path`` against ``keep`` (the engine's, against its own suggestion, when the
        operator has not chosen another survivor)."""
        row = next((m for m in f.members if m["path"] == path), {})
        scores: dict[str, float] = row.get("scores", {}) if keep == f.keep else {}
        return scores or {s: 0.0 for s in REPORTED_SIGNALS}

    def _member_selected(self) -> None:
        item = self.members.currentItem()
        keep = self.survivor()
        if item is None or keep is None:
            return
        path = str(item.data(0, Qt.ItemDataRole.UserRole))
        if path == keep:
            return
        pair = (keep, path)
        if pair != self.pair:
            self.comparison = None  # a reload of the same pair keeps its scroll position
        self.pair = pair
        self._set_buttons(False)
        self.host.workspace.read(self.wiki_index, lambda wiki: gather_pair(wiki, *pair),
                                    lambda result: self._show_comparison(pair, result),
                                    lambda exc: self._comparison_failed(pair, exc))

    def _show_comparison(self, pair: Pair, comparison: Comparison) -> None:
        if pair != self.pair:
            return  # the operator has moved on
        left, right = comparison.left, comparison.right
        self.left_card.meta.setText(meta_html(left, right))
        self.right_card.meta.setText(meta_html(right, left))
        suggested = self.family is not None and self.family.keep == left.path
        self.left_card.setTitle(f"Survivor{' (suggested)' if suggested else ''}: {escape_controls(left.title)}")
        self.right_card.setTitle(f"Member: {escape_controls(right.title)}")
        self.right_card.keep.setText("Keep this one instead")
        scroll = self.diff.verticalScrollBar().value() if self.comparison is not None else 0
        self.comparison = comparison
        self.diff.setHtml(comparison.html)
        self.diff.verticalScrollBar().setValue(scroll)
        set_tip(self.diff, f"{comparison.identical:.0%} of the lines are the same "
                           "(red: only on the survivor, green: only on the member)")
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
        self.left_card.setTitle("Survivor")
        self.right_card.setTitle("Member")
        self.diff.setHtml(render_message(title, message))

    def _set_buttons(self, enabled: bool) -> None:
        for button in (self.left_card.keep, self.right_card.keep, self.dismiss_family_button,
                       self.dismiss_member_button, self.skip_button):
            button.setEnabled(enabled)

    # --- decisions --------------------------------------------------------------------------------
    def make_survivor(self) -> None:
        """The selected member becomes the survivor (for this session; nothing is written)."""
        if self.family is None or self.pair is None:
            return
        _keep, member = self.pair
        self.survivors[self.family.id] = member
        self.pair = None
        self._fill_members()
        self.banner.show_result(f"{member} is now the survivor of this family: Keep merges the others into it",
                                ok=True)

    def merge(self) -> None:
        """Merge every other member into the survivor in one commit, after the preview."""
        keep, gone = self.survivor(), self.others()
        if keep is None or not gone or self.comparison is None:
            return
        from curator.engine.write.merge import preview_merge

        index = self.wiki_index
        self.host.workspace.read(index, lambda wiki: preview_merge(wiki, keep, gone, OPERATOR),
                                    lambda plan: self._confirm_merge(index, plan),
                                    lambda exc: self.banner.show_result(f"Cannot merge: {exc}", ok=False))

    def _confirm_merge(self, index: int, plan: MergePlan) -> None:
        if not self.exec_dialog(MergePreviewDialog(plan, self)):
            return
        from curator.engine.write.merge import merge_pages

        keep, gone = plan.keep, list(plan.merges)
        self._row_hint = self.table.currentIndex().row()
        self.decide([(f"Merging {', '.join(gone)} into {keep}", lambda wiki: merge_pages(wiki, keep, gone, OPERATOR))],
                    index=index)

    def not_duplicates(self) -> None:
        """Dismiss the whole family: no two of its pages are duplicates (one commit)."""
        if self.family is None:
            return
        from curator.engine.dedup.index import dismiss_pages

        pages = list(self.family.pages)
        self._row_hint = self.table.currentIndex().row()
        self.decide([(f"Marking {len(pages)} pages as not duplicates",
                      lambda wiki: dismiss_pages(wiki, pages, OPERATOR))])

    def not_a_duplicate(self) -> None:
        """Take the selected member out of its family (one commit)."""
        if self.family is None or self.pair is None:
            return
        from curator.engine.dedup.index import dismiss_pages

        member = self.pair[1]
        pages = list(self.family.pages)
        self._row_hint = self.table.currentIndex().row()
        self.decide([(f"Marking {member} as a duplicate of none of its family",
                      lambda wiki: dismiss_pages(wiki, pages, OPERATOR, member=member))])

    def skip(self) -> None:
        """Next family; this one goes to the end of the queue (for this session), no commit."""
        f = self.current_family()
        if f is None:
            return
        row = self.table.currentIndex().row()
        skipped = self.skipped.setdefault(self.wiki_index, set())
        skipped.add(f.id)
        self.model.set_families(self.model.families, skipped)
        self.banner.show_result(f"Skipped the family of {f.keep}: it waits at the end of the queue", ok=True)
        self._select(min(row, self.model.rowCount() - 1))
