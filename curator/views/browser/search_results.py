"""The browser's search results: pages ranked by the engine's score (the order of ``curator
search``), each with its title, path, layer, trust and a snippet (as plain text, not markdown) whose matched
words are marked.

The engine marks matches in snippets ``«so»`` (:data:`curator.engine.search.index.HIGHLIGHT`); here they
are drawn highlighted. Page text is escaped before it becomes rich text: a snippet never renders
as markup.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QApplication,
    QListView,
    QStyle,
    QStyleOptionViewItem,
    QWidget,
)

from curator.engine.search.display import format_score, plain_snippet
from curator.engine.search.index import HIGHLIGHT, SearchHit
from curator.views.plain_tips import PlainTipDelegate
from curator.views.widgets import ListView

_Index = QModelIndex | QPersistentModelIndex
#: The (wiki, path) key of a result's page.
KeyRole = Qt.ItemDataRole.UserRole + 21
MARK_BG = "#fde68a"
LAYER_COLOURS = {"identity": "#8e44ad", "core": "#2471a3", "context": "#229954", "deep": "#7f8c8d"}


@dataclass(slots=True)
class Result:
    wiki: int
    wiki_label: str
    hit: SearchHit

    @property
    def key(self) -> tuple[int, str]:
        return (self.wiki, self.hit.path)


def marked_html(snippet: str) -> str:
    """``snippet`` escaped, its ``«matches»`` highlighted."""
    start, end = HIGHLIGHT
    out: list[str] = []
    rest = snippet
    while True:
        i = rest.find(start)
        j = rest.find(end, i + 1) if i >= 0 else -1
        if i < 0 or j < 0:
            out.append(html.escape(rest))
            break
        out.append(html.escape(rest[:i]))
        out.append(f'<span style="background-color:{MARK_BG};">{html.escape(rest[i + 1:j])}</span>')
        rest = rest[j + 1:]
    return "".join(out)


def result_html(result: Result, show_wiki: bool) -> str:
    hit = result.hit
    colour = LAYER_COLOURS.get(hit.layer, "#7f8c8d")
    where = f"{html.escape(result.wiki_label)} · " if show_wiki else ""
    score = "linked from a hit" if hit.expanded else f"score {format_score(hit.score)}"
    return (f'<div><b>{html.escape(hit.title)}</b><br>'
            f'<span style="color:#666666;">{where}{html.escape(hit.path)} · '
            f'<span style="color:{colour};">{html.escape(hit.layer)}</span> · trust {hit.trust:.2f} · '
            f'{score}</span><br>'
            f'<span style="color:#222222;">{marked_html(plain_snippet(hit.snippet))}</span></div>')


#: Result rows laid out per event-loop turn (see ResultsList).
RESULTS_BATCH = 10


class ResultsModel(QAbstractListModel):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[Result] = []
        self.show_wiki = False

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.results)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.results):
            return None
        result = self.results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return result_html(result, self.show_wiki)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{result.hit.title}\n{result.hit.path}"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{result.hit.title}, {result.hit.path}"
        if role == KeyRole:
            return result.key
        return None

    def set_results(self, results: list[Result]) -> None:
        self.beginResetModel()
        self.results = results
        self.endResetModel()


class RichDelegate(PlainTipDelegate):
    """Draws an item's display text as (escaped, built-here) rich text, wrapped to the width."""

    def _document(self, option: QStyleOptionViewItem, index: _Index) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setHtml(str(index.data(Qt.ItemDataRole.DisplayRole) or ""))
        doc.setTextWidth(max(120, option.rect.width() - 8))
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        doc = self._document(option, index)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        if opt.state & QStyle.StateFlag.State_Selected:
            ctx.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(
                QPalette.ColorRole.HighlightedText))
        painter.save()
        rect = option.rect
        painter.translate(rect.left() + 4, rect.top() + 3)
        ctx.clip = QRectF(0, 0, rect.width() - 8, rect.height() - 6)
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        doc = self._document(option, index)
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 8)


class ResultsList(ListView):
    """The ranked results, one rich row each, best first."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results_model = ResultsModel()
        self.setModel(self.results_model)
        self.setItemDelegate(RichDelegate(self))
        self.setWordWrap(True)
        self.setUniformItemSizes(False)
        self.setAlternatingRowColors(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        # each row's size comes from laying out its rich text (~1 ms): the 100 results are laid
        # out a few per event-loop turn, not all in the turn that shows them
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(RESULTS_BATCH)

    def show_results(self, results: list[Result], show_wiki: bool) -> None:
        self.results_model.show_wiki = show_wiki
        self.results_model.set_results(results)
        self.scrollToTop()

    def result_keys(self) -> list[tuple[int, str]]:
        return [r.key for r in self.results_model.results]
