"""The page view: the rendered page and its source, with back/forward navigation.

Only local resources inside the wiki are ever loaded; remote images and anything else are
refused, and external links open in the system browser only when clicked.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFont
from PySide6.QtWidgets import QPlainTextEdit, QTabWidget, QTextBrowser, QVBoxLayout, QWidget

from .render import MISSING_SCHEME, PAGE_SCHEME

EXTERNAL_SCHEMES = ("http", "https", "mailto")


class SafeBrowser(QTextBrowser):
    """A QTextBrowser that never fetches remote resources."""

    def __init__(self) -> None:
        super().__init__()
        self.base_dir: Path | None = None
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, type_: int, url: QUrl | str) -> object:
        url = QUrl(url) if isinstance(url, str) else url
        if url.scheme() in ("", "file") and self.base_dir is not None:
            local = (self.base_dir / unquote(url.path())).resolve()
            root = self.base_dir.resolve()
            if local.is_file() and (local == root or root in local.parents):
                return super().loadResource(type_, QUrl.fromLocalFile(str(local)))
        return None  # remote images, scripts, style sheets: never loaded


class PageView(QWidget):
    """Shows one page; emits ``link_activated`` for wikilinks (path, anchor) and missing pages."""

    page_link_activated = Signal(str, str)  # path, anchor
    missing_link_activated = Signal(str)  # target

    def __init__(self) -> None:
        super().__init__()
        self.tabs = QTabWidget()
        self.browser = SafeBrowser()
        self.source = QPlainTextEdit()
        self.source.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.source.setFont(mono)
        self.tabs.addTab(self.browser, "Rendered")
        self.tabs.addTab(self.source, "Source")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.browser.anchorClicked.connect(self._on_anchor)

    def show_page(self, html: str, source: str, base_dir: Path | None) -> None:
        self.browser.base_dir = base_dir
        self.browser.setHtml(html)
        self.source.setPlainText(source)

    def _on_anchor(self, url: QUrl) -> None:
        scheme = url.scheme()
        if scheme == PAGE_SCHEME:
            self.page_link_activated.emit(unquote(url.path()), unquote(url.fragment()))
        elif scheme == MISSING_SCHEME:
            self.missing_link_activated.emit(unquote(url.path()))
        elif scheme in EXTERNAL_SCHEMES:
            QDesktopServices.openUrl(url)  # only ever on an explicit click
        elif url.hasFragment() and not scheme:
            self.browser.scrollToAnchor(url.fragment())
