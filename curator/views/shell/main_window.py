"""The station's main window: browser on the left, views in the middle, page panel on the right."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QProxyStyle,
    QPushButton,
    QSplitter,
    QStyle,
    QStyleOption,
    QStyleOptionProgressBar,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.links import LinkIndex, Resolution
from curator.engine.corpus.page import Page, link_key
from curator.engine.errors import PageNotFound
from curator.engine.policy.actor import OPERATOR
from curator.engine.read.reading import Embedded, embedded
from curator.engine.wiki import Wiki
from curator.models.pages import PageRow, PageTableModel
from curator.text import plural
from curator.views import plain_tips
from curator.views.browser.browser import PageBrowser
from curator.views.browser.quick_switcher import QuickSwitcher
from curator.views.page.page_view import PageView
from curator.views.page.render import ChunkedPage, chunk_page, render_message, render_page
from curator.views.page.side_panel import LinkInfo, SidePanel, document_headings
from curator.views.review.base import run_dialog
from curator.views.settings import Settings
from curator.views.shell import appearance
from curator.views.shell.appearance import PageAppearance
from curator.views.shell.editing import EditController, read_only_reason
from curator.views.shell.menus import MainMenus
from curator.views.tasks import share_interpreter_with_gui
from curator.views.widgets import Banner, ElidedLabel
from curator.views.workspace import Snapshot, Workspace

log = logging.getLogger(__name__)

Key = tuple[int, str]
LOAD_BATCH = 2500  # rows added to the browser per event-loop turn while a wiki loads
#: The rest of a load starts at the filled page table's first paint, or this long after the
#: window is ready when nothing paints it (see MainWindow._start_background_after_paint).
BACKGROUND_AFTER_MS = 500
#: The page pane never shrinks below this (a splitter could collapse it to nothing).
MIN_PAGE_PANE = 260
#: Where the first-run hint points, first view present wins: the Health landing view (issue 19),
#: else the review queues.
FIRST_RUN_TARGETS = ("health", "dedup", "inbox")
NOT_A_REPO = "This folder is not a git repository — Initialise"
UNTRUSTED = "Not trusted"
#: What the trust banner lists for a wiki that came with a ``.curator/`` folder Curator did not make here.
FOREIGN_STATE = "a local state folder Curator did not make"


def gather_page(wiki: Wiki, path: str) -> tuple[Page, str, str | ChunkedPage, LinkInfo]:
    """Everything the page view shows, computed off the GUI thread."""
    page = wiki.page(path)  # (only its record: a big wiki's pages are decoded in the background)
    if page is None:
        raise PageNotFound(f"no page {path} (moved or deleted)")
    text = wiki.read_text(path)
    # While a big wiki's links are still being resolved in the background (the first page of a
    # warm open), the page's own links and backlinks come from an index around the page.
    links = wiki.built_links() or wiki.links_around(path)
    # each page whose text is shown (the page, and each page it embeds): the index its own links
    # resolve in as in the whole index, and those links' keys
    around: dict[str, tuple[LinkIndex, set[str]]] = {path: (links, {link.key for link in page.links})}

    def resolution(target: str, source: str) -> Resolution:
        """``target`` written on ``source`` resolved as the whole link index resolves it: in the
        index around ``source`` when it is one of the source's own links, so that an embed does
        not build the whole index (every page decoded: 1.5 GB at 300,000 pages)."""
        found = around.get(source)
        if found is None:
            shown = wiki.page(source)
            found = around[source] = ((wiki.built_links() or wiki.links_around(source), {link.key for link in shown.links})
                                      if shown is not None else (links, set()))
        index, own = found
        if link_key(target) in own:
            return index.resolve(target, source)
        return wiki.links.resolve(target, source)

    def resolve(target: str, source: str) -> str | None:
        return resolution(target, source).path

    def embed(target: str, anchor: str | None, source: str) -> Embedded | None:
        return embedded(wiki, target, anchor, source, resolve=resolution)

    # A large page is cut into bounded chunks here; the page view renders them one at a time.
    body_html: str | ChunkedPage = chunk_page(text, resolve, path) or render_page(text, resolve, embed, path)
    return page, text, body_html, gather_links(wiki, path, page, links)


def gather_links(wiki: Wiki, path: str, page: Page | None = None, links: LinkIndex | None = None) -> LinkInfo:
    """What the side panel's Links tab shows of the page at ``path`` (its backlinks with their
    lines, its outgoing links, its unlinked mentions), computed off the GUI thread: from the
    index around the page unless the whole one is built, as :func:`gather_page` does."""
    if page is None:
        page = wiki.page(path)
        if page is None:
            raise PageNotFound(f"no page {path} (moved or deleted)")
    if links is None:
        links = wiki.built_links() or wiki.links_around(path)
    info = LinkInfo()
    lines_cache: dict[str, list[str]] = {}
    places: dict[str, list[tuple[int, str]]] = {}  # one row per linking page, with its lines
    for edge in links.backlinks(path):
        line = edge.link.line
        found = places.setdefault(edge.source, [])
        if any(line == seen for seen, _c in found):
            continue
        if edge.source not in lines_cache:
            try:
                lines_cache[edge.source] = wiki.read_text(edge.source).splitlines()
            except OSError:
                lines_cache[edge.source] = []
        src_lines = lines_cache[edge.source]
        context = src_lines[line - 1].strip() if 0 < line <= len(src_lines) else "(related:)"
        found.append((line, context))
    for source, found in places.items():
        found.sort(key=lambda lc: (lc[0] == 0, lc[0]))  # body lines first, related: last
        linking = wiki.page(source)
        info.backlinks.append((source, linking.title if linking is not None else source, found))
    seen_out: set[str] = set()
    for edge in links.outgoing.get(path, []):
        key = edge.target or f"?{edge.link.key}"
        if key in seen_out or edge.target == path or edge.resolution.attachment is not None:
            continue
        seen_out.add(key)
        target = wiki.page(edge.target) if edge.target else None
        target_title = target.title if target is not None else None
        info.outgoing.append((edge.link.target, edge.target, target_title or ""))
    info.mentions = unlinked_mentions(wiki, page, links=links)
    return info


#: Up to this many pages the search index is built on the spot for unlinked mentions; above,
#: mentions wait for the station's background build (the page is shown again when it is done).
MENTIONS_BUILD_LIMIT = 3000


def unlinked_mentions(wiki: Wiki, page: Page, limit: int = 50,
                      links: LinkIndex | None = None) -> list[tuple[str, str, str]]:
    """Pages that mention the page's title or an alias as a phrase without linking to it
    (``links``: an index with the page's backlinks, the wiki's by default)."""
    if not wiki.search.active() and wiki.store.count() > MENTIONS_BUILD_LIMIT:
        return []  # the index is being built in the background (Workspace.search_built)
    linked = {e.source for e in (links or wiki.links).backlinks(page.path)} | {page.path}
    names = [n for n in {page.title, *page.aliases} if len(n) >= 2 and '"' not in n]
    found: dict[str, tuple[str, str, str]] = {}
    for name in sorted(names):
        for hit in wiki.search.search(f'"{name}"', OPERATOR, limit=limit, refresh=False):
            if hit.path not in linked and hit.path not in found:
                found[hit.path] = (hit.path, hit.title, hit.snippet)
    return list(found.values())[:limit]


def _bar_width(bar: QProgressBar) -> int:
    """The width ``bar`` needs to show its text whole at 100 %, as its style draws it."""
    option = QStyleOptionProgressBar()
    bar.initStyleOption(option)
    text = bar.format().replace("%p", "100")
    option.text = text
    inner = QSize(bar.fontMetrics().horizontalAdvance(text) + 2 * bar.fontMetrics().averageCharWidth(),
                  bar.sizeHint().height())
    return bar.style().sizeFromContents(QStyle.ContentsType.CT_ProgressBar, option, inner, bar).width()


class CompactTabs(QProxyStyle):
    """The application's style with the view tabs' padding a little tighter: eleven views' tabs
    stay in sight beside the page list and the side panel at 1400 px (none behind scroll arrows)."""

    def pixelMetric(self, metric: QStyle.PixelMetric, option: QStyleOption | None = None,
                    widget: QWidget | None = None) -> int:
        value = super().pixelMetric(metric, option, widget)
        return max(8, value - 8) if metric == QStyle.PixelMetric.PM_TabBarTabHSpace else value


class MainWindow(QMainWindow):
    #: Emitted when the first load has finished and the window shows real content.
    ready = Signal()
    #: Emitted, after this window closed, with the folder the operator chose to open instead
    #: (File ▸ Open, Recent): whoever made the window opens the next one (:mod:`curator.views.shell.app`).
    open_requested = Signal(Path)

    def __init__(self, workspace: Workspace, settings: Settings | None = None) -> None:
        super().__init__()
        plain_tips.install()  # page text in a tooltip is never parsed as markup
        share_interpreter_with_gui()  # background tasks never hold the GUI thread up for long
        self.workspace = workspace
        self.settings = settings or Settings()
        self.model = PageTableModel(show_wiki_column=workspace.is_home)
        self.browser = PageBrowser(self.model)
        self.page_view = PageView()
        self.side = SidePanel()
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        tight = CompactTabs()
        tight.setParent(self.views.tabBar())  # (a widget's style is not owned by the widget)
        self.views.tabBar().setStyle(tight)
        self.views.addTab(self.page_view, "Page")
        self.view_index: dict[str, QWidget] = {"page": self.page_view}
        self.landing: str | None = None  # the view shown first when a wiki opens
        self.current: Key | None = None
        self.current_page: Page | None = None
        #: the page open when this folder was last closed (read in start), and whether the page now
        #: open was the operator's (or that one): only those are remembered, an open wiki that was
        #: never read further than its Health opens on Health again
        self._resume: Key | None = None
        self._page_chosen = False
        self.back_stack: list[Key] = []
        self.forward_stack: list[Key] = []
        self._loaded = False
        self._error_box: QMessageBox | None = None
        self._last_action_wiki: int | None = None
        #: the station's own actions not answered yet: the pages they change are said by their
        #: answer, not as "changed on disk" (which also came after it and replaced it)
        self._actions_running = 0
        #: How dialogs are shown; tests replace it to fill the fields and accept.
        self.exec_dialog: Callable[[QDialog], bool] = run_dialog

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.browser)
        self.splitter.addWidget(self.views)
        self.splitter.addWidget(self.side)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([440, 680, 280])
        self.splitter.setCollapsible(1, False)
        self.views.setMinimumWidth(MIN_PAGE_PANE)
        self.banners = QVBoxLayout()
        self.banners.setContentsMargins(0, 0, 0, 0)
        self.banners.setSpacing(0)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addLayout(self.banners)
        column.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.repo_banner: Banner | None = None
        self.trust_banner: Banner | None = None
        #: wikis whose own git configuration names programs, with what they name (see _check_trust)
        self.untrusted: dict[int, list[str]] = {}
        self.trust_checked = False  # (the check runs off the GUI thread after the load)
        self.hint_banner: Banner | None = None
        #: wikis of the workspace that are not git repositories (opened read-only until initialised)
        self.not_repos: list[int] = []

        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(workspace.cancel)
        self.status_label = ElidedLabel()
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)

        self.editing = EditController(self)
        self.appearance = PageAppearance(self)
        self.menus = MainMenus(self)
        self._connect()
        self.setWindowTitle(f"Curator — {workspace.root.name}")
        self.page_view.show_page(render_message("Loading…", f"Reading {workspace.root}"), "", None)
        self.side.properties.show_page(None)
        self.resize(1400, 900)
        self._restore_state()
        self._outline_timer = QTimer(self)
        self._outline_timer.setSingleShot(True)
        self._outline_timer.setInterval(250)
        self._outline_timer.timeout.connect(self._update_outline)
        self.page_view.browser.document().contentsChanged.connect(self._outline_timer.start)
        appearance.apply_theme(self.settings.theme)
        self.appearance.apply_page_style()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.appearance.system_scheme_changed)

    # --- construction -----------------------------------------------------------------
    def _connect(self) -> None:
        ws = self.workspace
        ws.loaded.connect(self._on_loaded)
        ws.pages_changed.connect(self._on_pages_changed)
        ws.failed.connect(self.show_error)
        ws.progress.connect(self._on_progress)
        ws.search_built.connect(self._on_search_built)
        ws.inbound_ready.connect(self.model.set_inbound)
        self.browser.open_requested.connect(lambda row: self.open_chosen(row.key))
        self.browser.search_requested.connect(self._search)
        self.page_view.page_link_activated.connect(self._follow_link)
        self.page_view.provenance_requested.connect(self._load_provenance)
        self.page_view.commit_activated.connect(self.open_commit)
        self.page_view.missing_link_activated.connect(self.editing.create_from_link)
        self.side.links.open_requested.connect(self._open_path_in_current_wiki)
        self.side.properties.edit_requested.connect(self._edit_property)
        self.side.outline.heading_requested.connect(self.scroll_to_heading)
        self.side.tags.tag_requested.connect(self.filter_by_tag)
        self.browser.move_requested.connect(self.ask_move)
        self.browser.archive_requested.connect(self.ask_archive)
        self.page_view.move_requested.connect(self.ask_move)
        self.page_view.archive_requested.connect(self.ask_archive)

    def add_view(self, name: str, widget: QWidget, title: str, first: bool = False) -> None:
        """Add a tab to the centre (graph, duplicates, auto-filed, policy, history...); ``first``:
        before every other tab, shown when a wiki opens (Health)."""
        if first:
            self.views.insertTab(0, widget, title)
            self.landing = name
        else:
            self.views.addTab(widget, title)
        self.view_index[name] = widget

    def show_view(self, name: str) -> bool:
        widget = self.view_index.get(name)
        if widget is None:
            return False
        self.views.setCurrentWidget(widget)
        return True

    def view(self, name: str) -> QWidget | None:
        return self.view_index.get(name)

    def open_page_at_line(self, key: Key, line: int) -> None:
        """Show page ``key`` with the Source tab's cursor on ``line`` (1-based)."""
        from curator.views.review.lint import show_line

        def at_line() -> None:
            self.ready.disconnect(at_line)
            if self.current == key:
                QTimer.singleShot(0, lambda: show_line(self.page_view, line))

        self.ready.connect(at_line)
        self.open_page(key)
        self.show_view("page")

    def set_view_title(self, view: QWidget, title: str, tip: str) -> None:
        at = self.views.indexOf(view)
        if at >= 0:
            self.views.setTabText(at, title)
            self.views.setTabToolTip(at, tip)

    def mark_hidden(self, keys: set[Key]) -> None:
        self.model.set_hidden(keys)

    # --- loading ----------------------------------------------------------------------
    def start(self) -> None:
        self.status("Loading…")
        self._busy(True)
        # The window is usable (the page list filled, a page readable) before anything else of
        # the load runs: the first page is gathered in the load's own task, and the workspace's
        # background work (links, full-text index) waits until it is on screen.
        self.workspace.defer_background = True
        self._resume = self._last_page()
        self.workspace.load(presort=self.model.presort, prepare=self._prepare_first_page)

    def _last_page(self) -> Key | None:
        if self._screenshot_mode():  # a rendering for the docs shows what it is asked for
            return None
        last = self.settings.last_page(str(self.workspace.root))
        if last is None:
            return None
        index = next((h.index for h in self.workspace.handles if str(h.root) == last[0]), None)
        return (index, last[1]) if index is not None else None

    def _remember_page(self) -> None:
        chosen = self.current if self._page_chosen and self.current is not None else None
        self.settings.set_last_page(str(self.workspace.root), None if chosen is None else
                                    (str(self.workspace.handles[chosen[0]].root), chosen[1]))

    def _prepare_first_page(self, snapshot: Snapshot) -> tuple[Key, Any] | None:
        """Off the GUI thread, in the load: the page the window opens on, gathered (or the
        exception gathering it raised, shown as for any page that cannot be opened)."""
        if self.current is not None or not snapshot.rows:
            return None
        key = self._first_page(snapshot.rows)
        try:
            return key, gather_page(self.workspace.wiki(key[0]), key[1])
        except Exception as exc:  # shown like any page that cannot be opened
            return key, exc

    def _on_progress(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        # "12 %" alone said nothing while a wiki opened from its cache: the step shows on the bar,
        # its verb only (the status text beside it names the wiki and counts the pages), and the
        # bar is as wide as that text at 100 % (a wiki's name cut it to "48 % nc-re…")
        step = what.split()[0].removesuffix("…") if what.strip() else ""
        self.progress.setFormat(f"%p %  {step}" if step else "%p %")
        self.progress.setMinimumWidth(max(self.progress.minimumWidth(), _bar_width(self.progress)))
        if what:
            self.status(what)

    def _on_search_built(self, index: int) -> None:
        # the open page's unlinked mentions could not be searched before: show it again
        if self.current is not None and self.current[0] == index:
            self.open_page(self.current, push=False)

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)

    def _on_loaded(self, snapshot: Snapshot) -> None:
        # Rows arrive sorted; they enter the model in batches, one per event-loop turn, so the
        # GUI thread stays responsive (< 100 ms per step) even at 30,000 pages.
        # The table is not painted between batches (each paint asks the model for every visible
        # cell again: thirteen paints of the same first rows at 32,000 pages), only once at the end.
        self.model.clear()
        self.model.show_kept_inbound(snapshot.kept_inbound)
        self.browser.set_choices(snapshot.namespaces, snapshot.tags)
        self.side.tags.show_counts(snapshot.tag_counts)
        self.browser.table.setUpdatesEnabled(False)
        self._append_batches(snapshot, 0)

    def _append_batches(self, snapshot: Snapshot, start: int) -> None:
        end = start + LOAD_BATCH
        self.model.append_sorted(snapshot.rows[start:end])
        if end < len(snapshot.rows):
            QTimer.singleShot(0, lambda: self._append_batches(snapshot, end))
            return
        self.browser.table.setUpdatesEnabled(True)
        self._finish_load(snapshot)

    def _finish_load(self, snapshot: Snapshot) -> None:
        self._busy(False)
        self.status(f"{plural(len(snapshot.rows), 'page')} loaded in {snapshot.elapsed:.2f} s")
        self._loaded = True
        if not self._screenshot_mode():  # a rendering for the docs is not "opening" a wiki
            self.settings.add_recent(str(self.workspace.root))
            self._first_run_hint()
        self._check_repositories()
        self._check_trust()
        first = snapshot.prepared
        resumed = first is not None and first[0] == self._resume
        if resumed:
            self._page_chosen = True  # (remembered again, unless the operator opens another)
            self.show_view("page")  # the page the operator had open when the wiki was closed
        elif self.landing is not None:
            self.show_view(self.landing)  # the wiki's Health, not an arbitrary page, comes first
        if self.current is None and first is not None:
            key, gathered = first  # ready in the Page tab behind the landing view
            self.current = key
            if isinstance(gathered, BaseException):
                self._open_failed(key, key[1], gathered)
            else:
                self._show_page(key, gathered, "")
        elif self.current is None and snapshot.rows:
            self.open_page(self._start_page(snapshot.rows))
            self._page_chosen = False  # (the window's choice, not the operator's)
        else:
            self.ready.emit()
        self._start_background_after_paint()  # the window is usable: the rest of the load may run

    def _start_background_after_paint(self) -> None:
        """Start the rest of the load (links, policy, history: 2-3 busy background threads) once
        the filled page table has been painted, or BACKGROUND_AFTER_MS from now when nothing
        paints it (a hidden window). That first paint is the GUI thread's biggest job of an open
        at 32,000 pages (~40 ms); begun beside those threads it shared the interpreter lock with
        them and took 150-250 ms."""
        table = self.browser.table
        workspace = self.workspace
        if not table.isVisible():
            workspace.start_background()
            return

        waiting = [True]

        def start() -> None:
            if waiting[0]:  # (the paint or the timer, whichever comes first)
                waiting[0] = False
                table.painted.disconnect(start)
                workspace.start_background()

        table.painted.connect(start)
        table.viewport().update()
        QTimer.singleShot(BACKGROUND_AFTER_MS, self, start)

    def _first_page(self, rows: list[PageRow]) -> Key:
        """The page open when the wiki was last closed if it is still there, else the start page."""
        if self._resume is not None and any(r.key == self._resume for r in rows):
            return self._resume
        return self._start_page(rows)

    @staticmethod
    def _start_page(rows: list[PageRow]) -> Key:
        """The page to show first: the most trusted identity page (the wiki's front door), never
        an empty file while a page has text (a wiki without frontmatter showed its first dated
        note, 0 bytes)."""
        from curator.engine.corpus.page import LAYER_RANK

        best = min(rows, key=lambda r: (r.page.size == 0, LAYER_RANK.get(r.page.layer, 3), -r.page.trust,
                                        r.page.path))
        return best.key

    def _on_pages_changed(self, snapshot: Snapshot) -> None:
        self.model.update_rows(snapshot.rows, snapshot.removed)
        self.editing.pages_changed()
        self.model.update_inbound(snapshot.inbound)
        self.browser.set_choices(snapshot.namespaces, snapshot.tags)
        self.side.tags.show_counts(snapshot.tag_counts)
        changed = {r.key for r in snapshot.rows} | set(snapshot.removed)
        if self.current in changed:
            if self.current in snapshot.removed:
                self.status("The open page was removed or moved.")
            else:
                self.open_page(self.current, push=False)
        elif self.current is not None and any(key[0] == self.current[0] for key in changed):
            self._refresh_links(self.current)  # (another page may link to it now, or no longer)
        n = len(snapshot.rows) + len(snapshot.removed)
        if n and not self._actions_running:  # (nothing: a file that is no page, or the inbound counts)
            self.status(f"{plural(n, 'page')} changed on disk")

    def _refresh_links(self, key: Key) -> None:
        """The Links tab of the page shown (``key``) counted again after other pages changed, as
        Obsidian's backlinks follow the pages linking to the open one; the page itself is not
        shown again (its reading place kept)."""
        def shown(info: LinkInfo) -> None:
            if self.current == key:
                self.side.links.show_links(info)

        # (a page gone meanwhile: the change that removed it says so)
        self.workspace.read(key[0], lambda wiki: gather_links(wiki, key[1]), shown, lambda exc: None)

    # --- pages ------------------------------------------------------------------------
    def open_page(self, key: Key, push: bool = True, anchor: str = "") -> None:
        def again() -> None:
            self.open_page(key, push, anchor)

        if key != self.current and not self.editing.confirm_leave(again):
            return  # unsaved edits: cancelled, or opened once they are saved
        if push and self.current is not None and self.current != key:
            self.back_stack.append(self.current)
            self.forward_stack.clear()
        if key != self.current:  # (not a page shown again after a change)
            self._page_chosen = True
        self.current = key
        self._update_nav()
        index, path = key
        self.workspace.read(index, lambda wiki: gather_page(wiki, path),
                            lambda result: self._show_page(key, result, anchor),
                            lambda exc: self._open_failed(key, path, exc))

    def open_chosen(self, key: Key) -> None:
        """A page chosen in the browser or the quick switcher: open it, and show it when the
        landing view (Health) is in front (other views, such as the graph, stay)."""
        self.open_page(key)
        if self.landing is not None and self.views.currentWidget() is self.view_index.get(self.landing):
            self.show_view("page")

    def _load_provenance(self) -> None:
        """Fill the page view's Provenance tab with the open page's blame (off the GUI thread)."""
        from curator.engine.history.provenance import blame
        from curator.engine.policy.actor import OPERATOR

        key = self.current
        if key is None:
            return
        index, path = key

        def shown(lines: list[Any]) -> None:
            if key == self.current:
                self.page_view.show_blame(lines)

        self.workspace.read(index, lambda wiki: blame(wiki, path, OPERATOR), shown,
                            lambda exc: self.show_error(f"Cannot show who wrote {path}: {exc}"))

    def open_commit(self, commit: str) -> None:
        """Show ``commit`` in the History view (a line's commit, clicked in the page view)."""
        view = self.view_index.get("history")
        select = getattr(view, "select_commit", None)
        if select is None:
            return
        if self.current is not None:
            choice = getattr(view, "wiki_choice", None)
            if choice is not None and choice.currentIndex() != self.current[0]:
                choice.setCurrentIndex(self.current[0])
        self.show_view("history")
        select(commit)

    def _open_failed(self, key: Key, path: str, exc: BaseException) -> None:
        self.show_error(f"Cannot open {path}: {exc}")
        if key == self.current:
            self.page_view.show_page(render_message("Cannot open this page", str(exc)), "", None)
            self.ready.emit()  # the window is usable (and --screenshot must not wait forever)

    def _show_page(self, key: Key, result: tuple[Page, str, str | ChunkedPage, LinkInfo], anchor: str) -> None:
        if key != self.current:
            return  # the operator has moved on
        page, text, body_html, info = result
        self.current_page = page
        root = self.workspace.handles[key[0]].root
        reason = read_only_reason(page)
        self.page_view.show_page(body_html, text, root / Path(page.path).parent, root, key=key,
                                 editable=not reason, read_only_reason=reason)
        self.editing.page_shown(key)
        if anchor:
            self.page_view.browser.scrollToAnchor(anchor)
        self.side.properties.show_page(page)
        if key[0] in self.not_repos:
            self.side.properties.setEnabled(False)  # read-only until the folder is initialised
        self.side.links.show_links(info)
        self._update_outline()
        self.browser.select_key(key)
        label = self.workspace.handles[key[0]].label
        self.setWindowTitle(f"{page.title} — Curator — {label}")
        self.ready.emit()

    def _follow_link(self, path: str, anchor: str) -> None:
        if self.current is not None:
            self.open_page((self.current[0], path), anchor=anchor)

    def _open_path_in_current_wiki(self, path: str) -> None:
        if self.current is not None:
            self.open_page((self.current[0], path))

    def go_back(self) -> None:
        if self.back_stack:
            if self.current is not None:
                self.forward_stack.append(self.current)
            self.open_page(self.back_stack.pop(), push=False)

    def go_forward(self) -> None:
        if self.forward_stack:
            if self.current is not None:
                self.back_stack.append(self.current)
            self.open_page(self.forward_stack.pop(), push=False)

    def _update_nav(self) -> None:
        self.menus.update_nav(bool(self.back_stack), bool(self.forward_stack))

    # --- search -----------------------------------------------------------------------
    def find_in_page(self) -> None:
        """Ctrl+F: the find bar of the page view (the wiki search is Ctrl+K)."""
        self.show_view("page")
        self.page_view.find_in_page()

    def _update_outline(self) -> None:
        self.side.outline.show_headings(document_headings(self.page_view.browser.document()))

    def scroll_to_heading(self, block_number: int) -> None:
        """Scroll the rendered page so heading ``block_number`` is at the top."""
        from PySide6.QtGui import QTextCursor

        browser = self.page_view.browser
        block = browser.document().findBlockByNumber(block_number)
        if not block.isValid():
            return
        self.show_view("page")
        self.page_view.tabs.setCurrentWidget(browser)
        browser.setTextCursor(QTextCursor(block))
        rect = browser.document().documentLayout().blockBoundingRect(block)
        browser.verticalScrollBar().setValue(int(rect.top()))

    def filter_by_tag(self, tag: str) -> None:
        """Show the pages tagged ``tag`` in the browser (the tag pane's click)."""
        self.browser.tag.setCurrentText(tag)

    def focus_search(self) -> None:
        self.browser.search.setFocus()
        self.browser.search.selectAll()

    def _search(self, query: str) -> None:
        """Rank the pages matching ``query`` as ``curator search`` does (the browser shows the best
        :data:`~curator.engine.search.index.MAX_LIMIT` with snippets) and keep every match for its table."""
        from curator.engine.search.index import MAX_LIMIT
        from curator.engine.search.query import parse_query
        from curator.views.browser.search_results import Result

        if not query:
            self.browser.set_matches(None)
            return
        problem = parse_query(query).problem
        if problem:  # (a filter that can never match: say why, rather than "0 matching pages")
            self.browser.set_matches(frozenset(), problem)
            self.browser.set_results([], 0, query)
            return
        results: dict[int, Any] = {}
        pending = len(self.workspace.handles)

        def ranked(wiki: Wiki) -> tuple[list[Any], dict[str, float]]:
            hits = wiki.search.search(query, OPERATOR, limit=MAX_LIMIT)
            return hits, wiki.search.relevance(query, refresh=False)

        def collect(index: int, answer: tuple[list[Any], dict[str, float]]) -> None:
            nonlocal pending
            results[index] = answer
            pending -= 1
            if pending == 0 and self.browser.search.text().strip() == query:
                keys = frozenset((i, path) for i, (_hits, scores) in results.items() for path in scores)
                labels = {h.index: h.label for h in self.workspace.handles}
                best = sorted((Result(i, labels[i], hit) for i, (hits, _s) in results.items() for hit in hits),
                              key=lambda r: (-r.hit.score, r.hit.path, r.wiki))[:MAX_LIMIT]
                self.browser.set_matches(keys, f"{plural(len(keys), 'matching page')}")
                self.browser.set_results(best, len(keys), query)

        for handle in self.workspace.handles:
            self.workspace.read(handle.index, ranked, functools.partial(collect, handle.index),
                                lambda exc: self.browser.set_matches(frozenset(), f"Search failed: {exc}"))

    def quick_switcher(self) -> None:
        dialog = QuickSwitcher(self.model.rows, self)
        dialog.chosen.connect(lambda row: self.open_chosen(row.key))
        dialog.open()

    # --- actions ----------------------------------------------------------------------
    def run_action(self, index: int, func: Callable[[Wiki], Any], what: str,
                   done: Callable[[Any], None] | None = None) -> None:
        """Send an engine action to wiki ``index``'s writer queue and report its result."""
        def finished(result: Any) -> None:
            self._actions_running -= 1
            self.report_result(result)
            if done is not None:
                done(result)

        if index in self.not_repos:  # read-only until initialised: every view's action stops here
            from curator.engine.status import Status
            from curator.engine.write.actions import ActionResult

            label = self.workspace.handles[index].label
            finished(ActionResult(Status.INVALID, f"{label} is not a git repository yet, so it is read-only: "
                                  "Initialise it first (the bar above the panes runs curator init)"))
            return
        self.status(f"{what}…")
        self._last_action_wiki = index  # Ctrl+Z undoes in the wiki that changed last

        def failed(exc: BaseException) -> None:
            self._actions_running -= 1
            self.show_error(f"{what} failed: {exc}")

        self._actions_running += 1
        self.workspace.run(index, func, finished, failed)

    def report_result(self, result: Any) -> None:
        message = getattr(result, "message", str(result))
        if getattr(result, "is_error", False):
            self.show_error(message)
        else:
            commit = getattr(result, "commit", None)
            self.status(f"{message}" + (f"  [{commit[:8]}]" if commit else ""))

    def _edit_property(self, name: str, value: Any) -> None:
        if self.current is None:
            return
        from curator.engine.write.properties import set_property

        index, path = self.current
        key = self.current

        def done(result: Any) -> None:
            if getattr(result, "is_error", False) and key == self.current:
                # the rejected value does not stay in the field as if it had been saved
                self.side.properties.show_page(self.current_page)
                self.side.properties.error.setText(str(getattr(result, "message", result)))

        self.run_action(index, lambda wiki: set_property(wiki, OPERATOR, path, name, value),
                        f"Setting {name} of {path}", done)

    def ask_move(self, key: Key | None = None) -> None:
        """Move or rename a page (the current one by default), after asking for its new path."""
        key = key or self.current
        if key is None or (key == self.current and not self.editing.confirm_leave(lambda: self.ask_move(key))):
            return
        from curator.views.page.curation_dialogs import MoveDialog

        dialog = MoveDialog(key[1], self)
        if self.exec_dialog(dialog):
            self.move_to(key, dialog.new_path())

    def move_to(self, key: Key, new_path: str) -> None:
        from curator.engine.write.move import move_page

        index, path = key
        shown = self.current == key

        def done(result: Any) -> None:
            if result.ok and shown:  # the page moved from under the view: follow it
                self.open_page((index, result.data["new"]), push=False)

        self.run_action(index, lambda wiki: move_page(wiki, path, new_path, OPERATOR), f"Moving {path}", done)

    def ask_archive(self, key: Key | None = None) -> None:
        """Archive a page (the current one by default), after confirming."""
        key = key or self.current
        if key is None or (key == self.current and not self.editing.confirm_leave(lambda: self.ask_archive(key))):
            return
        from curator.views.page.curation_dialogs import ArchiveDialog

        path = key[1]
        row = self.model.row_for(key)
        inbound = self.model.inbound(self.model.rows[row]) if row is not None else 0
        if self.exec_dialog(ArchiveDialog(path, inbound, self)):
            self.archive(key)

    def archive(self, key: Key) -> None:
        from curator.engine.write.move import archive_page

        index, path = key
        self.run_action(index, lambda wiki: archive_page(wiki, path, OPERATOR), f"Archiving {path}")

    def undo_last(self) -> None:
        from curator.engine.write.actions import undo

        index = self._last_action_wiki
        if index is None:
            index = self.current[0] if self.current else 0
        self.run_action(index, lambda wiki: undo(wiki, OPERATOR), "Undoing the last action")

    def redo_last(self) -> None:
        """Ctrl+Shift+Z: re-apply what the last undo took back (the engine's ``redo`` action)."""
        from curator.engine.write.actions import redo

        index = self._last_action_wiki
        if index is None:
            index = self.current[0] if self.current else 0
        self.run_action(index, lambda wiki: redo(wiki, OPERATOR), "Redoing the last undo")

    # --- appearance -------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        # the desktop's palette changed (light to dark) without a colour-scheme signal
        look: PageAppearance | None = getattr(self, "appearance", None)  # (None while being built)
        if event.type() == QEvent.Type.PaletteChange and look is not None:
            look.palette_changed()
        super().changeEvent(event)

    def rerender_page(self) -> None:
        """Show the open page again (its style changed: zoom, theme)."""
        if self.current is not None and self._loaded:
            self.open_page(self.current, push=False)

    # --- hints -------------------------------------------------------------------------
    def _add_banner(self, banner: Banner) -> Banner:
        self.banners.addWidget(banner)
        return banner

    def first_run_target(self) -> str | None:
        """The view the first-run hint points at (see FIRST_RUN_TARGETS)."""
        return next((name for name in FIRST_RUN_TARGETS if name in self.view_index), None)

    def _first_run_hint(self) -> None:
        if self.settings.first_run_hint_seen:
            return
        target = self.first_run_target()
        if target is None:
            return
        self.settings.first_run_hint_seen = True
        title = self.views.tabText(self.views.indexOf(self.view_index[target])).replace("&", "")
        what = ("lists what needs attention in this wiki, each figure opening its queue" if target == "health"
                else "is the review queue to start with")
        banner = self._add_banner(Banner(f"New here? {title} {what}. Every change is one git commit, "
                                         "and Ctrl+Z undoes it. Help ▸ Keyboard shortcuts lists the keys."))

        def go() -> None:
            self.show_view(target)
            banner.hide()

        banner.add_button(f"Open {title}", go)
        self.hint_banner = banner

    def _check_repositories(self) -> None:
        """A wiki folder that is not a git repository opens read-only, with a banner to initialise it."""
        from curator.engine.write.bootstrap import is_repo_root

        self.not_repos = [h.index for h in self.workspace.handles if not is_repo_root(h.root)]
        if not self.not_repos:
            if self.repo_banner is not None:
                self.repo_banner.hide()
            return
        names = ", ".join(self.workspace.handles[i].label for i in self.not_repos)
        text = (f"{NOT_A_REPO}: {names} opens read-only; Initialise makes it a wiki "
                "(curator init: git init and one commit of .gitignore).")
        if self.repo_banner is None:
            self.repo_banner = self._add_banner(Banner(text, tone="warning"))
            self.repo_banner.add_button("Initialise", self.initialise)
        self.repo_banner.label.setText(text)
        self.repo_banner.show()
        self.side.properties.setEnabled(False)
        for action in self.menus.writing_actions():
            action.setEnabled(False)

    def _check_trust(self) -> None:
        """A wiki whose own git configuration names programs (hooks, filters, fsmonitor, ...)
        that Curator does not run until the operator trusts it, or that came with a ``.curator/``
        folder Curator did not make here (its agents' tokens and judge settings unused): a banner
        says what they are."""
        from curator.engine.corpus.state import foreign_state
        from curator.engine.write.bootstrap import untrusted_programs

        handles = [h for h in self.workspace.handles if h.index not in self.not_repos]
        if not handles:
            return

        def gather(_wiki: Wiki) -> dict[int, list[str]]:  # (a git process per wiki: off the GUI thread)
            return {h.index: untrusted_programs(h.root) + ([FOREIGN_STATE] if foreign_state(h.root) else [])
                    for h in handles}

        self.workspace.read(handles[0].index, gather, self._show_trust)

    def _show_trust(self, found: dict[int, list[str]]) -> None:
        self.trust_checked = True
        self.untrusted = {i: programs for i, programs in found.items() if programs}
        if not self.untrusted:
            if self.trust_banner is not None:
                self.trust_banner.hide()
            return
        names = ", ".join(self.workspace.handles[i].label for i in self.untrusted)
        every = [p for programs in self.untrusted.values() for p in programs if p != FOREIGN_STATE]
        foreign = [self.workspace.handles[i].label for i, found_here in self.untrusted.items()
                   if FOREIGN_STATE in found_here]
        shown = ", ".join(every[:3]) + (f" (+{len(every) - 3} more)" if len(every) > 3 else "")
        said = []
        if every:
            said.append(f"the git configuration of {names} names programs for git to run ({shown}); "
                        "Curator runs none of them")
        if foreign:
            said.append(f"the .curator folder of {', '.join(foreign)} came with the wiki (Curator did not make "
                        "it here): its agents' tokens and judge settings are not used, the local state is kept "
                        "in your cache folder")
        text = f"{UNTRUSTED}: " + "; ".join(said) + " until you trust the wiki."
        if self.trust_banner is None:
            self.trust_banner = self._add_banner(Banner(text, tone="warning"))
            self.trust_banner.add_button("Trust this wiki…", self.trust_wikis)
        self.trust_banner.label.setText(text)
        self.trust_banner.setToolTip("\n".join([*every, *(f"{name}/.curator: {FOREIGN_STATE}" for name in foreign)]))
        self.trust_banner.show()

    def trust_wikis(self) -> None:
        """Ask, listing every program, then trust the wikis the banner names."""
        from curator.engine.write.bootstrap import trust_wiki

        every = "\n".join(f"{self.workspace.handles[i].label}: {p}"
                          for i, programs in self.untrusted.items() for p in programs)
        programs = any(p != FOREIGN_STATE for found in self.untrusted.values() for p in found)
        folder = any(FOREIGN_STATE in found for found in self.untrusted.values())
        said = [*(["Git will run the programs the wiki's own configuration names on Curator's next git "
                   "commands."] if programs else []),
                *(["The .curator folder it came with becomes its local state (its agents' tokens and judge "
                   "settings used) from the next time it is opened."] if folder else [])]
        box = QMessageBox(QMessageBox.Icon.Warning, "Trust this wiki?",
                          " ".join(said) + " Trust it only if you know where it came from.",
                          QMessageBox.StandardButton.Cancel, self)
        box.setDetailedText(every)
        trust_button = box.addButton("Trust", QMessageBox.ButtonRole.AcceptRole)
        self.exec_dialog(box)
        if box.clickedButton() is not trust_button:
            return
        for index in list(self.untrusted):
            trust_wiki(self.workspace.wiki(index).session.git)
        self.status("Trusted: " + "; ".join([*(["git runs what the wiki's configuration names"] if programs else []),
                                             *(["its .curator folder is used from the next opening"] if folder else [])]))
        self._show_trust({})  # (every wiki the banner named is trusted now)

    def initialise(self) -> None:
        """Run ``curator init`` (the engine's ``init_wiki``) on every wiki that is not a repository."""
        from curator.engine.write.bootstrap import init_wiki

        for index in list(self.not_repos):
            root = self.workspace.handles[index].root

            def init(_wiki: Wiki, r: Path = root) -> Any:
                return init_wiki(r)

            def failed(exc: BaseException, r: Path = root) -> None:
                self.show_error(f"Initialising {r} failed: {exc}")

            def done(result: Any) -> None:
                self.status(result.message)
                self._check_repositories()
                if not self.not_repos:
                    for action in self.menus.writing_actions():
                        action.setEnabled(True)
                    if self.current is not None:
                        self.open_page(self.current, push=False)

            self.workspace.run(index, init, done, failed)

    # --- misc -------------------------------------------------------------------------
    def status(self, text: str) -> None:
        self.status_label.setStyleSheet("")
        self.status_label.setText(text)

    def show_error(self, message: str) -> None:
        first = message.strip().splitlines()[0] if message.strip() else "Something went wrong"
        self.status_label.setStyleSheet("color: #c0392b;")
        self.status_label.setText(first)
        self._busy(False)
        if self.isVisible() and not self._screenshot_mode():
            # non-modal: a background error never blocks the window (or a test)
            if self._error_box is None:
                self._error_box = QMessageBox(QMessageBox.Icon.Warning, "Curator", "", parent=self)
                # plain text: a quote in a message is a quote, never "&#x27;"
                self._error_box.setTextFormat(Qt.TextFormat.PlainText)
            self._error_box.setText(first)
            self._error_box.open()

    def _screenshot_mode(self) -> bool:
        return bool(self.property("screenshot"))

    def open_folder(self, folder: Path) -> None:
        """Open another wiki or home in this window (replacing the current one)."""
        if self.close():  # (not when unsaved edits kept it open)
            self.open_requested.emit(folder)

    def _restore_state(self) -> None:
        geometry = self.settings.geometry
        if geometry is not None:
            self.restoreGeometry(geometry)
        splitter = self.settings.splitter_state("main")
        if splitter is not None:
            self.splitter.restoreState(splitter)
            sizes = self.splitter.sizes()
            if sizes[1] < MIN_PAGE_PANE:  # saved collapsed by an older version: give the page room
                self.splitter.setSizes([sizes[0], max(680, MIN_PAGE_PANE), sizes[2]])

    def save_state(self) -> None:
        if self._loaded:  # (a window closed while loading has no page to remember)
            self._remember_page()
        self.settings.geometry = QByteArray(self.saveGeometry())
        self.settings.set_splitter_state("main", QByteArray(self.splitter.saveState()))
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._screenshot_mode() and not self.editing.confirm_leave(self.close):
            event.ignore()  # unsaved edits: cancelled, or closed once they are saved
            return
        if not self._screenshot_mode():
            self.save_state()
        self.workspace.close()
        super().closeEvent(event)

    def when_view_ready(self, name: str, func: Callable[[], None], delay_ms: int = 200) -> None:
        """Call ``func`` once view ``name`` has shown its content (views load asynchronously)."""
        widget = self.view_index.get(name)
        signal = getattr(widget, "content_ready", None)
        if signal is None or getattr(widget, "is_content_ready", lambda: True)():
            QTimer.singleShot(delay_ms, func)
            return

        def fire() -> None:
            signal.disconnect(fire)
            QTimer.singleShot(delay_ms, func)

        signal.connect(fire)

    def when_ready(self, func: Callable[[], None], delay_ms: int = 50) -> None:
        """Call ``func`` once the window has real content (used by ``--screenshot``)."""
        def fire() -> None:
            self.ready.disconnect(fire)
            QTimer.singleShot(delay_ms, func)

        self.ready.connect(fire)
