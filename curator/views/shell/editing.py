"""Editing in the station: save (Ctrl+S), the three-way view of a save that met a change on disk,
unsaved changes kept on navigation, close and reload, and creating pages (a link not yet written,
File ▸ New page).

:class:`EditController` belongs to the main window. Every write is an engine action run through
the window (:func:`curator.engine.write.edit.save_page`, :func:`~curator.engine.write.edit.create_page`),
as the operator, one commit each; this module only decides what to ask and what to show.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox

from curator.engine.corpus.page import Page
from curator.engine.policy.actor import OPERATOR
from curator.views.page.edit_dialogs import ConflictDialog, CreatePageDialog, unsaved_box

if TYPE_CHECKING:
    from curator.views.shell.main_window import MainWindow

Key = tuple[int, str]
Button = QMessageBox.StandardButton
DEFAULT_FOLDER = "wiki"  # append's rule: new pages go to wiki/ when the wiki has that folder


def read_only_reason(page: Page) -> str:
    """Why the Source tab of ``page`` cannot be edited ("" when it can)."""
    if page.invalid_utf8:
        return ("Read-only: this page is not valid UTF-8 (shown with replacement characters); fix its "
                "encoding outside Curator first, it is never rewritten blindly.")
    return ""


class EditController(QObject):
    """Save, conflicts, unsaved-changes prompts and page creation for one main window."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.view = window.page_view
        self.editor = window.page_view.source
        #: How the unsaved-changes question is asked; tests answer it (Save, Discard or Cancel).
        self.ask_unsaved: Callable[[QMessageBox], int] = lambda box: box.exec()
        self._source_after_open: Key | None = None
        self._choices_for: int | None = None
        self.view.save_requested.connect(self.save)
        self.view.discard_requested.connect(self.discard)

    # --- the buffer ----------------------------------------------------------------------------
    @property
    def key(self) -> Key | None:
        key = self.view.edit_key
        return key if isinstance(key, tuple) else None

    def pages_changed(self) -> None:
        """The wiki's pages changed: the ``[[`` completion is rebuilt when next shown."""
        self._choices_for = None

    def page_shown(self, key: Key) -> None:
        """Called by the window once ``key`` is shown (after the editor got its text)."""
        if self._choices_for != key[0]:
            self._choices_for = key[0]
            self.editor.set_pages((r.page.path, r.page.title) for r in self.window.model.rows
                                  if r.wiki == key[0])
        if self._source_after_open == key:
            self._source_after_open = None
            self.view.show_source()
            self.editor.moveCursor(QTextCursor.MoveOperation.End)

    # --- save ------------------------------------------------------------------------------------
    def save(self, then: Callable[[], object] | None = None) -> None:
        """Save the open page's buffer as one ``edit`` action (Ctrl+S)."""
        key = self.key
        if key is None or self.editor.isReadOnly():
            reason = self.view.read_only_reason or "this page cannot be edited here"
            self.window.status(f"Nothing to save: {reason[:1].lower()}{reason[1:]}")
            return
        if not self.editor.dirty:
            self.window.status("No unsaved changes")
            if then is not None:
                then()
            return
        self._save(key, self.editor.toPlainText(), self.editor.base, then)

    def _save(self, key: Key, text: str, base: str | None, then: Callable[[], object] | None) -> None:
        from curator.engine.write.edit import CONFLICT, save_page

        index, path = key

        def done(result: Any) -> None:
            if result.status == CONFLICT:
                self._conflict(key, result.data, then)
                return
            if result.is_error:
                return  # reported by the window; the buffer stays as it is
            if self.key == key:
                self.editor.mark_saved(text)
                self.view.update_edit_bar()
            if then is not None:
                then()

        self.window.run_action(index, lambda wiki: save_page(wiki, OPERATOR, path, text, base=base),
                               f"Saving {path}", done)

    def _conflict(self, key: Key, data: dict[str, Any], then: Callable[[], object] | None) -> None:
        dialog = ConflictDialog(data["page"], data["base"], data["mine"], data["theirs"], data["merged"],
                                bool(data["clean"]), self.window)
        if self.key == key:
            self.editor.disk_changed = True
            self.view.update_edit_bar()
        if not self.window.exec_dialog(dialog):
            self.window.status(f"Not saved: {data['page']} changed on disk; your edits are still here")
            return
        merged = dialog.merged_text()
        if self.key == key:
            # the merge replaces the buffer as one edit (Ctrl+Z in the editor brings yours back)
            cursor = self.editor.textCursor()
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText(merged)
            self.editor.base = data["theirs"]
        self._save(key, merged, data["theirs"], then)

    def discard(self) -> None:
        """Drop the buffer's edits and show the page as it is on disk."""
        key = self.key
        self.editor.document().setModified(False)
        self.editor.disk_changed = False
        if key is not None:
            self.window.open_page(key, push=False)

    def confirm_leave(self, then: Callable[[], object]) -> bool:
        """True when the open page may be left now (no unsaved edits, or they were discarded);
        on "Save" the edits are saved first and ``then`` runs once they are (False now)."""
        if not self.editor.dirty or self.key is None:
            return True
        asked = self.ask_unsaved(unsaved_box(self.key[1], self.window))
        answer = Button(getattr(asked, "value", asked))
        if answer == Button.Discard:
            self.editor.document().setModified(False)
            self.editor.disk_changed = False
            return True
        if answer == Button.Save:
            self.save(then=then)
        return False

    # --- create ----------------------------------------------------------------------------------
    def _folders(self, index: int) -> tuple[list[str], bool]:
        folders = {posixpath.dirname(r.page.path) for r in self.window.model.rows if r.wiki == index}
        return sorted(folders), DEFAULT_FOLDER in {f.split("/")[0] for f in folders}

    def _wiki_index(self) -> int:
        return self.window.current[0] if self.window.current is not None else 0

    def create_from_link(self, target: str) -> None:
        """A link to a page not yet written was clicked: offer to create it."""
        index = self._wiki_index()
        name = target.split("|", 1)[0].split("#", 1)[0].strip()
        head, _, stem = name.rpartition("/")
        folders, has_wiki = self._folders(index)
        default = head or (DEFAULT_FOLDER if has_wiki else "")
        dialog = CreatePageDialog(stem, folders, default, self.window)
        dialog.setWindowTitle(f"“{name}” is not yet written")
        if self.window.exec_dialog(dialog):
            self.create(index, dialog.page_name(), dialog.folder_path())

    def new_page(self) -> None:
        """File ▸ New page: ask for a title and a folder, create it, open it in the editor."""
        if not self.window.workspace.ready:
            return
        index = self._wiki_index()
        folders, has_wiki = self._folders(index)
        dialog = CreatePageDialog("", folders, DEFAULT_FOLDER if has_wiki else "", self.window,
                                  title="New page")
        if self.window.exec_dialog(dialog):
            self.create(index, dialog.page_name(), dialog.folder_path())

    def create(self, index: int, name: str, folder: str) -> None:
        from curator.engine.write.edit import create_page

        def done(result: Any) -> None:
            if result.ok:
                key = (index, str(result.data["page"]))
                self._source_after_open = key
                self.window.open_page(key)

        self.window.run_action(index, lambda wiki: create_page(wiki, OPERATOR, name, folder),
                               f"Creating {name}", done)
