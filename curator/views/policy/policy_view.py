"""The policy panel: the effective ``.scope.toml`` and "what does this agent see".

The preview runs the very function the MCP server and ``curator context`` use
(:func:`curator.engine.read.agent_context.build_context`), so what the operator reads here is, byte for byte,
what the agent's prompt receives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from curator.engine.errors import CuratorError
from curator.engine.policy.actor import Actor, parse_actor
from curator.text import plural
from curator.views.wiki_view import WikiView

if TYPE_CHECKING:
    from curator.engine.read.agent_context import ContextResult
    from curator.engine.read.injections import InjectionRecord
    from curator.engine.wiki import Wiki
    from curator.views.host import ViewHost
    from curator.views.workspace import Snapshot

POLICY_COLUMNS = ("Namespace", "Mode", "Agents", "Synced from", "Visible to departments", "Pages",
                  "Agent sees", "Agent writes", "Review")
DEFAULT_BUDGET = 8000
#: The context text is never narrower than this (it read ~120 px wide beside the form).
MIN_CONTEXT_WIDTH = 320
POLICY_FILE = ".scope.toml"
INJECTION_COLUMNS = ("When (UTC)", "Via", "Bytes", "Budget", "Pages", "Query")
InjectionRole = Qt.ItemDataRole.UserRole + 3


def preview(wiki: Wiki, actor: Actor, budget: int, query: str | None) -> tuple[ContextResult, dict[str, Any],
                                                                             list[str]]:
    """Context, policy summary and hidden pages for ``actor`` (off the GUI thread)."""
    from curator.engine.policy.scope import policy_summary
    from curator.engine.read.agent_context import build_context

    result = build_context(wiki, actor, budget=budget, query=query or None)
    hidden = [path for path in wiki.paths if not wiki.visible(actor, path)]
    return result, policy_summary(wiki, actor), hidden


class PagesTree(QTreeWidget):
    """The preview's pages: Layer and Bytes always whole, Page as wide as its titles in what is
    left, Why the rest. Sized to the titles alone, Page pushed Layer out of the pane ("La")."""

    def fit_columns(self) -> None:
        header = self.header()
        for col in (1, 2):
            self.resizeColumnToContents(col)
            header.resizeSection(col, max(header.sectionSize(col), header.sectionSizeHint(col)))
        room = self.viewport().width() - header.sectionSize(1) - header.sectionSize(2) - header.sectionSizeHint(3)
        header.resizeSection(0, max(min(self.sizeHintForColumn(0), room), header.sectionSizeHint(0)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_columns()


class PolicyView(WikiView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.result: ContextResult | None = None

        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("QLabel { background: #c0392b; color: white; padding: 8px; "
                                  "font-weight: bold; border-radius: 4px; }")
        self.banner.hide()
        self.file_state = QLabel()
        self.table = QTableWidget(0, len(POLICY_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(POLICY_COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

        self.agent = QComboBox()
        self.agent.setEditable(True)
        self.agent.setToolTip("The agent id (as in agent:<id>)")
        self.department = QComboBox()
        self.department.setEditable(True)
        self.department.setToolTip("The agent's department (empty: none)")
        self.query = QLineEdit()
        self.query.setPlaceholderText("optional: rank pages by relevance to this query")
        self.budget = QSpinBox()
        self.budget.setRange(0, 1_000_000)
        self.budget.setSingleStep(1000)
        self.budget.setValue(DEFAULT_BUDGET)
        self.budget.setSuffix(" bytes")
        self.mark_hidden = QCheckBox("Mark pages hidden from this agent in the browser")
        self.mark_hidden.setChecked(True)
        self.run_button = QPushButton("Show what this agent sees")
        self.run_button.setDefault(True)
        # Two columns of fields across the whole width: in one narrow column beside the context
        # text, the form's width left the context ~120 px
        form = QGridLayout()
        form.addWidget(QLabel("Agent"), 0, 0)
        form.addWidget(self.agent, 0, 1)
        form.addWidget(QLabel("Department"), 0, 2)
        form.addWidget(self.department, 0, 3)
        form.addWidget(QLabel("Query"), 1, 0)
        form.addWidget(self.query, 1, 1)
        form.addWidget(QLabel("Budget"), 1, 2)
        form.addWidget(self.budget, 1, 3)
        form.addWidget(self.mark_hidden, 2, 0, 1, 2)
        form.addWidget(self.run_button, 2, 2, 1, 2)
        form.setColumnStretch(1, 2)
        form.setColumnStretch(3, 1)
        agent_box = QGroupBox("What does this agent see?")
        agent_box.setLayout(form)

        self.budget_bar = QProgressBar()
        self.budget_bar.setFormat("%v of %m bytes")
        self.pages = PagesTree()
        self.pages.setHeaderLabels(["Page", "Layer", "Bytes", "Why"])
        self.pages.setRootIsDecorated(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(mono)
        self.text.setPlaceholderText("The injected context appears here.")

        upper = QWidget()
        up = QVBoxLayout(upper)
        up.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.wiki_choice)
        head.addWidget(self.file_state, 1)
        up.addLayout(head)
        up.addWidget(self.banner)
        up.addWidget(self.table)
        lower = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.budget_bar)
        ll.addWidget(self.pages, 1)
        self.injections = QTableWidget(0, len(INJECTION_COLUMNS))
        self.injections.setHorizontalHeaderLabels(list(INJECTION_COLUMNS))
        self.injections.verticalHeader().hide()
        self.injections.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.injections.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.injections.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.injections.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.injections.horizontalHeader().setStretchLastSection(True)
        self.injection_state = QLabel("Every context built for this agent (MCP wiki_context, curator "
                                      "context), newest first.")
        self.injection_state.setWordWrap(True)
        self.sent_button = QPushButton("Show as sent")
        self.sent_button.setToolTip("The context exactly as it was sent, rebuilt from the recorded blobs")
        self.diff_button = QPushButton("Diff against today")
        self.diff_button.setToolTip("What changed between the context as sent and what this agent gets today")
        for b in (self.sent_button, self.diff_button):
            b.setEnabled(False)
        self.sent_text = QPlainTextEdit()
        self.sent_text.setReadOnly(True)
        self.sent_text.setFont(mono)
        self.sent_text.setPlaceholderText("Pick an injection, then Show as sent or Diff against today.")
        from curator.views.history.history_view import DiffHighlighter

        self._sent_highlighter = DiffHighlighter(self.sent_text.document())
        inj = QWidget()
        il = QVBoxLayout(inj)
        il.setContentsMargins(0, 0, 0, 0)
        il.addWidget(self.injection_state)
        il.addWidget(self.injections, 2)
        row = QHBoxLayout()
        row.addWidget(self.sent_button)
        row.addWidget(self.diff_button)
        row.addStretch(1)
        il.addLayout(row)
        il.addWidget(self.sent_text, 3)
        self.sent_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.right_tabs = QTabWidget()
        self.right_tabs.addTab(self.text, "Context now")
        self.right_tabs.addTab(inj, "Injections")
        lower.addWidget(left)
        lower.addWidget(self.right_tabs)
        # near halves, the context a little wider: at 1400 px a third left the pages' titles
        # three letters once Layer and Bytes were shown whole
        lower.setSizes([410, 450])
        lower.setStretchFactor(0, 1)
        lower.setStretchFactor(1, 1)
        lower.setCollapsible(1, False)
        self.right_tabs.setMinimumWidth(MIN_CONTEXT_WIDTH)
        self.agent_split = lower
        agent = QWidget()
        al = QVBoxLayout(agent)
        al.setContentsMargins(0, 0, 0, 0)
        al.addWidget(agent_box)
        al.addWidget(lower, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        split.addWidget(agent)
        split.setSizes([260, 520])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)

        self.run_button.clicked.connect(self.run_preview)
        self.sent_button.clicked.connect(lambda: self.show_injection(diff=False))
        self.diff_button.clicked.connect(lambda: self.show_injection(diff=True))
        self.injections.itemSelectionChanged.connect(self._injection_selected)
        self.query.returnPressed.connect(self.run_preview)
        self.mark_hidden.toggled.connect(self._mark_toggled)
        self.wiki_choice.currentIndexChanged.connect(lambda _i: self.reload())
        host.workspace.background_started.connect(self.reload)  # after the window is usable
        # The summary and the agents offered depend on the policy file and on which pages exist
        # (counts per namespace, department folders), not on what the pages say.
        host.workspace.pages_changed.connect(self._pages_changed)
        host.workspace.action_done.connect(self._action_done)
        self._hidden: set[tuple[int, str]] = set()

    # --- policy -----------------------------------------------------------------------
    def _pages_changed(self, snapshot: Snapshot) -> None:
        index = self.wiki_index
        if any(i == index for i, _p in [*snapshot.added, *snapshot.removed]):
            self.reload()

    def _action_done(self, index: int, result: Any) -> None:
        if index == self.wiki_index and POLICY_FILE in result.changed:
            self.reload()

    def reload(self) -> None:
        from curator.engine.policy.scope import policy_summary

        index = self.wiki_index
        self.host.workspace.read(index, lambda wiki: (policy_summary(wiki), _known_agents(wiki)),
                                    self._show_policy, off_screen=not self.isVisible())

    def _show_policy(self, result: tuple[dict[str, Any], tuple[list[str], list[str]]]) -> None:
        summary, (agents, departments) = result
        self._fill_policy(summary)
        for combo, items in ((self.agent, agents), (self.department, ["", *departments])):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(items)
            combo.setCurrentText(current or (items[0] if items else ""))
            combo.blockSignals(False)
        if self.result is None:
            if agents:
                self.run_preview()  # show the first known agent's view right away
            else:
                self.mark_ready()

    def _fill_policy(self, summary: dict[str, Any]) -> None:
        error = summary.get("error")
        if error:
            self.banner.setText(f"{summary.get('file', '.scope.toml')} does not parse, so NO policy is in "
                                f"force for this wiki: {error}")
        self.banner.setVisible(bool(error))
        warnings = summary.get("warnings") or []
        state = ("no .scope.toml: every namespace is agent_writable" if not summary.get("exists")
                 else ".scope.toml in force" if summary.get("in_force") else ".scope.toml NOT in force")
        review = summary.get("review") or {}
        held = (["new pages"] if review.get("create") else []) + [f"{x} pages" for x in review.get("layers") or []]
        held += [f"{r.get('namespace') or '(root)'}/" for r in summary.get("namespaces", []) if r.get("review")]
        state += (" — the Inbox holds agent writes to " + ", ".join(held) if held
                  else " — no agent write is held for review")
        if warnings:
            state += " — warnings: " + "; ".join(warnings)
        self.file_state.setText(state)
        rows = summary.get("namespaces", [])
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            visible = row.get("visible_to_departments")
            values = [
                row.get("namespace") or "(root)",
                row.get("mode", ""),
                ", ".join(row.get("agents") or []) if row.get("mode") == "agent_allowlist" else "",
                row.get("synced_from") or "",
                "everyone" if visible is None else (", ".join(visible) or "nobody"),
                str(row.get("pages", "")),
                str(row.get("visible_pages", "")) if "visible_pages" in row else "",
                ("yes" if row.get("can_write") else "no") if "can_write" in row else "",
                "every agent write held" if row.get("review") else "",
            ]
            if row.get("builtin"):
                values[4] = "its own department only"
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                if not row.get("configured") and c == 1:
                    item.setToolTip("not listed in .scope.toml: the default")
                self.table.setItem(r, c, item)

    # --- preview ----------------------------------------------------------------------
    def actor(self) -> Actor:
        agent = self.agent.currentText().strip()
        if not agent:
            raise CuratorError("enter an agent id to preview")
        return parse_actor(f"agent:{agent}", self.department.currentText().strip() or None)

    def run_preview(self) -> None:
        try:
            actor = self.actor()
        except CuratorError as exc:
            self.host.show_error(str(exc))
            return
        budget, query = self.budget.value(), self.query.text().strip()
        index = self.wiki_index
        self._ready = False
        self.host.workspace.read(index, lambda wiki: preview(wiki, actor, budget, query),
                                    lambda res: self._show_preview(index, res))
        self.load_injections(str(actor))

    # --- injections (docs/design.md §14) ------------------------------------------------------------
    def load_injections(self, agent: str) -> None:
        from curator.engine.policy.actor import OPERATOR
        from curator.engine.read.injections import read_records

        self.host.workspace.read(self.wiki_index,
                                    lambda wiki: read_records(wiki, OPERATOR, agent=agent),
                                    lambda recs: self._show_injections(agent, recs))

    def _show_injections(self, agent: str, records: list[InjectionRecord]) -> None:
        records = list(reversed(records))  # newest first
        self.injections.setRowCount(len(records))
        for r, rec in enumerate(records):
            d = rec.data
            pages = ", ".join(str(p.get("title") or p.get("path")) for p in rec.pages)
            values = (str(d.get("t", "")).replace("T", " ").removesuffix("Z")[:19], str(d.get("source", "")),
                      str(d.get("bytes", "")), str(d.get("budget", "")), f"{len(rec.pages)}: {pages}",
                      str(d.get("query") or ""))
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(InjectionRole, rec)
                self.injections.setItem(r, c, item)
        self.injection_state.setText(
            f"{plural(len(records), 'context')} built for {agent} (MCP wiki_context, curator context), newest first."
            if records else f"No context has been recorded for {agent} yet.")
        if records:
            self.injections.selectRow(0)
        self._injection_selected()

    def selected_injection(self) -> InjectionRecord | None:
        items = self.injections.selectedItems()
        return items[0].data(InjectionRole) if items else None

    def _injection_selected(self) -> None:
        on = self.selected_injection() is not None
        self.sent_button.setEnabled(on)
        self.diff_button.setEnabled(on)

    def show_injection(self, *, diff: bool) -> None:
        from curator.engine.read.injections import diff_today, rebuild

        rec = self.selected_injection()
        if rec is None:
            return

        def work(wiki: Wiki) -> str:
            if diff:
                return diff_today(wiki, rec) or "No difference: today's context is the same text."
            built = rebuild(wiki, rec)
            if built.missing:
                return ("Cannot rebuild exactly: the blobs of " + ", ".join(built.missing)
                        + " are no longer in the repository.\n\n" + built.text)
            return built.text

        self.right_tabs.setCurrentIndex(1)
        self.host.workspace.read(self.wiki_index, work, self.sent_text.setPlainText)

    def _show_preview(self, index: int, res: tuple[ContextResult, dict[str, Any], list[str]]) -> None:
        result, summary, hidden = res
        self.result = result
        self._fill_policy(summary)
        self.text.setPlainText(result.text)
        self.budget_bar.setRange(0, max(result.budget, 1))
        self.budget_bar.setValue(min(result.bytes, result.budget))
        self.pages.clear()
        inc = QTreeWidgetItem([f"Included ({len(result.included)})"])
        for p in result.included:
            inc.addChild(QTreeWidgetItem([p.title, p.layer, str(p.bytes), p.path]))
        skip = QTreeWidgetItem([f"Skipped ({len(result.skipped)})"])
        for p in result.skipped:
            skip.addChild(QTreeWidgetItem([p.title, p.layer, str(p.bytes), p.reason]))
        hid = QTreeWidgetItem([f"Hidden from this agent ({len(hidden)})"])
        for path in hidden[:500]:
            hid.addChild(QTreeWidgetItem([path, "", "", "scope policy"]))
        for top in (inc, skip, hid):
            self.pages.addTopLevelItem(top)
        inc.setExpanded(True)
        skip.setExpanded(True)
        self.pages.fit_columns()
        self._hidden = {(index, p) for p in hidden}
        if self.isVisible():  # marks show only while the operator is looking at the preview
            self._mark_toggled(self.mark_hidden.isChecked())
        self.mark_ready()

    def _mark_toggled(self, on: bool) -> None:
        self.host.mark_hidden(self._hidden if on else set())

    def hideEvent(self, event: Any) -> None:
        # the marks belong to the preview: leaving the panel turns them off
        self.host.mark_hidden(set())
        super().hideEvent(event)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._mark_toggled(self.mark_hidden.isChecked())


def _known_agents(wiki: Wiki) -> tuple[list[str], list[str]]:
    """Agent ids and departments to offer: the home's agents and the wiki's department folders."""
    from curator.engine.corpus.home import home_of

    home = home_of(wiki.root)
    agents: list[str] = home.agents() if home is not None else []
    departments = sorted({p.split("/")[1] for p in wiki.paths if p.startswith("departments/")
                          and p.count("/") >= 2})
    policy_agents: set[str] = set()
    for row in wiki.scope.summary().get("namespaces", []):
        policy_agents.update(row.get("agents") or [])
        departments = sorted(set(departments) | set(row.get("visible_to_departments") or []))
    return sorted(set(agents) | policy_agents), departments
