"""The page view: the rendered page and its source, with back/forward navigation.

Only local resources inside the wiki are ever loaded; remote images and anything else are
refused, and external links open in the system browser only when clicked.

A large page (:class:`~curator.views.page.render.ChunkedPage`) is rendered one bounded chunk per event-loop turn,
so the GUI thread stays responsive on any page on disk; past its first
:data:`~curator.views.page.render.PREVIEW_BYTES` a bar says "This page is large: showing the first N KB" with a
"Show all" button that goes on the same way.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QDesktopServices,
    QFont,
    QImage,
    QImageReader,
    QKeySequence,
    QPainter,
    QShortcut,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from curator.engine.read.attachments import read_inline
from curator.views.page import callouts
from curator.views.page.editor import PageEditor
from curator.views.page.find_bar import FindBar
from curator.views.page.render import (
    MAX_DISPLAY_LINE,
    MISSING_SCHEME,
    PAGE_SCHEME,
    PREVIEW_BYTES,
    STYLE,
    ChunkedPage,
)

#: Source text appended per event-loop turn for a large page (QPlainTextEdit lays out lazily).
SOURCE_CHUNK_CHARS = 64 * 1024

if TYPE_CHECKING:
    from curator.engine.history.provenance import BlameLine

EXTERNAL_SCHEMES = ("http", "https", "mailto")


#: The largest picture decoded for the page view (width x height): a small file can declare a
#: huge picture (a 20,000 x 20,000 PNG is 1.6 GB decoded).
MAX_INLINE_PIXELS = 40_000_000
#: The text key of a placeholder image: why the reference is not shown.
PLACEHOLDER_KEY = "curator-placeholder"


def placeholder_image(reason: str) -> QImage:
    """What the page shows for an image it does not load: a small grey box (its tooltip-less
    reason kept in the image's text, ``PLACEHOLDER_KEY``)."""
    image = QImage(32, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("#d5d8dc"))
    painter = QPainter(image)
    painter.setPen(QColor("#7f8c8d"))
    painter.drawRect(0, 0, 31, 23)
    painter.drawLine(0, 0, 31, 23)
    painter.drawLine(0, 23, 31, 0)
    painter.end()
    image.setText(PLACEHOLDER_KEY, reason)
    return image


def decode_image(data: bytes, name: str) -> QImage:
    """``data`` as a picture, or a placeholder when it is none or larger than MAX_INLINE_PIXELS."""
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    size = reader.size()
    if size.isValid() and size.width() * size.height() > MAX_INLINE_PIXELS:
        return placeholder_image(f"{name} is {size.width()} x {size.height()} pixels: too large to show")
    image = reader.read()
    if image.isNull():
        return placeholder_image(f"{name} is not a picture Curator can show")
    return image


class SafeBrowser(QTextBrowser):
    """A QTextBrowser that loads nothing itself: pictures inside the wiki are read by the engine
    (:func:`~curator.engine.read.attachments.read_inline`) and handed over as data; every other
    reference (remote, outside the wiki, a device, a FIFO, too large) is a placeholder. Never
    ``None``: QTextDocument would then load the resource itself."""

    def __init__(self) -> None:
        super().__init__()
        self.base_dir: Path | None = None  # relative resources resolve from here (the page's folder)
        self.root: Path | None = None  # and must lie inside this (the wiki); base_dir when unset
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, type_: int, url: QUrl | str) -> object:
        url = QUrl(url) if isinstance(url, str) else url
        if type_ != int(QTextDocument.ResourceType.ImageResource):
            return QByteArray()  # style sheets, documents: never loaded
        name = url.toString()
        if self.base_dir is None:
            return placeholder_image(f"{name}: no page is open")
        found = read_inline(self.root or self.base_dir, self.base_dir, url.toString(QUrl.ComponentFormattingOption.FullyEncoded))
        if found.data is None:
            return placeholder_image(found.reason)
        return decode_image(found.data, unquote(url.path()))


#: One colour per agent (picked by a hash of its name, so an agent keeps its colour everywhere).
AGENT_COLOURS = ("#2e86c1", "#d35400", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#b7950b", "#e84393")
OPERATOR_COLOUR = "#7f8c8d"
UNCOMMITTED_COLOUR = "#ecf0f1"
BLAME_HEADERS = ("", "Who", "When", "Action", "Commit", "Line")
COL_GUTTER, COL_WHO, COL_WHEN, COL_ACTION, COL_COMMIT, COL_TEXT = range(6)
CommitRole = Qt.ItemDataRole.UserRole + 7


def actor_colour(actor: str | None) -> str:
    if not actor:
        return UNCOMMITTED_COLOUR
    if not actor.startswith(("agent:", "capability:")):
        return OPERATOR_COLOUR
    return AGENT_COLOURS[hashlib.sha1(actor.encode()).digest()[0] % len(AGENT_COLOURS)]


def blame_tooltip(b: BlameLine) -> str:
    lines = [f"{b.actor or 'not committed yet'}"]
    if b.commit:
        lines.append(f"{(b.date or '').replace('T', ' ').removesuffix('Z')} UTC")
        lines.append(f"{b.action or 'commit'} {b.commit[:12]}")
    if b.reviewer:
        lines.append(f"reviewed by {b.reviewer} (review inbox)")
    if b.origin:
        lines.append(f"first written in {b.origin}")
    if b.moved_by is not None:
        lines.append(f"brought here by {b.moved_by.action or 'commit'} {b.moved_by.commit[:12]} "
                     f"({b.moved_by.actor}, {b.moved_by.date[:10]})")
    text = b.text if len(b.text) <= 200 else b.text[:199] + "…"
    lines.append(f"line {b.line}: {text}")
    if b.commit:
        lines.append("Double-click to open the commit in History")
    # plain text: the station's tooltip filter (:mod:`curator.views.plain_tips`) shows it escaped, never as markup
    return "\n".join(lines)


class ProvenanceTable(QTableWidget):
    """The page's lines with who wrote each: a colour gutter per actor, date, action, commit."""

    commit_activated = Signal(str)

    def __init__(self) -> None:
        super().__init__(0, len(BLAME_HEADERS))
        self.setHorizontalHeaderLabels(list(BLAME_HEADERS))
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setWordWrap(False)
        self.setShowGrid(False)
        header = self.horizontalHeader()
        for col in (COL_WHO, COL_WHEN, COL_ACTION, COL_COMMIT):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_GUTTER, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(COL_TEXT, QHeaderView.ResizeMode.Stretch)
        self.setColumnWidth(COL_GUTTER, 8)
        self.verticalHeader().setDefaultSectionSize(20)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.mono = mono
        self.cellDoubleClicked.connect(self._activated)
        self.lines: list[BlameLine] = []

    def show_lines(self, lines: list[BlameLine]) -> None:
        self.lines = lines
        self.setRowCount(len(lines))
        previous: str | None = "\0"
        for r, b in enumerate(lines):
            colour = QColor(actor_colour(b.actor))
            same = b.commit == previous  # like git blame: the details once per run of lines
            previous = b.commit
            who = b.actor or "not committed"
            if b.reviewer:
                who += f" ✓{b.reviewer}"
            values = ("", "" if same else who, "" if same or not b.date else b.date[:10],
                      "" if same else (b.action or ("commit" if b.commit else "")),
                      "" if same or not b.commit else b.commit[:8], b.text)
            tip = blame_tooltip(b)
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setToolTip(tip)
                item.setData(CommitRole, b.commit or "")
                if c == COL_GUTTER:
                    item.setBackground(QBrush(colour))
                elif c == COL_WHO:
                    item.setForeground(QBrush(colour.darker(130)))
                elif c == COL_TEXT:
                    item.setFont(self.mono)
                self.setItem(r, c, item)

    def _activated(self, row: int, _col: int) -> None:
        item = self.item(row, 0)
        sha = item.data(CommitRole) if item is not None else ""
        if sha:
            self.commit_activated.emit(str(sha))


class PageView(QWidget):
    """Shows one page; emits ``link_activated`` for wikilinks (path, anchor) and missing pages."""

    page_link_activated = Signal(str, str)  # path, anchor
    missing_link_activated = Signal(str)  # target
    move_requested = Signal()  # "Move or rename…" on the shown page
    archive_requested = Signal()  # "Archive…" on the shown page
    provenance_requested = Signal()  # the Provenance tab wants the open page's blame
    commit_activated = Signal(str)  # a line's commit, to open in History
    save_requested = Signal()  # the edit bar's Save
    discard_requested = Signal()  # the edit bar's Discard

    def __init__(self) -> None:
        super().__init__()
        self.tabs = QTabWidget()
        self.browser = SafeBrowser()
        self.source = PageEditor()
        self.source.setReadOnly(True)
        self.edit_key: object = None  # the page the editor's buffer belongs to
        self.read_only_reason = ""
        self.provenance = ProvenanceTable()
        self.provenance_note = QLabel("Who wrote each line: a colour per agent (grey: the operator). "
                                      "Hover for date, action and reviewer; double-click opens the commit.")
        self.provenance_note.setWordWrap(True)
        holder = QWidget()
        box = QVBoxLayout(holder)
        box.setContentsMargins(2, 2, 2, 2)
        box.addWidget(self.provenance_note)
        box.addWidget(self.provenance, 1)
        self.tabs.addTab(self.browser, "Rendered")
        self.tabs.addTab(self._source_tab(), "Source")
        self.browser.document().setDefaultStyleSheet(STYLE)
        self.large_bar = QWidget()
        self.large_label = QLabel()
        self.large_label.setTextFormat(Qt.TextFormat.PlainText)
        self.show_all_button = QPushButton("Show all")
        self.show_all_button.clicked.connect(self.show_all)
        bar = QHBoxLayout(self.large_bar)
        bar.setContentsMargins(6, 3, 6, 3)
        bar.addWidget(self.large_label, 1)
        bar.addWidget(self.show_all_button)
        self.large_bar.setStyleSheet("QWidget { background: #fff4d6; color: #4a3b00; }")  # dark theme too
        self.large_bar.hide()
        self.tabs.addTab(holder, "Provenance")
        self._provenance_tab = holder
        self._blame_stale = True
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.large_bar)
        layout.addWidget(self.tabs)
        self.find_bar = FindBar(self.text_in_front)  # Ctrl+F (the wiki search is Ctrl+K)
        layout.addWidget(self.find_bar)
        # Esc anywhere in the page closes the bar (on only while it is open: Esc is not taken)
        self._escape = QShortcut(QKeySequence("Esc"), self)
        self._escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._escape.setEnabled(False)
        self._escape.activated.connect(self.find_bar.close_bar)
        self.find_bar.closed.connect(lambda: self._escape.setEnabled(False))
        self.browser.anchorClicked.connect(self._on_anchor)
        self._chunked: ChunkedPage | None = None
        self._html = ""  # the page shown, every callout open (folded again on each toggle)
        self._toggled: set[int] = set()  # callouts the operator folded or opened on this page
        self._next = 0  # next chunk to insert
        self._shown_bytes = 0
        self._limit: float = PREVIEW_BYTES
        self._source_left = ""
        self._source_shown = 0
        self._editable_when_loaded = False  # a large page's editor opens once it is loaded whole
        self._full_source = ""
        self._source_broken = False  # lines were broken for display: the buffer is not the page
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        self.browser.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.browser.customContextMenuRequested.connect(self._context_menu)
        self.context_menu: QMenu | None = None
        self.tabs.currentChanged.connect(lambda _i: self._maybe_request())
        self.provenance.commit_activated.connect(self.commit_activated)

    def _source_tab(self) -> QWidget:
        """The editor with a bar above it: unsaved changes, a change on disk, or why it is read-only."""
        self.edit_bar = QWidget()
        self.edit_label = QLabel()
        self.edit_label.setTextFormat(Qt.TextFormat.PlainText)
        self.edit_label.setWordWrap(True)
        self.save_button = QPushButton("Save")
        self.save_button.setToolTip("Save the page (Ctrl+S): one commit")
        self.save_button.clicked.connect(lambda: self.save_requested.emit())
        self.discard_button = QPushButton("Discard changes")
        self.discard_button.clicked.connect(lambda: self.discard_requested.emit())
        bar = QHBoxLayout(self.edit_bar)
        bar.setContentsMargins(6, 3, 6, 3)
        bar.addWidget(self.edit_label, 1)
        bar.addWidget(self.save_button)
        bar.addWidget(self.discard_button)
        self.edit_bar.hide()
        holder = QWidget()
        box = QVBoxLayout(holder)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.edit_bar)
        box.addWidget(self.source, 1)
        self._source_holder = holder
        self.source.modificationChanged.connect(lambda _m: self.update_edit_bar())
        return holder

    def source_in_front(self) -> bool:
        """Whether the Source tab (the editor, under its bar) is the tab in front."""
        return self.tabs.currentWidget() is self._source_holder

    def show_source(self) -> None:
        """Bring the Source tab (the editor) to the front and focus it."""
        self.tabs.setCurrentWidget(self._source_holder)
        self.source.setFocus()

    def update_edit_bar(self) -> None:
        editor = self.source
        if editor.dirty and editor.disk_changed:
            text, colour = ("Changed on disk while you were editing; your text is kept here. Save merges "
                            "both (you see the three versions first).", "#fdebd0")
        elif editor.dirty:
            text, colour = "Unsaved changes (Ctrl+S saves them as one commit).", "#eaf2f8"
        elif self.read_only_reason:
            text, colour = self.read_only_reason, "#f2f3f4"
        else:
            self.edit_bar.hide()
            return
        self.edit_label.setText(text)
        self.save_button.setVisible(editor.dirty)
        self.discard_button.setVisible(editor.dirty)
        self.edit_bar.setStyleSheet(f"QWidget {{ background: {colour}; }}")
        self.edit_bar.show()

    def _context_menu(self, pos: QPoint) -> None:
        """The text browser's own menu (copy, select all) plus the page's curation actions."""
        menu = self.browser.createStandardContextMenu(pos)
        menu.addSeparator()
        move = menu.addAction("Move or rename…", self.move_requested.emit)
        move.setShortcut(QKeySequence("F2"))
        menu.addAction("Archive…", self.archive_requested.emit)
        menu.popup(self.browser.viewport().mapToGlobal(pos))
        self.context_menu = menu  # kept for tests

    def show_page(self, html: str | ChunkedPage, source: str, base_dir: Path | None,
                  root: Path | None = None, *, key: object = None, editable: bool = False,
                  read_only_reason: str = "") -> None:
        """Show a page: ``html`` at once, or a :class:`ChunkedPage` chunk by chunk. Images load
        from ``base_dir`` (the page's folder) and only from inside ``root`` (the wiki: an
        embedded ``Attachments/shot.png`` lies outside the page's folder).

        ``key`` names the page; the Source tab is its editor when ``editable``. The same page shown
        again (changed on disk) while its buffer has unsaved edits keeps the buffer: it is marked
        as changed on disk, and saving it merges (the window's save, :mod:`curator.views.shell.editing`).
        """
        self._timer.stop()
        self._chunked = None
        self.large_bar.hide()
        self.browser.base_dir = base_dir
        self.browser.root = root
        self._blame_stale = True
        self._maybe_request()
        keep = self.source.dirty and key is not None and key == self.edit_key
        if key is None or key != self.edit_key:
            self._toggled = set()  # (the same page shown again, restyled or changed, keeps its folds)
        self.edit_key = key
        self.read_only_reason = read_only_reason
        self._html = html if isinstance(html, str) else ""
        if isinstance(html, str):
            self.browser.setHtml(self._folded_html())
            if keep:
                self.source.disk_changed = self.source.disk_changed or source != self.source.base
            else:
                self._open_source(source, editable)
            self.update_edit_bar()
            if self.find_bar.isVisible():
                self.find_bar.search()  # the matches of the page now shown
            return
        self._chunked, self._next, self._shown_bytes, self._limit = html, 0, 0, PREVIEW_BYTES
        self.browser.setHtml("<html><body></body></html>")
        if keep:  # (a page edited here is small enough to be loaded whole: see _source_done)
            self.source.disk_changed = self.source.disk_changed or source != self.source.base
            source = ""
        else:
            self._open_source("", False)
            self._editable_when_loaded = editable
            self._full_source = source
        self._source_left, self._source_shown = source, 0
        self.update_edit_bar()
        self._step()  # the first chunk now, the rest one per event-loop turn
        if self._pending() or self._source_pending():
            self._timer.start()

    def text_in_front(self) -> QTextEdit | QPlainTextEdit:
        """The text widget find-in-page searches: the source when it is in front, else the page."""
        return self.source if self.source_in_front() else self.browser

    def find_in_page(self) -> None:
        if self.tabs.currentWidget() is self._provenance_tab:
            self.tabs.setCurrentWidget(self.browser)
        self.find_bar.open_bar()
        self._escape.setEnabled(True)

    @property
    def loading(self) -> bool:
        """Whether chunks of a large page are still being inserted."""
        return self._timer.isActive()

    def _pending(self) -> bool:
        page = self._chunked
        return page is not None and self._next < len(page.chunks) and self._shown_bytes < self._limit

    def _step(self) -> None:
        page = self._chunked
        if page is None:
            self._timer.stop()
            return
        if self._pending():
            fragment = page.render(self._next)
            cursor = QTextCursor(self.browser.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertHtml(fragment)
            self._shown_bytes += page.sizes[self._next]
            self._next += 1
        if self._source_pending():
            piece, self._source_left = (self._source_left[:SOURCE_CHUNK_CHARS],
                                        self._source_left[SOURCE_CHUNK_CHARS:])
            self._source_shown += len(piece)
            self._append_source(piece)
        self._update_bar()
        if not self._pending() and not self._source_pending():
            self._timer.stop()

    def _open_source(self, source: str, editable: bool) -> None:
        """``source`` as the editor's saved text; keeps the scroll position and cursor when the
        text is what the editor holds already (the page shown again after a save)."""
        self._editable_when_loaded = False
        self._full_source = ""
        self._source_broken = False
        if self.source.toPlainText() != source or self.source.base != source:
            self.source.open_text(source)
        self.source.disk_changed = False
        self.source.document().setModified(False)
        self.source.setReadOnly(not editable)

    def _source_pending(self) -> bool:
        return bool(self._source_left) and self._source_shown < self._limit

    def _append_source(self, piece: str) -> None:
        # Lines longer than MAX_DISPLAY_LINE are shown broken (laying out one 10 MB line blocks).
        if max((len(line) for line in piece.split("\n")), default=0) > MAX_DISPLAY_LINE:
            piece = "\n".join(line[i:i + MAX_DISPLAY_LINE] for line in piece.split("\n")
                              for i in range(0, max(len(line), 1), MAX_DISPLAY_LINE))
            self._source_broken = True  # not the page's text any more: never saved
        cursor = QTextCursor(self.source.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(piece)
        self.source.document().setModified(False)
        if not self._source_left and self._editable_when_loaded and not self._source_broken:
            # the whole page is in the editor, exactly: it may be edited and saved
            self.source.base = self._full_source
            self.source.setReadOnly(False)

    def _update_bar(self) -> None:
        page = self._chunked
        if page is None:
            return
        if self._next >= len(page.chunks):
            self.large_bar.hide()
            return
        loading = " (loading…)" if self._pending() else ""
        self.large_label.setText(f"This page is large ({_size(page.total_bytes)}): showing the first "
                                 f"{_size(self._shown_bytes)}{loading}")
        self.show_all_button.setVisible(self._limit != float("inf"))
        self.large_bar.show()

    def show_all(self) -> None:
        """Go on rendering a large page to its end (still one chunk per event-loop turn)."""
        if self._chunked is None:
            return
        self._limit = float("inf")
        self._update_bar()
        self._timer.start()

    def show_provenance(self) -> None:
        self.tabs.setCurrentWidget(self._provenance_tab)

    def show_blame(self, lines: list[BlameLine]) -> None:
        self.provenance.show_lines(lines)

    def _maybe_request(self) -> None:
        # blame runs git: only for the tab in front, once per page shown
        if self._blame_stale and self.tabs.currentWidget() is self._provenance_tab:
            self._blame_stale = False
            self.provenance_requested.emit()

    def _folded_html(self) -> str:
        return callouts.fold(self._html, callouts.folded_at_first(self._html) ^ self._toggled)

    def toggle_callout(self, number: int) -> None:
        """Fold callout ``number`` of the page shown, or open it (the view stays where it was)."""
        if not self._html:
            return
        self._toggled ^= {number}
        bar = self.browser.verticalScrollBar()
        at = bar.value()
        self.browser.setHtml(self._folded_html())
        bar.setValue(at)

    def _on_anchor(self, url: QUrl) -> None:
        scheme = url.scheme()
        if scheme == callouts.CALLOUT_SCHEME:
            if url.path().isdigit():
                self.toggle_callout(int(url.path()))
        elif scheme == PAGE_SCHEME:
            self.page_link_activated.emit(unquote(url.path()), unquote(url.fragment()))
        elif scheme == MISSING_SCHEME:
            self.missing_link_activated.emit(unquote(url.path()))
        elif scheme in EXTERNAL_SCHEMES:
            QDesktopServices.openUrl(url)  # only ever on an explicit click
        elif url.hasFragment() and not scheme:
            self.browser.scrollToAnchor(url.fragment())


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{max(1, round(n / 1024))} KB"
