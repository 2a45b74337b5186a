"""The Inbox: agent writes the review policy held, decided by the operator (docs/design.md §13).

A table of pending items (agent, department, time, target page, fact) over a detail pane: the
target page with the fact in place as a diff, and the three facts anywhere in the wiki closest in
meaning (links open their pages): by shared words at once, by meaning when a background task has
them from the fact index (building it if need be). Keyboard first: **J**/**K** move, **A** approves the selection
(bulk), **E** edits the current item's text and approves it, **R** rejects the selection with a
reason. Every decision is an engine action (one commit each, undone with Edit ▸ Undo); the tab
shows the number of pending items, kept current by a cheap count every few seconds (agents hold
writes from other processes; an item is a file, not a page, so page events do not announce it).
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.lookalike import escape_controls
from curator.engine.policy.actor import OPERATOR
from curator.engine.write.held import InboxItem
from curator.models.inbox import COL_FACT, COL_TARGET, InboxModel, item_html
from curator.views.page.page_view import SafeBrowser
from curator.views.page.render import render_message
from curator.views.review.base import ReviewView, record_table
from curator.views.widgets import ReasonDialog

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import ActionResult
    from curator.views.host import ViewHost

TAB_TITLE = "Inbox"
COUNT_INTERVAL_MS = 3000


def _buttons(dialog: QDialog, ok_text: str) -> tuple[QDialogButtonBox, QPushButton]:
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    ok = buttons.addButton(ok_text, QDialogButtonBox.ButtonRole.AcceptRole)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons, ok


class EditDialog(QDialog):
    """Edit the held fact, then approve exactly the edited text."""

    def __init__(self, item: InboxItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit and approve")
        intro = QLabel(f"{html.escape(item.actor)} → {html.escape(item.target)}. The text below goes on "
                       "the page exactly as written, authored by the agent, reviewed by you.")
        intro.setWordWrap(True)
        self.text = QPlainTextEdit(item.content)
        self.text.setTabChangesFocus(True)
        buttons, self.ok_button = _buttons(self, "Approve")
        self.text.textChanged.connect(lambda: self.ok_button.setEnabled(bool(self.value())))
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(560, 240)

    def value(self) -> str:
        return " ".join(self.text.toPlainText().split())


class RejectDialog(ReasonDialog):
    """Reject the selection: the reason is recorded and told to any agent that tries again."""

    def __init__(self, items: list[InboxItem], parent: QWidget | None = None) -> None:
        n = len(items)
        what = f"“{escape_controls(items[0].content)}”" if n == 1 else f"{n} items"
        super().__init__("Reject", f"Reject {html.escape(what)}? Any agent that submits the same fact again is "
                         "told it was rejected, with this reason.", "Reject", parent)


class InboxView(ReviewView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.model = InboxModel()
        self._detail_id: str | None = None
        self._counts: dict[int, int] = {}

        self.count = QLabel("Reading the inbox…")
        self.count.setWordWrap(True)
        self.approve_button = QPushButton("Approve (A)")
        self.edit_button = QPushButton("Edit && approve (E)")
        self.reject_button = QPushButton("Reject… (R)")
        self.open_button = QPushButton("Open page")
        self.approve_button.setToolTip("Apply the selected facts to their pages, authored by their agents "
                                       "(one commit each, with Reviewed-by: you, as your git user.name "
                                       "and user.email say); where the policy asks for two approvals, "
                                       "the first is recorded and the item waits for another operator")
        self.edit_button.setToolTip("Edit the current item's text, then approve exactly that text")
        self.reject_button.setToolTip("Reject the selected items with a reason (one commit each)")
        self.open_button.setToolTip("Open the target page in the page view")
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(self.count, 1)
        actions = QHBoxLayout()
        for button in (self.approve_button, self.edit_button, self.reject_button, self.open_button):
            actions.addWidget(button)
        hint = QLabel("J/K move · A approve · E edit · R reject · Shift/Ctrl select many")
        hint.setStyleSheet("color: #777777;")
        actions.addWidget(hint, 1)

        self.table = record_table(self.model, multi=True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_FACT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_TARGET, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(COL_TARGET, 220)
        self.detail = SafeBrowser()
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([220, 560])
        self.lay_out(top, actions, split)

        self.approve_button.clicked.connect(self.approve_selected)
        self.edit_button.clicked.connect(self.edit_current)
        self.reject_button.clicked.connect(self.reject_selected)
        self.open_button.clicked.connect(self.open_current)
        self.table.doubleClicked.connect(lambda _i: self.edit_current())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selection_changed())
        self.detail.anchorClicked.connect(self.open_page_url)
        for key, slot in (("J", lambda: self.select_next(1)), ("K", lambda: self.select_next(-1)), ("A", self.approve_selected),
                          ("E", self.edit_current), ("R", self.reject_selected)):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self._count_timer = QTimer(self)
        self._count_timer.setInterval(COUNT_INTERVAL_MS)
        self._count_timer.timeout.connect(self.update_badge)
        host.workspace.loaded.connect(self._on_loaded)
        self._selection_changed()
        self.detail.setHtml(render_message("Inbox", "Reading the wiki…"))

    # --- the badge ---------------------------------------------------------------------------
    def _on_loaded(self, _snapshot: object) -> None:
        self.update_badge()
        self._count_timer.start()

    def update_badge(self) -> None:
        """Count pending items in every loaded wiki (a folder listing, off the GUI thread)."""
        from curator.engine.review.inbox import pending_count

        ws = self.host.workspace
        for handle in ws.handles:
            if handle.wiki is None:
                continue

            def done(n: int, index: int = handle.index) -> None:
                self._set_count(index, n)

            ws.read(handle.index, pending_count, done, lambda _exc: None)

    def _set_count(self, index: int, n: int) -> None:
        changed = self._counts.get(index) != n
        self._counts[index] = n
        total = sum(self._counts.values())
        self.host.set_view_title(self, f"{TAB_TITLE} ({total})" if total else TAB_TITLE,
                                 f"{total} agent write{'s' if total != 1 else ''} held for your review")
        if changed and index == self.wiki_index and len(self.model.rows) != n:
            self.schedule_reload()

    # --- the list ----------------------------------------------------------------------------
    def compute(self, wiki: Wiki) -> list[InboxItem]:
        from curator.models.inbox import gather_inbox

        return gather_inbox(wiki)

    def show_content(self, items: list[InboxItem]) -> None:
        selected = {i.id for i in self.selected_items()}
        current = self.current_item()
        row_hint = max(self.table.currentIndex().row(), 0)
        self.model.set_records(items)
        self._set_count(self.wiki_index, len(items))
        n = len(items)
        self.count.setText(f"{n} agent write{'s' if n != 1 else ''} held for review in {self.wiki_label}")
        if not items:
            self._detail_id = None
            self.detail.setHtml(render_message(
                "The inbox is empty", "No agent write is waiting for review. Writes the [review] rules of "
                ".scope.toml hold (new pages, identity and core pages, namespaces with review = true) "
                "appear here."))
            self._selection_changed()
            self.mark_ready()
            return
        rows = [i for i, item in enumerate(items) if item.id in selected]
        keep = self.model.row_of(current.id) if current is not None else None
        if keep is None:
            keep = min(row_hint, n - 1)
        self._select_rows(rows or [keep], keep)

    def _select_rows(self, rows: list[int], current: int) -> None:
        self.select_table_rows(self.table, rows, current)
        self._selection_changed(force=True)

    def select_ids(self, ids: list[str]) -> None:
        """Select these items (the first becomes current); for the operator's code and tests."""
        rows = [r for r in (self.model.row_of(i) for i in ids) if r is not None]
        if rows:
            self._select_rows(rows, rows[0])

    def selected_items(self) -> list[InboxItem]:
        return self.selected_records(self.table)

    def current_item(self) -> InboxItem | None:
        value = self.current_record(self.table)
        return value if isinstance(value, InboxItem) else None

    def select_next(self, step: int) -> None:
        """J/K: the next or previous item becomes current and the only one selected."""
        n = len(self.model.rows)
        if not n:
            return
        row = min(max(self.table.currentIndex().row() + step, 0), n - 1)
        self._select_rows([row], row)

    # --- the detail pane ------------------------------------------------------------------------
    def _selection_changed(self, force: bool = False) -> None:
        items = self.selected_items()
        current = self.current_item()
        self.approve_button.setEnabled(bool(items))
        self.reject_button.setEnabled(bool(items))
        self.edit_button.setEnabled(current is not None)
        self.open_button.setEnabled(current is not None and not current.create)
        if current is not None and (force or current.id != self._detail_id):
            self._show_detail(current)

    def _show_detail(self, item: InboxItem) -> None:
        from curator.engine.facts.door import similar_by_meaning
        from curator.engine.review.inbox import item_view

        self._detail_id = item.id

        def build(wiki: Wiki) -> dict[str, Any]:
            # Shared words first: the fact index may have to be built (~30 s at 32,000 pages),
            # the diff must not wait for it.
            return item_view(wiki, item, refresh=False, meaning=False)

        def show(view: dict[str, Any]) -> None:
            if self._detail_id == item.id:
                self.detail.setHtml(item_html(view))
                self.mark_ready()
                self.host.workspace.read(self.wiki_index,
                                         lambda wiki: similar_by_meaning(wiki, item.content, OPERATOR, build=True),
                                         lambda similar: by_meaning(view, similar))

        def by_meaning(view: dict[str, Any], similar: list[dict[str, Any]] | None) -> None:
            if self._detail_id == item.id and similar is not None:
                self.detail.setHtml(item_html({**view, "similar": similar, "similar_by": "meaning"}))

        def failed(exc: BaseException) -> None:
            if self._detail_id == item.id:
                self.detail.setHtml(render_message(f"Cannot show inbox item {item.id}", str(exc)))
                self.mark_ready()

        self.host.workspace.read(self.wiki_index, build, show, failed)

    def open_current(self) -> None:
        item = self.current_item()
        if item is not None and not item.create:
            self.host.open_page((self.wiki_index, item.target))
            self.host.show_view("page")

    # --- decisions ---------------------------------------------------------------------------------
    def _approving(self, item: InboxItem, content: str | None, fetch: bool) -> Callable[[Wiki], ActionResult]:
        from curator.engine.review.inbox import approve

        def run(wiki: Wiki) -> ActionResult:
            result = approve(wiki, OPERATOR, item.id, content, fetch=fetch)
            # (a duplicate's message says why it closed; a recorded approval, what it waits for)
            if result.ok and result.status not in ("duplicate", "pending"):
                # what the operator decided, in their words: the fact and where it went
                fact = textwrap.shorten(item.content if content is None else content, 80, placeholder="…")
                result.message = f"approved: {fact} → {item.target}"
            return result

        return run

    def approve_selected(self) -> None:
        items = self.selected_items()
        if not items:
            return
        # One fetch of the remote before the first decision is enough for the whole batch.
        self.decide([(f"Approving {i.id} ({i.target})", self._approving(i, None, n == 0))
                     for n, i in enumerate(items)])

    def edit_current(self) -> None:
        item = self.current_item()
        if item is None:
            return
        dialog = EditDialog(item, self)
        if not self.exec_dialog(dialog) or not dialog.value():
            return
        self.decide([(f"Approving {item.id} ({item.target}) as edited", self._approving(item, dialog.value(), True))])

    def reject_selected(self) -> None:
        items = self.selected_items()
        if not items:
            return
        dialog = RejectDialog(items, self)
        if not self.exec_dialog(dialog) or not dialog.value():
            return
        from curator.engine.review.inbox import reject

        reason = dialog.value()

        def action(item: InboxItem, fetch: bool) -> Callable[[Wiki], ActionResult]:
            return lambda wiki: reject(wiki, OPERATOR, item.id, reason, fetch=fetch)

        self.decide([(f"Rejecting {i.id} ({i.target})", action(i, n == 0)) for n, i in enumerate(items)])
