"""Facts by meaning (issue 41, docs/design.md §15): three queues of one wiki's facts, each a tab.

- **Similar**: groups of facts that say the same thing
  (:func:`~curator.engine.facts.similar.find_similar`). The operator keeps one wording (every other
  fact of the group leaves its page, one commit), keeps them all (a sticky decision: the group is
  not listed again), or opens a fact's page at its line.
- **Conflicts**: pairs of facts that disagree, with the reason
  (:func:`~curator.engine.facts.conflict_queue.fact_conflicts`): keep 1, keep 2, or both are true.
  When the operator configured a judge (:func:`~curator.engine.facts.judge.load_judge`), it may be
  asked about the best candidates; its verdicts are shown, never applied.
- **Stale**: facts and pages due for a look (:func:`~curator.engine.facts.stale.stale_facts`):
  verify, or retire with a reason.

The three lists are computed together off the GUI thread (building the fact index takes seconds
on a large wiki); every decision is one engine action in the wiki's writer queue.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.facts import Fact
from curator.engine.corpus.lookalike import escape_controls
from curator.engine.facts.conflicts import Conflict
from curator.engine.facts.judge import DEFAULT_TOP, JUDGE_SETTINGS, ChatJudge, judge_conflicts, load_judge
from curator.engine.facts.similar import SimilarGroup
from curator.engine.facts.stale import StaleFact
from curator.engine.policy.actor import OPERATOR
from curator.models.facts import (
    COL_CONFLICT_FACTS,
    COL_CONFLICT_PAGES,
    COL_CONFLICT_REASON,
    COL_FACT_TEXT,
    COL_GROUP_TEXT,
    COL_STALE_PAGE,
    COL_STALE_TEXT,
    COL_STALE_WHY,
    ConflictModel,
    GroupFactModel,
    SimilarGroupModel,
    StaleModel,
    verdict_text,
)
from curator.text import plural
from curator.views.review import FACT_QUEUES
from curator.views.review.base import ReviewView, record_table
from curator.views.widgets import ReasonDialog

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.views.host import ViewHost

QUEUES = FACT_QUEUES  # (tab order)


@dataclass(slots=True)
class FactQueues:
    similar: list[SimilarGroup] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    stale: list[StaleFact] = field(default_factory=list)


def fact_queues(wiki: Wiki, progress: Callable[[int, int], None] | None = None) -> FactQueues:
    """The three queues of ``wiki``, for the operator (off the GUI thread: the fact index, whose
    first build tells ``progress(done, total)`` the pages read so far)."""
    from curator.engine.facts.conflict_queue import fact_conflicts
    from curator.engine.facts.index import fact_index_for
    from curator.engine.facts.similar import find_similar
    from curator.engine.facts.stale import stale_facts

    fact_index_for(wiki, progress=progress)

    return FactQueues(find_similar(wiki, OPERATOR), fact_conflicts(wiki, OPERATOR), stale_facts(wiki, OPERATOR))


class RetireDialog(ReasonDialog):
    """Retire a stale fact: the reason goes into the commit message."""

    def __init__(self, entry: StaleFact, parent: QWidget | None = None) -> None:
        super().__init__("Retire", f"Retire “{html.escape(escape_controls(entry.text))}” from "
                         f"{html.escape(escape_controls(entry.path))}? The reason is kept in the commit.",
                         "Retire", parent)


def _columns(table: QTableView, stretch: tuple[int, ...], wide: tuple[int, ...] = ()) -> None:
    """The texts the operator decides on (``stretch``) share the width; a long explanation
    (``wide``) starts at a fixed width the operator may drag, so it never squeezes them out."""
    header = table.horizontalHeader()
    for col in range(table.model().columnCount()):
        mode = (QHeaderView.ResizeMode.Stretch if col in stretch else QHeaderView.ResizeMode.Interactive
                if col in wide else QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(col, mode)
        if col in wide:
            header.resizeSection(col, 160)


def _detail() -> QLabel:
    """The selected item in full under its table (a table cell cuts a long fact short)."""
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setMinimumHeight(72)
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    label.setStyleSheet("QLabel { padding: 6px; }")
    return label


def _lines(*lines: str) -> str:
    """Lines of a detail pane, each with its control characters escaped (not the breaks between)."""
    return "\n".join(escape_controls(line) for line in lines)


def _button(text: str, tip: str, slot: Callable[[], None]) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    button.clicked.connect(slot)
    return button


class FactsView(ReviewView):
    #: (done, total) pages read by a build of the fact index, from the thread building it
    embedding = Signal(int, int)

    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.embedding.connect(self._show_embedding)
        self.queues = FactQueues()
        self.count = QLabel("Reading the facts…")
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(self.count, 1)
        self.tabs = QTabWidget()

        # --- similar: the groups over the selected group's facts
        self.group_model = SimilarGroupModel()
        self.groups = record_table(self.group_model)
        _columns(self.groups, (COL_GROUP_TEXT,))
        self.groups.selectionModel().currentRowChanged.connect(lambda *_a: self._show_group())
        self.fact_model = GroupFactModel()
        self.facts = record_table(self.fact_model)
        _columns(self.facts, (COL_FACT_TEXT,))
        self.facts.selectionModel().currentRowChanged.connect(lambda *_a: self._update_buttons())
        self.facts.doubleClicked.connect(lambda _i: self.open_fact())
        self.keep_wording_button = _button("Keep this wording", "Keep the selected fact; the group's other facts "
                                           "leave their pages, in one commit", self.keep_wording)
        self.keep_all_button = _button("Keep all", "Every wording stays; this group is not listed again",
                                       self.keep_all)
        self.open_button = _button("Open page", "Show the selected fact's page at its line", self.open_fact)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.groups)
        split.addWidget(self.facts)
        self.tabs.addTab(self._tab([self.keep_wording_button, self.keep_all_button, self.open_button], split),
                         "Similar")

        # --- conflicts
        self.conflict_model = ConflictModel()
        self.conflicts = record_table(self.conflict_model)
        # (the judge's column holds one word, its why in the tooltip and the detail pane: the facts
        # keep their width)
        _columns(self.conflicts, COL_CONFLICT_FACTS, (COL_CONFLICT_REASON, *COL_CONFLICT_PAGES))
        self.conflicts.selectionModel().currentRowChanged.connect(lambda *_a: self._update_buttons())
        self.keep1_button = _button("Keep 1", "Fact 1 is true: fact 2 leaves its page", lambda: self.resolve("1"))
        self.keep2_button = _button("Keep 2", "Fact 2 is true: fact 1 leaves its page", lambda: self.resolve("2"))
        self.both_button = _button("Both are true", "Keep both; this pair is not listed again",
                                   lambda: self.resolve("both"))
        self.judge_button = _button("Ask the judge", "", self.ask_judge)
        #: The judge's verdicts of this session by conflict id: kept over a reload, never applied.
        self.verdicts: dict[str, dict[str, str]] = {}
        self._judge: ChatJudge | None = None
        self._asking = False
        self.conflict_detail = _detail()
        self.tabs.addTab(self._tab([self.keep1_button, self.keep2_button, self.both_button, self.judge_button],
                                   self.conflicts, self.conflict_detail), "Conflicts")

        # --- stale
        self.stale_model = StaleModel()
        self.stale = record_table(self.stale_model)
        _columns(self.stale, (COL_STALE_TEXT,), (COL_STALE_PAGE, COL_STALE_WHY))
        self.stale.selectionModel().currentRowChanged.connect(lambda *_a: self._update_buttons())
        self.stale.doubleClicked.connect(lambda _i: self.open_stale())
        self.verify_button = _button("Verify", "Still true: stamp it verified today", self.verify)
        self.retire_button = _button("Retire…", "No longer true: remove it, with a reason", self.retire)
        self.stale_detail = _detail()
        self.tabs.addTab(self._tab([self.verify_button, self.retire_button], self.stale, self.stale_detail),
                         "Stale")

        self.tabs.currentChanged.connect(lambda _i: self._update_buttons())
        # the settings file may be written while the station runs: read again when the tab is shown
        self.tabs.currentChanged.connect(lambda _i: self._read_judge())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs, 1)
        self._update_buttons()

    @staticmethod
    def _tab(buttons: list[QPushButton], body: QWidget, detail: QLabel | None = None) -> QWidget:
        page = QWidget()
        row = QHBoxLayout()
        for button in buttons:
            row.addWidget(button)
        row.addStretch(1)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(2, 4, 2, 2)
        layout.addLayout(row)
        layout.addWidget(body, 1)
        if detail is not None:
            layout.addWidget(detail)
        return page

    # --- which queue ----------------------------------------------------------------------------
    @property
    def queue(self) -> str:
        return QUEUES[self.tabs.currentIndex()]

    def set_queue(self, name: str) -> None:
        """Show the queue ``name`` (similar, conflicts or stale)."""
        if name in QUEUES:
            self.tabs.setCurrentIndex(QUEUES.index(name))

    # --- content --------------------------------------------------------------------------------
    def wiki_changed(self) -> None:
        self.queues = FactQueues()
        self.verdicts = {}
        self._fill()
        self.count.setText("Reading the facts…")

    def compute(self, wiki: Wiki) -> FactQueues:
        return fact_queues(wiki, self.embedding.emit)

    def _show_embedding(self, done: int, total: int) -> None:
        if done < total:  # (the queues are being found once every page is read)
            self.count.setText(f"Reading the facts: {done:,} of {plural(total, 'page')} "
                               f"(a first time on a big wiki: half a minute)…")
        else:
            self.count.setText("Reading the facts: finding similar and conflicting ones…")

    def show_content(self, result: Any) -> None:
        self.queues = result
        self._fill()
        self.mark_ready()

    def _fill(self) -> None:
        q = self.queues
        q.conflicts = [dataclasses.replace(c, verdict=self.verdicts[c.id]) if c.id in self.verdicts else c
                       for c in q.conflicts]
        self._read_judge()
        keep = self._current_group_id()
        self.group_model.set_records(q.similar)
        rows = [n for n, g in enumerate(q.similar) if g.id == keep]
        if q.similar:
            self.groups.setCurrentIndex(self.group_model.index(rows[0] if rows else 0, 0))
        self._show_group()
        self.stale_model.set_records(q.stale)
        if q.stale:
            self.stale.setCurrentIndex(self.stale_model.index(0, 0))
        for n, (what, size) in enumerate((("Similar", len(q.similar)), ("Conflicts", len(q.conflicts)),
                                          ("Stale", len(q.stale)))):
            self.tabs.setTabText(n, f"{what} ({size:,})")
        self._show_conflicts(q.conflicts)
        self.count.setText(", ".join((plural(len(q.similar), "group of similar facts", "groups of similar facts"),
                                      plural(len(q.conflicts), "conflict"),
                                      plural(len(q.stale), "stale fact"))))
        self._update_buttons()

    def _current_group_id(self) -> str | None:
        group = self.current_record(self.groups)
        return group.id if isinstance(group, SimilarGroup) else None

    def _show_group(self) -> None:
        group = self.current_record(self.groups)
        self.fact_model.set_records(list(group.facts) if isinstance(group, SimilarGroup) else [])
        if self.fact_model.records:
            self.facts.setCurrentIndex(self.fact_model.index(0, 0))
        self._update_buttons()

    def _update_buttons(self) -> None:
        has_fact = self.current_record(self.facts) is not None
        self.keep_wording_button.setEnabled(has_fact)
        self.open_button.setEnabled(has_fact)
        self.keep_all_button.setEnabled(self.current_record(self.groups) is not None)
        has_conflict = self.current_record(self.conflicts) is not None
        for button in (self.keep1_button, self.keep2_button, self.both_button):
            button.setEnabled(has_conflict)
        self.judge_button.setEnabled(self._judge is not None and bool(self.conflict_model.records)
                                     and not self._asking)
        conflict = self.current_record(self.conflicts)
        judged = ([f"Judge ({conflict.verdict['model']}, not applied): {verdict_text(conflict)}"]
                  if isinstance(conflict, Conflict) and conflict.verdict else [])
        self.conflict_detail.setText(_lines(
            f"Why they disagree: {conflict.reason}", f"1. {conflict.a.text}   ({conflict.a.path}:{conflict.a.line})",
            f"2. {conflict.b.text}   ({conflict.b.path}:{conflict.b.line})", *judged)
            if isinstance(conflict, Conflict) else "")
        entry = self.current_record(self.stale)
        self.stale_detail.setText(_lines(f"{entry.text}   ({entry.path}:{entry.line})",
                                         f"Due {entry.due.isoformat()}: {entry.why}")
                                  if isinstance(entry, StaleFact) else "")
        has_stale = self.current_record(self.stale) is not None
        self.verify_button.setEnabled(has_stale)
        self.retire_button.setEnabled(has_stale)

    def _show_conflicts(self, conflicts: list[Conflict]) -> None:
        keep = self.current_record(self.conflicts)
        self.conflict_model.set_records(conflicts)
        rows = [n for n, c in enumerate(conflicts) if isinstance(keep, Conflict) and c.id == keep.id]
        if conflicts:
            self.conflicts.setCurrentIndex(self.conflict_model.index(rows[0] if rows else 0, 0))

    # --- the judge ------------------------------------------------------------------------------
    def _read_judge(self) -> None:
        """Whether a judge is configured for the shown wiki (a small local file, read on the GUI
        thread); the button's tooltip says how to configure one, or what is wrong with it."""
        from curator.engine.errors import CuratorError

        try:
            state_dir = self.host.workspace.wiki(self.wiki_index).state_dir
        except (RuntimeError, IndexError):
            return  # (still loading: read again once the queues are shown)
        try:
            self._judge = load_judge(state_dir)
        except CuratorError as exc:
            self._judge = None
            self.judge_button.setToolTip(f"The judge is not usable: {exc}")
        else:
            self.judge_button.setToolTip(
                f"Ask {self._judge.model} whether the {DEFAULT_TOP} best candidates really disagree; "
                "its verdicts are shown, never applied" if self._judge is not None else
                f"No judge is configured: create {state_dir / JUDGE_SETTINGS} with "
                '{"url": "http://127.0.0.1:8000/v1", "model": "...", "api_key": "..."} (api_key optional)')
        self._update_buttons()

    def ask_judge(self) -> None:
        """Ask the judge about the best candidates off the GUI thread; show its verdicts."""
        judge, conflicts, index = self._judge, list(self.conflict_model.records), self.wiki_index
        if judge is None or not conflicts or self._asking:
            return
        self._asking = True
        self._update_buttons()
        self.banner.show_result(f"Asking {judge.model} about {min(DEFAULT_TOP, len(conflicts))} conflict(s)…", ok=True)

        def done(judged: list[Conflict]) -> None:
            self._asking = False
            if index != self.wiki_index:
                self._update_buttons()
                return
            answers = [c.verdict for c in judged if c.verdict is not None]
            self.verdicts.update({c.id: c.verdict for c in judged if c.verdict is not None})
            self.queues.conflicts = [dataclasses.replace(c, verdict=self.verdicts.get(c.id, c.verdict))
                                     for c in self.queues.conflicts]
            self._show_conflicts(self.queues.conflicts)
            said = ", ".join(f"{sum(a['verdict'] == v for a in answers)} {v}"
                             for v in ("confirm", "dismiss", "unclear"))
            self.banner.show_result(f"The judge ({judge.model}) answered on {len(answers)} conflict(s): {said}. "
                                    "Nothing was changed: decide each one yourself.", ok=True)
            self._update_buttons()

        def failed(exc: BaseException) -> None:
            self._asking = False
            self.banner.show_result(f"The judge could not answer: {exc}", ok=False)
            self._update_buttons()

        self.host.workspace.read(index, lambda _wiki: judge_conflicts(judge, conflicts), done, failed)

    # --- decisions ------------------------------------------------------------------------------
    def keep_wording(self) -> None:
        group, fact = self.current_record(self.groups), self.current_record(self.facts)
        if not isinstance(group, SimilarGroup) or not isinstance(fact, Fact):
            return
        from curator.engine.facts.decisions import keep_wording

        self.decide([(f"Keeping one wording of {group.id}",
                      lambda wiki: keep_wording(wiki, OPERATOR, group, fact.key))])

    def keep_all(self) -> None:
        group = self.current_record(self.groups)
        if not isinstance(group, SimilarGroup):
            return
        from curator.engine.facts.decisions import keep_all

        self.decide([(f"Keeping every wording of {group.id}", lambda wiki: keep_all(wiki, OPERATOR, group))])

    def open_fact(self) -> None:
        fact = self.current_record(self.facts)
        if isinstance(fact, Fact):
            self.host.open_page_at_line((self.wiki_index, fact.path), fact.line)

    def resolve(self, keep: str) -> None:
        conflict = self.current_record(self.conflicts)
        if not isinstance(conflict, Conflict):
            return
        from curator.engine.facts.decisions import resolve

        self.decide([(f"Resolving {conflict.id}", lambda wiki: resolve(wiki, OPERATOR, conflict, keep))])

    def verify(self) -> None:
        entry = self.current_record(self.stale)
        if not isinstance(entry, StaleFact):
            return
        from curator.engine.facts.stale import verify

        self.decide([(f"Verifying {entry.id}", lambda wiki: verify(wiki, OPERATOR, entry.id))])

    def retire(self) -> None:
        entry = self.current_record(self.stale)
        if not isinstance(entry, StaleFact):
            return
        dialog = RetireDialog(entry, self)
        if not self.exec_dialog(dialog) or not dialog.value():
            return
        from curator.engine.facts.stale import retire

        reason = dialog.value()
        self.decide([(f"Retiring {entry.id}", lambda wiki: retire(wiki, OPERATOR, entry.id, reason))])

    def open_stale(self) -> None:
        entry = self.current_record(self.stale)
        if isinstance(entry, StaleFact):
            self.host.open_page_at_line((self.wiki_index, entry.path), entry.line)
