"""The side panel of the open page: its properties (editable) and its links.

Every edit is one engine action and one git commit: the panel only emits ``edit_requested``;
the main window sends it through the wiki's writer queue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.page import LAYERS, Page

TAG_RE = re.compile(r"^[\w][\w/-]*$")
PathRole = Qt.ItemDataRole.UserRole + 1


@dataclass(slots=True)
class LinkInfo:
    """Links of the open page, gathered off the GUI thread."""

    #: one entry per linking page: path, title, and each (line, context) where it links (line 0:
    #: its ``related:`` list)
    backlinks: list[tuple[str, str, list[tuple[int, str]]]] = field(default_factory=list)
    outgoing: list[tuple[str, str | None, str]] = field(default_factory=list)  # target, path, title
    mentions: list[tuple[str, str, str]] = field(default_factory=list)  # path, title, context


def parse_tags(text: str) -> tuple[list[str], str | None]:
    """Tags typed by the operator: comma or space separated, ``#`` optional. (tags, error)."""
    tags: list[str] = []
    for raw in re.split(r"[,\s]+", text.strip()):
        tag = raw.lstrip("#")
        if not tag:
            continue
        if not TAG_RE.match(tag):
            return [], f"'{raw}' is not a valid tag (letters, digits, '_', '-', '/')"
        if tag.casefold() not in {t.casefold() for t in tags}:
            tags.append(tag)
    return tags, None


class PropertiesForm(QWidget):
    #: (property name, new value) — the main window turns it into an action
    edit_requested = Signal(str, object)

    def __init__(self) -> None:
        super().__init__()
        self.page: Page | None = None
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.layer = QComboBox()
        self.layer.addItems(list(LAYERS))
        self.trust = QDoubleSpinBox()
        self.trust.setRange(0.0, 1.0)
        self.trust.setSingleStep(0.05)
        self.trust.setDecimals(2)
        self.trust.setKeyboardTracking(False)
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("comma-separated, e.g. finance, policy")
        self.do_not_inject = QCheckBox("never inject into agents' context")
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b;")
        self.error.setWordWrap(True)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow("Layer", self.layer)
        form.addRow("Trust", self.trust)
        form.addRow("Tags", self.tags)
        form.addRow("", self.do_not_inject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.details)
        layout.addStretch(1)
        self.layer.activated.connect(self._layer_edited)
        self.trust.editingFinished.connect(self._trust_edited)
        self.tags.editingFinished.connect(self._tags_edited)
        self.do_not_inject.clicked.connect(self._dni_edited)
        self.setEnabled(False)

    def show_page(self, page: Page | None) -> None:
        self.page = page
        self.error.clear()
        self.setEnabled(page is not None)
        if page is None:
            self.header.setText("No page open")
            self.details.clear()
            return
        self.header.setText(f"<b>{_esc(page.title)}</b><br><small>{_esc(page.path)}</small>")
        self.layer.setCurrentText(page.layer)
        self.trust.blockSignals(True)
        self.trust.setValue(page.trust)
        self.trust.blockSignals(False)
        own = frontmatter_tags(page)
        self.tags.setText(", ".join(own))
        body_tags = [t for t in page.tags if t.casefold() not in {o.casefold() for o in own}]
        self.tags.setToolTip("Tags in the frontmatter." + (
            f" Also tagged in the text: {' '.join('#' + t for t in body_tags)}" if body_tags else ""))
        self.do_not_inject.setChecked(page.do_not_inject)
        rows = [("source", page.source_type), ("author", page.author or "—"),
                ("created", page.created or "—"), ("updated", page.updated or "—"),
                ("aliases", ", ".join(page.aliases) or "—"), ("bytes", str(page.size))]
        problems = "".join(f"<li>{_esc(p.message)}</li>" for p in page.problems)
        self.details.setText(
            "<table>" + "".join(f"<tr><td><i>{k}</i>&nbsp;</td><td>{_esc(v)}</td></tr>" for k, v in rows)
            + "</table>" + (f"<p style='color:#c0392b'>Problems:</p><ul>{problems}</ul>" if problems else "")
        )

    def _layer_edited(self) -> None:
        if self.page and self.layer.currentText() != self.page.layer:
            self.edit_requested.emit("layer", self.layer.currentText())

    def _trust_edited(self) -> None:
        value = round(self.trust.value(), 2)
        if self.page and abs(value - self.page.trust) > 1e-9:
            self.edit_requested.emit("trust", value)

    def _tags_edited(self) -> None:
        if not self.page:
            return
        tags, problem = parse_tags(self.tags.text())
        if problem:
            self.error.setText(problem)
            return
        self.error.clear()
        if [t.casefold() for t in tags] != [t.casefold() for t in frontmatter_tags(self.page)]:
            self.edit_requested.emit("tags", tags)

    def _dni_edited(self, checked: bool) -> None:
        if self.page and checked != self.page.do_not_inject:
            self.edit_requested.emit("do_not_inject", checked)


def frontmatter_tags(page: Page) -> list[str]:
    """The tags written in the page's frontmatter (body ``#tags`` are edited in the text)."""
    raw = page.meta.get("tags")
    items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return [str(t).strip().lstrip("#") for t in items if str(t).strip().lstrip("#")]


def _esc(text: Any) -> str:
    import html

    return html.escape(str(text))


#: Links listed per section: a page with 100,000 links must not build 100,000 tree items.
MAX_LINK_ITEMS = 500


class LinksPanel(QWidget):
    open_requested = Signal(str)  # path

    def __init__(self) -> None:
        super().__init__()
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self.tree.itemActivated.connect(self._activated)

    def show_links(self, info: LinkInfo | None) -> None:
        self.tree.clear()
        if info is None:
            return
        back = QTreeWidgetItem([f"Backlinks ({len(info.backlinks)})"])
        for source, title, places in info.backlinks[:MAX_LINK_ITEMS]:
            lines = [str(line) for line, _c in places if line > 0]
            where = f"{source}:{','.join(lines)}" if lines else source
            item = QTreeWidgetItem([f"{title}  —  {where}"])
            item.setData(0, PathRole, source)
            item.setToolTip(0, "\n".join(context for _l, context in places))
            for line, context in places:
                ctx = QTreeWidgetItem([f"{line}: {context}" if line > 0 else "related: (in the frontmatter)"])
                ctx.setData(0, PathRole, source)
                ctx.setForeground(0, self.palette().placeholderText())
                item.addChild(ctx)
            back.addChild(item)
        out = QTreeWidgetItem([f"Outgoing links ({len(info.outgoing)})"])
        for target, target_path, title in info.outgoing[:MAX_LINK_ITEMS]:
            if target_path is None:
                item = QTreeWidgetItem([f"{target}  —  not yet written"])
                item.setForeground(0, Qt.GlobalColor.darkRed)
            else:
                item = QTreeWidgetItem([f"{title}  —  {target_path}"])
                item.setData(0, PathRole, target_path)
            out.addChild(item)
        men = QTreeWidgetItem([f"Unlinked mentions ({len(info.mentions)})"])
        for path, title, context in info.mentions:
            item = QTreeWidgetItem([f"{title}  —  {path}"])
            item.setData(0, PathRole, path)
            item.setToolTip(0, context)
            men.addChild(item)
        for top, items in ((back, info.backlinks), (out, info.outgoing)):
            if len(items) > MAX_LINK_ITEMS:
                top.addChild(QTreeWidgetItem([f"… and {len(items) - MAX_LINK_ITEMS:,} more (see the page's "
                                              "source, or `curator neighbors`)"]))
        for top in (back, out, men):
            self.tree.addTopLevelItem(top)
            top.setExpanded(True)
            for i in range(top.childCount()):
                child = top.child(i)
                if child is not None:
                    child.setExpanded(True)

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        path = item.data(0, PathRole)
        if path:
            self.open_requested.emit(str(path))


HeadingRole = Qt.ItemDataRole.UserRole + 2
#: Tags listed at most (the most used; the filter finds the rest).
MAX_TAG_ITEMS = 1000
TagRole = Qt.ItemDataRole.UserRole + 3


def document_headings(doc: QTextDocument) -> list[tuple[int, str, int]]:
    """(level, text, block number) of the headings of a rendered page, in order; headings of
    embedded pages (inside their quote block) are theirs, not the page's, and are left out."""
    out: list[tuple[int, str, int]] = []
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        level = fmt.headingLevel()
        if level > 0 and fmt.leftMargin() == 0 and block.text().strip():
            out.append((level, block.text().strip(), block.blockNumber()))
        block = block.next()
    return out


class OutlinePanel(QWidget):
    """The headings of the open page as a tree; activating one scrolls the page to it."""

    heading_requested = Signal(int)  # block number in the rendered page

    def __init__(self) -> None:
        super().__init__()
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.empty = QLabel("This page has no headings.")
        self.empty.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        layout.addWidget(self.empty)
        self.tree.itemClicked.connect(self._activated)
        self.tree.itemActivated.connect(self._activated)
        self.headings: list[tuple[int, str, int]] = []

    def show_headings(self, headings: list[tuple[int, str, int]]) -> None:
        if headings == self.headings:
            return
        self.headings = headings
        self.tree.clear()
        stack: list[tuple[int, QTreeWidgetItem]] = []
        for level, text, block in headings:
            item = QTreeWidgetItem([text])
            item.setData(0, HeadingRole, block)
            item.setToolTip(0, text)
            while stack and stack[-1][0] >= level:
                stack.pop()
            if stack:
                stack[-1][1].addChild(item)
            else:
                self.tree.addTopLevelItem(item)
            stack.append((level, item))
        self.tree.expandAll()
        self.empty.setVisible(not headings)

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        block = item.data(0, HeadingRole)
        if block is not None:
            self.heading_requested.emit(int(block))


class TagPanel(QWidget):
    """Every tag of the open wikis with its page count; activating one filters the browser."""

    tag_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tags")
        self.filter.setClearButtonEnabled(True)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Tag", "Pages"])
        self.tree.setRootIsDecorated(False)
        self.tree.setSortingEnabled(False)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree)
        self.counts: dict[str, int] = {}
        self.filter.textChanged.connect(lambda _t: self._fill())
        self.tree.itemClicked.connect(self._activated)
        self.tree.itemActivated.connect(self._activated)

    def show_counts(self, counts: dict[str, int]) -> None:
        if counts != self.counts:
            self.counts = dict(counts)
            self._fill()

    def _fill(self) -> None:
        needle = self.filter.text().strip().lstrip("#").casefold()
        self.tree.clear()
        items = sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0].casefold()))
        shown = [(tag, count) for tag, count in items if not needle or needle in tag.casefold()]
        for tag, count in shown[:MAX_TAG_ITEMS]:
            item = QTreeWidgetItem([f"#{tag}", f"{count:,}"])
            item.setData(0, TagRole, tag)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(0, f"{count:,} page{'' if count == 1 else 's'} tagged #{tag}: click to show them")
            self.tree.addTopLevelItem(item)
        if len(shown) > MAX_TAG_ITEMS:
            self.tree.addTopLevelItem(QTreeWidgetItem([f"… and {len(shown) - MAX_TAG_ITEMS:,} more "
                                                       "(type in the filter)", ""]))

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        tag = item.data(0, TagRole)
        if tag:
            self.tag_requested.emit(str(tag))


class SidePanel(QTabWidget):
    def __init__(self) -> None:
        super().__init__()
        self.properties = PropertiesForm()
        self.links = LinksPanel()
        self.outline = OutlinePanel()
        self.tags = TagPanel()
        self.addTab(self.properties, "Properties")
        self.addTab(self.links, "Links")
        self.addTab(self.outline, "Outline")
        self.addTab(self.tags, "Tags")
