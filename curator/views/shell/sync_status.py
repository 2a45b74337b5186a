"""The station's sync status: ahead/behind, last sync, conflicts, "Sync now", auto-sync (issue 11).

``install(window)`` puts a :class:`SyncStatusWidget` in the main window's status bar and returns
it. The widget shows the status of the wiki of the open page (the first wiki before any page is
open): ``↑ahead ↓behind · synced HH:MM`` (``up to date``, ``offline``, ``N conflicts``, ``no
remote``). Its button runs the engine's :func:`~curator.engine.sync.remote.sync` as an action through
the window's writer queue (``host.run_action``); its menu also lists conflicted pages and opens
:class:`ConflictDialog` (both sides side by side; keep ours / take theirs / use the merged text as
edited, each one ``resolve`` action).

Auto-sync: one :class:`~curator.engine.sync.remote.AutoSync` per wiki that has a git remote, ticked by a
QTimer: a sync soon after local changes (pages changed on disk or by an action), one every
``interval`` seconds otherwise, with exponential back-off while the remote is unreachable. Auto
syncs run quietly in the writer queue (no status-line message unless they fail or pull pages).
Reads (the status) go through ``host.workspace.read``, off the GUI thread.
"""

from __future__ import annotations

import datetime as _dt
import functools
import time
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.lookalike import escape_controls
from curator.engine.policy.actor import OPERATOR
from curator.engine.sync.remote import (
    AutoSync,
    SyncStatus,
    conflict_sides,
    decide_held,
    held_changes,
    resolve,
    sync,
    sync_status,
)
from curator.engine.write.actions import ActionResult
from curator.text import plural
from curator.views.plain_tips import set_tip

if TYPE_CHECKING:
    from curator.views.host import ViewHost
    from curator.views.shell.main_window import MainWindow

AUTO_INTERVAL_S = 60.0
TICK_MS = 1000


def _when(iso: str | None) -> str:
    """``HH:MM`` today, else ``YYYY-MM-DD HH:MM``, in local time."""
    if not iso:
        return "never"
    try:
        t = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return iso
    return t.strftime("%H:%M") if t.date() == _dt.date.today() else t.strftime("%Y-%m-%d %H:%M")


def describe(st: SyncStatus) -> str:
    """The label's text for a status."""
    if not st.has_remote:
        return "Sync: no remote"
    return f"Sync: {st.summary()} · synced {_when(st.last_sync)}"


class SyncStatusWidget(QWidget):
    #: Emitted with the :class:`SyncStatus` of the shown wiki after every refresh.
    status_changed = Signal(object)

    def __init__(self, host: ViewHost, interval: float = AUTO_INTERVAL_S, auto: bool = True,
                 tick_ms: int = TICK_MS) -> None:
        super().__init__()
        self.host = host  # what it uses of the window (not self.window: that is QWidget.window())
        self.workspace = host.workspace
        self.statuses: dict[int, SyncStatus] = {}
        self.autos: dict[int, AutoSync] = {}
        self.interval = interval
        self.auto_enabled = auto
        self.last_result: ActionResult | None = None

        self.label = QLabel("Sync: …")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.button = QToolButton()
        self.button.setText("Sync now")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.button.setAutoRaise(True)
        self.sync_action = QAction("Sync now", self)
        self.sync_action.triggered.connect(self.sync_now)
        self.button.setDefaultAction(self.sync_action)
        self.menu = QMenu(self)
        self.menu.aboutToShow.connect(self._fill_menu)
        self.button.setMenu(self.menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label)
        layout.addWidget(self.button)

        self.timer = QTimer(self)
        self.timer.setInterval(tick_ms)
        self.timer.timeout.connect(self._tick)
        self._refresh_soon = QTimer(self)
        self._refresh_soon.setSingleShot(True)
        self._refresh_soon.setInterval(300)
        self._refresh_soon.timeout.connect(self.refresh_all)
        self.workspace.loaded.connect(lambda _s: self._start())
        self.workspace.pages_changed.connect(self._on_pages_changed)
        if self.workspace.ready:
            self._start()

    # --- which wiki --------------------------------------------------------------------
    def alive(self) -> bool:
        """False once Qt deleted the widget (a background result may arrive after the window closed)."""
        return shiboken6.isValid(self) and shiboken6.isValid(self.label)

    def index(self) -> int:
        current = self.host.current
        return current[0] if current is not None else 0

    def _loaded(self, index: int) -> bool:
        return self.workspace.ready and self.workspace.handles[index].wiki is not None

    def _auto(self, index: int) -> AutoSync:
        auto = self.autos.get(index)
        if auto is None:
            auto = self.autos[index] = AutoSync(interval=self.interval, enabled=self.auto_enabled)
        return auto

    # --- status ------------------------------------------------------------------------
    def _start(self) -> None:
        if not self.alive():
            return
        self.refresh_all()
        self.timer.start()

    def refresh_all(self) -> None:
        for handle in self.workspace.handles:
            self.refresh(handle.index)

    def refresh(self, index: int | None = None) -> None:
        """Read the status of wiki ``index`` (default: the shown one) off the GUI thread."""
        if not self.alive():
            return
        index = self.index() if index is None else index
        if not self._loaded(index):
            return
        self.workspace.read(index, sync_status, functools.partial(self._got_status, index),
                            self._status_failed)

    def _status_failed(self, exc: BaseException) -> None:
        if self.alive():
            self.label.setText(f"Sync: {exc}")

    def _refresh_after(self, index: int, _result: object) -> None:
        self.refresh(index)

    def _got_status(self, index: int, st: SyncStatus) -> None:
        if not self.alive():
            return
        self.statuses[index] = st
        if index == self.index():
            self._show(st)

    def _show(self, st: SyncStatus) -> None:
        self.label.setText(describe(st))
        tip = [f"{st.branch or '(detached)'} ↔ {st.remote}" + (f" ({st.url})" if st.url else ""),
               f"{plural(st.ahead, 'commit')} to push, {st.behind} to pull (as of the last fetch)",
               f"last sync: {_when(st.last_sync)}"]
        if st.last_attempt and st.last_status:
            tip.append(f"last attempt {_when(st.last_attempt)}: {st.last_status} {st.last_message}".strip())
        if st.conflicts:
            tip.append("conflicts: " + ", ".join(st.conflicts))
        set_tip(self, "\n".join(tip))
        color = "#c0392b" if st.conflicts else ("#b9770e" if st.offline or st.last_status == "held" else "")
        self.label.setStyleSheet(f"color: {color};" if color else "")
        self.sync_action.setEnabled(st.has_remote)
        self.status_changed.emit(st)

    # --- syncing -----------------------------------------------------------------------
    def sync_now(self) -> None:
        """Sync the shown wiki now, as an action in its writer queue."""
        index = self.index()
        if not self._loaded(index):
            return
        auto = self._auto(index)
        auto.started()
        self.host.run_action(index, lambda wiki: sync(wiki, OPERATOR), "Syncing",
                               done=functools.partial(self._synced, index))

    def _synced(self, index: int, result: Any) -> None:
        if not self.alive():
            return
        self.last_result = result if isinstance(result, ActionResult) else None
        self._auto(index).record(self.last_result)
        self.refresh(index)

    def _tick(self) -> None:
        now = time.monotonic()
        for index, st in list(self.statuses.items()):
            auto = self._auto(index)
            if not st.has_remote or not auto.due(now) or not self._loaded(index):
                continue
            auto.started()

            def failed(exc: BaseException, i: int = index) -> None:
                if not self.alive():
                    return
                self._auto(i).record(None)
                self.host.show_error(f"Sync failed: {exc}")

            self.workspace.run(index, lambda wiki: sync(wiki, OPERATOR),
                               functools.partial(self._auto_synced, index), failed)

    def _auto_synced(self, index: int, result: ActionResult) -> None:
        if not self.alive():
            return
        self.last_result = result
        self._auto(index).record(result)
        if result.is_error:
            self.host.report_result(result)
        elif result.status in ("pulled", "merged", "conflict", "held"):
            self.host.status(result.message)
        self.refresh(index)

    def _on_pages_changed(self, snapshot: Any) -> None:
        if not self.alive():
            return
        indexes = {key[0] for key in getattr(snapshot, "removed", [])}
        indexes |= {row.key[0] for row in getattr(snapshot, "rows", [])}
        for index in indexes:
            auto = self._auto(index)
            if not auto.running:  # a sync's own pull is not a local change to push
                auto.after_action()
        self._refresh_soon.start()

    # --- conflicts -----------------------------------------------------------------------
    def _fill_menu(self) -> None:
        self.menu.clear()
        self.menu.addAction(self.sync_action)
        st = self.statuses.get(self.index())
        auto = self.menu.addAction("Sync automatically")
        auto.setCheckable(True)
        auto.setChecked(self.auto_enabled)
        auto.toggled.connect(self.set_auto)
        if st is not None and st.conflicts:
            self.menu.addSeparator()
            for path in st.conflicts:
                action = self.menu.addAction(f"Resolve {path}…")
                action.triggered.connect(lambda _c=False, p=path: self.open_conflict(p))
        held = self.held()
        if held:
            self.menu.addSeparator()
            accept = self.menu.addAction(f"Accept {plural(len(held), 'held incoming commit')}…")
            accept.triggered.connect(lambda _c=False: self.decide_held(keep=True))
            drop = self.menu.addAction("Drop them (keep their changes out)…")
            drop.triggered.connect(lambda _c=False: self.decide_held(keep=False))

    # --- incoming commits held for the operator (curator sync --held) ------------------------
    def held(self) -> list[dict[str, Any]]:
        """The incoming commits the last sync of the shown wiki held, with their reasons."""
        st = self.statuses.get(self.index())
        if not self._loaded(self.index()) or st is None or st.last_status != "held":
            return []  # (the held record is read only when the last sync said it held something)
        found = held_changes(self.workspace.wiki(self.index()))
        return list(found.get("held") or []) if found else []

    def decide_held(self, keep: bool) -> None:
        """Ask (listing every held commit and why), then accept or drop them and sync."""
        held = self.held()
        if not held:
            return
        details = "\n".join(f"{c['sha'][:12]} {escape_controls(c['author'])}: {escape_controls(c['subject'])}\n"
                            + "\n".join(f"    {escape_controls(r)}" for r in c["reasons"]) for c in held)
        what = ("Merge them as they are" if keep else
                "Merge them with every path they changed kept as it is here (the next push carries that back)")
        if not self.confirm(f"{plural(len(held), 'incoming commit')} held for review", what + "?", details):
            return
        index = self.index()
        self.host.run_action(index, lambda wiki: decide_held(wiki, OPERATOR, keep=keep),
                             "Accepting held commits" if keep else "Dropping held commits",
                             done=functools.partial(self._synced, index))

    def confirm(self, title: str, text: str, details: str) -> bool:
        """Ask the operator (tests replace it)."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setDetailedText(details)
        box.exec()
        return box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)

    def set_auto(self, on: bool) -> None:
        self.auto_enabled = on
        for auto in self.autos.values():
            auto.enabled = on

    def open_conflict(self, path: str) -> ConflictDialog:
        index = self.index()
        dialog = ConflictDialog(path, self.window())
        self.workspace.read(index, lambda wiki: conflict_sides(wiki, path), dialog.show_sides,
                            lambda exc: self.host.show_error(f"Cannot show {path}: {exc}"))
        dialog.chosen.connect(lambda choice, data, i=index, p=path: self._resolve(i, p, choice, data))
        dialog.open()
        return dialog

    def _resolve(self, index: int, path: str, choice: str, data: bytes | None) -> None:
        self.host.run_action(index, lambda wiki: resolve(wiki, OPERATOR, [path], choice, data),
                               f"Resolving {path}", done=functools.partial(self._refresh_after, index))


class ConflictDialog(QDialog):
    """Both sides of a conflicted page side by side, and the merged text to edit."""

    chosen = Signal(str, object)  # choice ("ours" | "theirs" | "file"), data (bytes for "file")

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Conflict — {path}")
        self.path = path
        self.ours = QPlainTextEdit()
        self.theirs = QPlainTextEdit()
        self.merged = QPlainTextEdit()
        for edit in (self.ours, self.theirs):
            edit.setReadOnly(True)
        sides = QSplitter(Qt.Orientation.Horizontal)
        for title, edit in (("This clone (ours)", self.ours), ("The remote (theirs)", self.theirs)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(QLabel(title))
            lay.addWidget(edit)
            sides.addWidget(box)
        buttons = QDialogButtonBox()
        self.keep_ours = QPushButton("Keep ours")
        self.take_theirs = QPushButton("Take theirs")
        self.use_merged = QPushButton("Use the edited merge")
        for button, role in ((self.keep_ours, QDialogButtonBox.ButtonRole.AcceptRole),
                             (self.take_theirs, QDialogButtonBox.ButtonRole.AcceptRole),
                             (self.use_merged, QDialogButtonBox.ButtonRole.AcceptRole)):
            buttons.addButton(button, role)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.rejected.connect(self.reject)
        self.keep_ours.clicked.connect(lambda: self._choose("ours"))
        self.take_theirs.clicked.connect(lambda: self._choose("theirs"))
        self.use_merged.clicked.connect(lambda: self._choose("file"))
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(sides)
        merged_box = QWidget()
        lay = QVBoxLayout(merged_box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("Merged (edit, remove the conflict markers, then use it)"))
        lay.addWidget(self.merged)
        split.addWidget(merged_box)
        layout = QVBoxLayout(self)
        layout.addWidget(split)
        layout.addWidget(buttons)
        self.resize(1000, 700)

    def show_sides(self, sides: dict[str, str | None]) -> None:
        if not shiboken6.isValid(self.merged):
            return
        self.ours.setPlainText(sides.get("ours") or "(absent on this side)")
        self.theirs.setPlainText(sides.get("theirs") or "(absent on this side)")
        self.merged.setPlainText(sides.get("merged") or "")

    def _choose(self, choice: str) -> None:
        data = self.merged.toPlainText().encode("utf-8") if choice == "file" else None
        if data is not None and any(m in data for m in (b"<<<<<<< ", b"\n=======\n", b">>>>>>> ")):
            self.merged.setFocus()
            self.setWindowTitle(f"Conflict — {self.path} — remove the conflict markers first")
            return
        self.chosen.emit(choice, data)
        self.accept()


def install(window: MainWindow, **options: Any) -> SyncStatusWidget:
    """Add the sync status to ``window``'s status bar (options: ``interval``, ``auto``, ``tick_ms``)."""
    widget = SyncStatusWidget(window, **options)
    window.statusBar().addPermanentWidget(widget)
    window.sync_status = widget  # type: ignore[attr-defined]  # looked up by tests and screenshots
    return widget
