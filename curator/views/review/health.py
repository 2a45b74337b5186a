"""Health: the station's landing view (docs/design.md §12). One figure per kind of problem, each a button
that opens the queue of those items (Links, Duplicates, Lint ▸ kind, Auto-filed, Inbox, History).

The figures come from :func:`curator.engine.review.health.health`, computed off the GUI thread in steps
so that a large wiki's landing view is never blank: the cheap figures first (``figures_ready``),
then lint's (orphans, problems by kind: every link resolved and every page checked;
``lint_ready``) and the duplicate count (``duplicates_ready``; ``content_ready`` once both are),
started in the background as soon as the wiki opens, alongside lint's: it is counted by the wiki's
dedup worker process (:mod:`curator.engine.dedup.worker`: no scan ever runs in the station's own
process), from the result the last full dedup scan kept for these pages
(:mod:`curator.engine.dedup.cache`), in a moment, and only after a change to the pages from a
full scan. The dedup index's every-page build (what follows later changes page by page) is not
started here: the Duplicates view starts it once its queue is shown. A figure still being counted
says so ("counting…") below its number: "…" when nothing is known yet, or, for the duplicate
families after a change, the count the last full scan kept for the pages as they were
(:func:`~curator.engine.review.health.saved_duplicate_figure`, read with the first figures), until
the count for the pages as they are replaces it.
"""

from __future__ import annotations

import dataclasses
import html
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from curator.engine.policy.actor import OPERATOR
from curator.engine.review.health import (
    Figure,
    Health,
    add_lint,
    duplicate_figure,
    fact_figures,
    health,
    saved_duplicate_figure,
    uncounted_fact_figures,
)
from curator.text import plural
from curator.views.plain_tips import set_tip
from curator.views.review.base import ReviewView
from curator.views.workspace import BACKGROUND_NICENESS

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.views.host import ViewHost

COLUMNS = 3
COUNTING = "counting…"
NOT_COUNTED = "not counted"
_COLOURS = {"error": "#922b21", "warning": "#9a6700", "info": "#1f3a5f"}


class FigureButton(QPushButton):
    """A figure: its number large, its label below; clicking opens its queue."""

    def __init__(self, figure: Figure) -> None:
        super().__init__()
        self.figure = figure
        self.setMinimumHeight(74)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.number = QLabel()
        self.label = QLabel()
        self.label.setWordWrap(True)
        inner = QVBoxLayout(self)
        inner.setContentsMargins(12, 6, 12, 6)
        inner.setSpacing(0)
        for part in (self.number, self.label):
            part.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            inner.addWidget(part)
        self.setStyleSheet("QPushButton { border: 1px solid #c8ccd0; border-radius: 4px; background: #fbfbfc; }"
                           "QPushButton:hover { background: #eef3f8; }")
        self.label.setStyleSheet("color: #333; font-size: 12px; background: transparent;")
        self._colour = ""  # the number's, as styled last (a style sheet set again re-polishes it)
        self.show_figure(figure)

    def text(self) -> str:
        return f"{self.number.text()}\n{self.label.text()}"

    def show_figure(self, figure: Figure, note: str = "") -> None:
        """Show ``figure``; ``note`` follows its label: ``COUNTING`` while its current count is made
        (the number shown, if any, is then the count saved for an earlier state of the pages), or
        ``NOT_COUNTED``."""
        self.figure = figure
        value = "…" if figure.value is None else f"{figure.value:,}"
        colour = _COLOURS["info"] if not figure.value else _COLOURS.get(figure.severity, _COLOURS["info"])
        self.number.setText(value)
        if colour != self._colour:
            self._colour = colour
            self.number.setStyleSheet(f"color: {colour}; font-size: 22px; font-weight: 600; background: transparent;")
        self.label.setText(f"{figure.label}: {note}" if note else figure.label)
        where = {"links": "the Links view", "dedup": "the Duplicates view", "auto": "the Auto-filed view",
                 "inbox": "the Inbox", "history": "History", "page": "the page browser"}.get(figure.queue)
        if figure.queue.startswith("facts:"):
            where = f"the Facts view ({figure.queue[6:]})"
        if figure.queue.startswith("lint:"):
            kind = figure.queue[5:]
            where = f"the Lint queue ({kind or 'every kind'})"
        tip = f"Open {where}" if where else figure.label
        if figure.command:
            tip += f" (on the command line: {figure.command})"
        if note == COUNTING and figure.value is not None:
            tip += ". The number is the last count saved, for the pages as they were: counting them as they are now"
        set_tip(self, tip)


class HealthView(ReviewView):
    #: The first figures are on screen: pages, unresolved links, inbox, auto-filed, agent writes
    figures_ready = Signal()
    #: ... then lint's (orphans, problems by kind)
    lint_ready = Signal()
    #: ... and, counted alongside lint, the duplicate families (then ``content_ready`` once both are)
    duplicates_ready = Signal()
    #: The three fact queues are counted (their own row: the fact index takes seconds to build)
    facts_ready = Signal()
    #: Count duplicates alongside lint, in the background as soon as the wiki opens, whatever its
    #: size: the dedup index answers from the result its last full scan kept for these pages
    #: (:mod:`curator.engine.dedup.cache`), which the Duplicates view shares. (A benchmark of the
    #: other figures alone turns it off.)
    count_duplicates = True

    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.report: Health | None = None
        #: the duplicate figure counted for ``report`` (apart from it while lint still fills it in
        #: on a worker thread), and which of the two counts are still running
        self.duplicates: Figure | None = None
        self._counting: set[str] = set()
        self._generation = 0  # one per reload: a count for older figures is dropped
        self._lint_running = False
        self._failed: set[str] = set()  # the figures that could not be counted (this reload)
        self.buttons: dict[str, FigureButton] = {}
        self.title = QLabel("<h2>Health</h2>")
        self.summary = QLabel("Counting…")
        self.summary.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.wiki_choice)
        top.addStretch(1)
        self.grid_holder = QWidget()
        self.grid = QGridLayout(self.grid_holder)
        self.grid.setSpacing(8)
        self.grid.setAlignment(Qt.AlignmentFlag.AlignTop)
        # the fact queues' own row: counted apart (building the fact index takes seconds), so
        # the figures above never wait for them nor are laid out again when they arrive
        self.facts_title = QLabel("<b>Facts by meaning</b>")
        self.facts_row = QHBoxLayout()
        self.fact_buttons: dict[str, FigureButton] = {}
        for figure in uncounted_fact_figures():
            button = FigureButton(figure)
            button.clicked.connect(lambda _c=False, b=button: self.open_queue(b.figure.queue))
            self.fact_buttons[figure.key] = button
            self.facts_row.addWidget(button, 1)
        self._show_facts_counting()
        holder = QWidget()
        outer = QVBoxLayout(holder)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.grid_holder)
        outer.addWidget(self.facts_title)
        outer.addLayout(self.facts_row)
        outer.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(holder)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.banner)
        layout.addWidget(scroll, 1)
        self._prestarted: set[int] = set()
        host.workspace.progress.connect(lambda _done, _total, _what: self._prestart_duplicates())

    def _prestart_duplicates(self) -> None:
        """Start the shown wiki's dedup worker process while the station still loads (off the GUI
        thread): its start-up is over by the time the duplicate count asks it."""
        index = self.wiki_index
        handles = self.host.workspace.handles
        if not self.count_duplicates or index in self._prestarted or index >= len(handles) \
                or handles[index].wiki is None:
            return
        from curator.engine.dedup.worker import worker_for

        self._prestarted.add(index)
        self.host.workspace.read(index, lambda wiki: worker_for(wiki, BACKGROUND_NICENESS).start(),
                                 lambda _none: None, lambda _exc: None)

    def compute(self, wiki: Wiki) -> Health:
        """The first figures, with the duplicate figure the last full dedup scan kept (for these
        pages or, marked ``stale``, for earlier ones: shown as being counted until the dedup worker's
        count for the pages as they are arrives, seconds later after a change)."""
        report = health(wiki, OPERATOR, duplicates=False, lint=False)
        saved = saved_duplicate_figure(wiki) if self.count_duplicates else None
        if saved is not None:
            report.figures = [saved if f.key == saved.key else f for f in report.figures]
        return report

    def reload(self) -> None:
        """The figures again; the duplicate count starts at once, next to the first figures (it
        needs none of them, and is answered from the kept dedup result in a moment)."""
        starting = self.host.workspace.ready and not self._loading
        super().reload()
        if not starting:
            return
        self._generation += 1
        self.duplicates = None
        self.report = None
        self._failed = set()
        self._counting = {"lint", "duplicates"} if self.count_duplicates else {"lint"}
        self._count_facts(self.wiki_index, self._generation)
        if self.count_duplicates:
            index, generation = self.wiki_index, self._generation
            self.host.workspace.read(index, lambda wiki: duplicate_figure(wiki, OPERATOR, BACKGROUND_NICENESS,
                                                                          apart=True),
                                        lambda fig: self._duplicates_counted(index, generation, fig),
                                        lambda exc: self._duplicates_failed(index, generation, exc))

    def _show_facts_counting(self) -> None:
        for button in self.fact_buttons.values():
            button.show_figure(dataclasses.replace(button.figure, value=None))
            button.label.setText(f"{button.figure.label}: counting…")

    def _count_facts(self, index: int, generation: int) -> None:
        """Count the three fact queues on a worker thread; "counting…" until known. Not one of the
        counts the view waits for to be ready: the fact index's first build embeds every fact."""
        self._show_facts_counting()

        def done(figures: list[Figure] | None) -> None:
            if index != self.wiki_index or generation != self._generation:
                return
            if figures is None:  # a big wiki: counted when a queue is opened (see FACT_COUNT_MAX_PAGES)
                for button in self.fact_buttons.values():
                    button.label.setText(f"{button.figure.label}: open to count")
                self.facts_ready.emit()
                return
            for figure in figures:
                self.fact_buttons[figure.key].show_figure(figure)
            self.facts_ready.emit()

        def failed(exc: BaseException) -> None:
            if index != self.wiki_index or generation != self._generation:
                return
            for button in self.fact_buttons.values():
                button.label.setText(f"{button.figure.label}: not counted")
            self.banner.show_result(f"Cannot count the fact queues: {exc}", ok=False)

        self.host.workspace.read(index, lambda wiki: fact_figures(wiki, OPERATOR), done, failed)

    def show_content(self, result: Any) -> None:
        report: Health = result
        self._with_duplicates(report)  # (counted already, or not yet: then it follows)
        self._lint_running = True
        self.show_report(report)
        self.figures_ready.emit()
        if self.duplicates is not None:  # counted before the first figures: shown with them
            self.duplicates_ready.emit()
        index = self.wiki_index
        self.host.workspace.read(index, lambda wiki: add_lint(report, wiki, OPERATOR),
                                    lambda done: self._lint_counted(index, done), self._step_failed)

    def _with_duplicates(self, report: Health) -> None:
        """Put the counted duplicate figure into ``report`` (on the GUI thread, lint done), or, if it
        could not be counted, none (not the count saved for older pages)."""
        if self.duplicates is not None:
            dup = self.duplicates
            report.figures = [dup if f.key == dup.key else f for f in report.figures]
        elif "duplicates" in self._failed:
            report.figures = [dataclasses.replace(f, value=None, stale=False) if f.key == "duplicates" else f
                              for f in report.figures]

    def show_report(self, report: Health) -> None:
        """Lay out one button per figure of ``report``. The buttons of the figures shown already
        (in the same order) are updated in place and only the new ones made: lint's figures
        follow the first ones, and each button made and styled cost the GUI thread ~5 ms."""
        self.report = report
        keys = [f.key for f in report.figures]
        kept = list(self.buttons)
        if keys[:len(kept)] != kept:
            while self.grid.count():
                item = self.grid.takeAt(0)
                widget = item.widget() if item is not None else None
                if widget is not None:
                    widget.deleteLater()
            self.buttons, kept = {}, []
        for figure in report.figures[:len(kept)]:
            self.buttons[figure.key].show_figure(figure, self._note(figure))
        for n, figure in enumerate(report.figures[len(kept):], start=len(kept)):
            button = FigureButton(figure)
            if self._note(figure):
                button.show_figure(figure, self._note(figure))
            button.clicked.connect(lambda _c=False, b=button: self.open_queue(b.figure.queue))
            self.buttons[figure.key] = button
            self.grid.addWidget(button, n // COLUMNS, n % COLUMNS)
        self.summary.setText(self._summary(report))

    def _note(self, figure: Figure) -> str:
        """What follows the label of ``figure``: whether it is still being counted (lint's two, the
        duplicate families unless the kept count is for these very pages), or could not be."""
        key = figure.key
        if key in self._failed:
            return NOT_COUNTED
        if key == "duplicates":
            known = figure.value is not None and not figure.stale
            return COUNTING if "duplicates" in self._counting and self.duplicates is None and not known else ""
        return COUNTING if self._lint_running and key in ("orphans", "lint_problems") else ""

    def _lint_counted(self, index: int, report: Health) -> None:
        if index != self.wiki_index or report is not self.report:
            return  # the wiki changed meanwhile: a newer report is on its way
        self._lint_running = False
        self._with_duplicates(report)
        self.show_report(report)
        self.lint_ready.emit()
        self._counted(index, "lint")

    def _counted(self, index: int, step: str) -> None:
        """``step`` is on screen; once every count is, the view is ready (and a count made after a
        change is kept for the next open, in the background). The dedup index's every-page build
        is left to the Duplicates view (:meth:`curator.views.review.duplicates.DedupView.show_content`): a count from the kept
        result needs none, and the first change builds it anyway."""
        self._counting.discard(step)
        if self._counting:
            return
        self.mark_ready()
        if self.count_duplicates:
            from curator.engine.dedup.worker import worker_for

            self.host.workspace.read(index, lambda wiki: worker_for(wiki, BACKGROUND_NICENESS).keep(),
                                     lambda _none: None, lambda _exc: None)

    def _summary(self, report: Health) -> str:
        dup = self.duplicates

        def fig(key: str) -> Figure | None:
            return dup if dup is not None and key == dup.key else report.figure(key)

        parts = []
        for key, what in (("unresolved_targets", "unresolved link target"), ("duplicates", "duplicate family"),
                          ("lint_problems", "lint problem"), ("inbox_pending", "inbox item"),
                          ("auto_pending", "auto-filed page")):
            f = fig(key)
            if f is not None and f.value:
                parts.append(plural(f.value, what, "duplicate families" if key == "duplicates" else None))
        pages = fig("pages")
        head = f"{pages.value:,} pages in {html.escape(self.wiki_label)}" if pages and pages.value is not None else ""
        if not parts:
            return f"{head}: nothing waits for you." if head else "Nothing waits for you."
        return f"{head}. To review: " + ", ".join(parts) + ". Click a figure to open its queue."

    def _duplicates_counted(self, index: int, generation: int, figure: Figure) -> None:
        if index != self.wiki_index or generation != self._generation:
            return  # counted for figures no longer shown
        self.duplicates = figure
        report = self.report
        if report is not None:
            if not self._lint_running:  # (else lint's worker still rewrites the list: put in after it)
                self._with_duplicates(report)
            button = self.buttons.get(figure.key)
            if button is not None:
                button.show_figure(figure)  # (in place of the count saved for older pages, if any)
            self.summary.setText(self._summary(report))  # the families now counted are waiting too
            self.duplicates_ready.emit()  # (else once the first figures are shown with it)
        self._counted(index, "duplicates")

    def _duplicates_failed(self, index: int, generation: int, exc: BaseException) -> None:
        """The dedup worker could not count (it died, or was stopped): one line, the figure left
        uncounted; the Duplicates view (its figure's queue) asks again, with a Retry."""
        if index != self.wiki_index or generation != self._generation:
            return
        self._failed.add("duplicates")
        button = self.buttons.get("duplicates")
        if button is not None:  # (not the count saved for older pages: none is shown)
            button.show_figure(dataclasses.replace(button.figure, value=None, stale=False), NOT_COUNTED)
        if self.report is not None and not self._lint_running:
            self._with_duplicates(self.report)
        self.banner.show_result(f"Cannot count the duplicate families: {exc}", ok=False)
        self._counted(index, "duplicates")

    def _step_failed(self, exc: BaseException) -> None:
        """Lint could not count: its figures say so (no longer "counting…")."""
        self._lint_running = False
        self._failed.update(("orphans", "lint_problems"))
        for key in ("orphans", "lint_problems"):
            button = self.buttons.get(key)
            if button is not None:
                button.show_figure(button.figure, NOT_COUNTED)
        self.banner.show_result(f"Cannot count everything: {exc}", ok=False)
        self.mark_ready()

    def open_queue(self, queue: str) -> None:
        """Show the view that lists a figure's items (its wiki selected)."""
        name, _, arg = queue.partition(":")
        view = self.host.view(name)
        if view is None:
            return
        choice = getattr(view, "wiki_choice", None)
        if choice is not None and choice.count() > self.wiki_index:
            choice.setCurrentIndex(self.wiki_index)
        if name == "lint":
            view.set_kind(arg)  # type: ignore[attr-defined]
        if name == "facts":
            view.set_queue(arg)  # type: ignore[attr-defined]
        self.host.show_view(name)
