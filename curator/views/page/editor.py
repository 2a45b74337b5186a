"""The page editor: the Source tab, as a plain-text markdown editor.

Markdown is highlighted as it is typed (:class:`MarkdownHighlighter`: frontmatter, headings,
bullets, emphasis, code, wikilinks and links, tags, ``%%comments%%``, append's ``(added …)``
stamps) and typing ``[[`` opens a completion list of the wiki's pages (title and path, matched
anywhere in either); choosing one inserts the name a link resolves by (the file name, or the path
when several pages share it) and the closing ``]]``.

The editor only holds text: saving is the engine's ``edit`` action, run by the window
(:mod:`curator.views.shell.editing`). It remembers the text it opened (``base``), which the save compares with the
file on disk, so a change made meanwhile is merged rather than overwritten.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRegularExpression, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeyEvent,
    QStandardItem,
    QStandardItemModel,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit, QWidget

#: Data role of a completion's text to insert (the display role shows "Title — path").
InsertRole = Qt.ItemDataRole.UserRole + 11
#: At most this many characters between ``[[`` and the cursor still count as a link being typed.
MAX_LINK_PREFIX = 200

_OPEN_LINK = re.compile(r"\[\[([^\[\]|#\n]{0," + str(MAX_LINK_PREFIX) + r"})$")


def _format(colour: str, *, bold: bool = False, italic: bool = False, mono: bool = False,
            background: str | None = None) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    if italic:
        fmt.setFontItalic(True)
    if mono:
        fmt.setFontFixedPitch(True)
    if background:
        fmt.setBackground(QColor(background))
    return fmt


class MarkdownHighlighter(QSyntaxHighlighter):
    """Markdown as Obsidian's source mode colours it, one block (line) at a time.

    Block states carry what spans lines: the frontmatter (only from the document's first line)
    and fenced code (```` ``` ```` or ``~~~``), inside which nothing else is highlighted.
    """

    NORMAL, FRONTMATTER, FENCE = 0, 1, 2

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.formats = {
            "heading": _format("#1f4e79", bold=True),
            "front": _format("#7d6608", background="#fbf6e4"),
            "fence": _format("#6c3483", mono=True, background="#f4f1f8"),
            "code": _format("#6c3483", mono=True, background="#f4f1f8"),
            "wikilink": _format("#1f6fb2"),
            "link": _format("#1f6fb2", italic=True),
            "bullet": _format("#b9770e", bold=True),
            "quote": _format("#5d6d7e", italic=True),
            "bold": _format("#17202a", bold=True),
            "italic": _format("#17202a", italic=True),
            "tag": _format("#117a65"),
            "comment": _format("#95a5a6", italic=True),
            "stamp": _format("#95a5a6"),
        }
        rules = [
            (r"^\s*(?:[-*+]|\d+[.)])(?=\s)", "bullet"),
            (r"^\s*>.*$", "quote"),
            (r"\*\*[^*\n]+\*\*|__[^_\n]+__", "bold"),
            (r"(?<![*\w])\*[^*\s][^*\n]*\*(?![*\w])|(?<![_\w])_[^_\s][^_\n]*_(?![_\w])", "italic"),
            (r"(?<![\w&/])#\w[\w/-]*", "tag"),
            (r"\[[^\[\]\n]*\]\([^)\n]*\)", "link"),
            (r"!?\[\[[^\[\]\n]+\]\]", "wikilink"),
            (r"\(added \d{4}-\d{2}-\d{2}\)", "stamp"),
            (r"`[^`\n]+`", "code"),
            (r"%%.*?%%", "comment"),
        ]
        unicode = QRegularExpression.PatternOption.UseUnicodePropertiesOption
        self.rules = [(QRegularExpression(pattern, unicode), name) for pattern, name in rules]
        for regex, _name in self.rules:
            assert regex.isValid(), regex.pattern()
        self.heading = QRegularExpression(r"^#{1,6}\s.*$")
        self.fence = QRegularExpression(r"^\s{0,3}(```|~~~)")

    def highlightBlock(self, text: str) -> None:
        previous = self.previousBlockState()
        block = self.currentBlock()
        if block.blockNumber() == 0 and text.rstrip() == "---":
            self.setFormat(0, len(text), self.formats["front"])
            self.setCurrentBlockState(self.FRONTMATTER)
            return
        if previous == self.FRONTMATTER:
            self.setFormat(0, len(text), self.formats["front"])
            self.setCurrentBlockState(self.NORMAL if text.rstrip() == "---" else self.FRONTMATTER)
            return
        if self.fence.match(text).hasMatch():
            self.setFormat(0, len(text), self.formats["fence"])
            self.setCurrentBlockState(self.NORMAL if previous == self.FENCE else self.FENCE)
            return
        if previous == self.FENCE:
            self.setFormat(0, len(text), self.formats["fence"])
            self.setCurrentBlockState(self.FENCE)
            return
        self.setCurrentBlockState(self.NORMAL)
        if self.heading.match(text).hasMatch():
            self.setFormat(0, len(text), self.formats["heading"])
            return
        for regex, name in self.rules:
            matches = regex.globalMatch(text)
            while matches.hasNext():
                m = matches.next()
                self.setFormat(m.capturedStart(), m.capturedLength(), self.formats[name])


@dataclass(slots=True, frozen=True)
class LinkChoice:
    """One page the ``[[`` completion offers."""

    title: str
    path: str
    insert: str  # the link target written into the page


def link_choices(paths_titles: Iterable[tuple[str, str]]) -> list[LinkChoice]:
    """A completion per page: its file name as the link target, or its path (without ``.md``)
    when several pages share that name (a bare name would resolve to only one of them)."""
    items = sorted(paths_titles, key=lambda pt: (pt[1].casefold(), pt[0]))
    stems: dict[str, int] = {}
    for path, _title in items:
        stem = posixpath.splitext(posixpath.basename(path))[0].casefold()
        stems[stem] = stems.get(stem, 0) + 1
    out = []
    for path, title in items:
        stem = posixpath.splitext(posixpath.basename(path))[0]
        insert = stem if stems[stem.casefold()] == 1 else posixpath.splitext(path)[0]
        out.append(LinkChoice(title, path, insert))
    return out


class PageEditor(QPlainTextEdit):
    """The Source tab's editor (see the module doc)."""

    #: The operator picked a completion (the inserted link target).
    link_completed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(mono)
        self.setTabChangesFocus(False)
        self.highlighter = MarkdownHighlighter(self.document())
        self.base: str | None = None  # the text as opened (what a save compares the disk with)
        self.disk_changed = False  # the file changed on disk while this buffer had edits
        self.choices_model = QStandardItemModel(self)
        self.completer = QCompleter(self.choices_model, self)
        self.completer.setWidget(self)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.setMaxVisibleItems(12)
        self.completer.activated[QModelIndex].connect(self._insert_completion)  # type: ignore[index]
        self._choices_stale = True
        self._choices_source: Iterable[tuple[str, str]] = ()

    # --- the buffer -----------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        """Edited since it was opened or last saved."""
        return self.document().isModified() and not self.isReadOnly()

    def open_text(self, text: str) -> None:
        """Show ``text`` as the page's saved text (not modified)."""
        self.setPlainText(text)
        self.base = text
        self.disk_changed = False
        self.document().setModified(False)

    def mark_saved(self, text: str) -> None:
        """``text`` was saved: it is the new base; the buffer is clean unless edited since."""
        self.base = text
        self.disk_changed = False
        if self.toPlainText() == text:
            self.document().setModified(False)

    # --- [[ completion ----------------------------------------------------------------------------
    def set_pages(self, paths_titles: Iterable[tuple[str, str]]) -> None:
        """The pages ``[[`` offers (read, and built into the completer, only when first needed:
        32,000 of them cost a page shown 20 ms on the GUI thread, for a completer rarely used)."""
        self._choices_source = paths_titles
        self._choices_stale = True

    def _fill_choices(self) -> None:
        if not self._choices_stale:
            return
        self._choices_stale = False
        self.choices_model.clear()
        for choice in link_choices(self._choices_source):
            item = QStandardItem(f"{choice.title} — {choice.path}")
            item.setData(choice.insert, InsertRole)
            item.setToolTip(choice.path)
            self.choices_model.appendRow(item)

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None  # a QCompleter always has its popup
        return popup

    def link_prefix(self) -> str | None:
        """What was typed after an unclosed ``[[`` before the cursor on this line, or None."""
        cursor = self.textCursor()
        line = cursor.block().text()[: cursor.positionInBlock()]
        m = _OPEN_LINK.search(line)
        return m.group(1) if m else None

    def keyPressEvent(self, e: QKeyEvent) -> None:
        popup = self._popup()
        if popup.isVisible() and e.key() in (Qt.Key.Key_Enter, Qt.Key.Key_Return, Qt.Key.Key_Tab,
                                             Qt.Key.Key_Escape, Qt.Key.Key_Backtab):
            e.ignore()  # the completer's popup handles these
            return
        super().keyPressEvent(e)
        if self.isReadOnly():
            return
        prefix = self.link_prefix()
        if prefix is None or not e.text():
            if prefix is None:
                popup.hide()
            return
        self.show_completions(prefix)

    def show_completions(self, prefix: str) -> None:
        self._fill_choices()
        if prefix != self.completer.completionPrefix():
            self.completer.setCompletionPrefix(prefix)
        if self.completer.completionCount() == 0:
            self._popup().hide()
            return
        popup = self._popup()
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        rect.setWidth(min(520, max(320, self.viewport().width() // 2)))
        self.completer.complete(rect)

    def _insert_completion(self, index: QModelIndex | QPersistentModelIndex) -> None:
        insert = str(index.data(InsertRole) or "")
        if not insert:
            return
        cursor = self.textCursor()
        prefix = self.link_prefix() or ""
        cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, len(prefix))
        after = cursor.block().text()[cursor.positionInBlock() + len(prefix):][:2]
        cursor.insertText(insert if after == "]]" else insert + "]]")
        if after == "]]":
            cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.MoveAnchor, 2)
        self.setTextCursor(cursor)
        self._popup().hide()
        self.link_completed.emit(insert)
