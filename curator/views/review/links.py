"""Links: the repair queue of unresolved link targets (docs/design.md §12).

Each row is a target that resolves to nothing, with its number of links, the pages linking to it
and the best suggested page. Selecting a row lists its suggestions and its occurrences (page and
line) and previews, for the chosen suggestion and method, exactly what will change: the alias
added to the page, or every link rewritten with its text kept. Each repair is one engine action
(one commit, Edit ▸ Undo): **Fix** (the chosen suggestion), **Accept sure suggestions** for every
selected row whose top suggestion is sure (the bulk mode: still ONE commit; a row whose top is a
guess shows "needs a look" and is left out), **Create page**, **Ignore** (a committed decision:
the target never comes back, for anyone who clones the wiki).

Suggestions come with the queue: every target's from the operator's saved queue
(:mod:`curator.engine.review.link_queue`), else, computed now, the first :data:`SUGGEST_ROWS`
targets' (the ones with most links) and any other target's when it is selected.
"""

from __future__ import annotations

import dataclasses
import html
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from curator.engine.policy.actor import OPERATOR
from curator.engine.review.linkrepair import (
    FixPlan,
    Unresolved,
    add_suggestions,
    create,
    fix_many,
    ignore,
    preview_fix,
    unresolved,
)
from curator.engine.status import Status
from curator.engine.write.actions import ActionResult
from curator.models.dedup import ADDED_BG, REMOVED_BG
from curator.models.linkrepair import COL_SUGGESTION, COL_TARGET, UnresolvedModel
from curator.views.review.base import ReviewView, record_table

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.views.host import ViewHost

SUGGEST_ROWS = 500
OCCURRENCES_SHOWN = 200


def plan_html(plan: FixPlan) -> str:
    """The preview: what the fix writes, page by page."""
    out = [f"<p><b>{len(plan.fixes)} target(s), {plan.links} link(s)</b> repaired by "
           f"<b>{'adding an alias' if plan.by == 'alias' else 'rewriting the links'}</b>; "
           f"{len(plan.changed)} file(s) change, one commit.</p>"]
    for target, _key, page in plan.fixes:
        out.append(f"<div>[[{html.escape(target)}]] &rarr; <b>{html.escape(page)}</b></div>")
    for page, names in plan.aliases.items():
        out.append(f"<p><b>{html.escape(page)}</b>: <span style='background:{ADDED_BG}; color:#1b1b1b'>aliases + "
                   f"{html.escape(', '.join(names))}</span> (the linking pages are not touched)</p>")
    if plan.rewrites:
        out.append("<table cellspacing=0 cellpadding=3 border=1 style='border-color:#ccc'>"
                   "<tr><th>Page</th><th>Line</th><th>Now</th><th>Becomes</th></tr>")
        for r in plan.rewrites[:OCCURRENCES_SHOWN]:
            out.append(f"<tr><td>{html.escape(r.page)}</td><td>{r.line}</td>"
                       f"<td style='background:{REMOVED_BG}; color:#1b1b1b'><code>{html.escape(r.old)}</code></td>"
                       f"<td style='background:{ADDED_BG}; color:#1b1b1b'><code>{html.escape(r.new)}</code></td></tr>")
        out.append("</table>")
        if len(plan.rewrites) > OCCURRENCES_SHOWN:
            out.append(f"<p>… and {len(plan.rewrites) - OCCURRENCES_SHOWN} more</p>")
    return "".join(out)


class LinksView(ReviewView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.model = UnresolvedModel()
        self.suggested: set[str] = set()  # keys whose suggestions are computed
        self._preview_request = 0  # numbers the preview reads: only the newest may fill the pane
        self.count = QLabel("Looking for unresolved links…")
        self.count.setWordWrap(True)
        self.method = QComboBox()
        self.method.addItem("add as an alias of the page", "alias")
        self.method.addItem("rewrite each link to the page", "rewrite")
        self.method.setToolTip("Alias: one file changes (the page), every link resolves through it. "
                               "Rewrite: every linking page changes, each link keeps its text.")
        self.fix_button = QPushButton("Fix")
        self.fix_button.setToolTip("Repair every link to the selected target with the chosen suggestion "
                                   "(one commit)")
        self.bulk_button = QPushButton("Accept sure suggestions")
        self.bulk_button.setToolTip("For every selected target whose top suggestion is sure, that suggestion: "
                                    "all in ONE commit (those marked 'needs a look' are left out: Fix each)")
        self.create_button = QPushButton("Create page")
        self.create_button.setToolTip("Create the page the target names (one commit)")
        self.ignore_button = QPushButton("Ignore")
        self.ignore_button.setToolTip("Never list this target again (a committed decision, kept in "
                                      ".curator-ignored-links.json)")
        # Never narrower than its longest choice (squeezed, it read "add as an alias of the pa").
        self.method.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.method.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        # Create and Ignore sit by the count: all six controls on one row did not fit the
        # middle pane at 1400 px, and the layout cut the combo and the buttons to fit.
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(self.count, 1)
        top.addWidget(self.create_button)
        top.addWidget(self.ignore_button)
        actions = QHBoxLayout()
        actions.addWidget(QLabel("Repair by:"))
        actions.addWidget(self.method)
        actions.addWidget(self.fix_button)
        actions.addWidget(self.bulk_button)
        actions.addStretch(1)

        self.table = record_table(self.model, multi=True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(COL_TARGET, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_SUGGESTION, QHeaderView.ResizeMode.Stretch)
        self.suggestions = QListWidget()
        self.suggestions.setToolTip("Pages the target may mean, best first")
        self.occurrences = QListWidget()
        self.occurrences.setToolTip("Where the target is linked (double-click opens the page)")
        self.preview = QTextBrowser()
        self.preview.setOpenLinks(False)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Suggestions"))
        left_layout.addWidget(self.suggestions, 1)
        left_layout.addWidget(QLabel("Linked from"))
        left_layout.addWidget(self.occurrences, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("What changes"))
        right_layout.addWidget(self.preview, 1)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(left)
        lower.addWidget(right)
        lower.setSizes([300, 500])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(lower)
        split.setSizes([380, 420])
        self.lay_out(top, actions, split)

        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        self.suggestions.currentRowChanged.connect(lambda _r: self._update_preview())
        self.method.currentIndexChanged.connect(lambda _i: self._update_preview())
        self.occurrences.itemDoubleClicked.connect(self._open_occurrence)
        self.fix_button.clicked.connect(self.fix_current)
        self.bulk_button.clicked.connect(self.accept_top)
        self.create_button.clicked.connect(self.create_current)
        self.ignore_button.clicked.connect(self.ignore_current)
        self._enable()

    # --- content --------------------------------------------------------------------------------------
    def compute(self, wiki: Wiki) -> list[Unresolved]:
        return unresolved(wiki, OPERATOR, suggest=SUGGEST_ROWS)

    def show_content(self, result: Any) -> None:
        items: list[Unresolved] = result
        current = self.current_record(self.table)
        # (the operator's saved queue brings every target's suggestions: none asked again)
        self.suggested = {u.key for u in items[:SUGGEST_ROWS]} | {u.key for u in items if u.suggestions}
        self.model.set_records(items)
        links = sum(u.count for u in items)
        self.count.setText(f"{len(items):,} unresolved target(s), {links:,} link(s); most links first. "
                           "Select several rows to accept their sure suggestions in one commit."
                           if items else "Every link resolves: nothing to repair.")
        row = 0
        if current is not None:
            row = next((i for i, u in enumerate(items) if u.key == current.key), 0)
        if items:
            self.select_table_rows(self.table, [row], row)
        self._selection_changed()
        self.mark_ready()

    def wiki_changed(self) -> None:
        self.model.set_records([])
        self._selection_changed()

    def _enable(self) -> None:
        current = self.current_record(self.table)
        selected = self.selected_records(self.table)
        self.fix_button.setEnabled(current is not None and self.suggestions.currentRow() >= 0)
        self.create_button.setEnabled(current is not None)
        self.ignore_button.setEnabled(current is not None)
        # (a row not suggested for yet may turn out sure: the bulk run suggests for it first)
        takes = sum(1 for u in selected if u.sure or u.key not in self.suggested)
        self.bulk_button.setEnabled(takes > 0)
        self.bulk_button.setText(f"Accept sure suggestions ({takes})" if len(selected) > 1
                                 else "Accept sure suggestion")

    def _selection_changed(self) -> None:
        record: Unresolved | None = self.current_record(self.table)
        self.suggestions.blockSignals(True)
        self.suggestions.clear()
        self.occurrences.clear()
        self.suggestions.blockSignals(False)
        if record is None:
            self.preview.setHtml("")
            self._enable()
            return
        if record.key not in self.suggested:
            self._suggest_for(record)
        self._fill_suggestions(record)
        for page, line in record.lines[:OCCURRENCES_SHOWN]:
            item = QListWidgetItem(f"{page}:{line}")
            item.setData(Qt.ItemDataRole.UserRole, page)
            self.occurrences.addItem(item)
        if len(record.lines) > OCCURRENCES_SHOWN:
            self.occurrences.addItem(f"… and {len(record.lines) - OCCURRENCES_SHOWN} more")
        self._update_preview()

    def _fill_suggestions(self, record: Unresolved) -> None:
        self.suggestions.blockSignals(True)
        self.suggestions.clear()
        for s in record.suggestions:
            item = QListWidgetItem(f"{s.score:.2f}  {s.path}  ({s.reason})")
            item.setToolTip(f"{s.path}: {s.reason} (score {s.score:.2f})")
            item.setData(Qt.ItemDataRole.UserRole, s.path)
            self.suggestions.addItem(item)
        if record.suggestions:
            self.suggestions.setCurrentRow(0)
        else:
            self.suggestions.addItem("(no page looks like it: create it, or ignore it)")
            self.suggestions.item(0).setFlags(Qt.ItemFlag.NoItemFlags)
        self.suggestions.blockSignals(False)

    def _suggest_for(self, record: Unresolved) -> None:
        key, index = record.key, self.wiki_index
        copy = dataclasses.replace(record)

        def done(result: Unresolved) -> None:
            self.suggested.add(key)
            record.suggestions = result.suggestions
            self.table.viewport().update()  # its top suggestion column
            if self.current_record(self.table) is record:
                self._fill_suggestions(record)
                self._update_preview()

        def compute(wiki: Wiki) -> Unresolved:
            add_suggestions(wiki, [copy], OPERATOR)
            return copy

        self.host.workspace.read(index, compute, done)

    def chosen_page(self) -> str | None:
        item = self.suggestions.currentItem()
        path: str | None = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return path

    def _update_preview(self) -> None:
        self._enable()
        # Previews are read on the shared pool, so an earlier one (of another selection) can come
        # back after a later one, or after a message below: only the newest request fills the pane.
        self._preview_request += 1
        request = self._preview_request
        selected = self.selected_records(self.table)
        method = self.method.currentData()
        left_out = ""
        if len(selected) > 1:
            pairs = [(u.target, u.suggestions[0].path) for u in selected if u.sure]
            looks = [u for u in selected if u.needs_look]
            if looks:
                left_out = (f"<p><b>{len(looks)} target(s) need a look</b> and are left out (their top "
                            "suggestion is a guess): select each and Fix it.</p>")
            if not pairs:
                self.preview.setHtml(left_out or "<p>None of the selected targets has a suggestion.</p>")
                return
        else:
            record = self.current_record(self.table)
            page = self.chosen_page()
            if record is None or page is None:
                self.preview.setHtml("<p>Choose a suggestion to see what changes.</p>")
                return
            pairs = [(record.target, page)]
        index = self.wiki_index

        def current() -> bool:
            return index == self.wiki_index and request == self._preview_request

        def shown(plan: FixPlan) -> None:
            if current():
                self.preview.setHtml(left_out + plan_html(plan))

        def failed(exc: BaseException) -> None:
            if current():
                self.preview.setHtml(f"<p style='color:#922b21'>{html.escape(str(exc))}</p>")

        self.host.workspace.read(index, lambda wiki: preview_fix(wiki, pairs, method, OPERATOR), shown, failed)

    def _open_occurrence(self, item: QListWidgetItem) -> None:
        page = item.data(Qt.ItemDataRole.UserRole)
        if page:
            self.host.open_page((self.wiki_index, page))
            self.host.show_view("page")

    # --- decisions --------------------------------------------------------------------------------------
    def fix_current(self) -> None:
        record = self.current_record(self.table)
        page = self.chosen_page()
        if record is None or page is None:
            return
        method = self.method.currentData()
        target = record.target
        self.decide([(f"Fixing [[{target}]]", lambda wiki: fix_many(wiki, [(target, page)], method, OPERATOR))])

    def accept_top(self) -> None:
        """The bulk mode: each selected target's sure top suggestion, all in one action (one commit);
        those that need a look are left out."""
        selected = [dataclasses.replace(u) for u in self.selected_records(self.table)]
        if not selected:
            return
        method = self.method.currentData()
        missing = [u for u in selected if u.key not in self.suggested]

        def run(wiki: Wiki) -> ActionResult:
            add_suggestions(wiki, missing, OPERATOR)
            pairs = [(u.target, u.suggestions[0].path) for u in selected if u.sure]
            if not pairs:
                return ActionResult(Status.INVALID, "none of the selected targets has a sure suggestion: "
                                    "each needs a look (choose its page and Fix it)")
            return fix_many(wiki, pairs, method, OPERATOR)

        self.decide([(f"Fixing {len(selected)} target(s)", run)])

    def create_current(self) -> None:
        record = self.current_record(self.table)
        if record is not None:
            target = record.target
            self.decide([(f"Creating [[{target}]]", lambda wiki: create(wiki, target, OPERATOR))])

    def ignore_current(self) -> None:
        record = self.current_record(self.table)
        if record is not None:
            target = record.target
            self.decide([(f"Ignoring [[{target}]]", lambda wiki: ignore(wiki, target, OPERATOR))])
