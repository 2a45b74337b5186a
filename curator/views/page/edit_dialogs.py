"""Dialogs of the page editor: the three-way view of a save that met a change made on disk, the
"Create page" dialog (a link not yet written, File ▸ New page) and the unsaved-changes prompt."""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from curator.models.dedup import diff_html
from curator.views.page.editor import MarkdownHighlighter
from curator.views.plain_tips import set_tip

CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ")


def has_markers(text: str) -> bool:
    return any(line.startswith(CONFLICT_MARKERS) or line == "=======" for line in text.split("\n"))


def _diff_pane(a: str, b: str, tip: str) -> QTextBrowser:
    pane = QTextBrowser()
    pane.setOpenLinks(False)
    pane.setHtml(diff_html(a, b, context=3)[0])
    set_tip(pane, tip)
    return pane


class ConflictDialog(QDialog):
    """A save met a change made on disk since the page was opened: the three-way difference.

    Top: what you changed (as opened -> yours) and what changed on disk (as opened -> on disk),
    side by side. Bottom: the result that keeps both (the facts added on disk merged in where they
    do not overlap your edits), editable; lines changed on both sides are shown between git's
    conflict markers and must be resolved before "Keep both" saves it.
    """

    def __init__(self, page: str, base: str, mine: str, theirs: str, merged: str, clean: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.page, self.base, self.mine, self.theirs = page, base, mine, theirs
        self.setWindowTitle(f"{page} changed on disk")
        intro = QLabel(
            f"<b>{html.escape(page)}</b> changed on disk while you edited it (an agent or another "
            "editor wrote to it). Nothing has been overwritten. Below: your changes, the changes on "
            "disk, and the page that keeps both" + (
                "." if clean else
                " — the lines changed on both sides are marked <tt>&lt;&lt;&lt;&lt;&lt;&lt;&lt; ours</tt> "
                "… <tt>&gt;&gt;&gt;&gt;&gt;&gt;&gt; theirs</tt>: edit them into one before saving."))
        intro.setWordWrap(True)
        self.tabs = QTabWidget()
        self.tabs.addTab(_diff_pane(base, mine, "Left: the page as you opened it; right: yours"),
                         "Your changes")
        self.tabs.addTab(_diff_pane(base, theirs, "Left: the page as you opened it; right: on disk now"),
                         "Changed on disk")
        self.merged = QPlainTextEdit()
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.merged.setFont(mono)
        self.merged.setPlainText(merged)
        self._highlighter = MarkdownHighlighter(self.merged.document())
        result_box = QWidget()
        box = QVBoxLayout(result_box)
        box.setContentsMargins(0, 0, 0, 0)
        self.merged_label = QLabel()
        box.addWidget(self.merged_label)
        box.addWidget(self.merged, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tabs)
        split.addWidget(result_box)
        split.setChildrenCollapsible(False)
        split.setSizes([300, 340])
        buttons = QDialogButtonBox()
        self.keep_button = buttons.addButton("Keep both (save)", QDialogButtonBox.ButtonRole.AcceptRole)
        self.back_button = buttons.addButton("Back to my edits", QDialogButtonBox.ButtonRole.RejectRole)
        self.back_button.setToolTip("Close this view and go on editing; nothing is saved yet")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.merged.textChanged.connect(self._check)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(1100, 760)
        self._check()

    def merged_text(self) -> str:
        return self.merged.toPlainText()

    def _check(self) -> None:
        marked = has_markers(self.merged_text())
        self.keep_button.setEnabled(not marked)
        self.merged_label.setText(
            "Result (editable): resolve the marked lines, then Keep both" if marked else
            "Result (editable): your edits and the changes on disk, both kept")


class CreatePageDialog(QDialog):
    """Create a page not yet written: its name (the link's text) and the folder it goes in."""

    def __init__(self, name: str, folders: Iterable[str], default_folder: str,
                 parent: QWidget | None = None, *, title: str = "Create page") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        intro = QLabel("A new page with a title, <tt>## Updates</tt> and the usual frontmatter "
                       "(layer deep, trust 0.5), written by you as one commit; Edit ▸ Undo removes it.")
        intro.setWordWrap(True)
        self.name = QLineEdit(name)
        self.name.setPlaceholderText("Page title, e.g. Refund Policy")
        self.folder = QComboBox()
        self.folder.setEditable(True)
        self.folder.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        items = list(dict.fromkeys([default_folder, *sorted(set(folders))]))
        for item in items:
            self.folder.addItem(item or "(wiki root)", item)
        self.folder.setCurrentIndex(0)
        self.folder.setToolTip("The folder the page goes in (type a new one to create it)")
        form = QFormLayout()
        form.addRow("Title", self.name)
        form.addRow("Folder", self.folder)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create_button = buttons.addButton("Create page", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.name.textChanged.connect(lambda t: self.create_button.setEnabled(any(c.isalnum() for c in t)))
        self.create_button.setEnabled(any(c.isalnum() for c in name))
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(480)

    def page_name(self) -> str:
        return self.name.text().strip()

    def folder_path(self) -> str:
        text = self.folder.currentText().strip()
        index = self.folder.findText(text)
        if index >= 0:
            return str(self.folder.itemData(index) or "")
        return text.strip("/")


def unsaved_box(page: str, parent: QWidget | None = None) -> QMessageBox:
    """Save / Discard / Cancel for a page with unsaved changes."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                      f"{page} has changes that are not saved.", parent=parent)
    box.setInformativeText("Save them (one commit), discard them, or go back to the page?")
    box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                           | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box
