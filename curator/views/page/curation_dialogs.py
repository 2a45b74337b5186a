"""Dialogs for moving, renaming and archiving a page (the engine does the work: one action each)."""

from __future__ import annotations

import html
import posixpath

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from curator.text import plural


class MoveDialog(QDialog):
    """Asks for the page's new path; the stem is selected, so typing renames it."""

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.setWindowTitle("Move or rename page")
        intro = QLabel(
            f"New path for <b>{html.escape(path)}</b> (a folder that does not exist yet is created):<br>"
            "every link to it is rewritten and keeps the text it shows; its old name stays an alias. "
            "One commit; Edit ▸ Undo restores everything.")
        intro.setWordWrap(True)
        self.edit = QLineEdit(path)
        stem_start = len(posixpath.dirname(path)) + (1 if "/" in path else 0)
        stem_len = len(posixpath.splitext(posixpath.basename(path))[0])
        self.edit.setSelection(stem_start, stem_len)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.move_button = buttons.addButton("Move", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.edit.textChanged.connect(lambda text: self.move_button.setEnabled(
            bool(text.strip()) and text.strip() != path))
        self.move_button.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.edit)
        layout.addWidget(buttons)
        self.setMinimumWidth(520)

    def new_path(self) -> str:
        return self.edit.text().strip()


class ArchiveDialog(QDialog):
    """Confirms archiving a page (moved to ``_archive/``; links to it then show as not yet written)."""

    def __init__(self, path: str, inbound: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.setWindowTitle("Archive page")
        links = (f"{plural(inbound, 'page')} link{'s' if inbound == 1 else ''} to it; those links will show it as not yet written. "
                 if inbound else "No page links to it. ")
        text = QLabel(f"Move <b>{html.escape(path)}</b> to <b>_archive/</b>?<br>{links}"
                      "Nothing is deleted; one commit; Edit ▸ Undo restores it.")
        text.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.archive_button = buttons.addButton("Archive", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)
