"""The main window's menu bar: File, Edit, Go, Page, View, Help, every entry also a shortcut of the
window (Help ▸ Keyboard shortcuts lists them from the window's actions, so the list is always true).

The window does the work; this module builds what invokes it and keeps the actions whose state
changes (enabled while a wiki is writable, back/forward, the checked theme).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from curator.views.shell import appearance

if TYPE_CHECKING:
    from curator.views.shell.main_window import MainWindow

Shortcut = str | QKeySequence | QKeySequence.StandardKey | list[Any] | None


class MainMenus:
    """The menu bar of ``window`` and the actions other code enables, disables or checks."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        w = window
        bar = w.menuBar()
        file_menu = bar.addMenu("&File")
        self._action("&New page…", QKeySequence(QKeySequence.StandardKey.New), w.editing.new_page, file_menu)
        self.save = self._action("&Save page", QKeySequence(QKeySequence.StandardKey.Save),
                                 lambda: w.editing.save(), file_menu)
        self._action("&Open wiki or home…", QKeySequence.StandardKey.Open, self.open_dialog, file_menu)
        self.recent_menu: QMenu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self.fill_recent)
        file_menu.addSeparator()
        self._action("&Quit", QKeySequence.StandardKey.Quit, w.close, file_menu)
        edit_menu = bar.addMenu("&Edit")
        self.undo = self._action("&Undo last action", QKeySequence.StandardKey.Undo, w.undo_last, edit_menu)
        self.redo = self._action("&Redo", [QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")],
                                 w.redo_last, edit_menu)
        edit_menu.addSeparator()
        self.find = self._action("&Find in page…", QKeySequence("Ctrl+F"), w.find_in_page, edit_menu)
        go_menu = bar.addMenu("&Go")
        self._action("&Search the wiki", QKeySequence("Ctrl+K"), w.focus_search, go_menu)
        self._action("&Quick switcher…", "Ctrl+P", w.quick_switcher, go_menu)
        self.back = self._action("&Back", QKeySequence("Alt+Left"), w.go_back, go_menu)
        self.forward = self._action("&Forward", QKeySequence("Alt+Right"), w.go_forward, go_menu)
        page_menu = bar.addMenu("&Page")
        self.move = self._action("&Move or rename…", QKeySequence("F2"), w.ask_move, page_menu)
        self.archive = self._action("&Archive…", None, w.ask_archive, page_menu)
        view_menu = bar.addMenu("&View")
        self._action("&Refresh", QKeySequence("F5"), w.workspace.refresh_now, view_menu)
        view_menu.addSeparator()
        look = w.appearance
        self._action("Zoom &in", [QKeySequence("Ctrl+="), QKeySequence("Ctrl++")], look.zoom_in, view_menu)
        self._action("Zoom &out", QKeySequence("Ctrl+-"), look.zoom_out, view_menu)
        self._action("&Actual size", QKeySequence("Ctrl+0"), look.zoom_reset, view_menu)
        theme_menu = view_menu.addMenu("&Theme")
        self.theme_actions: dict[str, QAction] = {}
        group = QActionGroup(w)
        for name, label in appearance.THEME_LABELS.items():
            action = theme_menu.addAction(label)
            action.setCheckable(True)
            action.setChecked(name == w.settings.theme)
            action.triggered.connect(lambda _c=False, n=name: look.set_theme(n))
            group.addAction(action)
            self.theme_actions[name] = action
        view_menu.addSeparator()
        help_menu = bar.addMenu("&Help")
        self._action("&Keyboard shortcuts", QKeySequence("Ctrl+/"), self.show_shortcuts, help_menu)
        self._action("&About Curator", None, self.show_about, help_menu)
        self.update_nav(False, False)

    def _action(self, text: str, shortcut: Shortcut, slot: Callable[[], object], menu: QMenu) -> QAction:
        action = QAction(text, self.window)
        if isinstance(shortcut, list):
            action.setShortcuts(shortcut)
        elif shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        self.window.addAction(action)
        return action

    def writing_actions(self) -> tuple[QAction, ...]:
        """The actions that change a wiki (off while a wiki of the window is not a repository)."""
        return (self.undo, self.redo, self.move, self.archive)

    def update_nav(self, can_go_back: bool, can_go_forward: bool) -> None:
        self.back.setEnabled(can_go_back)
        self.forward.setEnabled(can_go_forward)

    def check_theme(self, theme: str) -> None:
        self.theme_actions[theme].setChecked(True)

    # --- File -----------------------------------------------------------------------------
    def open_dialog(self) -> None:
        w = self.window
        folder = QFileDialog.getExistingDirectory(w, "Open a wiki or a home", str(w.workspace.root))
        if folder:
            w.open_folder(Path(folder))

    def fill_recent(self) -> None:
        w = self.window
        self.recent_menu.clear()
        for path in w.settings.recent_wikis:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _c=False, p=path: w.open_folder(Path(p)))
        if not w.settings.recent_wikis:
            self.recent_menu.addAction("(none)").setEnabled(False)

    # --- Help -----------------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        from curator.views.shell.help import ShortcutsDialog

        self.window.exec_dialog(ShortcutsDialog(self.window))

    def show_about(self) -> None:
        from curator.views.shell.help import AboutDialog

        self.window.exec_dialog(AboutDialog(self.window))
